/*
 * sqlite_walbuf.c - see sqlite_walbuf.h.
 *
 * Every file opened through the VFS is a struct wfile followed by the
 * default VFS's own file object (real).  Only WAL files buffer; the
 * database file's shared-memory calls flush its WAL first.
 */
#include "store/sqlite_walbuf.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include <sqlite3.h>

enum { K_OTHER, K_DB, K_WAL };

#define FRAME_HDR 24 /* a WAL frame header (the WAL file header is 32) */

struct wfile {
    sqlite3_file base;
    sqlite3_file *real;
    int kind;
    struct wfile *peer; /* DB: its WAL; WAL: its DB (NULL when unknown) */
    /* WAL only: pending bytes [off, off + len) */
    unsigned char *buf;
    size_t len;
    sqlite3_int64 off;
    sqlite3_int64 commit_page_at; /* offset of the commit frame's page, or -1 */
    int broken;                   /* a flush failed where it could not be reported */
};

static sqlite3_vfs *root;
static sqlite3_vfs vfs;
static const char *registered;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t n_in, n_out, n_commit, n_err;
#ifdef UNITTEST
static atomic_int fail_n, fail_errno;
#endif

static struct wfile *F(sqlite3_file *f)
{
    return (struct wfile *)f;
}

static int real_write(struct wfile *w, const void *p, int n, sqlite3_int64 off)
{
    atomic_fetch_add(&n_out, 1);
#ifdef UNITTEST
    if (atomic_load(&fail_n) > 0) {
        atomic_fetch_sub(&fail_n, 1);
        atomic_fetch_add(&n_err, 1);
        return atomic_load(&fail_errno) == ENOSPC ? SQLITE_FULL : SQLITE_IOERR_WRITE;
    }
#endif
    int rc = w->real->pMethods->xWrite(w->real, p, n, off);
    if (rc != SQLITE_OK)
        atomic_fetch_add(&n_err, 1);
    return rc;
}

/* Writes the pending bytes.  On failure they are dropped (SQLite treats
 * the frames as unwritten: the commit fails, or the transaction rolls
 * back) and the error is returned. */
static int flush(struct wfile *w)
{
    if (!w->len)
        return SQLITE_OK;
    int rc = real_write(w, w->buf, (int)w->len, w->off);
    w->len = 0;
    return rc;
}

static int before_op(struct wfile *w)
{
    if (w->kind != K_WAL)
        return SQLITE_OK;
    if (w->broken)
        return SQLITE_IOERR;
    w->commit_page_at = -1;
    return flush(w);
}

/* The database file's barrier and locks: its WAL's bytes go out first. */
static void flush_peer_wal(struct wfile *db)
{
    struct wfile *w = db->kind == K_DB ? db->peer : NULL;
    if (w && w->len && flush(w) != SQLITE_OK)
        w->broken = 1; /* no way to report it here: refuse what follows */
}

static int w_close(sqlite3_file *f)
{
    struct wfile *w = F(f);
    int rc = before_op(w);
    if (w->peer && w->peer->peer == w)
        w->peer->peer = NULL;
    w->peer = NULL;
    sqlite3_free(w->buf);
    w->buf = NULL;
    int rc2 = w->real->pMethods ? w->real->pMethods->xClose(w->real) : SQLITE_OK;
    return rc != SQLITE_OK ? rc : rc2;
}

static int w_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off)
{
    struct wfile *w = F(f);
    int rc = before_op(w);
    return rc != SQLITE_OK ? rc : w->real->pMethods->xRead(w->real, p, n, off);
}

/* Is this the header of a frame that commits a transaction?  (Bytes 4-7:
 * the database size in pages after the commit, 0 in other frames.) */
static bool commit_header(const unsigned char *h, int n)
{
    return n == FRAME_HDR && (h[4] | h[5] | h[6] | h[7]) != 0;
}

static int w_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
    struct wfile *w = F(f);
    if (w->kind != K_WAL)
        return w->real->pMethods->xWrite(w->real, p, n, off);
    if (w->broken)
        return SQLITE_IOERR_WRITE;
    atomic_fetch_add(&n_in, 1);
    int rc;
    bool ends_commit = w->commit_page_at >= 0 && off == w->commit_page_at;
    w->commit_page_at = commit_header(p, n) ? off + n : -1;

    if (w->len && off == w->off + (sqlite3_int64)w->len && w->len + (size_t)n <= WALBUF_CAP) {
        memcpy(w->buf + w->len, p, (size_t)n);
        w->len += (size_t)n;
    } else {
        if ((rc = flush(w)) != SQLITE_OK) {
            w->commit_page_at = -1;
            return rc;
        }
        if (!w->buf)
            w->buf = sqlite3_malloc(WALBUF_CAP);
        if (!w->buf || (size_t)n > WALBUF_CAP / 2) { /* no buffer, or no gain: write it now */
            if (ends_commit)
                atomic_fetch_add(&n_commit, 1);
            return real_write(w, p, n, off);
        }
        memcpy(w->buf, p, (size_t)n);
        w->len = (size_t)n;
        w->off = off;
    }
    if (ends_commit) {
        atomic_fetch_add(&n_commit, 1);
        return flush(w);
    }
    return SQLITE_OK;
}

static int w_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    struct wfile *w = F(f);
    int rc = before_op(w);
    return rc != SQLITE_OK ? rc : w->real->pMethods->xTruncate(w->real, size);
}

static int w_sync(sqlite3_file *f, int flags)
{
    struct wfile *w = F(f);
    int rc = before_op(w);
    return rc != SQLITE_OK ? rc : w->real->pMethods->xSync(w->real, flags);
}

static int w_size(sqlite3_file *f, sqlite3_int64 *size)
{
    struct wfile *w = F(f);
    int rc = before_op(w);
    return rc != SQLITE_OK ? rc : w->real->pMethods->xFileSize(w->real, size);
}

static int w_lock(sqlite3_file *f, int level)
{
    return F(f)->real->pMethods->xLock(F(f)->real, level);
}

static int w_unlock(sqlite3_file *f, int level)
{
    flush_peer_wal(F(f));
    return F(f)->real->pMethods->xUnlock(F(f)->real, level);
}

static int w_reserved(sqlite3_file *f, int *out)
{
    return F(f)->real->pMethods->xCheckReservedLock(F(f)->real, out);
}

static int w_fcntl(sqlite3_file *f, int op, void *arg)
{
    struct wfile *w = F(f);
    int rc = before_op(w);
    if (rc != SQLITE_OK)
        return rc;
    rc = w->real->pMethods->xFileControl(w->real, op, arg);
    if (op == SQLITE_FCNTL_VFSNAME && rc == SQLITE_OK && arg) {
        char **name = arg;
        char *s = sqlite3_mprintf("%s/%z", WALBUF_VFS_NAME, *name);
        if (s)
            *name = s;
    }
    return rc;
}

static int w_sector(sqlite3_file *f)
{
    return F(f)->real->pMethods->xSectorSize(F(f)->real);
}

static int w_devchar(sqlite3_file *f)
{
    return F(f)->real->pMethods->xDeviceCharacteristics(F(f)->real);
}

static int w_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
    return F(f)->real->pMethods->xShmMap(F(f)->real, pg, pgsz, extend, pp);
}

static int w_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
    flush_peer_wal(F(f));
    return F(f)->real->pMethods->xShmLock(F(f)->real, offset, n, flags);
}

static void w_shm_barrier(sqlite3_file *f)
{
    flush_peer_wal(F(f));
    F(f)->real->pMethods->xShmBarrier(F(f)->real);
}

static int w_shm_unmap(sqlite3_file *f, int del)
{
    return F(f)->real->pMethods->xShmUnmap(F(f)->real, del);
}

static int w_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
    return F(f)->real->pMethods->xFetch(F(f)->real, off, n, pp);
}

static int w_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    return F(f)->real->pMethods->xUnfetch(F(f)->real, off, p);
}

static const sqlite3_io_methods methods = {
    .iVersion = 3,
    .xClose = w_close,
    .xRead = w_read,
    .xWrite = w_write,
    .xTruncate = w_truncate,
    .xSync = w_sync,
    .xFileSize = w_size,
    .xLock = w_lock,
    .xUnlock = w_unlock,
    .xCheckReservedLock = w_reserved,
    .xFileControl = w_fcntl,
    .xSectorSize = w_sector,
    .xDeviceCharacteristics = w_devchar,
    .xShmMap = w_shm_map,
    .xShmLock = w_shm_lock,
    .xShmBarrier = w_shm_barrier,
    .xShmUnmap = w_shm_unmap,
    .xFetch = w_fetch,
    .xUnfetch = w_unfetch,
};

static int v_open(sqlite3_vfs *v, sqlite3_filename name, sqlite3_file *f, int flags, int *out)
{
    (void)v;
    struct wfile *w = F(f);
    memset(w, 0, sizeof *w);
    w->real = (sqlite3_file *)(w + 1);
    w->commit_page_at = -1;
    int rc = root->xOpen(root, name, w->real, flags, out);
    /* SQLite calls xClose when pMethods is set, even after a failure */
    w->base.pMethods = w->real->pMethods ? &methods : NULL;
    if (rc != SQLITE_OK || !w->real->pMethods)
        return rc;
    /* The shim needs the version-3 methods it forwards to. */
    if (w->real->pMethods->iVersion < 3) {
        w->real->pMethods->xClose(w->real);
        w->base.pMethods = NULL;
        return SQLITE_CANTOPEN;
    }
    if (flags & SQLITE_OPEN_MAIN_DB) {
        w->kind = K_DB;
    } else if ((flags & SQLITE_OPEN_WAL) && name) {
        w->kind = K_WAL;
        sqlite3_file *db = sqlite3_database_file_object(name);
        if (db && db->pMethods == &methods && F(db)->kind == K_DB) {
            w->peer = F(db);
            F(db)->peer = w;
        }
    }
    return SQLITE_OK;
}

static int v_delete(sqlite3_vfs *v, const char *name, int sync_dir)
{
    (void)v;
    return root->xDelete(root, name, sync_dir);
}

static int v_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
    (void)v;
    return root->xAccess(root, name, flags, out);
}

static int v_fullpath(sqlite3_vfs *v, const char *name, int n, char *out)
{
    (void)v;
    return root->xFullPathname(root, name, n, out);
}

static void *v_dlopen(sqlite3_vfs *v, const char *name)
{
    (void)v;
    return root->xDlOpen(root, name);
}

static void v_dlerror(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    root->xDlError(root, n, out);
}

static void (*v_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
    (void)v;
    return root->xDlSym(root, h, sym);
}

static void v_dlclose(sqlite3_vfs *v, void *h)
{
    (void)v;
    root->xDlClose(root, h);
}

static int v_random(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return root->xRandomness(root, n, out);
}

static int v_sleep(sqlite3_vfs *v, int us)
{
    (void)v;
    return root->xSleep(root, us);
}

static int v_time(sqlite3_vfs *v, double *out)
{
    (void)v;
    return root->xCurrentTime(root, out);
}

static int v_lasterr(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return root->xGetLastError ? root->xGetLastError(root, n, out) : 0;
}

static int v_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    (void)v;
    return root->xCurrentTimeInt64(root, out);
}

static void setup(void)
{
    root = sqlite3_vfs_find(NULL);
    if (!root || root->iVersion < 2 || !root->xCurrentTimeInt64)
        return;
    vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(struct wfile) + root->szOsFile,
        .mxPathname = root->mxPathname,
        .zName = WALBUF_VFS_NAME,
        .xOpen = v_open,
        .xDelete = v_delete,
        .xAccess = v_access,
        .xFullPathname = v_fullpath,
        .xDlOpen = v_dlopen,
        .xDlError = v_dlerror,
        .xDlSym = v_dlsym,
        .xDlClose = v_dlclose,
        .xRandomness = v_random,
        .xSleep = v_sleep,
        .xCurrentTime = v_time,
        .xGetLastError = v_lasterr,
        .xCurrentTimeInt64 = v_time64,
    };
    if (sqlite3_vfs_register(&vfs, 0) == SQLITE_OK)
        registered = WALBUF_VFS_NAME;
}

const char *sqlite_walbuf_register(void)
{
    pthread_once(&once, setup);
    return registered;
}

void sqlite_walbuf_stats(struct sqlite_walbuf_stats *out)
{
    out->writes_in = atomic_load(&n_in);
    out->writes_out = atomic_load(&n_out);
    out->commit_flushes = atomic_load(&n_commit);
    out->errors = atomic_load(&n_err);
}

#ifdef UNITTEST
void sqlite_walbuf_test_fail_writes(int n, int e)
{
    atomic_store(&fail_errno, e);
    atomic_store(&fail_n, n);
}
#endif
