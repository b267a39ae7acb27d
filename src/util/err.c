/*
 * err.c - names for the ERR_* codes of err.h.
 */
#include "util/err.h"

const char *err_str(int code)
{
    switch (code) {
    case ERR_OK:
        return "ok";
    case ERR_NOMEM:
        return "out of memory";
    case ERR_IO:
        return "i/o error";
    case ERR_NOTFOUND:
        return "not found";
    case ERR_CONDITION:
        return "condition failed";
    case ERR_THROTTLED:
        return "throttled";
    case ERR_INVALID:
        return "invalid input";
    case ERR_TOOBIG:
        return "too big";
    case ERR_CONFLICT:
        return "conflict";
    case ERR_TIMEOUT:
        return "timeout";
    case ERR_INTERNAL:
        return "internal error";
    case ERR_UNAVAILABLE:
        return "unavailable";
    default:
        return "unknown error";
    }
}
