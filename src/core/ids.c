/*
 * ids.c - random identifiers and codes of API.md §3.7.
 *
 * All randomness comes from the kernel CSPRNG through getrandom(2); a
 * failure there is unrecoverable (the server cannot mint ids it can trust),
 * so ids_random() aborts instead of returning weak values.  Small requests
 * (a scan id, a fingerprint salt: several per verify) are served from a
 * per-thread pool of kernel bytes, refilled IDS_POOL bytes at a time, so
 * that a verify makes no system call for them; bytes handed out are wiped
 * from the pool, and a forked child (serve --workers) empties its copy so
 * that it never hands out the bytes its parent will.
 */
#include "core/ids.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static const char hex_digits[] = "0123456789abcdef";
static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

#define IDS_POOL       512
#define IDS_POOL_SMALL 64 /* larger requests go to the kernel directly */

static _Thread_local unsigned char pool[IDS_POOL];
static _Thread_local size_t pool_left; /* unused bytes at the end of pool */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void)
{
    /* Runs in the child's only thread, the one that forked: its pool is
     * the only copy the child has. */
    memset(pool, 0, sizeof pool);
    pool_left = 0;
}

static void fork_hook(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}

static void kernel_random(void *buf, size_t n);

void ids_random(void *buf, size_t n)
{
    pthread_once(&fork_once, fork_hook);
    if (n > IDS_POOL_SMALL) {
        kernel_random(buf, n);
        return;
    }
    if (pool_left < n) {
        kernel_random(pool, sizeof pool);
        pool_left = sizeof pool;
    }
    unsigned char *src = pool + (sizeof pool - pool_left);
    memcpy(buf, src, n);
    memset(src, 0, n);
    pool_left -= n;
}

static void kernel_random(void *buf, size_t n)
{
    unsigned char *p = buf;

    /* getrandom may return fewer bytes than asked (large requests, signals). */
    while (n > 0) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            abort();
        }
        p += r;
        n -= (size_t)r;
    }
}

void ids_hex(const void *bytes, size_t n, char *out)
{
    const unsigned char *b = bytes;

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex_digits[b[i] >> 4];
        out[2 * i + 1] = hex_digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

size_t ids_base64url(const void *bytes, size_t n, char *out)
{
    const unsigned char *b = bytes;
    size_t o = 0;
    size_t i = 0;

    for (; i + 3 <= n; i += 3) {
        uint32_t v = ((uint32_t)b[i] << 16) | ((uint32_t)b[i + 1] << 8) | b[i + 2];
        out[o++] = b64url[(v >> 18) & 63];
        out[o++] = b64url[(v >> 12) & 63];
        out[o++] = b64url[(v >> 6) & 63];
        out[o++] = b64url[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)b[i] << 16;
        out[o++] = b64url[(v >> 18) & 63];
        out[o++] = b64url[(v >> 12) & 63];
    } else if (n - i == 2) {
        uint32_t v = ((uint32_t)b[i] << 16) | ((uint32_t)b[i + 1] << 8);
        out[o++] = b64url[(v >> 18) & 63];
        out[o++] = b64url[(v >> 12) & 63];
        out[o++] = b64url[(v >> 6) & 63];
    }
    out[o] = '\0';
    return o;
}

void ids_product_id(char out[33])
{
    unsigned char r[16];
    ids_random(r, sizeof r);
    ids_hex(r, sizeof r, out);
}

void ids_verification_code(char out[13])
{
    unsigned char r[9];
    ids_random(r, sizeof r);
    ids_base64url(r, sizeof r, out);
}

void ids_uuid4(char out[37])
{
    unsigned char r[16];
    char hex[33];
    size_t o = 0;

    ids_random(r, sizeof r);
    r[6] = (unsigned char)((r[6] & 0x0f) | 0x40); /* version 4 */
    r[8] = (unsigned char)((r[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    ids_hex(r, sizeof r, hex);
    for (size_t i = 0; i < 32; i++) {
        if (i == 8 || i == 12 || i == 16 || i == 20)
            out[o++] = '-';
        out[o++] = hex[i];
    }
    out[o] = '\0';
}

void ids_ingest_key(char out[37])
{
    memcpy(out, "aik_", 4);
    ids_product_id(out + 4);
}

void ids_random_hex(size_t nbytes, char *out)
{
    unsigned char r[64];

    while (nbytes > 0) {
        size_t chunk = nbytes < sizeof r ? nbytes : sizeof r;
        ids_random(r, chunk);
        ids_hex(r, chunk, out);
        out += 2 * chunk;
        nbytes -= chunk;
    }
    *out = '\0';
}

int ids_is_verification_code(const char *s)
{
    size_t i = 0;

    if (!s)
        return 0;
    for (; s[i]; i++) {
        char c = s[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_';
        if (!ok || i >= 12)
            return 0;
    }
    return i == 12;
}
