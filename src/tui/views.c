/*
 * views.c - the view table: names for the tab bar and the `:` command
 * line, the dispatch to the seven view_<name>() functions, the display
 * clock and the feed's row budget.
 */
#include "tui/views.h"

#include <stdio.h>
#include <strings.h>
#include <time.h>

static const struct {
    const char *name, *shrt;
} names[VIEW_COUNT] = {
    [VIEW_OVERVIEW] = {"Overview", "Ovw"}, [VIEW_FEED] = {"Feed", "Feed"},
    [VIEW_MAP] = {"Map", "Map"},           [VIEW_OPS] = {"Ops", "Ops"},
    [VIEW_CHAIN] = {"Chain", "Chn"},       [VIEW_HEAT] = {"Heat", "Heat"},
    [VIEW_HEALTH] = {"Health", "Hlth"},
};

const char *view_name(enum view_id v)
{
    return (int)v >= 0 && v < VIEW_COUNT ? names[v].name : "";
}

const char *view_short(enum view_id v)
{
    return (int)v >= 0 && v < VIEW_COUNT ? names[v].shrt : "";
}

int view_parse(const char *name)
{
    if (!name)
        return -1;
    for (int v = 0; v < VIEW_COUNT; v++)
        if (!strcasecmp(name, names[v].name) || !strcasecmp(name, names[v].shrt))
            return v;
    return -1;
}

void view_draw(enum view_id v, struct canvas *c, int x, int y, int w, int h, const struct model *m,
               const struct view_ctx *ctx)
{
    static void (*const fns[VIEW_COUNT])(struct canvas *, int, int, int, int, const struct model *,
                                         const struct view_ctx *) = {
        [VIEW_OVERVIEW] = view_overview, [VIEW_FEED] = view_feed,   [VIEW_MAP] = view_map,
        [VIEW_OPS] = view_ops,           [VIEW_CHAIN] = view_chain, [VIEW_HEAT] = view_heat,
        [VIEW_HEALTH] = view_health,
    };
    if ((int)v < 0 || v >= VIEW_COUNT || w <= 0 || h <= 0)
        return;
    fns[v](c, x, y, w, h, m, ctx);
}

int view_feed_rows(int h, bool compact)
{
    (void)compact; /* both layouts keep one header row */
    return h > 1 ? h - 1 : 0;
}

void view_clock(int64_t ms, bool tz_local, char *out, size_t outlen)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (outlen == 0)
        return;
    if (tz_local) {
        if (!localtime_r(&t, &tm) || strftime(out, outlen, "%H:%M:%S %Z", &tm) == 0)
            snprintf(out, outlen, "--:--:--");
    } else {
        if (!gmtime_r(&t, &tm) || strftime(out, outlen, "%H:%M:%SZ", &tm) == 0)
            snprintf(out, outlen, "--:--:--Z");
    }
}
