/*
 * resolver.h - name lookups that never hold the caller past a deadline.
 *
 * getaddrinfo() has no timeout and no asynchronous form in the C library
 * we can rely on, so each lookup runs on a detached helper thread of its
 * own.  Two ways to wait for it:
 *
 *   resolver_lookup_wait()  blocks the calling thread, at most timeout_s;
 *   resolver_lookup()       returns at once and calls back on a libev loop
 *                           (an ev_async wakes it), or with ERR_TIMEOUT
 *                           from the loop's timer when the deadline comes
 *                           first.
 *
 * A lookup that outlives its deadline keeps its thread until the C
 * library gives up; its answer is then thrown away.  A resolver bounds
 * the threads it has running (those that timed out included), so a slow
 * or dead name server cannot pile up threads.
 */
#ifndef GP_NET_RESOLVER_H
#define GP_NET_RESOLVER_H

#include <netdb.h>
#include <stddef.h>

struct ev_loop;
struct resolver;
struct resolver_job;

/* Longest host name looked up (longer ones are ERR_INVALID). */
#define RESOLVER_HOST_MAX 255

/* The lookup itself (getaddrinfo() for stream sockets, any family, unless
 * a test sets another): 0 with *out set, or a non-zero EAI_* code. */
typedef int (*resolver_fn)(const char *host, struct addrinfo **out);

/* Looks host up, waiting at most timeout_s (<= 0: 2 s).  0 with *out set
 * (free it with freeaddrinfo()), ERR_NOTFOUND (no address, unknown
 * name), ERR_TIMEOUT, ERR_INVALID (host empty or too long) or ERR_IO (no
 * thread could be started). */
int resolver_lookup_wait(const char *host, double timeout_s, struct addrinfo **out);

/* Called on the loop exactly once per lookup that was not cancelled: rc 0
 * with res (valid during the call only), or ERR_NOTFOUND / ERR_TIMEOUT. */
typedef void (*resolver_cb)(void *arg, int rc, const struct addrinfo *res);

/* A resolver on loop that runs at most max_threads lookups at once
 * (0: 16). */
struct resolver *resolver_new(struct ev_loop *loop, size_t max_threads);
/* Tests: the lookup function of later lookups (NULL: getaddrinfo). */
void resolver_set_fn(struct resolver *rv, resolver_fn fn);
/* Starts a lookup of host; cb runs later on the loop, never from inside
 * this call.  0 with *job set (for resolver_cancel), ERR_THROTTLED when
 * max_threads lookups are running, ERR_INVALID (host empty or too long)
 * or ERR_IO. */
int resolver_lookup(struct resolver *rv, const char *host, double timeout_s, resolver_cb cb,
                    void *arg, struct resolver_job **job);
/* Forgets a lookup whose callback has not run: it never will.  Only from
 * the loop's thread. */
void resolver_cancel(struct resolver_job *job);
/* Lookups whose threads are running (timed out or cancelled ones too). */
size_t resolver_threads(struct resolver *rv);
/* Frees the resolver from the loop's thread; lookups still pending are
 * dropped without a callback (their owners cancel them first).  Threads
 * still running finish on their own and free what is left. */
void resolver_free(struct resolver *rv);

#endif
