/*
 * sse_latency.c - scan -> SSE alert latency benchmark.
 *
 * One `genuproof serve` (with its in-process detector), one open
 * /api/stream of a brand, and for each of --alerts products: two
 * verifications from two countries (no alert yet), then a third from a
 * third country, which the detector turns into a geographic_anomaly alert
 * that the hub pushes.  The latency is the time from sending that third
 * verify request until the `threat` frame is read from the stream (both
 * sockets are polled together, so the frame is stamped when it arrives,
 * whether before or after the verify answer).  The path measured:
 * request -> group commit of the scan -> detector batch (its own commit)
 * -> hub -> socket.
 *
 * Prints p50/p90/p99/max as Markdown, plus the verify answer times.
 *
 *   make bench && build/bench/sse_latency [--bin ./genuproof] [--alerts 1000]
 *       [--warmup 20] [--durability full|normal]
 */
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sse_bench.h"

#define BATCH 50

struct opts {
    const char *bin;
    int alerts, warmup;
    const char *durability;
};

struct stream {
    int fd;
    int threats;
    size_t tlen;
    char tail[16];
};

static void parse_opts(int argc, char **argv, struct opts *o)
{
    o->bin = "./genuproof";
    o->alerts = 1000;
    o->warmup = 20;
    o->durability = "full";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "usage: sse_latency [--bin PATH] [--alerts N] [--warmup N] "
                            "[--durability full|normal]\n");
            exit(2);
        }
        if (!strcmp(a, "--bin"))
            o->bin = v;
        else if (!strcmp(a, "--alerts"))
            o->alerts = atoi(v);
        else if (!strcmp(a, "--warmup"))
            o->warmup = atoi(v);
        else if (!strcmp(a, "--durability"))
            o->durability = v;
        else {
            fprintf(stderr, "sse_latency: unknown option %s\n", a);
            exit(2);
        }
        i++;
    }
    if (o->alerts < 1 || o->warmup < 0) {
        fprintf(stderr, "sse_latency: bad numbers\n");
        exit(2);
    }
}

/* Reads what the stream has; returns the number of new threat frames. */
static int stream_read(struct stream *s)
{
    char buf[65536 + 16];
    int found = 0;
    for (;;) {
        memcpy(buf, s->tail, s->tlen);
        ssize_t r = read(s->fd, buf + s->tlen, 65536);
        if (r <= 0)
            break;
        size_t n = s->tlen + (size_t)r;
        const char *p = buf, *end = buf + n;
        while ((p = memmem(p, (size_t)(end - p), "event: threat", 13))) {
            found++;
            p += 13;
        }
        s->tlen = n < 12 ? n : 12;
        memcpy(s->tail, buf + n - s->tlen, s->tlen);
    }
    s->threats += found;
    return found;
}

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

/* One verify; with want_alert also waits for the next threat frame.
 * *lat = ms until the frame (or -1 on timeout), *ans = ms until the
 * answer. */
static void scan(int port, struct stream *st, const char *code, const char *country,
                 bool want_alert, double *lat, double *ans)
{
    int before = st->threats;
    double t0 = bench_now_ms(), deadline = t0 + 5000;
    int vfd = verify_send(port, code, country);
    bool answered = false;
    *lat = -1;
    *ans = -1;
    while (bench_now_ms() < deadline) {
        struct pollfd p[2] = {{.fd = st->fd, .events = POLLIN}, {.fd = vfd, .events = POLLIN}};
        int k = poll(p, answered ? 1 : 2, 20);
        double now = bench_now_ms();
        if (k > 0 && (p[0].revents & POLLIN) && stream_read(st) && *lat < 0 && st->threats > before)
            *lat = now - t0;
        if (!answered && k > 0 && p[1].revents && verify_done(vfd)) {
            answered = true;
            *ans = now - t0;
        }
        if (answered && (!want_alert || *lat >= 0))
            break;
    }
    close(vfd);
}

int main(int argc, char **argv)
{
    struct opts o;
    struct bench_server srv;
    struct stream st = {0};
    char *body = NULL, *brand = NULL;
    char json[16384], q[256];
    static const char *const countries[] = {"US", "GB", "FR"};

    parse_opts(argc, argv, &o);
    signal(SIGPIPE, SIG_IGN);
    const char *extra[] = {"--durability", o.durability, NULL};
    bench_server_start(&srv, o.bin, extra);
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
            if (k < total && cJSON_IsString(c))
                codes[k++] = strdup(c->valuestring);
        }
        cJSON_Delete(pj);
        free(body);
        if (k != (i + BATCH < total ? i + BATCH : total))
            bench_die("missing verification codes");
    }

    st.fd = bench_connect(srv.port, 0);
    snprintf(q, sizeof q, "brandId=%s", brand);
    if (st.fd < 0 || bench_stream_request(st.fd, q))
        bench_die("stream");
    fcntl(st.fd, F_SETFL, fcntl(st.fd, F_GETFL) | O_NONBLOCK);
    usleep(200000);
    stream_read(&st);

    double *lat = calloc((size_t)total, sizeof *lat), *ans = calloc((size_t)total, sizeof *ans);
    int missing = 0, n = 0;
    double t_start = bench_now_ms();
    for (int i = 0; i < total; i++) {
        double l, a;
        scan(srv.port, &st, codes[i], countries[0], false, &l, &a);
        scan(srv.port, &st, codes[i], countries[1], false, &l, &a);
        scan(srv.port, &st, codes[i], countries[2], true, &l, &a);
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
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += lat[i];

    printf("# scan -> SSE alert latency: %d alerts (after %d warm-up), durability %s\n\n", n,
           o.warmup, o.durability);
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
    printf("\nalerts missing (no frame within 5 s): %d; %d verifications in %.1f s\n", missing,
           3 * total, elapsed / 1000.0);

    close(st.fd);
    for (int i = 0; i < total; i++)
        free(codes[i]);
    free(codes);
    free(lat);
    free(ans);
    free(brand);
    bench_server_stop(&srv);
    return missing ? 1 : 0;
}
