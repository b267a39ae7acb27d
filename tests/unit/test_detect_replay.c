/*
 * test_detect_replay.c - the detector's exactly-once and determinism
 * guarantees on a mixed, pseudo-random workload (scans from several
 * countries, bursts, claims, tampered results, provenance events with
 * gaps and a broken link):
 *   - replaying the same stream into a fresh database gives identical
 *     alerts (ids included), counters and ops-log entries, whatever the
 *     batch size, and also when the detector runs interleaved with the
 *     writes;
 *   - commits that fail, a crash between batches and a real crash in the
 *     middle of a batch (a child process exiting before its commit) end
 *     with the same alerts and counters as an uninterrupted run;
 *   - a record whose batch keeps failing is isolated by bisection, parked
 *     in the DLQ, and the stream moves on.
 */
#include "test_detect_fixture.h"

#include <sys/wait.h>

#include "detect/dlq.h"

#define T0        "2026-06-20T08:00:00.000Z"
#define NBRANDS   2
#define NPRODUCTS 6
#define NOPS      420

static const char *const brands[NBRANDS] = {"brand-a", "brand-b"};

/* Deterministic pseudo-random numbers (LCG). */
static uint32_t rnd(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

struct workload {
    uint64_t poison_seq; /* seq of an ignorable record in the middle */
};

/* Hook between writes (for the interleaved run). */
typedef void (*between_fn)(void *arg, int op);

/* Writes the workload into f.  Same seeds -> same items, same order. */
static void write_workload(struct fx *f, struct workload *w, between_fn between, void *arg)
{
    static const char *const countries[] = {"US", "US", "US", "FR", "JP", "DE", "Unknown"};
    char pid[16], ts[ISO_LEN + 1], hash[NPRODUCTS][CRYPTO_HEX_LEN + 1];
    uint32_t seq[NPRODUCTS] = {0}, s = 12345;
    double minute[NPRODUCTS] = {0};

    for (int p = 0; p < NPRODUCTS; p++) {
        snprintf(pid, sizeof(pid), "prod%d", p);
        fx_product(f, pid, brands[p % NBRANDS], fx_ts(ts, T0, -60.0 * 24 * (p + 1)));
        if (p == 3)
            assert_int_equal(store_stream_head(f->s, &w->poison_seq), 0);
        fx_event(f, pid, ++seq[p], fx_ts(ts, T0, -60.0 * 24 * (p + 1)), "manufactured", "Maker",
                 CRYPTO_GENESIS, hash[p]);
    }
    for (int op = 0; op < NOPS; op++) {
        uint32_t r = rnd(&s);
        int p = (int)(r % NPRODUCTS);
        snprintf(pid, sizeof(pid), "prod%d", p);
        /* Products 0 and 1 are attacked (dense scans), the rest scanned
         * sparsely. */
        minute[p] += p < 2 ? (double)(rnd(&s) % 9) : 30.0 + (double)(rnd(&s) % 400);
        fx_ts(ts, T0, minute[p]);
        switch (rnd(&s) % 20) {
        case 0: { /* a provenance event, sometimes after a long gap or badly linked */
            char h[CRYPTO_HEX_LEN + 1];
            const char *prev = hash[p];
            if (rnd(&s) % 3 == 0)
                minute[p] += 60.0 * 24 * 4;
            fx_ts(ts, T0, minute[p]);
            if (p == 4 && seq[p] == 1)
                prev = CRYPTO_GENESIS;
            fx_event(f, pid, ++seq[p], ts, "shipped", "Carrier", prev, h);
            memcpy(hash[p], h, sizeof(h));
            break;
        }
        case 1:
            fx_scan_full(f, pid, ts, "US", "10.0.0.1", "x", "suspicious");
            break;
        case 2:
            if (op > 100 && (p == 1 || p == 5)) {
                struct key pk;
                cJSON *c = NULL;
                if (store_get(f->s, key_product_pk(&pk, pid), KEY_SK_CLAIM, true, &c) ==
                    ERR_NOTFOUND)
                    fx_claim(f, pid, "203.0.113.7", "Mozilla/5.0", ts);
                cJSON_Delete(c);
                break;
            }
            /* fall through */
        default:
            fx_scan_full(f, pid, ts, countries[rnd(&s) % 7],
                         rnd(&s) % 4 ? "203.0.113.7" : "192.0.2.66", "Mozilla/5.0", "authentic");
            break;
        }
        if (between)
            between(arg, op);
    }
}

/* Appends one line per item (selected attributes) to a sorted text. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *flags_text(const cJSON *item)
{
    char *s = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(item, "anomalyFlags"));
    return s;
}

/* A canonical text of everything the detector produced: alerts (without
 * write time and latency), STATS counters and ops-log entries. */
static char *summary(struct fx *f, bool with_opslog_keys)
{
    char **lines = NULL;
    size_t n = 0, cap = 0, len = 1;
    char line[4096], *out;

    for (int b = 0; b < NBRANDS; b++) {
        cJSON *alerts = fx_alerts(f, brands[b]);
        const cJSON *a;
        cJSON_ArrayForEach(a, alerts)
        {
            char *fl = flags_text(a);
            snprintf(line, sizeof(line), "A|%s|%s|%s|%s|%s|%s|%.0f|%s|%s|%s|%s|%s", brands[b],
                     fx_str(a, "alertId"), fx_str(a, "PK"), fx_str(a, "SK"), fx_str(a, "type"),
                     fx_str(a, "productId"), fx_num(a, "count"), fl, fx_str(a, "timestamp"),
                     fx_str(a, "lastSeen"), fx_str(a, "severity"), fx_str(a, "details"));
            free(fl);
            if (n == cap)
                lines = realloc(lines, (cap = cap ? cap * 2 : 64) * sizeof(*lines));
            lines[n++] = strdup(line);
        }
        cJSON_Delete(alerts);
        snprintf(line, sizeof(line), "S|%s|%.0f", brands[b], fx_threat_count(f, brands[b]));
        if (n == cap)
            lines = realloc(lines, (cap = cap ? cap * 2 : 64) * sizeof(*lines));
        lines[n++] = strdup(line);
    }
    for (int day = 0; day < 40; day++) {
        char ts[ISO_LEN + 1], d[11];
        cJSON *log;
        const cJSON *e;
        fx_ts(ts, T0, 60.0 * 24 * (day - 5));
        memcpy(d, ts, 10);
        d[10] = '\0';
        log = fx_opslog(f, d);
        cJSON_ArrayForEach(e, log)
        {
            char *fl = flags_text(e);
            snprintf(line, sizeof(line), "O|%s|%s|%s|%s|%s|%s|%.0f|%s",
                     with_opslog_keys ? fx_str(e, "SK") : "", fx_str(e, "timestamp"),
                     fx_str(e, "agent"), fx_str(e, "productId"), fx_str(e, "aiSeverity"),
                     fx_str(e, "aiAttackVector"), fx_num(e, "aiConfidence"), fl);
            free(fl);
            if (n == cap)
                lines = realloc(lines, (cap = cap ? cap * 2 : 64) * sizeof(*lines));
            lines[n++] = strdup(line);
        }
        cJSON_Delete(log);
    }
    qsort(lines, n, sizeof(*lines), cmp_str);
    for (size_t i = 0; i < n; i++)
        len += strlen(lines[i]) + 1;
    out = malloc(len);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strcat(out, lines[i]);
        strcat(out, "\n");
        free(lines[i]);
    }
    free(lines);
    return out;
}

/* The reference: the workload, then one uninterrupted run, batch 100. */
static char *reference(struct workload *w)
{
    struct fx f;
    struct detector *d;
    char *sum;
    fx_open(&f);
    write_workload(&f, w, NULL, NULL);
    d = fx_detector(&f, 100);
    fx_run(d);
    detector_free(d);
    sum = summary(&f, true);
    fx_close(&f);
    return sum;
}

static size_t count_lines(const char *s, char kind)
{
    size_t n = 0;
    for (const char *p = s; *p; p = strchr(p, '\n') + 1)
        if (p[0] == kind && p[1] == '|')
            n++;
    return n;
}

static void t_replay_batch_sizes(void **state)
{
    (void)state;
    struct workload w;
    char *ref = reference(&w);
    size_t sizes[] = {1, 7, 1000};

    if (getenv("DETECT_DUMP")) /* for debugging: the reference outcome */
        fputs(ref, stderr);
    /* The workload really exercises every check. */
    assert_true(count_lines(ref, 'A') >= 6);
    assert_non_null(strstr(ref, "|geographic_anomaly|"));
    assert_non_null(strstr(ref, "|burst_scan|"));
    assert_non_null(strstr(ref, "|claimed_product_scan|"));
    assert_non_null(strstr(ref, "|hash_tampering|"));
    assert_non_null(strstr(ref, "|chain_gap|"));
    assert_non_null(strstr(ref, "|chain_break|"));
    assert_true(count_lines(ref, 'O') > count_lines(ref, 'A'));

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        struct fx f;
        struct detector *d;
        char *sum;
        fx_open(&f);
        write_workload(&f, &w, NULL, NULL);
        d = fx_detector(&f, sizes[i]);
        fx_run(d);
        detector_free(d);
        sum = summary(&f, true);
        assert_string_equal(sum, ref);
        free(sum);
        fx_close(&f);
    }
    free(ref);
}

struct live {
    struct fx *f;
    struct detector *d;
};

static void run_every_37(void *arg, int op)
{
    struct live *l = arg;
    if (op % 37 == 0)
        fx_run(l->d);
}

/* Interleaved with the writes (as in the server) the sequence numbers of
 * the records differ, so ops-log keys differ; everything else agrees. */
static void t_replay_live(void **state)
{
    (void)state;
    struct workload w;
    struct fx f, g;
    struct detector *d;
    struct live l;
    char *a, *b;

    fx_open(&f);
    write_workload(&f, &w, NULL, NULL);
    d = fx_detector(&f, 100);
    fx_run(d);
    detector_free(d);
    a = summary(&f, false);
    fx_close(&f);

    fx_open(&g);
    l.f = &g;
    l.d = fx_detector(&g, 100);
    write_workload(&g, &w, run_every_37, &l);
    fx_run(l.d);
    detector_free(l.d);
    b = summary(&g, false);
    fx_close(&g);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

struct fail_n {
    int left;
    int calls;
};

static int fail_first(void *arg, uint64_t first, uint64_t last)
{
    struct fail_n *fn = arg;
    (void)first;
    (void)last;
    fn->calls++;
    if (fn->left > 0) {
        fn->left--;
        return ERR_IO;
    }
    return 0;
}

/* Commits that fail are retried: nothing is lost or counted twice. */
static void t_failed_commits(void **state)
{
    (void)state;
    struct workload w;
    char *ref = reference(&w), *sum;
    struct fx f;
    struct detector *d;
    struct detector_stats st;
    struct fail_n fn = {.left = 3};
    cJSON *dl;

    fx_open(&f);
    write_workload(&f, &w, NULL, NULL);
    d = fx_detector(&f, 100);
    detector_set_fault_hook(d, fail_first, &fn);
    fx_run(d);
    detector_get_stats(d, &st);
    assert_int_equal(st.errors, 3);
    assert_true(st.bisections >= 1);
    assert_int_equal(st.dlq_parked, 0);
    detector_free(d);
    sum = summary(&f, true);
    assert_string_equal(sum, ref);
    assert_int_equal(dlq_list(f.s, "2026-06-21", 100, &dl), 0);
    assert_int_equal(cJSON_GetArraySize(dl), 0);
    cJSON_Delete(dl);
    free(sum);
    fx_close(&f);
    free(ref);
}

/* A crash between batches: a new detector resumes at the checkpoint. */
static void t_crash_between_batches(void **state)
{
    (void)state;
    struct workload w;
    char *ref = reference(&w), *sum;
    struct fx f;
    struct detector *d;

    fx_open(&f);
    write_workload(&f, &w, NULL, NULL);
    for (int round = 0; round < 4; round++) {
        size_t n = 0;
        d = fx_detector(&f, 13);
        for (int i = 0; i < 5; i++)
            assert_int_equal(detector_run_once(d, &n), 0);
        detector_free(d); /* "crash": in-memory state is gone */
        store_close(f.s); /* and the connection */
        fx_reopen(&f);
    }
    d = fx_detector(&f, 100);
    fx_run(d);
    detector_free(d);
    sum = summary(&f, true);
    assert_string_equal(sum, ref);
    free(sum);
    fx_close(&f);
    free(ref);
}

static int exit_on_third(void *arg, uint64_t first, uint64_t last)
{
    int *calls = arg;
    (void)first;
    (void)last;
    if (++*calls == 3)
        _exit(7); /* die with the batch's writes done but not committed */
    return 0;
}

/* A real crash in the middle of a batch: a child process runs the
 * detector and exits before its third commit; the parent resumes. */
static void t_crash_mid_batch(void **state)
{
    (void)state;
    struct workload w;
    char *ref = reference(&w), *sum;
    struct fx f;
    struct detector *d;
    int status = 0, calls = 0;
    pid_t child;
    uint64_t cp = 0;

    fx_open(&f);
    write_workload(&f, &w, NULL, NULL);
    store_close(f.s);
    f.s = NULL;
    fflush(NULL);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        fx_reopen(&f);
        d = fx_detector(&f, 50);
        detector_set_fault_hook(d, exit_on_third, &calls);
        fx_run(d);
        _exit(0); /* not reached */
    }
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 7);
    fx_reopen(&f);
    assert_int_equal(store_checkpoint_get(f.s, DETECTOR_READER_DEFAULT, &cp), 0);
    assert_true(cp > 0); /* two batches committed before the crash */
    d = fx_detector(&f, 100);
    fx_run(d);
    detector_free(d);
    sum = summary(&f, true);
    assert_string_equal(sum, ref);
    free(sum);
    fx_close(&f);
    free(ref);
}

static int fail_on_seq(void *arg, uint64_t first, uint64_t last)
{
    uint64_t bad = *(uint64_t *)arg;
    return bad >= first && bad <= last ? ERR_IO : 0;
}

/* A record whose batch always fails is bisected out and parked; the rest
 * of the stream is processed (the poisoned record is an ignorable one, so
 * the result equals the reference). */
static void t_poison_record_parked(void **state)
{
    (void)state;
    struct workload w;
    char *ref = reference(&w), *sum;
    struct fx f;
    struct detector *d;
    struct detector_stats st;
    uint64_t bad, cp = 0, head = 0;
    cJSON *dl;
    const cJSON *it;

    fx_open(&f);
    write_workload(&f, &w, NULL, NULL);
    bad = w.poison_seq;
    assert_true(bad > 1);
    d = fx_detector(&f, 100);
    detector_set_fault_hook(d, fail_on_seq, &bad);
    fx_run(d);
    detector_get_stats(d, &st);
    assert_int_equal(st.dlq_parked, 1);
    assert_true(st.bisections >= 3);
    assert_int_equal(store_checkpoint_get(f.s, DETECTOR_READER_DEFAULT, &cp), 0);
    assert_int_equal(store_stream_head(f.s, &head), 0);
    assert_true(cp == head);
    detector_free(d);

    assert_int_equal(dlq_list(f.s, "2026-06-21", 100, &dl), 0);
    assert_int_equal(cJSON_GetArraySize(dl), 1);
    it = cJSON_GetArrayItem(dl, 0);
    assert_true(fx_num(it, "seq") == (double)bad);
    assert_string_equal(fx_str(it, "sk"), KEY_SK_META);
    assert_true(fx_num(it, "attempts") == DETECTOR_ATTEMPTS_DEFAULT);
    assert_non_null(strstr(fx_str(it, "error"), err_str(ERR_IO)));
    cJSON_Delete(dl);
    sum = summary(&f, true);
    assert_string_equal(sum, ref);
    free(sum);
    fx_close(&f);
    free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_replay_batch_sizes), cmocka_unit_test(t_replay_live),
        cmocka_unit_test(t_failed_commits),     cmocka_unit_test(t_crash_between_batches),
        cmocka_unit_test(t_crash_mid_batch),    cmocka_unit_test(t_poison_record_parked),
    };
    return cmocka_run_group_tests_name("detect_replay", tests, NULL, NULL);
}
