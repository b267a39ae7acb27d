/*
 * test_tui_keys.c - the dashboard key map (tui/keys.c) driven without
 * curses: views, brands, prompts, freeze, floor, read-only and kiosk
 * refusals, the recall confirmation and `:` commands.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/timeutil.h"
#include "tui/keys.h"
#include "tui/model.h"

static const char *ids[] = {"brand-a", "brand-b", "brand-c"};
static const int64_t NOW = 1764680000000;

static void push(struct model *m, const char *id, const char *sev, const char *pid)
{
    char buf[1024], iso[ISO_LEN + 1];
    time_iso(NOW, iso);
    int n =
        snprintf(buf, sizeof buf,
                 "{\"alertId\":\"%s\",\"brandId\":\"brand-a\",\"type\":\"burst_scan\","
                 "\"severity\":\"%s\",\"productId\":\"%s\",\"details\":\"d %s\","
                 "\"timestamp\":\"%s\",\"resolved\":false,\"country\":\"FR\",\"city\":\"Paris\"}",
                 id, sev, pid, id, iso);
    assert_int_equal(model_threat(m, 0, buf, (size_t)n, NOW), 1);
}

static unsigned key(struct ui_state *s, struct model *m, int k, struct ui_req *r)
{
    return keys_handle(s, m, k, NOW, r);
}

static void type_text(struct ui_state *s, struct model *m, const char *t)
{
    struct ui_req r;
    for (; *t; t++)
        key(s, m, (unsigned char)*t, &r);
}

static void test_views_and_brands(void **state)
{
    (void)state;
    struct model *m = model_new(ids, NULL, 3);
    struct ui_state s;
    struct ui_req r;
    ui_state_init(&s, 3, false, false);
    assert_int_equal(s.view, VIEW_OVERVIEW);
    assert_true(key(&s, m, '2', &r) & UI_REDRAW);
    assert_int_equal(s.view, VIEW_FEED);
    key(&s, m, '7', &r);
    assert_int_equal(s.view, VIEW_HEALTH);
    key(&s, m, TK_TAB, &r);
    assert_int_equal(s.view, VIEW_OVERVIEW); /* wraps */
    key(&s, m, TK_BTAB, &r);
    assert_int_equal(s.view, VIEW_HEALTH);
    unsigned f = key(&s, m, '[', &r);
    assert_true(f & UI_REQ);
    assert_int_equal(r.kind, REQ_BRAND);
    assert_int_equal(s.brand, 2); /* wraps backwards */
    key(&s, m, ']', &r);
    assert_int_equal(s.brand, 0);
    /* picker: Space unsubscribes, never the last stream */
    key(&s, m, 'b', &r);
    assert_int_equal(s.mode, UI_PICKER);
    key(&s, m, ' ', &r);
    assert_int_equal(r.kind, REQ_SUBSCRIBE);
    assert_false(s.subscribed[0]);
    key(&s, m, 'j', &r);
    key(&s, m, ' ', &r);
    key(&s, m, 'j', &r);
    key(&s, m, ' ', &r); /* would leave none */
    assert_true(s.subscribed[2]);
    key(&s, m, TK_ENTER, &r);
    assert_int_equal(s.mode, UI_NORMAL);
    assert_int_equal(s.brand, 2);
    /* w: the Heat view flips between writes and reads; elsewhere nothing */
    struct view_ctx ctx = {0};
    key(&s, m, '2', &r);
    assert_int_equal(key(&s, m, 'w', &r), 0);
    assert_false(s.heat_reads);
    key(&s, m, '6', &r);
    assert_true(key(&s, m, 'w', &r) & UI_REDRAW);
    ui_fill_ctx(&s, &ctx);
    assert_true(ctx.heat_reads);
    key(&s, m, 'w', &r);
    ui_fill_ctx(&s, &ctx);
    assert_false(ctx.heat_reads);
    model_free(m);
}

static void test_quit(void **state)
{
    (void)state;
    struct model *m = model_new(ids, NULL, 1);
    struct ui_state s;
    struct ui_req r;
    ui_state_init(&s, 1, false, false);
    assert_false(key(&s, m, 'q', &r) & UI_QUITF);
    assert_int_equal(s.mode, UI_QUIT);
    assert_false(key(&s, m, 'n', &r) & UI_QUITF);
    assert_int_equal(s.mode, UI_NORMAL);
    key(&s, m, 'q', &r);
    assert_true(key(&s, m, 'y', &r) & UI_QUITF);
    assert_true(key(&s, m, TK_CTRL_C, &r) & UI_QUITF);
    model_free(m);
}

static void test_kiosk_ignores_keys(void **state)
{
    (void)state;
    struct model *m = model_new(ids, NULL, 1);
    struct ui_state s;
    struct ui_req r;
    ui_state_init(&s, 1, false, true);
    assert_true(s.readonly);
    assert_int_equal(key(&s, m, 'q', &r), 0);
    assert_int_equal(key(&s, m, '2', &r), 0);
    assert_int_equal(key(&s, m, ' ', &r), 0);
    assert_int_equal(s.view, VIEW_OVERVIEW);
    assert_int_equal(s.mode, UI_NORMAL);
    assert_false(model_feed_c(m)->frozen);
    assert_true(key(&s, m, TK_CTRL_C, &r) & UI_QUITF);
    model_free(m);
}

static void test_filter_freeze_floor(void **state)
{
    (void)state;
    struct model *m = model_new(ids, NULL, 1);
    struct ui_state s;
    struct ui_req r;
    ui_state_init(&s, 1, false, false);
    push(m, "a1", "low", "p1");
    push(m, "a2", "critical", "p2");
    push(m, "a3", "high", "p3");
    key(&s, m, '2', &r);
    key(&s, m, '/', &r);
    assert_int_equal(s.mode, UI_FILTER);
    type_text(&s, m, "d a2");
    assert_string_equal(model_feed_c(m)->filter, "d a2");
    assert_int_equal(model_visible(m, NULL, 0), 1);
    key(&s, m, TK_BACKSPACE, &r);
    assert_string_equal(model_feed_c(m)->filter, "d a");
    key(&s, m, TK_ESC, &r);
    assert_int_equal(s.mode, UI_NORMAL);
    assert_string_equal(model_feed_c(m)->filter, "");
    assert_int_equal(model_visible(m, NULL, 0), 3);
    /* severity floor cycles LOW -> MED -> HIGH */
    key(&s, m, 's', &r);
    key(&s, m, 's', &r);
    assert_int_equal(model_feed_c(m)->floor, SEV_HIGH);
    assert_int_equal(model_visible(m, NULL, 0), 2);
    key(&s, m, 's', &r);
    key(&s, m, 's', &r);
    assert_int_equal(model_feed_c(m)->floor, SEV_LOW);
    /* freeze */
    key(&s, m, ' ', &r);
    assert_true(model_feed_c(m)->frozen);
    key(&s, m, ' ', &r);
    assert_false(model_feed_c(m)->frozen);
    /* j moves the selection and stops follow; g goes back */
    key(&s, m, 'j', &r);
    assert_int_equal(model_feed_c(m)->sel, 1);
    assert_false(model_feed_c(m)->follow);
    key(&s, m, 'g', &r);
    assert_int_equal(model_feed_c(m)->sel, 0);
    assert_true(model_feed_c(m)->follow);
    /* Enter opens the detail pane and clears the unseen mark */
    size_t crit = model_unseen_critical(m);
    assert_int_equal(crit, 1);
    key(&s, m, 'j', &r); /* a2 (critical) */
    key(&s, m, TK_ENTER, &r);
    assert_true(s.feed_detail);
    assert_int_equal(model_unseen_critical(m), 0);
    key(&s, m, TK_ESC, &r);
    assert_false(s.feed_detail);
    model_free(m);
}

static void test_readonly_refuses(void **state)
{
    (void)state;
    struct model *m = model_new(ids, NULL, 1);
    struct ui_state s;
    struct ui_req r;
    ui_state_init(&s, 1, true, false);
    push(m, "a1", "high", "p1");
    key(&s, m, '2', &r);
    unsigned f = key(&s, m, 'r', &r);
    assert_false(f & UI_REQ);
    assert_int_equal(r.kind, REQ_NONE);
    assert_non_null(strstr(s.message, "read-only"));
    f = key(&s, m, 'c', &r);
    assert_int_equal(r.kind, REQ_OPEN_PRODUCT);
    assert_string_equal(r.arg, "p1");
    assert_int_equal(s.view, VIEW_CHAIN);
    key(&s, m, 'X', &r);
    assert_int_equal(s.mode, UI_NORMAL);
    assert_int_equal(r.kind, REQ_NONE);
    model_free(m);
}

static void test_recall_confirmation(void **state)
{
    (void)state;
    struct model *m = model_new(ids, NULL, 1);
    struct ui_state s;
    struct ui_req r;
    ui_state_init(&s, 1, false, false);
    key(&s, m, ':', &r);
    type_text(&s, m, "product P-42");
    assert_true(key(&s, m, TK_ENTER, &r) & UI_REQ);
    assert_int_equal(r.kind, REQ_OPEN_PRODUCT);
    assert_string_equal(r.arg, "P-42");
    assert_int_equal(s.view, VIEW_CHAIN);
    strcpy(s.chain_code, "CODE7");
    key(&s, m, 'X', &r);
    assert_int_equal(s.mode, UI_RECALL_REASON);
    key(&s, m, TK_ENTER, &r); /* empty reason: stays */
    assert_int_equal(s.mode, UI_RECALL_REASON);
    type_text(&s, m, "hinge defect");
    key(&s, m, TK_ENTER, &r);
    assert_int_equal(s.mode, UI_RECALL_CODE);
    type_text(&s, m, "WRONG");
    key(&s, m, TK_ENTER, &r);
    assert_int_equal(r.kind, REQ_NONE);
    assert_int_equal(s.mode, UI_NORMAL);
    key(&s, m, 'X', &r);
    type_text(&s, m, "hinge defect");
    key(&s, m, TK_ENTER, &r);
    type_text(&s, m, "CODE7");
    assert_true(key(&s, m, TK_ENTER, &r) & UI_REQ);
    assert_int_equal(r.kind, REQ_RECALL);
    assert_string_equal(r.arg, "P-42");
    assert_string_equal(r.arg2, "hinge defect");
    model_free(m);
}

static void test_commands_and_requests(void **state)
{
    (void)state;
    struct model *m = model_new(ids, NULL, 2);
    struct ui_state s;
    struct ui_req r;
    ui_state_init(&s, 2, false, false);
    keys_command(&s, m, "days 40", NOW, &r);
    assert_int_equal(r.kind, REQ_NONE);
    assert_int_equal(s.ops_days, 7);
    keys_command(&s, m, "days 3", NOW, &r);
    assert_int_equal(r.kind, REQ_DAYS);
    assert_int_equal(s.ops_days, 3);
    keys_command(&s, m, "brand brand-b", NOW, &r);
    assert_int_equal(s.brand, 1);
    keys_command(&s, m, "theme light", NOW, &r);
    assert_int_equal(r.kind, REQ_THEME_SET);
    assert_string_equal(r.arg, "light");
    keys_command(&s, m, "export csv", NOW, &r);
    assert_int_equal(r.kind, REQ_EXPORT_CSV);
    keys_command(&s, m, "bogus", NOW, &r);
    assert_int_equal(r.kind, REQ_NONE);
    assert_non_null(strstr(s.message, "unknown command"));
    key(&s, m, 'e', &r);
    assert_int_equal(r.kind, REQ_EXPORT_JSONL);
    key(&s, m, 'R', &r);
    assert_int_equal(r.kind, REQ_REFRESH);
    key(&s, m, 'T', &r);
    assert_int_equal(r.kind, REQ_THEME_CYCLE);
    assert_true(key(&s, m, TK_CTRL_L, &r) & UI_FULL);
    key(&s, m, 't', &r);
    assert_true(s.tz_local);
    key(&s, m, 'B', &r);
    assert_int_equal(s.bell, 1);
    /* ops days with + and - only in the Ops view, bounded */
    key(&s, m, '4', &r);
    key(&s, m, '+', &r);
    assert_int_equal(s.ops_days, 4);
    assert_int_equal(r.kind, REQ_DAYS);
    model_free(m);
}

/* l in the Chain view lists the brand's products: j k choose, Enter
 * opens the chosen one, Esc closes the list. */
static void test_product_picker(void **state)
{
    (void)state;
    struct model *m = model_new(ids, NULL, 2);
    struct ui_state s;
    struct ui_req r;
    static const char body[] = "{\"products\":[{\"productId\":\"p-new\",\"name\":\"Newest\"},"
                               "{\"productId\":\"p-mid\",\"name\":\"Middle\"},"
                               "{\"productId\":\"p-old\",\"name\":\"Oldest\"}],\"count\":3}";
    ui_state_init(&s, 2, false, false);
    key(&s, m, ']', &r); /* the second brand */
    assert_int_equal(s.brand, 1);
    assert_int_equal(key(&s, m, 'l', &r), 0); /* not outside the Chain view */
    key(&s, m, '5', &r);
    assert_true(key(&s, m, 'l', &r) & UI_REQ);
    assert_int_equal(r.kind, REQ_BRAND_PRODUCTS);
    assert_int_equal(r.num, 1);
    assert_true(s.chain_pick);
    /* before the list came: nothing to choose or open */
    key(&s, m, 'j', &r);
    assert_int_equal(s.chain_pick_sel, 0);
    assert_int_equal(key(&s, m, TK_ENTER, &r), 0);
    model_reply(m, POLL_BRAND_PRODUCTS, 1, 200, body, sizeof body - 1, 1, NOW);
    key(&s, m, 'j', &r);
    key(&s, m, 'j', &r);
    key(&s, m, 'j', &r); /* stops at the last */
    assert_int_equal(s.chain_pick_sel, 2);
    key(&s, m, 'k', &r);
    assert_int_equal(s.chain_pick_sel, 1);
    key(&s, m, 'G', &r);
    assert_int_equal(s.chain_pick_sel, 2);
    key(&s, m, 'g', &r);
    assert_int_equal(s.chain_pick_sel, 0);
    key(&s, m, 'j', &r);
    unsigned f = key(&s, m, TK_ENTER, &r);
    assert_true(f & UI_REQ);
    assert_int_equal(r.kind, REQ_OPEN_PRODUCT);
    assert_string_equal(r.arg, "p-mid");
    assert_string_equal(s.chain_product_id, "p-mid");
    assert_false(s.chain_pick);
    /* Esc closes the list without opening anything; l toggles it */
    key(&s, m, 'l', &r);
    assert_true(s.chain_pick);
    key(&s, m, TK_ESC, &r);
    assert_false(s.chain_pick);
    assert_string_equal(s.chain_product_id, "p-mid");
    key(&s, m, 'l', &r);
    key(&s, m, 'l', &r);
    assert_false(s.chain_pick);
    /* another brand closes it: the list was this brand's */
    key(&s, m, 'l', &r);
    key(&s, m, '[', &r);
    assert_false(s.chain_pick);
    model_free(m);
}

static void test_help_filter(void **state)
{
    (void)state;
    struct model *m = model_new(ids, NULL, 1);
    struct ui_state s;
    struct ui_req r;
    ui_state_init(&s, 1, false, false);
    key(&s, m, '?', &r);
    assert_int_equal(s.mode, UI_HELP);
    type_text(&s, m, "rec");
    assert_string_equal(s.help_filter, "rec");
    assert_int_equal(s.mode, UI_HELP); /* 'q' 'e' etc. are text here */
    key(&s, m, TK_ESC, &r);
    assert_int_equal(s.mode, UI_NORMAL);
    key(&s, m, TK_F1, &r);
    assert_int_equal(s.mode, UI_HELP);
    key(&s, m, '?', &r);
    assert_int_equal(s.mode, UI_NORMAL);
    /* every binding has keys and help text */
    const struct key_binding *t = keys_table();
    size_t n = 0;
    for (; t[n].keys; n++)
        assert_true(strlen(t[n].help) > 0);
    assert_true(n > 20);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views_and_brands),      cmocka_unit_test(test_quit),
        cmocka_unit_test(test_kiosk_ignores_keys),    cmocka_unit_test(test_filter_freeze_floor),
        cmocka_unit_test(test_readonly_refuses),      cmocka_unit_test(test_recall_confirmation),
        cmocka_unit_test(test_commands_and_requests), cmocka_unit_test(test_help_filter),
        cmocka_unit_test(test_product_picker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
