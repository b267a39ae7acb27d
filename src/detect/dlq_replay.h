/*
 * dlq_replay.h - runs a parked change-stream record (a dead letter of
 * detect/dlq.h) through the detector's processing again, for
 * POST /api/admin/dlq/replay.
 *
 * A record is parked when it could not be processed: its product was
 * missing, its image malformed, or its batch kept failing.  Once the
 * cause is fixed an operator replays it: the record is rebuilt from the
 * dead letter (sequence, kind, keys, record time, image), processed by a
 * one-record det_proc (process.h) exactly as the consumer would have,
 * and on success the dead letter is deleted in the same store batch as
 * the alerts, counters, window state and ops-log entries it produces.
 * The reader's checkpoint does not move: it is already past the record.
 * A dead letter of the Streams detector (DynamoDB) carries its position
 * (streamPos) and is behind once its shard's checkpoint covers it; with
 * cfg->fold_scan_counts (or such a position) the replay writes what a
 * Streams batch would (det_proc_collect, scanCount included), the
 * dead letter's deletion in the last transaction.
 */
#ifndef GP_DETECT_DLQ_REPLAY_H
#define GP_DETECT_DLQ_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "detect/process.h"
#include "store/store.h"

/* Longest reason kept in a replay result. */
#define DLQ_REPLAY_ERROR_MAX 160

struct dlq_replay_result {
    uint64_t seq;                     /* the record's stream sequence (0 when unreadable) */
    bool replayed;                    /* processed and the dead letter deleted */
    char error[DLQ_REPLAY_ERROR_MAX]; /* why not, when !replayed */
    struct det_proc_counts counts;    /* what processing did (replayed only) */
};

/*
 * Replays one dead letter.  cfg gives the store, the velocity thresholds
 * and the clock of the alerts written (cfg->reader is ignored: the dead
 * letter's own reader is used, DETECTOR_READER_DEFAULT when it has none).
 * The caller must have a store batch open (the writes join it).
 *
 * On success returns 0 and fills *out: either out->replayed (the record's
 * writes and the deletion of the dead letter joined the batch) or not,
 * with out->error saying why (image not kept, record ahead of the
 * reader's checkpoint, still cannot be processed) and nothing written.
 * On error returns a negative ERR_* from the store; some writes may have
 * joined the batch, so the caller must abort it.
 */
int dlq_replay_item(const struct det_proc_cfg *cfg, const cJSON *item,
                    struct dlq_replay_result *out);

#endif
