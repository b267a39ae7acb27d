/*
 * test_sse_subs.c - the subscriber bookkeeping shared by the SSE hubs
 * (api/sse_subs.c), without a store or a loop: the brand table (growth
 * past its first size, lookups, removal), the owner lists, the registry's
 * send-or-drop path (the owner's unlink callback, the dropped counter,
 * the open gauge), heartbeats due in order, and the threat frame.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/sse_subs.h"
#include "core/alert.h"
#include "core/timeutil.h"
#include "util/err.h"

#include "sse_fake.h"

struct ent {
    struct sse_bent e;
    int value;
};

static void test_btab(void **state)
{
    (void)state;
    struct sse_btab t;
    char id[32];
    sse_btab_init(&t);
    for (int i = 0; i < 300; i++) {
        snprintf(id, sizeof id, "brand-%d", i);
        assert_null(sse_btab_find(&t, id));
        struct ent *e = sse_btab_add(&t, id, sizeof *e);
        assert_string_equal(e->e.id, id);
        assert_int_equal(e->value, 0); /* zeroed */
        e->value = i;
    }
    assert_int_equal(t.n, 300);
    assert_true(t.nbuckets >= 300); /* grew */
    for (int i = 0; i < 300; i++) {
        snprintf(id, sizeof id, "brand-%d", i);
        struct sse_bent *b = sse_btab_find(&t, id);
        assert_non_null(b);
        assert_int_equal(container_of(b, struct ent, e)->value, i);
    }
    assert_null(sse_btab_find(&t, "brand-300"));
    for (int i = 0; i < 300; i += 2) {
        snprintf(id, sizeof id, "brand-%d", i);
        struct sse_bent *b = sse_btab_find(&t, id);
        sse_btab_remove(&t, b);
        free(b);
    }
    assert_int_equal(t.n, 150);
    size_t seen = 0;
    for (size_t i = 0; i < t.nbuckets; i++)
        for (struct sse_bent *b = t.tab[i], *next; b; b = next) {
            next = b->hnext;
            assert_int_equal(container_of(b, struct ent, e)->value % 2, 1);
            seen++;
            free(b);
        }
    assert_int_equal(seen, 150);
    sse_btab_fini(&t);
}

static void test_lists(void **state)
{
    (void)state;
    struct sse_node a = {0}, b = {0}, c = {0}, *head = NULL;
    sse_list_push(&head, &a);
    sse_list_push(&head, &b);
    sse_list_push(&head, &c); /* c b a */
    assert_ptr_equal(head, &c);
    sse_list_remove(&b);
    assert_ptr_equal(c.next, &a);
    assert_ptr_equal(a.prev, &c);
    assert_null(b.list);
    sse_list_remove(&b); /* in none: nothing */
    sse_list_remove(&c);
    assert_ptr_equal(head, &a);
    assert_null(a.prev);
    sse_list_remove(&a);
    assert_null(head);
}

/* ---------- the registry ---------- */

struct owner {
    struct sse_node *live;
    int unlinked;
};

static void on_unlink(void *arg, struct sse_node *n)
{
    struct owner *o = arg;
    o->unlinked++;
    sse_list_remove(n);
}

static void reg_new(struct sse_reg *r, struct owner *o)
{
    struct sse_reg_config c = {
        .sink = &fake_sink, .buffer_max = 4096, .unlink = on_unlink, .owner = o};
    sse_reg_init(r, &c);
    assert_int_equal(r->max_per_brand, SSE_HUB_MAX_PER_BRAND);
    assert_true(r->hb_ms >= 10);
}

static void test_send_or_drop(void **state)
{
    (void)state;
    struct sse_reg r;
    struct owner o = {0};
    struct fake_conn slow = {0}, ok = {0};
    struct sse_node ns = {.brand_id = "b1"}, no = {0};
    char chunk[1000];
    memset(chunk, 'x', sizeof chunk);
    reg_new(&r, &o);
    fake_conn_init(&slow);
    fake_conn_init(&ok);
    slow.stuck = true;
    slow.cap = 2500;
    sse_reg_open(&r, &ns, fake_hc(&slow));
    sse_reg_open(&r, &no, fake_hc(&ok));
    sse_list_push(&o.live, &ns);
    sse_list_push(&o.live, &no);
    assert_int_equal(r.nopen, 2);

    assert_true(sse_reg_send(&r, &ns, chunk, sizeof chunk));
    assert_true(sse_reg_send(&r, &ns, chunk, sizeof chunk));
    assert_false(sse_reg_send(&r, &ns, chunk, sizeof chunk)); /* past the cap */
    assert_int_equal(o.unlinked, 1);
    assert_int_equal(r.dropped, 1);
    assert_ptr_equal(o.live, &no); /* the owner took it out */
    assert_false(ns.in_hbq);
    assert_int_equal(r.nopen, 2); /* still open until the server closes it */

    /* a send to a closing connection also drops, but is not counted */
    assert_false(sse_reg_send(&r, &ns, "y", 1));
    assert_int_equal(o.unlinked, 2);
    assert_int_equal(r.dropped, 1);

    /* the heartbeat skips the dropped one */
    sse_reg_heartbeat(&r, time_now_ms() + r.hb_ms + 1);
    assert_int_equal(fake_count(&ok, "event: heartbeat"), 1);
    assert_int_equal(fake_count(&slow, "event: heartbeat"), 0);

    sse_reg_close(&r, &ns);
    sse_reg_close(&r, &no);
    assert_int_equal(r.nopen, 0);
    assert_null(r.hb_head);
    sse_reg_fini(&r);
    fake_conn_free(&slow);
    fake_conn_free(&ok);
}

static void test_heartbeat(void **state)
{
    (void)state;
    struct sse_reg r;
    struct owner o = {0};
    struct fake_conn a = {0}, b = {0};
    struct sse_node na = {0}, nb = {0};
    reg_new(&r, &o);
    fake_conn_init(&a);
    fake_conn_init(&b);
    int64_t t0 = time_now_ms();
    sse_reg_open(&r, &na, fake_hc(&a));
    sse_reg_open(&r, &nb, fake_hc(&b));
    sse_reg_heartbeat(&r, t0); /* not due yet */
    assert_int_equal(a.out.len + b.out.len, 0);
    int64_t t1 = time_now_ms() + r.hb_ms;
    sse_reg_heartbeat(&r, t1);
    assert_int_equal(fake_count(&a, "event: heartbeat"), 1);
    assert_int_equal(fake_count(&b, "event: heartbeat"), 1);
    assert_non_null(strstr(buf_cstr(&a.out), "data: {\"ts\":\""));
    sse_reg_heartbeat(&r, t1); /* served: due one period later */
    assert_int_equal(fake_count(&a, "event: heartbeat"), 1);
    sse_reg_close(&r, &na); /* b alone in the queue */
    sse_reg_heartbeat(&r, t1 + r.hb_ms);
    assert_int_equal(fake_count(&a, "event: heartbeat"), 1);
    assert_int_equal(fake_count(&b, "event: heartbeat"), 2);
    sse_reg_close(&r, &nb);
    sse_reg_fini(&r);
    fake_conn_free(&a);
    fake_conn_free(&b);
}

static void test_frame_threat(void **state)
{
    (void)state;
    char ts[ISO_LEN + 1];
    struct buf frame = BUF_INIT(1 << 20);
    time_iso(time_now_ms(), ts);
    struct alert_fields af = {.brand_id = "b1",
                              .type = "burst_scan",
                              .severity = "high",
                              .product_id = "p1",
                              .details = "two\nlines",
                              .timestamp = ts,
                              .source = "detector"};
    cJSON *it = alert_item_new(&af);
    assert_non_null(it);
    assert_int_equal(sse_frame_threat(&frame, "42", it), 0);
    char *want = fake_threat_frame(it, "42");
    assert_string_equal(buf_cstr(&frame), want);
    assert_non_null(strstr(want, "id: 42\n"));
    /* the frame is reset, not appended to */
    assert_int_equal(sse_frame_threat(&frame, "42", it), 0);
    assert_string_equal(buf_cstr(&frame), want);
    free(want);
    cJSON_Delete(it);
    buf_free(&frame);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_btab),         cmocka_unit_test(test_lists),
        cmocka_unit_test(test_send_or_drop), cmocka_unit_test(test_heartbeat),
        cmocka_unit_test(test_frame_threat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
