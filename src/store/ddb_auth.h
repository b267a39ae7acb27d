/*
 * ddb_auth.h - AWS request signing (Signature Version 4) and credentials
 * for the DynamoDB client (ddb_http.c): the environment variables and the
 * shared credentials file (INI, one section per profile).
 */
#ifndef GP_STORE_DDB_AUTH_H
#define GP_STORE_DDB_AUTH_H

#include <stddef.h>

/* Longest credentials file read; a larger one is refused. */
#define DDB_CREDS_FILE_MAX (256 * 1024)

struct ddb_creds {
    char key_id[129];
    char secret[129];
    char token[4097]; /* "" when none */
};

struct sigv4_header {
    const char *name; /* any case; signed lowercased */
    const char *value;
};

/*
 * Builds the Authorization header value of a request: method, path (as
 * sent, already URI-encoded, "/" when empty), query (without "?", may be
 * NULL; its parameters are sorted), the headers to sign (must include host
 * and x-amz-date; values are trimmed), the payload, amz_date
 * ("YYYYMMDDTHHMMSSZ"), region and service.  On success returns 0 with the
 * text in out.  On error returns ERR_TOOBIG (out too small or inputs over
 * bounds) or ERR_INVALID (malformed date, too many headers).
 */
int sigv4_authorization(const char *method, const char *path, const char *query,
                        const struct sigv4_header *hdrs, size_t nhdrs, const void *payload,
                        size_t plen, const char *amz_date, const char *region, const char *service,
                        const struct ddb_creds *cr, char *out, size_t outlen);

/*
 * Parses shared-credentials-file text (hostile input: lines and values are
 * bounded; comments start with # or ;) and fills out from the [profile]
 * section's aws_access_key_id, aws_secret_access_key and
 * aws_session_token.  On success returns 0.  ERR_NOTFOUND when the
 * profile or its two keys are missing, ERR_INVALID for an over-long value.
 */
int ddb_creds_parse(const char *text, size_t len, const char *profile, struct ddb_creds *out);

/*
 * Loads credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN when both keys are set, else the shared credentials
 * file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials) for profile
 * (NULL: AWS_PROFILE, else "default").  On error returns a negative ERR_*
 * with a message in err.
 */
int ddb_creds_load(const char *profile, struct ddb_creds *out, char *err, size_t errlen);

#endif
