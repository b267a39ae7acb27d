/*
 * jsonw.c - streaming JSON writer (see jsonw.h).
 *
 * Response bodies and item bodies are written straight into a capped
 * struct buf, without building a cJSON tree first.  Strings and numbers go
 * through canon.c so that a response prints them exactly like the hashed
 * canonical texts and like JSON.stringify.  The writer keeps a small stack
 * of open containers to place commas and check that keys appear only in
 * objects; the first error sticks and turns later calls into no-ops.
 */
#include "core/jsonw.h"

#include <string.h>

#include "core/canon.h"
#include "util/err.h"

void jsonw_init(struct jsonw *w, struct buf *b)
{
    memset(w, 0, sizeof *w);
    w->b = b;
}

int jsonw_error(const struct jsonw *w)
{
    return w->err;
}

static void set_err(struct jsonw *w, int rc)
{
    if (rc && !w->err)
        w->err = rc;
}

/* True when an object is open and a key is expected next. */
static bool in_object(const struct jsonw *w)
{
    return w->depth > 0 && w->closer[w->depth - 1] == '}';
}

/*
 * Prepares for a value: checks the position and writes the separating
 * comma.  Returns false (with the error set) when nothing may be written.
 */
static bool begin_value(struct jsonw *w)
{
    if (w->err)
        return false;
    if (w->after_key) {
        w->after_key = false;
        return true;
    }
    if (in_object(w)) {
        set_err(w, ERR_INVALID);
        return false;
    }
    if (w->depth > 0) {
        if (w->need_comma[w->depth - 1]) {
            int rc = buf_putc(w->b, ',');
            if (rc) {
                set_err(w, rc);
                return false;
            }
        }
        w->need_comma[w->depth - 1] = true;
    }
    return true;
}

static void open_container(struct jsonw *w, char open, char close)
{
    if (!begin_value(w))
        return;
    if (w->depth >= JSONW_DEPTH) {
        set_err(w, ERR_TOOBIG);
        return;
    }
    set_err(w, buf_putc(w->b, open));
    w->closer[w->depth] = close;
    w->need_comma[w->depth] = false;
    w->depth++;
}

void jsonw_obj(struct jsonw *w)
{
    open_container(w, '{', '}');
}

void jsonw_arr(struct jsonw *w)
{
    open_container(w, '[', ']');
}

void jsonw_end(struct jsonw *w)
{
    if (w->err)
        return;
    if (w->depth == 0 || w->after_key) {
        set_err(w, ERR_INVALID);
        return;
    }
    w->depth--;
    set_err(w, buf_putc(w->b, w->closer[w->depth]));
}

void jsonw_key(struct jsonw *w, const char *k)
{
    int rc;

    if (w->err)
        return;
    if (!in_object(w) || w->after_key || !k) {
        set_err(w, ERR_INVALID);
        return;
    }
    rc = 0;
    if (w->need_comma[w->depth - 1])
        rc = buf_putc(w->b, ',');
    if (!rc)
        rc = canon_cstring(w->b, k);
    if (!rc)
        rc = buf_putc(w->b, ':');
    set_err(w, rc);
    w->need_comma[w->depth - 1] = true;
    w->after_key = true;
}

void jsonw_str(struct jsonw *w, const char *s)
{
    if (!s) {
        jsonw_null(w);
        return;
    }
    jsonw_strn(w, s, strlen(s));
}

void jsonw_strn(struct jsonw *w, const char *s, size_t n)
{
    if (!begin_value(w))
        return;
    set_err(w, canon_string(w->b, s, n));
}

void jsonw_num(struct jsonw *w, double d)
{
    if (!begin_value(w))
        return;
    set_err(w, canon_number(w->b, d));
}

void jsonw_int(struct jsonw *w, int64_t v)
{
    const int64_t exact = (int64_t)1 << 53;

    if (v < -exact || v > exact) {
        jsonw_num(w, (double)v);
        return;
    }
    if (!begin_value(w))
        return;
    set_err(w, buf_printf(w->b, "%lld", (long long)v));
}

void jsonw_bool(struct jsonw *w, bool v)
{
    if (!begin_value(w))
        return;
    set_err(w, v ? buf_append(w->b, "true", 4) : buf_append(w->b, "false", 5));
}

void jsonw_null(struct jsonw *w)
{
    if (!begin_value(w))
        return;
    set_err(w, buf_append(w->b, "null", 4));
}

void jsonw_json(struct jsonw *w, const cJSON *v)
{
    if (!begin_value(w))
        return;
    set_err(w, canon_write(w->b, v));
}

void jsonw_raw(struct jsonw *w, const char *json, size_t n)
{
    if (!begin_value(w))
        return;
    set_err(w, buf_append(w->b, json, n));
}

void jsonw_kstr(struct jsonw *w, const char *k, const char *s)
{
    jsonw_key(w, k);
    jsonw_str(w, s);
}

void jsonw_knum(struct jsonw *w, const char *k, double d)
{
    jsonw_key(w, k);
    jsonw_num(w, d);
}

void jsonw_kint(struct jsonw *w, const char *k, int64_t v)
{
    jsonw_key(w, k);
    jsonw_int(w, v);
}

void jsonw_kbool(struct jsonw *w, const char *k, bool v)
{
    jsonw_key(w, k);
    jsonw_bool(w, v);
}

void jsonw_knull(struct jsonw *w, const char *k)
{
    jsonw_key(w, k);
    jsonw_null(w);
}

void jsonw_kjson(struct jsonw *w, const char *k, const cJSON *v)
{
    jsonw_key(w, k);
    jsonw_json(w, v);
}
