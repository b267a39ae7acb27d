/*
 * test_resolver.c - name lookups off the loop (net/resolver.h).
 *
 * The lookups use a test function instead of getaddrinfo(): it answers
 * 192.0.2.7 for "ok.test", EAI_NONAME for "none.test", and for
 * "gate.test" waits until the test opens the gate.  The loop runs with
 * an unref'd guard timer that fails the test instead of hanging.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ev.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/resolver.h"
#include "util/err.h"

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_open;
static int in_fn; /* lookups inside test_fn right now */

static void gate_set(bool open)
{
    pthread_mutex_lock(&gate_mu);
    gate_open = open;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

static int test_fn(const char *host, struct addrinfo **out)
{
    struct addrinfo *ai;
    struct sockaddr_in *sin;

    pthread_mutex_lock(&gate_mu);
    in_fn++;
    if (!strcmp(host, "gate.test"))
        while (!gate_open)
            pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
    int rc = 0;
    if (!strcmp(host, "none.test")) {
        rc = EAI_NONAME;
    } else {
        ai = calloc(1, sizeof *ai + sizeof *sin);
        sin = (struct sockaddr_in *)(ai + 1);
        sin->sin_family = AF_INET;
        inet_pton(AF_INET, "192.0.2.7", &sin->sin_addr);
        ai->ai_family = AF_INET;
        ai->ai_socktype = SOCK_STREAM;
        ai->ai_addr = (struct sockaddr *)sin;
        ai->ai_addrlen = sizeof *sin;
        *out = ai;
    }
    pthread_mutex_lock(&gate_mu);
    in_fn--;
    pthread_mutex_unlock(&gate_mu);
    return rc;
}

/* freeaddrinfo() of glibc frees each entry with one free(): an entry
 * from test_fn is one block too, so the resolver's freeaddrinfo() is
 * right for both. */

struct seen {
    int calls;
    int rc;
    char addr[INET_ADDRSTRLEN];
    double at; /* ev_now of the call */
};

static void cb(void *arg, int rc, const struct addrinfo *res)
{
    struct seen *s = arg;
    s->calls++;
    s->rc = rc;
    s->addr[0] = '\0';
    if (!rc && res && res->ai_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)res->ai_addr)->sin_addr, s->addr,
                  sizeof s->addr);
    s->at = ev_now(EV_DEFAULT);
}

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents;
    fail_msg("the loop ran too long");
}

/* Runs the loop until *done != 0 (or the guard fires). */
static void run_until(struct ev_loop *loop, const int *done)
{
    ev_timer guard;
    ev_timer_init(&guard, guard_cb, 5.0, 0.);
    ev_timer_start(loop, &guard);
    ev_unref(loop);
    while (!*done)
        ev_run(loop, EVRUN_ONCE);
    ev_ref(loop);
    ev_timer_stop(loop, &guard);
}

/* Waits (off the loop) until the resolver runs n threads at most, and
 * checks it is exactly n then. */
static void wait_threads(struct resolver *rv, size_t n)
{
    for (int i = 0; i < 500 && resolver_threads(rv) > n; i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    assert_int_equal(resolver_threads(rv), n);
}

/* Waits until the resolver's threads are all gone. */
static void wait_threads_gone(struct resolver *rv)
{
    wait_threads(rv, 0);
}

/* Waits until n lookups are inside test_fn. */
static void wait_in_fn(int n)
{
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&gate_mu);
        int k = in_fn;
        pthread_mutex_unlock(&gate_mu);
        if (k == n)
            return;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    fail_msg("the lookups did not start");
}

static struct resolver *fresh(struct ev_loop *loop, size_t max)
{
    struct resolver *rv = resolver_new(loop, max);
    resolver_set_fn(rv, test_fn);
    gate_set(false);
    return rv;
}

static void test_answer(void **state)
{
    struct ev_loop *loop = EV_DEFAULT;
    struct resolver *rv = fresh(loop, 0);
    struct resolver_job *j;
    struct seen ok = {0}, none = {0};
    (void)state;

    assert_int_equal(resolver_lookup(rv, "ok.test", 2.0, cb, &ok, &j), 0);
    assert_non_null(j);
    assert_int_equal(resolver_lookup(rv, "none.test", 2.0, cb, &none, &j), 0);
    /* never called back from inside resolver_lookup */
    assert_int_equal(ok.calls + none.calls, 0);
    run_until(loop, &ok.calls);
    run_until(loop, &none.calls);
    assert_int_equal(ok.rc, 0);
    assert_string_equal(ok.addr, "192.0.2.7");
    assert_int_equal(none.rc, ERR_NOTFOUND);
    ev_run(loop, EVRUN_NOWAIT);
    assert_int_equal(ok.calls, 1);
    assert_int_equal(none.calls, 1);
    wait_threads_gone(rv);
    resolver_free(rv);
}

struct tick {
    int fired;
    struct seen *lookup; /* its state when the tick fired */
    int lookup_calls;
};

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct tick *t = w->data;
    (void)loop;
    (void)revents;
    t->fired++;
    t->lookup_calls = t->lookup->calls;
    gate_set(true); /* now let the lookup finish */
}

/* The loop keeps running (a timer fires) while a lookup is stuck. */
static void test_loop_not_held(void **state)
{
    struct ev_loop *loop = EV_DEFAULT;
    struct resolver *rv = fresh(loop, 0);
    struct resolver_job *j;
    struct seen s = {0};
    struct tick t = {.lookup = &s};
    ev_timer tick;
    (void)state;

    assert_int_equal(resolver_lookup(rv, "gate.test", 3.0, cb, &s, &j), 0);
    ev_timer_init(&tick, tick_cb, 0.05, 0.);
    tick.data = &t;
    ev_timer_start(loop, &tick);
    double t0 = ev_now(loop);
    run_until(loop, &s.calls);
    assert_int_equal(t.fired, 1);
    assert_int_equal(t.lookup_calls, 0); /* the timer ran while the lookup waited */
    assert_int_equal(s.rc, 0);
    assert_string_equal(s.addr, "192.0.2.7");
    assert_true(s.at - t0 < 2.0); /* the answer, not the deadline */
    wait_threads_gone(rv);
    resolver_free(rv);
}

static void test_timeout(void **state)
{
    struct ev_loop *loop = EV_DEFAULT;
    struct resolver *rv = fresh(loop, 0);
    struct resolver_job *j;
    struct seen s = {0};
    (void)state;

    ev_now_update(loop);
    double t0 = ev_now(loop);
    assert_int_equal(resolver_lookup(rv, "gate.test", 0.1, cb, &s, &j), 0);
    run_until(loop, &s.calls);
    assert_int_equal(s.rc, ERR_TIMEOUT);
    assert_true(s.at - t0 >= 0.09);
    /* the thread still runs; it frees the job when it returns */
    assert_int_equal(resolver_threads(rv), 1);
    gate_set(true);
    wait_threads_gone(rv);
    ev_run(loop, EVRUN_NOWAIT);
    assert_int_equal(s.calls, 1); /* the late answer is dropped */
    resolver_free(rv);
}

static void test_cancel(void **state)
{
    struct ev_loop *loop = EV_DEFAULT;
    struct resolver *rv = fresh(loop, 0);
    struct resolver_job *j1, *j2;
    struct seen s1 = {0}, s2 = {0};
    (void)state;

    /* cancelled while the lookup runs */
    assert_int_equal(resolver_lookup(rv, "gate.test", 2.0, cb, &s1, &j1), 0);
    wait_in_fn(1);
    resolver_cancel(j1);
    /* cancelled once answered, before the loop heard of it */
    assert_int_equal(resolver_lookup(rv, "ok.test", 2.0, cb, &s2, &j2), 0);
    wait_threads(rv, 1);
    resolver_cancel(j2);
    gate_set(true);
    wait_threads_gone(rv);
    for (int i = 0; i < 3; i++)
        ev_run(loop, EVRUN_NOWAIT);
    assert_int_equal(s1.calls, 0);
    assert_int_equal(s2.calls, 0);
    resolver_free(rv);
}

static void test_thread_bound(void **state)
{
    struct ev_loop *loop = EV_DEFAULT;
    struct resolver *rv = fresh(loop, 2);
    struct resolver_job *j;
    struct seen a = {0}, b = {0}, c = {0};
    (void)state;

    assert_int_equal(resolver_lookup(rv, "gate.test", 0.05, cb, &a, &j), 0);
    assert_int_equal(resolver_lookup(rv, "gate.test", 2.0, cb, &b, &j), 0);
    assert_int_equal(resolver_lookup(rv, "ok.test", 2.0, cb, &c, &j), ERR_THROTTLED);
    assert_null(j);
    /* a lookup that timed out still holds its thread */
    run_until(loop, &a.calls);
    assert_int_equal(a.rc, ERR_TIMEOUT);
    assert_int_equal(resolver_lookup(rv, "ok.test", 2.0, cb, &c, &j), ERR_THROTTLED);
    gate_set(true);
    run_until(loop, &b.calls);
    wait_threads_gone(rv);
    assert_int_equal(resolver_lookup(rv, "ok.test", 2.0, cb, &c, &j), 0);
    run_until(loop, &c.calls);
    assert_int_equal(c.rc, 0);
    wait_threads_gone(rv);
    resolver_free(rv);
}

static void test_bad_host(void **state)
{
    struct ev_loop *loop = EV_DEFAULT;
    struct resolver *rv = fresh(loop, 0);
    struct resolver_job *j;
    struct seen s = {0};
    char longname[RESOLVER_HOST_MAX + 2];
    struct addrinfo *res = NULL;
    (void)state;

    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(resolver_lookup(rv, "", 1.0, cb, &s, &j), ERR_INVALID);
    assert_int_equal(resolver_lookup(rv, longname, 1.0, cb, &s, &j), ERR_INVALID);
    assert_int_equal(resolver_lookup_wait(longname, 1.0, &res), ERR_INVALID);
    assert_null(res);
    assert_int_equal(resolver_threads(rv), 0);
    resolver_free(rv);
}

/* Freed with a lookup stuck: no callback, the thread cleans up. */
static void test_free_pending(void **state)
{
    struct ev_loop *loop = EV_DEFAULT;
    struct resolver *rv = fresh(loop, 0);
    struct resolver_job *j;
    struct seen s = {0};
    (void)state;

    assert_int_equal(resolver_lookup(rv, "gate.test", 2.0, cb, &s, &j), 0);
    wait_in_fn(1);
    resolver_free(rv);
    gate_set(true);
    wait_in_fn(0);
    /* the thread frees the resolver after leaving test_fn: give it time */
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    ev_run(loop, EVRUN_NOWAIT);
    assert_int_equal(s.calls, 0);
}

/* The waiting form, with the real getaddrinfo on a name every system
 * knows. */
static void test_wait_localhost(void **state)
{
    struct addrinfo *res = NULL;
    (void)state;
    assert_int_equal(resolver_lookup_wait("localhost", 5.0, &res), 0);
    assert_non_null(res);
    freeaddrinfo(res);
    assert_int_equal(resolver_lookup_wait("", 1.0, &res), ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answer),       cmocka_unit_test(test_loop_not_held),
        cmocka_unit_test(test_timeout),      cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_thread_bound), cmocka_unit_test(test_bad_host),
        cmocka_unit_test(test_free_pending), cmocka_unit_test(test_wait_localhost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
