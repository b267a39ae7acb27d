/*
 * view_util.c - helpers shared by the dashboard views: clipped drawing
 * through a scratch canvas, tolerant JSON getters and the placeholders
 * for data that is denied, unsupported or not loaded yet.
 */
#include "tui/view_util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "core/timeutil.h"

void vu_draw_clipped(struct canvas *c, int x, int y, int w, int h, vu_draw_fn fn,
                     const struct model *m, const struct view_ctx *ctx)
{
    struct canvas tmp;
    if (w <= 0 || h <= 0)
        return;
    canvas_init(&tmp, w, h, c->ascii);
    fn(&tmp, m, ctx);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            struct cell *d = canvas_at(c, x + i, y + j);
            const struct cell *s = canvas_cat(&tmp, i, j);
            if (!d || !s)
                continue;
            /* A wide character whose right half falls outside is blanked. */
            if (s->ch != CANVAS_CONT && !canvas_at(c, x + i + 1, y + j)) {
                const struct cell *r = canvas_cat(&tmp, i + 1, j);
                if (r && r->ch == CANVAS_CONT) {
                    *d = *s;
                    d->ch = ' ';
                    continue;
                }
            }
            if (s->ch == CANVAS_CONT && !canvas_at(c, x + i - 1, y + j)) {
                *d = *s;
                d->ch = ' ';
                continue;
            }
            *d = *s;
        }
    canvas_free(&tmp);
}

const cJSON *vu_get(const cJSON *o, const char *key)
{
    if (!cJSON_IsObject(o))
        return NULL;
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

double vu_num(const cJSON *o, const char *key, double def)
{
    const cJSON *v = vu_get(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

bool vu_has_num(const cJSON *o, const char *key)
{
    return cJSON_IsNumber(vu_get(o, key));
}

const char *vu_str(const cJSON *o, const char *key, const char *def)
{
    const cJSON *v = vu_get(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : def;
}

static void add(char *out, size_t outlen, size_t *pos, const char *s)
{
    while (*s && *pos + 1 < outlen) {
        char ch = *s++;
        out[(*pos)++] = (ch == '\n' || ch == '\r' || ch == '\t') ? ' ' : ch;
    }
    out[*pos] = '\0';
}

static void value_text(const cJSON *v, char *out, size_t outlen, size_t *pos, int depth)
{
    char num[64];
    if (cJSON_IsString(v)) {
        add(out, outlen, pos, v->valuestring ? v->valuestring : "");
    } else if (cJSON_IsNumber(v)) {
        snprintf(num, sizeof num, "%.15g", v->valuedouble);
        add(out, outlen, pos, num);
    } else if (cJSON_IsBool(v)) {
        add(out, outlen, pos, cJSON_IsTrue(v) ? "true" : "false");
    } else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        bool obj = cJSON_IsObject(v);
        add(out, outlen, pos, obj ? "{" : "[");
        const cJSON *it;
        bool first = true;
        if (depth < 4) {
            cJSON_ArrayForEach(it, v)
            {
                if (!first)
                    add(out, outlen, pos, ", ");
                first = false;
                if (obj && it->string) {
                    add(out, outlen, pos, it->string);
                    add(out, outlen, pos, ": ");
                }
                value_text(it, out, outlen, pos, depth + 1);
            }
        } else {
            add(out, outlen, pos, "...");
        }
        add(out, outlen, pos, obj ? "}" : "]");
    } else {
        add(out, outlen, pos, "null");
    }
}

void vu_value_text(const cJSON *v, char *out, size_t outlen)
{
    size_t pos = 0;
    if (outlen == 0)
        return;
    out[0] = '\0';
    value_text(v, out, outlen, &pos, 0);
}

bool vu_placeholder(struct canvas *c, int x, int y, int w, const struct data_slot *d)
{
    char msg[64];
    if (d->json)
        return false;
    switch (d->state) {
    case DATA_DENIED:
        snprintf(msg, sizeof msg, "needs an admin key");
        break;
    case DATA_UNSUPPORTED:
        snprintf(msg, sizeof msg, "not available from this server");
        break;
    case DATA_ERROR:
        if (d->status)
            snprintf(msg, sizeof msg, "error (HTTP %d), retrying", d->status);
        else
            snprintf(msg, sizeof msg, "unreachable, retrying");
        break;
    default:
        snprintf(msg, sizeof msg, "loading...");
        break;
    }
    canvas_text(c, x, y, w, msg,
                d->state == DATA_DENIED || d->state == DATA_ERROR ? THEME_WARN : THEME_MUTED);
    return true;
}

void vu_age(int64_t ms, char *out, size_t outlen)
{
    if (ms < 0) {
        snprintf(out, outlen, "-");
        return;
    }
    long long s = ms / 1000;
    if (s < 60)
        snprintf(out, outlen, "%llds", s);
    else if (s < 3600)
        snprintf(out, outlen, "%lldm%02llds", s / 60, s % 60);
    else if (s < 86400)
        snprintf(out, outlen, "%lldh%02lldm", s / 3600, (s / 60) % 60);
    else
        snprintf(out, outlen, "%lldd%02lldh", s / 86400, (s / 3600) % 24);
}

void vu_iso_clock(const char *iso, bool tz_local, char *out, size_t outlen)
{
    int64_t ms;
    if (iso && time_parse_iso(iso, &ms) == 0)
        view_clock(ms, tz_local, out, outlen);
    else
        snprintf(out, outlen, "-");
}

void vu_title(struct canvas *c, int x, int y, int w, const char *text)
{
    canvas_text(c, x, y, w, text, THEME_TITLE);
}

enum theme_elem vu_sev_elem(enum sev s)
{
    switch (s) {
    case SEV_CRITICAL:
        return THEME_SEV_CRITICAL;
    case SEV_HIGH:
        return THEME_SEV_HIGH;
    case SEV_MEDIUM:
        return THEME_SEV_MEDIUM;
    default:
        return THEME_SEV_LOW;
    }
}

int vu_kv(struct canvas *c, int x, int y, int maxw, const char *label, const char *value,
          enum theme_elem ve)
{
    if (maxw <= 0)
        return x;
    int n = canvas_text(c, x, y, maxw, label, THEME_MUTED);
    if (n < maxw)
        n += 1;
    if (n < maxw)
        n += canvas_text(c, x + n, y, maxw - n, value, ve);
    return x + n;
}
