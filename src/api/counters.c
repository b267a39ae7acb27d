/*
 * counters.c - pending counter deltas of one group commit (counters.h).
 *
 * An open-addressing hash table (linear probing, power-of-two size, load
 * at most 1/2) indexes a dense entry array; clearing drops the strings
 * and resets both.  The table is rebuilt from scratch on growth, which is
 * rare: it keeps its size across commits.
 */
#include "api/counters.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/err.h"
#include "util/xalloc.h"

#define ATTR_MAX 128

struct counter_entry {
    char *pk, *sk, *attr;
    uint64_t hash;
    double delta;
};

struct counters {
    struct counter_entry *ents;
    size_t n, cap;   /* entries */
    uint32_t *slots; /* index + 1 into ents; 0 = empty */
    size_t nslots;   /* power of two */
};

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    /* separator so ("ab","c") and ("a","bc") differ */
    h ^= 0xff;
    h *= 1099511628211ULL;
    return h;
}

static uint64_t key_hash(const char *pk, const char *sk, const char *attr)
{
    return fnv(fnv(fnv(14695981039346656037ULL, pk), sk), attr);
}

struct counters *counters_new(void)
{
    struct counters *c = xcalloc(1, sizeof *c);
    c->nslots = 64;
    c->slots = xcalloc(c->nslots, sizeof *c->slots);
    return c;
}

void counters_clear(struct counters *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->ents[i].pk);
        free(c->ents[i].sk);
        free(c->ents[i].attr);
    }
    c->n = 0;
    memset(c->slots, 0, c->nslots * sizeof *c->slots);
}

void counters_free(struct counters *c)
{
    if (!c)
        return;
    counters_clear(c);
    free(c->ents);
    free(c->slots);
    free(c);
}

size_t counters_count(const struct counters *c)
{
    return c->n;
}

static struct counter_entry *find(const struct counters *c, const char *pk, const char *sk,
                                  const char *attr, uint64_t h, size_t *slot)
{
    size_t mask = c->nslots - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        uint32_t v = c->slots[i];
        if (!v) {
            *slot = i;
            return NULL;
        }
        struct counter_entry *e = &c->ents[v - 1];
        if (e->hash == h && !strcmp(e->pk, pk) && !strcmp(e->sk, sk) && !strcmp(e->attr, attr))
            return e;
    }
}

static void rehash(struct counters *c, size_t nslots)
{
    free(c->slots);
    c->nslots = nslots;
    c->slots = xcalloc(nslots, sizeof *c->slots);
    size_t mask = nslots - 1;
    for (size_t k = 0; k < c->n; k++) {
        size_t i = (size_t)c->ents[k].hash & mask;
        while (c->slots[i])
            i = (i + 1) & mask;
        c->slots[i] = (uint32_t)(k + 1);
    }
}

static bool key_ok(const char *pk, const char *sk, const char *attr)
{
    return pk && sk && attr && *pk && *sk && *attr && strlen(pk) <= STORE_PK_MAX &&
           strlen(sk) <= STORE_SK_MAX && strlen(attr) <= ATTR_MAX;
}

double counters_add(struct counters *c, const char *pk, const char *sk, const char *attr,
                    double delta)
{
    if (!key_ok(pk, sk, attr))
        return 0;
    uint64_t h = key_hash(pk, sk, attr);
    size_t slot;
    struct counter_entry *e = find(c, pk, sk, attr, h, &slot);
    if (e) {
        e->delta += delta;
        return e->delta;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 32;
        c->ents = xrealloc(c->ents, c->cap * sizeof *c->ents);
    }
    e = &c->ents[c->n++];
    e->pk = xstrdup(pk);
    e->sk = xstrdup(sk);
    e->attr = xstrdup(attr);
    e->hash = h;
    e->delta = delta;
    if (c->n * 2 > c->nslots)
        rehash(c, c->nslots * 2);
    else
        c->slots[slot] = (uint32_t)c->n;
    return delta;
}

double counters_pending(const struct counters *c, const char *pk, const char *sk, const char *attr)
{
    if (!key_ok(pk, sk, attr))
        return 0;
    size_t slot;
    const struct counter_entry *e = find(c, pk, sk, attr, key_hash(pk, sk, attr), &slot);
    return e ? e->delta : 0;
}

static int cmp_item(const void *a, const void *b)
{
    const struct counter_entry *x = a, *y = b;
    int r = strcmp(x->pk, y->pk);
    return r ? r : strcmp(x->sk, y->sk);
}

int counters_flush(struct counters *c, struct store *s)
{
    int rc = 0;
    if (c->n == 0)
        return 0;
    /* sorting invalidates the slot indexes; they are reset below */
    qsort(c->ents, c->n, sizeof *c->ents, cmp_item);
    struct store_action *acts = xcalloc(c->n, sizeof *acts);
    size_t i = 0;
    while (i < c->n && !rc) {
        size_t j = i, na = 0;
        while (j < c->n && !cmp_item(&c->ents[i], &c->ents[j])) {
            if (c->ents[j].delta != 0) {
                acts[na].kind = STORE_ACT_ADD;
                acts[na].attr = c->ents[j].attr;
                acts[na].delta = c->ents[j].delta;
                na++;
            }
            j++;
        }
        if (na)
            rc = store_update(s, c->ents[i].pk, c->ents[i].sk, acts, na, NULL, NULL);
        i = j;
    }
    free(acts);
    counters_clear(c);
    return rc;
}
