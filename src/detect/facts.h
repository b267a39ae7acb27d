/*
 * facts.h - what the embedded detector remembers about products across
 * batches besides their window states: a product's brand and creation
 * time (from META, which never change once the product exists) and its
 * claim (from CLAIM, which the detector forgets whenever the change
 * stream shows a write of it).  Without it every batch read META and CLAIM
 * of every product it touched: a third of a replay's time with 10,000
 * products, whose META pages do not all fit in SQLite's page cache.
 *
 * Only what was found is kept (a missing META is read again next time).
 * The consumer empties it together with its state cache, whenever it
 * cannot be sure the store holds only its own writes (consumer.c).
 * Bounded: when full it starts over empty.  Not thread-safe.
 */
#ifndef GP_DETECT_FACTS_H
#define GP_DETECT_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detect/checks.h"

struct det_fact {
    bool meta; /* brand and created are known */
    char *brand;
    bool has_created;
    int64_t created_ms;
    bool claim_known; /* claim is what CLAIM holds */
    struct det_claim claim;
};

struct det_facts;

#define DET_FACTS_DEFAULT 32768

struct det_facts *det_facts_new(size_t max_entries);
void det_facts_free(struct det_facts *f);
void det_facts_clear(struct det_facts *f);
size_t det_facts_count(const struct det_facts *f);
/* The facts known about product_id, NULL when none. */
const struct det_fact *det_facts_get(const struct det_facts *f, const char *product_id);
void det_facts_put_meta(struct det_facts *f, const char *product_id, const char *brand,
                        bool has_created, int64_t created_ms);
void det_facts_put_claim(struct det_facts *f, const char *product_id,
                         const struct det_claim *claim);
/* The product's CLAIM item was written: its claim must be read again. */
void det_facts_forget_claim(struct det_facts *f, const char *product_id);

#endif
