/*
 * webhook_fanout.c - change records to webhook deliveries
 * (webhook_fanout.h).
 *
 * The caches are small fixed arrays reset when full: a batch touches few
 * brands, and a miss costs one read.
 */
#include "detect/webhook_fanout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alert.h"
#include "core/brand.h"
#include "core/crypto.h"
#include "core/ids.h"
#include "core/jsonw.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/xalloc.h"

#define BRAND_CACHE   64
#define PRODUCT_CACHE 256
/* Pages of a brand's webhook partition read at most: deleted webhooks
 * stay as inactive items, and a brand that piled up thousands of them
 * must not make one lookup unbounded. */
#define HOOK_PAGES_MAX 64

struct hook_ref {
    char id[WEBHOOK_ID_MAX + 1];
    unsigned events;
    int64_t created_ms;
};

struct brand_hooks {
    char brand[BRAND_ID_MAX + 1];
    size_t n;
    struct hook_ref hooks[WEBHOOK_MAX_PER_BRAND];
};

struct product_brand {
    char product[WEBHOOK_ID_MAX + 1];
    char brand[BRAND_ID_MAX + 1]; /* "" when unknown */
};

struct wf_cache {
    struct brand_hooks brands[BRAND_CACHE];
    size_t nbrands;
    struct product_brand products[PRODUCT_CACHE];
    size_t nproducts;
    struct buf body; /* payload scratch */
};

struct wf_cache *wf_cache_new(void)
{
    struct wf_cache *c = xcalloc(1, sizeof *c);
    c->body = (struct buf)BUF_INIT(WF_PAYLOAD_MAX);
    return c;
}

void wf_cache_free(struct wf_cache *c)
{
    if (!c)
        return;
    buf_free(&c->body);
    free(c);
}

void wf_cache_clear(struct wf_cache *c)
{
    c->nbrands = 0;
    c->nproducts = 0;
}

void wf_cache_forget_hooks(struct wf_cache *c)
{
    c->nbrands = 0;
}

void wf_cache_forget_products(struct wf_cache *c)
{
    c->nproducts = 0;
}

static const char *str_attr(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void copy_str(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

/* ---- lookups ------------------------------------------------------------ */

/* Adds the active webhooks of one page to b; 1 when b is full. */
static int hooks_page(struct brand_hooks *b, const cJSON *items)
{
    const cJSON *item;

    cJSON_ArrayForEach(item, items)
    {
        const char *id = str_attr(item, "id"), *created = str_attr(item, "createdAt");
        int64_t ms = 0;

        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "active")) || !webhook_id_ok(id))
            continue;
        if (b->n >= WEBHOOK_MAX_PER_BRAND)
            return 1;
        if (!created || time_parse_iso(created, &ms))
            ms = 0;
        copy_str(b->hooks[b->n].id, sizeof b->hooks[b->n].id, id);
        b->hooks[b->n].events = webhook_events_of(item);
        b->hooks[b->n].created_ms = ms;
        b->n++;
    }
    return 0;
}

static int brand_hooks(struct store *s, struct wf_cache *c, const char *brand,
                       const struct brand_hooks **out)
{
    struct store_query q = {
        .sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_WEBHOOK, .forward = true, .consistent = true};
    struct brand_hooks *b;
    struct key pk;
    char *cursor = NULL;
    int rc = 0;

    *out = NULL;
    for (size_t i = 0; i < c->nbrands; i++)
        if (!strcmp(c->brands[i].brand, brand)) {
            *out = &c->brands[i];
            return 0;
        }
    if (!brand_id_ok(brand) || !key_brand_pk(&pk, brand))
        return 0;
    if (c->nbrands >= BRAND_CACHE)
        c->nbrands = 0;
    b = &c->brands[c->nbrands];
    memset(b, 0, sizeof *b);
    copy_str(b->brand, sizeof b->brand, brand);
    q.pk = pk.s;
    for (int page = 0; page < HOOK_PAGES_MAX; page++) {
        struct store_result res = {0};
        q.start = cursor;
        rc = store_query(s, &q, &res);
        if (rc)
            break;
        int full = hooks_page(b, res.items);
        free(cursor);
        cursor = res.next && !full ? xstrdup(res.next) : NULL;
        store_result_free(&res);
        if (!cursor)
            break;
    }
    free(cursor);
    if (rc)
        return rc;
    c->nbrands++;
    *out = b;
    return 0;
}

/* The brand of a product (via PRODUCT#<id>/META); "" when unknown. */
static int product_brand(struct store *s, struct wf_cache *c, const char *product, const char **out)
{
    struct product_brand *p;
    cJSON *meta = NULL;
    struct key pk;
    int rc;

    *out = "";
    for (size_t i = 0; i < c->nproducts; i++)
        if (!strcmp(c->products[i].product, product)) {
            *out = c->products[i].brand;
            return 0;
        }
    if (strlen(product) > WEBHOOK_ID_MAX || !key_product_pk(&pk, product))
        return 0;
    rc = store_get(s, pk.s, KEY_SK_META, false, &meta);
    if (rc && rc != ERR_NOTFOUND)
        return rc;
    if (c->nproducts >= PRODUCT_CACHE)
        c->nproducts = 0;
    p = &c->products[c->nproducts++];
    copy_str(p->product, sizeof p->product, product);
    copy_str(p->brand, sizeof p->brand, meta ? str_attr(meta, "brandId") : NULL);
    cJSON_Delete(meta);
    *out = p->brand;
    return 0;
}

/* ---- records -------------------------------------------------------------- */

/* Writes the payload of one event into b: {"event","brandId","timestamp",
 * "data"}.  ERR_TOOBIG past the cap. */
static int build_payload(struct buf *b, const char *event, const char *brand, const char *ts,
                         const struct stream_record *r, bool scan)
{
    struct jsonw w;
    const cJSON *img = r->image;

    buf_reset(b);
    jsonw_init(&w, b);
    jsonw_obj(&w);
    jsonw_kstr(&w, "event", event);
    jsonw_kstr(&w, "brandId", brand);
    jsonw_kstr(&w, "timestamp", ts);
    jsonw_key(&w, "data");
    if (scan) {
        /* never the raw IP or user agent (D04) */
        jsonw_obj(&w);
        jsonw_kjson(&w, "productId", cJSON_GetObjectItemCaseSensitive(img, "productId"));
        jsonw_kjson(&w, "timestamp", cJSON_GetObjectItemCaseSensitive(img, "timestamp"));
        jsonw_kjson(&w, "country", cJSON_GetObjectItemCaseSensitive(img, "country"));
        jsonw_kjson(&w, "city", cJSON_GetObjectItemCaseSensitive(img, "city"));
        jsonw_kjson(&w, "result", cJSON_GetObjectItemCaseSensitive(img, "result"));
        jsonw_end(&w);
    } else {
        alert_write_json(&w, img);
    }
    jsonw_end(&w);
    return jsonw_error(&w);
}

/* What one record means for webhooks. */
struct rec_events {
    unsigned bits; /* WEBHOOK_EV_* */
    const char *brand;
    char ts[ISO_LEN + 1];
    bool scan;
};

static int classify_record(struct store *s, struct wf_cache *c, const struct stream_record *r,
                           struct rec_events *out)
{
    const cJSON *img = r->image;
    const char *t;
    int rc;

    memset(out, 0, sizeof *out);
    if (!img || r->kind == STORE_REMOVE || !r->pk || !r->sk)
        return 0;
    if (r->kind == STORE_INSERT && key_after(r->pk, KEY_PFX_PRODUCT) &&
        key_after(r->sk, KEY_PFX_SCAN)) {
        const char *pid = str_attr(img, "productId");
        if (!pid)
            pid = key_after(r->pk, KEY_PFX_PRODUCT);
        /* verify writes the product's brand into the scan; older scans
         * (the original's) have none: ask the product */
        out->brand = str_attr(img, "brandId");
        if (!out->brand || !*out->brand) {
            rc = product_brand(s, c, pid, &out->brand);
            if (rc)
                return rc;
        }
        out->bits = WEBHOOK_EV_SCAN;
        out->scan = true;
        t = str_attr(img, "timestamp");
    } else if (key_after(r->pk, KEY_PFX_THREAT) && key_after(r->sk, KEY_PFX_ALERT)) {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(img, "resolved")))
            return 0; /* resolving is not a new threat */
        const char *type = str_attr(img, "type");
        out->brand = str_attr(img, "brandId");
        out->bits = WEBHOOK_EV_THREAT;
        if (r->kind == STORE_INSERT && type && !strcmp(type, "product_recall"))
            out->bits |= WEBHOOK_EV_RECALL;
        t = r->kind == STORE_MODIFY && str_attr(img, "lastSeen") ? str_attr(img, "lastSeen")
                                                                 : str_attr(img, "timestamp");
    } else {
        return 0;
    }
    if (!out->brand || !*out->brand) {
        out->bits = 0;
        return 0;
    }
    if (t && time_is_iso(t))
        copy_str(out->ts, sizeof out->ts, t);
    else
        time_iso(r->ts_ms, out->ts);
    return 0;
}

void webhook_fanout_id(const char *pos, const char *webhook_id, const char *event,
                       char out[WF_ID_LEN + 1])
{
    struct buf m = BUF_INIT(0);
    unsigned char h[32];
    char hex[33];

    /* '\n' cannot occur in any of the three, so the message is unambiguous */
    buf_puts(&m, pos);
    buf_putc(&m, '\n');
    buf_puts(&m, webhook_id);
    buf_putc(&m, '\n');
    buf_puts(&m, event);
    crypto_sha256(m.data, m.len, h);
    buf_free(&m);
    h[6] = (unsigned char)((h[6] & 0x0f) | 0x80); /* version 8: custom */
    h[8] = (unsigned char)((h[8] & 0x3f) | 0x80); /* RFC 9562 variant */
    ids_hex(h, 16, hex);
    snprintf(out, WF_ID_LEN + 1, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
             hex + 20);
}

/* Image times later than a coarse stream time are believed up to this
 * far (ms): the coarsest stream time seen (DynamoDB Local's, whole
 * minutes).  It also bounds how far in the future a hostile image time
 * can push a delivery's createdAt (its first nextAttemptAt). */
#define IMAGE_LEAD_MAX_MS 60000

/*
 * When the record was written, for the "webhook existed" test and, with
 * a stream position, the delivery's createdAt.  SQLite stamps records in
 * milliseconds: that time is used as is.  DynamoDB Streams'
 * ApproximateCreationDateTime is rounded down (to the second; DynamoDB
 * Local to the minute), while the image's own time (a scan's timestamp,
 * an alert's timestamp or lastSeen) is set by its writer just before the
 * write, in milliseconds: the later of the two is the better estimate,
 * and both come from the record, so a replay computes the same.  A
 * record without a stream time falls back to its image time.
 */
static int64_t record_ms(const struct stream_record *r, const struct rec_events *re, bool coarse)
{
    int64_t img = 0;
    if (time_parse_iso(re->ts, &img))
        img = 0;
    if (r->ts_ms <= 0)
        return img;
    if (!coarse)
        return r->ts_ms;
    if (img > r->ts_ms + IMAGE_LEAD_MAX_MS)
        img = r->ts_ms + IMAGE_LEAD_MAX_MS;
    return img > r->ts_ms ? img : r->ts_ms;
}

/* Whether a webhook created at created_ms gets a record written at rec_ms. */
static bool hook_saw(int64_t rec_ms, int64_t created_ms, bool coarse)
{
    if (coarse) {
        /* rec_ms may still be the start of the record's second (no image
         * time): a webhook registered in that second gets the record */
        int64_t cs = created_ms - ((created_ms % 1000) + 1000) % 1000;
        return rec_ms >= cs;
    }
    return rec_ms >= created_ms;
}

int webhook_fanout_record(struct store *s, struct wf_cache *c, const struct stream_record *r,
                          const struct wf_opts *o, wf_emit_fn emit, void *arg, uint64_t *skipped)
{
    struct rec_events re;
    const struct brand_hooks *bh = NULL;
    char created_iso[ISO_LEN + 1];
    int64_t rec_ms;
    int rc;

    rc = classify_record(s, c, r, &re);
    if (rc || !re.bits)
        return rc;
    rc = brand_hooks(s, c, re.brand, &bh);
    if (rc || !bh || !bh->n)
        return rc;
    rec_ms = record_ms(r, &re, o->coarse_time);
    time_iso(o->pos ? rec_ms : o->now_ms, created_iso);
    for (unsigned bit = 1; bit <= WEBHOOK_EV_RECALL; bit <<= 1) {
        if (!(re.bits & bit))
            continue;
        const char *event = webhook_event_name(bit);
        bool built = false;
        for (size_t i = 0; i < bh->n; i++) {
            const struct hook_ref *h = &bh->hooks[i];
            char id[WF_ID_LEN + 1];
            cJSON *item;

            if (!(h->events & bit) || !hook_saw(rec_ms, h->created_ms, o->coarse_time))
                continue;
            if (!built) {
                if (build_payload(&c->body, event, re.brand, re.ts, r, re.scan)) {
                    if (skipped)
                        (*skipped)++;
                    log_warn("webhooks: %s payload over %d bytes; not delivered", event,
                             WF_PAYLOAD_MAX);
                    break;
                }
                built = true;
            }
            if (o->pos)
                webhook_fanout_id(o->pos, h->id, event, id);
            else
                ids_uuid4(id);
            const struct webhook_delivery_fields f = {.id = id,
                                                      .webhook_id = h->id,
                                                      .brand_id = re.brand,
                                                      .event = event,
                                                      .created_at = created_iso,
                                                      .payload = c->body.data};
            item = webhook_delivery_item_new(&f);
            if (!item)
                continue;
            rc = emit(arg, item);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* ---- the DynamoDB Streams detector's part --------------------------------- */

static int sink_emit(void *arg, cJSON *item)
{
    return ddbd_sink_put(arg, item);
}

/* The records that can become deliveries; the rest are passed over
 * without a lookup. */
static const char *const scan_sk[] = {KEY_PFX_SCAN};
static const struct stream_filter deliverable = {
    .kinds = STREAM_KIND_BIT(STORE_INSERT),
    .pk_prefix = KEY_PFX_PRODUCT,
    .sk_prefixes = scan_sk,
    .nsk = 1,
    .or_else = &alert_stream_filter,
};

const struct stream_filter *webhook_fanout_filter(void)
{
    return &deliverable;
}

int webhook_fanout_collect(struct store *s, const struct ddbs_record *recs, size_t n,
                           int64_t now_ms, const struct ddbd_sink *k)
{
    struct wf_cache *c = NULL;
    int rc = 0;

    for (size_t i = 0; !rc && i < n; i++) {
        const struct stream_record *r = &recs[i].r;
        if (!store_stream_match(&deliverable, r->kind, r->pk, r->sk))
            continue;
        if (!c)
            c = wf_cache_new();
        struct wf_opts o = {.pos = recs[i].pos, .now_ms = now_ms, .coarse_time = true};
        rc = webhook_fanout_record(s, c, r, &o, sink_emit, (void *)k, NULL);
    }
    wf_cache_free(c);
    return rc;
}
