/*
 * facts.c - see facts.h.  A chained hash table over an array of entries;
 * entries are only ever added (or all dropped at once).
 */
#include "detect/facts.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/xalloc.h"

#define NIL UINT32_MAX

struct ent {
    char *pid;
    uint64_t h;
    uint32_t next;
    struct det_fact f;
};

struct det_facts {
    struct ent *e;
    size_t n, cap, max;
    uint32_t *bucket;
    size_t mask;
};

static void rehash(struct det_facts *f, size_t nb)
{
    free(f->bucket);
    f->bucket = xmalloc(nb * sizeof(*f->bucket));
    memset(f->bucket, 0xff, nb * sizeof(*f->bucket));
    f->mask = nb - 1;
    for (size_t i = 0; i < f->n; i++) {
        uint32_t *b = &f->bucket[f->e[i].h & f->mask];
        f->e[i].next = *b;
        *b = (uint32_t)i;
    }
}

struct det_facts *det_facts_new(size_t max_entries)
{
    struct det_facts *f = xcalloc(1, sizeof(*f));
    f->max = max_entries ? max_entries : DET_FACTS_DEFAULT;
    if (f->max > (size_t)1 << 24)
        f->max = (size_t)1 << 24;
    rehash(f, 64);
    return f;
}

void det_facts_clear(struct det_facts *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        free(f->e[i].pid);
        free(f->e[i].f.brand);
    }
    f->n = 0;
    memset(f->bucket, 0xff, (f->mask + 1) * sizeof(*f->bucket));
}

void det_facts_free(struct det_facts *f)
{
    if (!f)
        return;
    det_facts_clear(f);
    free(f->e);
    free(f->bucket);
    free(f);
}

size_t det_facts_count(const struct det_facts *f)
{
    return f ? f->n : 0;
}

static struct ent *find(const struct det_facts *f, const char *pid, uint64_t h)
{
    for (uint32_t i = f->bucket[h & f->mask]; i != NIL; i = f->e[i].next)
        if (f->e[i].h == h && !strcmp(f->e[i].pid, pid))
            return &f->e[i];
    return NULL;
}

const struct det_fact *det_facts_get(const struct det_facts *f, const char *product_id)
{
    const struct ent *e = f && product_id ? find(f, product_id, hash_str(product_id)) : NULL;
    return e ? &e->f : NULL;
}

/* The entry of pid, added when missing (the table starts over when full). */
static struct det_fact *slot(struct det_facts *f, const char *pid)
{
    uint64_t h = hash_str(pid);
    struct ent *e = find(f, pid, h);
    uint32_t *b;

    if (e)
        return &e->f;
    if (f->n >= f->max)
        det_facts_clear(f);
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 64;
        f->e = xrealloc(f->e, f->cap * sizeof(*f->e));
    }
    if (f->n > f->mask)
        rehash(f, (f->mask + 1) * 2);
    e = &f->e[f->n];
    memset(e, 0, sizeof(*e));
    e->pid = xstrdup(pid);
    e->h = h;
    b = &f->bucket[h & f->mask];
    e->next = *b;
    *b = (uint32_t)f->n;
    f->n++;
    return &e->f;
}

void det_facts_put_meta(struct det_facts *f, const char *product_id, const char *brand,
                        bool has_created, int64_t created_ms)
{
    struct det_fact *x;
    if (!f || !product_id || !brand)
        return;
    x = slot(f, product_id);
    free(x->brand);
    x->brand = xstrdup(brand);
    x->meta = true;
    x->has_created = has_created;
    x->created_ms = created_ms;
}

void det_facts_put_claim(struct det_facts *f, const char *product_id, const struct det_claim *claim)
{
    struct det_fact *x;
    if (!f || !product_id || !claim)
        return;
    x = slot(f, product_id);
    x->claim = *claim;
    x->claim_known = true;
}

void det_facts_forget_claim(struct det_facts *f, const char *product_id)
{
    struct ent *e = f && product_id ? find(f, product_id, hash_str(product_id)) : NULL;
    if (e)
        e->f.claim_known = false;
}
