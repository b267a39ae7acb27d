/*
 * api_integrations.c - partner integrations (API.md §9.33-§9.37, [D02]
 * [D23] [D39] [D53]).
 *
 *   POST /api/integrations/configure   BRAND   new integration + ingest key (shown once)
 *   GET  /api/integrations/configure   BRAND   the brand's integrations, keys masked
 *   GET  /api/integrations/status      BRAND   overview + event sources
 *   GET  /api/integrations/journeys    PUBLIC  the four journey templates
 *   POST /api/integrations/simulate    BRAND   a product with a whole journey
 *
 * sourceBreakdown counts the brand's events by data.source (missing ->
 * "manual"; a source outside the four known ones is not counted).  It
 * reads the brand's products through GSI1 and each product's events,
 * bounded by STATUS_PRODUCTS_MAX products and STATUS_EVENTS_MAX events in
 * all, so one status call costs at most a few hundred queries.
 */
#include "api/api_integrations.h"

#include <stdio.h>
#include <string.h>

#include "api/api_brands.h"
#include "api/ingest_decode.h"
#include "api/pager.h"
#include "core/brand.h"
#include "core/ids.h"
#include "core/integration.h"
#include "core/journeys_data.h"
#include "core/keys.h"
#include "core/product.h"
#include "core/simulate.h"
#include "store/store.h"
#include "util/err.h"

#define INTEGRATIONS_LIST_MAX 200

/* Reads a brand profile: 0 with *out, or answers (404/500) and returns
 * non-zero. */
static int load_brand(struct api_req *r, const char *brand_id, const char *fail_msg, cJSON **out)
{
    struct key pk;
    int rc;

    *out = NULL;
    if (!key_brand_pk(&pk, brand_id)) {
        api_error(r, 404, "Brand not found");
        return ERR_NOTFOUND;
    }
    rc = store_get(api_store(r), pk.s, KEY_SK_PROFILE, true, out);
    if (rc == ERR_NOTFOUND)
        api_error(r, 404, "Brand not found");
    else if (rc)
        api_fail(r, fail_msg, rc);
    return rc;
}

/* The brand's integration items, newest id order descending by SK. */
static int list_integrations(struct api_req *r, const char *brand_id, cJSON **out)
{
    struct key pk;
    struct store_query q = {
        .sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_INTEGRATION, .forward = false, .consistent = true};

    if (!key_brand_pk(&pk, brand_id))
        return ERR_INVALID;
    q.pk = pk.s;
    return pager_collect(api_store(r), &q, INTEGRATIONS_LIST_MAX, out);
}

/* ---- POST /api/integrations/configure ---- */

static void h_configure(struct api_req *r)
{
    static const char *fail_msg = "Failed to configure integration";
    struct integ_configure_req in;
    char id[37], key[INTEGRATION_KEY_LEN + 1], hash[CRYPTO_HEX_LEN + 1];
    char prefix[INTEGRATION_KEY_PREFIX_LEN + 1], err[200];
    cJSON *body, *brand = NULL, *item = NULL, *key_item = NULL;
    struct store_write w[2];
    struct jsonw *jw;
    const char *url;
    int rc;

    body = api_body(r);
    if (!body)
        return;
    if (integ_decode_configure(body, &in, err, sizeof err)) {
        if (in.brand_id && !api_require_brand(r, in.brand_id))
            return;
        api_error(r, 400, err);
        return;
    }
    if (!api_require_brand(r, in.brand_id))
        return;
    if (load_brand(r, in.brand_id, fail_msg, &brand))
        return;
    ids_uuid4(id);
    integration_key_new(key, hash, prefix);
    struct integration_fields f = {.id = id,
                                   .brand_id = in.brand_id,
                                   .type = in.type,
                                   .key_hash = hash,
                                   .key_prefix = prefix,
                                   .config = in.config,
                                   .created_at = r->now_iso};
    item = integration_item_new(&f);
    key_item = integration_key_item_new(&f);
    if (!item || !key_item) {
        api_fail(r, fail_msg, ERR_INVALID);
        goto out;
    }
    w[0] = (struct store_write){
        .kind = STORE_W_PUT, .item = item, .cond = {.kind = STORE_COND_NOT_EXISTS}};
    w[1] = (struct store_write){
        .kind = STORE_W_PUT, .item = key_item, .cond = {.kind = STORE_COND_NOT_EXISTS}};
    rc = store_transact(api_store(r), w, 2, NULL);
    if (!rc)
        rc = api_audit(r, "integration.configured", in.brand_id, NULL,
                       api_printf(r, "%s %s", in.type, id));
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    url = api_printf(r, "%s%s", api_base_url(r), integration_endpoint(in.type));
    jw = api_json(r, 200);
    jsonw_obj(jw);
    jsonw_kstr(jw, "id", id);
    jsonw_kstr(jw, "type", in.type);
    jsonw_kstr(jw, "ingestKey", key);
    jsonw_kbool(jw, "active", true);
    jsonw_kstr(jw, "webhookUrl", url);
    jsonw_key(jw, "instructions");
    integration_write_instructions(jw, in.type, url);
    jsonw_end(jw);
out:
    memset(key, 0, sizeof key);
    cJSON_Delete(item);
    cJSON_Delete(key_item);
    cJSON_Delete(brand);
}

/* ---- GET /api/integrations/configure ---- */

static void h_list(struct api_req *r)
{
    const char *brand_id = api_brand_param(r, "brandId", "brandId required");
    cJSON *items = NULL;
    const cJSON *it;
    struct jsonw *w;
    int rc;

    if (!brand_id)
        return;
    rc = list_integrations(r, brand_id, &items);
    if (rc) {
        api_fail(r, "Failed to list integrations", rc);
        return;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "integrations");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, items)
    {
        integration_write_row_json(w, it);
    }
    jsonw_end(w);
    jsonw_kint(w, "count", cJSON_GetArraySize(items));
    jsonw_end(w);
    cJSON_Delete(items);
}

/* ---- GET /api/integrations/status ---- */

static const char *const sources[] = {"manual", "shipping_webhook", "pos_webhook",
                                      "warehouse_webhook"};
#define NSOURCES (sizeof sources / sizeof sources[0])

struct breakdown {
    struct api_req *r;
    double count[NSOURCES];
    size_t events; /* events read so far (bound) */
    int err;
};

static int event_cb(void *arg, const cJSON *ev)
{
    struct breakdown *b = arg;
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(ev, "data");
    const char *src = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, "source"));

    if (!src)
        src = "manual";
    for (size_t i = 0; i < NSOURCES; i++)
        if (strcmp(src, sources[i]) == 0)
            b->count[i]++;
    return ++b->events >= STATUS_EVENTS_MAX ? 1 : 0;
}

static int product_cb(void *arg, const cJSON *product)
{
    struct breakdown *b = arg;
    const char *pid = product_str(product, "productId");
    struct key pk;

    if (b->events >= STATUS_EVENTS_MAX)
        return 1;
    if (!pid || !key_product_pk(&pk, pid))
        return 0;
    struct store_query q = {
        .pk = pk.s, .sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_EVENT, .forward = true};
    return pager_each(api_store(b->r), &q, STATUS_EVENTS_MAX - b->events, event_cb, b, NULL);
}

static int count_sources(struct api_req *r, const char *brand_id, struct breakdown *b)
{
    struct key pk;
    struct store_query q = {.index = STORE_INDEX_GSI1,
                            .sk_op = STORE_SK_BEGINS,
                            .sk = KEY_PFX_PRODUCT,
                            .forward = false};

    memset(b, 0, sizeof *b);
    b->r = r;
    if (!key_brand_pk(&pk, brand_id))
        return ERR_INVALID;
    q.pk = pk.s;
    return pager_each(api_store(r), &q, STATUS_PRODUCTS_MAX, product_cb, b, NULL);
}

static int read_counters(struct api_req *r, const char *brand_id, struct brand_counters *c)
{
    struct key pk;
    cJSON *stats = NULL;
    int rc;

    if (!key_brand_pk(&pk, brand_id))
        return ERR_INVALID;
    rc = store_get(api_store(r), pk.s, KEY_SK_STATS, true, &stats);
    if (rc && rc != ERR_NOTFOUND)
        return rc;
    brand_counters_from_stats(stats, c);
    cJSON_Delete(stats);
    c->product_count += api_counter_pending(r, pk.s, KEY_SK_STATS, "productCount");
    c->scan_count += api_counter_pending(r, pk.s, KEY_SK_STATS, "scanCount");
    c->threat_count += api_counter_pending(r, pk.s, KEY_SK_STATS, "threatCount");
    return 0;
}

static void h_status(struct api_req *r)
{
    static const char *fail_msg = "Failed to get status";
    const char *brand_id = api_brand_param(r, "brandId", "brandId required");
    cJSON *brand = NULL, *items = NULL;
    struct brand_counters c;
    struct breakdown b;
    const cJSON *it;
    struct jsonw *w;
    int rc, connected = 0;

    if (!brand_id)
        return;
    if (load_brand(r, brand_id, fail_msg, &brand))
        return;
    rc = list_integrations(r, brand_id, &items);
    if (!rc)
        rc = read_counters(r, brand_id, &c);
    if (!rc)
        rc = count_sources(r, brand_id, &b);
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "brand");
    jsonw_obj(w);
    jsonw_kstr(w, "id", brand_id);
    jsonw_kstr(w, "name", product_str(brand, "name"));
    jsonw_end(w);
    jsonw_key(w, "integrations");
    jsonw_obj(w);
    jsonw_key(w, "configured");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, items)
    {
        integration_write_status_row_json(w, it, api_base_url(r));
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "active")))
            connected++;
    }
    jsonw_end(w);
    jsonw_key(w, "available");
    jsonw_arr(w);
    for (size_t i = 0; i < INTEGRATION_TYPES_N; i++) {
        const struct integration_type *t = &integration_types[i];
        bool on = false;
        cJSON_ArrayForEach(it, items)
        {
            const char *type = product_str(it, "type");
            if (type && strcmp(type, t->type) == 0 &&
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "active")))
                on = true;
        }
        jsonw_obj(w);
        jsonw_kstr(w, "type", t->type);
        jsonw_kstr(w, "name", t->name);
        jsonw_kstr(w, "category", t->category);
        jsonw_kbool(w, "connected", on);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_kint(w, "connectedCount", connected);
    jsonw_kint(w, "totalAvailable", INTEGRATION_TYPES_N);
    jsonw_end(w);
    jsonw_key(w, "stats");
    brand_write_counters_json(w, &c);
    jsonw_key(w, "sourceBreakdown");
    jsonw_obj(w);
    for (size_t i = 0; i < NSOURCES; i++)
        jsonw_knum(w, sources[i], b.count[i]);
    jsonw_end(w);
    jsonw_end(w);
out:
    cJSON_Delete(items);
    cJSON_Delete(brand);
}

/* ---- GET /api/integrations/journeys ---- */

static void write_str_list(struct jsonw *w, const char *k, const char *const *v, size_t n)
{
    jsonw_key(w, k);
    jsonw_arr(w);
    for (size_t i = 0; i < n; i++)
        jsonw_str(w, v[i]);
    jsonw_end(w);
}

static void h_journeys(struct api_req *r)
{
    struct jsonw *w = api_json(r, 200);

    jsonw_obj(w);
    jsonw_key(w, "journeys");
    jsonw_arr(w);
    for (size_t i = 0; i < JOURNEYS_N; i++) {
        const struct journey *j = &journeys[i];
        jsonw_obj(w);
        jsonw_kstr(w, "id", j->id);
        jsonw_kstr(w, "name", j->name);
        jsonw_kstr(w, "category", j->category);
        jsonw_kint(w, "steps", j->steps);
        jsonw_kstr(w, "route", j->route);
        jsonw_kstr(w, "description", j->description);
        write_str_list(w, "carriers", j->carriers, j->ncarriers);
        write_str_list(w, "platforms", j->platforms, j->nplatforms);
        jsonw_key(w, "stages");
        jsonw_arr(w);
        for (size_t s = 0; s < j->nstages; s++) {
            jsonw_obj(w);
            jsonw_kstr(w, "type", j->stages[s].type);
            jsonw_kstr(w, "actor", j->stages[s].actor);
            jsonw_kstr(w, "location", j->stages[s].location);
            jsonw_end(w);
        }
        jsonw_end(w);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_kint(w, "count", JOURNEYS_N);
    jsonw_end(w);
}

/* ---- POST /api/integrations/simulate ---- */

/* The "source" label of a simulated event in the response. */
static const char *source_label(struct api_req *r, const struct sim_step *st)
{
    if (st->carrier)
        return api_printf(r, "%s webhook", st->carrier);
    if (st->platform)
        return api_printf(r, "%s webhook", st->platform);
    return "WMS webhook";
}

static void h_simulate(struct api_req *r)
{
    static const char *fail_msg = "Simulation failed";
    struct integ_simulate_req *in = api_alloc(r, sizeof *in);
    struct sim_output *out = api_alloc(r, sizeof *out);
    cJSON *body, *brand = NULL;
    struct jsonw *w;
    struct key bpk;
    char err[200];
    int rc;

    body = api_body(r);
    if (!body)
        return;
    if (integ_decode_simulate(body, in, err, sizeof err)) {
        if (in->brand_id && !api_require_brand(r, in->brand_id))
            return;
        api_error(r, 400, err);
        return;
    }
    if (!api_require_brand(r, in->brand_id))
        return;
    if (load_brand(r, in->brand_id, fail_msg, &brand))
        return;
    if (integ_simulate_steps(body, in, err, sizeof err)) {
        api_error(r, 400, err);
        goto out;
    }
    /* Tracking numbers and order ids: fresh for every request ([D39]). */
    for (size_t i = 0; i < in->n; i++) {
        if (in->tracking_prefix[i]) {
            char *t = api_alloc(r, SIM_REF_MAX);
            simulate_tracking_number(in->tracking_prefix[i], t);
            in->steps[i].tracking = t;
        }
        if (in->order_prefix[i]) {
            char *o = api_alloc(r, SIM_REF_MAX);
            simulate_order_id(in->order_prefix[i], r->now_ms, o);
            in->steps[i].order_id = o;
        }
    }
    struct sim_input si = {.brand_id = in->brand_id,
                           .brand_name =
                               product_str(brand, "name") ? product_str(brand, "name") : "",
                           .name = in->product_name,
                           .sku = in->sku,
                           .category = in->category,
                           .steps = in->steps,
                           .n = in->n,
                           .now_ms = r->now_ms,
                           .secret = api_signing_secret(r)};
    rc = simulate_write(api_store(r), &si, out);
    if (rc == ERR_INVALID || rc == ERR_TOOBIG) {
        api_error(r, 400, "Invalid simulation data");
        goto out;
    }
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    if (key_brand_pk(&bpk, in->brand_id))
        api_counter_add(r, bpk.s, KEY_SK_STATS, "productCount", 1);
    (void)api_audit(r, "product.simulated", in->brand_id, out->product_id,
                    api_printf(r, "%s: %s", in->journey, in->product_name));

    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kbool(w, "success", true);
    jsonw_key(w, "product");
    jsonw_obj(w);
    jsonw_kstr(w, "productId", out->product_id);
    jsonw_kstr(w, "name", in->product_name);
    jsonw_kstr(w, "verificationCode", out->code);
    jsonw_kstr(w, "hash", api_printf(r, "%.16s...", out->hash));
    jsonw_end(w);
    jsonw_key(w, "journey");
    jsonw_obj(w);
    jsonw_kstr(w, "type", in->journey);
    jsonw_kint(w, "totalSteps", (int64_t)in->n);
    jsonw_key(w, "events");
    jsonw_arr(w);
    for (size_t i = 0; i < in->n; i++) {
        const struct sim_step *st = &in->steps[i];
        jsonw_obj(w);
        jsonw_kint(w, "step", (int64_t)i + 1);
        jsonw_kstr(w, "type", st->type);
        jsonw_kstr(w, "actor", st->actor);
        jsonw_kstr(w, "location", st->location);
        jsonw_kstr(w, "hash", api_printf(r, "%.16s...", out->event_hash[i]));
        jsonw_kstr(w, "source", source_label(r, st));
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_end(w);
    jsonw_key(w, "urls");
    jsonw_obj(w);
    jsonw_kstr(w, "verify", api_printf(r, "%s/verify/%s", api_base_url(r), out->code));
    jsonw_kstr(w, "qr", api_printf(r, "%s/qr/%s", api_base_url(r), out->code));
    jsonw_kstr(w, "product", api_printf(r, "%s/product/%s", api_base_url(r), out->product_id));
    jsonw_end(w);
    jsonw_end(w);
out:
    cJSON_Delete(brand);
}

const struct api_route api_integrations_routes[] = {
    {HTTP_M_POST, "/api/integrations/configure", API_BRAND, h_configure},
    {HTTP_M_GET, "/api/integrations/configure", API_BRAND, h_list},
    {HTTP_M_GET, "/api/integrations/status", API_BRAND, h_status},
    {HTTP_M_GET, "/api/integrations/journeys", API_PUBLIC, h_journeys},
    {HTTP_M_POST, "/api/integrations/simulate", API_BRAND, h_simulate},
    {0},
};
