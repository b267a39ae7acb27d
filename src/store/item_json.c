/*
 * item_json.c - a single-pass JSON reader for stored item bodies (see
 * item_json.h).
 *
 * Recursive descent over compact JSON.  It accepts exactly what
 * canon_write emits and refuses everything else (whitespace, odd
 * escapes, bad UTF-16), in which case the caller's text goes to cJSON's
 * own parser instead; so this file only has to be right for the common
 * form, and cJSON stays the reference for the rest.  It mirrors cJSON's
 * tree shape exactly: the first child's prev points to the last child,
 * numbers fill valueint the way cJSON_SetNumberValue does.
 */
#include "store/item_json.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct rd {
    const char *p, *end;
    int depth;
};

static cJSON *new_node(int type)
{
    cJSON *n = cJSON_malloc(sizeof(*n));
    if (n) {
        memset(n, 0, sizeof(*n));
        n->type = type;
    }
    return n;
}

static void append(cJSON *parent, cJSON **tail, cJSON *child)
{
    if (!*tail) {
        parent->child = child;
    } else {
        (*tail)->next = child;
        child->prev = *tail;
    }
    parent->child->prev = child;
    *tail = child;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0)
            return false;
        v = v << 4 | (unsigned)h;
    }
    *out = v;
    return true;
}

/*
 * Attribute names that most items carry.  A key equal to one of them
 * points at this static text (cJSON_StringIsConst) instead of a fresh
 * allocation: a 12-attribute item then costs 12 fewer malloc/free pairs.
 * Static storage is safe with every cJSON call (cJSON_Duplicate copies a
 * const key's pointer; cJSON_Delete never frees it).
 */
static const struct {
    const char *s;
    size_t n;
} COMMON_KEYS[] = {
    {"PK", 2},
    {"SK", 2},
    {"GSI1PK", 6},
    {"GSI1SK", 6},
    {"ttl", 3},
    {"productId", 9},
    {"brandId", 7},
    {"brandName", 9},
    {"timestamp", 9},
    {"ip", 2},
    {"country", 7},
    {"city", 4},
    {"userAgent", 9},
    {"result", 6},
    {"scanId", 6},
    {"fingerprint", 11},
    {"name", 4},
    {"sku", 3},
    {"category", 8},
    {"description", 11},
    {"imageUrl", 8},
    {"verificationCode", 16},
    {"hash", 4},
    {"signature", 9},
    {"status", 6},
    {"metadata", 8},
    {"createdAt", 9},
    {"updatedAt", 9},
    {"scanCount", 9},
    {"productCount", 12},
    {"threatCount", 11},
    {"type", 4},
    {"actor", 5},
    {"location", 8},
    {"coordinates", 11},
    {"data", 4},
    {"previousHash", 12},
    {"seq", 3},
    {"alertId", 7},
    {"severity", 8},
    {"details", 7},
    {"resolved", 8},
    {"source", 6},
    {"aiAnalysis", 10},
    {"anomalyFlags", 12},
    {"count", 5},
    {"lastSeen", 8},
    {"claimed", 7},
    {"claimedAt", 9},
    {"consumerName", 12},
    {"email", 5},
    {"id", 2},
    {"domain", 6},
    {"industry", 8},
    {"logoUrl", 7},
    {"plan", 4},
    {"events", 6},
    {"url", 3},
    {"active", 6},
    {"lastTriggered", 13},
    {"deliveryCount", 13},
    {"agent", 5},
    {"trigger", 7},
    {"geminiModel", 11},
    {"aiSeverity", 10},
    {"aiAttackVector", 14},
    {"aiConfidence", 12},
    {"latencyMs", 9},
    {"action", 6},
    {"simulated", 9},
    {"registeredBy", 12},
};

/* COMMON_KEYS by length: 1-based indices, 0-terminated.  Keep it in step
 * with the table above (the assertion below notices a new entry; a key
 * left out here is merely not interned). */
#define COMMON_KEY_LEN_MAX 16
static const unsigned char COMMON_BY_LEN[COMMON_KEY_LEN_MAX + 1][12] = {
    {0},
    {0},
    {1, 2, 10, 52},
    {5, 18, 38, 58},
    {12, 17, 23, 32, 36, 56},
    {33, 46, 51, 62},
    {3, 4, 14, 15, 25, 43, 53, 57, 59, 69},
    {7, 11, 39, 41, 48, 55, 63},
    {19, 21, 26, 34, 40, 42, 47, 54},
    {6, 8, 9, 13, 24, 27, 28, 29, 49, 68, 70},
    {44, 65},
    {16, 20, 31, 35, 64},
    {30, 37, 45, 50, 67, 71},
    {60, 61},
    {66},
    {0},
    {22},
};

_Static_assert(sizeof COMMON_KEYS / sizeof COMMON_KEYS[0] == 71, "update COMMON_BY_LEN");

/* The interned copy of the unescaped key s[0..n), or NULL.  Only the
 * entries of the same length are compared, first byte first. */
static const char *common_key(const char *s, size_t n)
{
    if (n == 0 || n > COMMON_KEY_LEN_MAX)
        return NULL;
    for (const unsigned char *i = COMMON_BY_LEN[n]; *i; i++) {
        const char *k = COMMON_KEYS[*i - 1].s;
        if (k[0] == s[0] && memcmp(k + 1, s + 1, n - 1) == 0)
            return k;
    }
    return NULL;
}

/* Bytes that end the plain run of a string: quote, backslash, controls. */
static const bool STR_SPECIAL[256] = {
    /* 0x00-0x7f; 0x80-0xff are all ordinary (zero) */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/*
 * The end of the plain run starting at q: the first quote, backslash or
 * control byte, or end.  Eight bytes at a time: per byte lane, the usual
 * "has a zero byte" test on x ^ '"' and x ^ '\\', and "is below 0x20" on
 * x itself.  A borrow can only flag lanes above a real match, so the
 * lowest flagged lane (the first byte in memory) is always a real one.
 */
static const char *plain_end(const char *q, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    while (end - q >= 8) {
        uint64_t x, qt, bs, t;
        memcpy(&x, q, 8);
        qt = x ^ (ones * '"');
        bs = x ^ (ones * '\\');
        t = ((qt - ones) & ~qt) | ((bs - ones) & ~bs) | ((x - ones * 0x20) & ~x);
        t &= highs;
        if (t)
            return q + (__builtin_ctzll(t) >> 3);
        q += 8;
    }
#endif
    while (q < end && !STR_SPECIAL[(unsigned char)*q])
        q++;
    return q;
}

/* Reads a string at r->p (on the opening quote) into a new cJSON_malloc'd
 * C string; NULL on anything unexpected. */
static char *read_string(struct rd *r)
{
    const char *s = ++r->p, *q = s;
    bool esc = false;
    char *out, *o;
    for (;;) {
        q = plain_end(q, r->end);
        if (q >= r->end || (unsigned char)*q < 0x20)
            return NULL;
        if (*q == '"')
            break;
        esc = true; /* a backslash: skip the escaped byte */
        q += 2;
    }
    /* Escapes only ever shrink the text, so q - s bytes suffice. */
    out = cJSON_malloc((size_t)(q - s) + 1);
    if (!out)
        return NULL;
    if (!esc) {
        memcpy(out, s, (size_t)(q - s));
        out[q - s] = '\0';
        r->p = q + 1;
        return out;
    }
    o = out;
    for (const char *p = s; p < q; p++) {
        unsigned cp, lo;
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        p++;
        switch (*p) {
        case '"':
            *o++ = '"';
            break;
        case '\\':
            *o++ = '\\';
            break;
        case '/':
            *o++ = '/';
            break;
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'n':
            *o++ = '\n';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 't':
            *o++ = '\t';
            break;
        case 'u':
            if (q - p < 5 || !hex4(p + 1, &cp))
                goto fail;
            p += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff)
                goto fail;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (q - p < 7 || p[1] != '\\' || p[2] != 'u' || !hex4(p + 3, &lo) || lo < 0xdc00 ||
                    lo > 0xdfff)
                    goto fail;
                p += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (cp == 0)
                goto fail; /* cJSON would end the string here */
            if (cp < 0x80) {
                *o++ = (char)cp;
            } else if (cp < 0x800) {
                *o++ = (char)(0xc0 | cp >> 6);
                *o++ = (char)(0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                *o++ = (char)(0xe0 | cp >> 12);
                *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
                *o++ = (char)(0x80 | (cp & 0x3f));
            } else {
                *o++ = (char)(0xf0 | cp >> 18);
                *o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
                *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
                *o++ = (char)(0x80 | (cp & 0x3f));
            }
            break;
        default:
            goto fail;
        }
    }
    *o = '\0';
    r->p = q + 1;
    return out;
fail:
    cJSON_free(out);
    return NULL;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A JSON number; plain integers of up to 15 digits skip strtod. */
static cJSON *read_number(struct rd *r)
{
    const char *s = r->p, *p = s;
    bool neg = false, plain = true;
    double d;
    cJSON *n;
    if (*p == '-') {
        neg = true;
        p++;
    }
    if (p >= r->end || !is_digit(*p))
        return NULL;
    if (*p == '0' && p + 1 < r->end && is_digit(p[1]))
        return NULL;
    while (p < r->end && is_digit(*p))
        p++;
    if (p < r->end && *p == '.') {
        plain = false;
        if (++p >= r->end || !is_digit(*p))
            return NULL;
        while (p < r->end && is_digit(*p))
            p++;
    }
    if (p < r->end && (*p == 'e' || *p == 'E')) {
        plain = false;
        p++;
        if (p < r->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= r->end || !is_digit(*p))
            return NULL;
        while (p < r->end && is_digit(*p))
            p++;
    }
    if (plain && p - s - neg <= 15) {
        int64_t v = 0;
        for (const char *q = s + neg; q < p; q++)
            v = v * 10 + (*q - '0');
        d = neg ? -(double)v : (double)v;
        if (neg && v == 0)
            d = -0.0;
    } else {
        char tmp[64], *endp;
        if (p - s >= (long)sizeof(tmp))
            return NULL;
        memcpy(tmp, s, (size_t)(p - s));
        tmp[p - s] = '\0';
        d = strtod(tmp, &endp);
        if (*endp)
            return NULL; /* a locale with another decimal point */
    }
    n = new_node(cJSON_Number);
    if (!n)
        return NULL;
    n->valuedouble = d;
    if (d >= INT_MAX)
        n->valueint = INT_MAX;
    else if (d <= (double)INT_MIN)
        n->valueint = INT_MIN;
    else
        n->valueint = (int)d;
    r->p = p;
    return n;
}

static bool lit(struct rd *r, const char *word, size_t n)
{
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return false;
    r->p += n;
    return true;
}

static cJSON *read_value(struct rd *r);

static cJSON *read_container(struct rd *r, bool object)
{
    cJSON *c, *tail = NULL;
    char close = object ? '}' : ']';
    if (++r->depth > CJSON_NESTING_LIMIT)
        return NULL;
    c = new_node(object ? cJSON_Object : cJSON_Array);
    if (!c)
        return NULL;
    r->p++;
    if (r->p < r->end && *r->p == close) {
        r->p++;
        r->depth--;
        return c;
    }
    for (;;) {
        char *key = NULL;
        cJSON *v;
        if (object) {
            if (r->p >= r->end || *r->p != '"')
                goto fail;
            /* A short key without escapes may be a common one. */
            const char *k0 = r->p + 1, *kq = k0;
            while (kq < r->end && kq - k0 <= 16 && !STR_SPECIAL[(unsigned char)*kq])
                kq++;
            const char *ck = kq < r->end && *kq == '"' ? common_key(k0, (size_t)(kq - k0)) : NULL;
            if (ck) {
                r->p = kq + 1;
            } else {
                key = read_string(r);
                if (!key)
                    goto fail;
            }
            if (r->p >= r->end || *r->p != ':') {
                cJSON_free(key);
                goto fail;
            }
            r->p++;
            v = read_value(r);
            if (!v) {
                cJSON_free(key);
                goto fail;
            }
            if (ck) {
                v->string = (char *)ck;
                v->type |= cJSON_StringIsConst;
            } else {
                v->string = key;
            }
        } else {
            v = read_value(r);
            if (!v)
                goto fail;
        }
        append(c, &tail, v);
        if (r->p >= r->end)
            goto fail;
        if (*r->p == ',') {
            r->p++;
            continue;
        }
        if (*r->p != close)
            goto fail;
        r->p++;
        r->depth--;
        return c;
    }
fail:
    cJSON_Delete(c);
    return NULL;
}

static cJSON *read_value(struct rd *r)
{
    cJSON *n = NULL;
    char *s;
    if (r->p >= r->end)
        return NULL;
    switch (*r->p) {
    case '{':
        return read_container(r, true);
    case '[':
        return read_container(r, false);
    case '"':
        s = read_string(r);
        if (!s)
            return NULL;
        n = new_node(cJSON_String);
        if (!n) {
            cJSON_free(s);
            return NULL;
        }
        n->valuestring = s;
        return n;
    case 't':
        return lit(r, "true", 4) ? new_node(cJSON_True) : NULL;
    case 'f':
        return lit(r, "false", 5) ? new_node(cJSON_False) : NULL;
    case 'n':
        return lit(r, "null", 4) ? new_node(cJSON_NULL) : NULL;
    default:
        return read_number(r);
    }
}

cJSON *item_json_parse(const char *text, size_t len)
{
    struct rd r = {text, text + len, 0};
    cJSON *v = read_value(&r);
    if (v && r.p == r.end)
        return v;
    cJSON_Delete(v);
    return cJSON_ParseWithLength(text, len);
}

/* Moves r->p past one JSON value without building it; false when the
 * text is not what canon_write produces. */
static bool skip_value(struct rd *r)
{
    int depth = 0;
    do {
        if (r->p >= r->end)
            return false;
        char c = *r->p;
        if (c == '"') {
            for (r->p++; r->p < r->end && *r->p != '"'; r->p++)
                if (*r->p == '\\')
                    r->p++;
            if (r->p >= r->end)
                return false;
            r->p++;
        } else if (c == '{' || c == '[') {
            depth++;
            r->p++;
        } else if (c == '}' || c == ']') {
            if (--depth < 0)
                return false;
            r->p++;
        } else if (c == ',' || c == ':') {
            if (depth == 0)
                return false;
            r->p++;
        } else {
            /* number or literal: up to the next delimiter */
            const char *s = r->p;
            while (r->p < r->end && *r->p != ',' && *r->p != '}' && *r->p != ']' && *r->p != ':')
                r->p++;
            if (r->p == s)
                return false;
        }
    } while (depth > 0);
    return true;
}

static bool wanted(const char *k, size_t kn, const char *const *attrs, size_t n)
{
    if ((kn == 2 && (memcmp(k, "PK", 2) == 0 || memcmp(k, "SK", 2) == 0)))
        return true;
    for (size_t i = 0; i < n; i++)
        if (strlen(attrs[i]) == kn && memcmp(attrs[i], k, kn) == 0)
            return true;
    return false;
}

cJSON *item_json_project(const char *text, size_t len, const char *const *attrs, size_t n)
{
    struct rd r = {text, text + len, 0};
    cJSON *obj, *tail = NULL;

    if (len < 2 || text[0] != '{')
        goto slow;
    obj = new_node(cJSON_Object);
    if (!obj)
        return NULL;
    r.p++;
    if (r.p < r.end && *r.p == '}' && r.p + 1 == r.end)
        return obj;
    for (;;) {
        /* key: plain text only (canonical keys of stored items); anything
         * else takes the slow path */
        if (r.p >= r.end || *r.p != '"')
            goto fail;
        const char *k0 = r.p + 1, *kq = k0;
        while (kq < r.end && !STR_SPECIAL[(unsigned char)*kq])
            kq++;
        if (kq >= r.end || *kq != '"' || kq + 1 >= r.end || kq[1] != ':')
            goto fail;
        r.p = kq + 2;
        if (wanted(k0, (size_t)(kq - k0), attrs, n)) {
            cJSON *v = read_value(&r);
            if (!v)
                goto fail;
            const char *ck = common_key(k0, (size_t)(kq - k0));
            if (ck) {
                v->string = (char *)ck;
                v->type |= cJSON_StringIsConst;
            } else {
                v->string = cJSON_malloc((size_t)(kq - k0) + 1);
                if (!v->string) {
                    cJSON_Delete(v);
                    goto fail;
                }
                memcpy(v->string, k0, (size_t)(kq - k0));
                v->string[kq - k0] = '\0';
            }
            append(obj, &tail, v);
        } else if (!skip_value(&r)) {
            goto fail;
        }
        if (r.p >= r.end)
            goto fail;
        if (*r.p == ',') {
            r.p++;
            continue;
        }
        if (*r.p == '}' && r.p + 1 == r.end)
            return obj;
        goto fail;
    }
fail:
    cJSON_Delete(obj);
slow:
    /* Unexpected text: parse it all and keep the wanted members. */
    obj = item_json_parse(text, len);
    if (!cJSON_IsObject(obj)) {
        cJSON_Delete(obj);
        return NULL;
    }
    for (cJSON *m = obj->child, *next; m; m = next) {
        next = m->next;
        if (!m->string || !wanted(m->string, strlen(m->string), attrs, n))
            cJSON_Delete(cJSON_DetachItemViaPointer(obj, m));
    }
    return obj;
}

/* The slow path of item_json_attr_str: the projected tree. */
static int attr_str_slow(const char *text, size_t len, const char *attr, const char **val,
                         size_t *vlen, char **scratch)
{
    cJSON *obj = item_json_project(text, len, &attr, 1);
    const cJSON *v;
    int rc = 0;

    if (!obj)
        return -1;
    v = cJSON_GetObjectItemCaseSensitive(obj, attr);
    if (cJSON_IsString(v)) {
        size_t n = strlen(v->valuestring);
        *scratch = cJSON_malloc(n + 1);
        if (!*scratch) {
            rc = -1;
        } else {
            memcpy(*scratch, v->valuestring, n + 1);
            *val = *scratch;
            *vlen = n;
            rc = 1;
        }
    }
    cJSON_Delete(obj);
    return rc;
}

int item_json_attr_str(const char *text, size_t len, const char *attr, const char **val,
                       size_t *vlen, char **scratch)
{
    struct rd r = {text, text + len, 0};
    size_t an = strlen(attr);

    *val = NULL;
    *vlen = 0;
    *scratch = NULL;
    if (len < 2 || text[0] != '{')
        goto slow;
    r.p++;
    if (*r.p == '}' && r.p + 1 == r.end)
        return 0;
    for (;;) {
        if (r.p >= r.end || *r.p != '"')
            goto slow;
        const char *k0 = r.p + 1, *kq = k0;
        while (kq < r.end && !STR_SPECIAL[(unsigned char)*kq])
            kq++;
        if (kq >= r.end || *kq != '"' || kq + 1 >= r.end || kq[1] != ':')
            goto slow;
        r.p = kq + 2;
        if ((size_t)(kq - k0) == an && memcmp(k0, attr, an) == 0) {
            if (r.p < r.end && *r.p == '"') {
                const char *s = r.p + 1, *q = s;
                while (q < r.end && !STR_SPECIAL[(unsigned char)*q])
                    q++;
                if (q >= r.end || *q != '"')
                    goto slow; /* escapes or controls: let the parser judge */
                *val = s;
                *vlen = (size_t)(q - s);
                return 1;
            }
            /* The first member of that name decides (as cJSON's lookup
             * does); the rest of the body is not looked at. */
            if (!skip_value(&r))
                goto slow;
            return 0;
        }
        if (!skip_value(&r) || r.p >= r.end)
            goto slow;
        if (*r.p == ',') {
            r.p++;
            continue;
        }
        if (*r.p == '}' && r.p + 1 == r.end)
            return 0;
        goto slow;
    }
slow:
    *val = NULL;
    *vlen = 0;
    return attr_str_slow(text, len, attr, val, vlen, scratch);
}
