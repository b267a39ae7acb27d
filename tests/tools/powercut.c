/*
 * powercut.c - an LD_PRELOAD library that keeps, beside the files a
 * process writes, the image a disk would hold after a power cut: only
 * what an fsync()/fdatasync() made durable.  tests/e2e/powercut.sh runs
 * the server under it, kills it with SIGKILL (the page cache, unlike after
 * a real power cut, survives a kill), puts the durable images in place of
 * the files and checks that every answered write is still there.
 *
 *   POWERCUT_DIR     absolute directory: files opened below it are tracked
 *   POWERCUT_SHADOW  absolute directory (not below POWERCUT_DIR) that
 *                    receives the durable images, one file per name
 *
 * The model, per file (by inode, whichever descriptor is used):
 *   - files that exist when the process starts are durable as they are
 *     (copied to the shadow at start: a clean earlier run left them);
 *   - every write(), pwrite() and truncation is kept in memory, in order,
 *     with its bytes as written; none of it reaches the shadow by itself;
 *   - fsync() or fdatasync() of any descriptor of the file runs the real
 *     call and, only when it succeeded, applies to the shadow, in order,
 *     the operations logged before the call started.  Operations logged
 *     while the call runs stay for the next one;
 *   - a file created by the process has a durable name only once the
 *     directory (POWERCUT_DIR) was fsynced after its creation; until then
 *     its image is kept as .unlinked.NAME, which the restore step skips,
 *     and a name made durable before any data has an empty image;
 *   - unlink() removes the image at once.
 * So the image after a cut is the harshest legal state for data that was
 * never synced: none of it survives.  With POWERCUT_JOURNAL the other
 * legal states can be built too (tests/tools/powercut_torn.py).  Writes through mmap (SQLite's -shm
 * index) are not seen; that file is not durable and the test deletes it.
 *
 * Built for the release binary (an ASan runtime must come first in the
 * library list, so it is not used with the sanitizer build).  Any failure
 * of the library itself aborts the process with a message on stderr: a
 * test under it must not pass by accident.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_FD        65536
#define MAX_FILES     64
#define PENDING_LIMIT ((size_t)1 << 30) /* bytes logged and not yet synced */

enum op_kind { OP_WRITE, OP_TRUNC };

struct op {
    enum op_kind kind;
    off_t off; /* OP_WRITE: offset; OP_TRUNC: new size */
    size_t len;
    uint64_t seq; /* order of logging, per file */
    unsigned char *data;
    struct op *next;
};

struct file {
    bool used;
    dev_t dev;
    ino_t ino;
    char shadow[PATH_MAX];
    struct op *head, *tail; /* not yet durable, oldest first */
    uint64_t next_seq;
    size_t pending;
    bool linked;        /* its name survives a cut (directory synced since it was created) */
    uint64_t create_no; /* order of creation, for directory syncs */
};

static char dir[PATH_MAX], shadow_dir[PATH_MAX];
static size_t dir_len;
static bool active;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct file files[MAX_FILES];
static short fd_file[MAX_FD]; /* index + 1 into files, 0: not tracked */
static bool fd_dir[MAX_FD];   /* a descriptor of POWERCUT_DIR itself */
static uint64_t creations;    /* files created so far */
static size_t pending_total;
static bool debug;       /* POWERCUT_DEBUG=1: one line per tracked open, sync, unlink */
static int journal = -1; /* POWERCUT_JOURNAL: every operation and sync, for torn images */

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_close)(int);
static int (*real_unlink)(const char *);

static void die(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n > 0) {
        size_t len = (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;
        if (real_write) {
            real_write(2, "powercut: ", 10);
            real_write(2, msg, len);
            real_write(2, "\n", 1);
        }
    }
    abort();
}

static void say(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    if (!debug)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n > 0)
        real_write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

static void *sym(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p)
        die("no symbol %s", name);
    return p;
}

/* Writes all of buf at off of fd (the real call), or dies. */
static void put(int fd, const void *buf, size_t len, off_t off, const char *what)
{
    const unsigned char *p = buf;
    while (len) {
        ssize_t n = real_pwrite64(fd, p, len, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("writing the image of %s: %s", what, strerror(errno));
        p += n;
        len -= (size_t)n;
        off += n;
    }
}

static void copy_whole(const char *from, const char *to)
{
    int in = real_open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        die("open %s: %s", from, strerror(errno));
    int out = real_open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0)
        die("create %s: %s", to, strerror(errno));
    unsigned char buf[65536];
    off_t off = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("read %s: %s", from, strerror(errno));
        if (n == 0)
            break;
        put(out, buf, (size_t)n, off, to);
        off += n;
    }
    real_close(in);
    real_close(out);
}

static void shadow_path(const char *path, char *out)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if ((size_t)snprintf(out, PATH_MAX, "%s/%s", shadow_dir, base) >= PATH_MAX)
        die("path too long: %s", path);
}

__attribute__((constructor)) static void init(void)
{
    real_open = sym("open");
    real_openat = sym("openat");
    real_write = sym("write");
    real_pwrite = sym("pwrite");
    real_pwrite64 = sym("pwrite64");
    real_ftruncate = sym("ftruncate");
    real_ftruncate64 = sym("ftruncate64");
    real_fsync = sym("fsync");
    real_fdatasync = sym("fdatasync");
    real_close = sym("close");
    real_unlink = sym("unlink");

    const char *d = getenv("POWERCUT_DIR"), *s = getenv("POWERCUT_SHADOW");
    debug = getenv("POWERCUT_DEBUG") && !strcmp(getenv("POWERCUT_DEBUG"), "1");
    const char *j = getenv("POWERCUT_JOURNAL");
    if (j && *j) {
        journal = real_open(j, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (journal < 0)
            die("open %s: %s", j, strerror(errno));
    }
    if (!d || !s || !*d || !*s)
        return;
    if (d[0] != '/' || s[0] != '/' || strlen(d) >= sizeof dir - 2 || strlen(s) >= sizeof shadow_dir)
        die("POWERCUT_DIR and POWERCUT_SHADOW must be absolute paths");
    strcpy(dir, d);
    dir_len = strlen(dir);
    while (dir_len > 1 && dir[dir_len - 1] == '/')
        dir[--dir_len] = '\0';
    strcpy(shadow_dir, s);
    if (!strncmp(shadow_dir, dir, dir_len) && shadow_dir[dir_len] == '/')
        die("POWERCUT_SHADOW must not be below POWERCUT_DIR");
    /* what exists now is durable (a clean earlier run left it) */
    DIR *dd = opendir(dir);
    if (!dd)
        die("opendir %s: %s", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(dd))) {
        char from[PATH_MAX], to[PATH_MAX];
        struct stat st;
        if ((size_t)snprintf(from, sizeof from, "%s/%s", dir, e->d_name) >= sizeof from)
            die("path too long");
        if (stat(from, &st) || !S_ISREG(st.st_mode))
            continue;
        shadow_path(from, to);
        copy_whole(from, to);
    }
    closedir(dd);
    active = true;
}

/* Is path (as given to open) below POWERCUT_DIR? */
static bool tracked_path(const char *path)
{
    char abs[PATH_MAX];
    if (!active || !path)
        return false;
    if (path[0] != '/') {
        if (!getcwd(abs, sizeof abs))
            return false;
        size_t n = strlen(abs);
        if (n + 1 + strlen(path) >= sizeof abs)
            return false;
        abs[n] = '/';
        strcpy(abs + n + 1, path);
        path = abs;
    }
    if (strncmp(path, dir, dir_len) || path[dir_len] != '/')
        return false;
    /* one level only, and no way back up */
    return !strchr(path + dir_len + 1, '/');
}

static struct file *file_of(int fd)
{
    if (fd < 0 || fd >= MAX_FD || !fd_file[fd])
        return NULL;
    return &files[fd_file[fd] - 1];
}

/*
 * The journal (POWERCUT_JOURNAL=FILE) records, in order, every operation
 * on a tracked file and every sync that made a prefix of them durable, so
 * that tests/tools/powercut_torn.py can build the other images a cut may
 * leave: the durable one plus any subset of the writes still pending (a
 * disk may have written some of them, in any order).  Records, integers
 * little-endian:
 *   'W' u16 namelen, name, u64 seq, i64 offset, u32 length, bytes
 *   'T' u16 namelen, name, u64 seq, i64 size             (truncation)
 *   'S' u16 namelen, name, u64 seq  (every operation below seq is durable)
 *   'D' u16 namelen, name           (the file is gone: forget it)
 * Under mu.
 */
static void jput(const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n) {
        ssize_t w = real_write(journal, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("writing the journal: %s", strerror(errno));
        b += w;
        n -= (size_t)w;
    }
}

static void jhead(char kind, const struct file *f)
{
    const char *base = strrchr(f->shadow, '/') + 1;
    uint16_t n = (uint16_t)strlen(base);
    jput(&kind, 1);
    jput(&n, 2);
    jput(base, n);
}

static void log_op(struct file *f, enum op_kind kind, off_t off, const void *data, size_t len)
{
    struct op *o = calloc(1, sizeof *o);
    if (!o)
        die("out of memory");
    o->kind = kind;
    o->seq = f->next_seq++;
    o->off = off;
    o->len = len;
    if (kind == OP_WRITE && len) {
        o->data = malloc(len);
        if (!o->data)
            die("out of memory");
        memcpy(o->data, data, len);
    }
    if (journal >= 0) {
        int64_t o64 = (int64_t)off;
        jhead(kind == OP_WRITE ? 'W' : 'T', f);
        jput(&o->seq, 8);
        jput(&o64, 8);
        if (kind == OP_WRITE) {
            uint32_t l = (uint32_t)len;
            jput(&l, 4);
            jput(data, len);
        }
    }
    if (f->tail)
        f->tail->next = o;
    else
        f->head = o;
    f->tail = o;
    f->pending += len;
    pending_total += len;
    if (pending_total > PENDING_LIMIT)
        die("more than %zu bytes written and never synced", PENDING_LIMIT);
}

/* Where the image of f is kept: under its own name once the name is
 * durable, else under a hidden name that the restore step skips. */
static void image_path(const struct file *f, char *out)
{
    if (f->linked) {
        strcpy(out, f->shadow);
        return;
    }
    const char *base = strrchr(f->shadow, '/') + 1;
    if ((size_t)snprintf(out, PATH_MAX, "%s/.unlinked.%s", shadow_dir, base) >= PATH_MAX)
        die("path too long: %s", f->shadow);
}

/* Forgets a file (its pending operations die with it).  Under mu. */
static void drop_file(struct file *f)
{
    if (journal >= 0)
        jhead('D', f);
    while (f->head) {
        struct op *n = f->head->next;
        pending_total -= f->head->len;
        free(f->head->data);
        free(f->head);
        f->head = n;
    }
    for (int fd = 0; fd < MAX_FD; fd++)
        if (fd_file[fd] == (short)(f - files + 1))
            fd_file[fd] = 0;
    memset(f, 0, sizeof *f);
}

/* Is path POWERCUT_DIR itself? */
static bool is_dir_path(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    return active && n == dir_len && !strncmp(path, dir, n);
}

static void track(int fd, const char *path, int flags, bool created)
{
    struct stat st;
    if (fd >= 0 && fd < MAX_FD && is_dir_path(path)) {
        fd_dir[fd] = true;
        return;
    }
    if (fd < 0 || !tracked_path(path))
        return;
    if (fd >= MAX_FD)
        die("descriptor %d out of range", fd);
    if (fstat(fd, &st))
        die("fstat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return;
    pthread_mutex_lock(&mu);
    int slot = -1;
    for (int i = 0; i < MAX_FILES; i++) {
        if (files[i].used && files[i].dev == st.st_dev && files[i].ino == st.st_ino) {
            slot = i;
            break;
        }
        if (!files[i].used && slot < 0)
            slot = i;
    }
    if (slot < 0)
        die("more than %d files", MAX_FILES);
    struct file *f = &files[slot];
    char sp[PATH_MAX];
    shadow_path(path, sp);
    if (f->used && strcmp(f->shadow, sp)) {
        /* the inode of a file deleted behind our back (not through
         * unlink()), now another file: start over */
        drop_file(f);
    }
    if (!f->used) {
        memset(f, 0, sizeof *f);
        f->used = true;
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        shadow_path(path, f->shadow);
        /* a file this process created has no durable name until the
         * directory is synced; one that was there is the baseline's */
        f->linked = !created;
        f->create_no = creations++;
    }
    fd_file[fd] = (short)(slot + 1);
    say("powercut-debug: open %s fd %d ino %lu slot %d\n", path, fd, (unsigned long)st.st_ino,
        slot);
    if (flags & O_TRUNC)
        log_op(f, OP_TRUNC, 0, NULL, 0);
    pthread_mutex_unlock(&mu);
}

static int open_mode(int flags, va_list ap)
{
    return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;
}

/* Would opening path with flags create it? */
static bool creates(const char *path, int flags)
{
    struct stat st;
    return (flags & O_CREAT) && tracked_path(path) && lstat(path, &st) != 0;
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = open_mode(flags, ap);
    va_end(ap);
    bool created = creates(path, flags);
    int fd = real_open(path, flags, mode);
    track(fd, path, flags, created);
    return fd;
}

/* open64 is open on 64-bit glibc */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = open_mode(flags, ap);
    va_end(ap);
    bool plain = dirfd == AT_FDCWD || path[0] == '/';
    bool created = plain && creates(path, flags);
    int fd = real_openat(dirfd, path, flags, mode);
    if (plain)
        track(fd, path, flags, created);
    return fd;
}

int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

static void logged_write(int fd, const void *buf, ssize_t n, off_t off)
{
    if (n <= 0)
        return;
    pthread_mutex_lock(&mu);
    struct file *f = file_of(fd);
    if (f) {
        log_op(f, OP_WRITE, off, buf, (size_t)n);
        if (off == 0)
            say("powercut-debug: write fd %d %s offset 0 length %zd\n", fd, f->shadow, n);
    }
    pthread_mutex_unlock(&mu);
}

ssize_t write(int fd, const void *buf, size_t len)
{
    if (!file_of(fd))
        return real_write(fd, buf, len);
    off_t off;
    if (fcntl(fd, F_GETFL) & O_APPEND) {
        struct stat st;
        off = fstat(fd, &st) ? 0 : st.st_size;
    } else {
        off = lseek(fd, 0, SEEK_CUR);
    }
    ssize_t n = real_write(fd, buf, len);
    logged_write(fd, buf, n, off);
    return n;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
    ssize_t n = real_pwrite(fd, buf, len, off);
    logged_write(fd, buf, n, off);
    return n;
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
    ssize_t n = real_pwrite64(fd, buf, len, off);
    logged_write(fd, buf, n, off);
    return n;
}

static void logged_trunc(int fd, int rc, off_t size)
{
    if (rc)
        return;
    pthread_mutex_lock(&mu);
    struct file *f = file_of(fd);
    if (f) {
        log_op(f, OP_TRUNC, size, NULL, 0);
        say("powercut-debug: truncate fd %d %s to %lld\n", fd, f->shadow, (long long)size);
    }
    pthread_mutex_unlock(&mu);
}

int ftruncate(int fd, off_t size)
{
    int rc = real_ftruncate(fd, size);
    logged_trunc(fd, rc, size);
    return rc;
}

int ftruncate64(int fd, off_t size)
{
    int rc = real_ftruncate64(fd, size);
    logged_trunc(fd, rc, size);
    return rc;
}

/* The sync of fd: if the real call succeeds, every operation on the file
 * logged before the call started is durable.  They are applied to the
 * image in the order they were logged, whichever of two concurrent syncs
 * (the server's sync thread and SQLite's checkpointer both sync the WAL)
 * returns first: the one that returns applies the whole prefix it covers,
 * including what the other one was called for. */
/* The sync of a descriptor of POWERCUT_DIR: the names of the files
 * created before the call are durable from then on. */
static int dir_synced(int fd, int (*real)(int))
{
    pthread_mutex_lock(&mu);
    uint64_t target = creations;
    pthread_mutex_unlock(&mu);
    int rc = real(fd);
    int saved = errno;
    if (rc == 0) {
        pthread_mutex_lock(&mu);
        for (int i = 0; i < MAX_FILES; i++) {
            struct file *f = &files[i];
            if (!f->used || f->linked || f->create_no >= target)
                continue;
            char from[PATH_MAX];
            image_path(f, from);
            f->linked = true;
            say("powercut-debug: directory sync links %s\n", f->shadow);
            if (rename(from, f->shadow) && errno == ENOENT) {
                /* never synced: the name survives with no data */
                int out = real_open(f->shadow, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                if (out < 0)
                    die("create %s: %s", f->shadow, strerror(errno));
                real_close(out);
            }
        }
        pthread_mutex_unlock(&mu);
    }
    errno = saved;
    return rc;
}

static int synced(int fd, int (*real)(int))
{
    if (fd >= 0 && fd < MAX_FD && fd_dir[fd])
        return dir_synced(fd, real);
    pthread_mutex_lock(&mu);
    struct file *f = file_of(fd);
    if (!f) {
        pthread_mutex_unlock(&mu);
        return real(fd);
    }
    uint64_t target = f->next_seq; /* ops with seq < target */
    pthread_mutex_unlock(&mu);

    int rc = real(fd);
    int saved = errno;
    if (rc != 0) {
        errno = saved;
        return rc; /* nothing became durable */
    }
    pthread_mutex_lock(&mu);
    struct op *ops = NULL, **tail = &ops;
    size_t bytes = 0;
    while (f->head && f->head->seq < target) {
        struct op *o = f->head;
        f->head = o->next;
        o->next = NULL;
        *tail = o;
        tail = &o->next;
        bytes += o->len;
    }
    if (!f->head)
        f->tail = NULL;
    say("powercut-debug: sync fd %d %s applies %zu bytes\n", fd, f->shadow, bytes);
    if (ops) {
        char img[PATH_MAX];
        image_path(f, img);
        int out = real_open(img, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (out < 0)
            die("create %s: %s", img, strerror(errno));
        for (struct op *o = ops; o; o = o->next) {
            if (o->kind == OP_TRUNC) {
                if (real_ftruncate(out, o->off))
                    die("truncate %s: %s", img, strerror(errno));
            } else {
                put(out, o->data, o->len, o->off, img);
            }
        }
        real_close(out);
    }
    if (journal >= 0 && ops) {
        jhead('S', f);
        jput(&target, 8);
    }
    f->pending -= bytes;
    pending_total -= bytes;
    pthread_mutex_unlock(&mu);
    while (ops) {
        struct op *n = ops->next;
        free(ops->data);
        free(ops);
        ops = n;
    }
    errno = saved;
    return rc;
}

int fsync(int fd)
{
    return synced(fd, real_fsync);
}

int fdatasync(int fd)
{
    return synced(fd, real_fdatasync);
}

int close(int fd)
{
    if (fd >= 0 && fd < MAX_FD)
        fd_dir[fd] = false;
    if (fd >= 0 && fd < MAX_FD && fd_file[fd]) {
        pthread_mutex_lock(&mu);
        fd_file[fd] = 0;
        pthread_mutex_unlock(&mu);
    }
    return real_close(fd);
}

int unlink(const char *path)
{
    struct stat st;
    bool tracked = tracked_path(path) && lstat(path, &st) == 0;
    int rc = real_unlink(path);
    if (rc == 0 && tracked) {
        char s[PATH_MAX];
        shadow_path(path, s);
        real_unlink(s);
        const char *base = strrchr(s, '/') + 1;
        char hidden[PATH_MAX];
        if ((size_t)snprintf(hidden, sizeof hidden, "%s/.unlinked.%s", shadow_dir, base) <
            sizeof hidden)
            real_unlink(hidden);
        /* the inode's pending writes die with it, and the kernel may give
         * its number to the next file created (SQLite's -journal, then
         * the -wal): forget it */
        pthread_mutex_lock(&mu);
        for (int i = 0; i < MAX_FILES; i++)
            if (files[i].used && files[i].dev == st.st_dev && files[i].ino == st.st_ino)
                drop_file(&files[i]);
        pthread_mutex_unlock(&mu);
    }
    return rc;
}
