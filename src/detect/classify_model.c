/*
 * classify_model.c - the Gemini / OpenAI-compatible classifier
 * (classify_model.h).
 *
 * A request builds one prompt from the rule classifier's findings, posts
 * it in the provider's shape (Gemini generateContent with
 * responseMimeType application/json; OpenAI chat completions with
 * response_format json_object; both at temperature 0.2 and at most 500
 * output tokens, as the original Lambda did), and on completion digs the
 * reply text out of the provider's envelope and validates it field by
 * field.  The model owns its own HTTP client so that freeing it can drop
 * every call in flight without a callback into freed memory.
 */
#include "detect/classify_model.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/timeutil.h"
#include "http/client.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/timescale.h"
#include "util/unittest.h"
#include "util/xalloc.h"

#define PROMPT_FIELD_MAX 1024
#define REPLY_MAX        (256 * 1024)

struct cm_call {
    struct classify_model *m;
    classify_model_cb cb;
    void *arg;
    struct cm_call *prev, *next;
};

struct classify_model {
    struct http_client *http;
    enum classify_provider provider;
    char *endpoint; /* full URL of the call */
    char *key;      /* may be NULL */
    char model[CLASSIFY_MODEL_NAME_MAX + 1];
    double timeout_s;
    struct cm_call *calls;
};

static const struct {
    const char *lower, *upper;
} severities[] = {{"low", "LOW"}, {"medium", "MEDIUM"}, {"high", "HIGH"}, {"critical", "CRITICAL"}};

int classify_provider_parse(const char *name, enum classify_provider *out)
{
    if (!name)
        return ERR_INVALID;
    if (!strcmp(name, "rules"))
        *out = CLASSIFY_PROVIDER_RULES;
    else if (!strcmp(name, "gemini"))
        *out = CLASSIFY_PROVIDER_GEMINI;
    else if (!strcmp(name, "openai"))
        *out = CLASSIFY_PROVIDER_OPENAI;
    else
        return ERR_INVALID;
    return 0;
}

const char *classify_provider_name(enum classify_provider p)
{
    switch (p) {
    case CLASSIFY_PROVIDER_GEMINI:
        return "gemini";
    case CLASSIFY_PROVIDER_OPENAI:
        return "openai";
    default:
        return "rules";
    }
}

/* True when s[0..n) is valid UTF-8 without control characters. */
static bool text_ok(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;

    while (i < n) {
        unsigned char c = p[i];
        size_t len;
        if (c < 0x20 || c == 0x7f)
            return false;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf)
            len = 2;
        else if (c >= 0xe0 && c <= 0xef)
            len = 3;
        else if (c >= 0xf0 && c <= 0xf4)
            len = 4;
        else
            return false;
        if (i + len > n)
            return false;
        for (size_t k = 1; k < len; k++)
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
        if ((c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] > 0x9f) ||
            (c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] > 0x8f))
            return false;
        i += len;
    }
    return true;
}

static const char *bounded_str(const cJSON *o, const char *name, size_t max)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    size_t n;

    if (!cJSON_IsString(v) || !v->valuestring)
        return NULL;
    n = strlen(v->valuestring);
    if (!n || n > max || !text_ok(v->valuestring, n))
        return NULL;
    return v->valuestring;
}

UNITTEST_STATIC int classify_model_parse_text(const char *text, struct classify_model_result *r,
                                              cJSON **hold)
{
    const char *a, *b;
    const cJSON *v, *acts, *it;
    cJSON *o;

    *hold = NULL;
    if (!text)
        return ERR_INVALID;
    /* tolerate a ```json fence or prose around the object */
    a = strchr(text, '{');
    b = strrchr(text, '}');
    if (!a || !b || b < a)
        return ERR_INVALID;
    o = cJSON_ParseWithLength(a, (size_t)(b - a) + 1);
    if (!cJSON_IsObject(o))
        goto bad;
    v = cJSON_GetObjectItemCaseSensitive(o, "severity");
    r->severity = r->severity_upper = NULL;
    for (size_t i = 0; cJSON_IsString(v) && i < sizeof severities / sizeof severities[0]; i++)
        if (!strcasecmp(v->valuestring, severities[i].lower)) {
            r->severity = severities[i].lower;
            r->severity_upper = severities[i].upper;
        }
    if (!r->severity)
        goto bad;
    r->attack_vector = bounded_str(o, "attack_vector", CLASSIFY_MODEL_VECTOR_MAX);
    if (!r->attack_vector)
        goto bad;
    for (const char *p = r->attack_vector; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != ' ')
            goto bad;
    r->narrative = bounded_str(o, "narrative", CLASSIFY_NARRATIVE_MAX - 1);
    if (!r->narrative)
        goto bad;
    acts = cJSON_GetObjectItemCaseSensitive(o, "recommended_actions");
    r->nactions = 0;
    if (acts && !cJSON_IsArray(acts))
        goto bad;
    cJSON_ArrayForEach(it, acts)
    {
        if (r->nactions >= CLASSIFY_MODEL_ACTIONS_MAX || !cJSON_IsString(it) || !it->valuestring ||
            !*it->valuestring || strlen(it->valuestring) > CLASSIFY_MODEL_ACTION_MAX ||
            !text_ok(it->valuestring, strlen(it->valuestring)))
            goto bad;
        r->actions[r->nactions++] = it->valuestring;
    }
    v = cJSON_GetObjectItemCaseSensitive(o, "confidence");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
        v->valuedouble > 100)
        goto bad;
    {
        double c = v->valuedouble;
        if (c > 0 && c < 1) /* a fraction: 0.85 means 85 */
            c *= 100;
        r->confidence = (int)lround(c);
    }
    *hold = o;
    return 0;
bad:
    cJSON_Delete(o);
    return ERR_INVALID;
}

/* ---- requests ----------------------------------------------------------- */

static void call_unlink(struct classify_model *m, struct cm_call *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        m->calls = c->next;
    if (c->next)
        c->next->prev = c->prev;
}

/* The reply text inside the provider's envelope, or NULL. */
static const char *reply_text(enum classify_provider p, const cJSON *env)
{
    const cJSON *v;

    if (p == CLASSIFY_PROVIDER_GEMINI) {
        v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(env, "candidates"), 0);
        v = cJSON_GetObjectItemCaseSensitive(v, "content");
        v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(v, "parts"), 0);
        v = cJSON_GetObjectItemCaseSensitive(v, "text");
    } else {
        v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(env, "choices"), 0);
        v = cJSON_GetObjectItemCaseSensitive(v, "message");
        v = cJSON_GetObjectItemCaseSensitive(v, "content");
    }
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void http_cb(void *arg, const struct http_client_res *res)
{
    struct cm_call *c = arg;
    struct classify_model *m = c->m;
    struct classify_model_result r;
    cJSON *env = NULL, *hold = NULL;
    char text[160];

    memset(&r, 0, sizeof r);
    r.model = m->model;
    r.latency_ms = res->duration_ms;
    if (res->err) {
        r.err = res->err;
        snprintf(text, sizeof text, "%s", res->error ? res->error : "request failed");
    } else if (res->status < 200 || res->status >= 300) {
        r.err = ERR_UNAVAILABLE;
        snprintf(text, sizeof text, "HTTP %ld", res->status);
    } else {
        env = cJSON_ParseWithLength(res->body, res->body_len);
        if (classify_model_parse_text(reply_text(m->provider, env), &r, &hold)) {
            r.err = ERR_INVALID;
            snprintf(text, sizeof text, "unusable model output");
        }
    }
    if (r.err)
        r.error = text;
    call_unlink(m, c);
    c->cb(c->arg, &r);
    cJSON_Delete(hold);
    cJSON_Delete(env);
    free(c);
}

/* Copies at most PROMPT_FIELD_MAX bytes of s (NULL -> "unknown"). */
static void clip(struct buf *b, const char *s)
{
    size_t n = s ? strnlen(s, PROMPT_FIELD_MAX) : 0;
    if (!s || !n)
        buf_puts(b, "unknown");
    else
        buf_append(b, s, n);
}

static char *build_prompt(const struct classify_model_input *in)
{
    struct buf b = BUF_INIT(0);

    buf_puts(&b, "You classify alerts of a product anti-counterfeiting system. Alert type: ");
    clip(&b, in->type);
    buf_puts(&b, ". Findings: ");
    clip(&b, in->details);
    buf_puts(&b, ". Checks that fired: ");
    for (size_t i = 0; i < in->nflags && i < 16; i++) {
        if (i)
            buf_puts(&b, ", ");
        clip(&b, in->flags[i]);
    }
    if (!in->nflags)
        buf_puts(&b, "none");
    buf_puts(&b, ". Country: ");
    clip(&b, in->country);
    buf_puts(&b, ". Rule-based severity: ");
    clip(&b, in->rule_severity);
    buf_puts(&b, ". Reply with one JSON object only: {\"severity\": \"low\"|\"medium\"|\"high\"|"
                 "\"critical\", \"attack_vector\": a short snake_case label, \"narrative\": one or "
                 "two sentences, \"recommended_actions\": up to 5 short strings, \"confidence\": "
                 "an integer from 0 to 100}.");
    return buf_steal(&b);
}

static char *build_body(const struct classify_model *m, const char *prompt)
{
    cJSON *o = cJSON_CreateObject(), *arr, *msg, *cfg;
    char *s;

    if (m->provider == CLASSIFY_PROVIDER_GEMINI) {
        arr = cJSON_AddArrayToObject(o, "contents");
        msg = cJSON_CreateObject();
        cJSON_AddStringToObject(msg, "role", "user");
        cJSON *parts = cJSON_AddArrayToObject(msg, "parts");
        cJSON *part = cJSON_CreateObject();
        cJSON_AddStringToObject(part, "text", prompt);
        cJSON_AddItemToArray(parts, part);
        cJSON_AddItemToArray(arr, msg);
        cfg = cJSON_AddObjectToObject(o, "generationConfig");
        cJSON_AddNumberToObject(cfg, "temperature", 0.2);
        cJSON_AddNumberToObject(cfg, "maxOutputTokens", 500);
        cJSON_AddStringToObject(cfg, "responseMimeType", "application/json");
    } else {
        cJSON_AddStringToObject(o, "model", m->model);
        cJSON_AddNumberToObject(o, "temperature", 0.2);
        cJSON_AddNumberToObject(o, "max_tokens", 500);
        cfg = cJSON_AddObjectToObject(o, "response_format");
        cJSON_AddStringToObject(cfg, "type", "json_object");
        arr = cJSON_AddArrayToObject(o, "messages");
        msg = cJSON_CreateObject();
        cJSON_AddStringToObject(msg, "role", "system");
        cJSON_AddStringToObject(msg, "content",
                                "You are a supply-chain security analyst. Answer in JSON only.");
        cJSON_AddItemToArray(arr, msg);
        msg = cJSON_CreateObject();
        cJSON_AddStringToObject(msg, "role", "user");
        cJSON_AddStringToObject(msg, "content", prompt);
        cJSON_AddItemToArray(arr, msg);
    }
    s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

int classify_model_request(struct classify_model *m, const struct classify_model_input *in,
                           classify_model_cb cb, void *arg)
{
    struct cm_call *c;
    char *prompt, *body, *auth = NULL;
    const char *headers[2];
    size_t nh = 0;
    int rc;

    if (!m || !in || !cb)
        return ERR_INVALID;
    prompt = build_prompt(in);
    body = build_body(m, prompt);
    free(prompt);
    if (!body)
        return ERR_IO;
    headers[nh++] = "Content-Type: application/json";
    if (m->key) {
        size_t n = strlen(m->key) + 32;
        auth = xmalloc(n);
        if (m->provider == CLASSIFY_PROVIDER_GEMINI)
            snprintf(auth, n, "x-goog-api-key: %s", m->key);
        else
            snprintf(auth, n, "Authorization: Bearer %s", m->key);
        headers[nh++] = auth;
    }
    c = xcalloc(1, sizeof *c);
    c->m = m;
    c->cb = cb;
    c->arg = arg;
    struct http_client_req req = {.method = "POST",
                                  .url = m->endpoint,
                                  .headers = headers,
                                  .nheaders = nh,
                                  .body = body,
                                  .body_len = strlen(body),
                                  .timeout_s = scaled(m->timeout_s)};
    rc = http_client_start(m->http, &req, http_cb, c);
    if (rc) {
        free(c);
    } else {
        c->next = m->calls;
        if (m->calls)
            m->calls->prev = c;
        m->calls = c;
    }
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    free(body);
    return rc;
}

/* ---- life cycle --------------------------------------------------------- */

static bool model_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > CLASSIFY_MODEL_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._:-", s[i]))
            return false;
    return true;
}

struct classify_model *classify_model_new(struct ev_loop *loop,
                                          const struct classify_model_config *cfg, char *err,
                                          size_t errlen)
{
    struct classify_model *m;
    const char *url, *model, *key;
    bool gemini;
    size_t n;

    if (!cfg ||
        (cfg->provider != CLASSIFY_PROVIDER_GEMINI && cfg->provider != CLASSIFY_PROVIDER_OPENAI)) {
        snprintf(err, errlen, "classifier: the provider must be gemini or openai");
        return NULL;
    }
    gemini = cfg->provider == CLASSIFY_PROVIDER_GEMINI;
    url = cfg->url && *cfg->url ? cfg->url : gemini ? CLASSIFY_GEMINI_URL : CLASSIFY_OPENAI_URL;
    model = cfg->model && *cfg->model ? cfg->model
            : gemini                  ? CLASSIFY_GEMINI_MODEL
                                      : CLASSIFY_OPENAI_MODEL;
    key = cfg->api_key ? cfg->api_key : getenv(gemini ? "GEMINI_API_KEY" : "OPENAI_API_KEY");
    if (key && !*key)
        key = NULL;
    if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8)) {
        snprintf(err, errlen, "classifier: the URL must be http or https");
        return NULL;
    }
    if (!model_name_ok(model)) {
        snprintf(err, errlen, "classifier: invalid model name");
        return NULL;
    }
    if (!key && !(cfg->url && *cfg->url)) {
        snprintf(err, errlen, "classifier: no API key (set %s)",
                 gemini ? "GEMINI_API_KEY" : "OPENAI_API_KEY");
        return NULL;
    }
    m = xcalloc(1, sizeof *m);
    m->provider = cfg->provider;
    snprintf(m->model, sizeof m->model, "%s", model);
    m->key = key ? xstrdup(key) : NULL;
    m->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : CLASSIFY_MODEL_TIMEOUT_S;
    n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    {
        struct buf b = BUF_INIT(0);
        buf_append(&b, url, n);
        if (gemini)
            buf_printf(&b, "/models/%s:generateContent", m->model);
        else
            buf_puts(&b, "/chat/completions");
        m->endpoint = buf_steal(&b);
    }
    struct http_client_config hc = {.max_inflight = cfg->max_inflight ? cfg->max_inflight
                                                                      : CLASSIFY_MODEL_INFLIGHT,
                                    .max_response = REPLY_MAX,
                                    .user_agent = "GenuProof-Classifier/1"};
    m->http = http_client_new(loop, &hc);
    if (!m->http) {
        snprintf(err, errlen, "classifier: cannot create the HTTP client");
        classify_model_free(m);
        return NULL;
    }
    return m;
}

void classify_model_free(struct classify_model *m)
{
    if (!m)
        return;
    http_client_free(m->http); /* no callbacks from here on */
    while (m->calls) {
        struct cm_call *c = m->calls;
        m->calls = c->next;
        free(c);
    }
    if (m->key) {
        memset(m->key, 0, strlen(m->key));
        free(m->key);
    }
    free(m->endpoint);
    free(m);
}

const char *classify_model_name(const struct classify_model *m)
{
    return m ? m->model : CLASSIFY_MODEL_RULES;
}

cJSON *classify_model_analysis_json(const struct classify_model_result *r)
{
    cJSON *o = cJSON_CreateObject(), *arr;

    cJSON_AddStringToObject(o, "severity", r->severity ? r->severity : "medium");
    cJSON_AddStringToObject(o, "attack_vector", r->attack_vector ? r->attack_vector : "");
    cJSON_AddStringToObject(o, "narrative", r->narrative ? r->narrative : "");
    arr = cJSON_AddArrayToObject(o, "recommended_actions");
    for (size_t i = 0; arr && i < r->nactions; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(r->actions[i]));
    cJSON_AddNumberToObject(o, "confidence", r->confidence);
    cJSON_AddStringToObject(o, "model", r->model ? r->model : "");
    cJSON_AddNumberToObject(o, "latency_ms", isfinite(r->latency_ms) ? r->latency_ms : 0);
    return o;
}
