/*
 * ratelimit.h - per-client-IP token buckets for the API_PUBLIC_RL routes.
 *
 * Each client IP gets a bucket of `burst` tokens refilled at `rate`
 * tokens per second; a request takes one token or is refused with the
 * number of seconds after which one will be available (Retry-After).
 * The table holds at most `max_clients` IPs; when full, the least
 * recently used one is forgotten (it starts again with a full bucket).
 * The clock is passed in by the caller, so tests drive time directly.
 */
#ifndef GP_API_RATELIMIT_H
#define GP_API_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RL_DEFAULT_CLIENTS 65536
/* Longest client key (an IP address text) kept; longer keys are cut. */
#define RL_KEY_MAX 63

struct ratelimit;

/* rate > 0 tokens/s, burst >= 1, max_clients >= 1.  NULL on bad args. */
struct ratelimit *rl_new(double rate, double burst, size_t max_clients);
void rl_free(struct ratelimit *rl);

/* Takes one token for client at time now_ms (any monotonic ms clock).
 * Returns true when allowed; otherwise false and *retry_after_s (may be
 * NULL) receives the whole seconds to wait (>= 1). */
bool rl_take(struct ratelimit *rl, const char *client, int64_t now_ms, int *retry_after_s);

/* Number of clients currently tracked. */
size_t rl_clients(const struct ratelimit *rl);

#endif
