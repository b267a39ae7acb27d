/*
 * theme.c - parses dashboard theme files (TUI.md section 6) and resolves
 * element styles for the terminal's colour depth.
 *
 * The format is INI-like: [theme] (name), [palette] (`name = #hex[,
 * index[, 8/16-name]]`), [elements] (`element = fg;bg;attrs`, an empty
 * field inherits base's) and [mono] (`element = attrs` for terminals
 * without colour).  Parsing runs in two passes over the same text so that
 * [elements] may use palette names defined anywhere in the file.  Lines
 * whose first non-blank character is ';' or '#' are comments; a section
 * header may carry a trailing comment.  Unknown sections and keys warn;
 * malformed lines and values are errors reported as `file:line: message`.
 * The embedded themes are plain theme text run through the same parser.
 */
#include "tui/theme.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/theme_builtin.h"
#include "util/err.h"
#include "util/log.h"
#include "util/xalloc.h"

#define LINE_MAX_LEN 1024
#define PAL_MAX      64
#define PAL_NAME_MAX 32
#define NAME_MAX_LEN 64

struct color {
    uint8_t is_default; /* `default`: the terminal's own colour */
    uint8_t has_rgb, has_index, has_ansi;
    uint32_t rgb;
    uint8_t index; /* 0..255 */
    uint8_t ansi;  /* 0..15 */
};

struct pal_entry {
    char name[PAL_NAME_MAX];
    struct color c;
};

struct elem {
    uint8_t defined, has_fg, has_bg, has_attrs, has_mono;
    struct color fg, bg;
    unsigned attrs, mono;
};

struct theme {
    char name[NAME_MAX_LEN];
    struct pal_entry pal[PAL_MAX];
    size_t npal;
    struct elem el[THEME_ELEM_COUNT];
};

static const char *const elem_names[THEME_ELEM_COUNT] = {
    [THEME_BASE] = "base",
    [THEME_MUTED] = "muted",
    [THEME_TITLE] = "title",
    [THEME_BORDER] = "border",
    [THEME_BORDER_FOCUS] = "border.focus",
    [THEME_TAB] = "tab",
    [THEME_TAB_ACTIVE] = "tab.active",
    [THEME_HINT] = "hint",
    [THEME_STATUS] = "status",
    [THEME_STATUS_LIVE] = "status.live",
    [THEME_STATUS_RETRY] = "status.retry",
    [THEME_STATUS_DOWN] = "status.down",
    [THEME_STATUS_STALE] = "status.stale",
    [THEME_SELECTED] = "selected",
    [THEME_MATCH] = "match",
    [THEME_FLASH] = "flash",
    [THEME_UNSEEN] = "unseen",
    [THEME_BANNER] = "banner",
    [THEME_SEV_CRITICAL] = "sev.critical",
    [THEME_SEV_HIGH] = "sev.high",
    [THEME_SEV_MEDIUM] = "sev.medium",
    [THEME_SEV_LOW] = "sev.low",
    [THEME_OK] = "ok",
    [THEME_WARN] = "warn",
    [THEME_BAD] = "bad",
    [THEME_INFO] = "info",
    [THEME_CHART_BAR] = "chart.bar",
    [THEME_MAP_LAND] = "map.land",
    [THEME_MAP_MARKER_OK] = "map.marker.ok",
    [THEME_MAP_MARKER_LOW] = "map.marker.low",
    [THEME_MAP_MARKER_MID] = "map.marker.mid",
    [THEME_MAP_MARKER_HIGH] = "map.marker.high",
    [THEME_HEAT_0] = "heat.0",
    [THEME_HEAT_1] = "heat.1",
    [THEME_HEAT_2] = "heat.2",
    [THEME_HEAT_3] = "heat.3",
    [THEME_HEAT_4] = "heat.4",
    [THEME_CHAIN_OK] = "chain.ok",
    [THEME_CHAIN_BROKEN] = "chain.broken",
};

/* The 16 ANSI names; "bright-x" and "brightx" both work, grey = gray. */
static const char *const ansi_names[16] = {
    "black",        "red",           "green",       "yellow",         "blue",
    "magenta",      "cyan",          "white",       "bright-black",   "bright-red",
    "bright-green", "bright-yellow", "bright-blue", "bright-magenta", "bright-cyan",
    "bright-white",
};

/* xterm's default RGB for the 16 ANSI colours. */
static const uint32_t ansi_rgb[16] = {
    0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
    0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
};

static const struct {
    const char *name;
    unsigned bit;
} attr_names[] = {
    {"bold", THEME_ATTR_BOLD}, {"underline", THEME_ATTR_UNDERLINE}, {"reverse", THEME_ATTR_REVERSE},
    {"dim", THEME_ATTR_DIM},   {"italic", THEME_ATTR_ITALIC},
};

enum section { SEC_NONE, SEC_THEME, SEC_PALETTE, SEC_ELEMENTS, SEC_MONO, SEC_UNKNOWN };

struct pctx {
    const char *file;
    int line;
    int pass; /* 1: palette only, 2: everything else */
    char *err;
    size_t errlen;
    theme_warn_cb warn;
    void *ud;
    struct theme *t;
};

const char *theme_elem_name(enum theme_elem e)
{
    if ((int)e < 0 || e >= THEME_ELEM_COUNT)
        return NULL;
    return elem_names[e];
}

int theme_elem_from_name(const char *name)
{
    for (int i = 0; i < THEME_ELEM_COUNT; i++)
        if (strcmp(elem_names[i], name) == 0)
            return i;
    return -1;
}

/* ---- colour arithmetic ---- */

static const int cube_level[6] = {0, 95, 135, 175, 215, 255};

uint32_t theme_index_rgb(int index)
{
    if (index < 0 || index > 255)
        return 0;
    if (index < 16)
        return ansi_rgb[index];
    if (index >= 232) {
        uint32_t v = (uint32_t)(8 + (index - 232) * 10);
        return v << 16 | v << 8 | v;
    }
    index -= 16;
    return (uint32_t)cube_level[index / 36] << 16 | (uint32_t)cube_level[(index / 6) % 6] << 8 |
           (uint32_t)cube_level[index % 6];
}

static long rgb_dist(uint32_t a, uint32_t b)
{
    long dr = (long)(a >> 16 & 0xff) - (long)(b >> 16 & 0xff);
    long dg = (long)(a >> 8 & 0xff) - (long)(b >> 8 & 0xff);
    long db = (long)(a & 0xff) - (long)(b & 0xff);
    return dr * dr + dg * dg + db * db;
}

/* Indexes 0..15 are left out: terminals redefine them freely. */
int theme_nearest_256(uint32_t rgb)
{
    int best = 16;
    long bd = -1;
    for (int i = 16; i < 256; i++) {
        long d = rgb_dist(rgb, theme_index_rgb(i));
        if (bd < 0 || d < bd) {
            bd = d;
            best = i;
        }
    }
    return best;
}

int theme_nearest_16(uint32_t rgb)
{
    int best = 0;
    long bd = -1;
    for (int i = 0; i < 16; i++) {
        long d = rgb_dist(rgb, ansi_rgb[i]);
        if (bd < 0 || d < bd) {
            bd = d;
            best = i;
        }
    }
    return best;
}

/* ---- messages ---- */

static int perr(struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(struct pctx *c, const char *fmt, ...)
{
    if (c->err && c->errlen) {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(c->err, c->errlen, "%s:%d: %s", c->file, c->line, msg);
    }
    return ERR_INVALID;
}

static void pwarn(struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pwarn(struct pctx *c, const char *fmt, ...)
{
    char msg[256], full[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "%s:%d: %s", c->file, c->line, msg);
    if (c->warn)
        c->warn(full, c->ud);
    else
        log_warn("theme: %s", full);
}

/* ---- value parsing ---- */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

static int valid_name(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n >= max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '-'))
            return 0;
    }
    return 1;
}

static int parse_hex(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    if (s[0] != '#' || strlen(s) != 7)
        return -1;
    for (int i = 1; i < 7; i++) {
        char ch = s[i];
        int d;
        if (ch >= '0' && ch <= '9')
            d = ch - '0';
        else if (ch >= 'a' && ch <= 'f')
            d = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F')
            d = ch - 'A' + 10;
        else
            return -1;
        v = v << 4 | (uint32_t)d;
    }
    *out = v;
    return 0;
}

/* 0..255 in plain decimal (no sign, at most 3 digits); -1 otherwise. */
static int parse_index(const char *s)
{
    size_t n = strlen(s);
    int v = 0;
    if (n == 0 || n > 3)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v <= 255 ? v : -1;
}

static int parse_ansi(const char *s)
{
    if (strcmp(s, "gray") == 0 || strcmp(s, "grey") == 0)
        return 8;
    for (int i = 0; i < 16; i++) {
        if (strcmp(s, ansi_names[i]) == 0)
            return i;
        /* "brightred" as well as "bright-red" */
        if (i >= 8 && strncmp(s, "bright", 6) == 0 && strcmp(s + 6, ansi_names[i] + 7) == 0)
            return i;
    }
    return -1;
}

static const struct pal_entry *pal_find(const struct theme *t, const char *name)
{
    for (size_t i = 0; i < t->npal; i++)
        if (strcmp(t->pal[i].name, name) == 0)
            return &t->pal[i];
    return NULL;
}

/* An element colour: default, #hex, 0-255, palette name or 8/16 name. */
static int parse_color(struct pctx *c, const char *s, struct color *out)
{
    const struct pal_entry *pe;
    int v;

    memset(out, 0, sizeof *out);
    if (strcmp(s, "default") == 0) {
        out->is_default = 1;
        return 0;
    }
    if (s[0] == '#') {
        if (parse_hex(s, &out->rgb) < 0)
            return perr(c, "bad colour '%s' (want #rrggbb)", s);
        out->has_rgb = 1;
        return 0;
    }
    if (s[0] >= '0' && s[0] <= '9') {
        v = parse_index(s);
        if (v < 0)
            return perr(c, "bad colour index '%s' (want 0-255)", s);
        out->has_index = 1;
        out->index = (uint8_t)v;
        return 0;
    }
    pe = pal_find(c->t, s);
    if (pe) {
        *out = pe->c;
        return 0;
    }
    v = parse_ansi(s);
    if (v < 0)
        return perr(c, "unknown colour '%s'", s);
    out->has_ansi = 1;
    out->ansi = (uint8_t)v;
    return 0;
}

static int parse_attrs(struct pctx *c, char *s, unsigned *out)
{
    unsigned a = 0;
    char *save = NULL, *tok;

    s = trim(s);
    if (strcmp(s, "none") == 0) {
        *out = 0;
        return 0;
    }
    if (!*s || s[strlen(s) - 1] == '+' || s[0] == '+')
        return perr(c, "empty attribute in '%s'", s);
    for (tok = strtok_r(s, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
        size_t i;
        tok = trim(tok);
        for (i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++)
            if (strcmp(tok, attr_names[i].name) == 0)
                break;
        if (i == sizeof attr_names / sizeof attr_names[0])
            return perr(c, "unknown attribute '%s'", tok);
        a |= attr_names[i].bit;
    }
    *out = a;
    return 0;
}

/* Splits s at `sep` into at most max fields (in place); -1 if more. */
static int split(char *s, char sep, char **f, int max)
{
    int n = 0;
    for (;;) {
        char *p = strchr(s, sep);
        if (n == max)
            return -1;
        f[n++] = trim(s);
        if (!p)
            break;
        *p = '\0';
        f[n - 1] = trim(s);
        s = p + 1;
    }
    return n;
}

/* ---- lines ---- */

static int on_palette(struct pctx *c, const char *key, char *val)
{
    struct pal_entry *pe;
    char *f[3];
    int n, v;

    if (!valid_name(key, PAL_NAME_MAX))
        return perr(c, "bad palette name '%s'", key);
    n = split(val, ',', f, 3);
    if (n < 0)
        return perr(c, "palette entry wants #hex[, 256-index[, 8/16-name]]");
    pe = (struct pal_entry *)pal_find(c->t, key);
    if (!pe) {
        if (c->t->npal == PAL_MAX)
            return perr(c, "too many palette entries (max %d)", PAL_MAX);
        pe = &c->t->pal[c->t->npal++];
        snprintf(pe->name, sizeof pe->name, "%s", key);
    }
    memset(&pe->c, 0, sizeof pe->c);
    if (parse_hex(f[0], &pe->c.rgb) < 0)
        return perr(c, "bad colour '%s' (want #rrggbb)", f[0]);
    pe->c.has_rgb = 1;
    if (n >= 2 && *f[1]) {
        v = parse_index(f[1]);
        if (v < 0)
            return perr(c, "bad colour index '%s' (want 0-255)", f[1]);
        pe->c.has_index = 1;
        pe->c.index = (uint8_t)v;
    }
    if (n == 3 && *f[2]) {
        v = parse_ansi(f[2]);
        if (v < 0)
            return perr(c, "unknown 8/16 colour name '%s'", f[2]);
        pe->c.has_ansi = 1;
        pe->c.ansi = (uint8_t)v;
    }
    return 0;
}

static int on_element(struct pctx *c, const char *key, char *val)
{
    struct elem el;
    char *f[3];
    int n, e = theme_elem_from_name(key);

    if (e < 0) {
        pwarn(c, "unknown element '%s' ignored", key);
        return 0;
    }
    n = split(val, ';', f, 3);
    if (n < 0)
        return perr(c, "element wants fg;bg;attrs");
    memset(&el, 0, sizeof el);
    el.defined = 1;
    if (*f[0]) {
        if (parse_color(c, f[0], &el.fg) < 0)
            return ERR_INVALID;
        el.has_fg = 1;
    }
    if (n >= 2 && *f[1]) {
        if (parse_color(c, f[1], &el.bg) < 0)
            return ERR_INVALID;
        el.has_bg = 1;
    }
    if (n == 3 && *f[2]) {
        if (parse_attrs(c, f[2], &el.attrs) < 0)
            return ERR_INVALID;
        el.has_attrs = 1;
    }
    /* keep a [mono] line that came first */
    el.has_mono = c->t->el[e].has_mono;
    el.mono = c->t->el[e].mono;
    c->t->el[e] = el;
    return 0;
}

static int on_mono(struct pctx *c, const char *key, char *val)
{
    unsigned a;
    int e = theme_elem_from_name(key);

    if (e < 0) {
        pwarn(c, "unknown element '%s' ignored", key);
        return 0;
    }
    if (parse_attrs(c, val, &a) < 0)
        return ERR_INVALID;
    c->t->el[e].has_mono = 1;
    c->t->el[e].mono = a;
    return 0;
}

static int on_header(struct pctx *c, char *s, enum section *sec)
{
    char *end = strchr(s, ']');
    char *rest;

    if (!end)
        return perr(c, "section header without ']'");
    *end = '\0';
    rest = trim(end + 1);
    if (*rest && *rest != ';' && *rest != '#')
        return perr(c, "unexpected text after section header");
    s = trim(s + 1);
    if (strcmp(s, "theme") == 0)
        *sec = SEC_THEME;
    else if (strcmp(s, "palette") == 0)
        *sec = SEC_PALETTE;
    else if (strcmp(s, "elements") == 0)
        *sec = SEC_ELEMENTS;
    else if (strcmp(s, "mono") == 0)
        *sec = SEC_MONO;
    else {
        *sec = SEC_UNKNOWN;
        if (c->pass == 2)
            pwarn(c, "unknown section [%s] ignored", s);
    }
    return 0;
}

static int on_line(struct pctx *c, char *s, enum section *sec)
{
    char *eq, *key, *val;

    s = trim(s);
    if (!*s || *s == ';' || *s == '#')
        return 0;
    if (*s == '[')
        return on_header(c, s, sec);
    if (*sec == SEC_UNKNOWN)
        return 0;
    eq = strchr(s, '=');
    if (!eq)
        return perr(c, "expected 'key = value'");
    *eq = '\0';
    key = trim(s);
    val = trim(eq + 1);
    if (!*key)
        return perr(c, "empty key");
    if (*sec == SEC_NONE)
        return perr(c, "'%s' outside a section", key);
    if (c->pass == 1)
        return *sec == SEC_PALETTE ? on_palette(c, key, val) : 0;
    switch (*sec) {
    case SEC_THEME:
        if (strcmp(key, "name") == 0) {
            if (!*val)
                return perr(c, "empty theme name");
            snprintf(c->t->name, sizeof c->t->name, "%s", val);
        } else {
            pwarn(c, "unknown key '%s' in [theme] ignored", key);
        }
        return 0;
    case SEC_ELEMENTS:
        return on_element(c, key, val);
    case SEC_MONO:
        return on_mono(c, key, val);
    default:
        return 0;
    }
}

static int run_pass(struct pctx *c, const char *text, size_t len)
{
    char line[LINE_MAX_LEN + 1];
    enum section sec = SEC_NONE;
    size_t i = 0;
    int rc = 0;

    c->line = 0;
    while (i < len && !rc) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        c->line++;
        size_t n = j - i;
        if (n && text[i + n - 1] == '\r')
            n--;
        if (n > LINE_MAX_LEN) {
            rc = perr(c, "line longer than %d bytes", LINE_MAX_LEN);
            break;
        }
        if (memchr(text + i, '\0', n)) {
            rc = perr(c, "NUL byte in line");
            break;
        }
        memcpy(line, text + i, n);
        line[n] = '\0';
        rc = on_line(c, line, &sec);
        i = j + 1;
    }
    return rc;
}

struct theme *theme_parse(const char *text, size_t len, const char *file, char *err, size_t errlen,
                          theme_warn_cb warn, void *ud)
{
    struct theme *t = xcalloc(1, sizeof *t);
    struct pctx c = {file ? file : "<theme>", 0, 1, err, errlen, warn, ud, t};

    if (err && errlen)
        err[0] = '\0';
    if (len > THEME_FILE_MAX) {
        perr(&c, "theme larger than %u bytes", THEME_FILE_MAX);
        goto fail;
    }
    if (run_pass(&c, text, len) < 0)
        goto fail;
    c.pass = 2;
    if (run_pass(&c, text, len) < 0)
        goto fail;
    if (!t->name[0])
        snprintf(t->name, sizeof t->name, "%s", c.file);
    return t;
fail:
    free(t);
    return NULL;
}

struct theme *theme_parse_file(const char *path, char *err, size_t errlen, theme_warn_cb warn,
                               void *ud)
{
    struct theme *t = NULL;
    char *text = xmalloc(THEME_FILE_MAX + 1);
    size_t n = 0;
    FILE *f = fopen(path, "rb");

    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "%s:0: cannot open: %s", path, strerror(errno));
        goto out;
    }
    n = fread(text, 1, THEME_FILE_MAX + 1, f);
    if (ferror(f)) {
        if (err && errlen)
            snprintf(err, errlen, "%s:0: read error", path);
        goto out;
    }
    if (n > THEME_FILE_MAX) {
        if (err && errlen)
            snprintf(err, errlen, "%s:0: file larger than %u bytes", path, THEME_FILE_MAX);
        goto out;
    }
    t = theme_parse(text, n, path, err, errlen, warn, ud);
out:
    if (f)
        fclose(f);
    free(text);
    return t;
}

void theme_free(struct theme *t)
{
    free(t);
}

const char *theme_name(const struct theme *t)
{
    return t->name;
}

int theme_has_element(const struct theme *t, enum theme_elem e)
{
    return (int)e >= 0 && e < THEME_ELEM_COUNT && t->el[e].defined;
}

int theme_has_mono(const struct theme *t, enum theme_elem e)
{
    return (int)e >= 0 && e < THEME_ELEM_COUNT && t->el[e].has_mono;
}

/* ---- resolution ---- */

/* One colour at depth d; *bold set when 8 colours need bold for bright. */
static int32_t resolve_color(const struct color *c, int present, enum theme_depth d, int *bold)
{
    int a;

    if (!present || c->is_default || d == THEME_DEPTH_MONO)
        return THEME_COLOR_DEFAULT;
    switch (d) {
    case THEME_DEPTH_TRUE:
        if (c->has_rgb)
            return (int32_t)c->rgb;
        return (int32_t)theme_index_rgb(c->has_index ? c->index : c->ansi);
    case THEME_DEPTH_256:
        if (c->has_index)
            return c->index;
        if (c->has_rgb)
            return theme_nearest_256(c->rgb);
        return c->ansi;
    default:
        if (c->has_ansi)
            a = c->ansi;
        else if (c->has_rgb)
            a = theme_nearest_16(c->rgb);
        else if (c->index < 16)
            a = c->index;
        else
            a = theme_nearest_16(theme_index_rgb(c->index));
        if (d == THEME_DEPTH_8 && a >= 8) {
            a -= 8;
            if (bold)
                *bold = 1;
        }
        return a;
    }
}

int theme_resolve(const struct theme *t, enum theme_elem e, enum theme_depth d,
                  struct theme_style *out)
{
    const struct elem *base, *el;
    int bold = 0;

    if ((int)e < 0 || e >= THEME_ELEM_COUNT)
        return ERR_INVALID;
    base = &t->el[THEME_BASE];
    el = t->el[e].defined ? &t->el[e] : base;
    if (d == THEME_DEPTH_MONO) {
        out->fg = out->bg = THEME_COLOR_DEFAULT;
        out->attrs = t->el[e].has_mono ? t->el[e].mono : 0;
        return 0;
    }
    out->fg = el->has_fg ? resolve_color(&el->fg, 1, d, &bold)
                         : resolve_color(&base->fg, base->has_fg, d, &bold);
    out->bg = el->has_bg ? resolve_color(&el->bg, 1, d, NULL)
                         : resolve_color(&base->bg, base->has_bg, d, NULL);
    out->attrs = el->has_attrs ? el->attrs : base->has_attrs ? base->attrs : 0;
    if (bold)
        out->attrs |= THEME_ATTR_BOLD;
    return 0;
}

/* ---- builtins and search path ---- */

const char *theme_builtin_text(const char *name)
{
    if (strcmp(name, "default-dark") == 0)
        return theme_builtin_default_dark;
    if (strcmp(name, "mono") == 0)
        return theme_builtin_mono;
    return NULL;
}

struct theme *theme_load_builtin(const char *name)
{
    const char *text = theme_builtin_text(name);
    char label[80];

    if (!text)
        return NULL;
    snprintf(label, sizeof label, "<builtin %s>", name);
    return theme_parse(text, strlen(text), label, NULL, 0, NULL, NULL);
}

size_t theme_search_dirs(const char *flag_dir, const char *env_dir, const char *home,
                         const char *prefix, char **dirs, size_t max)
{
    size_t n = 0;
    char tmp[4096];

    if (flag_dir && *flag_dir && n < max)
        dirs[n++] = xstrdup(flag_dir);
    if (env_dir && *env_dir && n < max)
        dirs[n++] = xstrdup(env_dir);
    if (home && *home && n < max &&
        (size_t)snprintf(tmp, sizeof tmp, "%s/.config/genuproof/themes", home) < sizeof tmp)
        dirs[n++] = xstrdup(tmp);
    if (prefix && *prefix && n < max &&
        (size_t)snprintf(tmp, sizeof tmp, "%s/share/genuproof/themes", prefix) < sizeof tmp)
        dirs[n++] = xstrdup(tmp);
    if (n < max)
        dirs[n++] = xstrdup("./themes");
    return n;
}

void theme_dirs_free(char **dirs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(dirs[i]);
        dirs[i] = NULL;
    }
}

int theme_find(const char *name, char *const *dirs, size_t n, char *path, size_t pathlen)
{
    int toolong = 0;

    if (!valid_name(name, NAME_MAX_LEN) || name[0] == '.')
        return ERR_INVALID;
    for (size_t i = 0; i < n; i++) {
        FILE *f;
        int w = snprintf(path, pathlen, "%s/%s.theme", dirs[i], name);
        if (w < 0 || (size_t)w >= pathlen) {
            toolong = 1;
            continue;
        }
        f = fopen(path, "rb");
        if (f) {
            fclose(f);
            return 0;
        }
    }
    if (pathlen)
        path[0] = '\0';
    return toolong ? ERR_TOOBIG : ERR_NOTFOUND;
}

struct theme *theme_load(const char *name, char *const *dirs, size_t n, char *err, size_t errlen,
                         theme_warn_cb warn, void *ud)
{
    char path[4096];
    struct theme *t = NULL;
    int rc = theme_find(name, dirs, n, path, sizeof path);

    if (rc == 0) {
        t = theme_parse_file(path, err, errlen, warn, ud);
    } else if (rc == ERR_INVALID) {
        if (err && errlen)
            snprintf(err, errlen, "theme: bad theme name '%.64s'", name);
    } else {
        t = theme_load_builtin(name);
        if (!t && err && errlen)
            snprintf(err, errlen, "theme: no %.64s.theme on the search path", name);
    }
    return t;
}
