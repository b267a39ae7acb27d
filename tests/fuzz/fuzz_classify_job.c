/*
 * fuzz_classify_job.c - classification jobs (detect/classify_job.c) from
 * hostile JSON.  The input is read as a job item taken from the table
 * (classify_job_parse) and as the image of a change record of an alert
 * (classify_job_candidate, classify_job_from_record).  A job that parses
 * must build an item again, that item must parse to the same job (the
 * round trip the detector and the API processes rely on), and the model
 * input built from it must stay within the job's bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect/classify_job.h"
#include "detect/classify_model.h"
#include "store/item_json.h"

#define NOW_MS 1796425195165LL

static void check_input(const struct classify_job *j)
{
    const char *flags[CLASSIFY_JOB_FLAGS_MAX];
    struct classify_model_input in;

    classify_job_input(j, &in, flags);
    if (!in.type || strcmp(in.type, j->type) || in.nflags != j->nflags ||
        in.nflags > CLASSIFY_JOB_FLAGS_MAX)
        abort();
    for (size_t i = 0; i < in.nflags; i++)
        if (strlen(in.flags[i]) > CLASSIFY_JOB_TYPE_MAX)
            abort();
}

static void same_job(const struct classify_job *a, const struct classify_job *b)
{
    if (strcmp(a->alert_id, b->alert_id) || strcmp(a->brand_id, b->brand_id) ||
        strcmp(a->type, b->type) || strcmp(a->alert_time, b->alert_time) ||
        strcmp(a->record_id, b->record_id) || strcmp(a->rule_severity, b->rule_severity) ||
        strcmp(a->country, b->country) || a->nflags != b->nflags ||
        !a->product_id != !b->product_id || !a->details != !b->details ||
        (a->product_id && strcmp(a->product_id, b->product_id)) ||
        (a->details && strcmp(a->details, b->details)))
        abort();
    for (size_t i = 0; i < a->nflags; i++)
        if (strcmp(a->flags[i], b->flags[i]))
            abort();
}

/* A parsed job builds an item that parses to the same job. */
static void round_trip(const struct classify_job *j)
{
    struct classify_job again;
    cJSON *item = classify_job_item(j, NOW_MS);

    if (!item)
        abort();
    memset(&again, 0, sizeof again);
    if (classify_job_parse(item, &again))
        abort();
    same_job(j, &again);
    classify_job_clear(&again);
    cJSON_Delete(item);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *item = item_json_parse((const char *)data, size);
    struct classify_job j;
    const cJSON *pk, *sk;

    if (!item)
        return 0;
    memset(&j, 0, sizeof j);
    if (classify_job_parse(item, &j) == 0) {
        check_input(&j);
        round_trip(&j);
    }
    classify_job_clear(&j);

    /* the same object as the image of an alert's change record */
    pk = cJSON_GetObjectItemCaseSensitive(item, "PK");
    sk = cJSON_GetObjectItemCaseSensitive(item, "SK");
    if (cJSON_IsString(pk) && cJSON_IsString(sk)) {
        struct stream_record r = {.seq = 42,
                                  .ts_ms = NOW_MS,
                                  .kind = size % 2 ? STORE_MODIFY : STORE_INSERT,
                                  .pk = pk->valuestring,
                                  .sk = sk->valuestring,
                                  .image = item};
        if (classify_job_candidate(&r)) {
            memset(&j, 0, sizeof j);
            if (classify_job_from_record(&r, &j) == 0) {
                check_input(&j);
                round_trip(&j);
            }
            classify_job_clear(&j);
        }
    }
    cJSON_Delete(item);
    return 0;
}
