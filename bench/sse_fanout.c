/*
 * sse_fanout.c - SSE fan-out benchmark: N concurrent subscribers of one
 * brand on one `genuproof serve`, one alert broadcast to all of them.
 *
 * Reports, as Markdown:
 *   - server RSS per idle subscriber: (RSS with N idle streams open - RSS
 *     before the first one) / N, after a settling second;
 *   - per round (one product recall = one alert): time from sending the
 *     recall request until the first, the median, the 99th percentile and
 *     the last subscriber read the `threat` frame.
 * Everything runs over loopback: one epoll thread here reads every
 * subscriber socket, so the times include this client's own read loop and
 * are an upper bound of the server's share.
 *
 *   make bench && build/bench/sse_fanout [--bin ./genuproof] [--subs 10000]
 *       [--rounds 5] [--wave 500] [--durability full|normal]
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include <cjson/cJSON.h>

#include "sse_bench.h"

#define READ_CHUNK 65536
#define TAIL       15 /* strlen("event: connected") - 1 */

struct sub {
    int fd;
    bool connected;
    int threats;
    unsigned char tlen;
    char tail[TAIL];
};

struct opts {
    const char *bin;
    int subs, rounds, wave;
    const char *durability;
};

static int count_in(const char *p, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    int c = 0;
    for (size_t i = 0; i + k <= n; i++)
        if (p[i] == needle[0] && !memcmp(p + i, needle, k))
            c++, i += k - 1;
    return c;
}

/* Reads what s has; counts frames across read boundaries with a tail. */
static void sub_read(struct sub *s, char *scratch, double now, double *arrive)
{
    for (;;) {
        memcpy(scratch, s->tail, s->tlen);
        ssize_t r = read(s->fd, scratch + s->tlen, READ_CHUNK);
        if (r <= 0)
            return;
        size_t n = s->tlen + (size_t)r;
        if (!s->connected && count_in(scratch, n, "event: connected"))
            s->connected = true;
        int t = count_in(scratch, n, "event: threat");
        if (t) {
            s->threats += t;
            if (arrive)
                *arrive = now;
        }
        s->tlen = (unsigned char)(n < TAIL ? n : TAIL);
        memcpy(s->tail, scratch + n - s->tlen, s->tlen);
    }
}

static char *json_str(const char *body, const char *path1, int idx, const char *path2)
{
    cJSON *j = cJSON_Parse(body ? body : "");
    const cJSON *v = cJSON_GetObjectItem(j, path1);
    char *out = NULL;
    if (idx >= 0)
        v = cJSON_GetObjectItem(cJSON_GetArrayItem(v, idx), path2);
    if (cJSON_IsString(v))
        out = strdup(v->valuestring);
    cJSON_Delete(j);
    return out;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
    o->bin = "./genuproof";
    o->subs = 10000;
    o->rounds = 5;
    o->wave = 500;
    o->durability = "full";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "usage: sse_fanout [--bin PATH] [--subs N] [--rounds N] [--wave N] "
                            "[--durability full|normal]\n");
            exit(2);
        }
        if (!strcmp(a, "--bin"))
            o->bin = v;
        else if (!strcmp(a, "--subs"))
            o->subs = atoi(v);
        else if (!strcmp(a, "--rounds"))
            o->rounds = atoi(v);
        else if (!strcmp(a, "--wave"))
            o->wave = atoi(v);
        else if (!strcmp(a, "--durability"))
            o->durability = v;
        else {
            fprintf(stderr, "sse_fanout: unknown option %s\n", a);
            exit(2);
        }
        i++;
    }
    if (o->subs < 1 || o->rounds < 1 || o->rounds > 50 || o->wave < 1) {
        fprintf(stderr, "sse_fanout: bad numbers\n");
        exit(2);
    }
}

/* Handles ready sockets for up to ms; arrivals are stamped into arrive[]
 * (indexed like subs) when not NULL. */
static void pump(int ep, struct sub *subs, char *scratch, int ms, double *arrive)
{
    struct epoll_event ev[1024];
    int n = epoll_wait(ep, ev, 1024, ms);
    double now = bench_now_ms();
    for (int i = 0; i < n; i++) {
        struct sub *s = &subs[ev[i].data.u32];
        sub_read(s, scratch, now, arrive ? &arrive[ev[i].data.u32] : NULL);
    }
}

int main(int argc, char **argv)
{
    struct opts o;
    struct bench_server srv;
    char *body = NULL, *brand = NULL;
    char path[256], json[8192];
    parse_opts(argc, argv, &o);
    signal(SIGPIPE, SIG_IGN);
    long lim = bench_raise_nofile();
    if (lim < o.subs + 64) {
        fprintf(stderr, "sse_fanout: open-file limit %ld too low for %d subscribers\n", lim,
                o.subs);
        return 1;
    }
    char maxs[32];
    snprintf(maxs, sizeof maxs, "%d", o.subs + 16);
    const char *extra[] = {"--sse-max-streams", maxs, "--durability", o.durability, NULL};
    bench_server_start(&srv, o.bin, extra);

    if (bench_http(srv.port, "POST", "/api/brands",
                   "{\"name\":\"Fanout\",\"domain\":\"fanout.example\",\"industry\":\"bench\"}",
                   NULL, &body) != 200 ||
        !(brand = json_str(body, "id", -1, NULL)))
        bench_die("brand creation failed");
    free(body);
    size_t off = (size_t)snprintf(json, sizeof json, "{\"brandId\":\"%s\",\"products\":[", brand);
    for (int r = 0; r < o.rounds; r++)
        off += (size_t)snprintf(json + off, sizeof json - off, "%s{\"name\":\"Fanout %d\"}",
                                r ? "," : "", r);
    snprintf(json + off, sizeof json - off, "]}");
    if (bench_http(srv.port, "POST", "/api/products/batch", json, NULL, &body) != 200)
        bench_die("product batch failed");

    struct sub *subs = calloc((size_t)o.subs, sizeof *subs);
    double *arrive = calloc((size_t)o.subs, sizeof *arrive);
    char *scratch = malloc(READ_CHUNK + TAIL);
    int ep = epoll_create1(0);
    if (!subs || !arrive || !scratch || ep < 0)
        bench_die("setup");
    usleep(300000);
    long rss0 = bench_rss_kb(srv.pid);

    /* subscribers, in waves so the accept queue never overflows */
    double t_sub0 = bench_now_ms();
    snprintf(path, sizeof path, "brandId=%s", brand);
    int opened = 0, connected = 0;
    while (connected < o.subs) {
        int upto = opened + o.wave < o.subs ? opened + o.wave : o.subs;
        for (; opened < upto; opened++) {
            struct sub *s = &subs[opened];
            s->fd = bench_connect(srv.port, 0);
            if (s->fd < 0 || bench_stream_request(s->fd, path))
                bench_die("subscriber connect");
            fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
            struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)opened};
            epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev);
        }
        double deadline = bench_now_ms() + 20000;
        for (;;) {
            pump(ep, subs, scratch, 50, NULL);
            connected = 0;
            for (int i = 0; i < opened; i++)
                connected += subs[i].connected;
            if (connected == opened)
                break;
            if (bench_now_ms() > deadline)
                bench_die("subscribers did not all connect");
        }
    }
    double t_sub = bench_now_ms() - t_sub0;
    for (double end = bench_now_ms() + 1000; bench_now_ms() < end;)
        pump(ep, subs, scratch, 50, NULL);
    long rss1 = bench_rss_kb(srv.pid);

    printf("# SSE fan-out: %d subscribers of one brand, %d broadcast rounds (durability %s)\n\n",
           o.subs, o.rounds, o.durability);
    printf("subscribe %d streams: %.0f ms; server RSS %ld KiB -> %ld KiB: %.2f KiB per idle "
           "subscriber\n\n",
           o.subs, t_sub, rss0, rss1, (double)(rss1 - rss0) / o.subs);
    printf("| round | recall answered ms | first ms | p50 ms | p99 ms | last ms | received |\n");
    printf("|---|---|---|---|---|---|---|\n");

    double *tmp = malloc(sizeof(double) * (size_t)o.subs);
    double worst_p99 = 0, worst_last = 0;
    for (int r = 0; r < o.rounds; r++) {
        char *pid = json_str(body, "products", r, "productId");
        char rj[256];
        if (!pid)
            bench_die("no product id");
        snprintf(rj, sizeof rj, "{\"productId\":\"%s\",\"reason\":\"fan-out round %d\"}", pid, r);
        free(pid);
        /* the recall goes out on its own socket; its answer is read in the loop */
        char req[512];
        int n = snprintf(req, sizeof req,
                         "POST /api/products/recall HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         "Connection: close\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\n\r\n%s",
                         strlen(rj), rj);
        int rfd = bench_connect(srv.port, 0);
        memset(arrive, 0, sizeof(double) * (size_t)o.subs);
        double t0 = bench_now_ms(), t_ans = 0;
        if (rfd < 0 || bench_write_all(rfd, req, (size_t)n))
            bench_die("recall");
        fcntl(rfd, F_SETFL, fcntl(rfd, F_GETFL) | O_NONBLOCK);
        struct epoll_event rev = {.events = EPOLLIN, .data.u32 = (uint32_t)o.subs};
        epoll_ctl(ep, EPOLL_CTL_ADD, rfd, &rev);
        int got = 0;
        double deadline = t0 + 30000;
        while ((got < o.subs || !t_ans) && bench_now_ms() < deadline) {
            struct epoll_event ev[1024];
            int k = epoll_wait(ep, ev, 1024, 50);
            double now = bench_now_ms();
            for (int i = 0; i < k; i++) {
                uint32_t id = ev[i].data.u32;
                if (id == (uint32_t)o.subs) {
                    char b[4096];
                    ssize_t rr;
                    while ((rr = read(rfd, b, sizeof b)) > 0)
                        ;
                    if (!t_ans)
                        t_ans = now - t0;
                    if (rr == 0) {
                        epoll_ctl(ep, EPOLL_CTL_DEL, rfd, NULL);
                        close(rfd);
                        rfd = -1;
                    }
                    continue;
                }
                struct sub *s = &subs[id];
                int before = s->threats;
                double a = 0;
                sub_read(s, scratch, now, &a);
                if (before <= r && s->threats > r) {
                    arrive[id] = a - t0;
                    got++;
                }
            }
        }
        if (rfd >= 0)
            close(rfd);
        size_t m = 0;
        for (int i = 0; i < o.subs; i++)
            if (subs[i].threats > r)
                tmp[m++] = arrive[i];
        double first = bench_quantile(tmp, m, 0), p50 = bench_quantile(tmp, m, 0.5),
               p99 = bench_quantile(tmp, m, 0.99), last = bench_quantile(tmp, m, 1.0);
        printf("| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %zu/%d |\n", r + 1, t_ans, first, p50,
               p99, last, m, o.subs);
        fflush(stdout);
        if (p99 > worst_p99)
            worst_p99 = p99;
        if (last > worst_last)
            worst_last = last;
        for (double end = bench_now_ms() + 200; bench_now_ms() < end;)
            pump(ep, subs, scratch, 20, NULL);
    }
    printf("\nworst p99 %.1f ms, worst time to last %.1f ms; RSS per idle subscriber %.2f KiB\n",
           worst_p99, worst_last, (double)(rss1 - rss0) / o.subs);

    for (int i = 0; i < o.subs; i++)
        close(subs[i].fd);
    free(tmp);
    free(body);
    free(brand);
    free(subs);
    free(arrive);
    free(scratch);
    close(ep);
    bench_server_stop(&srv);
    return 0;
}
