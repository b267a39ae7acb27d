/*
 * api_req.c - the helpers every handler uses (api.h): responses, query
 * and body parameters, the per-request arena and the access checks.
 *
 * The arena is a chain of malloc'd blocks freed together when the request
 * ends, so handlers can keep decoded strings without tracking them.
 * Query parameters are decoded on each call (a handler reads a handful);
 * a value that cannot be decoded answers 400 at once and sets query_bad,
 * which api_query_ok() reports so the handler stops.
 */
#include "api/api_req.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "util/err.h"
#include "util/log.h"
#include "util/xalloc.h"

/* ---------- arena ---------- */

#define ARENA_BLOCK 4096
#define ARENA_ALIGN 16

struct arena_blk {
    struct arena_blk *next;
    size_t used, cap;
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

void *api_alloc(struct api_req *r, size_t n)
{
    struct arena_blk *b = r->arena;
    size_t need = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (need == 0)
        need = ARENA_ALIGN;
    if (!b || b->cap - b->used < need) {
        size_t cap = need > ARENA_BLOCK ? need : ARENA_BLOCK;
        struct arena_blk *nb = xmalloc(sizeof *nb + cap);
        nb->used = 0;
        nb->cap = cap;
        nb->next = b;
        r->arena = nb;
        b = nb;
    }
    void *p = b->data + b->used;
    b->used += need;
    memset(p, 0, n);
    return p;
}

char *api_strdup(struct api_req *r, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *p = api_alloc(r, n + 1);
    memcpy(p, s, n + 1);
    return p;
}

char *api_printf(struct api_req *r, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return api_strdup(r, "");
    char *p = api_alloc(r, (size_t)n + 1);
    if ((size_t)n < sizeof tmp) {
        memcpy(p, tmp, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf(p, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return p;
}

void api_req_init(struct api_req *r, struct app *app, struct http_request *http,
                  struct http_response *res, int64_t now_ms)
{
    memset(r, 0, sizeof *r);
    r->app = app;
    r->http = http;
    r->res = res;
    r->now_ms = now_ms;
    time_iso(now_ms, r->now_iso);
    snprintf(r->client_ip, sizeof r->client_ip, "unknown");
    snprintf(r->country, sizeof r->country, "Unknown");
    snprintf(r->city, sizeof r->city, "Unknown");
    r->route = "";
}

void api_req_finish(struct api_req *r)
{
    struct arena_blk *b = r->arena;
    while (b) {
        struct arena_blk *next = b->next;
        free(b);
        b = next;
    }
    r->arena = NULL;
    if (r->body_json)
        cJSON_Delete(r->body_json);
    r->body_json = NULL;
}

/* ---------- responses ---------- */

struct jsonw *api_json(struct api_req *r, int status)
{
    r->res->status = status;
    r->res->content_type = "application/json";
    buf_reset(&r->res->body);
    jsonw_init(&r->jw, &r->res->body);
    return &r->jw;
}

void api_error(struct api_req *r, int status, const char *msg)
{
    struct jsonw *w = api_json(r, status);
    jsonw_obj(w);
    jsonw_kstr(w, "error", msg);
    jsonw_end(w);
}

void api_fail(struct api_req *r, const char *msg, int err)
{
    char extra[512];
    struct buf b = BUF_INIT(sizeof extra);
    /* route is a pattern from the route table, never user input */
    buf_printf(&b, "\"route\":\"%s\",\"err\":\"%s\",\"code\":%d", r->route ? r->route : "",
               err_str(err), err);
    log_msg(LOG_ERROR, buf_cstr(&b), "%s", msg);
    buf_free(&b);
    /* The backend is busy or out of reach (throttling that outlived the
     * retry budget, an unreachable DynamoDB): nothing was written, the
     * client may try again, so say so instead of a plain 500. */
    if (err == ERR_THROTTLED || err == ERR_UNAVAILABLE || err == ERR_TIMEOUT) {
        http_response_header(r->res, "Retry-After", "%d", 1);
        api_error(r, 503, msg);
        return;
    }
    api_error(r, 500, msg);
}

/* ---------- query parameters ---------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int api_url_decode(const char *s, size_t n, bool plus_space, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (n - i < 3)
                return ERR_INVALID;
            int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0)
                return ERR_INVALID;
            c = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_space) {
            c = ' ';
        }
        if (c == '\0')
            return ERR_INVALID;
        if (o + 1 >= cap)
            return ERR_TOOBIG;
        out[o++] = c;
    }
    if (cap == 0)
        return ERR_TOOBIG;
    out[o] = '\0';
    if (!dec_utf8_ok(out, o))
        return ERR_INVALID;
    return (int)o;
}

int api_query_decode(const char *query, const char *name, char *out, size_t cap)
{
    if (!query || !name)
        return 0;
    char key[256];
    const char *p = query;
    while (*p) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t klen = eq ? (size_t)(eq - p) : len;
        int kn = api_url_decode(p, klen, true, key, sizeof key);
        if (kn >= 0 && !strcmp(key, name)) {
            const char *v = eq ? eq + 1 : p + len;
            size_t vlen = eq ? len - klen - 1 : 0;
            size_t lim = cap < API_QUERY_MAX + 1 ? cap : API_QUERY_MAX + 1;
            int vn = api_url_decode(v, vlen, true, out, lim);
            return vn < 0 ? ERR_INVALID : 1;
        }
        if (!amp)
            break;
        p = amp + 1;
    }
    return 0;
}

const char *api_query(struct api_req *r, const char *name)
{
    const char *q = r->http ? r->http->query : NULL;
    if (!q || !*q)
        return NULL;
    char out[API_QUERY_MAX + 1];
    int rc = api_query_decode(q, name, out, sizeof out);
    if (rc < 0) {
        if (!r->query_bad)
            api_error(r, 400, "Invalid query parameter");
        r->query_bad = true;
        return NULL;
    }
    if (rc == 0 || !out[0])
        return NULL;
    return api_strdup(r, out);
}

bool api_query_ok(struct api_req *r)
{
    return !r->query_bad;
}

long api_query_int(struct api_req *r, const char *name, long def, long min, long max)
{
    const char *s = api_query(r, name);
    long v = def;
    if (s) {
        const char *p = s;
        if (*p == '-' || *p == '+')
            p++;
        bool digits = *p != '\0';
        for (const char *d = p; *d; d++)
            if (*d < '0' || *d > '9')
                digits = false;
        if (digits) {
            errno = 0;
            long long x = strtoll(s, NULL, 10);
            if (errno == ERANGE)
                v = s[0] == '-' ? min : max;
            else if (x < min)
                v = min;
            else if (x > max)
                v = max;
            else
                v = (long)x;
        }
    }
    if (v < min)
        v = min;
    if (v > max)
        v = max;
    return v;
}

/* ---------- body ---------- */

cJSON *api_body(struct api_req *r)
{
    if (!r->body_parsed) {
        r->body_parsed = true;
        if (r->http && r->http->body)
            r->body_json = dec_parse_body(r->http->body, r->http->body_len);
    }
    if (!r->body_json)
        api_error(r, 400, "Invalid JSON body");
    return r->body_json;
}

/* Answers 400 with the decoder's message when rc is DEC_WRONG. */
static int body_result(struct api_req *r, int rc, const char *err)
{
    if (rc == DEC_WRONG)
        api_error(r, 400, err);
    return rc;
}

int api_body_str(struct api_req *r, const cJSON *obj, const char *field, const char **out)
{
    char err[160];
    int rc = dec_str(obj, field, DEC_STR_MAX, out, err, sizeof err);
    return body_result(r, rc, err);
}

int api_body_obj(struct api_req *r, const cJSON *obj, const char *field, const cJSON **out)
{
    char err[160];
    int rc = dec_obj(obj, field, out, err, sizeof err);
    return body_result(r, rc, err);
}

int api_body_arr(struct api_req *r, const cJSON *obj, const char *field, const cJSON **out)
{
    char err[160];
    int rc = dec_arr(obj, field, out, err, sizeof err);
    return body_result(r, rc, err);
}

int api_body_num(struct api_req *r, const cJSON *obj, const char *field, double *out)
{
    char err[160];
    int rc = dec_num(obj, field, out, err, sizeof err);
    return body_result(r, rc, err);
}

/* ---------- access ---------- */

bool api_is_admin(const struct api_req *r)
{
    return r->who.kind == API_PRINCIPAL_ADMIN;
}

bool api_is_brand(const struct api_req *r, const char *brand_id)
{
    if (r->who.kind == API_PRINCIPAL_ADMIN)
        return true;
    return r->who.kind == API_PRINCIPAL_BRAND && brand_id && r->who.brand_id[0] &&
           !strcmp(r->who.brand_id, brand_id);
}

bool api_is_ingest(const struct api_req *r)
{
    return r->who.kind == API_PRINCIPAL_INGEST;
}

bool api_require_brand(struct api_req *r, const char *brand_id)
{
    if (api_is_brand(r, brand_id))
        return true;
    if (r->who.kind == API_ANON)
        api_error(r, 401, "Unauthorized");
    else
        api_error(r, 403, "Forbidden");
    return false;
}
