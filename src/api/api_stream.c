/*
 * api_stream.c - GET /api/stream?brandId=[&scans=1][&lastEventId=N]
 * and GET /api/stream?all=1 (admin): the live threat feed (API.md §8).
 *
 * The handler only checks access and parameters, reserves a subscriber
 * slot in the hub and answers with a streaming response whose first bytes
 * are the "retry:" hint and the `connected` event; everything after that
 * (replay after Last-Event-ID, live threats, scans, heartbeats) comes from
 * the hub once the server has sent the head.
 *
 * Answers: missing brandId -> 400 text/plain "brandId required" (the
 * original's plain-text error); another brand's key -> 403; ?all=1
 * without the admin key -> 403; more than the per-brand stream limit ->
 * 429 with Retry-After; no hub (handler tests) -> 503.
 *
 * Two hubs exist: the embedded push hub (sse_hub.h, change-stream
 * sequence ids) and, in processes that cannot read the change stream
 * (DynamoDB), the GSI1-polling hub (sse_poll.h, <writeTime>_<alertId>
 * ids).  The app holds one of them.
 */
#include "api/api_stream.h"

#include <strings.h>
#include <string.h>

#include "api/app.h"
#include "api/sse_hub.h"
#include "api/sse_poll.h"
#include "core/brand.h"
#include "http/sse.h"
#include "util/err.h"

bool api_stream_parse_id(const char *s, uint64_t *id)
{
    uint64_t v = 0;
    size_t digits = 0;
    if (!s)
        return false;
    while (*s == ' ' || *s == '\t')
        s++;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s || digits == 0 || digits > 20)
        return false;
    *id = v;
    return true;
}

/* "1" / "true" (case-insensitive) turn a flag on. */
static bool flag_on(const char *v)
{
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true"));
}

static void plain_error(struct api_req *r, int status, const char *msg)
{
    r->res->status = status;
    r->res->content_type = "text/plain;charset=UTF-8";
    buf_reset(&r->res->body);
    if (buf_puts(&r->res->body, msg))
        api_fail(r, "Internal error", ERR_TOOBIG);
}

/* The first bytes of the stream: retry hint and `connected`. */
static int stream_preamble(struct api_req *r, const char *brand_id)
{
    struct buf *b = &r->res->body;
    struct jsonw w;
    buf_reset(b);
    int rc = sse_retry(b, sse_hub_retry_ms());
    if (!rc)
        rc = sse_event_begin(b, "connected", NULL);
    if (rc)
        return rc;
    jsonw_init(&w, b);
    jsonw_obj(&w);
    if (brand_id) {
        jsonw_kstr(&w, "brandId", brand_id);
    } else {
        jsonw_knull(&w, "brandId");
        jsonw_kbool(&w, "all", true);
    }
    jsonw_kstr(&w, "timestamp", r->now_iso);
    jsonw_end(&w);
    rc = jsonw_error(&w);
    if (!rc)
        rc = sse_event_end(b);
    return rc;
}

static void stream_get(struct api_req *r)
{
    struct sse_hub *hub = app_sse_hub(r->app);
    struct sse_poll *poll = app_sse_poll(r->app);
    const char *brand = api_query(r, "brandId");
    const char *all = api_query(r, "all");
    const char *scans = api_query(r, "scans");
    const char *last = http_request_header(r->http, "Last-Event-ID");
    struct sse_sub_params p = {0};
    struct sse_sub *sub = NULL;
    struct sse_psub *psub = NULL;
    int rc;

    if (!api_query_ok(r))
        return;
    if (!last)
        last = api_query(r, "lastEventId"); /* for clients that cannot set headers */
    if (!api_query_ok(r))
        return;
    if (flag_on(all)) {
        if (!api_is_admin(r)) {
            api_error(r, 403, "Forbidden");
            return;
        }
        p.all = true;
    } else {
        if (!brand) {
            plain_error(r, 400, "brandId required");
            return;
        }
        if (!api_require_brand(r, brand))
            return;
        if (!brand_id_ok(brand)) {
            api_error(r, 400, "Invalid brandId");
            return;
        }
        p.brand_id = brand;
    }
    p.scans = flag_on(scans);
    p.resume = api_stream_parse_id(last, &p.last_id);
    if (poll) {
        struct sse_poll_params pp = {
            .brand_id = p.brand_id, .all = p.all, .scans = p.scans, .last_id = last};
        rc = sse_poll_reserve(poll, &pp, &psub);
    } else if (hub) {
        rc = sse_hub_reserve(hub, &p, &sub);
    } else {
        api_error(r, 503, "Streaming unavailable");
        return;
    }
    if (rc == ERR_TOOBIG) {
        api_error(r, 429, "Too many streams");
        http_response_header(r->res, "Retry-After", "%d", 5);
        return;
    }
    if (rc) {
        api_error(r, 400, "Invalid brandId");
        return;
    }
    /* From here on the server owes stream_closed, which frees sub. */
    r->res->stream = true;
    if (psub) {
        r->res->stream_open = sse_poll_stream_open;
        r->res->stream_closed = sse_poll_stream_closed;
        r->res->stream_arg = psub;
    } else {
        r->res->stream_open = sse_hub_stream_open;
        r->res->stream_closed = sse_hub_stream_closed;
        r->res->stream_arg = sub;
    }
    r->res->status = 200;
    r->res->content_type = "text/event-stream";
    http_response_header(r->res, "Cache-Control", "no-cache, no-transform");
    http_response_header(r->res, "X-Accel-Buffering", "no");
    rc = stream_preamble(r, p.all ? NULL : brand);
    if (rc) {
        /* cannot happen with the body's cap; the stream still closes */
        r->res->close = true;
        buf_reset(&r->res->body);
    }
}

const struct api_route api_stream_routes[] = {
    {HTTP_M_GET, "/api/stream", API_BRAND, stream_get},
    {0},
};
