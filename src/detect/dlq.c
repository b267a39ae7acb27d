/*
 * dlq.c - dead-letter items of the detector (see dlq.h).
 *
 * The record's sequence number (20 digits) ends the sort key, so two
 * records parked in the same millisecond stay apart and re-parking the
 * same record (impossible while the checkpoint moves in the same
 * transaction, but cheap to guard) overwrites instead of duplicating.
 */
#include "detect/dlq.h"

#include <string.h>

#include "core/keys.h"
#include "core/timeutil.h"
#include "detect/process.h"
#include "util/err.h"

static const char *kind_name(enum store_change k)
{
    switch (k) {
    case STORE_INSERT:
        return "INSERT";
    case STORE_MODIFY:
        return "MODIFY";
    case STORE_REMOVE:
        return "REMOVE";
    }
    return "UNKNOWN";
}

cJSON *dlq_item_new(const struct stream_record *r, const char *reader, const char *error,
                    unsigned attempts, int64_t parked_ms)
{
    char parked[ISO_LEN + 1], rec_time[ISO_LEN + 1], err[DLQ_ERROR_MAX + 1];
    struct key pk, sk;
    cJSON *item;
    size_t n;

    if (!r)
        return NULL;
    time_iso(parked_ms, parked);
    time_iso(r->ts_ms, rec_time);
    if (!key_dlq_pk(&pk, parked) || !key_dlq_sk(&sk, parked, r->seq))
        return NULL;
    n = error ? strlen(error) : 0;
    if (n > DLQ_ERROR_MAX)
        n = DLQ_ERROR_MAX;
    memcpy(err, error ? error : "", n);
    err[n] = '\0';

    item = cJSON_CreateObject();
    if (!item)
        return NULL;
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", sk.s);
    cJSON_AddNumberToObject(item, "seq", (double)r->seq);
    cJSON_AddStringToObject(item, "reader", reader ? reader : "");
    cJSON_AddStringToObject(item, "kind", kind_name(r->kind));
    cJSON_AddStringToObject(item, "pk", r->pk ? r->pk : "");
    cJSON_AddStringToObject(item, "sk", r->sk ? r->sk : "");
    cJSON_AddStringToObject(item, "recordTime", rec_time);
    cJSON_AddStringToObject(item, "parkedAt", parked);
    cJSON_AddNumberToObject(item, "attempts", attempts);
    cJSON_AddStringToObject(item, "error", err);
    if (r->image && store_item_size(r->image) <= DLQ_IMAGE_MAX) {
        cJSON_AddItemToObject(item, "image", cJSON_Duplicate(r->image, 1));
        cJSON_AddFalseToObject(item, "imageOmitted");
    } else {
        cJSON_AddNullToObject(item, "image");
        cJSON_AddBoolToObject(item, "imageOmitted", r->image != NULL);
    }
    if (!cJSON_GetObjectItemCaseSensitive(item, "imageOmitted")) {
        cJSON_Delete(item);
        return NULL;
    }
    return item;
}

int dlq_list(struct store *s, const char *day, int limit, cJSON **items)
{
    struct key pk;
    struct store_query q;
    struct store_result res = {0};
    int rc;

    *items = NULL;
    if (!day || strlen(day) != 10 || limit < 1 || limit > 1000)
        return ERR_INVALID;
    {
        char ts[ISO_LEN + 1];
        int64_t ms;
        /* key_dlq_pk wants a timestamp; a bare date parses as midnight. */
        if (time_parse_iso(day, &ms))
            return ERR_INVALID;
        time_iso(ms, ts);
        if (memcmp(ts, day, 10) != 0 || !key_dlq_pk(&pk, ts))
            return ERR_INVALID;
    }
    memset(&q, 0, sizeof(q));
    q.index = STORE_INDEX_TABLE;
    q.pk = pk.s;
    q.limit = limit;
    q.forward = false;
    q.consistent = true;
    rc = store_query(s, &q, &res);
    if (rc)
        return rc;
    *items = res.items ? res.items : cJSON_CreateArray();
    res.items = NULL;
    store_result_free(&res);
    return *items ? 0 : ERR_NOMEM;
}

static const char *str_attr(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void dlq_write_json(struct jsonw *w, const cJSON *item)
{
    const cJSON *v;

    jsonw_obj(w);
    v = cJSON_GetObjectItemCaseSensitive(item, "seq");
    jsonw_key(w, "seq");
    if (cJSON_IsNumber(v))
        jsonw_num(w, v->valuedouble);
    else
        jsonw_null(w);
    jsonw_kstr(w, "reader", str_attr(item, "reader"));
    jsonw_kstr(w, "kind", str_attr(item, "kind"));
    jsonw_kstr(w, "pk", str_attr(item, "pk"));
    jsonw_kstr(w, "sk", str_attr(item, "sk"));
    jsonw_kstr(w, "recordTime", str_attr(item, "recordTime"));
    jsonw_kstr(w, "parkedAt", str_attr(item, "parkedAt"));
    v = cJSON_GetObjectItemCaseSensitive(item, "attempts");
    jsonw_key(w, "attempts");
    if (cJSON_IsNumber(v))
        jsonw_num(w, v->valuedouble);
    else
        jsonw_null(w);
    jsonw_kstr(w, "error", str_attr(item, "error"));
    if (str_attr(item, "streamPos")) /* parked by the Streams detector */
        jsonw_kstr(w, "streamPos", str_attr(item, "streamPos"));
    v = cJSON_GetObjectItemCaseSensitive(item, "image");
    jsonw_kjson(w, "image", cJSON_IsObject(v) ? v : NULL);
    jsonw_end(w);
}

double dlq_seq(const cJSON *item)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, "seq");
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* The sequence digits of a well-formed streamPos, else NULL. */
static const char *pos_of(const cJSON *item)
{
    const char *p = str_attr(item, "streamPos");
    if (!p || strlen(p) <= DET_POS_SEQ_DIGITS || p[DET_POS_SEQ_DIGITS] != '@')
        return NULL;
    return p;
}

int dlq_stream_order(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    const char *px = pos_of(x), *py = pos_of(y);
    if (px && py) {
        int c = memcmp(px, py, DET_POS_SEQ_DIGITS);
        if (c)
            return c < 0 ? -1 : 1;
        c = strcmp(px + DET_POS_SEQ_DIGITS, py + DET_POS_SEQ_DIGITS);
        if (c)
            return c < 0 ? -1 : 1;
    }
    double sx = dlq_seq(x), sy = dlq_seq(y);
    return sx < sy ? -1 : sx > sy;
}
