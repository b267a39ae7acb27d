/*
 * api_health.c - GET /api/health, GET /api/ready, GET /metrics.
 *
 * health always answers 200 and reports the store probe inside the body
 * (load balancers that only look at the status keep the instance);
 * ready answers 503 when the store probe fails, for orchestrators that
 * should stop routing traffic.  /metrics is the Prometheus text of
 * metrics.c and needs the admin key (it reveals traffic patterns).
 */
#include "api/api_health.h"

#include <math.h>
#include <stdio.h>

#include "api/app.h"
#include "api/metrics.h"
#include "store/store.h"
#include "util/err.h"

static void health_get(struct api_req *r)
{
    double ms = 0;
    int rc = store_health(api_store(r), &ms);
    char lat[32];
    snprintf(lat, sizeof lat, "%lldms", (long long)llround(ms < 0 ? 0 : ms));
    struct jsonw *w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kstr(w, "status", rc ? "degraded" : "operational");
    jsonw_kstr(w, "timestamp", r->now_iso);
    jsonw_key(w, "services");
    jsonw_obj(w);
    jsonw_kstr(w, "api", "healthy");
    jsonw_kstr(w, "database", rc ? "unhealthy" : "healthy");
    jsonw_kstr(w, "dbLatency", lat);
    jsonw_end(w);
    jsonw_kstr(w, "version", HEALTH_VERSION);
    jsonw_kint(w, "endpoints", HEALTH_ENDPOINTS);
    jsonw_kint(w, "pages", HEALTH_PAGES);
    jsonw_end(w);
}

static void ready_get(struct api_req *r)
{
    double ms = 0;
    int rc = store_health(api_store(r), &ms);
    struct jsonw *w = api_json(r, rc ? 503 : 200);
    jsonw_obj(w);
    jsonw_kbool(w, "ready", rc == 0);
    if (rc) {
        char msg[96];
        snprintf(msg, sizeof msg, "store unavailable: %s", err_str(rc));
        jsonw_kstr(w, "error", msg);
    }
    jsonw_end(w);
}

static void metrics_get(struct api_req *r)
{
    r->res->status = 200;
    r->res->content_type = "text/plain; version=0.0.4; charset=utf-8";
    buf_reset(&r->res->body);
    int rc = metrics_render(app_metrics(r->app), api_store(r), &r->res->body);
    if (rc)
        api_fail(r, "Internal error", rc);
}

const struct api_route api_health_routes[] = {
    {HTTP_M_GET, "/api/health", API_PUBLIC, health_get},
    {HTTP_M_GET, "/api/ready", API_PUBLIC, ready_get},
    {HTTP_M_GET, "/metrics", API_ADMIN, metrics_get},
    {0},
};
