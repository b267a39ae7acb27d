/*
 * err.h - error codes shared by every module.
 *
 * Functions return int: 0 (ERR_OK) on success, a negative ERR_* on failure.
 * Constructors return NULL instead.  err_str() names a code for logs and
 * JSON error bodies; it never returns NULL.
 */
#ifndef GP_UTIL_ERR_H
#define GP_UTIL_ERR_H

enum {
    ERR_OK = 0,
    ERR_NOMEM = -1,       /* allocation failed (only for capped, input-sized buffers) */
    ERR_IO = -2,          /* system call or storage engine failure */
    ERR_NOTFOUND = -3,    /* the addressed item/resource does not exist */
    ERR_CONDITION = -4,   /* a write's condition failed (DynamoDB ConditionalCheckFailed) */
    ERR_THROTTLED = -5,   /* capacity emulation / remote throttling */
    ERR_INVALID = -6,     /* malformed input */
    ERR_TOOBIG = -7,      /* input exceeds a configured bound */
    ERR_CONFLICT = -8,    /* concurrent modification, retry */
    ERR_TIMEOUT = -9,     /* an operation ran out of time */
    ERR_INTERNAL = -10,   /* bug or unexpected state */
    ERR_UNAVAILABLE = -11 /* backend cannot be reached */
};

const char *err_str(int code);

#endif
