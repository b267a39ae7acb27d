/*
 * timeutil.c - clocks and ISO-8601 conversion without timegm()/gmtime().
 *
 * Calendar arithmetic uses the proleptic Gregorian days-from-civil
 * formulas (Howard Hinnant's algorithms), which are pure integer maths:
 * they work for every year 0000-9999, do not touch the TZ environment and
 * are thread-safe.  The parser is strict: every field has a fixed width,
 * values are range-checked, and a date-time must carry a zone (Z or an
 * offset); fractions beyond milliseconds are truncated.
 */
#include "core/timeutil.h"

#include <string.h>
#include <time.h>

#include "util/err.h"

#define MS_PER_DAY 86400000LL

/* Days since 1970-01-01 of the civil date y-m-d (m 1-12, d 1-31). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* Inverse of days_from_civil(). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned char dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return (m == 2 && is_leap(y)) ? 29 : dim[m - 1];
}

static int64_t clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t time_now_ms(void)
{
    return clock_ms(CLOCK_REALTIME);
}

int64_t time_mono_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

int64_t time_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Floor division and its remainder for negative times. */
static int64_t floor_div(int64_t a, int64_t b, int64_t *rem)
{
    int64_t q = a / b;
    int64_t r = a % b;
    if (r < 0) {
        r += b;
        q--;
    }
    *rem = r;
    return q;
}

/* The ms range printable with 4-digit years. */
static int64_t clamp_ms(int64_t ms)
{
    const int64_t lo = days_from_civil(0, 1, 1) * MS_PER_DAY;
    const int64_t hi = days_from_civil(10000, 1, 1) * MS_PER_DAY - 1;
    return ms < lo ? lo : ms > hi ? hi : ms;
}

/* Writes v as exactly n zero-padded digits. */
static void put_num(char *out, unsigned v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        out[i] = (char)('0' + v % 10);
        v /= 10;
    }
}

void time_iso(int64_t ms, char out[ISO_LEN + 1])
{
    int64_t rem, y;
    unsigned mo, d;
    int64_t days = floor_div(clamp_ms(ms), MS_PER_DAY, &rem);
    civil_from_days(days, &y, &mo, &d);
    unsigned msec = (unsigned)(rem % 1000);
    unsigned sec = (unsigned)(rem / 1000 % 60);
    unsigned min = (unsigned)(rem / 60000 % 60);
    unsigned hour = (unsigned)(rem / 3600000);
    put_num(out, (unsigned)y, 4);
    out[4] = '-';
    put_num(out + 5, mo, 2);
    out[7] = '-';
    put_num(out + 8, d, 2);
    out[10] = 'T';
    put_num(out + 11, hour, 2);
    out[13] = ':';
    put_num(out + 14, min, 2);
    out[16] = ':';
    put_num(out + 17, sec, 2);
    out[19] = '.';
    put_num(out + 20, msec, 3);
    out[23] = 'Z';
    out[24] = '\0';
}

/* Reads exactly n decimal digits at *p; advances *p.  -1 on failure. */
static int digits(const char **p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *p += n;
    return v;
}

int time_parse_iso(const char *s, int64_t *ms)
{
    const char *p = s;
    int y, mo, d, h = 0, mi = 0, sec = 0, frac = 0;
    int64_t off_min = 0;

    if (!s)
        return ERR_INVALID;
    y = digits(&p, 4);
    if (y < 0 || *p++ != '-')
        return ERR_INVALID;
    mo = digits(&p, 2);
    if (mo < 1 || mo > 12 || *p++ != '-')
        return ERR_INVALID;
    d = digits(&p, 2);
    if (d < 1 || (unsigned)d > days_in_month(y, (unsigned)mo))
        return ERR_INVALID;
    if (*p == '\0')
        goto done; /* bare date: midnight UTC */
    if (*p++ != 'T')
        return ERR_INVALID;
    h = digits(&p, 2);
    if (h < 0 || h > 23 || *p++ != ':')
        return ERR_INVALID;
    mi = digits(&p, 2);
    if (mi < 0 || mi > 59)
        return ERR_INVALID;
    if (*p == ':') {
        p++;
        sec = digits(&p, 2);
        if (sec < 0 || sec > 60)
            return ERR_INVALID;
        if (*p == '.') {
            int nd = 0;
            p++;
            for (; *p >= '0' && *p <= '9'; p++, nd++) {
                if (nd < 3)
                    frac = frac * 10 + (*p - '0');
            }
            if (nd == 0)
                return ERR_INVALID;
            for (; nd < 3; nd++)
                frac *= 10;
        }
    }
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        int oh = digits(&p, 2);
        int om;
        if (oh < 0 || oh > 23)
            return ERR_INVALID;
        if (*p == ':')
            p++;
        om = digits(&p, 2);
        if (om < 0 || om > 59)
            return ERR_INVALID;
        off_min = sign * (oh * 60 + om);
    } else {
        return ERR_INVALID; /* a date-time without zone is ambiguous */
    }
    if (*p != '\0')
        return ERR_INVALID;
done:
    *ms = days_from_civil(y, (unsigned)mo, (unsigned)d) * MS_PER_DAY +
          ((int64_t)h * 3600 + mi * 60 + sec) * 1000 + frac - off_min * 60000;
    return 0;
}

int time_is_iso(const char *s)
{
    int64_t ms;
    char back[ISO_LEN + 1];

    if (!s || strlen(s) != ISO_LEN || s[ISO_LEN - 1] != 'Z' || s[19] != '.')
        return 0;
    if (time_parse_iso(s, &ms))
        return 0;
    time_iso(ms, back);
    return memcmp(back, s, ISO_LEN) == 0;
}

void time_month_bucket(int64_t ms, char out[8])
{
    char iso[ISO_LEN + 1];
    time_iso(ms, iso);
    memcpy(out, iso, 7);
    out[7] = '\0';
}

void time_day_bucket(int64_t ms, char out[11])
{
    char iso[ISO_LEN + 1];
    time_iso(ms, iso);
    memcpy(out, iso, 10);
    out[10] = '\0';
}
