/*
 * hash.h - FNV-1a over a C string, for the in-memory tables keyed by
 * product ids (the detector's state cache and product facts).  Not for
 * anything an adversary could exploit by choosing keys: the tables are
 * bounded and keyed by ids the store already holds.
 */
#ifndef GP_UTIL_HASH_H
#define GP_UTIL_HASH_H

#include <stdint.h>

static inline uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

#endif
