/*
 * timescale.c - the GENUPROOF_TIME_SCALE factor (see timescale.h).
 */
#include "util/timescale.h"

#include <stdlib.h>

static double g_scale = -1.0;

void time_scale_set(double factor)
{
    g_scale = factor > 0 ? factor : -1.0;
}

double time_scale(void)
{
    if (g_scale < 0) {
        const char *e = getenv("GENUPROOF_TIME_SCALE");
        double f = e && *e ? strtod(e, NULL) : 1.0;
        if (!(f > 0))
            f = 1.0;
        if (f < 0.001)
            f = 0.001;
        if (f > 1000)
            f = 1000;
        g_scale = f;
    }
    return g_scale;
}

double scaled(double seconds)
{
    double s = seconds * time_scale();
    return s < 0.001 ? 0.001 : s;
}
