/*
 * timeutil.h - the project's clock and ISO-8601 handling.
 *
 * ISO here always means the 24-char UTC form YYYY-MM-DDTHH:MM:SS.sssZ that
 * JavaScript's toISOString prints.  Times are int64 milliseconds since the
 * Unix epoch.
 */
#ifndef GP_CORE_TIMEUTIL_H
#define GP_CORE_TIMEUTIL_H

#include <stdint.h>

#define ISO_LEN 24

/* Milliseconds per hour and per day. */
#define TIME_HOUR_MS 3600000LL
#define TIME_DAY_MS  86400000LL

/* Wall clock, ms since epoch. */
int64_t time_now_ms(void);
/* Monotonic clock in ms (durations, timeouts). */
int64_t time_mono_ms(void);
/* Monotonic clock in microseconds. */
int64_t time_mono_us(void);
/* Formats ms as ISO into out (ISO_LEN + 1 bytes). Years outside
 * 0000..9999 are clamped to that range. */
void time_iso(int64_t ms, char out[ISO_LEN + 1]);
/*
 * Parses an ISO 8601 date-time: YYYY-MM-DDTHH:MM[:SS[.fraction]] followed by
 * Z or +HH:MM / -HH:MM (or +HHMM); also a bare date YYYY-MM-DD (midnight
 * UTC).  Fields are range-checked (month 1-12, day valid for the month,
 * hour 0-23, minute 0-59, second 0-60).  Returns 0 and sets *ms, or
 * ERR_INVALID.
 */
int time_parse_iso(const char *s, int64_t *ms);
/* True when s is exactly the 24-char canonical ISO form. */
int time_is_iso(const char *s);
/* "YYYY-MM" of an ISO string or of ms (out: 8 bytes). */
void time_month_bucket(int64_t ms, char out[8]);
/* "YYYY-MM-DD" (out: 11 bytes). */
void time_day_bucket(int64_t ms, char out[11]);

#endif
