/*
 * dlq_replay.c - replays one dead letter through the detector's batch
 * processing (see dlq_replay.h).
 *
 * Everything that can refuse a replay is checked before anything is
 * written: the record must carry its image, sit at or behind its
 * reader's checkpoint (otherwise the consumer will still see it, and a
 * replay now would count it twice), and process without being parked
 * again.  Only then does det_proc_flush() write the record's effects,
 * with the checkpoint set to the value it already has, and the dead
 * letter is deleted.
 */
#include "detect/dlq_replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timeutil.h"
#include "detect/consumer.h"
#include "detect/ddb_detector.h"
#include "detect/wset.h"
#include "util/err.h"
#include "util/xalloc.h"

static const char *str_attr(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void refuse(struct dlq_replay_result *out, const char *why)
{
    snprintf(out->error, sizeof out->error, "%s", why);
}

/* Rebuilds the stream record of a dead letter.  Strings borrow from
 * item; the image is a copy the caller frees.  Returns false (with a
 * reason in out) when the dead letter is not usable. */
static bool record_of(const cJSON *item, struct stream_record *r, struct dlq_replay_result *out)
{
    const cJSON *seq = cJSON_GetObjectItemCaseSensitive(item, "seq");
    const cJSON *img = cJSON_GetObjectItemCaseSensitive(item, "image");
    const char *kind = str_attr(item, "kind");
    const char *pk = str_attr(item, "pk"), *sk = str_attr(item, "sk");
    const char *at = str_attr(item, "recordTime");

    memset(r, 0, sizeof *r);
    if (!cJSON_IsNumber(seq) || seq->valuedouble < 1 || seq->valuedouble > 9007199254740992.0 ||
        !pk || !sk || !kind) {
        refuse(out, "malformed dead letter");
        return false;
    }
    r->seq = (uint64_t)seq->valuedouble;
    out->seq = r->seq;
    if (!strcmp(kind, "INSERT"))
        r->kind = STORE_INSERT;
    else if (!strcmp(kind, "MODIFY"))
        r->kind = STORE_MODIFY;
    else if (!strcmp(kind, "REMOVE"))
        r->kind = STORE_REMOVE;
    else {
        refuse(out, "malformed dead letter: unknown record kind");
        return false;
    }
    if (!at || time_parse_iso(at, &r->ts_ms))
        r->ts_ms = 0;
    if (!cJSON_IsObject(img)) {
        refuse(out, "the record's image was not kept (absent or too large): cannot replay");
        return false;
    }
    r->image = cJSON_Duplicate(img, 1);
    if (!r->image) {
        refuse(out, "out of memory");
        return false;
    }
    r->pk = (char *)pk;
    r->sk = (char *)sk;
    return true;
}

/* A dead letter of the Streams detector names its stream position
 * (streamPos: sequence@shard).  *behind tells whether the shard's
 * checkpoint of reader covers it (or the shard is finished). */
static int behind_shard(struct store *s, const char *reader, const char *pos, bool *behind)
{
    const char *at = strchr(pos, '@');
    char seq[DDBS_SEQ_MAX + 1], cp[DET_POS_MAX + 1];
    bool finished = false, found = false;
    int rc;

    *behind = false;
    if (!at || at - pos != DET_POS_SEQ_DIGITS || strlen(pos) > DET_POS_MAX)
        return 0;
    rc = ddbd_checkpoint_get(s, reader, at + 1, seq, &finished, &found);
    if (!rc && found)
        *behind =
            finished || (seq[0] && det_pos_format(cp, at + 1, seq) && det_pos_covers(cp, pos));
    return rc;
}

/*
 * With counters folded by the detector (DynamoDB), the replay writes what
 * a batch of the Streams detector writes for the record (det_proc_collect:
 * window state with its position, alerts, threatCount, scanCount, ops
 * log), and the deletion of the dead letter joins the last transaction,
 * so a replay is all or nothing whenever it fits one transaction (a scan
 * does).
 */
static int commit_collected(struct det_proc *p, struct store *s, const char *dpk, const char *dsk)
{
    struct wset *ws = wset_new();
    struct wset_plan plan = {0};
    int rc = det_proc_collect(p, ws);

    if (!rc && wset_count(ws) == 0) {
        rc = store_delete(s, dpk, dsk, NULL);
        goto out;
    }
    if (!rc)
        rc = wset_plan(ws, STORE_TRANSACT_MAX - 1, 0, &plan);
    for (size_t g = 0; !rc && g < plan.ngroups; g++) {
        size_t nw;
        const struct store_write *w = wset_plan_group(&plan, g, &nw);
        if (g + 1 < plan.ngroups) {
            rc = store_transact(s, w, nw, NULL);
            continue;
        }
        struct store_write *all = xcalloc(nw + 1, sizeof *all);
        memcpy(all, w, nw * sizeof *all);
        all[nw] = (struct store_write){.kind = STORE_W_DELETE, .pk = dpk, .sk = dsk};
        rc = store_transact(s, all, nw + 1, NULL);
        free(all);
    }
out:
    wset_plan_free(&plan);
    wset_free(ws);
    return rc;
}

int dlq_replay_item(const struct det_proc_cfg *cfg, const cJSON *item,
                    struct dlq_replay_result *out)
{
    struct det_proc_cfg pc = *cfg;
    struct stream_record r;
    struct det_proc *p = NULL;
    const char *dpk = str_attr(item, "PK"), *dsk = str_attr(item, "SK");
    const char *reader = str_attr(item, "reader");
    uint64_t cp = 0;
    int rc = 0;

    memset(out, 0, sizeof *out);
    memset(&r, 0, sizeof r);
    if (!dpk || !dsk) {
        refuse(out, "malformed dead letter");
        goto out;
    }
    if (!record_of(item, &r, out))
        goto out;
    pc.reader = reader && *reader && strlen(reader) <= DETECTOR_READER_MAX
                    ? reader
                    : DETECTOR_READER_DEFAULT;
    const char *pos = str_attr(item, "streamPos");
    bool behind = false;
    if (pos) {
        rc = behind_shard(pc.s, pc.reader, pos, &behind);
    } else {
        rc = store_checkpoint_get(pc.s, pc.reader, &cp);
        behind = r.seq <= cp;
    }
    if (rc)
        goto out;
    if (!behind) {
        refuse(out, "the record is ahead of the reader's checkpoint: the detector will process it");
        goto out;
    }
    p = det_proc_new(&pc);
    if (!p) {
        rc = ERR_NOMEM;
        goto out;
    }
    rc = det_proc_add(p, &r);
    if (rc)
        goto out; /* a read failed: nothing written */
    det_proc_get_counts(p, &out->counts);
    if (out->counts.parked) {
        memset(&out->counts, 0, sizeof out->counts);
        refuse(out, "the record still cannot be processed (its product is missing or the "
                    "record is malformed)");
        goto out;
    }
    if (pc.fold_scan_counts || pos) {
        rc = commit_collected(p, pc.s, dpk, dsk);
    } else {
        /* The checkpoint keeps its value: the reader is already past r. */
        rc = det_proc_flush(p, cp);
        if (!rc)
            rc = store_delete(pc.s, dpk, dsk, NULL);
    }
    if (!rc)
        out->replayed = true;
out:
    det_proc_free(p);
    cJSON_Delete(r.image);
    return rc;
}
