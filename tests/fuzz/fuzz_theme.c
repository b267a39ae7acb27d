/*
 * fuzz_theme.c - tui/theme.c on hostile theme text: parsing either fails
 * with a `file:line: message` error or yields a theme in which every
 * element resolves at every depth to values inside that depth's range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tui/theme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(const char *msg, void *ud)
{
    (void)ud;
    if (strncmp(msg, "f.theme:", 8) != 0)
        abort();
}

static int in_range(int32_t c, enum theme_depth d)
{
    static const int32_t max[] = {-1, 7, 15, 255, 0xffffff};
    return c == THEME_COLOR_DEFAULT || (c >= 0 && c <= max[d]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    struct theme_style s;
    struct theme *t =
        theme_parse((const char *)data, size, "f.theme", err, sizeof err, quiet, NULL);
    if (!t) {
        if (strncmp(err, "f.theme:", 8) != 0)
            abort();
        return 0;
    }
    for (int e = 0; e < THEME_ELEM_COUNT; e++)
        for (int d = THEME_DEPTH_MONO; d <= THEME_DEPTH_TRUE; d++) {
            if (theme_resolve(t, (enum theme_elem)e, (enum theme_depth)d, &s) != 0)
                abort();
            if (!in_range(s.fg, (enum theme_depth)d) || !in_range(s.bg, (enum theme_depth)d))
                abort();
            if (s.attrs & ~0x1fu)
                abort();
        }
    if (!theme_name(t)[0])
        abort();
    theme_free(t);
    return 0;
}
