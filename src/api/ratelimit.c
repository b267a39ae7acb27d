/*
 * ratelimit.c - token buckets keyed by client IP (ratelimit.h).
 *
 * Storage is fixed at creation: an entry array of max_clients buckets, a
 * chained hash index (bucket heads + next indices) and a doubly linked
 * LRU list through the entries, all by 32-bit index.  A lookup hashes the
 * key with a per-table random seed (so a client cannot aim collisions at
 * one chain), and a hit moves the entry to the LRU head; a miss on a full
 * table reuses the LRU tail.  Nothing allocates after rl_new().
 */
#include "api/ratelimit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "util/xalloc.h"

#define NIL UINT32_MAX

struct rl_entry {
    char key[RL_KEY_MAX + 1];
    double tokens;
    int64_t last_ms;
    uint32_t hnext;      /* next in hash chain */
    uint32_t prev, next; /* LRU list: head = most recent */
    uint32_t bucket;
};

struct ratelimit {
    double rate, burst;
    struct rl_entry *ents;
    size_t cap, used;
    uint32_t *heads; /* hash bucket -> first entry */
    size_t nheads;   /* power of two */
    uint32_t lru_head, lru_tail;
    uint64_t seed;
};

static uint64_t rl_hash(const struct ratelimit *rl, const char *s)
{
    uint64_t h = 14695981039346656037ULL ^ rl->seed;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return h;
}

struct ratelimit *rl_new(double rate, double burst, size_t max_clients)
{
    if (!(rate > 0) || !(burst >= 1) || max_clients == 0 || max_clients >= NIL)
        return NULL;
    struct ratelimit *rl = xcalloc(1, sizeof *rl);
    rl->rate = rate;
    rl->burst = burst;
    rl->cap = max_clients;
    rl->ents = xcalloc(max_clients, sizeof *rl->ents);
    rl->nheads = 1;
    while (rl->nheads < max_clients)
        rl->nheads <<= 1;
    rl->heads = xmalloc(rl->nheads * sizeof *rl->heads);
    for (size_t i = 0; i < rl->nheads; i++)
        rl->heads[i] = NIL;
    rl->lru_head = rl->lru_tail = NIL;
    ids_random(&rl->seed, sizeof rl->seed);
    return rl;
}

void rl_free(struct ratelimit *rl)
{
    if (!rl)
        return;
    free(rl->ents);
    free(rl->heads);
    free(rl);
}

size_t rl_clients(const struct ratelimit *rl)
{
    return rl->used;
}

static void lru_unlink(struct ratelimit *rl, uint32_t i)
{
    struct rl_entry *e = &rl->ents[i];
    if (e->prev != NIL)
        rl->ents[e->prev].next = e->next;
    else
        rl->lru_head = e->next;
    if (e->next != NIL)
        rl->ents[e->next].prev = e->prev;
    else
        rl->lru_tail = e->prev;
    e->prev = e->next = NIL;
}

static void lru_push_front(struct ratelimit *rl, uint32_t i)
{
    struct rl_entry *e = &rl->ents[i];
    e->prev = NIL;
    e->next = rl->lru_head;
    if (rl->lru_head != NIL)
        rl->ents[rl->lru_head].prev = i;
    rl->lru_head = i;
    if (rl->lru_tail == NIL)
        rl->lru_tail = i;
}

static void hash_remove(struct ratelimit *rl, uint32_t i)
{
    uint32_t *p = &rl->heads[rl->ents[i].bucket];
    while (*p != NIL && *p != i)
        p = &rl->ents[*p].hnext;
    if (*p == i)
        *p = rl->ents[i].hnext;
}

/* Finds or creates the entry of key (already cut to RL_KEY_MAX). */
static struct rl_entry *lookup(struct ratelimit *rl, const char *key, int64_t now_ms)
{
    uint32_t b = (uint32_t)(rl_hash(rl, key) & (rl->nheads - 1));
    for (uint32_t i = rl->heads[b]; i != NIL; i = rl->ents[i].hnext) {
        if (!strcmp(rl->ents[i].key, key)) {
            if (rl->lru_head != i) {
                lru_unlink(rl, i);
                lru_push_front(rl, i);
            }
            return &rl->ents[i];
        }
    }
    uint32_t i;
    if (rl->used < rl->cap) {
        i = (uint32_t)rl->used++;
    } else {
        i = rl->lru_tail; /* evict the least recently used client */
        hash_remove(rl, i);
        lru_unlink(rl, i);
    }
    struct rl_entry *e = &rl->ents[i];
    snprintf(e->key, sizeof e->key, "%s", key);
    e->tokens = rl->burst;
    e->last_ms = now_ms;
    e->bucket = b;
    e->hnext = rl->heads[b];
    rl->heads[b] = i;
    lru_push_front(rl, i);
    return e;
}

bool rl_take(struct ratelimit *rl, const char *client, int64_t now_ms, int *retry_after_s)
{
    char key[RL_KEY_MAX + 1];
    snprintf(key, sizeof key, "%s", client ? client : "");
    struct rl_entry *e = lookup(rl, key, now_ms);
    if (now_ms > e->last_ms) {
        e->tokens += (double)(now_ms - e->last_ms) * rl->rate / 1000.0;
        if (e->tokens > rl->burst)
            e->tokens = rl->burst;
    }
    /* a clock going backwards must not mint tokens: keep the later stamp */
    if (now_ms > e->last_ms)
        e->last_ms = now_ms;
    if (e->tokens >= 1.0) {
        e->tokens -= 1.0;
        return true;
    }
    if (retry_after_s) {
        double wait = ceil((1.0 - e->tokens) / rl->rate);
        *retry_after_s = wait < 1 ? 1 : wait > 86400 ? 86400 : (int)wait;
    }
    return false;
}
