/*
 * backoff.h - the doubling backoff shared by the background workers that
 * retry after a store error (webhook dispatcher, classifier driver).
 */
#ifndef GP_UTIL_BACKOFF_H
#define GP_UTIL_BACKOFF_H

/* The next delay after a failure: base_s the first time (cur_s <= 0),
 * then doubling, capped at max_s.  Unscaled seconds. */
double backoff_next(double cur_s, double base_s, double max_s);

#endif
