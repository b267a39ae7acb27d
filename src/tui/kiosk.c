/*
 * kiosk.c - rotation, takeovers and burn-in shift of kiosk mode.  The
 * glue calls kiosk_tick() from its timers and kiosk_threat() for each new
 * threat; everything here is arithmetic on the times it is given, so the
 * tests replay a whole wall-monitor hour in microseconds.
 */
#include "tui/kiosk.h"

#include <stdio.h>
#include <string.h>

static void set_view(struct ui_state *s, enum view_id v)
{
    if (s->view != v)
        s->scroll = 0;
    s->view = v;
    s->feed_detail = false;
}

void kiosk_init(struct kiosk *k, struct ui_state *s, const char *views, int64_t rotate_ms,
                int64_t banner_ms, int64_t pause_ms, int64_t shift_ms, enum sev takeover,
                int64_t now_ms)
{
    memset(k, 0, sizeof *k);
    const char *p = views ? views : "";
    while (*p && k->nviews < sizeof k->views / sizeof k->views[0]) {
        char name[32];
        size_t n = strcspn(p, ",");
        if (n < sizeof name) {
            memcpy(name, p, n);
            name[n] = '\0';
            int v = view_parse(name);
            if (v >= 0)
                k->views[k->nviews++] = (enum view_id)v;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    if (!k->nviews) {
        const enum view_id def[] = {VIEW_OVERVIEW, VIEW_FEED, VIEW_MAP, VIEW_OPS};
        memcpy(k->views, def, sizeof def);
        k->nviews = 4;
    }
    k->rotate_ms = rotate_ms > 0 ? rotate_ms : 1;
    k->banner_ms = banner_ms;
    k->pause_ms = pause_ms;
    k->shift_ms = shift_ms > 0 ? shift_ms : 0;
    k->takeover = takeover;
    k->next_rotate_ms = now_ms + k->rotate_ms;
    k->next_shift_ms = k->shift_ms ? now_ms + k->shift_ms : 0;
    set_view(s, k->views[0]);
}

static void show_banner(struct kiosk *k, struct ui_state *s, const char *text, int64_t now_ms)
{
    snprintf(k->banner, sizeof k->banner, "%s", text);
    k->banner_until_ms = now_ms + k->banner_ms;
    if (now_ms + k->pause_ms > k->paused_until_ms)
        k->paused_until_ms = now_ms + k->pause_ms;
    set_view(s, VIEW_FEED);
}

bool kiosk_threat(struct kiosk *k, struct ui_state *s, enum sev sev, const char *text,
                  int64_t now_ms)
{
    if (sev < k->takeover)
        return false;
    if (k->banner_until_ms > now_ms) {
        if (k->nqueue < KIOSK_QUEUE)
            snprintf(k->queue[k->nqueue++], sizeof k->queue[0], "%s", text);
        /* the pause covers the queued banners too */
        k->paused_until_ms = k->banner_until_ms + (int64_t)k->nqueue * k->banner_ms;
        if (k->paused_until_ms < now_ms + k->pause_ms)
            k->paused_until_ms = now_ms + k->pause_ms;
        return true;
    }
    show_banner(k, s, text, now_ms);
    return true;
}

bool kiosk_tick(struct kiosk *k, struct ui_state *s, bool server_down, int64_t now_ms)
{
    bool changed = false;
    if (k->banner_until_ms && now_ms >= k->banner_until_ms) {
        k->banner_until_ms = 0;
        k->banner[0] = '\0';
        changed = true;
        if (k->nqueue) {
            char next[200];
            snprintf(next, sizeof next, "%s", k->queue[0]);
            memmove(k->queue[0], k->queue[1], (k->nqueue - 1) * sizeof k->queue[0]);
            k->nqueue--;
            show_banner(k, s, next, now_ms);
        }
    }
    if (k->shift_ms && now_ms >= k->next_shift_ms) {
        k->shift ^= 1;
        k->next_shift_ms = now_ms + k->shift_ms;
        changed = true;
    }
    if (server_down) {
        if (s->view != VIEW_HEALTH) {
            set_view(s, VIEW_HEALTH);
            changed = true;
        }
        k->next_rotate_ms = now_ms + k->rotate_ms;
        return changed;
    }
    if (now_ms < k->paused_until_ms) {
        if (k->next_rotate_ms < k->paused_until_ms)
            k->next_rotate_ms = k->paused_until_ms;
        return changed;
    }
    if (now_ms >= k->next_rotate_ms) {
        k->cur = (k->cur + 1) % k->nviews;
        if (k->cur == 0 && s->nbrands > 1)
            s->brand = (s->brand + 1) % s->nbrands;
        set_view(s, k->views[k->cur]);
        k->next_rotate_ms = now_ms + k->rotate_ms;
        changed = true;
    }
    return changed;
}

double kiosk_countdown(const struct kiosk *k, int64_t now_ms)
{
    int64_t left = k->next_rotate_ms - now_ms;
    return left > 0 ? (double)((left + 999) / 1000) : 0;
}

const char *kiosk_banner(const struct kiosk *k, int64_t now_ms)
{
    return k->banner_until_ms > now_ms ? k->banner : NULL;
}
