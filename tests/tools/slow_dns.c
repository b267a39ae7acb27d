/*
 * slow_dns.c - an LD_PRELOAD stand-in for getaddrinfo() that gives the
 * end-to-end tests name servers of every speed without a network.
 * Names under .gp-test answer as follows; every other name goes to the
 * real getaddrinfo().
 *
 *   slow.gp-test      after SLOW_DNS_MS milliseconds (default 1000), a
 *                     public address (93.184.215.14)
 *   hang.gp-test      after 10 s, the same address
 *   private.gp-test   at once, 10.0.0.5
 *   other .gp-test    at once, EAI_NONAME
 */
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*gai_fn)(const char *, const char *, const struct addrinfo *, struct addrinfo **);

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int answer(const char *ip, struct addrinfo **res)
{
    /* one block, as glibc's freeaddrinfo() frees each entry with free() */
    struct addrinfo *ai = calloc(1, sizeof *ai + sizeof(struct sockaddr_in));
    struct sockaddr_in *sin = (struct sockaddr_in *)(ai + 1);
    if (!ai)
        return EAI_MEMORY;
    sin->sin_family = AF_INET;
    inet_pton(AF_INET, ip, &sin->sin_addr);
    ai->ai_family = AF_INET;
    ai->ai_socktype = SOCK_STREAM;
    ai->ai_protocol = IPPROTO_TCP;
    ai->ai_addr = (struct sockaddr *)sin;
    ai->ai_addrlen = sizeof *sin;
    *res = ai;
    return 0;
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    if (node && ends_with(node, ".gp-test")) {
        if (!strcmp(node, "slow.gp-test")) {
            const char *ms = getenv("SLOW_DNS_MS");
            sleep_ms(ms ? atol(ms) : 1000);
            return answer("93.184.215.14", res);
        }
        if (!strcmp(node, "hang.gp-test")) {
            sleep_ms(10000);
            return answer("93.184.215.14", res);
        }
        if (!strcmp(node, "private.gp-test"))
            return answer("10.0.0.5", res);
        return EAI_NONAME;
    }
    gai_fn real = (gai_fn)dlsym(RTLD_NEXT, "getaddrinfo");
    return real ? real(node, service, hints, res) : EAI_FAIL;
}
