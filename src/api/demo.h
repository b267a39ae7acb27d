/*
 * demo.h - the demo data set of API.md §13: the Luxe Watches brand and
 * its five products with their provenance chains, created through the
 * normal registration and append logic with the given signing secret.
 */
#ifndef GP_API_DEMO_H
#define GP_API_DEMO_H

#include <stddef.h>

struct store;

/* Creates whatever of the demo set is missing (idempotent: a second call
 * changes nothing).  Commits its own writes.  Returns 0, or a negative
 * ERR_* with a message in err. */
int demo_seed(struct store *s, const char *secret, char *err, size_t errlen);

#endif
