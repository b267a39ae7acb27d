/*
 * chain.c - a product's provenance chain: reading its head, listing its
 * events in seq order, the §4.4 integrity check, and the compare-and-swap
 * append of §4.5.
 *
 * Why a separate head item: the event sort keys begin with the event's
 * timestamp (so that time-ordered readers keep working), which means the
 * newest key is not necessarily the highest seq.  The head item gives the
 * current seq and hash in one read and is the compare-and-swap target:
 * two appenders that read the same head cannot both replace it.
 */
#include "core/chain.h"

#include <stdlib.h>
#include <string.h>

#include "core/keys.h"
#include "util/err.h"
#include "util/unittest.h"
#include "util/xalloc.h"

cJSON *chain_head_item_new(const char *product_id, uint32_t seq, const char *hash)
{
    struct key pk;
    cJSON *item;

    if (!product_id || !hash || !key_product_pk(&pk, product_id))
        return NULL;
    item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", KEY_SK_CHAIN);
    cJSON_AddStringToObject(item, "productId", product_id);
    cJSON_AddNumberToObject(item, "seq", (double)seq);
    cJSON_AddStringToObject(item, "hash", hash);
    return item;
}

/* One event during sorting: its effective order (seq, then position in
 * sort-key order for events written without seq). */
struct ordered {
    cJSON *item;
    uint32_t seq;
    size_t pos;
};

static int ordered_cmp(const void *a, const void *b)
{
    const struct ordered *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->pos < y->pos ? -1 : (x->pos > y->pos);
}

int chain_list(struct store *s, const char *product_id, cJSON **out)
{
    struct key pk;
    struct store_result res = {0};
    struct ordered *ev = NULL;
    size_t n = 0, cap = 0;
    char *cursor = NULL;
    cJSON *arr = NULL;
    int rc = 0;

    *out = NULL;
    if (!product_id || !key_product_pk(&pk, product_id))
        return ERR_INVALID;

    for (;;) {
        struct store_query q = {.index = STORE_INDEX_TABLE,
                                .pk = pk.s,
                                .sk_op = STORE_SK_BEGINS,
                                .sk = KEY_PFX_EVENT,
                                .forward = true,
                                .consistent = true,
                                .start = cursor};
        rc = store_query(s, &q, &res);
        free(cursor);
        cursor = NULL;
        if (rc)
            goto out;
        while (cJSON_GetArraySize(res.items) > 0) {
            cJSON *it = cJSON_DetachItemFromArray(res.items, 0);
            if (n == CHAIN_MAX_EVENTS) {
                cJSON_Delete(it);
                rc = ERR_TOOBIG;
                goto out;
            }
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                ev = xrealloc(ev, cap * sizeof *ev);
            }
            ev[n].item = it;
            ev[n].seq = event_item_seq(it);
            ev[n].pos = n;
            n++;
        }
        cursor = res.next;
        res.next = NULL;
        store_result_free(&res);
        if (!cursor)
            break;
    }

    if (n > 1)
        qsort(ev, n, sizeof *ev, ordered_cmp);
    arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON_AddItemToArray(arr, ev[i].item);
        ev[i].item = NULL;
    }
    *out = arr;
out:
    store_result_free(&res);
    free(cursor);
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(ev[i].item);
    free(ev);
    return rc;
}

static bool is_hex64(const char *s)
{
    if (!s || strlen(s) != CRYPTO_HEX_LEN)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

int chain_head_read(struct store *s, const char *product_id, struct chain_head *out)
{
    struct key pk;
    cJSON *item = NULL, *events = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    strcpy(out->hash, CRYPTO_GENESIS);
    if (!product_id || !key_product_pk(&pk, product_id))
        return ERR_INVALID;

    rc = store_get(s, pk.s, KEY_SK_CHAIN, true, &item);
    if (rc == 0) {
        const cJSON *seq = cJSON_GetObjectItemCaseSensitive(item, "seq");
        const char *hash = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, "hash"));
        if (!cJSON_IsNumber(seq) || seq->valuedouble < 0 ||
            seq->valuedouble > (double)CHAIN_MAX_EVENTS || !is_hex64(hash)) {
            rc = ERR_INTERNAL; /* a corrupt head: refuse to extend it */
            goto out;
        }
        out->seq = (uint32_t)seq->valuedouble;
        strcpy(out->hash, hash);
        out->has_item = true;
        goto out;
    }
    if (rc != ERR_NOTFOUND)
        goto out;

    /* No head item: an empty chain or one written by the original. */
    rc = chain_list(s, product_id, &events);
    if (rc)
        goto out;
    int n = cJSON_GetArraySize(events);
    if (n > 0) {
        const cJSON *last = cJSON_GetArrayItem(events, n - 1);
        const char *hash = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(last, "hash"));
        uint32_t seq = event_item_seq(last);
        out->seq = seq > (uint32_t)n ? seq : (uint32_t)n;
        if (hash && strlen(hash) <= CRYPTO_HEX_LEN)
            strcpy(out->hash, hash);
    }
out:
    cJSON_Delete(item);
    cJSON_Delete(events);
    return rc;
}

bool chain_valid(const cJSON *events)
{
    const char *prev = NULL;
    const cJSON *ev;
    char hash[CRYPTO_HEX_LEN + 1];

    cJSON_ArrayForEach(ev, events)
    {
        const char *stored = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "hash"));
        const char *ph = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "previousHash"));
        if (!stored || !ph)
            return false;
        if (strcmp(ph, prev ? prev : CRYPTO_GENESIS) != 0)
            return false;
        if (event_item_hash(ev, hash) != 0 || strcmp(hash, stored) != 0)
            return false;
        prev = stored;
    }
    return true;
}

int chain_genesis_items(const struct event_fields *f, cJSON **event_out, cJSON **head_out,
                        char hash_out[CRYPTO_HEX_LEN + 1])
{
    *event_out = event_item_new(f, 1, CRYPTO_GENESIS, hash_out);
    *head_out = *event_out ? chain_head_item_new(f->product_id, 1, hash_out) : NULL;
    if (!*event_out || !*head_out) {
        cJSON_Delete(*event_out);
        cJSON_Delete(*head_out);
        *event_out = *head_out = NULL;
        return ERR_INVALID;
    }
    return 0;
}

/*
 * One append attempt on top of the given head (UNITTEST: tests pass a
 * stale head to exercise the compare-and-swap).  Returns the result of
 * the transaction; *failed is its failing write on ERR_CONDITION.
 */
UNITTEST_STATIC int chain_append_once(struct store *s, const struct event_fields *f,
                                      const struct chain_head *head,
                                      const struct store_write *extra, size_t nextra,
                                      struct chain_appended *out, int *failed);
UNITTEST_STATIC int chain_append_once(struct store *s, const struct event_fields *f,
                                      const struct chain_head *head,
                                      const struct store_write *extra, size_t nextra,
                                      struct chain_appended *out, int *failed)
{
    struct store_write w[STORE_TRANSACT_MAX];
    char hash[CRYPTO_HEX_LEN + 1];
    cJSON *ev = NULL, *hd = NULL, *old_seq = NULL;
    int rc;

    *failed = -1;
    if (head->seq >= CHAIN_MAX_EVENTS)
        return ERR_TOOBIG;
    ev = event_item_new(f, head->seq + 1, head->hash, hash);
    hd = ev ? chain_head_item_new(f->product_id, head->seq + 1, hash) : NULL;
    if (!ev || !hd) {
        rc = ERR_INVALID;
        goto out;
    }
    w[0] = (struct store_write){
        .kind = STORE_W_PUT, .item = ev, .cond = {.kind = STORE_COND_NOT_EXISTS}};
    w[1] = (struct store_write){.kind = STORE_W_PUT, .item = hd};
    if (head->has_item) {
        old_seq = cJSON_CreateNumber((double)head->seq);
        w[1].cond =
            (struct store_cond){.kind = STORE_COND_ATTR_EQ, .attr = "seq", .value = old_seq};
    } else {
        w[1].cond = (struct store_cond){.kind = STORE_COND_NOT_EXISTS};
    }
    if (nextra)
        memcpy(&w[2], extra, nextra * sizeof *extra);
    rc = store_transact(s, w, nextra + 2, failed);
    if (rc == 0 && out) {
        out->seq = head->seq + 1;
        strcpy(out->hash, hash);
        strcpy(out->previous_hash, head->hash);
    }
out:
    cJSON_Delete(ev);
    cJSON_Delete(hd);
    cJSON_Delete(old_seq);
    return rc;
}

int chain_append(struct store *s, const struct event_fields *f, const struct store_write *extra,
                 size_t nextra, struct chain_appended *out, int *failed_extra)
{
    struct chain_head head;
    int rc = ERR_CONFLICT;

    if (failed_extra)
        *failed_extra = -1;
    if (!f || !f->product_id || nextra > STORE_TRANSACT_MAX - 2)
        return ERR_INVALID;

    for (int attempt = 0; attempt < CHAIN_APPEND_TRIES; attempt++) {
        int failed = -1;

        rc = chain_head_read(s, f->product_id, &head);
        if (rc)
            return rc;
        rc = chain_append_once(s, f, &head, extra, nextra, out, &failed);
        if (rc != ERR_CONDITION)
            return rc;
        if (failed >= 2) {
            if (failed_extra)
                *failed_extra = failed - 2;
            return ERR_CONDITION;
        }
        /* Lost the race for this seq: read the new head and try again. */
        rc = ERR_CONFLICT;
    }
    return rc;
}
