/*
 * ddb_http.h - calls to the DynamoDB and DynamoDB Streams JSON APIs over
 * HTTPS/HTTP with libcurl: SigV4 signing, credentials, endpoint and
 * region, keep-alive connection reuse, retries with exponential backoff
 * and full jitter on throttling and 5xx, a bounded retry budget, and
 * parallel calls through curl multi (scatter-gather reads).
 *
 * Calls are synchronous for the caller (the store interface is), but a
 * group of calls given to ddb_call_many() runs concurrently.  Waits scale
 * by GENUPROOF_TIME_SCALE.  Secrets are never logged.
 *
 * Targets are the X-Amz-Target values, e.g. "DynamoDB_20120810.GetItem"
 * or "DynamoDBStreams_20120810.GetRecords" (DynamoDB Local serves both on
 * one endpoint; on AWS the Streams endpoint is streams.dynamodb.<region>).
 */
#ifndef GP_STORE_DDB_HTTP_H
#define GP_STORE_DDB_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

struct ddb_http;

struct ddb_http_config {
    const char *endpoint;         /* NULL: AWS_ENDPOINT_URL_DYNAMODB, else
                                     https://dynamodb.<region>.amazonaws.com */
    const char *streams_endpoint; /* NULL: same host rule with "streams.dynamodb." (or endpoint when
                                     it was given) */
    const char *region;           /* NULL: AWS_REGION, AWS_DEFAULT_REGION, else us-east-1 */
    const char *profile;          /* NULL: AWS_PROFILE, else "default" (shared credentials file) */
    int max_retries;              /* 0 -> 8 attempts after the first */
    long timeout_ms;              /* per attempt; 0 -> 10000 */
};

/* The error of a failed call. */
struct ddb_error {
    int http_status; /* 0: transport error */
    char type[96]; /* "ConditionalCheckFailedException", "ThrottlingException", ... ("" if none) */
    char message[256];
    bool retryable;
};

/* Creates a client; credentials come from AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the shared credentials
 * file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials) for the
 * profile.  NULL with a message in err when none are found. */
struct ddb_http *ddb_http_new(const struct ddb_http_config *cfg, char *err, size_t errlen);
void ddb_http_free(struct ddb_http *h);

/*
 * One call: POSTs req (serialized compactly) with the target, retrying
 * retryable failures (throttling, 5xx, transport) with backoff and full
 * jitter within the retry budget.  On success returns 0 with the parsed
 * body in *resp (caller frees).  On error returns ERR_CONDITION for
 * ConditionalCheckFailedException / TransactionCanceledException with a
 * condition failure, ERR_THROTTLED when retries ran out on throttling,
 * ERR_INVALID for ValidationException, ERR_NOTFOUND for
 * ResourceNotFoundException, ERR_UNAVAILABLE/ERR_IO otherwise; *resp is
 * then the error body when there was one (may be NULL) and e (may be
 * NULL) is filled.
 */
int ddb_call(struct ddb_http *h, const char *target, const cJSON *req, cJSON **resp,
             struct ddb_error *e);

/* One call of a concurrent group. */
struct ddb_call_slot {
    const char *target;
    const cJSON *req;
    cJSON *resp;          /* out */
    int rc;               /* out: as ddb_call */
    struct ddb_error err; /* out */
};
/* Runs n calls concurrently (each with its own retries).  Returns 0 when
 * every slot succeeded, else the first failing slot's rc. */
int ddb_call_many(struct ddb_http *h, struct ddb_call_slot *slots, size_t n);

/* Calls made, retries and throttles seen, consumed capacity summed from
 * ConsumedCapacity in replies (for audit and metrics). */
struct ddb_http_stats {
    unsigned long calls, retries, throttles, failures;
    double consumed_wcu, consumed_rcu;
};
void ddb_http_stats(const struct ddb_http *h, struct ddb_http_stats *out);

/* Classifies a failed call from e->http_status (0: transport error) and
 * e->type, with the error body (may be NULL; TransactionCanceledException
 * looks at its CancellationReasons).  Sets e->retryable and returns the
 * ERR_* that ddb_call reports for it (before retries run out). */
int ddb_error_classify(struct ddb_error *e, const cJSON *body);

/* The full-jitter delay before retry number attempt (0-based), unscaled
 * seconds: u (uniform in [0, 1]) times min(5 s, 0.05 s * 2^attempt). */
double ddb_backoff_delay(int attempt, double u);

#endif
