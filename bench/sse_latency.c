/*
 * sse_latency.c - scan -> SSE alert latency benchmark.
 *
 * One `genuproof serve` (with its in-process detector), one open
 * /api/stream of a brand, and for each of --alerts products: two
 * verifications from two countries (no alert yet), then a third from a
 * third country, which the detector turns into a geographic_anomaly alert
 * that the server pushes.  The latency is the time from sending that
 * third verify request until the `threat` frame of that product is read
 * from the stream (both sockets are polled together, so the frame is
 * stamped when it arrives, whether before or after the verify answer).
 *
 * Frames are matched to products by the alert's productId (the data
 * line's JSON), never by the SSE id: the embedded store's ids are stream
 * sequence numbers, the DynamoDB mode's are "<writeTime>_<alertId>".  A
 * frame that arrives late (after its product's wait timed out) is kept
 * apart and cannot be mistaken for a later product's alert.
 *
 * Embedded mode (default): the path measured is request -> group commit
 * of the scan -> detector batch (its own commit) -> hub -> socket.
 * DynamoDB mode (--dynamodb URL, or any --server-arg): request -> the
 * scan's writes -> DynamoDB Streams -> the Streams detector's GetRecords
 * poll and transaction -> the API process's GSI1 poll -> socket.  With
 * --workers N the server forks N workers sharing the port, so the stream
 * and each verify land on any of them (SO_REUSEPORT).
 *
 * Prints p50/p90/p99/max as Markdown, plus the verify answer times, and
 * the CPU time of the benchmark's children (the server and its workers).
 *
 *   make bench && build/bench/sse_latency [--bin ./genuproof] [--alerts 1000]
 *       [--warmup 20] [--durability full|normal] [--timeout-ms 5000]
 *       [--dynamodb URL [--table T]] [--workers N] [--server-arg ARG]...
 *       [--jitter-ms MS]
 *
 * --jitter-ms waits a random 0..MS before each product's three scans.  In
 * DynamoDB mode the alert's path runs through two timers (the detector's
 * idle GetRecords poll, the GSI1 poll); without the jitter the next
 * product's scans would start right after the previous alert arrived,
 * always at the same phase of those timers.  The jitter is not counted.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/times.h>

#include <cjson/cJSON.h>

#include "sse_bench.h"

#define BATCH 50
/* Extra server arguments, --server-arg and the DynamoDB shorthands. */
#define MAX_SERVER_ARGS 24
/* One SSE event is far below this; a bigger one is skipped. */
#define EVENT_MAX (1 << 20)

struct opts {
    const char *bin;
    int alerts, warmup, timeout_ms, jitter_ms;
    const char *durability;
    const char *sargs[MAX_SERVER_ARGS + 1];
    int nsargs;
    bool custom; /* server arguments given: print the extra lines */
};

/* productId -> product index (open addressing, never removed). */
struct pmap {
    size_t cap;
    char **key;
    int *val;
};

struct stream {
    int fd;
    bool header_done;
    char *buf; /* unparsed bytes */
    size_t len, cap;
    const struct pmap *map;
    double *arrival; /* per product: first frame time (ms), -1 none */
    double *wt;      /* per product: that alert's write time (epoch ms) from a
                      * "<writeTime>_<alertId>" SSE id, -1 none */
    char **alert_id; /* per product: alertId of that frame */
    int threats, unknown, dups, others;
};

static void usage(void)
{
    fprintf(stderr,
            "usage: sse_latency [--bin PATH] [--alerts N] [--warmup N] [--durability full|normal]\n"
            "                   [--timeout-ms MS] [--dynamodb URL] [--table NAME] [--workers N]\n"
            "                   [--server-arg ARG]... [--jitter-ms MS]\n");
    exit(2);
}

static void add_sarg(struct opts *o, const char *a)
{
    if (o->nsargs >= MAX_SERVER_ARGS) {
        fprintf(stderr, "sse_latency: too many server arguments\n");
        exit(2);
    }
    o->sargs[o->nsargs++] = a;
    o->sargs[o->nsargs] = NULL;
    o->custom = true;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->bin = "./genuproof";
    o->alerts = 1000;
    o->warmup = 20;
    o->timeout_ms = 5000;
    o->durability = "full";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        if (!strcmp(a, "--bin"))
            o->bin = v;
        else if (!strcmp(a, "--alerts"))
            o->alerts = atoi(v);
        else if (!strcmp(a, "--warmup"))
            o->warmup = atoi(v);
        else if (!strcmp(a, "--timeout-ms"))
            o->timeout_ms = atoi(v);
        else if (!strcmp(a, "--jitter-ms"))
            o->jitter_ms = atoi(v);
        else if (!strcmp(a, "--durability"))
            o->durability = v;
        else if (!strcmp(a, "--server-arg"))
            add_sarg(o, v);
        else if (!strcmp(a, "--dynamodb") || !strcmp(a, "--table") || !strcmp(a, "--workers")) {
            add_sarg(o, a);
            add_sarg(o, v);
        } else {
            fprintf(stderr, "sse_latency: unknown option %s\n", a);
            exit(2);
        }
        i++;
    }
    if (o->alerts < 1 || o->warmup < 0 || o->timeout_ms < 100 || o->timeout_ms > 600000 ||
        o->jitter_ms < 0 || o->jitter_ms > 60000) {
        fprintf(stderr, "sse_latency: bad numbers\n");
        exit(2);
    }
}

/* ---------- productId -> index ---------- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void pmap_init(struct pmap *m, size_t n)
{
    m->cap = 16;
    while (m->cap < 2 * n)
        m->cap *= 2;
    m->key = calloc(m->cap, sizeof *m->key);
    m->val = calloc(m->cap, sizeof *m->val);
    if (!m->key || !m->val)
        bench_die("out of memory");
}

static void pmap_put(struct pmap *m, const char *k, int v)
{
    size_t i = (size_t)hash_str(k) & (m->cap - 1);
    while (m->key[i] && strcmp(m->key[i], k))
        i = (i + 1) & (m->cap - 1);
    if (!m->key[i] && !(m->key[i] = strdup(k)))
        bench_die("out of memory");
    m->val[i] = v;
}

/* The index of productId k, or -1. */
static int pmap_get(const struct pmap *m, const char *k)
{
    size_t i = (size_t)hash_str(k) & (m->cap - 1);
    while (m->key[i]) {
        if (!strcmp(m->key[i], k))
            return m->val[i];
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}

static void pmap_free(struct pmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->key[i]);
    free(m->key);
    free(m->val);
}

/* ---------- the stream ---------- */

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The write time of a DynamoDB-mode SSE id ("2026-12-02T15:41:40.123Z_<id>")
 * in epoch ms, or -1 (embedded ids are plain numbers). */
static double id_write_ms(const char *id)
{
    struct tm tm = {0};
    int ms = 0;
    const char *p = strchr(id, '_');
    if (!p || p - id != 24)
        return -1;
    if (sscanf(id, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
               &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm) * 1e3 + ms;
}

/* One complete event (text of its lines, NUL-terminated, no blank line). */
static void stream_event(struct stream *s, char *ev, double now)
{
    char *data = NULL, *id = NULL;
    bool threat = false;
    for (char *line = ev, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[--l] = '\0';
        if (!strcmp(line, "event: threat"))
            threat = true;
        else if (!strncmp(line, "data: ", 6) && !data)
            data = line + 6; /* threat frames are one data line */
        else if (!strncmp(line, "id: ", 4))
            id = line + 4;
    }
    if (!threat)
        return;
    s->threats++;
    cJSON *j = data ? cJSON_Parse(data) : NULL;
    const cJSON *pid = cJSON_GetObjectItem(j, "productId"),
                *aid = cJSON_GetObjectItem(j, "alertId");
    int k = cJSON_IsString(pid) ? pmap_get(s->map, pid->valuestring) : -1;
    const char *a = cJSON_IsString(aid) ? aid->valuestring : "";
    if (k < 0) {
        s->unknown++;
    } else if (s->arrival[k] < 0) {
        s->arrival[k] = now;
        s->alert_id[k] = strdup(a);
        s->wt[k] = id ? id_write_ms(id) : -1;
    } else if (s->alert_id[k] && !strcmp(s->alert_id[k], a)) {
        s->dups++; /* the same alert pushed twice */
    } else {
        s->others++; /* another alert of the product */
    }
    cJSON_Delete(j);
}

/* Reads what the stream has and handles every complete event; returns
 * the number of threat frames seen. */
static int stream_read(struct stream *s)
{
    int before = s->threats;
    double now = -1;
    for (;;) {
        if (s->cap - s->len < 65536 + 1) {
            s->cap = s->cap ? s->cap * 2 : 262144;
            if (!(s->buf = realloc(s->buf, s->cap)))
                bench_die("out of memory");
        }
        ssize_t r = read(s->fd, s->buf + s->len, 65536);
        if (r <= 0)
            break;
        if (now < 0)
            now = bench_now_ms();
        s->len += (size_t)r;
        s->buf[s->len] = '\0';
        size_t off = 0;
        if (!s->header_done) {
            char *h = strstr(s->buf, "\r\n\r\n");
            if (!h)
                continue;
            s->header_done = true;
            off = (size_t)(h + 4 - s->buf);
        }
        for (;;) {
            char *e = memmem(s->buf + off, s->len - off, "\n\n", 2);
            if (!e)
                break;
            *e = '\0';
            stream_event(s, s->buf + off, now);
            off = (size_t)(e + 2 - s->buf);
        }
        if (s->len - off > EVENT_MAX) /* never ends: drop it */
            off = s->len;
        memmove(s->buf, s->buf + off, s->len - off);
        s->len -= off;
    }
    return s->threats - before;
}

/* ---------- verifications ---------- */

/* Sends a verify request on a new non-blocking connection. */
static int verify_send(int port, const char *code, const char *country)
{
    char req[512];
    int fd = bench_connect(port, 0);
    int n = snprintf(req, sizeof req,
                     "GET /api/products/verify?code=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Connection: close\r\nX-Country: %s\r\nUser-Agent: bench\r\n\r\n",
                     code, country);
    if (fd < 0 || bench_write_all(fd, req, (size_t)n))
        bench_die("verify send");
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* Drains a verify answer; true once the server closed it (complete). */
static bool verify_done(int fd)
{
    char b[8192];
    for (;;) {
        ssize_t r = read(fd, b, sizeof b);
        if (r == 0)
            return true;
        if (r < 0)
            return errno != EAGAIN && errno != EWOULDBLOCK;
    }
}

/* One verify of product k; with want_alert also waits for the product's
 * threat frame.  *lat = ms until the frame (or -1 on timeout), *ans = ms
 * until the answer. */
static void scan(int port, struct stream *st, int k, const char *code, const char *country,
                 bool want_alert, int timeout_ms, double *lat, double *ans)
{
    double t0 = bench_now_ms(), deadline = t0 + timeout_ms;
    int vfd = verify_send(port, code, country);
    bool answered = false;
    *lat = -1;
    *ans = -1;
    while (bench_now_ms() < deadline) {
        struct pollfd p[2] = {{.fd = st->fd, .events = POLLIN}, {.fd = vfd, .events = POLLIN}};
        int n = poll(p, answered ? 1 : 2, 20);
        double now = bench_now_ms();
        if (n > 0 && (p[0].revents & POLLIN))
            stream_read(st);
        if (want_alert && *lat < 0 && st->arrival[k] >= 0)
            *lat = st->arrival[k] - t0;
        if (!answered && n > 0 && p[1].revents && verify_done(vfd)) {
            answered = true;
            *ans = now - t0;
        }
        if (answered && (!want_alert || *lat >= 0))
            break;
    }
    close(vfd);
}

/* A Markdown row of the quantiles of v[0..n) (sorts v). */
static void print_row(const char *label, double *v, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", label, bench_quantile(v, (size_t)n, 0.5),
           bench_quantile(v, (size_t)n, 0.9), bench_quantile(v, (size_t)n, 0.99),
           bench_quantile(v, (size_t)n, 1.0), n ? sum / n : 0);
}

/* The running server, for stop_at_exit: the one piece of global state,
 * because bench_die() exits from anywhere. */
static struct bench_server *running;

/* A bench_die() after the start must not leave the server (and its
 * workers) behind. */
static void stop_at_exit(void)
{
    if (running)
        bench_server_stop(running);
    running = NULL;
}

static double cpu_s(clock_t t)
{
    return (double)t / (double)sysconf(_SC_CLK_TCK);
}

int main(int argc, char **argv)
{
    struct opts o;
    struct bench_server srv;
    struct stream st = {0};
    struct pmap map;
    char *body = NULL, *brand = NULL;
    char json[16384], q[256];
    static const char *const countries[] = {"US", "GB", "FR"};
    const char *extra[MAX_SERVER_ARGS + 3];
    int ne = 0;

    parse_opts(argc, argv, &o);
    signal(SIGPIPE, SIG_IGN);
    extra[ne++] = "--durability";
    extra[ne++] = o.durability;
    for (int i = 0; i < o.nsargs; i++)
        extra[ne++] = o.sargs[i];
    extra[ne] = NULL;
    bench_server_start(&srv, o.bin, extra);
    running = &srv;
    atexit(stop_at_exit);
    if (bench_http(srv.port, "POST", "/api/brands",
                   "{\"name\":\"Latency\",\"domain\":\"latency.example\",\"industry\":\"bench\"}",
                   NULL, &body) != 200)
        bench_die("brand creation failed");
    cJSON *bj = cJSON_Parse(body);
    const cJSON *idv = cJSON_GetObjectItem(bj, "id");
    if (!cJSON_IsString(idv))
        bench_die("no brand id");
    brand = strdup(idv->valuestring);
    cJSON_Delete(bj);
    free(body);

    int total = o.alerts + o.warmup;
    char **codes = calloc((size_t)total, sizeof *codes);
    pmap_init(&map, (size_t)total);
    for (int i = 0; i < total; i += BATCH) {
        size_t off =
            (size_t)snprintf(json, sizeof json, "{\"brandId\":\"%s\",\"products\":[", brand);
        for (int k = i; k < total && k < i + BATCH; k++)
            off += (size_t)snprintf(json + off, sizeof json - off, "%s{\"name\":\"Latency %d\"}",
                                    k > i ? "," : "", k);
        snprintf(json + off, sizeof json - off, "]}");
        if (bench_http(srv.port, "POST", "/api/products/batch", json, NULL, &body) != 200)
            bench_die("product batch failed");
        cJSON *pj = cJSON_Parse(body);
        const cJSON *arr = cJSON_GetObjectItem(pj, "products"), *it;
        int k = i;
        cJSON_ArrayForEach(it, arr)
        {
            const cJSON *c = cJSON_GetObjectItem(it, "verificationCode");
            const cJSON *p = cJSON_GetObjectItem(it, "productId");
            if (k < total && cJSON_IsString(c) && cJSON_IsString(p)) {
                pmap_put(&map, p->valuestring, k);
                codes[k++] = strdup(c->valuestring);
            }
        }
        cJSON_Delete(pj);
        free(body);
        if (k != (i + BATCH < total ? i + BATCH : total))
            bench_die("missing verification codes");
    }

    st.map = &map;
    st.arrival = malloc((size_t)total * sizeof *st.arrival);
    st.alert_id = calloc((size_t)total, sizeof *st.alert_id);
    st.wt = malloc((size_t)total * sizeof *st.wt);
    double *sent = malloc((size_t)total * sizeof *sent); /* third scan, epoch ms */
    if (!st.arrival || !st.alert_id || !st.wt || !sent)
        bench_die("out of memory");
    for (int i = 0; i < total; i++)
        st.arrival[i] = st.wt[i] = sent[i] = -1;
    st.fd = bench_connect(srv.port, 0);
    snprintf(q, sizeof q, "brandId=%s", brand);
    if (st.fd < 0 || bench_stream_request(st.fd, q))
        bench_die("stream");
    fcntl(st.fd, F_SETFL, fcntl(st.fd, F_GETFL) | O_NONBLOCK);
    usleep(200000);
    stream_read(&st);

    double *lat = calloc((size_t)total, sizeof *lat), *ans = calloc((size_t)total, sizeof *ans);
    int missing = 0, n = 0;
    struct tms c0, c1;
    times(&c0);
    double t_start = bench_now_ms();
    double mono_to_wall = wall_ms() - t_start;
    for (int i = 0; i < total; i++) {
        double l, a;
        if (o.jitter_ms) /* a random phase against the server's poll timers */
            usleep((useconds_t)(rand() % (o.jitter_ms + 1)) * 1000);
        scan(srv.port, &st, i, codes[i], countries[0], false, o.timeout_ms, &l, &a);
        scan(srv.port, &st, i, codes[i], countries[1], false, o.timeout_ms, &l, &a);
        sent[i] = wall_ms();
        scan(srv.port, &st, i, codes[i], countries[2], true, o.timeout_ms, &l, &a);
        if (i < o.warmup)
            continue;
        if (l < 0) {
            missing++;
            continue;
        }
        lat[n] = l;
        ans[n] = a;
        n++;
    }
    double elapsed = bench_now_ms() - t_start;
    /* late frames, duplicates: one more look after the last alert */
    usleep(o.custom ? 1000000 : 0);
    stream_read(&st);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += lat[i];

    printf("# scan -> SSE alert latency: %d alerts (after %d warm-up), durability %s\n\n", n,
           o.warmup, o.durability);
    if (o.custom) {
        printf("server arguments:");
        for (int i = 0; i < o.nsargs; i++)
            printf(" %s", o.sargs[i]);
        if (o.jitter_ms)
            printf("; random wait of 0-%d ms before each product", o.jitter_ms);
        printf("\n\n");
    }
    printf(
        "| measure | p50 ms | p90 ms | p99 ms | max ms | mean ms |\n|---|---|---|---|---|---|\n");
    double mean = n ? sum / n : 0;
    double p50 = bench_quantile(lat, (size_t)n, 0.5), p90 = bench_quantile(lat, (size_t)n, 0.9),
           p99 = bench_quantile(lat, (size_t)n, 0.99), mx = bench_quantile(lat, (size_t)n, 1.0);
    printf("| scan sent -> threat frame read | %.2f | %.2f | %.2f | %.2f | %.2f |\n", p50, p90, p99,
           mx, mean);
    sum = 0;
    for (int i = 0; i < n; i++)
        sum += ans[i];
    double a50 = bench_quantile(ans, (size_t)n, 0.5), a90 = bench_quantile(ans, (size_t)n, 0.9),
           a99 = bench_quantile(ans, (size_t)n, 0.99), amx = bench_quantile(ans, (size_t)n, 1.0);
    printf("| scan sent -> verify answer read | %.2f | %.2f | %.2f | %.2f | %.2f |\n", a50, a90,
           a99, amx, n ? sum / n : 0);
    /* DynamoDB mode: split at the alert's write time (the detector's
     * clock when its GetRecords call started; same machine clock). */
    double *d1 = calloc((size_t)total, sizeof *d1), *d2 = calloc((size_t)total, sizeof *d2);
    int nd = 0;
    for (int i = o.warmup; i < total && d1 && d2; i++) {
        if (st.wt[i] < 0 || st.arrival[i] < 0)
            continue;
        d1[nd] = st.wt[i] - sent[i];
        d2[nd] = st.arrival[i] + mono_to_wall - st.wt[i];
        nd++;
    }
    if (nd) {
        print_row("scan sent -> alert write time (detector's GetRecords began)", d1, nd);
        print_row("alert write time -> threat frame read (detector commit + GSI1 poll)", d2, nd);
    }
    free(d1);
    free(d2);
    printf("\nalerts missing (no frame within %.1f s): %d; %d verifications in %.1f s\n",
           o.timeout_ms / 1000.0, missing, 3 * total, elapsed / 1000.0);

    close(st.fd);
    running = NULL;
    bench_server_stop(&srv);
    if (o.custom) {
        times(&c1);
        /* children are counted once reaped: the server (and its workers,
         * which it reaps) after bench_server_stop */
        printf("threat frames %d (same alert twice: %d; another alert of a product: %d; "
               "unknown product: %d); server CPU %.1f s user + %.1f s system\n",
               st.threats, st.dups, st.others, st.unknown, cpu_s(c1.tms_cutime - c0.tms_cutime),
               cpu_s(c1.tms_cstime - c0.tms_cstime));
    }
    for (int i = 0; i < total; i++) {
        free(codes[i]);
        free(st.alert_id[i]);
    }
    free(codes);
    free(st.alert_id);
    free(st.arrival);
    free(st.wt);
    free(sent);
    free(st.buf);
    pmap_free(&map);
    free(lat);
    free(ans);
    free(brand);
    return missing ? 1 : 0;
}
