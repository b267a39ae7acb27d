/*
 * backoff.c - doubling backoff (see backoff.h).
 */
#include "util/backoff.h"

double backoff_next(double cur_s, double base_s, double max_s)
{
    double s = cur_s > 0 ? cur_s * 2 : base_s;
    return s > max_s ? max_s : s;
}
