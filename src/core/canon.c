/*
 * canon.c - the project's single JSON text writer, matching what
 * JavaScript's JSON.stringify prints byte for byte.
 *
 * Hashes of products and events (API.md §3.2-3.5) are computed over this
 * text, so any divergence from Node (a number printed as "1.0", a
 * non-ASCII char escaped, ...) would make stored hashes unverifiable.
 *
 * Numbers follow ECMAScript Number::toString: the shortest decimal digit
 * string that reads back as the same double, laid out in plain or
 * exponent form depending on the decimal exponent.  The digit search uses
 * printf("%.*e") and strtod(); the digits are picked out of the printf
 * output without relying on its decimal point and are read back as
 * "<digits>e<exp>" (no decimal point), so the result never depends on
 * LC_NUMERIC (the TUI calls setlocale()).
 *
 * Strings are scanned for runs of bytes that can be copied as they are
 * (printable ASCII except '"' and '\\', and well-formed UTF-8); each run is
 * appended with one buf_append().  Only escapes, lone surrogates (WTF-8)
 * and invalid bytes break a run.
 */
#include "util/utf8.h"
#include "core/canon.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/err.h"

/* Objects/arrays nested deeper than this are refused (cJSON's own parse
 * limit is 1000; items built in code could be deeper). */
#define CANON_MAX_DEPTH 1000
/* Cap of the buffer behind canon_dup(). */
#define CANON_DUP_MAX ((size_t)256 << 20)

/*
 * Renders |d| (finite, non-zero) with prec+1 significant digits and splits
 * the printf output into its digits and decimal exponent.  Works whatever
 * the current locale's decimal point looks like: every non-digit before
 * the 'e' is skipped.  Returns the digit count.
 */
static int sci_digits(double d, int prec, char *digits, int *exp10)
{
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, "%.*e", prec, d);
    int k = 0;
    int i = 0;
    if (n < 0 || (size_t)n >= sizeof tmp)
        n = (int)strlen(tmp);
    for (; i < n && tmp[i] != 'e' && tmp[i] != 'E'; i++) {
        if (tmp[i] >= '0' && tmp[i] <= '9' && k < 20)
            digits[k++] = tmp[i];
    }
    *exp10 = (i < n) ? atoi(tmp + i + 1) : 0;
    digits[k] = '\0';
    return k;
}

/* True when digits (k of them) times 10^(exp10-k+1) reads back as d.  The
 * text has no decimal point ("12345e-7"), so strtod's locale plays no
 * part. */
static int round_trips(double d, const char *digits, int k, int exp10)
{
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, "%.*se%d", k, digits, exp10 - k + 1);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return 0;
    return strtod(tmp, NULL) == d;
}

/* Drops trailing zeros of a digit string (keeps at least one digit). */
static int strip_zeros(char *digits, int k)
{
    while (k > 1 && digits[k - 1] == '0')
        k--;
    digits[k] = '\0';
    return k;
}

/*
 * Finds the shortest round-trip digits of |d| > 0 (finite).  For normal
 * numbers the correctly rounded 15-digit form, stripped of trailing zeros,
 * is the shortest whenever any form of <= 15 digits round-trips (double
 * precision is finer than 15 decimal digits), so only 15, 16 and 17 need
 * trying.  Subnormals have less precision and are searched from 1 digit.
 * Returns k; *n_out is the ECMAScript n (decimal point position).
 */
static int shortest_digits(double d, char digits[24], int *n_out)
{
    int exp10 = 0;
    int k;
    int p = (d < 2.2250738585072014e-308) ? 0 : 14;
    for (; p < 17; p++) {
        k = sci_digits(d, p, digits, &exp10);
        if (round_trips(d, digits, k, exp10))
            break;
    }
    if (p == 17)
        k = sci_digits(d, 16, digits, &exp10);
    k = strip_zeros(digits, k);
    *n_out = exp10 + 1;
    return k;
}

/*
 * The fast path of canon_number_str() for the usual non-integers (prices,
 * latencies, rates): d (> 0) equal to the double nearest to m / 10^j for
 * some j <= 15 and integer m < 10^15.  The smallest such j gives the
 * shortest round-trip digits: m and 10^j are exact doubles and division
 * rounds correctly, so the test is exactly strtod's; at 15 digits or
 * fewer, two decimals of j places are further apart than d's spacing, so
 * no other j-place decimal reads back as d; and d*10^j (< 10^15, error
 * below 1/8) lies within one of floor(t) or floor(t)+1 of the nearest
 * integer.  Returns the length written, or 0 to take the general way.
 */
static size_t decimal_fast(double d, char *out)
{
    static const double p10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    if (!(d >= 1e-6 && d < 1e15))
        return 0;
    for (int j = 1; j <= 15; j++) {
        double t = d * p10[j], f = floor(t);
        if (t >= 1e15)
            return 0;
        for (double m = f; m <= f + 1; m++) {
            char dig[24];
            size_t nd, len = 0;
            if (m / p10[j] != d)
                continue;
            nd = u64_to_dec((uint64_t)m, dig);
            if (nd > (size_t)j) {
                memcpy(out, dig, nd - (size_t)j);
                len = nd - (size_t)j;
                out[len++] = '.';
                memcpy(out + len, dig + nd - (size_t)j, (size_t)j);
                len += (size_t)j;
            } else {
                out[len++] = '0';
                out[len++] = '.';
                memset(out + len, '0', (size_t)j - nd);
                len += (size_t)j - nd;
                memcpy(out + len, dig, nd);
                len += nd;
            }
            out[len] = '\0';
            return len;
        }
    }
    return 0;
}

size_t canon_number_str(double d, char *out)
{
    char digits[24];
    char *p = out;
    int n;
    int k;

    if (isnan(d) || isinf(d)) {
        memcpy(out, "null", 5);
        return 4;
    }
    if (d == 0) {
        memcpy(out, "0", 2); /* also -0 */
        return 1;
    }
    if (d < 0) {
        *p++ = '-';
        d = -d;
    }
    /* Integers below 2^53 are exact and their decimal form is already the
     * shortest round-trip form. */
    if (d < 9007199254740992.0 && d == (double)(uint64_t)d)
        return (size_t)(p - out) + u64_to_dec((uint64_t)d, p);
    {
        size_t n_fast = decimal_fast(d, p);
        if (n_fast)
            return (size_t)(p - out) + n_fast;
    }

    k = shortest_digits(d, digits, &n);
    if (k <= n && n <= 21) {
        memcpy(p, digits, (size_t)k);
        p += k;
        memset(p, '0', (size_t)(n - k));
        p += n - k;
    } else if (0 < n && n <= 21) {
        memcpy(p, digits, (size_t)n);
        p += n;
        *p++ = '.';
        memcpy(p, digits + n, (size_t)(k - n));
        p += k - n;
    } else if (-6 < n && n <= 0) {
        *p++ = '0';
        *p++ = '.';
        memset(p, '0', (size_t)-n);
        p += -n;
        memcpy(p, digits, (size_t)k);
        p += k;
    } else {
        int e = n - 1;
        *p++ = digits[0];
        if (k > 1) {
            *p++ = '.';
            memcpy(p, digits + 1, (size_t)(k - 1));
            p += k - 1;
        }
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        p += u64_to_dec((uint64_t)(e < 0 ? -e : e), p);
    }
    *p = '\0';
    return (size_t)(p - out);
}

int canon_number(struct buf *b, double d)
{
    char tmp[CANON_NUM_MAX];
    size_t n = canon_number_str(d, tmp);
    return buf_append(b, tmp, n);
}

/* Bytes 0x20..0x7f that can be copied unchanged (everything but '"', '\\'). */
static int plain_ascii(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/*
 * Bytes to replace with one U+FFFD at an invalid position: the lead byte
 * plus the continuation bytes that still formed a valid prefix (the
 * "maximal subpart" rule that Node's decoder applies).  At least 1.
 */
static size_t invalid_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    unsigned char lo = 0x80, hi = 0xbf;
    size_t len;
    size_t i;

    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4;
    else
        return 1;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    /* ED A0..BF is handled as a surrogate by the caller before this. */
    if (n < 2 || s[1] < lo || s[1] > hi)
        return 1;
    for (i = 2; i < len && i < n; i++) {
        if (s[i] < 0x80 || s[i] > 0xbf)
            break;
    }
    return i;
}

/* Decodes a WTF-8 surrogate ED A0..BF 80..BF at s (n bytes left); returns
 * the code unit or 0 when s is not one. */
static unsigned surrogate_at(const unsigned char *s, size_t n)
{
    if (n < 3 || s[0] != 0xed || s[1] < 0xa0 || s[1] > 0xbf || s[2] < 0x80 || s[2] > 0xbf)
        return 0;
    return 0xd000u | ((unsigned)(s[1] & 0x3f) << 6) | (s[2] & 0x3fu);
}

static const char hexdig[] = "0123456789abcdef";

int canon_string(struct buf *b, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    int rc;

    rc = buf_putc(b, '"');
    if (rc)
        return rc;
    while (i < n) {
        size_t start = i;
        for (;;) {
            if (i < n && plain_ascii(s[i])) {
                i++;
                continue;
            }
            if (i < n && s[i] >= 0x80) {
                size_t l = utf8_decode(s + i, n - i, NULL);
                if (l) {
                    i += l;
                    continue;
                }
            }
            break;
        }
        if (i > start) {
            rc = buf_append(b, s + start, i - start);
            if (rc)
                return rc;
        }
        if (i >= n)
            break;

        char esc[16];
        size_t elen = 0;
        unsigned char c = s[i];
        unsigned hi = surrogate_at(s + i, n - i);
        if (c < 0x80) {
            esc[0] = '\\';
            elen = 2;
            switch (c) {
            case '"':
                esc[1] = '"';
                break;
            case '\\':
                esc[1] = '\\';
                break;
            case '\b':
                esc[1] = 'b';
                break;
            case '\t':
                esc[1] = 't';
                break;
            case '\n':
                esc[1] = 'n';
                break;
            case '\f':
                esc[1] = 'f';
                break;
            case '\r':
                esc[1] = 'r';
                break;
            default:
                memcpy(esc + 1, "u00", 3);
                esc[4] = hexdig[c >> 4];
                esc[5] = hexdig[c & 15];
                elen = 6;
                break;
            }
            i++;
        } else if (hi) {
            unsigned lo = surrogate_at(s + i + 3, n - i - 3);
            if (hi < 0xdc00 && lo >= 0xdc00) {
                /* A high+low pair stored as two WTF-8 halves is one real
                 * character in JavaScript: write it as UTF-8. */
                unsigned cp = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                esc[0] = (char)(0xf0 | (cp >> 18));
                esc[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
                esc[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
                esc[3] = (char)(0x80 | (cp & 0x3f));
                elen = 4;
                i += 6;
            } else {
                memcpy(esc, "\\u", 2);
                for (int sh = 12, j = 2; sh >= 0; sh -= 4, j++)
                    esc[j] = hexdig[(hi >> sh) & 15];
                elen = 6;
                i += 3;
            }
        } else {
            memcpy(esc, "\xef\xbf\xbd", 3); /* U+FFFD */
            elen = 3;
            i += invalid_len(s + i, n - i);
        }
        rc = buf_append(b, esc, elen);
        if (rc)
            return rc;
    }
    return buf_putc(b, '"');
}

int canon_cstring(struct buf *b, const char *s)
{
    return canon_string(b, s, strlen(s));
}

static int write_item(struct buf *b, const cJSON *item, int depth)
{
    int rc = 0;
    const cJSON *c;

    if (depth > CANON_MAX_DEPTH)
        return ERR_INVALID;
    switch (item->type & 0xff) {
    case cJSON_False:
        return buf_append(b, "false", 5);
    case cJSON_True:
        return buf_append(b, "true", 4);
    case cJSON_NULL:
        return buf_append(b, "null", 4);
    case cJSON_Number:
        return canon_number(b, item->valuedouble);
    case cJSON_String:
        return canon_cstring(b, item->valuestring ? item->valuestring : "");
    case cJSON_Raw:
        return buf_puts(b, item->valuestring ? item->valuestring : "null");
    case cJSON_Array:
        rc = buf_putc(b, '[');
        for (c = item->child; c && !rc; c = c->next) {
            if (c != item->child)
                rc = buf_putc(b, ',');
            if (!rc)
                rc = write_item(b, c, depth + 1);
        }
        if (!rc)
            rc = buf_putc(b, ']');
        return rc;
    case cJSON_Object:
        rc = buf_putc(b, '{');
        for (c = item->child; c && !rc; c = c->next) {
            if (c != item->child)
                rc = buf_putc(b, ',');
            if (!rc)
                rc = canon_cstring(b, c->string ? c->string : "");
            if (!rc)
                rc = buf_putc(b, ':');
            if (!rc)
                rc = write_item(b, c, depth + 1);
        }
        if (!rc)
            rc = buf_putc(b, '}');
        return rc;
    default:
        return ERR_INVALID;
    }
}

int canon_write(struct buf *b, const cJSON *item)
{
    if (!item)
        return buf_append(b, "null", 4);
    return write_item(b, item, 0);
}

char *canon_dup(const cJSON *item)
{
    struct buf b;
    char *out = NULL;

    buf_init(&b, CANON_DUP_MAX);
    if (canon_write(&b, item) == 0)
        out = buf_steal(&b);
    buf_free(&b);
    return out;
}

/* Writes ,"key": (or {"key": for the first) then the string value. */
static int put_kstr(struct buf *b, const char *key_json, const char *v)
{
    int rc = buf_puts(b, key_json);
    if (!rc)
        rc = canon_cstring(b, v ? v : "");
    return rc;
}

/* Writes an object value, or {} when v is NULL or JSON null. */
static int put_obj_or_empty(struct buf *b, const cJSON *v)
{
    if (!v || cJSON_IsNull(v))
        return buf_append(b, "{}", 2);
    return canon_write(b, v);
}

int canon_product_text(struct buf *b, const char *product_id, const char *brand_id,
                       const char *name, const char *sku, const cJSON *metadata,
                       const char *created_at)
{
    int rc = put_kstr(b, "{\"productId\":", product_id);
    if (!rc)
        rc = put_kstr(b, ",\"brandId\":", brand_id);
    if (!rc)
        rc = put_kstr(b, ",\"name\":", name);
    if (!rc)
        rc = put_kstr(b, ",\"sku\":", sku);
    if (!rc)
        rc = buf_puts(b, ",\"metadata\":");
    if (!rc)
        rc = put_obj_or_empty(b, metadata);
    if (!rc)
        rc = put_kstr(b, ",\"createdAt\":", created_at);
    if (!rc)
        rc = buf_putc(b, '}');
    return rc;
}

int canon_event_text(struct buf *b, const char *product_id, const char *type, const char *actor,
                     const char *timestamp, const cJSON *data, const char *previous_hash)
{
    int rc = put_kstr(b, "{\"productId\":", product_id);
    if (!rc)
        rc = put_kstr(b, ",\"type\":", type);
    if (!rc)
        rc = put_kstr(b, ",\"actor\":", actor);
    if (!rc)
        rc = put_kstr(b, ",\"timestamp\":", timestamp);
    if (!rc)
        rc = buf_puts(b, ",\"data\":");
    if (!rc)
        rc = put_obj_or_empty(b, data);
    if (!rc)
        rc = put_kstr(b, ",\"previousHash\":", previous_hash);
    if (!rc)
        rc = buf_putc(b, '}');
    return rc;
}
