/*
 * theme.h - dashboard themes: the file format of TUI.md section 6, the
 * element roles the views draw with, and colour-depth resolution.
 *
 * A theme is parsed from text (a file or one of the embedded themes,
 * `default-dark` and `mono`, which go through the same parser).  Elements
 * are an enum; theme_resolve() turns an element into a style for a given
 * terminal depth, applying the fallbacks (missing element -> base, missing
 * field -> base's field, missing [mono] entry -> no attributes).  Nothing
 * here draws: the screen layer maps theme_style onto colour
 * pairs and A_* attributes.
 */
#ifndef GP_TUI_THEME_H
#define GP_TUI_THEME_H

#include <stddef.h>
#include <stdint.h>

enum theme_elem {
    THEME_BASE,
    THEME_MUTED,
    THEME_TITLE,
    THEME_BORDER,
    THEME_BORDER_FOCUS,
    THEME_TAB,
    THEME_TAB_ACTIVE,
    THEME_HINT,
    THEME_STATUS,
    THEME_STATUS_LIVE,
    THEME_STATUS_RETRY,
    THEME_STATUS_DOWN,
    THEME_STATUS_STALE,
    THEME_SELECTED,
    THEME_MATCH,
    THEME_FLASH,
    THEME_UNSEEN,
    THEME_BANNER,
    THEME_SEV_CRITICAL,
    THEME_SEV_HIGH,
    THEME_SEV_MEDIUM,
    THEME_SEV_LOW,
    THEME_OK,
    THEME_WARN,
    THEME_BAD,
    THEME_INFO,
    THEME_CHART_BAR,
    THEME_MAP_LAND,
    THEME_MAP_MARKER_OK,
    THEME_MAP_MARKER_LOW,
    THEME_MAP_MARKER_MID,
    THEME_MAP_MARKER_HIGH,
    THEME_HEAT_0,
    THEME_HEAT_1,
    THEME_HEAT_2,
    THEME_HEAT_3,
    THEME_HEAT_4,
    THEME_CHAIN_OK,
    THEME_CHAIN_BROKEN,
    THEME_ELEM_COUNT
};

/* Attribute bits (the screen layer maps them to A_BOLD etc.). */
enum {
    THEME_ATTR_BOLD = 1u << 0,
    THEME_ATTR_UNDERLINE = 1u << 1,
    THEME_ATTR_REVERSE = 1u << 2,
    THEME_ATTR_DIM = 1u << 3,
    THEME_ATTR_ITALIC = 1u << 4
};

enum theme_depth {
    THEME_DEPTH_MONO, /* no colour: [mono] attributes */
    THEME_DEPTH_8,    /* 8 colours: bright foregrounds via bold */
    THEME_DEPTH_16,
    THEME_DEPTH_256,
    THEME_DEPTH_TRUE /* 2^24 colours (*-direct TERM) */
};

#define THEME_COLOR_DEFAULT (-1) /* the terminal's own colour */

/* A resolved style.  fg/bg: THEME_COLOR_DEFAULT, or 0xRRGGBB (TRUE),
 * 0..255 (256), 0..15 (16), 0..7 (8); always default in MONO. */
struct theme_style {
    int32_t fg;
    int32_t bg;
    unsigned attrs;
};

/* Receives one warning ("file:line: message") during parsing. */
typedef void (*theme_warn_cb)(const char *msg, void *ud);

struct theme;

/* "base", "sev.critical", ... for an element; NULL when out of range. */
const char *theme_elem_name(enum theme_elem e);
/* The element named `name`; -1 when unknown. */
int theme_elem_from_name(const char *name);

/* Parses theme text.  `file` names it in messages.  Unknown sections and
 * keys are reported through warn (NULL: log_warn) and ignored.  On error
 * returns NULL with "file:line: message" in err (if errlen > 0).  On
 * success returns a theme the caller frees with theme_free(). */
struct theme *theme_parse(const char *text, size_t len, const char *file, char *err, size_t errlen,
                          theme_warn_cb warn, void *ud);
/* Reads and parses a file (at most THEME_FILE_MAX bytes); as theme_parse. */
struct theme *theme_parse_file(const char *path, char *err, size_t errlen, theme_warn_cb warn,
                               void *ud);
void theme_free(struct theme *t);

#define THEME_FILE_MAX (256u * 1024u)

/* The [theme] name, or the name it was loaded as when the file has none. */
const char *theme_name(const struct theme *t);
/* 1 when the element has its own [elements] / [mono] line. */
int theme_has_element(const struct theme *t, enum theme_elem e);
int theme_has_mono(const struct theme *t, enum theme_elem e);

/* Resolves element e for depth d into *out.  On error (e out of range)
 * returns ERR_INVALID.  On success returns 0. */
int theme_resolve(const struct theme *t, enum theme_elem e, enum theme_depth d,
                  struct theme_style *out);

/* The embedded text of `default-dark` or `mono`; NULL for other names. */
const char *theme_builtin_text(const char *name);

/* Nearest xterm-256 index (16..255) and nearest of the 16 ANSI colours
 * to an 0xRRGGBB colour; index -> 0xRRGGBB per the xterm palette. */
int theme_nearest_256(uint32_t rgb);
int theme_nearest_16(uint32_t rgb);
uint32_t theme_index_rgb(int index);

/* Fills dirs[] (up to max) with the search path of TUI.md section 6, in
 * order, skipping NULL/empty inputs: flag_dir (--theme-dir), env_dir
 * ($GENUPROOF_THEME_DIR), <home>/.config/genuproof/themes,
 * <prefix>/share/genuproof/themes, ./themes.  The strings are malloc'd;
 * free them with theme_dirs_free().  Returns how many were filled. */
size_t theme_search_dirs(const char *flag_dir, const char *env_dir, const char *home,
                         const char *prefix, char **dirs, size_t max);
void theme_dirs_free(char **dirs, size_t n);

/* Finds <name>.theme in the first of dirs that has it.  Names are
 * [A-Za-z0-9._-] and may not start with '.'.  On error returns
 * ERR_INVALID (bad name), ERR_TOOBIG (path too long) or ERR_NOTFOUND.
 * On success returns 0 with the path in path[pathlen]. */
int theme_find(const char *name, char *const *dirs, size_t n, char *path, size_t pathlen);

/* Loads theme `name`: the first file on the search path, else the
 * embedded text of that name.  On error (not found anywhere, or a parse
 * error) returns NULL with the message in err; the caller then falls back
 * to theme_load_builtin("default-dark").  On success returns the theme. */
struct theme *theme_load(const char *name, char *const *dirs, size_t n, char *err, size_t errlen,
                         theme_warn_cb warn, void *ud);
/* Parses an embedded theme; NULL only for unknown names. */
struct theme *theme_load_builtin(const char *name);

#endif
