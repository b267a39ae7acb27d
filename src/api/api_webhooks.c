/*
 * api_webhooks.c - the webhook routes (API.md §9.27-§9.29, D06, D42)
 * and the delivery log.
 *
 *   POST   /api/webhooks                 BRAND  register {brandId,url,events?}
 *   GET    /api/webhooks?brandId=        BRAND  list (never the secret)
 *   DELETE /api/webhooks                 BRAND  {brandId,webhookId} -> soft delete
 *   GET    /api/webhooks/deliveries?webhookId=&brandId=&limit=
 *                                        BRAND  newest deliveries of one webhook
 *
 * Registration validates the target (http/https, no credentials, and
 * unless --allow-private-webhooks no private or loopback address: a name
 * is looked up off the loop, the request deferred meanwhile (app_defer,
 * at most WEBHOOKS_RESOLVE_TIMEOUT_S, 503 when too many lookups are
 * running), so a slow name server holds no other request), requires the
 * brand to exist,
 * caps a brand's active webhooks at WEBHOOK_MAX_PER_BRAND (so one event
 * fans out to a bounded number of deliveries) and returns the new secret
 * once.  Delete is a conditional update (D42): an unknown id is a 404 and
 * never creates a stub item.
 *
 * The delivery log's partition is DELIVERY#<webhookId>, which does not
 * name the brand, so the brand comes from ?brandId=, else from the
 * caller's brand key; only the admin key without ?brandId= falls back to
 * the brandId stored in the newest delivery (none: an empty list).  The
 * webhook item is then read under that brand, which both checks access
 * and answers 404 for an unknown webhook.
 */
#include "api/api_webhooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_brands.h"
#include "api/app.h"
#include "api/pager.h"
#include "api/webhook_decode.h"
#include "core/brand.h"
#include "core/ids.h"
#include "core/keys.h"
#include "core/webhook.h"
#include "net/resolver.h"
#include "store/store.h"
#include "util/err.h"
#include "util/timescale.h"
#include "util/xalloc.h"

/* Longest wait for the registration-time DNS lookup (scaled). */
#define WEBHOOKS_RESOLVE_TIMEOUT_S 3.0
#define WEBHOOKS_LIST_MAX          1000
#define DELIVERIES_DEFAULT_LIMIT   50
#define DELIVERIES_MAX_LIMIT       500

struct count_active {
    size_t n;
};

static int count_active_cb(void *arg, const cJSON *item)
{
    struct count_active *c = arg;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "active")))
        c->n++;
    return 0;
}

/* What a registration needs once its target is checked. */
struct reg {
    const char *brand_id;
    const char *url;
    unsigned events;
};

/* The rest of POST /api/webhooks, the target checked: the brand, the cap,
 * the item and the audit entry, the answer with the secret. */
static void register_checked(struct api_req *r, const struct reg *in)
{
    struct store_query q = {.sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_WEBHOOK, .forward = true};
    struct count_active ca = {0};
    struct webhook_fields f;
    char id[37], secret[WEBHOOK_SECRET_LEN + 1];
    cJSON *profile = NULL, *item = NULL;
    struct key pk;
    int rc;

    if (!key_brand_pk(&pk, in->brand_id)) {
        api_error(r, 400, "Invalid brandId");
        return;
    }
    rc = store_get(api_store(r), pk.s, KEY_SK_PROFILE, true, &profile);
    if (rc == ERR_NOTFOUND) {
        api_error(r, 404, "Brand not found");
        return;
    }
    if (rc) {
        api_fail(r, "Failed to create webhook", rc);
        return;
    }
    q.pk = pk.s;
    q.consistent = true;
    rc = pager_each(api_store(r), &q, 0, count_active_cb, &ca, NULL);
    if (rc) {
        api_fail(r, "Failed to create webhook", rc);
        goto out;
    }
    if (ca.n >= WEBHOOK_MAX_PER_BRAND) {
        api_error(r, 400, "Too many webhooks (at most 20 active per brand)");
        goto out;
    }
    ids_uuid4(id);
    webhook_secret_new(secret);
    f = (struct webhook_fields){.id = id,
                                .brand_id = in->brand_id,
                                .url = in->url,
                                .events = in->events,
                                .created_at = r->now_iso,
                                .secret = secret};
    item = webhook_item_new(&f);
    if (!item) {
        api_error(r, 400, "Invalid webhook");
        goto out;
    }
    const struct store_cond absent = {.kind = STORE_COND_NOT_EXISTS};
    rc = store_put(api_store(r), item, &absent);
    if (!rc)
        rc = api_audit(r, "webhook.created", in->brand_id, NULL, id);
    if (rc) {
        api_fail(r, "Failed to create webhook", rc);
        goto out;
    }
    webhook_write_created_json(api_json(r, 200), item);
out:
    memset(secret, 0, sizeof secret);
    cJSON_Delete(profile);
    cJSON_Delete(item);
}

/* A registration waiting for the lookup of its host's name, which runs
 * off the loop (net/resolver.h): the request is deferred meanwhile. */
struct pending_reg {
    struct api_resume resume;
    struct resolver_job *job;
    struct reg in;
    int lookup_rc;
    const struct addrinfo *addrs; /* during the resume only */
    char *brand_id, *url;
};

static void pending_free(struct pending_reg *p)
{
    free(p->brand_id);
    free(p->url);
    free(p);
}

/* The client went away first: the lookup's answer is not wanted. */
static void pending_closed(void *arg)
{
    struct pending_reg *p = arg;
    resolver_cancel(p->job);
    pending_free(p);
}

static void pending_resume(struct api_req *r, void *arg)
{
    struct pending_reg *p = arg;
    char err[200];
    if (webhook_addrs_check(p->lookup_rc, p->addrs, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    register_checked(r, &p->in);
}

static void pending_looked_up(void *arg, int rc, const struct addrinfo *res)
{
    struct pending_reg *p = arg;
    p->job = NULL;
    p->lookup_rc = rc;
    p->addrs = res;
    app_resume(&p->resume, pending_resume, p);
    pending_free(p);
}

/* Defers the request until host is looked up; answers itself when the
 * lookup cannot start (503 when too many are running). */
static void register_after_lookup(struct api_req *r, struct resolver *rv, const char *host,
                                  const struct reg *in)
{
    struct pending_reg *p = xcalloc(1, sizeof *p);
    int rc;

    p->brand_id = xstrdup(in->brand_id);
    p->url = xstrdup(in->url);
    p->in = (struct reg){.brand_id = p->brand_id, .url = p->url, .events = in->events};
    rc = resolver_lookup(rv, host, scaled(WEBHOOKS_RESOLVE_TIMEOUT_S), pending_looked_up, p,
                         &p->job);
    if (rc == ERR_INVALID) {
        pending_free(p);
        api_error(r, 400, "Webhook host cannot be resolved");
        return;
    }
    if (rc) {
        pending_free(p);
        api_fail(r, "Failed to create webhook", rc == ERR_THROTTLED ? ERR_UNAVAILABLE : rc);
        return;
    }
    app_defer(r, &p->resume, pending_closed, p);
}

static void webhooks_create(struct api_req *r)
{
    struct webhook_create_req in;
    struct webhook_url u;
    struct resolver *rv;
    char err[200];
    bool lookup;
    cJSON *body;

    body = api_body(r);
    if (!body)
        return;
    if (webhook_decode_create(body, &in, err, sizeof err)) {
        /* A key of another brand hears 403, not why its body is wrong. */
        if (in.brand_id && !api_require_brand(r, in.brand_id))
            return;
        api_error(r, 400, err);
        return;
    }
    if (!api_require_brand(r, in.brand_id))
        return;
    if (webhook_url_precheck(in.url, api_allow_private_webhooks(r), &u, &lookup, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    const struct reg checked = {.brand_id = in.brand_id, .url = in.url, .events = in.events};
    if (!lookup) {
        register_checked(r, &checked);
        return;
    }
    /* A served request waits for the name off the loop; a handler test
     * (no loop, no connection) waits here, bounded. */
    rv = r->http && r->http->conn ? app_resolver(r->app) : NULL;
    if (rv) {
        register_after_lookup(r, rv, u.host, &checked);
        return;
    }
    if (webhook_url_check(in.url, false, scaled(WEBHOOKS_RESOLVE_TIMEOUT_S), err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    register_checked(r, &checked);
}

static void webhooks_list(struct api_req *r)
{
    const char *id = api_brand_param(r, "brandId", "brandId required");
    struct store_query q = {.sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_WEBHOOK, .forward = false};
    cJSON *items = NULL;
    const cJSON *it;
    struct jsonw *w;
    struct key pk;
    int rc;

    if (!id || !api_query_ok(r))
        return;
    if (!key_brand_pk(&pk, id)) {
        api_error(r, 400, "Invalid brandId");
        return;
    }
    q.pk = pk.s;
    rc = pager_collect(api_store(r), &q, WEBHOOKS_LIST_MAX, &items);
    if (rc) {
        api_fail(r, "Failed to list webhooks", rc);
        return;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "webhooks");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, items)
    {
        webhook_write_row_json(w, it);
    }
    jsonw_end(w);
    jsonw_end(w);
    cJSON_Delete(items);
}

static void webhooks_delete(struct api_req *r)
{
    struct webhook_delete_req in;
    struct key pk, sk;
    char err[160];
    cJSON *no = NULL, *body;
    struct jsonw *w;
    int rc;

    body = api_body(r);
    if (!body)
        return;
    if (webhook_decode_delete(body, &in, err, sizeof err)) {
        if (in.brand_id && !api_require_brand(r, in.brand_id))
            return;
        api_error(r, 400, err);
        return;
    }
    if (!api_require_brand(r, in.brand_id))
        return;
    if (!key_brand_pk(&pk, in.brand_id) || !key_webhook_sk(&sk, in.webhook_id)) {
        api_error(r, 400, "Invalid webhookId");
        return;
    }
    no = cJSON_CreateFalse();
    const struct store_action act = {.kind = STORE_ACT_SET, .attr = "active", .value = no};
    const struct store_cond exists = {.kind = STORE_COND_EXISTS};
    rc = store_update(api_store(r), pk.s, sk.s, &act, 1, &exists, NULL);
    if (rc == ERR_CONDITION) {
        api_error(r, 404, "Webhook not found");
        goto out;
    }
    if (!rc)
        rc = api_audit(r, "webhook.deleted", in.brand_id, NULL, in.webhook_id);
    if (rc) {
        api_fail(r, "Failed to delete webhook", rc);
        goto out;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kbool(w, "deleted", true);
    jsonw_end(w);
out:
    cJSON_Delete(no);
}

/* The brandId of the newest delivery of a webhook (admin fallback), in
 * out; ERR_NOTFOUND when it has none. */
static int brand_of_newest_delivery(struct api_req *r, const char *dpk, char *out, size_t n)
{
    struct store_query q = {.pk = dpk, .limit = 1, .forward = false};
    struct store_result res = {0};
    const cJSON *b;
    int rc = store_query(api_store(r), &q, &res);

    if (rc)
        return rc;
    b = res.count > 0
            ? cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(res.items, 0), "brandId")
            : NULL;
    rc = ERR_NOTFOUND;
    if (cJSON_IsString(b) && strlen(b->valuestring) < n) {
        strcpy(out, b->valuestring);
        rc = 0;
    }
    store_result_free(&res);
    return rc;
}

static void write_deliveries(struct api_req *r, const cJSON *items)
{
    struct jsonw *w = api_json(r, 200);
    const cJSON *it;
    int n = 0;

    jsonw_obj(w);
    jsonw_key(w, "deliveries");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, items)
    {
        webhook_delivery_write_json(w, it);
        n++;
    }
    jsonw_end(w);
    jsonw_kint(w, "count", n);
    jsonw_end(w);
}

static void webhooks_deliveries(struct api_req *r)
{
    const char *wid = api_query(r, "webhookId");
    const char *bid = api_query(r, "brandId");
    long limit = api_query_int(r, "limit", DELIVERIES_DEFAULT_LIMIT, 1, DELIVERIES_MAX_LIMIT);
    struct store_query q = {.forward = false};
    char brand[BRAND_ID_MAX + 1];
    cJSON *hook = NULL, *items = NULL;
    struct key pk, sk, dpk;
    int rc;

    if (!api_query_ok(r))
        return;
    if (!wid) {
        api_error(r, 400, "webhookId required");
        return;
    }
    if (!webhook_id_ok(wid) || !key_delivery_pk(&dpk, wid) || !key_webhook_sk(&sk, wid)) {
        api_error(r, 400, "Invalid webhookId");
        return;
    }
    if (bid) {
        snprintf(brand, sizeof brand, "%s", bid);
    } else if (r->who.kind == API_PRINCIPAL_BRAND) {
        snprintf(brand, sizeof brand, "%s", r->who.brand_id);
    } else {
        rc = brand_of_newest_delivery(r, dpk.s, brand, sizeof brand);
        if (rc == ERR_NOTFOUND) {
            write_deliveries(r, NULL);
            return;
        }
        if (rc) {
            api_fail(r, "Failed to list deliveries", rc);
            return;
        }
    }
    if (!api_require_brand(r, brand))
        return;
    if (!brand_id_ok(brand) || !key_brand_pk(&pk, brand)) {
        api_error(r, 400, "Invalid brandId");
        return;
    }
    rc = store_get(api_store(r), pk.s, sk.s, false, &hook);
    if (rc == ERR_NOTFOUND) {
        api_error(r, 404, "Webhook not found");
        return;
    }
    if (rc) {
        api_fail(r, "Failed to list deliveries", rc);
        return;
    }
    q.pk = dpk.s;
    rc = pager_collect(api_store(r), &q, (size_t)limit, &items);
    if (rc)
        api_fail(r, "Failed to list deliveries", rc);
    else
        write_deliveries(r, items);
    cJSON_Delete(items);
    cJSON_Delete(hook);
}

const struct api_route api_webhooks_routes[] = {
    {HTTP_M_POST, "/api/webhooks", API_BRAND, webhooks_create},
    {HTTP_M_GET, "/api/webhooks", API_BRAND, webhooks_list},
    {HTTP_M_DELETE, "/api/webhooks", API_BRAND, webhooks_delete},
    {HTTP_M_GET, "/api/webhooks/deliveries", API_BRAND, webhooks_deliveries},
    {0},
};
