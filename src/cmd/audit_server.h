/*
 * audit_server.h - `genuproof audit --url URL --api-key KEY`: folds a
 * running server's in-process capacity accounting (GET
 * /api/admin/partitions, api/api_partitions.h) into the hot-partition
 * report.
 *
 * The server charges every store call to its partition key per second
 * (store.h capacity accounting; on DynamoDB the figures DynamoDB returned),
 * so its per-family per-second peaks of the last 30 minutes are measured,
 * where the census's write peaks are estimated from the stream.  The fold
 * raises a pattern's peak to the server's when that is higher and judges
 * the patterns again; the server's answer is also kept for the report.
 */
#ifndef GP_CMD_AUDIT_SERVER_H
#define GP_CMD_AUDIT_SERVER_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "store/census.h"

/* Largest answer accepted from the server. */
#define AUDIT_SERVER_BODY_MAX (4 * 1024 * 1024)

/*
 * GETs <url>/api/admin/partitions?limit=CENSUS_TOP with the key as a
 * bearer token (10 s timeout).  On success returns 0 with the parsed
 * answer in *out (caller frees).  On error returns ERR_UNAVAILABLE
 * (transport), ERR_TOOBIG (answer past AUDIT_SERVER_BODY_MAX) or
 * ERR_INVALID (a status other than 200, e.g. a refused key, or not a JSON
 * object), with a message in err.
 */
int audit_server_fetch(const char *url, const char *api_key, cJSON **out, char *err, size_t errlen);

/*
 * Folds the answer of /api/admin/partitions into c: for every family
 * whose server-side per-second write peak (peakWcu) exceeds the census's,
 * the peak becomes the server's (key: the family's hottestKey, second
 * unknown) and the verdicts are judged again.  Returns how many families
 * were raised; malformed parts of the answer are ignored.
 */
int audit_server_fold(struct census *c, const cJSON *parts);

/* The server's figures as text (totals, per-pattern peaks, top keys), and
 * as the JSON kept in the report (the answer without the per-minute
 * series and without unused families; caller frees). */
void audit_server_print(FILE *f, const char *url, const cJSON *parts);
cJSON *audit_server_json(const cJSON *parts);

#endif
