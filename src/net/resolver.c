/*
 * resolver.c - name lookups on helper threads (resolver.h).
 *
 * Each lookup is a job run by a detached thread.  A waiting caller
 * (resolver_lookup_wait) shares the job with the thread under the job's
 * own mutex and condition variable; whichever of the two lets go last
 * frees it.  An asynchronous job belongs to a resolver and lives under the
 * resolver's mutex: the thread puts its answer on the resolver's done
 * queue and wakes the loop, which calls back and frees the job; a job the
 * loop gave up on (its deadline, resolver_cancel, resolver_free) is marked
 * abandoned and the thread frees it when its lookup returns.  The
 * resolver itself stays allocated while any of its threads runs: the last
 * thread out frees a resolver already closed.
 */
#include "net/resolver.h"

#include <errno.h>
#include <ev.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/err.h"
#include "util/xalloc.h"

#define RESOLVER_DEFAULT_THREADS 16
#define RESOLVER_DEFAULT_WAIT_S  2.0

struct resolver_job {
    char host[RESOLVER_HOST_MAX + 1];
    resolver_fn fn;
    /* the answer */
    bool done;
    int gai;
    struct addrinfo *res;
    /* resolver_lookup_wait: shared with the waiter */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    bool waiter; /* mu and cv are initialised */
    /* resolver_lookup: under rv->mu, except the loop-only fields */
    struct resolver *rv;
    bool abandoned;             /* the loop let go: the thread frees the job */
    struct resolver_job *qnext; /* rv's done queue, which holds the jobs done */
    resolver_cb cb;             /* loop only, from here down */
    void *arg;
    ev_timer timer;
    struct resolver_job *prev, *next; /* rv->pending */
};

struct resolver {
    struct ev_loop *loop;
    ev_async wake;
    pthread_mutex_t mu;
    struct resolver_job *qhead, *qtail; /* answered, for the loop */
    size_t threads, max_threads;
    bool closed;
    resolver_fn fn;
    struct resolver_job *pending; /* loop only: every job not called back yet */
};

static int default_fn(const char *host, struct addrinfo **out)
{
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    return getaddrinfo(host, NULL, &hints, out);
}

static void job_free(struct resolver_job *j)
{
    if (j->res)
        freeaddrinfo(j->res);
    if (j->waiter) {
        pthread_mutex_destroy(&j->mu);
        pthread_cond_destroy(&j->cv);
    }
    free(j);
}

static void rv_destroy(struct resolver *rv)
{
    pthread_mutex_destroy(&rv->mu);
    free(rv);
}

/* The rest of a waiting lookup's thread. */
static void wait_job_done(struct resolver_job *j, int gai, struct addrinfo *res)
{
    bool last;
    pthread_mutex_lock(&j->mu);
    j->gai = gai;
    j->res = res;
    j->done = true;
    pthread_cond_signal(&j->cv);
    last = --j->refs == 0;
    pthread_mutex_unlock(&j->mu);
    if (last)
        job_free(j);
}

static void *lookup_thread(void *arg)
{
    struct resolver_job *j = arg;
    struct resolver *rv = j->rv;
    struct addrinfo *res = NULL;
    bool free_job = false, free_rv;
    int gai = j->fn(j->host, &res);

    if (gai)
        res = NULL;
    if (!rv) {
        wait_job_done(j, gai, res);
        return NULL;
    }
    pthread_mutex_lock(&rv->mu);
    if (j->abandoned) {
        free_job = true;
    } else {
        j->gai = gai;
        j->res = res;
        res = NULL;
        j->done = true;
        j->qnext = NULL;
        if (rv->qtail)
            rv->qtail->qnext = j;
        else
            rv->qhead = j;
        rv->qtail = j;
        if (!rv->closed)
            ev_async_send(rv->loop, &rv->wake);
    }
    rv->threads--;
    free_rv = rv->closed && rv->threads == 0;
    pthread_mutex_unlock(&rv->mu);
    if (res)
        freeaddrinfo(res);
    if (free_job)
        job_free(j);
    if (free_rv)
        rv_destroy(rv);
    return NULL;
}

/* A detached thread with every signal blocked (signals are the loop's). */
static int start_thread(struct resolver_job *j)
{
    pthread_attr_t ta;
    pthread_t th;
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&th, &ta, lookup_thread, j);
    pthread_attr_destroy(&ta);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc ? ERR_IO : 0;
}

static struct resolver_job *job_new(const char *host, resolver_fn fn)
{
    struct resolver_job *j;
    size_t n = host ? strlen(host) : 0;
    if (n == 0 || n > RESOLVER_HOST_MAX)
        return NULL;
    j = xcalloc(1, sizeof *j);
    memcpy(j->host, host, n + 1);
    j->fn = fn ? fn : default_fn;
    return j;
}

static double wait_s(double timeout_s)
{
    return timeout_s > 0 ? timeout_s : RESOLVER_DEFAULT_WAIT_S;
}

/* ---------- waiting ---------- */

int resolver_lookup_wait(const char *host, double timeout_s, struct addrinfo **out)
{
    struct resolver_job *j = job_new(host, NULL);
    pthread_condattr_t ca;
    struct timespec dl;
    int rc = 0;
    bool last;

    *out = NULL;
    if (!j)
        return ERR_INVALID;
    pthread_mutex_init(&j->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->cv, &ca);
    pthread_condattr_destroy(&ca);
    j->refs = 2;
    j->waiter = true;
    if (start_thread(j)) {
        job_free(j);
        return ERR_IO;
    }
    clock_gettime(CLOCK_MONOTONIC, &dl);
    long long ns = (long long)(wait_s(timeout_s) * 1e9) + dl.tv_nsec;
    dl.tv_sec += (time_t)(ns / 1000000000LL);
    dl.tv_nsec = (long)(ns % 1000000000LL);

    pthread_mutex_lock(&j->mu);
    while (!j->done)
        if (pthread_cond_timedwait(&j->cv, &j->mu, &dl) == ETIMEDOUT)
            break;
    if (!j->done) {
        rc = ERR_TIMEOUT;
    } else if (j->gai || !j->res) {
        rc = ERR_NOTFOUND;
    } else {
        *out = j->res; /* taken over */
        j->res = NULL;
    }
    last = --j->refs == 0;
    pthread_mutex_unlock(&j->mu);
    if (last)
        job_free(j);
    return rc;
}

/* ---------- on a loop ---------- */

static void pending_unlink(struct resolver *rv, struct resolver_job *j)
{
    if (j->prev)
        j->prev->next = j->next;
    else
        rv->pending = j->next;
    if (j->next)
        j->next->prev = j->prev;
    j->prev = j->next = NULL;
}

/* Takes j off the done queue (rv->mu held). */
static void queue_remove(struct resolver *rv, struct resolver_job *j)
{
    struct resolver_job **pp = &rv->qhead, *prev = NULL;
    while (*pp && *pp != j) {
        prev = *pp;
        pp = &(*pp)->qnext;
    }
    if (!*pp)
        return;
    *pp = j->qnext;
    if (rv->qtail == j)
        rv->qtail = prev;
    j->qnext = NULL;
}

/* The loop lets go of j: freed now when answered, else by its thread.
 * j must not be used afterwards. */
static void let_go(struct resolver *rv, struct resolver_job *j)
{
    bool answered;
    ev_timer_stop(rv->loop, &j->timer);
    pending_unlink(rv, j);
    pthread_mutex_lock(&rv->mu);
    answered = j->done;
    if (answered)
        queue_remove(rv, j);
    else
        j->abandoned = true;
    pthread_mutex_unlock(&rv->mu);
    if (answered)
        job_free(j);
}

static void wake_cb(struct ev_loop *loop, ev_async *w, int revents)
{
    struct resolver *rv = w->data;
    (void)loop;
    (void)revents;
    for (;;) {
        struct resolver_job *j;
        pthread_mutex_lock(&rv->mu);
        j = rv->qhead;
        if (j)
            queue_remove(rv, j);
        pthread_mutex_unlock(&rv->mu);
        if (!j)
            return;
        ev_timer_stop(rv->loop, &j->timer);
        pending_unlink(rv, j);
        int rc = j->gai == 0 && j->res ? 0 : ERR_NOTFOUND;
        j->cb(j->arg, rc, rc ? NULL : j->res);
        job_free(j);
    }
}

static void timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct resolver_job *j = w->data;
    resolver_cb cb = j->cb;
    void *arg = j->arg;
    (void)loop;
    (void)revents;
    let_go(j->rv, j);
    cb(arg, ERR_TIMEOUT, NULL);
}

struct resolver *resolver_new(struct ev_loop *loop, size_t max_threads)
{
    struct resolver *rv = xcalloc(1, sizeof *rv);
    rv->loop = loop;
    rv->max_threads = max_threads ? max_threads : RESOLVER_DEFAULT_THREADS;
    pthread_mutex_init(&rv->mu, NULL);
    ev_async_init(&rv->wake, wake_cb);
    rv->wake.data = rv;
    ev_async_start(loop, &rv->wake);
    ev_unref(loop); /* an idle resolver does not keep the loop running */
    return rv;
}

void resolver_set_fn(struct resolver *rv, resolver_fn fn)
{
    rv->fn = fn;
}

int resolver_lookup(struct resolver *rv, const char *host, double timeout_s, resolver_cb cb,
                    void *arg, struct resolver_job **job)
{
    struct resolver_job *j;
    bool full;

    *job = NULL;
    j = job_new(host, rv->fn);
    if (!j)
        return ERR_INVALID;
    pthread_mutex_lock(&rv->mu);
    full = rv->threads >= rv->max_threads;
    if (!full)
        rv->threads++;
    pthread_mutex_unlock(&rv->mu);
    if (full) {
        job_free(j);
        return ERR_THROTTLED;
    }
    j->rv = rv;
    j->cb = cb;
    j->arg = arg;
    ev_timer_init(&j->timer, timeout_cb, wait_s(timeout_s), 0.);
    j->timer.data = j;
    ev_timer_start(rv->loop, &j->timer);
    j->next = rv->pending;
    if (rv->pending)
        rv->pending->prev = j;
    rv->pending = j;
    if (start_thread(j)) {
        ev_timer_stop(rv->loop, &j->timer);
        pending_unlink(rv, j);
        pthread_mutex_lock(&rv->mu);
        rv->threads--;
        pthread_mutex_unlock(&rv->mu);
        job_free(j);
        return ERR_IO;
    }
    *job = j;
    return 0;
}

void resolver_cancel(struct resolver_job *job)
{
    if (job)
        let_go(job->rv, job);
}

size_t resolver_threads(struct resolver *rv)
{
    size_t n;
    pthread_mutex_lock(&rv->mu);
    n = rv->threads;
    pthread_mutex_unlock(&rv->mu);
    return n;
}

void resolver_free(struct resolver *rv)
{
    bool last;
    if (!rv)
        return;
    while (rv->pending)
        let_go(rv, rv->pending);
    /* Before closing: once rv->mu is let go with closed set, the last
     * thread out may free rv.  No thread wakes the loop any more (every
     * job is abandoned). */
    ev_ref(rv->loop);
    ev_async_stop(rv->loop, &rv->wake);
    pthread_mutex_lock(&rv->mu);
    rv->closed = true;
    last = rv->threads == 0;
    pthread_mutex_unlock(&rv->mu);
    if (last)
        rv_destroy(rv);
}
