/*
 * store_conformance.h - the store test suite, run against any driver.
 *
 * A driver's test file (test_store_sqlite.c, later test_store_dynamo.c)
 * passes a factory: open(ctx) opens the driver's database - the same
 * database on every call until cleanup(ctx) - and cleanup(ctx) erases it
 * so the next open starts empty.  Every test opens, works, closes and
 * cleans up; some close and reopen in between (checkpoint resume).
 *
 * The suite installs a fake clock (store_set_clock) on every store it
 * opens, so TTL, stream timestamps and capacity windows are driven by the
 * tests.  Linked into every unit-test binary: defines no main().
 */
#ifndef GP_TESTS_STORE_CONFORMANCE_H
#define GP_TESTS_STORE_CONFORMANCE_H

struct store;

/* Runs the suite as a cmocka group named driver_name; returns the number
 * of failed tests. */
int store_conformance_run(const char *driver_name, struct store *(*open)(void *ctx),
                          void (*cleanup)(void *ctx), void *ctx);

#endif
