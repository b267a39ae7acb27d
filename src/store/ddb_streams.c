/*
 * ddb_streams.c - DynamoDB Streams over ddb_http (see ddb_streams.h).
 *
 * Every reply is treated as hostile: shard and record counts, string
 * lengths and sequence numbers are bounded and checked before use.
 */
#include "store/ddb_streams.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/ddb_marshal.h"
#include "util/err.h"
#include "util/xalloc.h"

#define T_DESCRIBE_TABLE  "DynamoDB_20120810.DescribeTable"
#define T_DESCRIBE_STREAM "DynamoDBStreams_20120810.DescribeStream"
#define T_ITERATOR        "DynamoDBStreams_20120810.GetShardIterator"
#define T_GET_RECORDS     "DynamoDBStreams_20120810.GetRecords"

/* Longest ARN, shard id and iterator accepted. */
#define ARN_MAX      2048
#define SHARD_ID_MAX 128
#define ITER_MAX     4096

static const char *str_at(const cJSON *o, const char *name, size_t max)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsString(v) || !*v->valuestring || strlen(v->valuestring) > max)
        return NULL;
    return v->valuestring;
}

static bool seq_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > DDBS_SEQ_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

int ddbs_seq_cmp(const char *a, const char *b)
{
    size_t na, nb;
    while (*a == '0' && a[1])
        a++;
    while (*b == '0' && b[1])
        b++;
    na = strlen(a);
    nb = strlen(b);
    if (na != nb)
        return na < nb ? -1 : 1;
    return strcmp(a, b);
}

/* ---------- stream and shards ---------- */

int ddbs_stream_arn(struct ddb_http *h, const char *table, char **arn)
{
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    const char *s;
    int rc;

    *arn = NULL;
    cJSON_AddStringToObject(req, "TableName", table);
    rc = ddb_call(h, T_DESCRIBE_TABLE, req, &resp, NULL);
    if (!rc) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(resp, "Table");
        s = str_at(t, "LatestStreamArn", ARN_MAX);
        if (s)
            *arn = xstrdup(s);
        else
            rc = ERR_NOTFOUND;
    }
    cJSON_Delete(req);
    cJSON_Delete(resp);
    return rc;
}

void ddbs_shards_free(struct ddbs_shard *sh, size_t n)
{
    for (size_t i = 0; sh && i < n; i++) {
        free(sh[i].id);
        free(sh[i].parent);
        free(sh[i].start_seq);
        free(sh[i].end_seq);
    }
    free(sh);
}

int ddbs_parse_shards(const cJSON *reply, struct ddbs_shard **sh, size_t *n, size_t *cap,
                      char **last)
{
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(reply, "StreamDescription");
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(desc, "Shards"), *it;
    const char *l;

    *last = NULL;
    if (!cJSON_IsObject(desc) || (arr && !cJSON_IsArray(arr)))
        return ERR_INVALID;
    cJSON_ArrayForEach(it, arr)
    {
        const cJSON *range = cJSON_GetObjectItemCaseSensitive(it, "SequenceNumberRange");
        const char *id = str_at(it, "ShardId", SHARD_ID_MAX);
        const char *parent = str_at(it, "ParentShardId", SHARD_ID_MAX);
        const char *start = str_at(range, "StartingSequenceNumber", DDBS_SEQ_MAX);
        const char *end = str_at(range, "EndingSequenceNumber", DDBS_SEQ_MAX);
        struct ddbs_shard *s;

        if (!id || (start && !seq_valid(start)) || (end && !seq_valid(end)))
            return ERR_INVALID;
        if (*n >= DDBS_SHARDS_MAX)
            return ERR_TOOBIG;
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 16;
            *sh = xrealloc(*sh, *cap * sizeof(**sh));
        }
        s = &(*sh)[(*n)++];
        s->id = xstrdup(id);
        s->parent = parent ? xstrdup(parent) : NULL;
        s->start_seq = start ? xstrdup(start) : NULL;
        s->end_seq = end ? xstrdup(end) : NULL;
    }
    l = str_at(desc, "LastEvaluatedShardId", SHARD_ID_MAX);
    if (l)
        *last = xstrdup(l);
    return 0;
}

int ddbs_describe(struct ddb_http *h, const char *arn, struct ddbs_shard **out, size_t *n)
{
    struct ddbs_shard *sh = NULL;
    size_t cnt = 0, cap = 0;
    char *last = NULL;
    int rc = 0, pages = 0;

    do {
        cJSON *req = cJSON_CreateObject(), *resp = NULL;
        char *next = NULL;

        cJSON_AddStringToObject(req, "StreamArn", arn);
        if (last)
            cJSON_AddStringToObject(req, "ExclusiveStartShardId", last);
        rc = ddb_call(h, T_DESCRIBE_STREAM, req, &resp, NULL);
        if (!rc)
            rc = ddbs_parse_shards(resp, &sh, &cnt, &cap, &next);
        cJSON_Delete(req);
        cJSON_Delete(resp);
        free(last);
        last = next;
        if (!rc && last && ++pages >= DDBS_PAGES_MAX)
            rc = ERR_TOOBIG;
    } while (!rc && last);
    free(last);
    if (rc) {
        ddbs_shards_free(sh, cnt);
        sh = NULL;
        cnt = 0;
    }
    *out = sh;
    *n = cnt;
    return rc;
}

static int shard_order(const void *pa, const void *pb)
{
    const struct ddbs_shard *a = pa, *b = pb;
    int c;

    if (a->start_seq && b->start_seq && (c = ddbs_seq_cmp(a->start_seq, b->start_seq)) != 0)
        return c;
    if (!a->start_seq != !b->start_seq)
        return a->start_seq ? -1 : 1;
    return strcmp(a->id, b->id);
}

void ddbs_sort_shards(struct ddbs_shard *sh, size_t n)
{
    if (n > 1)
        qsort(sh, n, sizeof(*sh), shard_order);
}

bool ddbs_shard_ready(const struct ddbs_shard *sh, size_t n, size_t i,
                      bool (*finished)(void *arg, const char *shard), void *arg)
{
    const char *parent = sh[i].parent;

    if (!parent)
        return true;
    for (size_t k = 0; k < n; k++)
        if (k != i && strcmp(sh[k].id, parent) == 0)
            return finished(arg, parent);
    return true; /* the parent was trimmed from the stream */
}

/* ---------- records ---------- */

int ddbs_iterator(struct ddb_http *h, const char *arn, const char *shard, const char *after_seq,
                  char **iter)
{
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    const char *it;
    int rc;

    *iter = NULL;
    cJSON_AddStringToObject(req, "StreamArn", arn);
    cJSON_AddStringToObject(req, "ShardId", shard);
    if (after_seq) {
        cJSON_AddStringToObject(req, "ShardIteratorType", "AFTER_SEQUENCE_NUMBER");
        cJSON_AddStringToObject(req, "SequenceNumber", after_seq);
    } else {
        cJSON_AddStringToObject(req, "ShardIteratorType", "TRIM_HORIZON");
    }
    rc = ddb_call(h, T_ITERATOR, req, &resp, NULL);
    if (!rc) {
        it = str_at(resp, "ShardIterator", ITER_MAX);
        if (it)
            *iter = xstrdup(it);
        else
            rc = ERR_INVALID;
    }
    cJSON_Delete(req);
    cJSON_Delete(resp);
    return rc;
}

void ddbs_record_clear(struct ddbs_record *r)
{
    free(r->r.pk);
    free(r->r.sk);
    cJSON_Delete(r->r.image);
    memset(r, 0, sizeof(*r));
}

void ddbs_records_free(struct ddbs_record *recs, size_t n)
{
    for (size_t i = 0; recs && i < n; i++)
        ddbs_record_clear(&recs[i]);
    free(recs);
}

/* The record's number, from 1 to 2^53 so that it is exact as a JSON
 * number (a dead letter's "seq", which POST /api/admin/dlq/replay takes
 * back): the sequence number when it fits, else a 53-bit hash of shard
 * and sequence number (real DynamoDB's are 21 digits and more). */
static uint64_t seq64(const char *shard, const char *seq)
{
    const uint64_t exact = 1ULL << 53;
    uint64_t v = 0, h = 1469598103934665603ULL;
    const char *s = seq;

    while (*s == '0' && s[1])
        s++;
    if (strlen(s) <= 16) {
        for (; *s; s++)
            v = v * 10 + (uint64_t)(*s - '0');
        if (v >= 1 && v <= exact)
            return v;
    }
    for (s = shard; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    h = (h ^ 0xffu) * 1099511628211ULL;
    for (s = seq; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    h &= exact - 1;
    return h ? h : 1;
}

int ddbs_record_from_json(const cJSON *rec, const char *shard, struct ddbs_record *out)
{
    const cJSON *db = cJSON_GetObjectItemCaseSensitive(rec, "dynamodb");
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(db, "Keys");
    const cJSON *img = cJSON_GetObjectItemCaseSensitive(db, "NewImage");
    const cJSON *when = cJSON_GetObjectItemCaseSensitive(db, "ApproximateCreationDateTime");
    const char *name = str_at(rec, "eventName", 16);
    const char *seq = str_at(db, "SequenceNumber", DDBS_SEQ_MAX);
    cJSON *k = NULL;
    const cJSON *pk, *sk;
    int rc = ERR_INVALID;

    memset(out, 0, sizeof(*out));
    if (!name || !seq || !seq_valid(seq) || !cJSON_IsObject(keys) || !shard)
        return ERR_INVALID;
    if (strcmp(name, "INSERT") == 0)
        out->r.kind = STORE_INSERT;
    else if (strcmp(name, "MODIFY") == 0)
        out->r.kind = STORE_MODIFY;
    else if (strcmp(name, "REMOVE") == 0)
        out->r.kind = STORE_REMOVE;
    else
        return ERR_INVALID;
    k = ddb_unmarshal_item(keys);
    pk = cJSON_GetObjectItemCaseSensitive(k, "PK");
    sk = cJSON_GetObjectItemCaseSensitive(k, "SK");
    if (!cJSON_IsString(pk) || !cJSON_IsString(sk) || strlen(pk->valuestring) > STORE_PK_MAX ||
        strlen(sk->valuestring) > STORE_SK_MAX)
        goto out;
    if (!det_pos_format(out->pos, shard, seq))
        goto out;
    memcpy(out->seq, seq, strlen(seq) + 1);
    out->r.seq = seq64(shard, seq);
    if (cJSON_IsNumber(when) && when->valuedouble > 0 && when->valuedouble < 1e13)
        out->r.ts_ms = (int64_t)(when->valuedouble * 1000.0);
    out->r.pk = xstrdup(pk->valuestring);
    out->r.sk = xstrdup(sk->valuestring);
    if (out->r.kind != STORE_REMOVE && img) {
        out->r.image = ddb_unmarshal_item(img);
        if (!out->r.image)
            goto out;
    }
    rc = 0;
out:
    cJSON_Delete(k);
    if (rc)
        ddbs_record_clear(out);
    return rc;
}

int ddbs_get_records(struct ddb_http *h, const char *shard, const char *iter, int limit,
                     struct ddbs_record **recs, size_t *n, char **next)
{
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    struct ddb_error e = {0};
    const cJSON *arr, *it;
    struct ddbs_record *out = NULL;
    size_t cnt = 0, total;
    const char *nx;
    int rc;

    *recs = NULL;
    *n = 0;
    *next = NULL;
    if (limit < 1)
        limit = 1;
    if (limit > DDBS_LIMIT_MAX)
        limit = DDBS_LIMIT_MAX;
    cJSON_AddStringToObject(req, "ShardIterator", iter);
    cJSON_AddNumberToObject(req, "Limit", limit);
    rc = ddb_call(h, T_GET_RECORDS, req, &resp, &e);
    if (rc) {
        if (strstr(e.type, "ExpiredIterator"))
            rc = ERR_TIMEOUT;
        else if (strstr(e.type, "TrimmedDataAccess"))
            rc = ERR_NOTFOUND;
        goto out;
    }
    arr = cJSON_GetObjectItemCaseSensitive(resp, "Records");
    if (arr && !cJSON_IsArray(arr)) {
        rc = ERR_INVALID;
        goto out;
    }
    total = (size_t)cJSON_GetArraySize(arr);
    if (total > (size_t)limit) {
        rc = ERR_INVALID;
        goto out;
    }
    if (total)
        out = xcalloc(total, sizeof(*out));
    cJSON_ArrayForEach(it, arr)
    {
        /* A record without usable keys or sequence number cannot be
         * processed nor parked: it is skipped (the checkpoint moves past
         * it with the next good record). */
        if (ddbs_record_from_json(it, shard, &out[cnt]) == 0)
            cnt++;
    }
    nx = str_at(resp, "NextShardIterator", ITER_MAX);
    if (nx)
        *next = xstrdup(nx);
out:
    if (rc) {
        ddbs_records_free(out, cnt);
    } else {
        *recs = out;
        *n = cnt;
    }
    cJSON_Delete(req);
    cJSON_Delete(resp);
    return rc;
}
