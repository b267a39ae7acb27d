/*
 * canvas.c - the off-screen cell grid of the dashboard.  Text goes in as
 * UTF-8 and is cleaned on the way: control characters and broken
 * sequences never reach a cell, wide characters take two cells, and in
 * ASCII mode every cell holds a byte below 0x80 (glyphs map to their
 * ASCII twins, other text to '?').  Column widths come from a small
 * built-in table rather than wcwidth(3), so drawing does not depend on
 * the process locale (the tests run under LANG=C).  Also the 3x5 block
 * font of kiosk mode.
 */
#include "tui/canvas.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"
#include "util/xalloc.h"

/* Unicode form and ASCII twin of each glyph. */
static const struct {
    uint32_t uni;
    char ascii;
} glyphs[G_COUNT] = {
    [G_HLINE] = {0x2500, '-'},        [G_VLINE] = {0x2502, '|'},     [G_TL] = {0x250C, '+'},
    [G_TR] = {0x2510, '+'},           [G_BL] = {0x2514, '+'},        [G_BR] = {0x2518, '+'},
    [G_TEE_L] = {0x251C, '+'},        [G_TEE_R] = {0x2524, '+'},     [G_TEE_T] = {0x252C, '+'},
    [G_TEE_B] = {0x2534, '+'},        [G_CROSS] = {0x253C, '+'},     [G_SEP] = {0x2502, '|'},
    [G_DOT_LIVE] = {0x25CF, '*'},     [G_DOT_RETRY] = {0x25D0, 'o'}, [G_DOT_DOWN] = {0x25CB, '.'},
    [G_BACKFILL] = {0x21BA, '~'},     [G_UNSEEN] = {0x2022, '*'},    [G_CHAIN_OK] = {0x2502, '|'},
    [G_CHAIN_BROKEN] = {0x2573, 'X'}, [G_SHADE0] = {' ', ' '},       [G_SHADE1] = {0x2591, '.'},
    [G_SHADE2] = {0x2592, ':'},       [G_SHADE3] = {0x2593, '*'},    [G_SHADE4] = {0x2588, '#'},
    [G_BAR_FULL] = {0x2588, '#'},     [G_ELLIPSIS] = {0x2026, '>'},  [G_ARROW_UP] = {0x2191, '^'},
    [G_ARROW_DOWN] = {0x2193, 'v'},   [G_BLOCK] = {0x2588, '#'},
};

/* Sparkline levels ▁..█ and their ASCII twins. */
static const char spark_ascii[8] = {'_', '.', ',', '-', '=', '+', '*', '#'};

/* Zero-width (combining) ranges: dropped when drawing. */
static const uint32_t zero_ranges[][2] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD},   {0x0610, 0x061A}, {0x064B, 0x065F},
    {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E},   {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
    {0x200B, 0x200F}, {0x2028, 0x202E}, {0x2060, 0x2064},   {0x20D0, 0x20FF}, {0xFE00, 0xFE0F},
    {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
};

/* East Asian Wide / Fullwidth ranges (two columns). */
static const uint32_t wide_ranges[][2] = {
    {0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},
    {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},
    {0xFE30, 0xFE4F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x1F300, 0x1F64F},
    {0x1F900, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

static int in_ranges(uint32_t cp, const uint32_t (*r)[2], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cp >= r[i][0] && cp <= r[i][1])
            return 1;
    return 0;
}

/* Columns of a (printable) code point: 0, 1 or 2. */
static int cp_width(uint32_t cp)
{
    if (cp < 0x300)
        return 1;
    if (in_ranges(cp, zero_ranges, sizeof zero_ranges / sizeof zero_ranges[0]))
        return 0;
    if (in_ranges(cp, wide_ranges, sizeof wide_ranges / sizeof wide_ranges[0]))
        return 2;
    return 1;
}

/*
 * Decodes the next character of s[0..n) as the canvas draws it: *cp gets
 * the code point to store (controls -> '?', invalid -> U+FFFD or '?',
 * non-ASCII in ASCII mode -> '?'), *w its width.  Returns bytes used
 * (>= 1 when n > 0).
 */
static size_t next_char(bool ascii, const unsigned char *s, size_t n, uint32_t *cp, int *w)
{
    uint32_t c = 0;
    size_t len = utf8_decode(s, n, &c);
    if (len == 0) {
        *cp = ascii ? '?' : 0xFFFD;
        *w = 1;
        return 1;
    }
    if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0)) {
        *cp = '?';
        *w = 1;
        return len;
    }
    int cw = cp_width(c);
    if (ascii && c >= 0x80) {
        *cp = '?';
        *w = cw == 0 ? 0 : 1;
        return len;
    }
    *cp = c;
    *w = cw;
    return len;
}

void canvas_init(struct canvas *c, int w, int h, bool ascii)
{
    c->w = 0;
    c->h = 0;
    c->ascii = ascii;
    c->cells = NULL;
    canvas_resize(c, w, h);
}

void canvas_resize(struct canvas *c, int w, int h)
{
    free(c->cells);
    c->cells = NULL;
    c->w = w > 0 ? w : 0;
    c->h = h > 0 ? h : 0;
    if (c->w > 0 && c->h > 0)
        c->cells = xcalloc((size_t)c->w * (size_t)c->h, sizeof *c->cells);
    canvas_clear(c, THEME_BASE);
}

void canvas_free(struct canvas *c)
{
    free(c->cells);
    c->cells = NULL;
    c->w = c->h = 0;
}

void canvas_clear(struct canvas *c, enum theme_elem e)
{
    size_t n = (size_t)c->w * (size_t)c->h;
    for (size_t i = 0; i < n; i++) {
        c->cells[i].ch = ' ';
        c->cells[i].elem = (uint8_t)e;
        c->cells[i].attr = 0;
    }
}

struct cell *canvas_at(struct canvas *c, int x, int y)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return NULL;
    return &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
}

const struct cell *canvas_cat(const struct canvas *c, int x, int y)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return NULL;
    return &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
}

uint32_t canvas_glyph(const struct canvas *c, enum glyph g)
{
    if ((int)g < 0 || g >= G_COUNT)
        return c->ascii ? '?' : 0xFFFD;
    return c->ascii ? (uint32_t)glyphs[g].ascii : glyphs[g].uni;
}

uint32_t canvas_spark(const struct canvas *c, int level)
{
    if (level < 0)
        level = 0;
    if (level > 7)
        level = 7;
    return c->ascii ? (uint32_t)spark_ascii[level] : 0x2581u + (uint32_t)level;
}

/* Sets one cell; a code point that would not be safe in ASCII mode is
 * replaced, so the ASCII guarantee holds for every writer. */
static void put(struct canvas *c, int x, int y, uint32_t ch, enum theme_elem e)
{
    struct cell *cl = canvas_at(c, x, y);
    if (!cl)
        return;
    if (ch != CANVAS_CONT && (ch < 0x20 || ch == 0x7F || (c->ascii && ch >= 0x80)))
        ch = '?';
    /* Overwriting half of a wide character blanks the other half. */
    if (cl->ch == CANVAS_CONT) {
        struct cell *left = canvas_at(c, x - 1, y);
        if (left)
            left->ch = ' ';
    } else if (ch != CANVAS_CONT) {
        struct cell *right = canvas_at(c, x + 1, y);
        if (right && right->ch == CANVAS_CONT && cp_width(cl->ch) == 2)
            right->ch = ' ';
    }
    cl->ch = ch;
    cl->elem = (uint8_t)e;
    cl->attr = 0;
}

void canvas_putc(struct canvas *c, int x, int y, uint32_t ch, enum theme_elem e)
{
    if (ch == CANVAS_CONT || cp_width(ch) != 1) {
        if (ch != CANVAS_CONT && cp_width(ch) == 2 && !c->ascii && x + 1 < c->w && x >= 0) {
            put(c, x, y, ch, e);
            put(c, x + 1, y, CANVAS_CONT, e);
            return;
        }
        ch = '?';
    }
    put(c, x, y, ch, e);
}

void canvas_fill(struct canvas *c, int x, int y, int w, int h, uint32_t ch, enum theme_elem e)
{
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++)
            canvas_putc(c, x + i, y + j, ch, e);
}

int canvas_text_width(const struct canvas *c, const char *utf8)
{
    if (!utf8)
        return 0;
    const unsigned char *s = (const unsigned char *)utf8;
    size_t n = strlen(utf8);
    int total = 0;
    while (n > 0) {
        uint32_t cp;
        int w;
        size_t used = next_char(c->ascii, s, n, &cp, &w);
        s += used;
        n -= used;
        total += w;
    }
    return total;
}

int canvas_text(struct canvas *c, int x, int y, int maxw, const char *utf8, enum theme_elem e)
{
    if (!utf8 || y < 0 || y >= c->h)
        return 0;
    int limit = c->w - x;
    if (maxw >= 0 && maxw < limit)
        limit = maxw;
    if (limit <= 0)
        return 0;
    int total = canvas_text_width(c, utf8);
    int room = total > limit ? limit - 1 : limit; /* keep a column for the ellipsis */
    const unsigned char *s = (const unsigned char *)utf8;
    size_t n = strlen(utf8);
    int col = 0;
    while (n > 0) {
        uint32_t cp;
        int w;
        size_t used = next_char(c->ascii, s, n, &cp, &w);
        s += used;
        n -= used;
        if (w == 0)
            continue;
        if (col + w > room)
            break;
        if (w == 2) {
            put(c, x + col, y, cp, e);
            put(c, x + col + 1, y, CANVAS_CONT, e);
        } else {
            put(c, x + col, y, cp, e);
        }
        col += w;
    }
    if (total > limit) {
        while (col < limit - 1)
            put(c, x + col++, y, ' ', e);
        put(c, x + col++, y, canvas_glyph(c, G_ELLIPSIS), e);
    }
    return col;
}

int canvas_printf(struct canvas *c, int x, int y, int maxw, enum theme_elem e, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return canvas_text(c, x, y, maxw, buf, e);
}

void canvas_attr(struct canvas *c, int x, int y, int w, int h, uint8_t attr)
{
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            struct cell *cl = canvas_at(c, x + i, y + j);
            if (cl)
                cl->attr |= attr;
        }
}

void canvas_style(struct canvas *c, int x, int y, int w, int h, enum theme_elem e)
{
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            struct cell *cl = canvas_at(c, x + i, y + j);
            if (cl)
                cl->elem = (uint8_t)e;
        }
}

void canvas_box(struct canvas *c, int x, int y, int w, int h, enum theme_elem e)
{
    if (w < 2 || h < 2)
        return;
    for (int i = 1; i < w - 1; i++) {
        put(c, x + i, y, canvas_glyph(c, G_HLINE), e);
        put(c, x + i, y + h - 1, canvas_glyph(c, G_HLINE), e);
    }
    for (int j = 1; j < h - 1; j++) {
        put(c, x, y + j, canvas_glyph(c, G_VLINE), e);
        put(c, x + w - 1, y + j, canvas_glyph(c, G_VLINE), e);
    }
    put(c, x, y, canvas_glyph(c, G_TL), e);
    put(c, x + w - 1, y, canvas_glyph(c, G_TR), e);
    put(c, x, y + h - 1, canvas_glyph(c, G_BL), e);
    put(c, x + w - 1, y + h - 1, canvas_glyph(c, G_BR), e);
}

void canvas_bar(struct canvas *c, int x, int y, int width, double value, double max,
                enum theme_elem e)
{
    if (width <= 0 || !(max > 0) || !(value > 0))
        return;
    double frac = value / max;
    if (frac > 1)
        frac = 1;
    int n = (int)(frac * width + 0.5);
    if (n == 0)
        n = 1; /* a non-zero value always shows */
    for (int i = 0; i < n; i++)
        put(c, x + i, y, canvas_glyph(c, G_BAR_FULL), e);
}

/* 3x5 font: five rows of three bits (MSB = left column). */
static const struct {
    char ch;
    uint8_t rows[5];
} font[] = {
    {'0', {7, 5, 5, 5, 7}}, {'1', {2, 6, 2, 2, 7}}, {'2', {7, 1, 7, 4, 7}}, {'3', {7, 1, 7, 1, 7}},
    {'4', {5, 5, 7, 1, 1}}, {'5', {7, 4, 7, 1, 7}}, {'6', {7, 4, 7, 5, 7}}, {'7', {7, 1, 1, 1, 1}},
    {'8', {7, 5, 7, 5, 7}}, {'9', {7, 5, 7, 1, 7}}, {':', {0, 2, 0, 2, 0}}, {'.', {0, 0, 0, 0, 2}},
    {'%', {5, 1, 2, 4, 5}}, {'/', {1, 1, 2, 4, 4}}, {'-', {0, 0, 7, 0, 0}}, {'+', {0, 2, 7, 2, 0}},
    {'A', {2, 5, 7, 5, 5}}, {'C', {7, 4, 4, 4, 7}}, {'D', {6, 5, 5, 5, 6}}, {'E', {7, 4, 6, 4, 7}},
    {'H', {5, 5, 7, 5, 5}}, {'I', {7, 2, 2, 2, 7}}, {'K', {5, 5, 6, 5, 5}}, {'L', {4, 4, 4, 4, 7}},
    {'M', {5, 7, 7, 5, 5}}, {'N', {6, 5, 5, 5, 5}}, {'O', {7, 5, 5, 5, 7}}, {'P', {7, 5, 7, 4, 4}},
    {'R', {6, 5, 6, 5, 5}}, {'S', {7, 4, 7, 1, 7}}, {'T', {7, 2, 2, 2, 2}}, {'U', {5, 5, 5, 5, 7}},
    {'W', {5, 5, 7, 7, 5}}, {'Z', {7, 1, 2, 4, 7}},
};

int canvas_bigtext(struct canvas *c, int x, int y, const char *text, enum theme_elem e)
{
    int col = 0;
    if (!text)
        return 0;
    for (const char *p = text; *p; p++) {
        char ch = *p;
        if (ch >= 'a' && ch <= 'z')
            ch = (char)(ch - 'a' + 'A');
        const uint8_t *rows = NULL;
        for (size_t i = 0; i < sizeof font / sizeof font[0]; i++)
            if (font[i].ch == ch) {
                rows = font[i].rows;
                break;
            }
        if (rows)
            for (int r = 0; r < 5; r++)
                for (int b = 0; b < 3; b++)
                    if (rows[r] & (4 >> b))
                        put(c, x + col + b, y + r, canvas_glyph(c, G_BLOCK), e);
        col += 4;
    }
    return col;
}

void canvas_row_text(const struct canvas *c, int y, char *out, size_t outlen)
{
    size_t o = 0;
    if (outlen == 0)
        return;
    for (int x = 0; y >= 0 && y < c->h && x < c->w; x++) {
        uint32_t cp = c->cells[(size_t)y * (size_t)c->w + (size_t)x].ch;
        char enc[4];
        size_t n;
        if (cp == CANVAS_CONT)
            continue;
        if (cp < 0x80) {
            enc[0] = (char)cp;
            n = 1;
        } else if (cp < 0x800) {
            enc[0] = (char)(0xC0 | (cp >> 6));
            enc[1] = (char)(0x80 | (cp & 0x3F));
            n = 2;
        } else if (cp < 0x10000) {
            enc[0] = (char)(0xE0 | (cp >> 12));
            enc[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
            enc[2] = (char)(0x80 | (cp & 0x3F));
            n = 3;
        } else {
            enc[0] = (char)(0xF0 | (cp >> 18));
            enc[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
            enc[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
            enc[3] = (char)(0x80 | (cp & 0x3F));
            n = 4;
        }
        if (o + n >= outlen)
            break;
        memcpy(out + o, enc, n);
        o += n;
    }
    out[o] = '\0';
}
