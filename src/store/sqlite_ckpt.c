/*
 * sqlite_ckpt.c - see sqlite_ckpt.h.
 */
#include "store/sqlite_ckpt.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "util/log.h"

/* How long a RESTART checkpoint waits for the writer and the readers
 * (the store's writers wait up to their own busy timeout meanwhile). */
#define RESTART_BUSY_MS 200

struct sqlite_ckpt {
    sqlite3 *db;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, wake;
    atomic_int frames; /* threshold */
    atomic_bool asked; /* a wake-up is pending (kick() needs no lock then) */
    int restart_frames;
    struct sqlite_ckpt_stats st; /* under mu */
};

static void run_checkpoints(struct sqlite_ckpt *c)
{
    int log = 0, done = 0, rc;

    rc = sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
    pthread_mutex_lock(&c->mu);
    if (rc == SQLITE_OK) {
        c->st.passive++;
        c->st.frames_copied += (uint64_t)(done > 0 ? done : 0);
    } else if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
        c->st.busy++;
    }
    pthread_mutex_unlock(&c->mu);
    if (rc != SQLITE_OK) {
        if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
            log_warn("store: background checkpoint failed: %s", sqlite3_errstr(rc));
        return;
    }
}

static void *thread_main(void *arg)
{
    struct sqlite_ckpt *c = arg;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        while (!c->stop && !c->wake)
            pthread_cond_wait(&c->cv, &c->mu);
        bool stop = c->stop;
        c->wake = false;
        pthread_mutex_unlock(&c->mu);
        if (stop)
            break;
        /* Commits from now on may ask for the next run. */
        atomic_store(&c->asked, false);
        run_checkpoints(c);
    }
    return NULL;
}

struct sqlite_ckpt *sqlite_ckpt_start(const char *path, int frames, int restart_frames, char *err,
                                      size_t errlen)
{
    struct sqlite_ckpt *c = calloc(1, sizeof(*c));
    char *msg = NULL;

    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    atomic_init(&c->frames, frames > 0 ? frames : SQLITE_CKPT_FRAMES_DEFAULT);
    atomic_init(&c->asked, false);
    c->restart_frames = restart_frames > 0 ? restart_frames : SQLITE_CKPT_RESTART_DEFAULT;
    if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        sqlite3_exec(c->db,
                     "PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=0; "
                     "PRAGMA cache_size=-1024;",
                     NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errmsg(c->db));
        sqlite3_free(msg);
        sqlite3_close_v2(c->db);
        free(c);
        return NULL;
    }
    sqlite3_busy_timeout(c->db, RESTART_BUSY_MS);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (pthread_create(&c->th, NULL, thread_main, c) != 0) {
        snprintf(err, errlen, "cannot start the checkpoint thread");
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
        sqlite3_close_v2(c->db);
        free(c);
        return NULL;
    }
    return c;
}

bool sqlite_ckpt_kick(struct sqlite_ckpt *c, int frames)
{
    if (!c || frames < atomic_load_explicit(&c->frames, memory_order_relaxed))
        return false;
    if (frames >= c->restart_frames) {
        /* The caller finishes inline (see sqlite_ckpt.h). */
        pthread_mutex_lock(&c->mu);
        c->st.restarts++;
        pthread_mutex_unlock(&c->mu);
        return true;
    }
    if (atomic_exchange(&c->asked, true))
        return false; /* already asked; the thread will see these frames too */
    pthread_mutex_lock(&c->mu);
    c->wake = true;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return false;
}

void sqlite_ckpt_set_frames(struct sqlite_ckpt *c, int frames)
{
    if (c && frames > 0)
        atomic_store(&c->frames, frames);
}

void sqlite_ckpt_stop(struct sqlite_ckpt *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->th, NULL);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    sqlite3_close_v2(c->db);
    free(c);
}

void sqlite_ckpt_get_stats(struct sqlite_ckpt *c, struct sqlite_ckpt_stats *out)
{
    pthread_mutex_lock(&c->mu);
    *out = c->st;
    pthread_mutex_unlock(&c->mu);
}
