/*
 * sqlite_sync.c - see sqlite_sync.h.
 */
#include "store/sqlite_sync.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/fsync_dir.h"
#include "util/log.h"
#include "util/xalloc.h"

struct sqlite_sync {
    char *wal_path;
    int wal_fd; /* the thread's own descriptor of the WAL (-1 until opened) */
    int efd;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv, done_cv;
    /* under mu */
    uint64_t requested, done;
    int err;
    bool stop;
    unsigned delay_us;
    int fail_errno;
    struct sqlite_sync_stats st;
    /* The durable hook, under hook_mu (held while it runs). */
    pthread_mutex_t hook_mu;
    void (*hook)(void *arg, uint64_t ticket);
    void *hook_arg;
};

/* Opens the WAL when needed, or again when the file at the path is no
 * longer the one held (SQLite deletes and recreates it only when the last
 * connection closes; cheap to check). */
static int ensure_open(struct sqlite_sync *y)
{
    struct stat a, b;
    if (y->wal_fd >= 0) {
        if (stat(y->wal_path, &a) == 0 && fstat(y->wal_fd, &b) == 0 && a.st_ino == b.st_ino &&
            a.st_dev == b.st_dev)
            return 0;
        close(y->wal_fd);
        y->wal_fd = -1;
    }
    y->wal_fd = open(y->wal_path, O_RDONLY | O_CLOEXEC);
    if (y->wal_fd < 0)
        return -1;
    return fsync_parent_dir(y->wal_path); /* a WAL file just created stays linked */
}

static void notify(struct sqlite_sync *y)
{
    uint64_t one = 1;
    ssize_t n;
    do {
        n = write(y->efd, &one, sizeof one);
    } while (n < 0 && errno == EINTR);
}

static void *thread_main(void *arg)
{
    struct sqlite_sync *y = arg;
    pthread_mutex_lock(&y->mu);
    for (;;) {
        while (!y->stop && (y->requested <= y->done || y->err))
            pthread_cond_wait(&y->cv, &y->mu);
        if (y->requested <= y->done || y->err)
            break; /* stop, nothing left to sync */
        uint64_t target = y->requested;
        unsigned delay = y->delay_us;
        int forced = y->fail_errno;
        pthread_mutex_unlock(&y->mu);

        if (delay)
            usleep(delay);
        int rc = 0, e = 0;
        if (forced) {
            rc = -1;
            e = forced;
        } else if (ensure_open(y) || fdatasync(y->wal_fd)) {
            rc = -1;
            e = errno;
        }

        if (!rc) {
            /* before publishing: done >= T must mean T's hook returned */
            pthread_mutex_lock(&y->hook_mu);
            if (y->hook)
                y->hook(y->hook_arg, target);
            pthread_mutex_unlock(&y->hook_mu);
        }
        pthread_mutex_lock(&y->mu);
        y->st.syncs++;
        if (rc) {
            y->err = ERR_IO;
            pthread_mutex_unlock(&y->mu);
            log_error("store: fdatasync of the WAL failed: %s; commits are refused from now on",
                      strerror(e));
            pthread_mutex_lock(&y->mu);
        } else if (target > y->done) {
            y->done = target;
        }
        pthread_cond_broadcast(&y->done_cv);
        pthread_mutex_unlock(&y->mu);
        notify(y);
        pthread_mutex_lock(&y->mu);
    }
    pthread_mutex_unlock(&y->mu);
    return NULL;
}

struct sqlite_sync *sqlite_sync_start(const char *wal_path, char *err, size_t errlen)
{
    struct sqlite_sync *y = xcalloc(1, sizeof *y);
    y->wal_path = xstrdup(wal_path);
    y->wal_fd = -1;
    y->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (y->efd < 0) {
        snprintf(err, errlen, "eventfd: %s", strerror(errno));
        goto fail;
    }
    pthread_mutex_init(&y->mu, NULL);
    pthread_mutex_init(&y->hook_mu, NULL);
    pthread_cond_init(&y->cv, NULL);
    pthread_cond_init(&y->done_cv, NULL);
    if (pthread_create(&y->th, NULL, thread_main, y) != 0) {
        snprintf(err, errlen, "cannot start the sync thread");
        pthread_mutex_destroy(&y->mu);
        pthread_mutex_destroy(&y->hook_mu);
        pthread_cond_destroy(&y->cv);
        pthread_cond_destroy(&y->done_cv);
        close(y->efd);
        goto fail;
    }
    return y;
fail:
    free(y->wal_path);
    free(y);
    return NULL;
}

void sqlite_sync_request(struct sqlite_sync *y, uint64_t ticket)
{
    pthread_mutex_lock(&y->mu);
    if (ticket > y->requested) {
        y->requested = ticket;
        y->st.requests++;
        pthread_cond_signal(&y->cv);
    }
    pthread_mutex_unlock(&y->mu);
}

void sqlite_sync_set_hook(struct sqlite_sync *y, void (*fn)(void *arg, uint64_t ticket), void *arg)
{
    pthread_mutex_lock(&y->hook_mu);
    y->hook = fn;
    y->hook_arg = fn ? arg : NULL;
    pthread_mutex_unlock(&y->hook_mu);
}

uint64_t sqlite_sync_done(struct sqlite_sync *y, int *err)
{
    pthread_mutex_lock(&y->mu);
    uint64_t d = y->done;
    if (err)
        *err = y->err;
    pthread_mutex_unlock(&y->mu);
    return d;
}

int sqlite_sync_fd(const struct sqlite_sync *y)
{
    return y->efd;
}

void sqlite_sync_clear_fd(struct sqlite_sync *y)
{
    uint64_t v;
    while (read(y->efd, &v, sizeof v) > 0) {
    }
}

int sqlite_sync_wait(struct sqlite_sync *y, uint64_t ticket)
{
    pthread_mutex_lock(&y->mu);
    while (y->done < ticket && !y->err)
        pthread_cond_wait(&y->done_cv, &y->mu);
    int rc = y->done >= ticket ? 0 : y->err;
    pthread_mutex_unlock(&y->mu);
    return rc;
}

void sqlite_sync_stop(struct sqlite_sync *y)
{
    if (!y)
        return;
    pthread_mutex_lock(&y->mu);
    y->stop = true;
    pthread_cond_signal(&y->cv);
    pthread_mutex_unlock(&y->mu);
    pthread_join(y->th, NULL);
    pthread_mutex_destroy(&y->mu);
    pthread_mutex_destroy(&y->hook_mu);
    pthread_cond_destroy(&y->cv);
    pthread_cond_destroy(&y->done_cv);
    if (y->wal_fd >= 0)
        close(y->wal_fd);
    close(y->efd);
    free(y->wal_path);
    free(y);
}

void sqlite_sync_get_stats(struct sqlite_sync *y, struct sqlite_sync_stats *out)
{
    pthread_mutex_lock(&y->mu);
    *out = y->st;
    pthread_mutex_unlock(&y->mu);
}

#ifdef UNITTEST
void sqlite_sync_test_delay(struct sqlite_sync *y, unsigned usec)
{
    pthread_mutex_lock(&y->mu);
    y->delay_us = usec;
    pthread_mutex_unlock(&y->mu);
}

void sqlite_sync_test_fail(struct sqlite_sync *y, int err)
{
    pthread_mutex_lock(&y->mu);
    y->fail_errno = err;
    pthread_mutex_unlock(&y->mu);
}
#endif
