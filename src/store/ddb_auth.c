/*
 * ddb_auth.c - Signature Version 4 and AWS credentials (see ddb_auth.h).
 *
 * The signer follows AWS's four steps: a canonical request (method, path,
 * sorted query, lowercased sorted headers, signed-header list, payload
 * hash), a string to sign over its hash and the credential scope, a key
 * derived by chained HMACs from the secret, date, region and service, and
 * the HMAC of the string under that key.  The credentials file parser
 * treats its input as hostile: long lines and values are refused, not
 * truncated.
 */
#include "store/ddb_auth.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/crypto.h"
#include "util/buf.h"
#include "util/err.h"

/* Bounds of what one request may sign. */
#define SIG_HEADERS_MAX 32
#define SIG_QUERY_MAX   64
#define SIG_TEXT_MAX    (64 * 1024)

struct qparam {
    const char *k, *v;
    size_t kn, vn;
};

static int qparam_cmp(const void *a, const void *b)
{
    const struct qparam *x = a, *y = b;
    size_t n = x->kn < y->kn ? x->kn : y->kn;
    int c = memcmp(x->k, y->k, n);
    if (c)
        return c;
    if (x->kn != y->kn)
        return x->kn < y->kn ? -1 : 1;
    n = x->vn < y->vn ? x->vn : y->vn;
    c = memcmp(x->v, y->v, n);
    if (c)
        return c;
    return x->vn < y->vn ? -1 : x->vn > y->vn;
}

/* Appends the query's parameters sorted by name, then value. */
static int put_query(struct buf *b, const char *q)
{
    struct qparam p[SIG_QUERY_MAX];
    size_t n = 0;
    int rc = 0;
    while (q && *q) {
        const char *amp = strchr(q, '&');
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        const char *eq = memchr(q, '=', len);
        if (len) {
            if (n == SIG_QUERY_MAX)
                return ERR_TOOBIG;
            p[n].k = q;
            p[n].kn = eq ? (size_t)(eq - q) : len;
            p[n].v = eq ? eq + 1 : q + len;
            p[n].vn = eq ? len - p[n].kn - 1 : 0;
            n++;
        }
        q = amp ? amp + 1 : q + len;
    }
    qsort(p, n, sizeof(p[0]), qparam_cmp);
    for (size_t i = 0; !rc && i < n; i++) {
        if (i)
            rc = buf_putc(b, '&');
        if (!rc)
            rc = buf_append(b, p[i].k, p[i].kn);
        if (!rc)
            rc = buf_putc(b, '=');
        if (!rc)
            rc = buf_append(b, p[i].v, p[i].vn);
    }
    return rc;
}

struct hdr {
    char name[64];
    const char *v;
    size_t vn;
};

static int hdr_cmp(const void *a, const void *b)
{
    return strcmp(((const struct hdr *)a)->name, ((const struct hdr *)b)->name);
}

static void hex32(const unsigned char d[32], char out[65])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hx[d[i] >> 4];
        out[2 * i + 1] = hx[d[i] & 15];
    }
    out[64] = '\0';
}

int sigv4_authorization(const char *method, const char *path, const char *query,
                        const struct sigv4_header *hdrs, size_t nhdrs, const void *payload,
                        size_t plen, const char *amz_date, const char *region, const char *service,
                        const struct ddb_creds *cr, char *out, size_t outlen)
{
    struct hdr h[SIG_HEADERS_MAX];
    struct buf creq = BUF_INIT(SIG_TEXT_MAX), signed_names = BUF_INIT(4096), sts = BUF_INIT(4096);
    unsigned char digest[32], k[32];
    char hexs[65], date8[9], keybuf[160];
    int rc = 0, w;
    if (nhdrs > SIG_HEADERS_MAX)
        return ERR_INVALID;
    if (!amz_date || strlen(amz_date) != 16 || amz_date[8] != 'T' || amz_date[15] != 'Z')
        return ERR_INVALID;
    memcpy(date8, amz_date, 8);
    date8[8] = '\0';
    for (size_t i = 0; i < nhdrs; i++) {
        size_t nl = strlen(hdrs[i].name), j;
        const char *v = hdrs[i].value, *e;
        if (nl == 0 || nl >= sizeof(h[i].name))
            return ERR_INVALID;
        for (j = 0; j < nl; j++)
            h[i].name[j] = (char)tolower((unsigned char)hdrs[i].name[j]);
        h[i].name[nl] = '\0';
        while (*v == ' ' || *v == '\t')
            v++;
        e = v + strlen(v);
        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        h[i].v = v;
        h[i].vn = (size_t)(e - v);
    }
    qsort(h, nhdrs, sizeof(h[0]), hdr_cmp);

    /* 1. canonical request */
    rc = buf_printf(&creq, "%s\n%s\n", method, path && *path ? path : "/");
    if (!rc)
        rc = put_query(&creq, query);
    if (!rc)
        rc = buf_putc(&creq, '\n');
    for (size_t i = 0; !rc && i < nhdrs; i++) {
        rc = buf_printf(&creq, "%s:%.*s\n", h[i].name, (int)h[i].vn, h[i].v);
        if (!rc && i)
            rc = buf_putc(&signed_names, ';');
        if (!rc)
            rc = buf_puts(&signed_names, h[i].name);
    }
    crypto_sha256(payload ? payload : "", payload ? plen : 0, digest);
    hex32(digest, hexs);
    if (!rc)
        rc = buf_printf(&creq, "\n%s\n%s", buf_cstr(&signed_names), hexs);
    if (rc)
        goto out;

    /* 2. string to sign */
    crypto_sha256(creq.data, creq.len, digest);
    hex32(digest, hexs);
    rc = buf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", amz_date, date8,
                    region, service, hexs);
    if (rc)
        goto out;

    /* 3. signing key */
    w = snprintf(keybuf, sizeof(keybuf), "AWS4%s", cr->secret);
    if (w < 0 || (size_t)w >= sizeof(keybuf)) {
        rc = ERR_TOOBIG;
        goto out;
    }
    crypto_hmac_sha256(keybuf, (size_t)w, date8, 8, k);
    crypto_hmac_sha256(k, 32, region, strlen(region), k);
    crypto_hmac_sha256(k, 32, service, strlen(service), k);
    crypto_hmac_sha256(k, 32, "aws4_request", 12, k);

    /* 4. signature */
    crypto_hmac_sha256(k, 32, sts.data, sts.len, digest);
    hex32(digest, hexs);
    w = snprintf(out, outlen,
                 "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, "
                 "Signature=%s",
                 cr->key_id, date8, region, service, buf_cstr(&signed_names), hexs);
    if (w < 0 || (size_t)w >= outlen)
        rc = ERR_TOOBIG;
out:
    memset(keybuf, 0, sizeof(keybuf));
    memset(k, 0, sizeof(k));
    buf_free(&creq);
    buf_free(&signed_names);
    buf_free(&sts);
    return rc;
}

/* ---------- credentials ---------- */

/* Copies [s, e) trimmed into dst; ERR_INVALID when it does not fit. */
static int copy_trim(char *dst, size_t cap, const char *s, const char *e)
{
    while (s < e && isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    if ((size_t)(e - s) >= cap)
        return ERR_INVALID;
    memcpy(dst, s, (size_t)(e - s));
    dst[e - s] = '\0';
    return 0;
}

int ddb_creds_parse(const char *text, size_t len, const char *profile, struct ddb_creds *out)
{
    const char *p = text, *end = text + len;
    bool in = false;
    char name[130], key[64];
    int rc = 0;
    memset(out, 0, sizeof(*out));
    if (!profile || !*profile)
        profile = "default";
    while (p < end && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end, *s = p, *eq;
        p = nl ? nl + 1 : end;
        while (s < le && isspace((unsigned char)*s))
            s++;
        if (s == le || *s == '#' || *s == ';')
            continue;
        if (*s == '[') {
            const char *cb = memchr(s, ']', (size_t)(le - s));
            if (!cb || copy_trim(name, sizeof(name), s + 1, cb)) {
                in = false;
                continue;
            }
            /* Some tools write "[profile x]" here too. */
            in = !strcmp(name, profile) ||
                 (!strncmp(name, "profile ", 8) && !strcmp(name + 8, profile));
            continue;
        }
        if (!in)
            continue;
        eq = memchr(s, '=', (size_t)(le - s));
        if (!eq || copy_trim(key, sizeof(key), s, eq))
            continue;
        if (!strcmp(key, "aws_access_key_id"))
            rc = copy_trim(out->key_id, sizeof(out->key_id), eq + 1, le);
        else if (!strcmp(key, "aws_secret_access_key"))
            rc = copy_trim(out->secret, sizeof(out->secret), eq + 1, le);
        else if (!strcmp(key, "aws_session_token"))
            rc = copy_trim(out->token, sizeof(out->token), eq + 1, le);
    }
    if (!rc && (!out->key_id[0] || !out->secret[0]))
        rc = ERR_NOTFOUND;
    if (rc)
        memset(out, 0, sizeof(*out));
    return rc;
}

/* Reads a whole small file; ERR_TOOBIG past DDB_CREDS_FILE_MAX. */
static int read_small(const char *path, struct buf *b)
{
    char tmp[4096];
    size_t n;
    int rc = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ERR_NOTFOUND;
    while (!rc && (n = fread(tmp, 1, sizeof(tmp), f)) > 0)
        rc = buf_append(b, tmp, n);
    if (!rc && ferror(f))
        rc = ERR_IO;
    fclose(f);
    return rc;
}

int ddb_creds_load(const char *profile, struct ddb_creds *out, char *err, size_t errlen)
{
    const char *k = getenv("AWS_ACCESS_KEY_ID"), *sec = getenv("AWS_SECRET_ACCESS_KEY");
    const char *tok = getenv("AWS_SESSION_TOKEN"), *file = getenv("AWS_SHARED_CREDENTIALS_FILE");
    struct buf b = BUF_INIT(DDB_CREDS_FILE_MAX);
    char path[1024];
    int rc;
    memset(out, 0, sizeof(*out));
    if (k && *k && sec && *sec) {
        if (copy_trim(out->key_id, sizeof(out->key_id), k, k + strlen(k)) ||
            copy_trim(out->secret, sizeof(out->secret), sec, sec + strlen(sec)) ||
            (tok && copy_trim(out->token, sizeof(out->token), tok, tok + strlen(tok)))) {
            snprintf(err, errlen, "AWS credentials in the environment are too long");
            memset(out, 0, sizeof(*out));
            return ERR_INVALID;
        }
        return 0;
    }
    if (!profile || !*profile)
        profile = getenv("AWS_PROFILE");
    if (!profile || !*profile)
        profile = "default";
    if (file && *file) {
        snprintf(path, sizeof(path), "%s", file);
    } else {
        const char *home = getenv("HOME");
        snprintf(path, sizeof(path), "%s/.aws/credentials", home ? home : "");
    }
    rc = read_small(path, &b);
    if (!rc)
        rc = ddb_creds_parse(b.data ? b.data : "", b.len, profile, out);
    buf_free(&b);
    if (rc)
        snprintf(err, errlen,
                 "no AWS credentials: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or profile "
                 "'%s' in %s (%s)",
                 profile, path, err_str(rc));
    return rc;
}
