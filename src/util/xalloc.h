/*
 * xalloc.h - allocation wrappers for small internal allocations.
 *
 * They abort the process on OOM (like htop's xMalloc): use them only for
 * bounded internal structures.  Buffers sized by input use struct buf with
 * a cap, which returns ERR_TOOBIG/ERR_NOMEM instead.
 */
#ifndef GP_UTIL_XALLOC_H
#define GP_UTIL_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
