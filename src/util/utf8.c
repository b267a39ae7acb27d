/*
 * utf8.c - strict UTF-8 decoding (see utf8.h).
 */
#include "util/utf8.h"

#include <stdint.h>
#include <string.h>

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    uint32_t c, min;
    size_t len;

    if (n == 0)
        return 0;
    c = s[0];
    if (c < 0x80) {
        if (cp)
            *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        c &= 0x1f;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        c &= 0x0f;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        c &= 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    if (cp)
        *cp = c;
    return len;
}

bool utf8_valid(const char *s, size_t n, bool allow_nul)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;

    while (i < n) {
        /* eight ASCII bytes at a time (none with the top bit, none NUL) */
        while (n - i >= 8) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (w & 0x8080808080808080ULL)
                break;
            if (!allow_nul && ((w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL))
                break;
            i += 8;
        }
        if (i >= n)
            break;
        if (p[i] < 0x80) {
            if (!p[i] && !allow_nul)
                return false;
            i++;
            continue;
        }
        size_t len = utf8_decode(p + i, n - i, NULL);
        if (!len)
            return false;
        i += len;
    }
    return true;
}
