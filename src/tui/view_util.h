/*
 * view_util.h - small helpers shared by the view_*.c files: drawing a
 * view on a private canvas of exactly its size and copying it into place
 * (so no view can write outside its rectangle), tolerant cJSON getters,
 * the "needs an admin key" / "not available" placeholders, ages and
 * section titles.  Internal to the dashboard views.
 */
#ifndef GP_TUI_VIEW_UTIL_H
#define GP_TUI_VIEW_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/canvas.h"
#include "tui/model.h"
#include "tui/views.h"

struct cJSON;

/* Draws into a w x h scratch canvas (same ASCII mode as c) with fn,
 * then copies it to (x, y) of c, clipped to c. */
typedef void (*vu_draw_fn)(struct canvas *c, const struct model *m, const struct view_ctx *ctx);
void vu_draw_clipped(struct canvas *c, int x, int y, int w, int h, vu_draw_fn fn,
                     const struct model *m, const struct view_ctx *ctx);

/* Member of an object (NULL when o is not an object or key missing). */
const struct cJSON *vu_get(const struct cJSON *o, const char *key);
/* Number member or def; true/false from vu_has_num. */
double vu_num(const struct cJSON *o, const char *key, double def);
bool vu_has_num(const struct cJSON *o, const char *key);
/* String member or def. */
const char *vu_str(const struct cJSON *o, const char *key, const char *def);
/* A JSON value as one line of text into out (strings unquoted). */
void vu_value_text(const struct cJSON *v, char *out, size_t outlen);

/*
 * When slot d has no data to draw, writes the reason ("needs an admin
 * key", "not available from this server", "loading...", "error <status>")
 * at (x, y) in at most w columns and returns true.  On data (even stale)
 * returns false and draws nothing.
 */
bool vu_placeholder(struct canvas *c, int x, int y, int w, const struct data_slot *d);

/* Age like "4s", "2m13s", "3h05m", "2d04h"; "-" for a negative age. */
void vu_age(int64_t ms, char *out, size_t outlen);
/* ISO text -> display clock (view_clock), or "-" when not a time. */
void vu_iso_clock(const char *iso, bool tz_local, char *out, size_t outlen);
/* A section title in THEME_TITLE. */
void vu_title(struct canvas *c, int x, int y, int w, const char *text);
/* Theme element of a severity. */
enum theme_elem vu_sev_elem(enum sev s);
/* Label/value alignment helper: writes "label value" and returns the x after it. */
int vu_kv(struct canvas *c, int x, int y, int maxw, const char *label, const char *value,
          enum theme_elem ve);

#endif
