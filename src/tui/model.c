/*
 * model.c - the dashboard's view-model.  Threats live in a fixed ring of
 * MODEL_RING slots kept in display order (newest at the top): a stream
 * event goes on top, a row found by a reconcile is slotted in by its
 * timestamp, and an alert seen again (same alertId) is rewritten in
 * place.  Each slot carries an insertion sequence so that the feed can
 * freeze (show only rows up to a sequence) and keep its selection on the
 * same alert while rows arrive above it.  Poll replies are parsed once
 * and kept per kind and brand for the views; 401/403 become "needs an
 * admin key", a 404 of an optional endpoint "not available".
 */
#include "tui/model.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/timeutil.h"
#include "util/err.h"
#include "util/xalloc.h"

#define MODEL_JSON_MAX  (8u * 1024u * 1024u) /* largest body parsed */
#define MODEL_LAT_MAX   64                   /* health latencies kept */
#define MODEL_PROBE_MAX 16

struct slot {
    struct threat_row row;
    uint64_t seq; /* insertion sequence (freeze, selection identity) */
};

struct brand {
    char *id;
    char *name;
    bool reconciled; /* a reconcile reply was merged once */
};

struct model {
    struct brand brands[MODEL_BRANDS_MAX];
    size_t nbrands;
    struct slot *ring;    /* MODEL_RING slots; logical index i at ring[(head + i) % MODEL_RING] */
    uint64_t *keys;       /* per physical slot: row_key() of its row, 0 for gap rows; a
                             compact array so the alertId lookup does not walk 6 MB */
    uint64_t dropped_seq; /* seq of the last row pushed out of a full ring */
    size_t head, count;
    uint64_t next_seq;
    struct feed_state feed;
    uint64_t sel_seq;    /* the selected row's seq when not following */
    uint64_t frozen_seq; /* rows with a larger seq are hidden while frozen */
    struct data_slot slots[POLL_KIND_COUNT][MODEL_BRANDS_MAX];
    double lat[MODEL_LAT_MAX];
    size_t lat_n, lat_head;
    struct model_probe probes[MODEL_PROBE_MAX];
    size_t nprobes;
};

/* ---- helpers ---- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void copy_str(char *dst, size_t n, const char *src)
{
    if (!src)
        src = "";
    size_t len = strlen(src);
    if (len >= n)
        len = n - 1;
    /* Never cut a UTF-8 sequence in half. */
    while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
        len--;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static size_t phys(const struct model *m, size_t i)
{
    return (m->head + i) % MODEL_RING;
}

static struct slot *slot_at(const struct model *m, size_t i)
{
    return &m->ring[phys(m, i)];
}

/* Lookup key of a row: its alertId hash mixed with its brand (never 0). */
static uint64_t row_key(size_t brand, const char *alert_id)
{
    uint64_t k = hash_str(alert_id) ^ ((uint64_t)(brand + 1) * 0x9E3779B97F4A7C15ull);
    return k ? k : 1;
}

static bool brand_kind(enum poll_kind k)
{
    return k == POLL_THREATS || k == POLL_STATS || k == POLL_BRAND_SCANS || k == POLL_ANALYTICS ||
           k == POLL_BRAND_PRODUCTS;
}

enum sev sev_parse(const char *s)
{
    if (!s)
        return SEV_LOW;
    if (!strcasecmp(s, "critical") || !strcasecmp(s, "crit"))
        return SEV_CRITICAL;
    if (!strcasecmp(s, "high"))
        return SEV_HIGH;
    if (!strcasecmp(s, "medium") || !strcasecmp(s, "med"))
        return SEV_MEDIUM;
    return SEV_LOW;
}

const char *sev_label(enum sev s)
{
    switch (s) {
    case SEV_CRITICAL:
        return "CRIT";
    case SEV_HIGH:
        return "HIGH";
    case SEV_MEDIUM:
        return "MED";
    default:
        return "LOW";
    }
}

const char *model_type_label(const char *type)
{
    static const struct {
        const char *type, *label;
    } labels[] = {
        {"geographic_anomaly", "Geo anomaly"},
        {"burst_scan", "Burst"},
        {"scan_velocity", "Velocity"},
        {"duplicate_scan", "Dup scan"},
        {"claimed_product_scan", "Claimed scan"},
        {"hash_tampering", "Tampering"},
        {"chain_gap", "Chain gap"},
        {"product_recall", "Recall"},
        {"ownership_dispute", "Dispute"},
    };
    if (!type)
        return "";
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        if (!strcmp(type, labels[i].type))
            return labels[i].label;
    return type;
}

/* ---- brands ---- */

static void brands_clear(struct model *m)
{
    for (size_t i = 0; i < m->nbrands; i++) {
        free(m->brands[i].id);
        free(m->brands[i].name);
    }
    m->nbrands = 0;
}

static void brands_fill(struct model *m, const char *const *ids, const char *const *names, size_t n)
{
    if (n > MODEL_BRANDS_MAX)
        n = MODEL_BRANDS_MAX;
    for (size_t i = 0; i < n; i++) {
        m->brands[i].id = xstrdup(ids && ids[i] ? ids[i] : "");
        m->brands[i].name = names && names[i] ? xstrdup(names[i]) : NULL;
        m->brands[i].reconciled = false;
    }
    m->nbrands = n;
}

struct model *model_new(const char *const *brand_ids, const char *const *brand_names, size_t n)
{
    struct model *m = xcalloc(1, sizeof *m);
    m->ring = xcalloc(MODEL_RING, sizeof *m->ring);
    m->keys = xcalloc(MODEL_RING, sizeof *m->keys);
    m->next_seq = 1;
    m->feed.follow = true;
    m->feed.floor = SEV_LOW;
    m->feed.brand_only = -1;
    brands_fill(m, brand_ids, brand_names, n);
    return m;
}

void model_free(struct model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->count; i++)
        free(slot_at(m, i)->row.raw);
    free(m->ring);
    free(m->keys);
    for (int k = 0; k < POLL_KIND_COUNT; k++)
        for (size_t b = 0; b < MODEL_BRANDS_MAX; b++)
            cJSON_Delete(m->slots[k][b].json);
    brands_clear(m);
    free(m);
}

size_t model_brand_count(const struct model *m)
{
    return m->nbrands;
}

const char *model_brand_id(const struct model *m, size_t b)
{
    return b < m->nbrands ? m->brands[b].id : "";
}

const char *model_brand_name(const struct model *m, size_t b)
{
    if (b >= m->nbrands)
        return "";
    return m->brands[b].name && m->brands[b].name[0] ? m->brands[b].name : m->brands[b].id;
}

/* ---- visibility and selection ---- */

static bool row_matches(const struct model *m, const struct threat_row *r)
{
    const struct feed_state *f = &m->feed;
    if (f->brand_only >= 0 && r->brand != (uint16_t)f->brand_only)
        return false;
    if (!(r->flags & ROW_GAP) && r->sev < f->floor)
        return false;
    if (f->filter[0]) {
        const char *fields[] = {r->type,           model_type_label(r->type),
                                sev_label(r->sev), r->product,
                                r->product_id,     r->location,
                                r->details,        model_brand_name(m, r->brand)};
        bool hit = false;
        for (size_t i = 0; i < sizeof fields / sizeof fields[0] && !hit; i++)
            hit = strcasestr(fields[i], f->filter) != NULL;
        if (hit == f->invert)
            return false;
    }
    return true;
}

static bool slot_visible(const struct model *m, const struct slot *s)
{
    if (m->feed.frozen && s->seq > m->frozen_seq)
        return false;
    return row_matches(m, &s->row);
}

size_t model_visible(const struct model *m, size_t *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < m->count; i++) {
        if (!slot_visible(m, slot_at(m, i)))
            continue;
        if (out && n < max)
            out[n] = i;
        n++;
    }
    return n;
}

static void select_index(struct model *m, size_t sel);

/* Puts feed.sel back on the row with sel_seq (or clamps it). */
static void feed_fix(struct model *m)
{
    struct feed_state *f = &m->feed;
    if (f->follow) {
        f->sel = 0;
        return;
    }
    size_t n = 0, found = (size_t)-1;
    for (size_t i = 0; i < m->count; i++) {
        struct slot *s = slot_at(m, i);
        if (!slot_visible(m, s))
            continue;
        if (s->seq == m->sel_seq) {
            found = n;
            break;
        }
        n++;
    }
    if (found != (size_t)-1) {
        f->sel = found;
        return;
    }
    select_index(m, f->sel); /* the row left the list: clamp and re-anchor */
}

/* A row was added: counts it in +N when the user would not see it. */
static void note_arrival(struct model *m, const struct slot *s)
{
    if (!row_matches(m, &s->row))
        return;
    if (m->feed.frozen || !m->feed.follow)
        m->feed.pending++;
}

/* ---- threat rows ---- */

static int64_t iso_ms(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    int64_t ms = 0;
    if (cJSON_IsString(v) && v->valuestring && time_parse_iso(v->valuestring, &ms) == 0)
        return ms;
    return 0;
}

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* Name of product pid from the brand's products list or the product
 * being viewed, NULL when unknown. */
static const char *known_product_name(const struct model *m, size_t b, const char *pid)
{
    if (!pid || !pid[0])
        return NULL;
    if (b < MODEL_BRANDS_MAX) {
        const cJSON *list =
            cJSON_GetObjectItemCaseSensitive(m->slots[POLL_BRAND_PRODUCTS][b].json, "products");
        const cJSON *p;
        cJSON_ArrayForEach(p, (cJSON_IsArray(list) ? list : NULL))
        {
            const char *id = jstr(p, "productId"), *name = jstr(p, "name");
            if (id && name && name[0] && !strcmp(id, pid))
                return name;
        }
    }
    const cJSON *prod = cJSON_GetObjectItemCaseSensitive(m->slots[POLL_PRODUCT][0].json, "product");
    const char *id = jstr(prod, "productId"), *name = jstr(prod, "name");
    if (id && name && name[0] && !strcmp(id, pid))
        return name;
    return NULL;
}

/* Appends s to out (cap n) as a plain value (no newlines). */
static void append(char *out, size_t n, const char *s)
{
    size_t len = strlen(out);
    if (len + 1 >= n)
        return;
    copy_str(out + len, n - len, s);
    for (char *p = out + len; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
}

static void append_value(char *out, size_t n, const cJSON *v, int depth)
{
    char num[64];
    if (cJSON_IsString(v)) {
        append(out, n, v->valuestring ? v->valuestring : "");
    } else if (cJSON_IsNumber(v)) {
        snprintf(num, sizeof num, "%.15g", v->valuedouble);
        append(out, n, num);
    } else if (cJSON_IsBool(v)) {
        append(out, n, cJSON_IsTrue(v) ? "true" : "false");
    } else if (cJSON_IsNull(v)) {
        append(out, n, "null");
    } else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        bool obj = cJSON_IsObject(v);
        append(out, n, obj ? "{" : "[");
        if (depth < 3) {
            const cJSON *it;
            bool first = true;
            cJSON_ArrayForEach(it, v)
            {
                if (!first)
                    append(out, n, ", ");
                first = false;
                if (obj && it->string) {
                    append(out, n, it->string);
                    append(out, n, "=");
                }
                append_value(out, n, it, depth + 1);
            }
        } else {
            append(out, n, "...");
        }
        append(out, n, obj ? "}" : "]");
    }
}

/* One-line summary of an alert's details (TUI.md §4.2). */
static void summarise_details(const cJSON *details, const char *type, char *out, size_t n)
{
    out[0] = '\0';
    if (!details || cJSON_IsNull(details))
        return;
    if (cJSON_IsString(details)) {
        append(out, n, details->valuestring ? details->valuestring : "");
        return;
    }
    if (!cJSON_IsObject(details)) {
        append_value(out, n, details, 0);
        return;
    }
    const cJSON *countries = cJSON_GetObjectItemCaseSensitive(details, "countries");
    if (type && !strcmp(type, "geographic_anomaly") && cJSON_IsArray(countries)) {
        const cJSON *c;
        bool first = true;
        append(out, n, "countries: ");
        cJSON_ArrayForEach(c, countries)
        {
            if (!cJSON_IsString(c))
                continue;
            if (!first)
                append(out, n, ", ");
            first = false;
            append(out, n, c->valuestring);
        }
        const cJSON *cnt = cJSON_GetObjectItemCaseSensitive(details, "countryCount");
        const cJSON *win = cJSON_GetObjectItemCaseSensitive(details, "windowHours");
        char tail[64];
        int count = cJSON_IsNumber(cnt) ? (int)cnt->valuedouble : cJSON_GetArraySize(countries);
        if (cJSON_IsNumber(win))
            snprintf(tail, sizeof tail, " (%d in %gh)", count, win->valuedouble);
        else
            snprintf(tail, sizeof tail, " (%d)", count);
        append(out, n, tail);
        return;
    }
    const cJSON *it;
    bool first = true;
    cJSON_ArrayForEach(it, details)
    {
        if (!first)
            append(out, n, ", ");
        first = false;
        append(out, n, it->string ? it->string : "?");
        append(out, n, "=");
        append_value(out, n, it, 1);
    }
}

/* Fills r from an alert object.  Returns 0 or ERR_INVALID. */
static int row_from_json(struct model *m, size_t b, const cJSON *a, struct threat_row *r)
{
    const char *id = jstr(a, "alertId");
    if (!cJSON_IsObject(a) || !id || !id[0])
        return ERR_INVALID;
    memset(r, 0, sizeof *r);
    copy_str(r->alert_id, sizeof r->alert_id, id);
    r->brand = (uint16_t)(b < m->nbrands ? b : 0);
    r->ts_ms = iso_ms(a, "timestamp");
    r->sev = sev_parse(jstr(a, "severity"));
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(a, "resolved");
    if (cJSON_IsTrue(res))
        r->flags |= ROW_RESOLVED;
    copy_str(r->type, sizeof r->type, jstr(a, "type") ? jstr(a, "type") : "unknown");
    copy_str(r->product_id, sizeof r->product_id, jstr(a, "productId"));
    const char *pname = jstr(a, "productName");
    const cJSON *prod = cJSON_GetObjectItemCaseSensitive(a, "product");
    if (!pname && cJSON_IsObject(prod))
        pname = jstr(prod, "name");
    if (!pname)
        pname = known_product_name(m, b, r->product_id);
    copy_str(r->product, sizeof r->product, pname && pname[0] ? pname : r->product_id);
    const char *city = jstr(a, "city"), *country = jstr(a, "country");
    bool has_city = city && city[0] && strcasecmp(city, "Unknown") != 0;
    bool has_country = country && country[0] && strcasecmp(country, "Unknown") != 0;
    if (has_city && has_country)
        snprintf(r->location, sizeof r->location, "%.30s, %.30s", city, country);
    else if (has_country)
        copy_str(r->location, sizeof r->location, country);
    else if (has_city)
        copy_str(r->location, sizeof r->location, city);
    summarise_details(cJSON_GetObjectItemCaseSensitive(a, "details"), r->type, r->details,
                      sizeof r->details);
    char *raw = cJSON_PrintUnformatted(a);
    r->raw = raw ? raw : xstrdup("{}");
    return 0;
}

static long find_row(const struct model *m, size_t b, const char *alert_id)
{
    uint64_t k = row_key(b, alert_id);
    /* Physical order (no modulo per step); slots out of use hold key 0. */
    for (size_t p = 0; p < MODEL_RING; p++) {
        if (m->keys[p] != k)
            continue;
        size_t i = (p + MODEL_RING - m->head) % MODEL_RING;
        if (i >= m->count)
            continue;
        const struct slot *s = slot_at(m, i);
        if (s->row.brand == b && !(s->row.flags & ROW_GAP) && !strcmp(s->row.alert_id, alert_id))
            return (long)i;
    }
    return -1;
}

/*
 * Inserts a row at logical position pos (0 = top), taking ownership of
 * r->raw.  When the ring is full the oldest row is dropped first (its
 * raw freed); a pos past the end then lands at the bottom.
 */
static struct slot *insert_at(struct model *m, size_t pos, struct threat_row *r)
{
    if (m->count == MODEL_RING) {
        struct slot *old = slot_at(m, m->count - 1);
        m->dropped_seq = old->seq;
        free(old->row.raw);
        old->row.raw = NULL;
        m->keys[phys(m, m->count - 1)] = 0;
        m->count--;
        if (pos > m->count) {
            /* Older than everything kept: it would be dropped at once. */
            free(r->raw);
            r->raw = NULL;
            return NULL;
        }
    }
    if (pos > m->count)
        pos = m->count;
    /* Grow at the top, then move rows 0..pos-1 up by one. */
    m->head = (m->head + MODEL_RING - 1) % MODEL_RING;
    m->count++;
    for (size_t i = 0; i < pos; i++) {
        *slot_at(m, i) = *slot_at(m, i + 1);
        m->keys[phys(m, i)] = m->keys[phys(m, i + 1)];
    }
    struct slot *s = slot_at(m, pos);
    s->row = *r;
    s->seq = m->next_seq++;
    m->keys[phys(m, pos)] = r->flags & ROW_GAP ? 0 : row_key(r->brand, r->alert_id);
    return s;
}

/* Logical position for a row of time ts among rows ordered newest first:
 * below every row newer than ts, and also below rows of the same time
 * when below_equal (the gap row goes under the alerts it precedes). */
static size_t position_for(const struct model *m, int64_t ts, bool below_equal)
{
    size_t i = 0;
    while (i < m->count) {
        int64_t t = slot_at(m, i)->row.ts_ms;
        if (below_equal ? t < ts : t <= ts)
            break;
        i++;
    }
    return i;
}

/* Replaces row i in place with r (keeps its seq, flags it unseen when it
 * changed).  Returns true when the contents changed. */
static bool replace_row(struct model *m, size_t i, struct threat_row *r, int64_t now_ms, bool mark)
{
    struct slot *s = slot_at(m, i);
    bool changed = !s->row.raw || strcmp(s->row.raw, r->raw) != 0;
    if (!changed) {
        free(r->raw);
        r->raw = NULL;
        return false;
    }
    uint8_t keep = s->row.flags & (ROW_BACKFILL | ROW_UNSEEN | ROW_ACKED);
    free(s->row.raw);
    r->flags |= keep;
    if (mark) {
        r->flags |= ROW_UNSEEN;
        r->flags &= (uint8_t)~ROW_ACKED;
        r->arrived_ms = now_ms;
    } else {
        r->arrived_ms = s->row.arrived_ms;
    }
    s->row = *r;
    return true;
}

static cJSON *parse_body(const char *json, size_t len)
{
    if (!json || len == 0 || len > MODEL_JSON_MAX)
        return NULL;
    return cJSON_ParseWithLength(json, len);
}

int model_threat(struct model *m, size_t b, const char *json, size_t len, int64_t now_ms)
{
    int rc;
    struct threat_row r;
    cJSON *a = parse_body(json, len);
    if (!a || b >= m->nbrands) {
        rc = ERR_INVALID;
        goto out;
    }
    rc = row_from_json(m, b, a, &r);
    if (rc)
        goto out;
    long i = find_row(m, b, r.alert_id);
    if (i >= 0) {
        bool was = slot_visible(m, slot_at(m, (size_t)i));
        replace_row(m, (size_t)i, &r, now_ms, true);
        if (was != slot_visible(m, slot_at(m, (size_t)i)))
            feed_fix(m);
        rc = 0;
        goto out;
    }
    r.flags |= ROW_UNSEEN;
    r.arrived_ms = now_ms;
    m->dropped_seq = 0;
    struct slot *s = insert_at(m, 0, &r);
    if (s) {
        note_arrival(m, s);
        /* On top: the selection moves down by one when the row shows and
         * the selected row is still there (cheap path for 1,000 events/s). */
        bool sel_kept = m->sel_seq && m->sel_seq != m->dropped_seq;
        if (!m->feed.follow && sel_kept && slot_visible(m, s))
            m->feed.sel++;
        else if (!m->feed.follow && !(sel_kept && !slot_visible(m, s)))
            feed_fix(m);
    }
    rc = 1;
out:
    cJSON_Delete(a);
    return rc;
}

/* Newest alert time of brand b (0 when none). */
static int64_t newest_seen(const struct model *m, size_t b)
{
    int64_t best = 0;
    for (size_t i = 0; i < m->count; i++) {
        const struct slot *s = slot_at(m, i);
        if (s->row.brand == b && !(s->row.flags & ROW_GAP) && s->row.ts_ms > best)
            best = s->row.ts_ms;
    }
    return best;
}

int model_reconcile(struct model *m, size_t b, const char *json, size_t len, int64_t now_ms)
{
    int rc = 0;
    cJSON *root = parse_body(json, len);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "threats");
    if (!root || b >= m->nbrands || !cJSON_IsArray(list)) {
        rc = ERR_INVALID;
        goto out;
    }
    bool history = !m->brands[b].reconciled; /* first load: history, not backfill */
    m->brands[b].reconciled = true;
    int64_t seen = newest_seen(m, b);
    int64_t oldest = INT64_MAX;
    bool any_known = false;
    const cJSON *a;
    cJSON_ArrayForEach(a, list)
    {
        const char *id = jstr(a, "alertId");
        if (!id)
            continue;
        int64_t ts = iso_ms(a, "timestamp");
        if (ts < oldest)
            oldest = ts;
        if (find_row(m, b, id) >= 0)
            any_known = true;
    }
    if (!history && seen > 0 && oldest != INT64_MAX && oldest > seen && !any_known) {
        struct threat_row g;
        memset(&g, 0, sizeof g);
        char iso[ISO_LEN + 1];
        time_iso(oldest, iso);
        snprintf(g.alert_id, sizeof g.alert_id, "gap:%lld", (long long)oldest);
        g.brand = (uint16_t)b;
        g.ts_ms = oldest;
        g.arrived_ms = now_ms;
        g.flags = ROW_GAP;
        copy_str(g.type, sizeof g.type, "gap");
        snprintf(g.details, sizeof g.details, "possible gap before %.8sZ", iso + 11);
        g.raw = NULL;
        struct slot *s = insert_at(m, position_for(m, oldest, true), &g);
        if (s)
            note_arrival(m, s);
    }
    /* Oldest first, so equal timestamps keep the reply's order. */
    for (int k = cJSON_GetArraySize(list) - 1; k >= 0; k--) {
        struct threat_row r;
        a = cJSON_GetArrayItem(list, k);
        if (row_from_json(m, b, a, &r))
            continue;
        long i = find_row(m, b, r.alert_id);
        if (i >= 0) {
            replace_row(m, (size_t)i, &r, now_ms, false);
            continue;
        }
        if (history) {
            r.arrived_ms = 0;
        } else {
            r.flags |= ROW_BACKFILL | ROW_UNSEEN;
            r.arrived_ms = now_ms;
            rc++;
        }
        struct slot *s = insert_at(m, position_for(m, r.ts_ms, false), &r);
        if (s && !history)
            note_arrival(m, s);
    }
    feed_fix(m);
out:
    cJSON_Delete(root);
    return rc;
}

/* ---- poll results ---- */

static bool optional_kind(enum poll_kind k)
{
    return k == POLL_OPSLOG || k == POLL_PARTITIONS || k == POLL_ANALYTICS || k == POLL_AUDIT;
}

/* Gives rows that only know a product id the name a products reply brought. */
static void name_rows(struct model *m)
{
    for (size_t i = 0; i < m->count; i++) {
        struct threat_row *r = &slot_at(m, i)->row;
        if (r->flags & ROW_GAP || strcmp(r->product, r->product_id) != 0)
            continue;
        const char *name = known_product_name(m, r->brand, r->product_id);
        if (name)
            copy_str(r->product, sizeof r->product, name);
    }
}

void model_reply(struct model *m, enum poll_kind k, size_t b, int status, const char *body,
                 size_t len, double latency_ms, int64_t now_ms)
{
    if ((int)k < 0 || k >= POLL_KIND_COUNT)
        return;
    if (!brand_kind(k))
        b = 0;
    if (b >= MODEL_BRANDS_MAX)
        return;
    struct data_slot *d = &m->slots[k][b];
    d->status = status;
    d->latency_ms = latency_ms;
    d->at_ms = now_ms;
    if (k == POLL_HEALTH && status > 0) {
        m->lat[m->lat_head] = latency_ms;
        m->lat_head = (m->lat_head + 1) % MODEL_LAT_MAX;
        if (m->lat_n < MODEL_LAT_MAX)
            m->lat_n++;
    }
    if (status == 401 || status == 403) {
        d->state = DATA_DENIED;
        cJSON_Delete(d->json);
        d->json = NULL;
        return;
    }
    if (status == 404 && optional_kind(k)) {
        d->state = DATA_UNSUPPORTED;
        cJSON_Delete(d->json);
        d->json = NULL;
        return;
    }
    if (status < 200 || status > 299) {
        d->state = DATA_ERROR;
        return;
    }
    if (k == POLL_THREATS && b < m->nbrands)
        model_reconcile(m, b, body, len, now_ms);
    cJSON *j = parse_body(body, len);
    if (!j) {
        d->state = DATA_ERROR;
        return;
    }
    cJSON_Delete(d->json);
    d->json = j;
    d->state = DATA_OK;
    if (k == POLL_BRAND_PRODUCTS || k == POLL_PRODUCT)
        name_rows(m);
}

const struct data_slot *model_data(const struct model *m, enum poll_kind k, size_t b)
{
    static const struct data_slot none = {DATA_NONE, NULL, 0, 0, 0};
    if ((int)k < 0 || k >= POLL_KIND_COUNT)
        return &none;
    if (!brand_kind(k))
        b = 0;
    if (b >= MODEL_BRANDS_MAX)
        return &none;
    return &m->slots[k][b];
}

size_t model_health_latencies(const struct model *m, double *out, size_t max)
{
    size_t n = m->lat_n < max ? m->lat_n : max;
    size_t start = (m->lat_head + MODEL_LAT_MAX - n) % MODEL_LAT_MAX;
    for (size_t i = 0; i < n; i++)
        out[i] = m->lat[(start + i) % MODEL_LAT_MAX];
    return n;
}

void model_probe(struct model *m, const char *name, int status, double latency_ms, int64_t now_ms)
{
    if (!name)
        return;
    size_t i;
    for (i = 0; i < m->nprobes; i++)
        if (!strcmp(m->probes[i].name, name))
            break;
    if (i == m->nprobes) {
        if (m->nprobes == MODEL_PROBE_MAX)
            return;
        m->nprobes++;
        copy_str(m->probes[i].name, sizeof m->probes[i].name, name);
    }
    m->probes[i].status = status;
    m->probes[i].latency_ms = latency_ms;
    m->probes[i].at_ms = now_ms;
}

size_t model_probe_count(const struct model *m)
{
    return m->nprobes;
}

const struct model_probe *model_probe_at(const struct model *m, size_t i)
{
    return i < m->nprobes ? &m->probes[i] : NULL;
}

/* ---- brands replaced ---- */

void model_set_brands(struct model *m, const char *const *ids, const char *const *names, size_t n)
{
    /* Map old brand indexes to new ones by id. */
    int map[MODEL_BRANDS_MAX];
    bool was_reconciled[MODEL_BRANDS_MAX];
    if (n > MODEL_BRANDS_MAX)
        n = MODEL_BRANDS_MAX;
    for (size_t o = 0; o < MODEL_BRANDS_MAX; o++) {
        map[o] = -1;
        was_reconciled[o] = false;
    }
    for (size_t o = 0; o < m->nbrands; o++)
        for (size_t i = 0; i < n; i++)
            if (ids && ids[i] && !strcmp(m->brands[o].id, ids[i])) {
                map[o] = (int)i;
                was_reconciled[i] = m->brands[o].reconciled;
                break;
            }
    /* Rows: keep those whose brand survives, renumbered, order kept. */
    size_t w = 0;
    for (size_t i = 0; i < m->count; i++) {
        struct slot s = *slot_at(m, i);
        int nb = s.row.brand < MODEL_BRANDS_MAX ? map[s.row.brand] : -1;
        if (nb < 0) {
            free(s.row.raw);
            continue;
        }
        s.row.brand = (uint16_t)nb;
        m->keys[phys(m, w)] = s.row.flags & ROW_GAP ? 0 : row_key(s.row.brand, s.row.alert_id);
        *slot_at(m, w++) = s;
    }
    for (size_t i = w; i < m->count; i++)
        m->keys[phys(m, i)] = 0;
    m->count = w;
    /* Per-brand slots follow their brand. */
    for (int k = 0; k < POLL_KIND_COUNT; k++) {
        if (!brand_kind((enum poll_kind)k))
            continue;
        struct data_slot old[MODEL_BRANDS_MAX];
        memcpy(old, m->slots[k], sizeof old);
        memset(m->slots[k], 0, sizeof m->slots[k]);
        for (size_t o = 0; o < MODEL_BRANDS_MAX; o++) {
            if (map[o] >= 0)
                m->slots[k][map[o]] = old[o];
            else
                cJSON_Delete(old[o].json);
        }
    }
    brands_clear(m);
    brands_fill(m, ids, names, n);
    for (size_t i = 0; i < n; i++)
        m->brands[i].reconciled = was_reconciled[i];
    if (m->feed.brand_only >= (int)n)
        m->feed.brand_only = -1;
    feed_fix(m);
}

/* ---- ring access and feed state ---- */

size_t model_threat_count(const struct model *m)
{
    return m->count;
}

const struct threat_row *model_threat_at(const struct model *m, size_t i)
{
    return i < m->count ? &slot_at(m, i)->row : NULL;
}

struct feed_state *model_feed(struct model *m)
{
    return &m->feed;
}

const struct feed_state *model_feed_c(const struct model *m)
{
    return &m->feed;
}

/* Ring index of the sel-th visible row, or -1. */
static long visible_nth(const struct model *m, size_t sel)
{
    size_t k = 0;
    for (size_t i = 0; i < m->count; i++) {
        if (!slot_visible(m, slot_at(m, i)))
            continue;
        if (k++ == sel)
            return (long)i;
    }
    return -1;
}

const struct threat_row *model_selected(const struct model *m)
{
    long i = visible_nth(m, m->feed.sel);
    return i >= 0 ? &slot_at(m, (size_t)i)->row : NULL;
}

static void select_index(struct model *m, size_t sel)
{
    size_t total = model_visible(m, NULL, 0);
    if (total == 0) {
        m->feed.sel = 0;
        m->sel_seq = 0;
        return;
    }
    if (sel >= total)
        sel = total - 1;
    m->feed.sel = sel;
    long i = visible_nth(m, sel);
    m->sel_seq = i >= 0 ? slot_at(m, (size_t)i)->seq : 0;
}

void model_feed_move(struct model *m, long delta)
{
    long sel = (long)m->feed.sel + delta;
    if (sel < 0)
        sel = 0;
    m->feed.follow = false;
    select_index(m, (size_t)sel);
}

void model_feed_home(struct model *m)
{
    m->feed.follow = true;
    m->feed.sel = 0;
    if (!m->feed.frozen)
        m->feed.pending = 0;
}

void model_feed_end(struct model *m)
{
    m->feed.follow = false;
    select_index(m, (size_t)-1 / 2);
}

void model_set_frozen(struct model *m, bool on)
{
    if (on == m->feed.frozen)
        return;
    if (on) {
        m->frozen_seq = m->next_seq - 1;
        m->feed.frozen = true;
    } else {
        m->feed.frozen = false;
        if (m->feed.follow)
            m->feed.pending = 0;
    }
    feed_fix(m);
}

void model_set_filter(struct model *m, const char *text)
{
    struct feed_state *f = &m->feed;
    if (!text)
        text = "";
    f->invert = false;
    if (text[0] == '!' && text[1]) {
        f->invert = true;
        text++;
    }
    copy_str(f->filter, sizeof f->filter, text);
    feed_fix(m);
}

void model_set_floor(struct model *m, enum sev floor)
{
    m->feed.floor = floor;
    feed_fix(m);
}

static void ack_row(struct threat_row *r)
{
    r->flags &= (uint8_t)~ROW_UNSEEN;
    r->flags |= ROW_ACKED;
}

void model_ack_selected(struct model *m)
{
    long i = visible_nth(m, m->feed.sel);
    if (i >= 0)
        ack_row(&slot_at(m, (size_t)i)->row);
}

void model_ack_visible(struct model *m)
{
    for (size_t i = 0; i < m->count; i++) {
        struct slot *s = slot_at(m, i);
        if (slot_visible(m, s))
            ack_row(&s->row);
    }
}

size_t model_unseen_critical(const struct model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->count; i++) {
        const struct threat_row *r = &slot_at(m, i)->row;
        if (r->sev == SEV_CRITICAL && (r->flags & ROW_UNSEEN) && !(r->flags & ROW_GAP))
            n++;
    }
    return n;
}
