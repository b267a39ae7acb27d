/*
 * capacity.h - consumed read/write capacity per partition key over a
 * rolling minute (DynamoDB Contributor Insights, locally).
 *
 * A ring of 60 one-second slots; each slot is a small open-addressing map
 * from partition key to the WCU/RCU charged in that second.  A slot holds
 * at most CAPACITY_SLOT_KEYS keys; further keys in the same second are
 * summed under CAPACITY_OTHER.  Keys are kept up to 255 bytes (the display
 * width of struct store_capacity_entry); two keys that agree on those
 * bytes and on a 64-bit hash of the whole key would share an entry.
 *
 * A second ring of 30 one-minute slots keeps, per key family
 * (core/keys.h), the highest consumption any single key of that family
 * reached within one second of that minute: the partition heat view.
 *
 * Charging is O(1) (one hash probe) and allocation-free except when a
 * slot's map grows.  Not thread-safe; owned by one struct store.
 */
#ifndef GP_STORE_CAPACITY_H
#define GP_STORE_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define CAPACITY_WINDOW_S     60
#define CAPACITY_SLOT_KEYS    4096
#define CAPACITY_HEAT_MINUTES 30
#define CAPACITY_OTHER        "<other>"

struct capacity;

struct capacity *capacity_new(void);
void capacity_free(struct capacity *c);

/* Adds wcu/rcu to pk's entry for second now_s. */
void capacity_charge(struct capacity *c, int64_t now_s, const char *pk, double wcu, double rcu);

/* True when charging wcu/rcu to pk in second now_s would take pk past
 * wlim (WCU/s) or rlim (RCU/s).  Charges nothing. */
bool capacity_would_exceed(struct capacity *c, int64_t now_s, const char *pk, double wcu,
                           double rcu, double wlim, double rlim);

/* Top n keys by wcu+rcu over the seconds (now_s - window_s, now_s],
 * descending (ties by key).  window_s is clamped to 1..60.  Returns 0, and
 * *nout entries in out. */
int capacity_top(struct capacity *c, int64_t now_s, int window_s, size_t n,
                 struct store_capacity_entry *out, size_t *nout);

/* Sums over the same window. */
void capacity_totals(struct capacity *c, int64_t now_s, int window_s, double *wcu, double *rcu);

/* The heat ring, most recent minute first, up to n minutes that saw any
 * traffic within the last CAPACITY_HEAT_MINUTES. */
size_t capacity_heat(struct capacity *c, int64_t now_s, struct store_heat_minute *out, size_t n);

#endif
