/*
 * demo.c - the demo data set of API.md §13: the "Luxe Watches" brand,
 * its five products with pinned codes (and the suggested deterministic
 * ids, sku, category and createdAt), their provenance routes (§13.3),
 * and three scans of the watch (§13.5).
 *
 * Everything goes through the normal code: product_register() for each
 * product (hash, signature, code lookup, index entry, genesis event,
 * name guard) and chain_append() for the later events, so with the dev
 * secret the §13.4 cross-check values come out.  Seeding is idempotent
 * item by item: the brand items are conditional puts, a product that
 * exists is not registered again, a chain only receives the events past
 * its current head, and the scans are conditional puts with fixed keys
 * whose counters move in the same transaction (on DynamoDB the scan puts
 * only: the Streams detector counts them, store_counters_by_detector).
 */
#include "api/demo.h"

#include <stdio.h>
#include <string.h>

#include "core/brand.h"
#include "core/chain.h"
#include "core/crypto.h"
#include "core/keys.h"
#include "core/product.h"
#include "store/store.h"
#include "util/err.h"

#define DEMO_BRAND_ID   "5019622c-9860-4b83-a5c6-adb82ebd0412"
#define DEMO_BRAND_NAME "Luxe Watches"
#define DEMO_EVENTS_MAX 7

struct demo_event {
    const char *type, *actor, *location, *timestamp;
};

struct demo_product {
    const char *name, *code, *product_id, *category, *sku, *created_at;
    size_t nevents;
    struct demo_event events[DEMO_EVENTS_MAX]; /* [0] is the genesis */
};

static const struct demo_product products[] = {
    {"Royal Oak Chronograph 42mm",
     "wfPHybaFV3_a",
     "e084595c97320cfcc85309943f345760",
     "Watches",
     "LW-RO-42",
     "2026-06-20T15:00:00.000Z",
     7,
     {{"manufactured", DEMO_BRAND_NAME, "Le Brassus, Switzerland", "2026-06-20T15:00:00.000Z"},
      {"inspected", "COSC Certification Body", "Geneva, Switzerland", "2026-06-21T09:00:00.000Z"},
      {"shipped", "Swiss Post International", "Geneva, Switzerland", "2026-06-22T08:30:00.000Z"},
      {"received", "US Distribution Center (East)", "Newark, NJ", "2026-06-23T16:45:00.000Z"},
      {"inspected", "Quality Assurance Team", "Newark, NJ", "2026-06-24T10:15:00.000Z"},
      {"shipped", "FedEx Ground", "Newark, NJ", "2026-06-25T07:30:00.000Z"},
      {"received", "Fifth Avenue Boutique", "New York, NY", "2026-06-25T15:20:00.000Z"}}},
    {"Le Classique Tote - Noir",
     "pOszdB-1n6IC",
     "a203cf1574baa2a0e3465ad645057a34",
     "Handbags",
     "LW-LCT-NR",
     "2026-06-20T15:10:00.000Z",
     6,
     {{"manufactured", DEMO_BRAND_NAME, "Florence, Italy", "2026-06-20T15:10:00.000Z"},
      {"inspected", "Quality Control Team", "Florence, Italy", "2026-06-21T11:00:00.000Z"},
      {"shipped", "DHL Express", "Florence, Italy", "2026-06-22T09:00:00.000Z"},
      {"inspected", "US Customs & Border Protection", "New York, NY", "2026-06-23T14:00:00.000Z"},
      {"received", "US Distribution Center (East)", "Newark, NJ", "2026-06-24T10:00:00.000Z"},
      {"received", "Authorized Dealer", "Madison Avenue, New York, NY",
       "2026-06-25T12:00:00.000Z"}}},
    {"Oud Royale Eau de Parfum",
     "27dEHQymVRMl",
     "7f03eff9d91d3126ab499c0c5ced1eb4",
     "Fragrances",
     "LW-OUD-100",
     "2026-06-20T15:20:00.000Z",
     4,
     {{"manufactured", DEMO_BRAND_NAME, "Grasse, France", "2026-06-20T15:20:00.000Z"},
      {"shipped", "DHL Express", "Grasse, France", "2026-06-21T10:00:00.000Z"},
      {"received", "Middle East Distribution", "Dubai, UAE", "2026-06-23T08:00:00.000Z"},
      {"received", "Dubai Mall Flagship", "Dubai, UAE", "2026-06-24T13:00:00.000Z"}}},
    {"Nautilus Travel Time 40mm",
     "FshGQLRNsr4p",
     "992f9b2101e397ca04af4146331d3392",
     "Watches",
     "LW-NTT-40",
     "2026-06-20T15:30:00.000Z",
     6,
     {{"manufactured", DEMO_BRAND_NAME, "Le Locle, Switzerland", "2026-06-20T15:30:00.000Z"},
      {"inspected", "COSC Certification Body", "Geneva, Switzerland", "2026-06-21T09:30:00.000Z"},
      {"shipped", "FedEx International Priority", "Geneva, Switzerland",
       "2026-06-22T07:00:00.000Z"},
      {"received", "Asia-Pacific Distribution", "Singapore", "2026-06-23T18:00:00.000Z"},
      {"shipped", "DHL Express", "Singapore", "2026-06-24T06:00:00.000Z"},
      {"received", "Ginza Premium Store", "Tokyo, Japan", "2026-06-24T20:00:00.000Z"}}},
    {"Aviator Titanium Polarized",
     "IebJZgMHdD-h",
     "fc7dc14042f82f28cbb7691a402fdcae",
     "Eyewear",
     "LW-AVT-TI",
     "2026-06-20T15:40:00.000Z",
     4,
     {{"manufactured", DEMO_BRAND_NAME, "Belluno, Italy", "2026-06-20T15:40:00.000Z"},
      {"shipped", "UPS Worldwide", "Belluno, Italy", "2026-06-21T12:00:00.000Z"},
      {"received", "US Distribution Center (West)", "Los Angeles, CA", "2026-06-23T09:00:00.000Z"},
      {"received", "Rodeo Drive Boutique", "Beverly Hills, CA", "2026-06-24T11:00:00.000Z"}}},
};

/* §13.5: a few scans of the watch (fixed ids, so seeding them is idempotent). */
static const struct {
    const char *timestamp, *scan_id, *country, *city;
} demo_scans[] = {
    {"2026-06-26T14:00:00.000Z", "de000001", "US", "New York"},
    {"2026-06-27T09:15:00.000Z", "de000002", "CH", "Geneva"},
    {"2026-06-28T18:30:00.000Z", "de000003", "US", "New York"},
};

/* A put that must only create: an existing item is left alone. */
static int put_new(struct store *s, cJSON *item)
{
    struct store_cond c = {.kind = STORE_COND_NOT_EXISTS};
    int rc;

    if (!item)
        return ERR_INVALID;
    rc = store_put(s, item, &c);
    cJSON_Delete(item);
    return rc == ERR_CONDITION ? 0 : rc;
}

static int seed_brand(struct store *s)
{
    struct brand_fields f = {.id = DEMO_BRAND_ID,
                             .name = DEMO_BRAND_NAME,
                             .domain = "luxewatches.com",
                             .industry = "fashion",
                             .plan = "free",
                             .created_at = "2026-06-20T14:00:00.000Z"};
    cJSON *stats = brand_stats_item_new(DEMO_BRAND_ID);
    int rc;

    if (stats)
        cJSON_ReplaceItemInObjectCaseSensitive(
            stats, "productCount",
            cJSON_CreateNumber((double)(sizeof products / sizeof products[0])));
    rc = put_new(s, brand_profile_item_new(&f));
    if (!rc)
        rc = put_new(s, stats);
    else
        cJSON_Delete(stats);
    if (!rc)
        rc = put_new(s, brand_index_item_new(&f));
    return rc;
}

static int seed_product(struct store *s, const struct demo_product *p, const char *secret)
{
    struct key pk;
    struct chain_head head;
    struct product_reg_out out;
    cJSON *item = NULL;
    int rc;

    if (!key_product_pk(&pk, p->product_id))
        return ERR_INVALID;
    rc = store_get(s, pk.s, KEY_SK_META, true, &item);
    cJSON_Delete(item);
    if (rc == ERR_NOTFOUND) {
        struct product_reg reg = {.brand_id = DEMO_BRAND_ID,
                                  .brand_name = DEMO_BRAND_NAME,
                                  .name = p->name,
                                  .sku = p->sku,
                                  .category = p->category,
                                  .location = p->events[0].location,
                                  .created_at = p->created_at,
                                  .product_id = p->product_id,
                                  .code = p->code,
                                  .secret = secret};
        rc = product_register(s, &reg, &out);
    }
    if (rc)
        return rc;

    rc = chain_head_read(s, p->product_id, &head);
    for (size_t i = head.seq; !rc && i < p->nevents; i++) {
        struct event_fields f = {.product_id = p->product_id,
                                 .type = p->events[i].type,
                                 .actor = p->events[i].actor,
                                 .timestamp = p->events[i].timestamp,
                                 .location = p->events[i].location};
        rc = chain_append(s, &f, NULL, 0, NULL, NULL);
    }
    return rc;
}

static int seed_scans(struct store *s)
{
    const struct demo_product *p = &products[0];
    struct key pk, bpk, sk;
    int rc = 0;

    if (!key_product_pk(&pk, p->product_id) || !key_brand_pk(&bpk, DEMO_BRAND_ID))
        return ERR_INVALID;
    for (size_t i = 0; !rc && i < sizeof demo_scans / sizeof demo_scans[0]; i++) {
        if (!key_scan_sk(&sk, demo_scans[i].timestamp, demo_scans[i].scan_id))
            return ERR_INVALID;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "PK", pk.s);
        cJSON_AddStringToObject(o, "SK", sk.s);
        cJSON_AddStringToObject(o, "productId", p->product_id);
        cJSON_AddStringToObject(o, "timestamp", demo_scans[i].timestamp);
        cJSON_AddStringToObject(o, "ip", "unknown");
        cJSON_AddStringToObject(o, "country", demo_scans[i].country);
        cJSON_AddStringToObject(o, "city", demo_scans[i].city);
        cJSON_AddStringToObject(o, "userAgent", "unknown");
        cJSON_AddStringToObject(o, "result", "authentic");
        cJSON_AddStringToObject(o, "scanId", demo_scans[i].scan_id);
        cJSON_AddStringToObject(o, "brandId", DEMO_BRAND_ID);
        struct store_action add = {.kind = STORE_ACT_ADD, .attr = "scanCount", .delta = 1};
        struct store_write w[3] = {
            {.kind = STORE_W_PUT, .item = o, .cond = {.kind = STORE_COND_NOT_EXISTS}},
            {.kind = STORE_W_UPDATE,
             .pk = pk.s,
             .sk = KEY_SK_META,
             .acts = &add,
             .nacts = 1,
             .cond = {.kind = STORE_COND_EXISTS}},
            {.kind = STORE_W_UPDATE, .pk = bpk.s, .sk = KEY_SK_STATS, .acts = &add, .nacts = 1},
        };
        /* Where the detector folds the scan counters, the put alone. */
        rc = store_transact(s, w, store_counters_by_detector(s) ? 1 : 3, NULL);
        cJSON_Delete(o);
        if (rc == ERR_CONDITION)
            rc = 0; /* already seeded */
    }
    return rc;
}

int demo_seed(struct store *s, const char *secret, char *err, size_t errlen)
{
    int rc;

    if (!s || !secret) {
        snprintf(err, errlen, "demo: no store or signing secret");
        return ERR_INVALID;
    }
    rc = seed_brand(s);
    if (rc) {
        snprintf(err, errlen, "demo: brand: %s", err_str(rc));
        return rc;
    }
    for (size_t i = 0; i < sizeof products / sizeof products[0]; i++) {
        rc = seed_product(s, &products[i], secret);
        if (rc) {
            snprintf(err, errlen, "demo: product %s: %s", products[i].code, err_str(rc));
            return rc;
        }
    }
    rc = seed_scans(s);
    if (rc) {
        snprintf(err, errlen, "demo: scans: %s", err_str(rc));
        return rc;
    }
    return 0;
}
