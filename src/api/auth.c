/*
 * auth.c - credentials and server-side secret files (auth.h).
 *
 * The request path costs one SHA-256 and, for non-admin keys, one store
 * get of the APIKEY#/INGESTKEY# item.  The admin key is recognised from
 * its hash held in memory, so only the currently configured admin key
 * works even if older admin items linger in the store.
 */
#include "api/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/crypto.h"
#include "core/ids.h"
#include "core/keys.h"
#include "store/store.h"
#include "util/err.h"
#include "util/fsync_dir.h"
#include "util/log.h"

void auth_key_hash(const char *key, char out[65])
{
    crypto_sha256_hex(key, strlen(key), out);
}

void auth_key_generate(const char *prefix, char *out, size_t n)
{
    unsigned char raw[32];
    char hex[65];
    ids_random(raw, sizeof raw);
    ids_hex(raw, sizeof raw, hex);
    snprintf(out, n, "%s%s", prefix, hex);
    memset(raw, 0, sizeof raw);
}

bool auth_key_wellformed(const char *key)
{
    if (!key)
        return false;
    size_t n = strlen(key);
    if (n == 0 || n > AUTH_KEY_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)key[i] <= 0x20 || (unsigned char)key[i] >= 0x7f)
            return false;
    return true;
}

int auth_parse_bearer(const char *header, char *out, size_t n)
{
    if (!header || n == 0)
        return ERR_INVALID;
    while (*header == ' ' || *header == '\t')
        header++;
    if (strncasecmp(header, "Bearer", 6) || (header[6] != ' ' && header[6] != '\t'))
        return ERR_INVALID;
    const char *k = header + 7;
    while (*k == ' ' || *k == '\t')
        k++;
    size_t len = strlen(k);
    while (len && (k[len - 1] == ' ' || k[len - 1] == '\t'))
        len--;
    if (len == 0 || len > AUTH_KEY_MAX || len >= n)
        return ERR_INVALID;
    memcpy(out, k, len);
    out[len] = '\0';
    return auth_key_wellformed(out) ? 0 : ERR_INVALID;
}

/* Copies a string attribute into out; false when absent, not a string
 * or too long. */
static bool str_attr(const cJSON *item, const char *name, char *out, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    if (!cJSON_IsString(v) || !v->valuestring || !v->valuestring[0] || strlen(v->valuestring) >= n)
        return false;
    memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
    return true;
}

/* A revoked/deactivated key item ("active": false or "revoked": true). */
static bool item_disabled(const cJSON *item)
{
    return cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(item, "active")) ||
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "revoked"));
}

int auth_resolve_bearer(struct store *s, const char *admin_hash, const char *key,
                        struct api_principal *who)
{
    char hash[65];
    struct key k;
    cJSON *item = NULL;
    int rc;
    memset(who, 0, sizeof *who);
    if (!auth_key_wellformed(key))
        return ERR_NOTFOUND;
    auth_key_hash(key, hash);
    if (admin_hash && admin_hash[0] && crypto_ct_streq(hash, admin_hash)) {
        who->kind = API_PRINCIPAL_ADMIN;
        return 0;
    }
    if (!key_apikey_pk(&k, hash))
        return ERR_NOTFOUND;
    rc = store_get(s, k.s, KEY_SK_META, true, &item);
    if (rc)
        goto out;
    char role[16];
    rc = ERR_NOTFOUND;
    if (!str_attr(item, "role", role, sizeof role) || item_disabled(item))
        goto out;
    if (!strcmp(role, "brand") && str_attr(item, "brandId", who->brand_id, sizeof who->brand_id)) {
        who->kind = API_PRINCIPAL_BRAND;
        rc = 0;
    }
out:
    if (rc)
        memset(who, 0, sizeof *who);
    cJSON_Delete(item);
    return rc;
}

int auth_resolve_ingest(struct store *s, const char *key, struct api_principal *who)
{
    char hash[65];
    struct key k;
    cJSON *item = NULL;
    int rc;
    memset(who, 0, sizeof *who);
    if (!auth_key_wellformed(key))
        return ERR_NOTFOUND;
    auth_key_hash(key, hash);
    if (!key_ingestkey_pk(&k, hash))
        return ERR_NOTFOUND;
    rc = store_get(s, k.s, KEY_SK_META, true, &item);
    if (rc)
        goto out;
    rc = ERR_NOTFOUND;
    if (item_disabled(item) || !str_attr(item, "brandId", who->brand_id, sizeof who->brand_id) ||
        !str_attr(item, "integrationId", who->integration_id, sizeof who->integration_id))
        goto out;
    who->kind = API_PRINCIPAL_INGEST;
    rc = 0;
out:
    if (rc)
        memset(who, 0, sizeof *who);
    cJSON_Delete(item);
    return rc;
}

cJSON *auth_key_item_new(const char *key_hash, const char *role, const char *brand_id,
                         const char *created_at)
{
    struct key k;
    if (!key_apikey_pk(&k, key_hash))
        return NULL;
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "PK", k.s);
    cJSON_AddStringToObject(item, "SK", KEY_SK_META);
    cJSON_AddStringToObject(item, "role", role);
    if (brand_id)
        cJSON_AddStringToObject(item, "brandId", brand_id);
    else
        cJSON_AddNullToObject(item, "brandId");
    cJSON_AddStringToObject(item, "createdAt", created_at);
    return item;
}

int auth_store_key(struct store *s, const char *key_hash, const char *role, const char *brand_id,
                   const char *created_at)
{
    cJSON *item = auth_key_item_new(key_hash, role, brand_id, created_at);
    if (!item)
        return ERR_INVALID;
    int rc = store_put(s, item, NULL);
    cJSON_Delete(item);
    return rc;
}

/* Reads at most n-1 bytes of a small file into out, trailing whitespace
 * removed.  Returns 0, ERR_NOTFOUND when missing, ERR_IO otherwise. */
static int read_small_file(const char *path, char *out, size_t n, mode_t *mode)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? ERR_NOTFOUND : ERR_IO;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        rc = ERR_IO;
        goto out;
    }
    *mode = st.st_mode;
    ssize_t got = read(fd, out, n - 1);
    if (got < 0) {
        rc = ERR_IO;
        goto out;
    }
    out[got] = '\0';
    while (got > 0 && (out[got - 1] == '\n' || out[got - 1] == '\r' || out[got - 1] == ' '))
        out[--got] = '\0';
out:
    close(fd);
    return rc;
}

/* Creates path exclusively with mode 0600 and writes text + "\n".
 * Returns 0, ERR_CONFLICT when it already exists, ERR_IO otherwise. */
static int write_secret_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return errno == EEXIST ? ERR_CONFLICT : ERR_IO;
    int rc = 0;
    size_t n = strlen(text);
    if (fchmod(fd, 0600) || write(fd, text, n) != (ssize_t)n || write(fd, "\n", 1) != 1 ||
        fsync(fd))
        rc = ERR_IO;
    if (close(fd))
        rc = ERR_IO;
    if (rc)
        unlink(path);
    else if (fsync_parent_dir(path))
        /* the key is written and synced; only its name may not survive a
         * power cut yet (the next sync of the directory settles it) */
        log_warn("secret file %s: fsync of its directory failed: %s", path, strerror(errno));
    return rc;
}

static void warn_mode(const char *path, mode_t mode)
{
    if (mode & 077)
        log_warn("secret file %s is readable by group/others (mode %03o); chmod 600 it", path,
                 (unsigned)(mode & 0777));
}

int auth_admin_setup(struct store *s, const char *env_key, const char *key_path,
                     const char *now_iso, char hash_out[65], bool *generated, char *err,
                     size_t errlen)
{
    char key[AUTH_KEY_MAX + 2];
    int rc = 0;
    *generated = false;
    if (env_key) {
        if (!auth_key_wellformed(env_key) || strlen(env_key) < AUTH_ADMIN_MIN) {
            snprintf(err, errlen,
                     "GENUPROOF_ADMIN_KEY must be %d..%d printable characters without spaces",
                     AUTH_ADMIN_MIN, AUTH_KEY_MAX);
            return ERR_INVALID;
        }
        snprintf(key, sizeof key, "%s", env_key);
    } else {
        mode_t mode = 0;
        rc = read_small_file(key_path, key, sizeof key, &mode);
        if (rc == ERR_NOTFOUND) {
            auth_key_generate(AUTH_ADMIN_PREFIX, key, sizeof key);
            rc = write_secret_file(key_path, key);
            if (rc) {
                snprintf(err, errlen, "cannot create admin key file %s: %s", key_path,
                         strerror(errno));
                goto out;
            }
            *generated = true;
        } else if (rc) {
            snprintf(err, errlen, "cannot read admin key file %s", key_path);
            goto out;
        } else {
            warn_mode(key_path, mode);
            if (!auth_key_wellformed(key) || strlen(key) < AUTH_ADMIN_MIN) {
                snprintf(err, errlen, "admin key file %s is malformed", key_path);
                rc = ERR_INVALID;
                goto out;
            }
        }
    }
    auth_key_hash(key, hash_out);
    rc = auth_store_key(s, hash_out, "admin", NULL, now_iso);
    if (rc)
        snprintf(err, errlen, "cannot store the admin key hash: %s", err_str(rc));
out:
    memset(key, 0, sizeof key);
    return rc;
}

static int unhex(const char *hex, unsigned char *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned int v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return ERR_INVALID;
        out[i] = (unsigned char)v;
    }
    return 0;
}

int auth_secret_file(const char *path, unsigned char out[32], bool *created, char *err,
                     size_t errlen)
{
    char text[130];
    mode_t mode = 0;
    *created = false;
    int rc = read_small_file(path, text, sizeof text, &mode);
    if (rc == ERR_NOTFOUND) {
        ids_random(out, 32);
        ids_hex(out, 32, text);
        rc = write_secret_file(path, text);
        if (rc == ERR_CONFLICT) /* created concurrently (another worker): read it */
            rc = read_small_file(path, text, sizeof text, &mode);
        else if (!rc)
            *created = true;
        if (rc) {
            snprintf(err, errlen, "cannot create secret file %s", path);
            goto out;
        }
        if (*created)
            goto out;
    } else if (rc) {
        snprintf(err, errlen, "cannot read secret file %s", path);
        goto out;
    }
    warn_mode(path, mode);
    if (strlen(text) != 64 || strspn(text, "0123456789abcdefABCDEF") != 64 ||
        unhex(text, out, 32)) {
        snprintf(err, errlen, "secret file %s must hold 64 hex characters", path);
        rc = ERR_INVALID;
    }
out:
    memset(text, 0, sizeof text);
    return rc;
}
