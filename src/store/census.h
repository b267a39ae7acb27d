/*
 * census.h - the hot-partition report behind `genuproof audit`: for each
 * key pattern of the schema (core/keys.h families), how many partition
 * keys it has, how big they are, how hard the hottest key was written
 * (per second, from the change stream), and a risk verdict against
 * DynamoDB's per-partition ceiling of 1,000 WCU/s.
 *
 * The figures come from the store's partition census (store.h
 * store_partitions / store_write_seconds).  Write capacity is estimated
 * per second as max(writes, ceil(bytes / 1 KB)), DynamoDB's rounding of
 * each write up to 1 KB units being approximated over the second's sum.
 */
#ifndef GP_STORE_CENSUS_H
#define GP_STORE_CENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "core/keys.h"
#include "store/store.h"

#define CENSUS_PK_SHOW 128 /* partition keys are cut to this for display */
#define CENSUS_TOP     10  /* hottest keys listed */
/* Written keys followed one by one; beyond, writes still count in their
 * family (writes, peak) but not in writtenKeys nor the hottest list. */
#define CENSUS_KEYS_MAX 65536
/* DynamoDB's per-partition write ceiling. */
#define CENSUS_WCU_CEILING 1000.0

enum census_risk { RISK_NONE = 0, RISK_LOW, RISK_WATCH, RISK_HIGH, RISK_CRITICAL };

struct census_family {
    uint64_t keys, items, bytes;     /* partition keys, items, item bytes */
    char biggest_pk[CENSUS_PK_SHOW]; /* key with the most items */
    uint64_t biggest_items;
    uint64_t writes; /* stream records in the window */
    double peak_wcu; /* hottest key's highest WCU in one second */
    char peak_pk[CENSUS_PK_SHOW];
    int64_t peak_second; /* epoch s */
    uint64_t write_keys; /* distinct keys written in the window */
    enum census_risk risk;
    char why[160]; /* one line behind the verdict */
};

struct census_hot {
    char pk[CENSUS_PK_SHOW];
    enum key_family family;
    double peak_wcu;
    int64_t peak_second;
    uint64_t writes;
};

struct census {
    int64_t since_ms, now_ms;
    bool have_items, have_writes; /* the store supported each walk */
    bool keys_truncated;          /* more written keys than CENSUS_KEYS_MAX */
    struct census_family fam[KF_COUNT];
    struct census_hot top[CENSUS_TOP]; /* by peak_wcu, highest first */
    size_t ntop;
};

/*
 * Walks the store: partitions (items/bytes per key) and the stream's
 * writes per key and second since since_ms, then sets each family's
 * verdict.  A store that offers neither walk gives ERR_INVALID; one that
 * offers one leaves the other's have_* false.  Other errors are the
 * store's.
 */
int census_collect(struct store *s, int64_t since_ms, int64_t now_ms, struct census *out);

/* Sets risk and why of every family from its figures (census_collect
 * calls it; exposed for tests). */
void census_judge(struct census *c);

const char *census_risk_name(enum census_risk r); /* "-", "low", "watch", "high", "critical" */

/* The report as a table (text) or as JSON (caller frees). */
void census_print(FILE *f, const struct census *c);
cJSON *census_json(const struct census *c);

#endif
