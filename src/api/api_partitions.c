/*
 * api_partitions.c - GET /api/admin/partitions?limit= (api_partitions.h).
 *
 * Reads the store's capacity accounting (store.h): the per-key totals of
 * the rolling 60-second window and the 30-minute heat ring, which keeps
 * for every minute and key family the most WCU/RCU one key of the family
 * consumed within a second.  The answer has, per key family
 * (core/keys.h key_family_of()): the distinct keys seen in the window,
 * the hottest of them, the per-second peak of the last 30 minutes and the
 * per-minute series; then the top keys of the window overall.  Nothing is
 * estimated: a family without traffic has zeros and no hottest key.
 */
#include "api/api_partitions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "store/capacity.h"
#include "store/store.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Window of the per-key figures (the accounting keeps 60 s). */
#define PARTITIONS_WINDOW_S CAPACITY_WINDOW_S

struct fam_sum {
    size_t keys;
    const struct store_capacity_entry *hot; /* most wcu+rcu, NULL when none */
    double peak_w, peak_r;
};

/* Rounds to 3 decimals (capacity units are fractional for reads). */
static double r3(double v)
{
    return round(v * 1000.0) / 1000.0;
}

void api_admin_partitions(struct api_req *r)
{
    long limit = api_query_int(r, "limit", PARTITIONS_TOP_DEFAULT, 1, PARTITIONS_TOP_MAX);
    struct store_capacity_entry *keys = NULL;
    struct store_heat_minute heat[CAPACITY_HEAT_MINUTES];
    struct fam_sum fam[KF_COUNT];
    size_t nkeys = 0, nheat = 0;
    double tw = 0, tr = 0;
    struct jsonw *w;
    int rc;

    if (!api_query_ok(r))
        return;
    memset(fam, 0, sizeof fam);
    keys = xcalloc(PARTITIONS_KEYS_MAX, sizeof *keys);
    rc = store_capacity_top(api_store(r), PARTITIONS_WINDOW_S, PARTITIONS_KEYS_MAX, keys, &nkeys);
    if (!rc)
        rc = store_capacity_heat(api_store(r), CAPACITY_HEAT_MINUTES, heat, &nheat);
    if (rc) {
        api_fail(r, "Failed to read capacity", rc);
        goto out;
    }
    store_capacity_totals(api_store(r), PARTITIONS_WINDOW_S, &tw, &tr);

    /* keys come sorted by wcu+rcu: the first of a family is its hottest */
    for (size_t i = 0; i < nkeys; i++) {
        if (!strcmp(keys[i].pk, CAPACITY_OTHER))
            continue;
        struct fam_sum *f = &fam[key_family_of(keys[i].pk)];
        f->keys++;
        if (!f->hot)
            f->hot = &keys[i];
    }
    for (size_t m = 0; m < nheat; m++)
        for (int k = 0; k < KF_COUNT; k++) {
            if (heat[m].wcu_max[k] > fam[k].peak_w)
                fam[k].peak_w = heat[m].wcu_max[k];
            if (heat[m].rcu_max[k] > fam[k].peak_r)
                fam[k].peak_r = heat[m].rcu_max[k];
        }

    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kint(w, "windowSeconds", PARTITIONS_WINDOW_S);
    jsonw_kint(w, "heatMinutes", CAPACITY_HEAT_MINUTES);
    jsonw_key(w, "totals");
    jsonw_obj(w);
    jsonw_knum(w, "wcu", r3(tw));
    jsonw_knum(w, "rcu", r3(tr));
    jsonw_end(w);
    jsonw_key(w, "families");
    jsonw_arr(w);
    for (int k = 0; k < KF_COUNT; k++) {
        const struct fam_sum *f = &fam[k];
        char iso[ISO_LEN + 1];
        jsonw_obj(w);
        jsonw_kstr(w, "family", key_family_pattern((enum key_family)k));
        jsonw_kint(w, "distinctKeys", (int64_t)f->keys);
        jsonw_kstr(w, "hottestKey", f->hot ? f->hot->pk : NULL);
        jsonw_knum(w, "hottestWcu", f->hot ? r3(f->hot->wcu) : 0);
        jsonw_knum(w, "hottestRcu", f->hot ? r3(f->hot->rcu) : 0);
        jsonw_knum(w, "peakWcu", r3(f->peak_w));
        jsonw_knum(w, "peakRcu", r3(f->peak_r));
        jsonw_key(w, "minutes");
        jsonw_arr(w);
        for (size_t m = nheat; m-- > 0;) { /* oldest first */
            time_iso(heat[m].minute_ms, iso);
            jsonw_obj(w);
            jsonw_kstr(w, "minute", iso);
            jsonw_knum(w, "wcu", r3(heat[m].wcu_max[k]));
            jsonw_knum(w, "rcu", r3(heat[m].rcu_max[k]));
            jsonw_end(w);
        }
        jsonw_end(w);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_key(w, "top");
    jsonw_arr(w);
    for (size_t i = 0, n = 0; i < nkeys && n < (size_t)limit; i++) {
        jsonw_obj(w);
        jsonw_kstr(w, "pk", keys[i].pk);
        jsonw_kstr(w, "family",
                   strcmp(keys[i].pk, CAPACITY_OTHER)
                       ? key_family_pattern(key_family_of(keys[i].pk))
                       : "other");
        jsonw_knum(w, "wcu", r3(keys[i].wcu));
        jsonw_knum(w, "rcu", r3(keys[i].rcu));
        jsonw_end(w);
        n++;
    }
    jsonw_end(w);
    jsonw_end(w);
out:
    free(keys);
}
