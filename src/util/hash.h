/*
 * hash.h - FNV-1a over C strings, for in-memory tables keyed by ids and
 * item keys the store already holds (the detector's caches, a driver's
 * recently written keys, the webhook queue).  Not for anything an
 * adversary could exploit by choosing keys: the tables are bounded.
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

/* Of the pair (a, b), with a separator byte between them (NULL: ""). */
static inline uint64_t hash_pair(const char *a, const char *b)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *s = a; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    h = (h ^ 0xffu) * 1099511628211ULL;
    for (const char *s = b; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

#endif
