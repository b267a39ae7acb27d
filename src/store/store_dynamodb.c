/*
 * store_dynamodb.c - the item store over DynamoDB's JSON API (see
 * store_dynamodb.h for what differs from SQLite).
 *
 * Every store operation is one DynamoDB call (queries: one or more, to
 * honour the store's page rules): conditions become ConditionExpressions,
 * update actions an UpdateExpression, transactions TransactWriteItems
 * with a ClientRequestToken so a retried call is not applied twice.  TTL
 * is enforced on the store's clock, as in the SQLite driver: reads drop
 * expired items, conditions treat them as absent (an expression term on
 * "ttl"), and an update that meets an expired item deletes it and starts
 * afresh.  Query pages follow store.h exactly (limit, the 1 MB page
 * measured in store item sizes, a cursor only when more items match): the
 * driver keeps calling Query until the page is complete and, when it
 * stopped at the limit, probes whether anything matches beyond.
 */
#include "store/store_dynamodb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/canon.h"
#include "core/ids.h"
#include "store/ddb_census.h"
#include "store/ddb_http.h"
#include "store/ddb_marshal.h"
#include "store/ddb_table.h"
#include "store/store_int.h"
#include "util/err.h"
#include "util/log.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define T_GET      "DynamoDB_20120810.GetItem"
#define T_PUT      "DynamoDB_20120810.PutItem"
#define T_DELETE   "DynamoDB_20120810.DeleteItem"
#define T_UPDATE   "DynamoDB_20120810.UpdateItem"
#define T_QUERY    "DynamoDB_20120810.Query"
#define T_TRANSACT "DynamoDB_20120810.TransactWriteItems"

/* Longest expression text built for one request. */
#define EXPR_MAX (64 * 1024)

struct dy {
    struct store base; /* first: the store.c part */
    struct ddb_http *h;
    char *table;
    unsigned long tokens; /* ClientRequestToken counter */
};

static struct dy *dy_of(struct store *s)
{
    return (struct dy *)s;
}

static double now_s(struct dy *d)
{
    return (double)store_now_ms(&d->base) / 1000.0;
}

/* ---------- expressions ---------- */

void ddb_expr_init(struct ddb_expr *x, double now)
{
    memset(x, 0, sizeof(*x));
    x->names = cJSON_CreateObject();
    x->values = cJSON_CreateObject();
    x->now_s = now;
}

void ddb_expr_free(struct ddb_expr *x)
{
    cJSON_Delete(x->names);
    cJSON_Delete(x->values);
    memset(x, 0, sizeof(*x));
}

void ddb_expr_attach(struct ddb_expr *x, cJSON *req)
{
    if (x->names && x->names->child) {
        cJSON_AddItemToObject(req, "ExpressionAttributeNames", x->names);
        x->names = cJSON_CreateObject();
    }
    if (x->values && x->values->child) {
        cJSON_AddItemToObject(req, "ExpressionAttributeValues", x->values);
        x->values = cJSON_CreateObject();
    }
}

/* The placeholder of an attribute name (reused when seen before). */
static const char *xname(struct ddb_expr *x, const char *attr)
{
    const cJSON *e;
    char key[24];
    cJSON_ArrayForEach(e, x->names)
    {
        if (!strcmp(e->valuestring, attr))
            return e->string;
    }
    snprintf(key, sizeof(key), "#n%d", x->nn++);
    cJSON_AddStringToObject(x->names, key, attr);
    return x->names->child->prev->string;
}

/* The placeholder of a new value (v is marshalled); NULL on failure. */
static const char *xvalue(struct ddb_expr *x, const cJSON *v)
{
    char key[24];
    cJSON *av = ddb_marshal_value(v);
    if (!av)
        return NULL;
    snprintf(key, sizeof(key), ":v%d", x->nv++);
    cJSON_AddItemToObject(x->values, key, av);
    return x->values->child->prev->string;
}

static const char *xnumber(struct ddb_expr *x, double d)
{
    cJSON *n = cJSON_CreateNumber(d);
    const char *k = xvalue(x, n);
    cJSON_Delete(n);
    return k;
}

/* The ":now" placeholder (one per expression set). */
static const char *xnow(struct ddb_expr *x)
{
    if (!cJSON_GetObjectItemCaseSensitive(x->values, ":now")) {
        char num[CANON_NUM_MAX];
        cJSON *av = cJSON_CreateObject();
        canon_number_str(x->now_s, num);
        cJSON_AddStringToObject(av, "N", num);
        cJSON_AddItemToObject(x->values, ":now", av);
    }
    return ":now";
}

int ddb_expr_cond(struct ddb_expr *x, struct buf *b, const struct store_cond *c, bool live)
{
    const char *pk, *t, *now, *a, *v;
    int rc = 0;
    enum store_cond_kind k = c ? c->kind : STORE_COND_NONE;
    if (k == STORE_COND_NONE && !live)
        return 0;
    t = xname(x, "ttl");
    now = xnow(x);
    pk = k == STORE_COND_NONE ? NULL : xname(x, "PK");
    switch (k) {
    case STORE_COND_NONE:
        break;
    case STORE_COND_NOT_EXISTS:
        rc = buf_printf(b, "(attribute_not_exists(%s) OR %s < %s)", pk, t, now);
        break;
    case STORE_COND_EXISTS:
        rc = buf_printf(b, "(attribute_exists(%s) AND (NOT (%s < %s)))", pk, t, now);
        break;
    case STORE_COND_ATTR_EQ:
        a = xname(x, c->attr);
        v = xvalue(x, c->value);
        if (!v)
            return ERR_INVALID;
        rc = buf_printf(b, "(attribute_exists(%s) AND (NOT (%s < %s)) AND %s = %s)", pk, t, now, a,
                        v);
        break;
    case STORE_COND_ATTR_NOT_EXISTS:
        a = xname(x, c->attr);
        rc = buf_printf(b, "(attribute_not_exists(%s) OR %s < %s OR attribute_not_exists(%s))", pk,
                        t, now, a);
        break;
    default:
        return ERR_INVALID;
    }
    if (!rc && live)
        rc = buf_printf(b, "%s(NOT (%s < %s))", b->len ? " AND " : "", t, now);
    return rc;
}

/* Appends ", " between the parts of one clause. */
static int clause_add(struct buf *cl, const char *fmt, const char *p1, const char *p2,
                      const char *p3)
{
    int rc = cl->len ? buf_puts(cl, ", ") : 0;
    if (!rc)
        rc = buf_printf(cl, fmt, p1, p2 ? p2 : "", p3 ? p3 : "");
    return rc;
}

int ddb_expr_update(struct ddb_expr *x, struct buf *b, const struct store_action *a, size_t n)
{
    struct buf set = BUF_INIT(EXPR_MAX), rem = BUF_INIT(EXPR_MAX), add = BUF_INIT(EXPR_MAX);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const char *nm = xname(x, a[i].attr), *v = NULL, *cn = NULL, *cv = NULL;
        char comp[64];
        bool canon = ddb_canon_attr(a[i].attr) && ddb_canon_name(a[i].attr, comp, sizeof(comp));
        /* The companion is named only where it is used: DynamoDB refuses
         * unused placeholders. */
        if (canon && a[i].kind != STORE_ACT_ADD &&
            (a[i].kind != STORE_ACT_SET_IF_NOT_EXISTS || cJSON_IsObject(a[i].value)))
            cn = xname(x, comp);
        if ((a[i].kind == STORE_ACT_SET || a[i].kind == STORE_ACT_SET_IF_NOT_EXISTS)) {
            v = xvalue(x, a[i].value);
            if (!v) {
                rc = ERR_INVALID;
                break;
            }
            if (canon && cJSON_IsObject(a[i].value)) {
                char *text = canon_dup(a[i].value);
                cJSON *s = text ? cJSON_CreateString(text) : NULL;
                cv = s ? xvalue(x, s) : NULL;
                free(text);
                cJSON_Delete(s);
                if (!cv) {
                    rc = ERR_NOMEM;
                    break;
                }
            }
        }
        switch (a[i].kind) {
        case STORE_ACT_SET:
            rc = clause_add(&set, "%s = %s%s", nm, v, NULL);
            if (!rc && cn)
                rc = cv ? clause_add(&set, "%s = %s%s", cn, cv, NULL)
                        : clause_add(&rem, "%s%s%s", cn, NULL, NULL);
            break;
        case STORE_ACT_SET_IF_NOT_EXISTS:
            rc = clause_add(&set, "%s = if_not_exists(%s, %s)", nm, nm, v);
            if (!rc && cv)
                rc = clause_add(&set, "%s = if_not_exists(%s, %s)", cn, cn, cv);
            break;
        case STORE_ACT_ADD:
            v = xnumber(x, a[i].delta);
            rc = v ? clause_add(&add, "%s %s%s", nm, v, NULL) : ERR_NOMEM;
            break;
        case STORE_ACT_REMOVE:
            rc = clause_add(&rem, "%s%s%s", nm, NULL, NULL);
            if (!rc && cn)
                rc = clause_add(&rem, "%s%s%s", cn, NULL, NULL);
            break;
        default:
            rc = ERR_INVALID;
        }
    }
    if (!rc && set.len)
        rc = buf_printf(b, "SET %s", set.data);
    if (!rc && rem.len)
        rc = buf_printf(b, "%sREMOVE %s", b->len ? " " : "", rem.data);
    if (!rc && add.len)
        rc = buf_printf(b, "%sADD %s", b->len ? " " : "", add.data);
    buf_free(&set);
    buf_free(&rem);
    buf_free(&add);
    return rc;
}

/* ---------- request helpers ---------- */

static cJSON *key_map(const char *pk, const char *sk)
{
    cJSON *k = cJSON_CreateObject();
    cJSON_AddItemToObject(cJSON_AddObjectToObject(k, "PK"), "S", cJSON_CreateString(pk));
    cJSON_AddItemToObject(cJSON_AddObjectToObject(k, "SK"), "S", cJSON_CreateString(sk));
    return k;
}

static cJSON *new_req(struct dy *d)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "TableName", d->table);
    return r;
}

/* Size of a returned image (Attributes / Item), 0 when absent. */
static size_t image_size(const cJSON *resp, const char *name, cJSON **keep)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(resp, name);
    cJSON *it;
    size_t n;
    if (!cJSON_IsObject(m))
        return 0;
    it = ddb_unmarshal_item(m);
    n = it ? store_item_size(it) : 0;
    if (keep)
        *keep = it;
    else
        cJSON_Delete(it);
    return n;
}

static bool expired(struct dy *d, const cJSON *item)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(item, "ttl");
    return cJSON_IsNumber(t) && t->valuedouble < now_s(d);
}

static void committed(struct dy *d)
{
    if (!d->base.batch_active)
        store_notify_commit(&d->base, 0);
}

/* Adds the condition to req; ERR_* on failure. */
static int add_cond(struct ddb_expr *x, cJSON *req, const struct store_cond *c, bool live)
{
    struct buf b = BUF_INIT(EXPR_MAX);
    int rc = ddb_expr_cond(x, &b, c, live);
    if (!rc && b.len)
        cJSON_AddStringToObject(req, "ConditionExpression", b.data);
    buf_free(&b);
    return rc;
}

/* ---------- single-item operations ---------- */

/* GetItem without the TTL filter: *out NULL when absent. */
static int raw_get(struct dy *d, const char *pk, const char *sk, bool consistent, cJSON **out)
{
    cJSON *req = new_req(d), *resp = NULL;
    const cJSON *m;
    int rc;
    *out = NULL;
    cJSON_AddItemToObject(req, "Key", key_map(pk, sk));
    cJSON_AddBoolToObject(req, "ConsistentRead", consistent);
    cJSON_AddStringToObject(req, "ReturnConsumedCapacity", "TOTAL");
    rc = ddb_call(d->h, T_GET, req, &resp, NULL);
    if (!rc) {
        m = cJSON_GetObjectItemCaseSensitive(resp, "Item");
        if (m) {
            *out = ddb_unmarshal_item(m);
            if (!*out)
                rc = ERR_IO;
        }
    }
    cJSON_Delete(req);
    cJSON_Delete(resp);
    return rc;
}

static int dy_get(struct store *s, const char *pk, const char *sk, bool consistent, cJSON **out,
                  size_t *bytes)
{
    struct dy *d = dy_of(s);
    int rc = raw_get(d, pk, sk, consistent, out);
    if (!rc && *out) {
        *bytes = store_item_size(*out);
        if (expired(d, *out)) {
            cJSON_Delete(*out);
            *out = NULL;
        }
    }
    if (!rc && !*out)
        rc = ERR_NOTFOUND;
    return rc;
}

/* Sends a PutItem/DeleteItem body whose key/item and condition are set:
 * attaches the expression, asks for the old image (its size is the
 * write's charge) and the consumed capacity.  Returns 0 or the call's
 * error. */
static int write_old(struct dy *d, const char *target, struct ddb_expr *x, cJSON *req,
                     size_t *bytes)
{
    cJSON *resp = NULL;
    ddb_expr_attach(x, req);
    cJSON_AddStringToObject(req, "ReturnValues", "ALL_OLD");
    cJSON_AddStringToObject(req, "ReturnConsumedCapacity", "TOTAL");
    int rc = ddb_call(d->h, target, req, &resp, NULL);
    if (!rc) {
        *bytes = image_size(resp, "Attributes", NULL);
        committed(d);
    }
    cJSON_Delete(resp);
    return rc;
}

static int dy_put(struct store *s, const cJSON *item, size_t item_size,
                  const struct store_cond *cond, size_t *bytes)
{
    struct dy *d = dy_of(s);
    struct ddb_expr x;
    cJSON *req = new_req(d), *m = ddb_marshal_item(item);
    int rc = m ? 0 : ERR_INVALID;
    (void)item_size;
    ddb_expr_init(&x, now_s(d));
    if (!rc) {
        cJSON_AddItemToObject(req, "Item", m);
        rc = add_cond(&x, req, cond, false);
    }
    if (!rc)
        rc = write_old(d, T_PUT, &x, req, bytes);
    ddb_expr_free(&x);
    cJSON_Delete(req);
    return rc;
}

static int dy_del(struct store *s, const char *pk, const char *sk, const struct store_cond *cond,
                  size_t *bytes)
{
    struct dy *d = dy_of(s);
    struct ddb_expr x;
    cJSON *req = new_req(d);
    int rc;
    ddb_expr_init(&x, now_s(d));
    cJSON_AddItemToObject(req, "Key", key_map(pk, sk));
    rc = add_cond(&x, req, cond, false);
    if (!rc)
        rc = write_old(d, T_DELETE, &x, req, bytes);
    ddb_expr_free(&x);
    cJSON_Delete(req);
    return rc;
}

/* Builds an Update body (for UpdateItem or a transaction). */
static int update_body(struct dy *d, struct ddb_expr *x, cJSON *req, const char *pk, const char *sk,
                       const struct store_action *acts, size_t nacts, const struct store_cond *cond)
{
    struct buf u = BUF_INIT(EXPR_MAX);
    int rc;
    (void)d;
    cJSON_AddItemToObject(req, "Key", key_map(pk, sk));
    rc = ddb_expr_update(x, &u, acts, nacts);
    /* No actions: remove an attribute no item has, which only creates
     * the item (a transaction's Update needs an expression). */
    if (!rc && !u.len)
        rc = buf_printf(&u, "REMOVE %s", xname(x, "gp:none"));
    if (!rc && u.len)
        cJSON_AddStringToObject(req, "UpdateExpression", u.data);
    if (!rc)
        rc = add_cond(x, req, cond, true);
    if (!rc)
        ddb_expr_attach(x, req);
    buf_free(&u);
    return rc;
}

static int update_once(struct dy *d, const char *pk, const char *sk,
                       const struct store_action *acts, size_t nacts, const struct store_cond *cond,
                       cJSON **new_image, size_t *bytes)
{
    struct ddb_expr x;
    cJSON *req = new_req(d), *resp = NULL, *img = NULL;
    int rc;
    ddb_expr_init(&x, now_s(d));
    rc = update_body(d, &x, req, pk, sk, acts, nacts, cond);
    if (!rc) {
        cJSON_AddStringToObject(req, "ReturnValues", "ALL_NEW");
        cJSON_AddStringToObject(req, "ReturnConsumedCapacity", "TOTAL");
        rc = ddb_call(d->h, T_UPDATE, req, &resp, NULL);
    }
    if (!rc) {
        *bytes = image_size(resp, "Attributes", &img);
        if (!img) {
            /* No attributes besides the key (UpdateItem without actions). */
            img = cJSON_CreateObject();
            cJSON_AddStringToObject(img, "PK", pk);
            cJSON_AddStringToObject(img, "SK", sk);
            *bytes = store_item_size(img);
        }
        if (new_image)
            *new_image = img;
        else
            cJSON_Delete(img);
    }
    ddb_expr_free(&x);
    cJSON_Delete(req);
    cJSON_Delete(resp);
    return rc;
}

/* Deletes pk/sk only if it is still expired. */
static int delete_expired(struct dy *d, const char *pk, const char *sk)
{
    struct ddb_expr x;
    cJSON *req = new_req(d), *resp = NULL;
    char cond[64];
    int rc;
    ddb_expr_init(&x, now_s(d));
    cJSON_AddItemToObject(req, "Key", key_map(pk, sk));
    snprintf(cond, sizeof(cond), "%s < %s", xname(&x, "ttl"), xnow(&x));
    cJSON_AddStringToObject(req, "ConditionExpression", cond);
    ddb_expr_attach(&x, req);
    rc = ddb_call(d->h, T_DELETE, req, &resp, NULL);
    ddb_expr_free(&x);
    cJSON_Delete(req);
    cJSON_Delete(resp);
    /* Someone rewrote it meanwhile: the caller's retry decides. */
    return rc == ERR_CONDITION ? 0 : rc;
}

static int dy_update(struct store *s, const char *pk, const char *sk,
                     const struct store_action *acts, size_t nacts, const struct store_cond *cond,
                     cJSON **new_image, size_t *bytes)
{
    struct dy *d = dy_of(s);
    int rc = update_once(d, pk, sk, acts, nacts, cond, new_image, bytes);
    if (rc == ERR_CONDITION) {
        /* Was it the expiry term?  An expired item counts as absent:
         * remove it and update from scratch when the caller's condition
         * holds for an absent item. */
        cJSON *cur = NULL;
        int r2 = raw_get(d, pk, sk, true, &cur);
        if (!r2 && cur && expired(d, cur) && !store_cond_eval(cond, NULL)) {
            r2 = delete_expired(d, pk, sk);
            rc = r2 ? r2 : update_once(d, pk, sk, acts, nacts, cond, new_image, bytes);
        }
        cJSON_Delete(cur);
    }
    if (!rc)
        committed(d);
    return rc;
}

/* ---------- queries ---------- */

static const char *sk_attr(const struct store_query *q)
{
    return q->index == STORE_INDEX_GSI1 ? "GSI1SK" : "SK";
}

/*
 * begins_with(SK, p) where p ends inside a UTF-8 sequence (sort keys
 * compare byte-wise, so such a prefix is legal for the store, but DynamoDB
 * only takes valid UTF-8): the same keys as SK BETWEEN lo AND hi, with lo
 * the smallest and hi the largest completion of the sequence, hi padded
 * with U+10FFFF up to the longest sort key.  Returns false when p is not
 * a valid text followed by the start of a valid sequence (nothing can
 * match).
 */
static bool prefix_bounds(const char *p, char *lo, char *hi)
{
    size_t n = strlen(p), i = n, start, need, have, len;
    unsigned char lead, min2 = 0x80, max2 = 0xbf;
    while (i > 0 && n - i < 3 && ((unsigned char)p[i - 1] & 0xc0) == 0x80)
        i--;
    if (i == 0)
        return false;
    start = i - 1;
    lead = (unsigned char)p[start];
    need = lead >= 0xf0 && lead <= 0xf4  ? 4
           : lead >= 0xe0 && lead < 0xf0 ? 3
           : lead >= 0xc2 && lead < 0xe0 ? 2
                                         : 0;
    have = n - start;
    if (!need || have >= need || !utf8_valid(p, start, false))
        return false;
    if (lead == 0xe0)
        min2 = 0xa0;
    else if (lead == 0xed)
        max2 = 0x9f;
    else if (lead == 0xf0)
        min2 = 0x90;
    else if (lead == 0xf4)
        max2 = 0x8f;
    if (have >= 2 && ((unsigned char)p[start + 1] < min2 || (unsigned char)p[start + 1] > max2))
        return false;
    memcpy(lo, p, n);
    memcpy(hi, p, n);
    for (size_t k = have; k < need; k++) {
        lo[start + k] = (char)(k == 1 ? min2 : 0x80);
        hi[start + k] = (char)(k == 1 ? max2 : 0xbf);
    }
    len = start + need;
    lo[len] = '\0';
    while (len + 4 <= STORE_SK_MAX) {
        memcpy(hi + len, "\xf4\x8f\xbf\xbf", 4);
        len += 4;
    }
    hi[len] = '\0';
    return true;
}

/* Key condition; *none set when nothing can match (empty operand). */
static int key_cond(struct ddb_expr *x, struct buf *b, const struct store_query *q, bool *none)
{
    const char *pkn = xname(x, q->index == STORE_INDEX_GSI1 ? "GSI1PK" : "PK");
    cJSON *pv = cJSON_CreateString(q->pk);
    const char *pvk = xvalue(x, pv), *skn, *v1 = NULL, *v2 = NULL;
    const char *op = NULL;
    cJSON *t;
    int rc;
    cJSON_Delete(pv);
    *none = false;
    rc = buf_printf(b, "%s = %s", pkn, pvk);
    if (rc || q->sk_op == STORE_SK_ANY)
        return rc;
    /* Stored sort keys are never empty; DynamoDB refuses an empty
     * operand, so those cases are decided here. */
    if (!q->sk[0]) {
        switch (q->sk_op) {
        case STORE_SK_BEGINS:
        case STORE_SK_GT:
        case STORE_SK_GE:
            return 0;
        case STORE_SK_BETWEEN:
            if (!q->sk2[0]) {
                *none = true;
                return 0;
            }
            break;
        default:
            *none = true;
            return 0;
        }
    }
    skn = xname(x, sk_attr(q));
    if (q->sk[0]) {
        t = cJSON_CreateString(q->sk);
        v1 = xvalue(x, t);
        cJSON_Delete(t);
    }
    switch (q->sk_op) {
    case STORE_SK_EQ:
        op = "=";
        break;
    case STORE_SK_LT:
        op = "<";
        break;
    case STORE_SK_LE:
        op = "<=";
        break;
    case STORE_SK_GT:
        op = ">";
        break;
    case STORE_SK_GE:
        op = ">=";
        break;
    case STORE_SK_BEGINS:
        if (!utf8_valid(q->sk, strlen(q->sk), false)) {
            char lo[STORE_SK_MAX + 8], hi[STORE_SK_MAX + 8];
            if (!prefix_bounds(q->sk, lo, hi)) {
                *none = true;
                return 0;
            }
            cJSON_DeleteItemFromObjectCaseSensitive(x->values, v1);
            t = cJSON_CreateString(lo);
            v1 = xvalue(x, t);
            cJSON_Delete(t);
            t = cJSON_CreateString(hi);
            v2 = xvalue(x, t);
            cJSON_Delete(t);
            return buf_printf(b, " AND %s BETWEEN %s AND %s", skn, v1, v2);
        }
        return buf_printf(b, " AND begins_with(%s, %s)", skn, v1);
    case STORE_SK_BETWEEN:
        t = cJSON_CreateString(q->sk2);
        v2 = xvalue(x, t);
        cJSON_Delete(t);
        if (!v1) /* "" <= SK: every key */
            return buf_printf(b, " AND %s <= %s", skn, v2);
        return buf_printf(b, " AND %s BETWEEN %s AND %s", skn, v1, v2);
    default:
        return ERR_INVALID;
    }
    return buf_printf(b, " AND %s %s %s", skn, op, v1);
}

/* Builds one Query request (without Limit/ExclusiveStartKey). */
static int query_req(struct dy *d, const struct store_query *q, bool count, cJSON **out, bool *none)
{
    struct ddb_expr x;
    struct buf k = BUF_INIT(EXPR_MAX), f = BUF_INIT(EXPR_MAX), p = BUF_INIT(EXPR_MAX);
    cJSON *req = new_req(d);
    int rc;
    ddb_expr_init(&x, now_s(d));
    if (q->index == STORE_INDEX_GSI1)
        cJSON_AddStringToObject(req, "IndexName", "GSI1");
    rc = key_cond(&x, &k, q, none);
    if (!rc) {
        cJSON_AddStringToObject(req, "KeyConditionExpression", k.data);
        rc = buf_printf(&f, "NOT (%s < %s)", xname(&x, "ttl"), xnow(&x));
    }
    if (!rc)
        cJSON_AddStringToObject(req, "FilterExpression", f.data);
    if (!rc && count) {
        cJSON_AddStringToObject(req, "Select", "COUNT");
    } else if (!rc && q->nproject) {
        const char *base[] = {"PK", "SK", "GSI1PK", "GSI1SK"};
        for (size_t i = 0; !rc && i < (q->index == STORE_INDEX_GSI1 ? 4u : 2u); i++)
            rc = buf_printf(&p, "%s%s", i ? ", " : "", xname(&x, base[i]));
        for (size_t i = 0; !rc && i < q->nproject; i++) {
            char comp[64];
            rc = buf_printf(&p, ", %s", xname(&x, q->project[i]));
            if (!rc && ddb_canon_attr(q->project[i]) &&
                ddb_canon_name(q->project[i], comp, sizeof(comp)))
                rc = buf_printf(&p, ", %s", xname(&x, comp));
        }
        if (!rc)
            cJSON_AddStringToObject(req, "ProjectionExpression", p.data);
    }
    if (!rc) {
        cJSON_AddBoolToObject(req, "ScanIndexForward", q->forward);
        if (q->consistent && q->index == STORE_INDEX_TABLE)
            cJSON_AddTrueToObject(req, "ConsistentRead");
        cJSON_AddStringToObject(req, "ReturnConsumedCapacity", "TOTAL");
        ddb_expr_attach(&x, req);
        *out = req;
        req = NULL;
    }
    ddb_expr_free(&x);
    buf_free(&k);
    buf_free(&f);
    buf_free(&p);
    cJSON_Delete(req);
    return rc;
}

static const char *str_attr(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Cursor text of an item (plain JSON keys) for this query. */
static char *cursor_of(const struct store_query *q, const cJSON *item)
{
    const char *pk = str_attr(item, "PK"), *sk = str_attr(item, "SK");
    const char *gpk = NULL, *gsk = NULL;
    if (q->index == STORE_INDEX_GSI1) {
        gpk = str_attr(item, "GSI1PK");
        gsk = str_attr(item, "GSI1SK");
        if (!gpk || !gsk)
            return NULL;
    }
    if (!pk || !sk)
        return NULL;
    return store_cursor_encode(pk, sk, gpk, gsk);
}

static cJSON *esk_of(const struct store_cursor *c)
{
    cJSON *k = key_map(c->pk, c->sk);
    if (c->gpk && c->gsk) {
        cJSON_AddItemToObject(cJSON_AddObjectToObject(k, "GSI1PK"), "S",
                              cJSON_CreateString(c->gpk));
        cJSON_AddItemToObject(cJSON_AddObjectToObject(k, "GSI1SK"), "S",
                              cJSON_CreateString(c->gsk));
    }
    return k;
}

/* One Query call from esk (borrowed, may be NULL) with limit (0: none). */
static int query_call(struct dy *d, cJSON *req, const cJSON *esk, int limit, cJSON **resp)
{
    cJSON_DeleteItemFromObjectCaseSensitive(req, "ExclusiveStartKey");
    cJSON_DeleteItemFromObjectCaseSensitive(req, "Limit");
    if (esk)
        cJSON_AddItemToObject(req, "ExclusiveStartKey", cJSON_Duplicate(esk, true));
    if (limit > 0)
        cJSON_AddNumberToObject(req, "Limit", limit);
    return ddb_call(d->h, T_QUERY, req, resp, NULL);
}

/* Does any matching item follow esk?  *more receives the answer. */
static int probe_more(struct dy *d, cJSON *count_req, cJSON *esk, bool *more)
{
    cJSON *start = cJSON_Duplicate(esk, true);
    int rc = 0;
    *more = false;
    while (start && !rc) {
        cJSON *resp = NULL;
        const cJSON *c, *lek;
        rc = query_call(d, count_req, start, 100, &resp);
        cJSON_Delete(start);
        start = NULL;
        if (!rc) {
            c = cJSON_GetObjectItemCaseSensitive(resp, "Count");
            lek = cJSON_GetObjectItemCaseSensitive(resp, "LastEvaluatedKey");
            if (cJSON_IsNumber(c) && c->valuedouble > 0)
                *more = true;
            else if (cJSON_IsObject(lek))
                start = cJSON_Duplicate(lek, true);
        }
        cJSON_Delete(resp);
    }
    cJSON_Delete(start);
    return rc;
}

static int dy_query(struct store *s, const struct store_query *q, const struct store_cursor *cur,
                    struct store_result *res, size_t *bytes)
{
    struct dy *d = dy_of(s);
    cJSON *req = NULL, *creq = NULL, *esk = cur ? esk_of(cur) : NULL, *last = NULL;
    size_t page = 0;
    bool none = false, done = false, more = false;
    int rc;
    rc = query_req(d, q, q->count_only, &req, &none);
    if (!rc)
        rc = query_req(d, q, true, &creq, &none);
    if (rc || none)
        goto out;
    if (!q->count_only)
        res->items = cJSON_CreateArray();
    while (!done && !rc) {
        cJSON *resp = NULL;
        const cJSON *items, *lek, *m;
        int want = q->limit ? q->limit - res->count : 0;
        rc = query_call(d, req, esk, want, &resp);
        if (rc) {
            cJSON_Delete(resp);
            break;
        }
        if (q->count_only) {
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(resp, "Count");
            const cJSON *sc = cJSON_GetObjectItemCaseSensitive(resp, "ScannedCount");
            res->count += cJSON_IsNumber(c) ? c->valueint : 0;
            /* Capacity: COUNT reads whole items; their sizes are unknown
             * here, so each scanned item counts as one byte. */
            page += cJSON_IsNumber(sc) ? (size_t)sc->valueint : 0;
        } else {
            items = cJSON_GetObjectItemCaseSensitive(resp, "Items");
            cJSON_ArrayForEach(m, items)
            {
                cJSON *it = ddb_unmarshal_item(m);
                size_t sz;
                if (!it) {
                    rc = ERR_IO;
                    break;
                }
                sz = store_item_size(it);
                if (res->count > 0 && page + sz > STORE_PAGE_BYTES) {
                    /* The page is full and this item is the next one. */
                    cJSON_Delete(it);
                    more = true;
                    done = true;
                    break;
                }
                page += sz;
                res->count++;
                if (q->nproject && q->index == STORE_INDEX_GSI1) {
                    /* The index keys were fetched for the cursor only. */
                    cJSON_Delete(last);
                    last = cJSON_CreateObject();
                    cJSON_AddStringToObject(last, "PK", str_attr(it, "PK"));
                    cJSON_AddStringToObject(last, "SK", str_attr(it, "SK"));
                    if (str_attr(it, "GSI1PK"))
                        cJSON_AddStringToObject(last, "GSI1PK", str_attr(it, "GSI1PK"));
                    if (str_attr(it, "GSI1SK"))
                        cJSON_AddStringToObject(last, "GSI1SK", str_attr(it, "GSI1SK"));
                    bool keep_g = false, keep_s = false;
                    for (size_t i = 0; i < q->nproject; i++) {
                        keep_g |= !strcmp(q->project[i], "GSI1PK");
                        keep_s |= !strcmp(q->project[i], "GSI1SK");
                    }
                    if (!keep_g)
                        cJSON_DeleteItemFromObjectCaseSensitive(it, "GSI1PK");
                    if (!keep_s)
                        cJSON_DeleteItemFromObjectCaseSensitive(it, "GSI1SK");
                } else {
                    cJSON_Delete(last);
                    last = cJSON_Duplicate(it, true);
                }
                cJSON_AddItemToArray(res->items, it);
            }
        }
        lek = cJSON_GetObjectItemCaseSensitive(resp, "LastEvaluatedKey");
        if (!rc && !done) {
            cJSON_Delete(esk);
            esk = cJSON_IsObject(lek) ? cJSON_Duplicate(lek, true) : NULL;
            if (!esk)
                done = true;
            else if (q->limit && res->count >= q->limit) {
                rc = probe_more(d, creq, esk, &more);
                done = true;
            }
        }
        cJSON_Delete(resp);
    }
    if (!rc && more) {
        if (q->count_only) {
            /* The last evaluated key marks where the count stopped. */
            cJSON *k = ddb_unmarshal_item(esk);
            res->next = k ? cursor_of(q, k) : NULL;
            cJSON_Delete(k);
        } else {
            res->next = last ? cursor_of(q, last) : NULL;
        }
        if (!res->next)
            rc = ERR_IO;
    }
    *bytes = page;
out:
    if (rc) {
        cJSON_Delete(res->items);
        res->items = NULL;
        res->count = 0;
    }
    cJSON_Delete(req);
    cJSON_Delete(creq);
    cJSON_Delete(esk);
    cJSON_Delete(last);
    return rc;
}

/* ---------- transactions and batches ---------- */

static cJSON *checkpoint_item(const char *reader, uint64_t seq)
{
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", STORE_DDB_CHECKPOINT_PK);
    cJSON_AddStringToObject(it, "SK", reader);
    cJSON_AddNumberToObject(it, "seq", (double)seq);
    return it;
}

/* One element of TransactItems. */
static int transact_elem(struct dy *d, const struct store_write *w, cJSON **out)
{
    struct ddb_expr x;
    cJSON *e = cJSON_CreateObject(), *b = new_req(d), *m = NULL;
    const char *kind = NULL;
    int rc = 0;
    ddb_expr_init(&x, now_s(d));
    switch (w->kind) {
    case STORE_W_PUT:
    case STORE_W_CHECKPOINT:
        kind = "Put";
        if (w->kind == STORE_W_PUT) {
            m = ddb_marshal_item(w->item);
        } else {
            cJSON *it = checkpoint_item(w->reader, w->seq);
            m = ddb_marshal_item(it);
            cJSON_Delete(it);
        }
        if (!m) {
            rc = ERR_INVALID;
            break;
        }
        cJSON_AddItemToObject(b, "Item", m);
        if (w->kind == STORE_W_PUT)
            rc = add_cond(&x, b, &w->cond, false);
        break;
    case STORE_W_UPDATE:
        kind = "Update";
        rc = update_body(d, &x, b, w->pk, w->sk, w->acts, w->nacts, &w->cond);
        break;
    case STORE_W_DELETE:
        kind = "Delete";
        cJSON_AddItemToObject(b, "Key", key_map(w->pk, w->sk));
        rc = add_cond(&x, b, &w->cond, false);
        break;
    case STORE_W_CHECK:
        kind = "ConditionCheck";
        cJSON_AddItemToObject(b, "Key", key_map(w->pk, w->sk));
        rc = add_cond(&x, b, &w->cond, false);
        break;
    default:
        rc = ERR_INVALID;
    }
    if (!rc) {
        ddb_expr_attach(&x, b);
        cJSON_AddItemToObject(e, kind, b);
        b = NULL;
        *out = e;
        e = NULL;
    }
    ddb_expr_free(&x);
    cJSON_Delete(b);
    cJSON_Delete(e);
    return rc;
}

static int dy_transact(struct store *s, const struct store_write *w, size_t n, int *failed,
                       size_t *bytes)
{
    struct dy *d = dy_of(s);
    cJSON *req = cJSON_CreateObject(), *arr, *resp = NULL;
    char token[40];
    int rc = 0;
    (void)bytes;
    arr = cJSON_AddArrayToObject(req, "TransactItems");
    for (size_t i = 0; !rc && i < n; i++) {
        cJSON *e = NULL;
        rc = transact_elem(d, &w[i], &e);
        if (rc)
            *failed = (int)i;
        else
            cJSON_AddItemToArray(arr, e);
    }
    if (rc)
        goto out;
    /* Idempotency: a retried attempt with the same token is applied once.
     * Random (35 of the 36 characters DynamoDB allows): forked --workers
     * share the heap layout and the counter, so anything derived from
     * them collides across processes (IdempotentParameterMismatch). */
    memcpy(token, "gp-", 3);
    ids_random_hex(16, token + 3);
    d->tokens++;
    cJSON_AddStringToObject(req, "ClientRequestToken", token);
    cJSON_AddStringToObject(req, "ReturnConsumedCapacity", "TOTAL");
    rc = ddb_call(d->h, T_TRANSACT, req, &resp, NULL);
    if (rc == ERR_CONDITION) {
        const cJSON *r;
        int i = 0;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(resp, "CancellationReasons"))
        {
            const char *code = str_attr(r, "Code");
            if (code && !strcmp(code, "ConditionalCheckFailed")) {
                *failed = i;
                break;
            }
            i++;
        }
    }
    if (!rc)
        committed(d);
out:
    cJSON_Delete(req);
    cJSON_Delete(resp);
    return rc;
}

static int dy_batch_begin(struct store *s)
{
    (void)s;
    return 0;
}

static int dy_batch_commit(struct store *s)
{
    /* Every write already landed on its own; report them as one commit. */
    store_notify_commit(s, 0);
    return 0;
}

static void dy_batch_abort(struct store *s)
{
    (void)s;
    log_warn("dynamodb store: batch abort cannot undo writes already applied");
}

/* ---------- stream and checkpoints ---------- */

static int dy_stream_read(struct store *s, uint64_t after, size_t max, struct stream_record **recs,
                          size_t *n)
{
    (void)s;
    (void)after;
    (void)max;
    *recs = NULL;
    *n = 0;
    return ERR_UNAVAILABLE;
}

static int dy_stream_head(struct store *s, uint64_t *seq)
{
    (void)s;
    *seq = 0;
    return 0;
}

static int dy_checkpoint_get(struct store *s, const char *reader, uint64_t *seq)
{
    struct dy *d = dy_of(s);
    cJSON *it = NULL;
    int rc = raw_get(d, STORE_DDB_CHECKPOINT_PK, reader, true, &it);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "seq");
    *seq = 0;
    if (!rc && cJSON_IsNumber(v) && v->valuedouble >= 0)
        *seq = (uint64_t)v->valuedouble;
    cJSON_Delete(it);
    return rc;
}

static int dy_checkpoint_set(struct store *s, const char *reader, uint64_t seq)
{
    struct dy *d = dy_of(s);
    cJSON *it = checkpoint_item(reader, seq), *m = ddb_marshal_item(it), *req = new_req(d);
    cJSON *resp = NULL;
    int rc;
    cJSON_AddItemToObject(req, "Item", m);
    rc = ddb_call(d->h, T_PUT, req, &resp, NULL);
    cJSON_Delete(it);
    cJSON_Delete(req);
    cJSON_Delete(resp);
    return rc;
}

static int dy_stream_trim(struct store *s, int64_t cutoff_ms, size_t *trimmed)
{
    (void)s;
    (void)cutoff_ms;
    *trimmed = 0;
    return 0;
}

static int dy_purge_expired(struct store *s, int64_t now_ms, size_t max, size_t *purged)
{
    (void)s;
    (void)now_ms;
    (void)max;
    *purged = 0;
    return 0;
}

static int dy_health(struct store *s)
{
    struct dy *d = dy_of(s);
    cJSON *it = NULL;
    int rc = raw_get(d, KEY_PK_STORE_HEALTH, "0", false, &it);
    cJSON_Delete(it);
    return rc;
}

static void dy_close(struct store *s)
{
    struct dy *d = dy_of(s);
    ddb_http_free(d->h);
    free(d->table);
    free(d);
}

/* The partition census (store.h) lives in ddb_census.c. */
static int dy_partitions(struct store *s, store_partition_cb cb, void *arg)
{
    struct dy *d = dy_of(s);
    return ddb_census_partitions(d->h, d->table, DDBC_SEGMENTS, 0, now_s(d), cb, arg);
}

static int dy_write_seconds(struct store *s, int64_t since_ms, store_write_second_cb cb, void *arg)
{
    struct dy *d = dy_of(s);
    return ddb_census_write_seconds(d->h, d->table, since_ms, store_now_ms(s), cb, arg);
}

int store_dynamodb_http_stats(const struct store *s, struct ddb_http_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!s || s->ops->close != dy_close)
        return ERR_INVALID;
    ddb_http_stats(((const struct dy *)s)->h, out);
    return 0;
}

static const struct store_ops dynamodb_ops = {
    .name = "dynamodb",
    .close = dy_close,
    .get = dy_get,
    .put = dy_put,
    .del = dy_del,
    .update = dy_update,
    .query = dy_query,
    .transact = dy_transact,
    .batch_begin = dy_batch_begin,
    .batch_commit = dy_batch_commit,
    .batch_abort = dy_batch_abort,
    .stream_read = dy_stream_read,
    .stream_head = dy_stream_head,
    .checkpoint_get = dy_checkpoint_get,
    .checkpoint_set = dy_checkpoint_set,
    .stream_trim = dy_stream_trim,
    .purge_expired = dy_purge_expired,
    .health = dy_health,
    .no_stream = true,
    .partitions = dy_partitions,
    .write_seconds = dy_write_seconds,
    .counters_by_detector = true,
};

struct store *store_open_dynamodb(const struct store_dynamodb_options *o, char *err, size_t errlen)
{
    struct store_dynamodb_options dflt = {0};
    struct store_options base = {0};
    struct ddb_http_config cfg = {0};
    struct dy *d;
    const char *table;
    cJSON *desc = NULL;
    int rc;
    if (!o)
        o = &dflt;
    table = o->table && *o->table ? o->table : getenv("DYNAMODB_TABLE");
    if (!table || !*table)
        table = DDB_TABLE_DEFAULT;
    if (!ddb_table_name_ok(table)) {
        snprintf(err, errlen, "invalid DynamoDB table name");
        return NULL;
    }
    cfg.endpoint = o->endpoint;
    cfg.region = o->region;
    cfg.profile = o->profile;
    cfg.max_retries = o->max_retries;
    cfg.timeout_ms = o->timeout_ms;
    d = xcalloc(1, sizeof(*d));
    base.throttle = o->throttle;
    base.throttle_wcu = o->throttle_wcu;
    base.throttle_rcu = o->throttle_rcu;
    store_base_init(&d->base, &dynamodb_ops, &base);
    d->table = xstrdup(table);
    d->h = ddb_http_new(&cfg, err, errlen);
    if (!d->h)
        goto fail;
    rc = ddb_table_describe(d->h, d->table, &desc);
    cJSON_Delete(desc);
    if (rc) {
        snprintf(err, errlen, "DynamoDB table %s: %s%s", d->table, err_str(rc),
                 rc == ERR_NOTFOUND ? " (create it with `genuproof table create`)" : "");
        goto fail;
    }
    return &d->base;
fail:
    store_close(&d->base);
    return NULL;
}
