/*
 * ddb_http.c - the DynamoDB JSON API client (see ddb_http.h).
 *
 * Every call is a POST of a compact JSON body to "/" with X-Amz-Target,
 * signed with SigV4 (ddb_auth.c) at each attempt (the date changes).  One
 * easy handle serves single calls so its connection stays alive between
 * them; ddb_call_many() drives a pool of easy handles through one multi
 * handle, whose connection cache keeps those alive too.  A failed attempt
 * is classified once (ddb_error_classify); retryable ones wait a full
 * jitter delay - uniform in [0, min(cap, base * 2^attempt)], scaled by
 * GENUPROOF_TIME_SCALE - and go again while the per-call attempts and the
 * client-wide retry budget last (a token bucket like the AWS SDKs': a retry
 * takes tokens, a success gives one back), so a struggling backend is not
 * hammered forever.  When retries run out the error is returned: a write
 * is never dropped silently.
 */
#include "store/ddb_http.h"

#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/ddb_auth.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

/* Largest response body accepted (a 1 MB query page marshals larger). */
#define RESP_MAX (16 * 1024 * 1024)
/* Largest request body sent. */
#define REQ_MAX (8 * 1024 * 1024)
/* Concurrent transfers of one ddb_call_many round. */
#define MANY_MAX 32
/* Backoff: first ceiling and largest ceiling, unscaled seconds. */
#define BACKOFF_BASE_S 0.05
#define BACKOFF_CAP_S  5.0
/* Retry budget (token bucket): capacity, cost of a retry, of a retry
 * after a timeout/transport error, and the refill per success. */
#define BUDGET_MAX     500.0
#define BUDGET_RETRY   5.0
#define BUDGET_TIMEOUT 10.0
#define BUDGET_REFILL  1.0

struct ddb_http {
    char *endpoint, *streams_endpoint;
    char host[300], streams_host[300];
    char region[64];
    struct ddb_creds cr;
    int max_retries;
    long timeout_ms;
    CURL *easy;
    CURLM *multi;
    CURL *pool[MANY_MAX];
    double budget;
    uint64_t rng;
    struct ddb_http_stats st;
};

/* One attempt in flight. */
struct xfer {
    CURL *e;
    struct curl_slist *hdrs;
    struct buf out; /* response body */
    char *body;     /* request body */
    const char *target;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---------- helpers ---------- */

/* The host[:port] part of a URL into out; ERR_INVALID when malformed. */
static int url_host(const char *url, char *out, size_t cap)
{
    const char *p = strstr(url, "://"), *e;
    if (!p)
        return ERR_INVALID;
    p += 3;
    e = p + strcspn(p, "/?#");
    if (e == p || (size_t)(e - p) >= cap)
        return ERR_INVALID;
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = '\0';
    return 0;
}

static double rand01(struct ddb_http *h)
{
    /* xorshift64*: jitter only, no security role. */
    h->rng ^= h->rng >> 12;
    h->rng ^= h->rng << 25;
    h->rng ^= h->rng >> 27;
    return (double)((h->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

double ddb_backoff_delay(int attempt, double u)
{
    double ceil_s = BACKOFF_BASE_S * pow(2.0, attempt < 30 ? attempt : 30);
    if (ceil_s > BACKOFF_CAP_S)
        ceil_s = BACKOFF_CAP_S;
    if (u < 0)
        u = 0;
    if (u > 1)
        u = 1;
    return ceil_s * u;
}

static void sleep_s(double s)
{
    struct timespec ts;
    s = scaled(s);
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static size_t write_cb(char *p, size_t sz, size_t n, void *arg)
{
    struct buf *b = arg;
    return buf_append(b, p, sz * n) ? 0 : sz * n;
}

static bool is_write_target(const char *t)
{
    return strstr(t, ".PutItem") || strstr(t, ".UpdateItem") || strstr(t, ".DeleteItem") ||
           strstr(t, ".TransactWriteItems") || strstr(t, ".BatchWriteItem");
}

/* Sums ConsumedCapacity (an object or an array of them). */
static void add_capacity(struct ddb_http *h, const char *target, const cJSON *resp)
{
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(resp, "ConsumedCapacity"), *e;
    double sum = 0;
    if (!cc)
        return;
    if (cJSON_IsObject(cc)) {
        e = cJSON_GetObjectItemCaseSensitive(cc, "CapacityUnits");
        sum += cJSON_IsNumber(e) ? e->valuedouble : 0;
    } else if (cJSON_IsArray(cc)) {
        cJSON_ArrayForEach(e, cc)
        {
            const cJSON *u = cJSON_GetObjectItemCaseSensitive(e, "CapacityUnits");
            sum += cJSON_IsNumber(u) ? u->valuedouble : 0;
        }
    }
    if (is_write_target(target))
        h->st.consumed_wcu += sum;
    else
        h->st.consumed_rcu += sum;
}

/* ---------- classification ---------- */

static bool type_is(const char *type, const char *name)
{
    return strcmp(type, name) == 0;
}

int ddb_error_classify(struct ddb_error *e, const cJSON *body)
{
    const char *t = e->type;
    e->retryable = false;
    if (e->http_status == 0) {
        e->retryable = true;
        return ERR_UNAVAILABLE;
    }
    if (type_is(t, "ProvisionedThroughputExceededException") || type_is(t, "ThrottlingException") ||
        type_is(t, "RequestLimitExceeded") || type_is(t, "LimitExceededException") ||
        type_is(t, "Throttling")) {
        /* LimitExceeded is a control-plane throttle (too many table ops). */
        e->retryable = true;
        return ERR_THROTTLED;
    }
    if (type_is(t, "ConditionalCheckFailedException"))
        return ERR_CONDITION;
    if (type_is(t, "TransactionCanceledException")) {
        const cJSON *rs = cJSON_GetObjectItemCaseSensitive(body, "CancellationReasons"), *r;
        bool cond = false, again = false, invalid = false;
        cJSON_ArrayForEach(r, rs)
        {
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(r, "Code");
            if (!cJSON_IsString(c))
                continue;
            if (!strcmp(c->valuestring, "ConditionalCheckFailed"))
                cond = true;
            else if (!strcmp(c->valuestring, "TransactionConflict") ||
                     !strcmp(c->valuestring, "ThrottlingError") ||
                     !strcmp(c->valuestring, "ProvisionedThroughputExceeded"))
                again = true;
            else if (!strcmp(c->valuestring, "ValidationError") ||
                     !strcmp(c->valuestring, "ItemCollectionSizeLimitExceeded"))
                invalid = true;
        }
        if (cond)
            return ERR_CONDITION;
        if (invalid)
            return ERR_INVALID;
        e->retryable = again;
        return ERR_CONFLICT;
    }
    if (type_is(t, "TransactionConflictException") ||
        type_is(t, "TransactionInProgressException")) {
        e->retryable = true;
        return ERR_CONFLICT;
    }
    if (type_is(t, "ValidationException") || type_is(t, "SerializationException"))
        return ERR_INVALID;
    if (type_is(t, "ResourceNotFoundException"))
        return ERR_NOTFOUND;
    if (type_is(t, "ResourceInUseException"))
        return ERR_CONFLICT;
    if (type_is(t, "ItemCollectionSizeLimitExceededException"))
        return ERR_TOOBIG;
    if (e->http_status >= 500 || type_is(t, "InternalServerError") ||
        type_is(t, "ServiceUnavailable")) {
        e->retryable = true;
        return ERR_UNAVAILABLE;
    }
    if (e->http_status == 413)
        return ERR_TOOBIG;
    return e->http_status >= 400 && e->http_status < 500 ? ERR_INVALID : ERR_IO;
}

/* Fills e from an error reply body. */
static void parse_error(const cJSON *body, struct ddb_error *e)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(body, "__type");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(body, "message");
    if (!m)
        m = cJSON_GetObjectItemCaseSensitive(body, "Message");
    if (cJSON_IsString(t)) {
        const char *hash = strrchr(t->valuestring, '#');
        snprintf(e->type, sizeof(e->type), "%s", hash ? hash + 1 : t->valuestring);
    }
    if (cJSON_IsString(m))
        snprintf(e->message, sizeof(e->message), "%s", m->valuestring);
}

/* ---------- client ---------- */

static char *env_or(const char *a, const char *name)
{
    const char *v = a && *a ? a : getenv(name);
    return v && *v ? xstrdup(v) : NULL;
}

struct ddb_http *ddb_http_new(const struct ddb_http_config *cfg, char *err, size_t errlen)
{
    struct ddb_http_config dflt = {0};
    struct ddb_http *h = xcalloc(1, sizeof(*h));
    const char *region;
    char url[400];
    bool explicit_ep;
    if (!cfg)
        cfg = &dflt;
    pthread_once(&curl_once, curl_init_once);
    region = cfg->region && *cfg->region ? cfg->region : getenv("AWS_REGION");
    if (!region || !*region)
        region = getenv("AWS_DEFAULT_REGION");
    if (!region || !*region)
        region = "us-east-1";
    if (strlen(region) >= sizeof(h->region) ||
        strspn(region, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(region)) {
        snprintf(err, errlen, "invalid AWS region");
        goto fail;
    }
    snprintf(h->region, sizeof(h->region), "%s", region);
    h->endpoint = env_or(cfg->endpoint, "AWS_ENDPOINT_URL_DYNAMODB");
    explicit_ep = h->endpoint != NULL;
    if (!h->endpoint) {
        snprintf(url, sizeof(url), "https://dynamodb.%s.amazonaws.com", h->region);
        h->endpoint = xstrdup(url);
    }
    if (cfg->streams_endpoint && *cfg->streams_endpoint) {
        h->streams_endpoint = xstrdup(cfg->streams_endpoint);
    } else if (explicit_ep) {
        h->streams_endpoint = xstrdup(h->endpoint);
    } else {
        snprintf(url, sizeof(url), "https://streams.dynamodb.%s.amazonaws.com", h->region);
        h->streams_endpoint = xstrdup(url);
    }
    if (url_host(h->endpoint, h->host, sizeof(h->host)) ||
        url_host(h->streams_endpoint, h->streams_host, sizeof(h->streams_host))) {
        snprintf(err, errlen, "invalid DynamoDB endpoint URL");
        goto fail;
    }
    if (ddb_creds_load(cfg->profile, &h->cr, err, errlen))
        goto fail;
    h->max_retries = cfg->max_retries > 0 ? cfg->max_retries : 8;
    h->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 10000;
    h->budget = BUDGET_MAX;
    h->rng = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)h;
    if (!h->rng)
        h->rng = 1;
    h->easy = curl_easy_init();
    h->multi = curl_multi_init();
    if (!h->easy || !h->multi) {
        snprintf(err, errlen, "curl initialisation failed");
        goto fail;
    }
    return h;
fail:
    ddb_http_free(h);
    return NULL;
}

void ddb_http_free(struct ddb_http *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < MANY_MAX; i++)
        if (h->pool[i])
            curl_easy_cleanup(h->pool[i]);
    if (h->multi)
        curl_multi_cleanup(h->multi);
    if (h->easy)
        curl_easy_cleanup(h->easy);
    free(h->endpoint);
    free(h->streams_endpoint);
    memset(&h->cr, 0, sizeof(h->cr));
    free(h);
}

void ddb_http_stats(const struct ddb_http *h, struct ddb_http_stats *out)
{
    *out = h->st;
}

/* Sets up one attempt on x->e (which the caller owns). */
static int xfer_prepare(struct ddb_http *h, struct xfer *x, const char *target)
{
    bool streams = !strncmp(target, "DynamoDBStreams_", 16);
    const char *host = streams ? h->streams_host : h->host;
    char date[20], hv[340], tv[160], dv[40], authz[600], tokh[4200];
    struct sigv4_header sh[5];
    size_t nsh = 0, blen = strlen(x->body);
    time_t now = time(NULL);
    struct tm tm;
    int rc;
    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%Y%m%dT%H%M%SZ", &tm);
    sh[nsh++] = (struct sigv4_header){"content-type", "application/x-amz-json-1.0"};
    sh[nsh++] = (struct sigv4_header){"host", host};
    sh[nsh++] = (struct sigv4_header){"x-amz-date", date};
    sh[nsh++] = (struct sigv4_header){"x-amz-target", target};
    if (h->cr.token[0])
        sh[nsh++] = (struct sigv4_header){"x-amz-security-token", h->cr.token};
    rc = sigv4_authorization("POST", "/", NULL, sh, nsh, x->body, blen, date, h->region, "dynamodb",
                             &h->cr, authz, sizeof(authz));
    if (rc)
        return rc;
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
    snprintf(hv, sizeof(hv), "Host: %s", host);
    snprintf(tv, sizeof(tv), "X-Amz-Target: %s", target);
    snprintf(dv, sizeof(dv), "X-Amz-Date: %s", date);
    x->hdrs = curl_slist_append(x->hdrs, "Content-Type: application/x-amz-json-1.0");
    x->hdrs = curl_slist_append(x->hdrs, hv);
    x->hdrs = curl_slist_append(x->hdrs, tv);
    x->hdrs = curl_slist_append(x->hdrs, dv);
    x->hdrs = curl_slist_append(x->hdrs, "Expect:");
    if (h->cr.token[0]) {
        snprintf(tokh, sizeof(tokh), "X-Amz-Security-Token: %s", h->cr.token);
        x->hdrs = curl_slist_append(x->hdrs, tokh);
    }
    {
        char ah[640];
        snprintf(ah, sizeof(ah), "Authorization: %s", authz);
        x->hdrs = curl_slist_append(x->hdrs, ah);
        memset(ah, 0, sizeof(ah));
    }
    if (!x->hdrs)
        return ERR_NOMEM;
    buf_reset(&x->out);
    curl_easy_setopt(x->e, CURLOPT_URL, streams ? h->streams_endpoint : h->endpoint);
    curl_easy_setopt(x->e, CURLOPT_POST, 1L);
    curl_easy_setopt(x->e, CURLOPT_POSTFIELDS, x->body);
    curl_easy_setopt(x->e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
    curl_easy_setopt(x->e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(x->e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(x->e, CURLOPT_WRITEDATA, &x->out);
    curl_easy_setopt(x->e, CURLOPT_TIMEOUT_MS, h->timeout_ms);
    curl_easy_setopt(x->e, CURLOPT_CONNECTTIMEOUT_MS, h->timeout_ms);
    curl_easy_setopt(x->e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(x->e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(x->e, CURLOPT_ACCEPT_ENCODING, "");
    memset(authz, 0, sizeof(authz));
    x->target = target;
    return 0;
}

/* Turns a finished attempt into rc/resp/e. */
static int xfer_finish(struct ddb_http *h, struct xfer *x, CURLcode cc, cJSON **resp,
                       struct ddb_error *e)
{
    long status = 0;
    cJSON *body = NULL;
    int rc;
    memset(e, 0, sizeof(*e));
    *resp = NULL;
    if (cc == CURLE_WRITE_ERROR) {
        /* The reply outgrew RESP_MAX: asking again would not shrink it. */
        snprintf(e->message, sizeof(e->message), "reply larger than %d bytes", RESP_MAX);
        return ERR_TOOBIG;
    }
    if (cc != CURLE_OK) {
        snprintf(e->message, sizeof(e->message), "%s", curl_easy_strerror(cc));
        return ddb_error_classify(e, NULL);
    }
    curl_easy_getinfo(x->e, CURLINFO_RESPONSE_CODE, &status);
    e->http_status = (int)status;
    if (x->out.len)
        body = cJSON_ParseWithLength(x->out.data, x->out.len);
    if (status == 200) {
        if (!cJSON_IsObject(body)) {
            cJSON_Delete(body);
            snprintf(e->message, sizeof(e->message), "malformed reply");
            e->retryable = true;
            return ERR_UNAVAILABLE;
        }
        add_capacity(h, x->target, body);
        *resp = body;
        return 0;
    }
    if (body)
        parse_error(body, e);
    rc = ddb_error_classify(e, body);
    *resp = body;
    return rc;
}

/* May this failure be retried now?  Takes the budget's tokens. */
static bool may_retry(struct ddb_http *h, const struct ddb_error *e, int attempt)
{
    double cost = e->http_status == 0 ? BUDGET_TIMEOUT : BUDGET_RETRY;
    if (!e->retryable || attempt >= h->max_retries || h->budget < cost)
        return false;
    h->budget -= cost;
    return true;
}

static void count_result(struct ddb_http *h, int rc, const struct ddb_error *e)
{
    if (!rc) {
        h->budget = h->budget + BUDGET_REFILL > BUDGET_MAX ? BUDGET_MAX : h->budget + BUDGET_REFILL;
        return;
    }
    if (e->retryable && rc == ERR_THROTTLED)
        h->st.throttles++;
}

static void log_fail(const char *target, int rc, const struct ddb_error *e, int attempts)
{
    if (rc == ERR_CONDITION || rc == ERR_NOTFOUND)
        return;
    log_warn("dynamodb %s failed after %d attempt(s): %s %s (%d)", target, attempts,
             e->type[0] ? e->type : "transport", e->message, e->http_status);
}

int ddb_call(struct ddb_http *h, const char *target, const cJSON *req, cJSON **resp,
             struct ddb_error *e)
{
    struct xfer x = {0};
    struct ddb_error tmp;
    int rc = 0, attempt = 0;
    if (!e)
        e = &tmp;
    *resp = NULL;
    memset(e, 0, sizeof(*e));
    buf_init(&x.out, RESP_MAX);
    x.body = cJSON_PrintUnformatted(req);
    if (!x.body || strlen(x.body) > REQ_MAX) {
        rc = x.body ? ERR_TOOBIG : ERR_NOMEM;
        goto out;
    }
    x.e = h->easy;
    h->st.calls++;
    for (;;) {
        CURLcode cc;
        rc = xfer_prepare(h, &x, target);
        if (rc)
            break;
        cc = curl_easy_perform(x.e);
        cJSON_Delete(*resp);
        rc = xfer_finish(h, &x, cc, resp, e);
        count_result(h, rc, e);
        if (!rc || !may_retry(h, e, attempt))
            break;
        h->st.retries++;
        sleep_s(ddb_backoff_delay(attempt, rand01(h)));
        attempt++;
    }
    if (rc) {
        h->st.failures++;
        log_fail(target, rc, e, attempt + 1);
    }
out:
    curl_slist_free_all(x.hdrs);
    buf_free(&x.out);
    free(x.body);
    return rc;
}

int ddb_call_many(struct ddb_http *h, struct ddb_call_slot *slots, size_t n)
{
    struct xfer x[MANY_MAX];
    int attempt[MANY_MAX];
    bool pending[MANY_MAX];
    int first = 0;
    for (size_t base = 0; base < n; base += MANY_MAX) {
        size_t m = n - base < MANY_MAX ? n - base : MANY_MAX;
        size_t left = 0;
        for (size_t i = 0; i < m; i++) {
            struct ddb_call_slot *s = &slots[base + i];
            memset(&x[i], 0, sizeof(x[i]));
            buf_init(&x[i].out, RESP_MAX);
            s->resp = NULL;
            s->rc = 0;
            memset(&s->err, 0, sizeof(s->err));
            attempt[i] = 0;
            if (!h->pool[i])
                h->pool[i] = curl_easy_init();
            x[i].e = h->pool[i];
            x[i].body = s->req ? cJSON_PrintUnformatted(s->req) : NULL;
            pending[i] = x[i].e && x[i].body && strlen(x[i].body) <= REQ_MAX;
            if (!pending[i])
                s->rc = x[i].body ? ERR_TOOBIG : ERR_NOMEM;
            else
                left++;
            h->st.calls++;
        }
        while (left) {
            double wait = 0;
            int running = 0;
            CURLMsg *msg;
            int q;
            for (size_t i = 0; i < m; i++) {
                if (!pending[i])
                    continue;
                slots[base + i].rc = xfer_prepare(h, &x[i], slots[base + i].target);
                if (slots[base + i].rc) {
                    pending[i] = false;
                    left--;
                    continue;
                }
                curl_easy_setopt(x[i].e, CURLOPT_PRIVATE, (void *)&x[i]);
                curl_multi_add_handle(h->multi, x[i].e);
            }
            do {
                curl_multi_perform(h->multi, &running);
                if (running)
                    curl_multi_poll(h->multi, NULL, 0, 1000, NULL);
            } while (running);
            while ((msg = curl_multi_info_read(h->multi, &q))) {
                struct xfer *xp = NULL;
                size_t i;
                if (msg->msg != CURLMSG_DONE)
                    continue;
                curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&xp);
                i = (size_t)(xp - x);
                struct ddb_call_slot *s = &slots[base + i];
                cJSON_Delete(s->resp);
                s->rc = xfer_finish(h, xp, msg->data.result, &s->resp, &s->err);
                curl_multi_remove_handle(h->multi, xp->e);
                count_result(h, s->rc, &s->err);
                if (!s->rc || !may_retry(h, &s->err, attempt[i])) {
                    pending[i] = false;
                    left--;
                    if (s->rc) {
                        h->st.failures++;
                        log_fail(s->target, s->rc, &s->err, attempt[i] + 1);
                    }
                } else {
                    double d = ddb_backoff_delay(attempt[i], rand01(h));
                    h->st.retries++;
                    attempt[i]++;
                    if (d > wait)
                        wait = d;
                }
            }
            if (left)
                sleep_s(wait);
        }
        for (size_t i = 0; i < m; i++) {
            if (slots[base + i].rc && !first)
                first = slots[base + i].rc;
            curl_slist_free_all(x[i].hdrs);
            buf_free(&x[i].out);
            free(x[i].body);
        }
    }
    return first;
}
