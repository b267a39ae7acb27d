/*
 * keys.c - builds and parses every item key (PK, SK, GSI1PK, GSI1SK).
 *
 * This is the only file that knows the textual key layout; docs/keys.md
 * lists every family and must change together with this file.  Keys sort
 * byte-wise, so timestamps come first in sort keys and sequence numbers are
 * zero-padded to a fixed width.
 *
 * Builders refuse (return NULL) a component that is NULL, empty or contains
 * '#', and a result longer than KEY_MAX-1: '#' separates components, so an
 * id with a '#' in it could alias another partition (brand "x#2026-01"
 * against brand "x"'s monthly alert bucket).
 */
#include "core/keys.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"

/* Largest event sequence that fits the 8-digit field. */
#define KEY_EVENT_SEQ_MAX 99999999u

/* True when s can be one '#'-separated key component. */
static int comp_ok(const char *s)
{
    return s && *s && !strchr(s, '#');
}

/* Like comp_ok() but the empty string is allowed (range bounds). */
static int comp_ok_or_empty(const char *s)
{
    return s && !strchr(s, '#');
}

/* snprintf into k; NULL when the text does not fit. */
__attribute__((format(printf, 2, 3))) static const char *kfmt(struct key *k, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(k->s, sizeof k->s, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof k->s)
        return NULL;
    return k->s;
}

/* The concatenation of parts[0..n) into k (what kfmt("%s%s...") gives,
 * without the format parsing: the two helpers below build most keys of
 * every request); NULL when it does not fit. */
static const char *kcat(struct key *k, const char *const *parts, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(parts[i]);
        if (l >= sizeof k->s - len)
            return NULL;
        memcpy(k->s + len, parts[i], l);
        len += l;
    }
    k->s[len] = '\0';
    return k->s;
}

/* prefix + one component. */
static const char *k1(struct key *k, const char *prefix, const char *a)
{
    if (!comp_ok(a))
        return NULL;
    return kcat(k, (const char *const[]){prefix, a}, 2);
}

/* prefix + a + "#" + b. */
static const char *k2(struct key *k, const char *prefix, const char *a, const char *b)
{
    if (!comp_ok(a) || !comp_ok(b))
        return NULL;
    return kcat(k, (const char *const[]){prefix, a, "#", b}, 4);
}

/* The first n chars of a timestamp (its month or day), checked for shape:
 * digits with '-' at offsets 4 and 7. */
static int ts_prefix(const char *ts, size_t n, char *out)
{
    if (!ts || strlen(ts) < n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = ts[i];
        int dash = (i == 4 || i == 7);
        if (dash ? c != '-' : (c < '0' || c > '9'))
            return 0;
    }
    memcpy(out, ts, n);
    out[n] = '\0';
    return 1;
}

/* ---- API.md schema (E1-E16) ---- */

const char *key_brand_pk(struct key *k, const char *brand_id)
{
    return k1(k, KEY_PFX_BRAND, brand_id);
}

const char *key_brand_index_sk(struct key *k, const char *created_at, const char *brand_id)
{
    return k2(k, KEY_PFX_BRAND, created_at, brand_id);
}

const char *key_webhook_sk(struct key *k, const char *webhook_id)
{
    return k1(k, KEY_PFX_WEBHOOK, webhook_id);
}

const char *key_integration_sk(struct key *k, const char *integration_id)
{
    return k1(k, KEY_PFX_INTEGRATION, integration_id);
}

const char *key_product_pk(struct key *k, const char *product_id)
{
    return k1(k, KEY_PFX_PRODUCT, product_id);
}

const char *key_product_gsi1sk(struct key *k, const char *created_at)
{
    return k1(k, KEY_PFX_PRODUCT, created_at);
}

const char *key_event_sk(struct key *k, const char *timestamp, const char *type, uint32_t seq)
{
    if (!comp_ok(timestamp) || !comp_ok(type) || seq > KEY_EVENT_SEQ_MAX)
        return NULL;
    return kfmt(k, "%s%s#%s#%08u", KEY_PFX_EVENT, timestamp, type, (unsigned)seq);
}

const char *key_scan_sk(struct key *k, const char *timestamp, const char *scan_id)
{
    return k2(k, KEY_PFX_SCAN, timestamp, scan_id);
}

const char *key_scan_lo(struct key *k, const char *from_ts)
{
    if (!comp_ok_or_empty(from_ts))
        return NULL;
    return kfmt(k, "%s%s", KEY_PFX_SCAN, from_ts);
}

const char *key_scan_hi(struct key *k, const char *to_ts)
{
    /* '~' sorts after '#', so SCAN#<to>#<id> stays inside the range. */
    if (!comp_ok_or_empty(to_ts))
        return NULL;
    return kfmt(k, "%s%s~", KEY_PFX_SCAN, to_ts);
}

const char *key_dispute_sk(struct key *k, const char *created_at, const char *suffix)
{
    return k2(k, KEY_PFX_DISPUTE, created_at, suffix);
}

const char *key_verify_pk(struct key *k, const char *code)
{
    return k1(k, "VERIFY#", code);
}

const char *key_hash_pk(struct key *k, const char *hash)
{
    return k1(k, "HASH#", hash);
}

const char *key_product_index_sk(struct key *k, const char *created_at, const char *product_id)
{
    return k2(k, KEY_PFX_PRODUCT, created_at, product_id);
}

const char *key_threat_pk(struct key *k, const char *brand_id, const char *timestamp)
{
    char month[8];

    if (!ts_prefix(timestamp, 7, month))
        return NULL;
    return k2(k, KEY_PFX_THREAT, brand_id, month);
}

const char *key_threat_legacy_pk(struct key *k, const char *brand_id)
{
    return k1(k, KEY_PFX_THREAT, brand_id);
}

const char *key_alert_sk(struct key *k, const char *timestamp, const char *type,
                         const char *alert_id)
{
    if (!comp_ok(timestamp) || !comp_ok(type) || !comp_ok(alert_id))
        return NULL;
    return kfmt(k, "%s%s#%s#%s", KEY_PFX_ALERT, timestamp, type, alert_id);
}

const char *key_threat_gsi1sk(struct key *k, const char *write_time, const char *alert_id)
{
    return k2(k, KEY_PFX_THREAT, write_time, alert_id);
}

const char *key_threat_gsi1sk_lo(struct key *k, const char *write_time)
{
    return k1(k, KEY_PFX_THREAT, write_time);
}

const char *key_threat_gsi1sk_hi(struct key *k)
{
    return kfmt(k, "%s~", KEY_PFX_THREAT);
}

const char *key_opslog_pk(struct key *k, const char *timestamp)
{
    char day[11];

    if (!ts_prefix(timestamp, 10, day))
        return NULL;
    return key_opslog_pk_day(k, day);
}

const char *key_opslog_pk_day(struct key *k, const char *day)
{
    return k1(k, KEY_PK_OPS_LOG_LEGACY "#", day);
}

const char *key_opslog_sk(struct key *k, const char *timestamp, const char *agent, const char *id)
{
    if (!comp_ok(timestamp) || !comp_ok(agent) || !comp_ok(id))
        return NULL;
    return kfmt(k, "%s#%s#%s", timestamp, agent, id);
}

/* ---- project key families ---- */

const char *key_apikey_pk(struct key *k, const char *key_sha256_hex)
{
    return k1(k, "APIKEY#", key_sha256_hex);
}

const char *key_ingestkey_pk(struct key *k, const char *key_sha256_hex)
{
    return k1(k, "INGESTKEY#", key_sha256_hex);
}

const char *key_idem_sk(struct key *k, const char *digest_hex)
{
    return k1(k, "IDEM#", digest_hex);
}

const char *key_alert_dedup_sk(struct key *k, const char *type, const char *window)
{
    return k2(k, KEY_PFX_ALERTKEY, type, window);
}

const char *key_product_name_sk(struct key *k, const char *name_sha256_hex)
{
    return k1(k, "PNAME#", name_sha256_hex);
}

const char *key_delivery_pk(struct key *k, const char *webhook_id)
{
    return k1(k, KEY_PFX_DELIVERY, webhook_id);
}

const char *key_delivery_sk(struct key *k, const char *timestamp, const char *delivery_id)
{
    return k2(k, "", timestamp, delivery_id);
}

const char *key_audit_pk(struct key *k, const char *timestamp)
{
    char day[11];

    if (!ts_prefix(timestamp, 10, day))
        return NULL;
    return key_audit_pk_day(k, day);
}

const char *key_audit_pk_day(struct key *k, const char *day)
{
    return k1(k, "AUDIT#", day);
}

const char *key_audit_sk(struct key *k, const char *timestamp, const char *id)
{
    return k2(k, "", timestamp, id);
}

const char *key_dlq_pk(struct key *k, const char *timestamp)
{
    char day[11];

    if (!ts_prefix(timestamp, 10, day))
        return NULL;
    return k1(k, "DLQ#", day);
}

const char *key_dlq_sk(struct key *k, const char *timestamp, uint64_t seq)
{
    if (!comp_ok(timestamp))
        return NULL;
    return kfmt(k, "%s#%020llu", timestamp, (unsigned long long)seq);
}

const char *key_lease_pk(struct key *k, const char *shard_id)
{
    return k1(k, "LEASE#", shard_id);
}

const char *key_checkpoint_pk(struct key *k, const char *reader)
{
    return k1(k, "CHECKPOINT#", reader);
}

const char *key_classify_job_pk(struct key *k, const char *alert_id)
{
    return k1(k, KEY_PFX_CLASSIFY, alert_id);
}

const char *key_classify_job_gsi1sk(struct key *k, const char *alert_time, const char *alert_id)
{
    return k2(k, "", alert_time, alert_id);
}

/* ---- parsers ---- */

const char *key_after(const char *key, const char *prefix)
{
    size_t n;

    if (!key || !prefix)
        return NULL;
    n = strlen(prefix);
    return strncmp(key, prefix, n) == 0 ? key + n : NULL;
}

/* Copies s[0..len) into out (size n) as a C string; ERR_INVALID when it
 * is empty or does not fit. */
static int copy_part(const char *s, size_t len, char *out, size_t n)
{
    if (len == 0 || len >= n)
        return ERR_INVALID;
    memcpy(out, s, len);
    out[len] = '\0';
    return 0;
}

/* Parses a whole-remainder id (no '#') after prefix. */
static int parse_id(const char *key, const char *prefix, char *id, size_t n)
{
    const char *rest = key_after(key, prefix);

    if (!rest || strchr(rest, '#'))
        return ERR_INVALID;
    return copy_part(rest, strlen(rest), id, n);
}

int key_parse_brand_pk(const char *pk, char *id, size_t n)
{
    return parse_id(pk, KEY_PFX_BRAND, id, n);
}

int key_parse_product_pk(const char *pk, char *id, size_t n)
{
    return parse_id(pk, KEY_PFX_PRODUCT, id, n);
}

/* True when s is exactly n decimal digits. */
static int all_digits(const char *s, size_t n)
{
    if (strlen(s) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
    }
    return 1;
}

/* Splits "<ts>#rest" (ts at most 24 chars); *rest is NULL when there is no
 * '#'.  ERR_INVALID for an empty or overlong ts. */
static int split_ts(const char *s, char ts[25], const char **rest)
{
    const char *h = strchr(s, '#');
    size_t len = h ? (size_t)(h - s) : strlen(s);

    *rest = h ? h + 1 : NULL;
    return copy_part(s, len, ts, 25);
}

int key_parse_event_sk(const char *sk, char ts[25], char *type, size_t tn, uint32_t *seq)
{
    const char *rest;
    const char *s = key_after(sk, KEY_PFX_EVENT);
    const char *last;
    size_t tlen;

    if (!s || split_ts(s, ts, &rest) || !rest)
        return ERR_INVALID;
    last = strrchr(rest, '#');
    if (last && all_digits(last + 1, 8)) {
        tlen = (size_t)(last - rest);
        *seq = 0;
        for (int i = 1; i <= 8; i++)
            *seq = *seq * 10 + (uint32_t)(last[i] - '0');
    } else {
        /* The original's EVENT#<ts>#<type>. */
        tlen = strlen(rest);
        *seq = 0;
    }
    return copy_part(rest, tlen, type, tn);
}

int key_parse_scan_sk(const char *sk, char ts[25])
{
    const char *rest;
    const char *s = key_after(sk, KEY_PFX_SCAN);

    if (!s || split_ts(s, ts, &rest))
        return ERR_INVALID;
    if (rest && (!*rest || strchr(rest, '#')))
        return ERR_INVALID;
    return 0;
}

/* True when s is exactly YYYY-MM. */
static int is_month(const char *s)
{
    char tmp[8];
    return strlen(s) == 7 && ts_prefix(s, 7, tmp);
}

int key_parse_threat_pk(const char *pk, char *brand, size_t n, char month[8])
{
    const char *s = key_after(pk, KEY_PFX_THREAT);
    const char *h;

    if (!s)
        return ERR_INVALID;
    h = strchr(s, '#');
    if (!h) {
        month[0] = '\0';
        return copy_part(s, strlen(s), brand, n);
    }
    if (!is_month(h + 1))
        return ERR_INVALID;
    memcpy(month, h + 1, 8);
    return copy_part(s, (size_t)(h - s), brand, n);
}

int key_parse_alert_sk(const char *sk, char ts[25], char *type, size_t tn, char *id, size_t idn)
{
    const char *rest;
    const char *s = key_after(sk, KEY_PFX_ALERT);
    const char *h;

    if (!s || split_ts(s, ts, &rest) || tn == 0 || idn == 0)
        return ERR_INVALID;
    type[0] = '\0';
    id[0] = '\0';
    if (!rest)
        return 0; /* E14: ALERT#<ts> */
    h = strchr(rest, '#');
    if (!h)
        return copy_part(rest, strlen(rest), type, tn); /* E15 */
    if (strchr(h + 1, '#'))
        return ERR_INVALID;
    if (copy_part(rest, (size_t)(h - rest), type, tn))
        return ERR_INVALID;
    return copy_part(h + 1, strlen(h + 1), id, idn);
}

int key_parse_threat_gsi1sk(const char *sk, char wt[25], char *id, size_t idn)
{
    const char *rest;
    const char *s = key_after(sk, KEY_PFX_THREAT);

    if (!s || split_ts(s, wt, &rest) || !rest || strchr(rest, '#'))
        return ERR_INVALID;
    return copy_part(rest, strlen(rest), id, idn);
}

int key_parse_opslog_pk(const char *pk, char day[11])
{
    const char *s = key_after(pk, KEY_PK_OPS_LOG_LEGACY "#");

    if (!s || strlen(s) != 10 || !ts_prefix(s, 10, day))
        return ERR_INVALID;
    return 0;
}

/* ---- families ---- */

static const struct {
    const char *prefix; /* PK prefix, or the whole PK when exact */
    int exact;
    enum key_family family;
} family_table[] = {
    {"PRODUCT#", 0, KF_PRODUCT},
    {"VERIFY#", 0, KF_VERIFY},
    {"HASH#", 0, KF_HASH},
    {"BRAND#", 0, KF_BRAND},
    {"THREAT#", 0, KF_THREAT}, /* refined below */
    {KEY_PFX_OPS_LOG_DAY, 0, KF_OPS_LOG},
    {KEY_PK_OPS_LOG_LEGACY, 1, KF_OPS_LOG_LEGACY},
    {KEY_PK_BRAND_INDEX, 1, KF_BRAND_INDEX},
    {KEY_PK_PRODUCT_INDEX, 1, KF_PRODUCT_INDEX},
    {KEY_PK_AUDIT_LOG_LEGACY, 1, KF_AUDIT_LOG},
    {"AUDIT#", 0, KF_AUDIT},
    {"APIKEY#", 0, KF_APIKEY},
    {"INGESTKEY#", 0, KF_INGESTKEY},
    {"DLQ#", 0, KF_DLQ},
    {"LEASE#", 0, KF_LEASE},
    {"DELIVERY#", 0, KF_DELIVERY},
    {"CHECKPOINT#", 0, KF_CHECKPOINT},
    {KEY_PFX_CLASSIFY, 0, KF_CLASSIFY},
};

enum key_family key_family_of(const char *pk)
{
    if (!pk)
        return KF_OTHER;
    for (size_t i = 0; i < sizeof family_table / sizeof family_table[0]; i++) {
        const char *rest;
        if (family_table[i].exact) {
            if (strcmp(pk, family_table[i].prefix) == 0)
                return family_table[i].family;
            continue;
        }
        rest = key_after(pk, family_table[i].prefix);
        if (!rest || !*rest)
            continue;
        if (family_table[i].family == KF_THREAT)
            return strchr(rest, '#') ? KF_THREAT : KF_THREAT_LEGACY;
        return family_table[i].family;
    }
    return KF_OTHER;
}

const char *key_family_pattern(enum key_family f)
{
    static const char *const patterns[KF_COUNT] = {
        [KF_PRODUCT] = "PRODUCT#<id>",
        [KF_VERIFY] = "VERIFY#<code>",
        [KF_HASH] = "HASH#<hash>",
        [KF_BRAND] = "BRAND#<id>",
        [KF_THREAT] = "THREAT#<brand>#<YYYY-MM>",
        [KF_THREAT_LEGACY] = "THREAT#<brand>",
        [KF_OPS_LOG] = "OPS_LOG#<YYYY-MM-DD>",
        [KF_OPS_LOG_LEGACY] = "OPS_LOG",
        [KF_BRAND_INDEX] = "BRAND_INDEX",
        [KF_PRODUCT_INDEX] = "PRODUCT_INDEX",
        [KF_AUDIT_LOG] = "AUDIT_LOG",
        [KF_AUDIT] = "AUDIT#<YYYY-MM-DD>",
        [KF_APIKEY] = "APIKEY#<sha256>",
        [KF_INGESTKEY] = "INGESTKEY#<sha256>",
        [KF_DLQ] = "DLQ#<YYYY-MM-DD>",
        [KF_LEASE] = "LEASE#<shardId>",
        [KF_DELIVERY] = "DELIVERY#<webhookId>",
        [KF_CHECKPOINT] = "CHECKPOINT#<reader>",
        [KF_CLASSIFY] = "CLASSIFY#<alertId>",
        [KF_OTHER] = "other",
    };

    if ((int)f < 0 || f >= KF_COUNT)
        return "other";
    return patterns[f];
}

bool key_stream_keys_only(const char *pk, const char *sk)
{
    if (!pk || !sk)
        return false;
    if (!strncmp(pk, KEY_PFX_OPS_LOG_DAY, sizeof(KEY_PFX_OPS_LOG_DAY) - 1))
        return true;
    return !strcmp(sk, KEY_SK_DETSTATE) ||
           !strncmp(sk, KEY_PFX_ALERTKEY, sizeof(KEY_PFX_ALERTKEY) - 1);
}
