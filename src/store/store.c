/*
 * store.c - the driver-independent half of the item store (store.h).
 *
 * Every public store_* call lands here first: arguments and items are
 * checked (keys, sizes, conditions, actions, cursors), the optional
 * per-partition throttling emulation is consulted before the backend is
 * touched, the driver's ops table does the work, and the capacity the
 * operation consumed is charged to its partition key with DynamoDB's
 * rounding.  The helpers shared by drivers - condition evaluation, update
 * actions, item checks and the opaque query cursor - live here too, so a
 * second driver (DynamoDB) reads and writes the very same shapes.
 */
#include "store/store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/canon.h"
#include "store/capacity.h"
#include "store/store_int.h"
#include "util/buf.h"
#include "util/utf8.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Longest accepted stream reader name (checkpoints). */
#define READER_MAX 256
/* Most stream records returned by one store_stream_read(). */
#define STREAM_READ_MAX 10000
/* Longest cursor text accepted: base64 of the four bounded keys + JSON. */
#define CURSOR_MAX (((STORE_PK_MAX + STORE_SK_MAX) * 2 * 6 + 64) * 4 / 3 + 4)
/* DynamoDB's default retention of stream records. */
#define RETENTION_DEFAULT_MS (24LL * 3600 * 1000)

/* ---------- common part ---------- */

void store_base_init(struct store *s, const struct store_ops *ops, const struct store_options *o)
{
    memset(s, 0, sizeof(*s));
    s->ops = ops;
    s->cap = capacity_new();
    s->throttle = o->throttle;
    s->throttle_wcu = o->throttle_wcu > 0 ? o->throttle_wcu : 1000;
    s->throttle_rcu = o->throttle_rcu > 0 ? o->throttle_rcu : 3000;
    s->retention_ms = o->stream_retention_ms > 0 ? o->stream_retention_ms : RETENTION_DEFAULT_MS;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t store_now_ms(const struct store *s)
{
    return s->clock ? s->clock(s->clock_arg) : wall_ms();
}

static int64_t now_sec(const struct store *s)
{
    int64_t ms = store_now_ms(s);
    return ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
}

void store_set_clock(struct store *s, store_clock_fn fn, void *arg)
{
    s->clock = fn;
    s->clock_arg = fn ? arg : NULL;
}

void store_notify_commit(struct store *s, uint64_t last_seq)
{
    s->stats.commits++;
    if (s->commit_cb)
        s->commit_cb(s->commit_arg, last_seq);
}

int store_add_watch(struct store *s, store_watch_fn fn, void *arg)
{
    if (!fn)
        return ERR_INVALID;
    if (s->nwatch == STORE_WATCH_MAX)
        return ERR_TOOBIG;
    s->watch[s->nwatch].fn = fn;
    s->watch[s->nwatch].arg = arg;
    s->nwatch++;
    return 0;
}

void store_remove_watch(struct store *s, store_watch_fn fn, void *arg)
{
    for (size_t i = 0; i < s->nwatch; i++) {
        if (s->watch[i].fn == fn && s->watch[i].arg == arg) {
            memmove(&s->watch[i], &s->watch[i + 1], (s->nwatch - i - 1) * sizeof s->watch[0]);
            s->nwatch--;
            return;
        }
    }
}

/* Tells the watcher of a write that reached the driver.  Any outcome but
 * a failed condition counts (a failed write may have doomed the batch;
 * telling too much only costs the watcher a copy); the actions only when
 * the update succeeded. */
static void watch_write(struct store *s, const char *pk, const char *sk,
                        const struct store_action *acts, size_t nacts)
{
    for (size_t i = 0; i < s->nwatch; i++)
        s->watch[i].fn(s->watch[i].arg, pk, sk, acts, nacts);
}

static void watch_reset(struct store *s)
{
    for (size_t i = 0; i < s->nwatch; i++)
        s->watch[i].fn(s->watch[i].arg, NULL, NULL, NULL, 0);
}

void store_set_commit_cb(struct store *s, store_commit_cb cb, void *arg)
{
    s->commit_cb = cb;
    s->commit_arg = arg;
}

void store_get_stats(const struct store *s, struct store_stats *out)
{
    *out = s->stats;
}

bool store_has_stream(const struct store *s)
{
    return !s->ops->no_stream;
}

bool store_counters_by_detector(const struct store *s)
{
    return s->ops->counters_by_detector;
}

const char *store_driver_name(const struct store *s)
{
    return s->ops->name;
}

void store_close(struct store *s)
{
    if (!s)
        return;
    if (s->batch_active)
        store_batch_abort(s);
    capacity_free(s->cap);
    s->cap = NULL;
    s->ops->close(s);
}

/* Counts a result in the statistics and passes it through. */
static int tally(struct store *s, int rc)
{
    if (rc == ERR_CONDITION)
        s->stats.conditions_failed++;
    else if (rc == ERR_THROTTLED)
        s->stats.throttled++;
    else if (rc && rc != ERR_NOTFOUND)
        s->stats.errors++;
    return rc;
}

/* ---------- sizes and capacity units ---------- */

/* Significant digits of a number as DynamoDB counts them: leading and
 * trailing zeros trimmed, sign, point and exponent ignored. */
static size_t num_digits(double d)
{
    char tmp[CANON_NUM_MAX];
    size_t n, count = 0, trail = 0;
    if (!isfinite(d) || d == 0)
        return 1;
    if (fabs(d) < 1e15 && d == floor(d)) {
        uint64_t v = (uint64_t)fabs(d);
        while (v % 10 == 0)
            v /= 10;
        for (; v; v /= 10)
            count++;
        return count;
    }
    n = canon_number_str(d, tmp);
    for (size_t i = 0; i < n && tmp[i] != 'e'; i++) {
        if (tmp[i] < '0' || tmp[i] > '9' || (tmp[i] == '0' && !count))
            continue;
        count++;
        trail = tmp[i] == '0' ? trail + 1 : 0;
    }
    return count > trail ? count - trail : 1;
}

static size_t value_size(const cJSON *v)
{
    size_t n = 0;
    if (cJSON_IsString(v) || cJSON_IsRaw(v))
        return v->valuestring ? strlen(v->valuestring) : 0;
    if (cJSON_IsNumber(v))
        return (num_digits(v->valuedouble) + 1) / 2 + 1;
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        n = 3;
        for (const cJSON *e = v->child; e; e = e->next) {
            if (cJSON_IsObject(v) && e->string)
                n += strlen(e->string);
            n += value_size(e) + 1;
        }
        return n;
    }
    return 1; /* true, false, null */
}

size_t store_item_size(const cJSON *item)
{
    size_t n = 0;
    if (!cJSON_IsObject(item))
        return 0;
    for (const cJSON *e = item->child; e; e = e->next)
        n += (e->string ? strlen(e->string) : 0) + value_size(e);
    return n;
}

double store_wcu(size_t bytes)
{
    size_t u = (bytes + 1023) / 1024;
    return (double)(u ? u : 1);
}

double store_rcu(size_t bytes, bool consistent)
{
    size_t u = (bytes + 4095) / 4096;
    double r = (double)(u ? u : 1);
    return consistent ? r : r / 2;
}

/* Checks the throttling emulation before an operation.  On success 0;
 * ERR_THROTTLED when pk is over its ceiling in this second. */
static int throttle_check(struct store *s, int64_t now_s, const char *pk, double wcu, double rcu)
{
    if (!s->throttle)
        return 0;
    if (capacity_would_exceed(s->cap, now_s, pk, wcu, rcu, s->throttle_wcu, s->throttle_rcu))
        return ERR_THROTTLED;
    return 0;
}

/* ---------- validation ---------- */

static bool key_ok(const char *k, size_t max, bool allow_empty)
{
    if (!k)
        return false;
    size_t n = strnlen(k, max + 1);
    return n <= max && (allow_empty || n > 0);
}

/* An optional key attribute: absent, or a non-empty bounded string. */
static bool opt_key_ok(const cJSON *item, const char *name, size_t max)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    if (!v)
        return true;
    return cJSON_IsString(v) && key_ok(v->valuestring, max, false);
}

/* Every name and string valid UTF-8, every number finite. */
static bool value_ok(const cJSON *v)
{
    if (cJSON_IsString(v) || cJSON_IsRaw(v))
        return v->valuestring && utf8_valid(v->valuestring, strlen(v->valuestring), false);
    if (cJSON_IsNumber(v))
        return isfinite(v->valuedouble);
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        for (const cJSON *e = v->child; e; e = e->next) {
            if (cJSON_IsObject(v) &&
                (!e->string || !utf8_valid(e->string, strlen(e->string), false)))
                return false;
            if (!value_ok(e))
                return false;
        }
    }
    return true;
}

int store_check_item(const cJSON *item, size_t *size)
{
    const cJSON *pk, *sk;
    size_t n;
    if (!cJSON_IsObject(item))
        return ERR_INVALID;
    pk = cJSON_GetObjectItemCaseSensitive(item, "PK");
    sk = cJSON_GetObjectItemCaseSensitive(item, "SK");
    if (!cJSON_IsString(pk) || !key_ok(pk->valuestring, STORE_PK_MAX, false))
        return ERR_INVALID;
    if (!cJSON_IsString(sk) || !key_ok(sk->valuestring, STORE_SK_MAX, false))
        return ERR_INVALID;
    if (!opt_key_ok(item, "GSI1PK", STORE_PK_MAX) || !opt_key_ok(item, "GSI1SK", STORE_SK_MAX))
        return ERR_INVALID;
    for (const cJSON *e = item->child; e; e = e->next)
        if (!e->string || !e->string[0])
            return ERR_INVALID;
    if (!value_ok(item))
        return ERR_INVALID;
    n = store_item_size(item);
    if (n > STORE_ITEM_MAX)
        return ERR_TOOBIG;
    if (size)
        *size = n;
    return 0;
}

static int check_cond(const struct store_cond *c)
{
    if (!c)
        return 0;
    switch (c->kind) {
    case STORE_COND_NONE:
    case STORE_COND_NOT_EXISTS:
    case STORE_COND_EXISTS:
        return 0;
    case STORE_COND_ATTR_EQ:
        if (!c->attr || !*c->attr || !c->value)
            return ERR_INVALID;
        if (!cJSON_IsString(c->value) && !cJSON_IsNumber(c->value) && !cJSON_IsBool(c->value))
            return ERR_INVALID;
        return 0;
    case STORE_COND_ATTR_NOT_EXISTS:
        return c->attr && *c->attr ? 0 : ERR_INVALID;
    }
    return ERR_INVALID;
}

static int check_actions(const struct store_action *a, size_t n)
{
    if (n && !a)
        return ERR_INVALID;
    for (size_t i = 0; i < n; i++) {
        if (!a[i].attr || !*a[i].attr || !strcmp(a[i].attr, "PK") || !strcmp(a[i].attr, "SK"))
            return ERR_INVALID;
        switch (a[i].kind) {
        case STORE_ACT_SET:
        case STORE_ACT_SET_IF_NOT_EXISTS:
            if (!a[i].value)
                return ERR_INVALID;
            break;
        case STORE_ACT_ADD:
            if (!isfinite(a[i].delta))
                return ERR_INVALID;
            break;
        case STORE_ACT_REMOVE:
            break;
        default:
            return ERR_INVALID;
        }
        /* DynamoDB rejects two actions on one attribute. */
        for (size_t j = 0; j < i; j++)
            if (!strcmp(a[i].attr, a[j].attr))
                return ERR_INVALID;
    }
    return 0;
}

/* ---------- conditions and actions ---------- */

static bool value_eq(const cJSON *a, const cJSON *b)
{
    if (cJSON_IsString(a) && cJSON_IsString(b))
        return strcmp(a->valuestring, b->valuestring) == 0;
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
        return a->valuedouble == b->valuedouble;
    if (cJSON_IsBool(a) && cJSON_IsBool(b))
        return cJSON_IsTrue(a) == cJSON_IsTrue(b);
    return false;
}

int store_cond_eval(const struct store_cond *c, const cJSON *cur)
{
    const cJSON *v;
    if (!c)
        return 0;
    switch (c->kind) {
    case STORE_COND_NONE:
        return 0;
    case STORE_COND_NOT_EXISTS:
        return cur ? ERR_CONDITION : 0;
    case STORE_COND_EXISTS:
        return cur ? 0 : ERR_CONDITION;
    case STORE_COND_ATTR_EQ:
        v = cur ? cJSON_GetObjectItemCaseSensitive(cur, c->attr) : NULL;
        return v && value_eq(v, c->value) ? 0 : ERR_CONDITION;
    case STORE_COND_ATTR_NOT_EXISTS:
        v = cur ? cJSON_GetObjectItemCaseSensitive(cur, c->attr) : NULL;
        return v ? ERR_CONDITION : 0;
    }
    return ERR_CONDITION;
}

int store_apply_actions(cJSON *item, const struct store_action *acts, size_t nacts)
{
    for (size_t i = 0; i < nacts; i++) {
        const struct store_action *a = &acts[i];
        cJSON *cur = cJSON_GetObjectItemCaseSensitive(item, a->attr);
        cJSON *v;
        switch (a->kind) {
        case STORE_ACT_SET:
            v = cJSON_Duplicate(a->value, true);
            if (!v)
                return ERR_NOMEM;
            /* ReplaceItemInObject (unlike ...ViaPointer) names the new value. */
            if (cur)
                cJSON_ReplaceItemInObjectCaseSensitive(item, a->attr, v);
            else
                cJSON_AddItemToObject(item, a->attr, v);
            break;
        case STORE_ACT_SET_IF_NOT_EXISTS:
            if (cur)
                break;
            v = cJSON_Duplicate(a->value, true);
            if (!v)
                return ERR_NOMEM;
            cJSON_AddItemToObject(item, a->attr, v);
            break;
        case STORE_ACT_ADD:
            if (!cur) {
                if (!cJSON_AddNumberToObject(item, a->attr, a->delta))
                    return ERR_NOMEM;
            } else if (!cJSON_IsNumber(cur)) {
                return ERR_INVALID;
            } else {
                cJSON_SetNumberValue(cur, cur->valuedouble + a->delta);
            }
            break;
        case STORE_ACT_REMOVE:
            cJSON_DeleteItemFromObjectCaseSensitive(item, a->attr);
            break;
        }
    }
    return 0;
}

/* ---------- cursors ---------- */

static const char B64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *b64url_encode(const unsigned char *p, size_t n)
{
    char *out = xmalloc(4 * ((n + 2) / 3) + 1), *o = out;
    size_t i;
    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = B64URL[v >> 18];
        *o++ = B64URL[(v >> 12) & 63];
        *o++ = B64URL[(v >> 6) & 63];
        *o++ = B64URL[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        *o++ = B64URL[v >> 18];
        *o++ = B64URL[(v >> 12) & 63];
        if (i + 1 < n)
            *o++ = B64URL[(v >> 6) & 63];
    }
    *o = '\0';
    return out;
}

static int b64url_val(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

/* Decodes unpadded base64url into out (>= 3 * n / 4 + 3 bytes).  Returns
 * the byte count, or -1 on a bad character or length. */
static long b64url_decode(const char *s, size_t n, unsigned char *out)
{
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    if (n % 4 == 1)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int v = b64url_val(s[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    /* Leftover bits must be zero: one encoding per cursor. */
    if (acc)
        return -1;
    return (long)o;
}

char *store_cursor_encode(const char *pk, const char *sk, const char *gpk, const char *gsk)
{
    /* Written by hand rather than through a cJSON tree: one is made for
     * every page that has a successor. */
    struct buf b = BUF_INIT(0);
    char *out = NULL;
    int rc = buf_puts(&b, "{\"PK\":");
    if (!rc)
        rc = canon_cstring(&b, pk);
    if (!rc)
        rc = buf_puts(&b, ",\"SK\":");
    if (!rc)
        rc = canon_cstring(&b, sk);
    if (!rc && gpk && gsk) {
        rc = buf_puts(&b, ",\"GSI1PK\":");
        if (!rc)
            rc = canon_cstring(&b, gpk);
        if (!rc)
            rc = buf_puts(&b, ",\"GSI1SK\":");
        if (!rc)
            rc = canon_cstring(&b, gsk);
    }
    if (!rc)
        rc = buf_putc(&b, '}');
    if (!rc)
        out = b64url_encode((const unsigned char *)b.data, b.len);
    buf_free(&b);
    return out;
}

static const char *cursor_str(const cJSON *root, const char *name, size_t max)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, name);
    /* Stored keys are valid UTF-8, so a cursor key that is not cannot
     * have come from us. */
    if (!cJSON_IsString(v) || !key_ok(v->valuestring, max, false) ||
        !utf8_valid(v->valuestring, strlen(v->valuestring), false))
        return NULL;
    return v->valuestring;
}

int store_cursor_decode(const char *text, bool gsi, struct store_cursor *c)
{
    size_t n;
    long m;
    unsigned char *raw = NULL;
    int rc = ERR_INVALID;
    memset(c, 0, sizeof(*c));
    if (!text)
        return ERR_INVALID;
    n = strnlen(text, CURSOR_MAX + 1);
    if (n == 0 || n > CURSOR_MAX)
        return ERR_INVALID;
    raw = xmalloc(n * 3 / 4 + 4);
    m = b64url_decode(text, n, raw);
    if (m <= 0)
        goto out;
    c->root = cJSON_ParseWithLength((const char *)raw, (size_t)m);
    if (!cJSON_IsObject(c->root))
        goto out;
    c->pk = cursor_str(c->root, "PK", STORE_PK_MAX);
    c->sk = cursor_str(c->root, "SK", STORE_SK_MAX);
    if (!c->pk || !c->sk)
        goto out;
    if (gsi) {
        c->gpk = cursor_str(c->root, "GSI1PK", STORE_PK_MAX);
        c->gsk = cursor_str(c->root, "GSI1SK", STORE_SK_MAX);
        if (!c->gpk || !c->gsk)
            goto out;
    }
    rc = 0;
out:
    free(raw);
    if (rc)
        store_cursor_free(c);
    return rc;
}

void store_cursor_free(struct store_cursor *c)
{
    cJSON_Delete(c->root);
    memset(c, 0, sizeof(*c));
}

/* ---------- single-item operations ---------- */

int store_get(struct store *s, const char *pk, const char *sk, bool consistent, cJSON **out)
{
    size_t bytes = 0;
    int64_t now_s;
    int rc;
    if (!out)
        return tally(s, ERR_INVALID);
    *out = NULL;
    s->stats.gets++;
    if (!key_ok(pk, STORE_PK_MAX, false) || !key_ok(sk, STORE_SK_MAX, false))
        return tally(s, ERR_INVALID);
    now_s = now_sec(s);
    rc = throttle_check(s, now_s, pk, 0, store_rcu(0, consistent));
    if (rc)
        return tally(s, rc);
    rc = s->ops->get(s, pk, sk, consistent, out, &bytes);
    if (!rc || rc == ERR_NOTFOUND)
        capacity_charge(s->cap, now_s, pk, 0, store_rcu(bytes, consistent));
    return tally(s, rc);
}

int store_put(struct store *s, const cJSON *item, const struct store_cond *cond)
{
    size_t size = 0, bytes = 0;
    int64_t now_s;
    const char *pk;
    int rc;
    s->stats.puts++;
    rc = store_check_item(item, &size);
    if (!rc)
        rc = check_cond(cond);
    if (rc)
        return tally(s, rc);
    pk = cJSON_GetObjectItemCaseSensitive(item, "PK")->valuestring;
    now_s = now_sec(s);
    rc = throttle_check(s, now_s, pk, store_wcu(size), 0);
    if (rc)
        return tally(s, rc);
    rc = s->ops->put(s, item, size, cond, &bytes);
    if (rc != ERR_CONDITION)
        watch_write(s, pk, cJSON_GetObjectItemCaseSensitive(item, "SK")->valuestring, NULL, 0);
    if (!rc || rc == ERR_CONDITION)
        capacity_charge(s->cap, now_s, pk, store_wcu(bytes > size ? bytes : size), 0);
    if (!rc && s->batch_active)
        s->batch_writes++;
    return tally(s, rc);
}

int store_delete(struct store *s, const char *pk, const char *sk, const struct store_cond *cond)
{
    size_t bytes = 0;
    int64_t now_s;
    int rc;
    s->stats.deletes++;
    if (!key_ok(pk, STORE_PK_MAX, false) || !key_ok(sk, STORE_SK_MAX, false))
        return tally(s, ERR_INVALID);
    rc = check_cond(cond);
    if (rc)
        return tally(s, rc);
    now_s = now_sec(s);
    rc = throttle_check(s, now_s, pk, store_wcu(0), 0);
    if (rc)
        return tally(s, rc);
    rc = s->ops->del(s, pk, sk, cond, &bytes);
    if (rc != ERR_CONDITION)
        watch_write(s, pk, sk, NULL, 0);
    if (!rc || rc == ERR_CONDITION)
        capacity_charge(s->cap, now_s, pk, store_wcu(bytes), 0);
    if (!rc && s->batch_active)
        s->batch_writes++;
    return tally(s, rc);
}

int store_update(struct store *s, const char *pk, const char *sk, const struct store_action *acts,
                 size_t nacts, const struct store_cond *cond, cJSON **new_image)
{
    size_t bytes = 0;
    int64_t now_s;
    int rc;
    if (new_image)
        *new_image = NULL;
    s->stats.updates++;
    if (!key_ok(pk, STORE_PK_MAX, false) || !key_ok(sk, STORE_SK_MAX, false))
        return tally(s, ERR_INVALID);
    rc = check_actions(acts, nacts);
    if (!rc)
        rc = check_cond(cond);
    if (rc)
        return tally(s, rc);
    now_s = now_sec(s);
    rc = throttle_check(s, now_s, pk, store_wcu(0), 0);
    if (rc)
        return tally(s, rc);
    rc = s->ops->update(s, pk, sk, acts, nacts, cond, new_image, &bytes);
    if (rc != ERR_CONDITION)
        watch_write(s, pk, sk, rc ? NULL : acts, rc ? 0 : nacts);
    if (!rc || rc == ERR_CONDITION)
        capacity_charge(s->cap, now_s, pk, store_wcu(bytes), 0);
    if (!rc && s->batch_active)
        s->batch_writes++;
    return tally(s, rc);
}

/* ---------- queries ---------- */

static int check_query(const struct store_query *q)
{
    if (!q || !key_ok(q->pk, STORE_PK_MAX, false) || q->limit < 0)
        return ERR_INVALID;
    if (q->index != STORE_INDEX_TABLE && q->index != STORE_INDEX_GSI1)
        return ERR_INVALID;
    if (q->visit && (!q->visit_attr || !*q->visit_attr || q->count_only))
        return ERR_INVALID;
    switch (q->sk_op) {
    case STORE_SK_ANY:
        return 0;
    case STORE_SK_BETWEEN:
        if (!key_ok(q->sk2, STORE_SK_MAX, true) || !key_ok(q->sk, STORE_SK_MAX, true))
            return ERR_INVALID;
        /* DynamoDB rejects an empty range rather than returning nothing. */
        return strcmp(q->sk, q->sk2) <= 0 ? 0 : ERR_INVALID;
    case STORE_SK_EQ:
    case STORE_SK_BEGINS:
    case STORE_SK_LT:
    case STORE_SK_LE:
    case STORE_SK_GT:
    case STORE_SK_GE:
        return key_ok(q->sk, STORE_SK_MAX, true) ? 0 : ERR_INVALID;
    }
    return ERR_INVALID;
}

/* q->visit for drivers that do not do it themselves: a query projected
 * on the visited attribute, whose items are handed to the visitor and
 * dropped. */
static int query_visit_emulated(struct store *s, const struct store_query *q,
                                const struct store_cursor *cur, struct store_result *res,
                                size_t *bytes)
{
    struct store_query pq = *q;
    const char *attrs[1] = {q->visit_attr};
    const cJSON *it;
    int rc;

    pq.visit = NULL;
    pq.project = attrs;
    pq.nproject = 1;
    rc = s->ops->query(s, &pq, cur, res, bytes);
    if (rc)
        return rc;
    cJSON_ArrayForEach(it, res->items)
    {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, q->visit_attr);
        const cJSON *sk = cJSON_GetObjectItemCaseSensitive(it, "SK");
        const char *skv = cJSON_IsString(sk) ? sk->valuestring : "";
        if (cJSON_IsString(v))
            q->visit(q->visit_arg, skv, v->valuestring, strlen(v->valuestring));
        else
            q->visit(q->visit_arg, skv, NULL, 0);
    }
    cJSON_Delete(res->items);
    res->items = NULL;
    return 0;
}

int store_query(struct store *s, const struct store_query *q, struct store_result *res)
{
    struct store_cursor cur = {0};
    size_t bytes = 0;
    int64_t now_s;
    bool consistent;
    int rc;
    if (!res)
        return tally(s, ERR_INVALID);
    memset(res, 0, sizeof(*res));
    s->stats.queries++;
    rc = check_query(q);
    if (rc)
        return tally(s, rc);
    if (q->start) {
        rc = store_cursor_decode(q->start, q->index == STORE_INDEX_GSI1, &cur);
        if (!rc && strcmp(q->index == STORE_INDEX_GSI1 ? cur.gpk : cur.pk, q->pk) != 0)
            rc = ERR_INVALID;
        if (rc)
            goto out;
    }
    /* GSI1 reads are always eventually consistent (DynamoDB rejects a
     * consistent GSI read; here the flag is ignored). */
    consistent = q->consistent && q->index == STORE_INDEX_TABLE;
    now_s = now_sec(s);
    rc = throttle_check(s, now_s, q->pk, 0, store_rcu(0, consistent));
    if (rc)
        goto out;
    if (q->visit && !s->ops->query_visits)
        rc = query_visit_emulated(s, q, q->start ? &cur : NULL, res, &bytes);
    else
        rc = s->ops->query(s, q, q->start ? &cur : NULL, res, &bytes);
    if (rc) {
        store_result_free(res);
        goto out;
    }
    capacity_charge(s->cap, now_s, q->pk, 0, store_rcu(bytes, consistent));
out:
    store_cursor_free(&cur);
    return tally(s, rc);
}

void store_result_free(struct store_result *res)
{
    if (!res)
        return;
    cJSON_Delete(res->items);
    free(res->next);
    memset(res, 0, sizeof(*res));
}

/* ---------- transactions and group commit ---------- */

static const char *write_pk(const struct store_write *w)
{
    if (w->kind == STORE_W_PUT)
        return cJSON_GetObjectItemCaseSensitive(w->item, "PK")->valuestring;
    return w->pk;
}

static const char *write_sk(const struct store_write *w)
{
    if (w->kind == STORE_W_PUT)
        return cJSON_GetObjectItemCaseSensitive(w->item, "SK")->valuestring;
    return w->sk;
}

/* Validates one write of a transaction; *size gets a PUT item's size. */
static int check_write(const struct store_write *w, size_t *size)
{
    int rc = 0;
    *size = 0;
    switch (w->kind) {
    case STORE_W_PUT:
        rc = store_check_item(w->item, size);
        break;
    case STORE_W_UPDATE:
        rc = check_actions(w->acts, w->nacts);
        /* fall through */
    case STORE_W_DELETE:
    case STORE_W_CHECK:
        if (!key_ok(w->pk, STORE_PK_MAX, false) || !key_ok(w->sk, STORE_SK_MAX, false))
            rc = ERR_INVALID;
        break;
    case STORE_W_CHECKPOINT:
        return key_ok(w->reader, READER_MAX, false) && w->seq <= INT64_MAX ? 0 : ERR_INVALID;
    default:
        return ERR_INVALID;
    }
    if (!rc)
        rc = check_cond(&w->cond);
    if (!rc && w->kind == STORE_W_CHECK && w->cond.kind == STORE_COND_NONE)
        rc = ERR_INVALID;
    return rc;
}

/* Rejects two writes on one item (or one reader's checkpoint twice). */
static int check_distinct(const struct store_write *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++) {
            bool cpi = w[i].kind == STORE_W_CHECKPOINT, cpj = w[j].kind == STORE_W_CHECKPOINT;
            if (cpi != cpj)
                continue;
            if (cpi ? !strcmp(w[i].reader, w[j].reader)
                    : !strcmp(write_pk(&w[i]), write_pk(&w[j])) &&
                          !strcmp(write_sk(&w[i]), write_sk(&w[j])))
                return ERR_INVALID;
        }
    }
    return 0;
}

int store_transact(struct store *s, const struct store_write *w, size_t n, int *failed)
{
    size_t size[STORE_TRANSACT_MAX], bytes[STORE_TRANSACT_MAX];
    int64_t now_s;
    int rc = 0, fail = -1;
    s->stats.transacts++;
    if (!w || n == 0)
        rc = ERR_INVALID;
    else if (n > STORE_TRANSACT_MAX)
        rc = ERR_TOOBIG;
    for (size_t i = 0; !rc && i < n; i++) {
        rc = check_write(&w[i], &size[i]);
        if (rc)
            fail = (int)i;
    }
    if (!rc)
        rc = check_distinct(w, n);
    if (rc)
        goto out;
    /* Transactional writes cost twice the capacity (DynamoDB). */
    now_s = now_sec(s);
    for (size_t i = 0; i < n; i++) {
        if (w[i].kind == STORE_W_CHECKPOINT)
            continue;
        rc = throttle_check(s, now_s, write_pk(&w[i]), 2 * store_wcu(size[i]), 0);
        if (rc) {
            fail = (int)i;
            goto out;
        }
    }
    memset(bytes, 0, sizeof(bytes));
    rc = s->ops->transact(s, w, n, &fail, bytes);
    for (size_t i = 0; rc != ERR_CONDITION && i < n; i++) {
        if (w[i].kind == STORE_W_PUT || w[i].kind == STORE_W_DELETE)
            watch_write(s, write_pk(&w[i]), write_sk(&w[i]), NULL, 0);
        else if (w[i].kind == STORE_W_UPDATE)
            watch_write(s, w[i].pk, w[i].sk, rc ? NULL : w[i].acts, rc ? 0 : w[i].nacts);
    }
    if (!rc || rc == ERR_CONDITION) {
        for (size_t i = 0; i < n; i++) {
            if (w[i].kind == STORE_W_CHECKPOINT)
                continue;
            size_t b = bytes[i] > size[i] ? bytes[i] : size[i];
            capacity_charge(s->cap, now_s, write_pk(&w[i]), 2 * store_wcu(b), 0);
        }
    }
    if (!rc && s->batch_active)
        s->batch_writes += n;
out:
    if (failed)
        *failed = fail;
    return tally(s, rc);
}

int store_batch_begin(struct store *s)
{
    int rc;
    if (s->sub_mode) {
        if (s->sub_active)
            return tally(s, ERR_INVALID);
        if (s->batch_doomed)
            return tally(s, ERR_IO);
        rc = s->ops->sub_begin(s);
        if (!rc) {
            s->sub_active = true;
            s->sub_doomed = false;
        }
        return tally(s, rc);
    }
    if (s->batch_active)
        return tally(s, ERR_INVALID);
    rc = s->ops->batch_begin(s);
    if (!rc) {
        s->batch_active = true;
        s->batch_doomed = false;
        s->batch_writes = 0;
    }
    return tally(s, rc);
}

int store_batch_commit(struct store *s)
{
    int rc;
    if (s->sub_mode) {
        if (!s->sub_active)
            return tally(s, ERR_INVALID);
        rc = s->ops->sub_commit(s);
        if (rc)
            watch_reset(s);
        s->sub_active = false;
        s->sub_doomed = false;
        return tally(s, rc);
    }
    if (!s->batch_active)
        return tally(s, ERR_INVALID);
    rc = s->ops->batch_commit(s);
    if (!rc)
        s->stats.batch_writes_last = s->batch_writes;
    else
        watch_reset(s);
    s->batch_active = false;
    s->batch_doomed = false;
    s->batch_writes = 0;
    return tally(s, rc);
}

void store_batch_abort(struct store *s)
{
    if (s->sub_mode) {
        if (s->sub_active) {
            s->ops->sub_abort(s);
            watch_reset(s);
        }
        s->sub_active = false;
        s->sub_doomed = false;
        return;
    }
    if (!s->batch_active)
        return;
    s->ops->batch_abort(s);
    watch_reset(s);
    s->batch_active = false;
    s->batch_doomed = false;
    s->batch_writes = 0;
}

bool store_batch_active(const struct store *s)
{
    return s->sub_mode ? s->sub_active : s->batch_active;
}

int store_subbatch_enter(struct store *s)
{
    if (!s->batch_active || s->batch_doomed || s->sub_mode || !s->ops->sub_begin)
        return ERR_INVALID;
    s->sub_mode = true;
    s->sub_active = false;
    s->sub_doomed = false;
    return 0;
}

void store_subbatch_leave(struct store *s)
{
    if (!s->sub_mode)
        return;
    if (s->sub_active) {
        s->ops->sub_abort(s);
        watch_reset(s);
    }
    s->sub_mode = false;
    s->sub_active = false;
    s->sub_doomed = false;
}

/* ---------- change stream ---------- */

/* Checks a stream read's position and caps max.  Returns ERR_INVALID,
 * 0 when there is nothing to read (max 0), or 1 to go on. */
static int stream_bounds(uint64_t after, size_t *max)
{
    if (after > INT64_MAX)
        return ERR_INVALID;
    if (*max == 0)
        return 0;
    if (*max > STREAM_READ_MAX)
        *max = STREAM_READ_MAX;
    return 1;
}

/* Frees what one record owns. */
static void record_clear(struct stream_record *r)
{
    free(r->pk);
    free(r->sk);
    cJSON_Delete(r->image);
}

int store_stream_read(struct store *s, uint64_t after, size_t max, struct stream_record **recs,
                      size_t *n)
{
    if (!recs || !n)
        return tally(s, ERR_INVALID);
    *recs = NULL;
    *n = 0;
    int rc = stream_bounds(after, &max);
    if (rc <= 0)
        return rc < 0 ? tally(s, rc) : 0;
    return tally(s, s->ops->stream_read(s, after, max, recs, n));
}

/* One filter of the chain. */
static bool match_one(const struct stream_filter *f, enum store_change kind, const char *pk,
                      const char *sk)
{
    bool sk_ok;
    if (f->kinds && !(f->kinds & STREAM_KIND_BIT(kind)))
        return false;
    if (f->pk_prefix && (!pk || strncmp(pk, f->pk_prefix, strlen(f->pk_prefix)) != 0))
        return false;
    sk_ok = f->nsk == 0;
    for (size_t i = 0; !sk_ok && i < f->nsk; i++)
        sk_ok = sk && strncmp(sk, f->sk_prefixes[i], strlen(f->sk_prefixes[i])) == 0;
    return sk_ok;
}

bool store_stream_match(const struct stream_filter *f, enum store_change kind, const char *pk,
                        const char *sk)
{
    if (!f)
        return true;
    /* Bounded: a chain longer than this is a programming error. */
    for (int depth = 0; f && depth < 16; f = f->or_else, depth++)
        if (match_one(f, kind, pk, sk))
            return true;
    return false;
}

/* For drivers without their own filtered read: reads everything, then
 * drops what does not match (compacting the array in place). */
static int stream_read_then_filter(struct store *s, uint64_t after, size_t max,
                                   const struct stream_filter *f, struct stream_record **recs,
                                   size_t *n, uint64_t *last, size_t *examined)
{
    struct stream_record *v = NULL;
    size_t k = 0, kept = 0;
    int rc = s->ops->stream_read(s, after, max, &v, &k);
    if (rc)
        return rc;
    *examined = k;
    *last = k ? v[k - 1].seq : after;
    for (size_t i = 0; i < k; i++) {
        if (store_stream_match(f, v[i].kind, v[i].pk, v[i].sk))
            v[kept++] = v[i];
        else
            record_clear(&v[i]);
    }
    if (!kept) {
        free(v);
        v = NULL;
    }
    *recs = v;
    *n = kept;
    return 0;
}

int store_stream_read_filtered(struct store *s, uint64_t after, size_t max,
                               const struct stream_filter *f, struct stream_record **recs,
                               size_t *n, uint64_t *last, size_t *examined)
{
    if (!recs || !n || !last || !examined)
        return tally(s, ERR_INVALID);
    *recs = NULL;
    *n = 0;
    *last = after;
    *examined = 0;
    int rc = stream_bounds(after, &max);
    if (rc <= 0)
        return rc < 0 ? tally(s, rc) : 0;
    if (!s->ops->stream_read_filtered)
        return tally(s, stream_read_then_filter(s, after, max, f, recs, n, last, examined));
    return tally(s, s->ops->stream_read_filtered(s, after, max, f, recs, n, last, examined));
}

void store_stream_free(struct stream_record *recs, size_t n)
{
    if (!recs)
        return;
    for (size_t i = 0; i < n; i++)
        record_clear(&recs[i]);
    free(recs);
}

int store_stream_head(struct store *s, uint64_t *seq)
{
    if (!seq)
        return tally(s, ERR_INVALID);
    *seq = 0;
    return tally(s, s->ops->stream_head(s, seq));
}

int store_data_version(struct store *s, uint64_t *v)
{
    if (!v)
        return ERR_INVALID;
    *v = 0;
    if (!s->ops->data_version)
        return ERR_INVALID;
    return tally(s, s->ops->data_version(s, v));
}

uint64_t store_sync_pending(struct store *s)
{
    return s->ops->sync_pending ? s->ops->sync_pending(s) : 0;
}

int store_sync_fd(struct store *s)
{
    return s->ops->sync_fd ? s->ops->sync_fd(s) : -1;
}

bool store_set_durable_hook(struct store *s, void (*fn)(void *arg, uint64_t ticket), void *arg)
{
    return s->ops->set_durable_hook ? s->ops->set_durable_hook(s, fn, arg) : false;
}

uint64_t store_sync_poll(struct store *s, int *err)
{
    if (!s->ops->sync_poll) {
        if (err)
            *err = 0;
        return 0;
    }
    return s->ops->sync_poll(s, err);
}

int store_data_version_moved(struct store *s, struct store_dv_mark *m)
{
    uint64_t v;
    int rc = store_data_version(s, &v);
    if (rc) {
        m->known = false;
        return rc;
    }
    bool moved = !m->known || v != m->v;
    m->known = true;
    m->v = v;
    return moved ? 1 : 0;
}

void store_set_bulk(struct store *s, bool bulk)
{
    if (s && s->ops->set_bulk)
        s->ops->set_bulk(s, bulk);
}

int store_checkpoint_get(struct store *s, const char *reader, uint64_t *seq)
{
    if (!seq)
        return tally(s, ERR_INVALID);
    *seq = 0;
    if (!key_ok(reader, READER_MAX, false))
        return tally(s, ERR_INVALID);
    return tally(s, s->ops->checkpoint_get(s, reader, seq));
}

int store_checkpoint_set(struct store *s, const char *reader, uint64_t seq)
{
    if (!key_ok(reader, READER_MAX, false) || seq > INT64_MAX)
        return tally(s, ERR_INVALID);
    return tally(s, s->ops->checkpoint_set(s, reader, seq));
}

int store_stream_trim(struct store *s, int64_t now_ms, size_t *trimmed)
{
    size_t dummy;
    if (!trimmed)
        trimmed = &dummy;
    *trimmed = 0;
    return tally(s, s->ops->stream_trim(s, now_ms - s->retention_ms, trimmed));
}

/* ---------- maintenance ---------- */

int store_purge_expired(struct store *s, int64_t now_ms, size_t max, size_t *purged)
{
    size_t dummy;
    if (!purged)
        purged = &dummy;
    *purged = 0;
    if (max == 0)
        return 0;
    if (max > STREAM_READ_MAX)
        max = STREAM_READ_MAX;
    int rc = s->ops->purge_expired(s, now_ms, max, purged);
    if (rc || *purged)
        watch_reset(s);
    return tally(s, rc);
}

int store_health(struct store *s, double *latency_ms)
{
    struct timespec a, b;
    int rc;
    clock_gettime(CLOCK_MONOTONIC, &a);
    rc = s->ops->health(s);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (latency_ms)
        *latency_ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    return tally(s, rc);
}

/* ---------- partition census ---------- */

int store_partitions(struct store *s, store_partition_cb cb, void *arg)
{
    if (!cb)
        return ERR_INVALID;
    if (!s->ops->partitions)
        return ERR_INVALID;
    return s->ops->partitions(s, cb, arg);
}

int store_write_seconds(struct store *s, int64_t since_ms, store_write_second_cb cb, void *arg)
{
    if (!cb)
        return ERR_INVALID;
    if (!s->ops->write_seconds)
        return ERR_INVALID;
    return s->ops->write_seconds(s, since_ms, cb, arg);
}

/* ---------- capacity reports ---------- */

int store_capacity_top(struct store *s, int window_s, size_t n, struct store_capacity_entry *out,
                       size_t *nout)
{
    if (!nout || (n && !out))
        return ERR_INVALID;
    return capacity_top(s->cap, now_sec(s), window_s, n, out, nout);
}

void store_capacity_totals(struct store *s, int window_s, double *wcu, double *rcu)
{
    capacity_totals(s->cap, now_sec(s), window_s, wcu, rcu);
}

int store_capacity_heat(struct store *s, size_t n, struct store_heat_minute *out, size_t *nout)
{
    if (!nout || (n && !out))
        return ERR_INVALID;
    *nout = capacity_heat(s->cap, now_sec(s), out, n);
    return 0;
}

void store_set_throttle(struct store *s, bool on)
{
    s->throttle = on;
}
