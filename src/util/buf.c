/*
 * buf.c - capped growable buffer (see buf.h).
 */
#include "util/buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

void buf_init(struct buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void buf_free(struct buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void buf_consume(struct buf *b, size_t n)
{
    if (n >= b->len) {
        buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

int buf_reserve(struct buf *b, size_t n)
{
    if (b->max && (n > b->max || b->len > b->max - n))
        return ERR_TOOBIG;
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return ERR_OK;
    size_t ncap = b->cap ? b->cap : 64;
    while (ncap < need)
        ncap *= 2;
    if (b->max && ncap > b->max + 1)
        ncap = b->max + 1;
    if (ncap < need)
        ncap = need;
    b->data = xrealloc(b->data, ncap);
    b->cap = ncap;
    return ERR_OK;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
    int rc = buf_reserve(b, n);
    if (rc)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return ERR_OK;
}

int buf_puts(struct buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

size_t u64_to_dec(uint64_t v, char *out)
{
    char tmp[U64_DEC_MAX];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

int fmt_fixed(double x, int prec, char *out, size_t cap)
{
    if ((prec == 0 || prec == 1) && cap >= 16 && x >= 0 && x < 1e9 && !signbit(x)) {
        double t = prec ? x * 10 : x, f = floor(t), frac = t - f;
        /* x * 10 is off by at most 1.2e-6 here: a tie, or close enough to
         * one for that to matter, goes to printf (round half to even of
         * the exact binary value). */
        if (fabs(frac - 0.5) > 1e-4) {
            uint64_t n = (uint64_t)f + (frac > 0.5);
            size_t len = u64_to_dec(prec ? n / 10 : n, out);
            if (prec) {
                out[len++] = '.';
                out[len++] = (char)('0' + n % 10);
                out[len] = '\0';
            }
            return (int)len;
        }
    }
    return snprintf(out, cap, "%.*f", prec, x);
}

int buf_put_u64(struct buf *b, uint64_t v)
{
    char tmp[U64_DEC_MAX];
    return buf_append(b, tmp, u64_to_dec(v, tmp));
}

int buf_putc(struct buf *b, char c)
{
    if (b->len + 1 < b->cap && (!b->max || b->len < b->max)) {
        b->data[b->len++] = c;
        b->data[b->len] = '\0';
        return ERR_OK;
    }
    return buf_append(b, &c, 1);
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return ERR_INVALID;
    if ((size_t)n < sizeof small)
        return buf_append(b, small, (size_t)n);
    int rc = buf_reserve(b, (size_t)n);
    if (rc)
        return rc;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return ERR_OK;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

const char *buf_cstr(struct buf *b)
{
    return b->data ? b->data : "";
}

char *buf_steal(struct buf *b)
{
    char *p = b->data ? b->data : xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}
