/*
 * classify_job.c - model classification jobs (classify_job.h).
 */
#include "detect/classify_job.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/keys.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Attribute names of the job item (besides PK, SK, GSI1PK, GSI1SK). */
#define A_ALERT_PK "alertPK"
#define A_ALERT_SK "alertSK"
#define A_ALERT_ID "alertId"
#define A_BRAND    "brandId"
#define A_PRODUCT  "productId"
#define A_TYPE     "type"
#define A_DETAILS  "details"
#define A_SEVERITY "severity"
#define A_FLAGS    "anomalyFlags"
#define A_COUNTRY  "country"
#define A_TIME     "alertTime"
#define A_RECORD   "recordId"
#define A_CREATED  "createdAt"
#define A_TTL      "ttl"

static const char *str_attr(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Copies s into out (size n) when it is a non-empty string without '#'
 * (ids become key components) that fits; else false. */
static bool copy_id(char *out, size_t n, const char *s)
{
    size_t len = s ? strlen(s) : 0;
    if (!len || len >= n || strchr(s, '#'))
        return false;
    memcpy(out, s, len + 1);
    return true;
}

/* Copies s (may be NULL: "") into out when it fits; else false, with
 * out "". */
static bool copy_opt(char *out, size_t n, const char *s)
{
    size_t len = s ? strlen(s) : 0;
    if (len >= n) {
        out[0] = '\0';
        return false;
    }
    memcpy(out, s ? s : "", len + 1);
    return true;
}

/* A copy of at most max bytes of s, cut before a UTF-8 continuation byte
 * so the text stays valid (the store refuses invalid UTF-8). */
static char *clip_utf8(const char *s, size_t max)
{
    size_t n = strnlen(s, max + 1);
    if (n > max) {
        n = max;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    return xstrndup(s, n);
}

bool classify_job_candidate(const struct stream_record *r)
{
    const cJSON *img = r->image, *ai;
    const char *src, *model;

    if (!img || (r->kind != STORE_INSERT && r->kind != STORE_MODIFY) || !r->pk || !r->sk ||
        !key_after(r->pk, KEY_PFX_THREAT) || !key_after(r->sk, KEY_PFX_ALERT))
        return false;
    src = str_attr(img, "source");
    ai = cJSON_GetObjectItemCaseSensitive(img, "aiAnalysis");
    model = str_attr(ai, "model");
    return src && !strcmp(src, "detector") && model && !strcmp(model, CLASSIFY_MODEL_RULES) &&
           !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(img, "resolved"));
}

void classify_job_clear(struct classify_job *j)
{
    free(j->alert_pk);
    free(j->alert_sk);
    free(j->product_id);
    free(j->details);
    memset(j, 0, sizeof *j);
}

/* The fields shared by a change record's image and a job item: every
 * attribute but the keys, the time and the record id.  strict (job
 * items, which this module wrote): refuse rather than drop or cut what is
 * out of bounds. */
static int fill_common(struct classify_job *j, const cJSON *o, bool strict)
{
    const char *pid = str_attr(o, A_PRODUCT), *det = str_attr(o, A_DETAILS);
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(o, A_FLAGS), *f;

    if (!copy_id(j->alert_id, sizeof j->alert_id, str_attr(o, A_ALERT_ID)) ||
        !brand_id_ok(str_attr(o, A_BRAND)) ||
        !copy_id(j->brand_id, sizeof j->brand_id, str_attr(o, A_BRAND)) ||
        !copy_id(j->type, sizeof j->type, str_attr(o, A_TYPE)))
        return ERR_INVALID;
    /* context for the model only: from a record, drop what is too long */
    if (!copy_opt(j->rule_severity, sizeof j->rule_severity, str_attr(o, A_SEVERITY)) && strict)
        return ERR_INVALID;
    if (!copy_opt(j->country, sizeof j->country, str_attr(o, A_COUNTRY)) && strict)
        return ERR_INVALID;
    if (pid) {
        if (strlen(pid) > STORE_PK_MAX)
            return ERR_INVALID;
        j->product_id = xstrdup(pid);
    }
    if (det) {
        if (strict && strlen(det) > CLASSIFY_JOB_DETAILS_MAX)
            return ERR_INVALID;
        j->details = clip_utf8(det, CLASSIFY_JOB_DETAILS_MAX);
    }
    if (fl && !cJSON_IsArray(fl) && strict)
        return ERR_INVALID;
    cJSON_ArrayForEach(f, fl)
    {
        bool ok = cJSON_IsString(f) && j->nflags < CLASSIFY_JOB_FLAGS_MAX &&
                  copy_id(j->flags[j->nflags], sizeof j->flags[0], f->valuestring);
        if (ok)
            j->nflags++;
        else if (strict)
            return ERR_INVALID;
    }
    return 0;
}

/* The alert's keys are an alert's (THREAT#..., ALERT#<ts>#<type>#<id>)
 * and name alert id: the model's write can only land on that alert. */
static bool alert_keys_ok(const char *pk, const char *sk, const char *id)
{
    char ts[25], type[CLASSIFY_JOB_TYPE_MAX + 1], sk_id[CLASSIFY_JOB_ID_MAX + 1];

    return key_after(pk, KEY_PFX_THREAT) &&
           !key_parse_alert_sk(sk, ts, type, sizeof type, sk_id, sizeof sk_id) &&
           !strcmp(sk_id, id);
}

int classify_job_from_record(const struct stream_record *r, struct classify_job *j)
{
    const cJSON *img = r->image;
    const char *ts = str_attr(img, "lastSeen");
    int rc;

    memset(j, 0, sizeof *j);
    if (!ts || !time_is_iso(ts))
        ts = str_attr(img, "timestamp");
    if (!img || !r->pk || !r->sk || strlen(r->pk) > STORE_PK_MAX || strlen(r->sk) > STORE_SK_MAX ||
        !ts || !time_is_iso(ts))
        return ERR_INVALID;
    rc = fill_common(j, img, false);
    if (!rc && !alert_keys_ok(r->pk, r->sk, j->alert_id))
        rc = ERR_INVALID;
    if (rc) {
        classify_job_clear(j);
        return rc;
    }
    j->alert_pk = xstrdup(r->pk);
    j->alert_sk = xstrdup(r->sk);
    memcpy(j->alert_time, ts, ISO_LEN + 1);
    snprintf(j->record_id, sizeof j->record_id, "m%" PRIu64, r->seq);
    return 0;
}

cJSON *classify_job_item(const struct classify_job *j, int64_t now_ms)
{
    struct key pk, gsk;
    char created[ISO_LEN + 1];
    cJSON *it, *fl;

    if (!key_classify_job_pk(&pk, j->alert_id) ||
        !key_classify_job_gsi1sk(&gsk, j->alert_time, j->alert_id))
        return NULL;
    time_iso(now_ms, created);
    it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", pk.s);
    cJSON_AddStringToObject(it, "SK", KEY_SK_CLASSIFY_JOB);
    cJSON_AddStringToObject(it, "GSI1PK", KEY_GSI1PK_CLASSIFY_PENDING);
    cJSON_AddStringToObject(it, "GSI1SK", gsk.s);
    cJSON_AddStringToObject(it, A_ALERT_PK, j->alert_pk);
    cJSON_AddStringToObject(it, A_ALERT_SK, j->alert_sk);
    cJSON_AddStringToObject(it, A_ALERT_ID, j->alert_id);
    cJSON_AddStringToObject(it, A_BRAND, j->brand_id);
    if (j->product_id)
        cJSON_AddStringToObject(it, A_PRODUCT, j->product_id);
    cJSON_AddStringToObject(it, A_TYPE, j->type);
    if (j->details)
        cJSON_AddStringToObject(it, A_DETAILS, j->details);
    if (j->rule_severity[0])
        cJSON_AddStringToObject(it, A_SEVERITY, j->rule_severity);
    fl = cJSON_AddArrayToObject(it, A_FLAGS);
    for (size_t i = 0; i < j->nflags; i++)
        cJSON_AddItemToArray(fl, cJSON_CreateString(j->flags[i]));
    if (j->country[0])
        cJSON_AddStringToObject(it, A_COUNTRY, j->country);
    cJSON_AddStringToObject(it, A_TIME, j->alert_time);
    cJSON_AddStringToObject(it, A_RECORD, j->record_id);
    cJSON_AddStringToObject(it, A_CREATED, created);
    /* free: the detector's put (and re-put) hands the job to whoever
     * claims it first */
    cJSON_AddStringToObject(it, KEY_ATTR_CLAIM_TOKEN, "");
    cJSON_AddNumberToObject(it, A_TTL, (double)(now_ms / 1000 + CLASSIFY_JOB_TTL_S));
    return it;
}

/* True when rid looks like a record id: "m" then 1-20 digits. */
static bool record_id_ok(const char *rid)
{
    size_t n = rid ? strlen(rid) : 0;
    if (n < 2 || n > CLASSIFY_JOB_RID_MAX || rid[0] != 'm')
        return false;
    for (size_t i = 1; i < n; i++)
        if (rid[i] < '0' || rid[i] > '9')
            return false;
    return true;
}

int classify_job_parse(const cJSON *item, struct classify_job *j)
{
    const char *apk = str_attr(item, A_ALERT_PK), *ask = str_attr(item, A_ALERT_SK);
    const char *ts = str_attr(item, A_TIME), *rid = str_attr(item, A_RECORD);
    const char *pk = str_attr(item, "PK");
    struct key want;
    int rc;

    memset(j, 0, sizeof *j);
    if (!cJSON_IsObject(item) || !apk || !ask || !key_after(apk, KEY_PFX_THREAT) ||
        !key_after(ask, KEY_PFX_ALERT) || strlen(apk) > STORE_PK_MAX ||
        strlen(ask) > STORE_SK_MAX || !ts || !time_is_iso(ts) || !record_id_ok(rid))
        return ERR_INVALID;
    rc = fill_common(j, item, true);
    /* the job names the alert it is keyed by, or it is not one of ours;
     * and the alert's sort key ends with that id (ALERT#<ts>#<type>#<id>),
     * so a crafted job cannot aim the model's write at another alert */
    if (!rc && (!pk || !key_classify_job_pk(&want, j->alert_id) || strcmp(pk, want.s)))
        rc = ERR_INVALID;
    if (!rc && !alert_keys_ok(apk, ask, j->alert_id))
        rc = ERR_INVALID;
    if (rc) {
        classify_job_clear(j);
        return rc;
    }
    j->alert_pk = xstrdup(apk);
    j->alert_sk = xstrdup(ask);
    memcpy(j->alert_time, ts, ISO_LEN + 1);
    memcpy(j->record_id, rid, strlen(rid) + 1);
    return 0;
}

void classify_job_input(const struct classify_job *j, struct classify_model_input *in,
                        const char *flags[CLASSIFY_JOB_FLAGS_MAX])
{
    for (size_t i = 0; i < j->nflags; i++)
        flags[i] = j->flags[i];
    *in = (struct classify_model_input){
        .type = j->type,
        .details = j->details,
        .rule_severity = j->rule_severity[0] ? j->rule_severity : NULL,
        .flags = flags,
        .nflags = j->nflags,
        .country = j->country[0] ? j->country : NULL,
    };
}

int classify_jobs_collect(const struct ddbs_record *recs, size_t n, int64_t now_ms,
                          const struct ddbd_sink *sink)
{
    /* alerts that already have their job in this batch (pointers into
     * the records' images) */
    const char **done;
    size_t ndone = 0;
    int rc = 0;

    if (!n)
        return 0;
    done = xcalloc(n, sizeof *done);
    /* from the end: the alert's last candidate carries its newest state */
    for (size_t i = n; !rc && i-- > 0;) {
        const struct stream_record *r = &recs[i].r;
        struct classify_job j;
        const char *id;
        bool seen = false;
        cJSON *item;

        if (!classify_job_candidate(r))
            continue;
        id = str_attr(r->image, A_ALERT_ID);
        for (size_t k = 0; id && k < ndone && !seen; k++)
            seen = !strcmp(done[k], id);
        if (!id || seen || classify_job_from_record(r, &j))
            continue;
        item = classify_job_item(&j, now_ms);
        classify_job_clear(&j);
        if (!item)
            continue;
        done[ndone++] = id;
        /* careful (a retry): a job still pending (maybe from a newer
         * state) or taken by a process stays as it is */
        rc = ddbd_sink_put(sink, item);
    }
    free(done);
    return rc;
}

cJSON *classify_presence_item(int64_t until_ms, int64_t now_ms)
{
    cJSON *it = cJSON_CreateObject();
    if (!it)
        return NULL;
    cJSON_AddStringToObject(it, "PK", KEY_PK_CLASSIFIER);
    cJSON_AddStringToObject(it, "SK", KEY_SK_PRESENCE);
    cJSON_AddNumberToObject(it, "until", (double)until_ms);
    cJSON_AddNumberToObject(it, A_TTL, (double)(now_ms / 1000 + CLASSIFY_JOB_TTL_S));
    return it;
}

int64_t classify_presence_until(const cJSON *item)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, "until");
    /* epoch ms up to the year 9999 */
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0 && v->valuedouble < 253402300800000.0))
        return 0;
    return (int64_t)v->valuedouble;
}
