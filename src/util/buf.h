/*
 * buf.h - a growable byte buffer with a hard cap (curl's dynbuf idea).
 *
 * A buffer is always NUL-terminated after its data once anything was
 * appended, so buf.data can be used as a C string when the content has no
 * NUL.  Appends beyond buf.max fail with ERR_TOOBIG and leave the buffer
 * unchanged; the caller owns the struct and calls buf_free().
 */
#ifndef GP_UTIL_BUF_H
#define GP_UTIL_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
    char *data;
    size_t len;
    size_t cap;
    size_t max; /* hard cap on len; 0 means "no cap" (internal use only) */
};

#define BUF_INIT(maxlen)                                                                           \
    {                                                                                              \
        NULL, 0, 0, (maxlen)                                                                       \
    }

void buf_init(struct buf *b, size_t max);
void buf_free(struct buf *b);
/* Drops the content, keeps the allocation. */
void buf_reset(struct buf *b);
/* Removes the first n bytes (n <= len). */
void buf_consume(struct buf *b, size_t n);
int buf_append(struct buf *b, const void *p, size_t n);
int buf_puts(struct buf *b, const char *s);
int buf_putc(struct buf *b, char c);
/* Appends the decimal digits of v (no printf). */
int buf_put_u64(struct buf *b, uint64_t v);
/* Writes the decimal digits of v and a NUL into out (at least
 * U64_DEC_MAX bytes); returns the number of digits. */
#define U64_DEC_MAX 21
size_t u64_to_dec(uint64_t v, char *out);
/* printf("%.*f", prec, x) into out (cap bytes, cut as snprintf cuts),
 * prec 0 or 1, without printf for the common case (0 <= x < 1e9, not
 * within 1e-4 of a rounding tie); returns the length snprintf would. */
int fmt_fixed(double x, int prec, char *out, size_t cap);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap);
/* Ensures room for n more bytes (plus the NUL); ERR_TOOBIG past the cap. */
int buf_reserve(struct buf *b, size_t n);
/* Returns the content as a C string ("" when empty); never NULL. */
const char *buf_cstr(struct buf *b);
/* Moves the content out as a malloc'd string; the buffer becomes empty. */
char *buf_steal(struct buf *b);

#endif
