/*
 * audit_server.c - a running server's capacity accounting in the
 * hot-partition report (audit_server.h): one GET with libcurl's easy
 * interface (audit is a one-shot command, no event loop), a bounded
 * body, and the fold into the census.
 */
#include "cmd/audit_server.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "core/keys.h"
#include "util/err.h"

struct body {
    char *data;
    size_t len;
    bool toobig;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct body *b = arg;
    size_t add = size * n;
    char *grown;
    if (b->len + add > AUDIT_SERVER_BODY_MAX) {
        b->toobig = true;
        return 0; /* aborts the transfer */
    }
    grown = realloc(b->data, b->len + add + 1);
    if (!grown)
        return 0;
    b->data = grown;
    memcpy(b->data + b->len, p, add);
    b->len += add;
    b->data[b->len] = '\0';
    return add;
}

int audit_server_fetch(const char *url, const char *api_key, cJSON **out, char *err, size_t errlen)
{
    struct body b = {0};
    struct curl_slist *hdr = NULL;
    char *full = NULL, *auth = NULL;
    size_t ulen = strlen(url);
    long status = 0;
    CURL *e = NULL;
    CURLcode cc;
    int rc = ERR_UNAVAILABLE;

    *out = NULL;
    while (ulen > 0 && url[ulen - 1] == '/')
        ulen--;
    full = malloc(ulen + 64);
    auth = malloc(strlen(api_key) + 32);
    e = curl_easy_init();
    if (!full || !auth || !e) {
        snprintf(err, errlen, "out of memory");
        rc = ERR_NOMEM;
        goto out;
    }
    snprintf(full, ulen + 64, "%.*s/api/admin/partitions?limit=%d", (int)ulen, url, CENSUS_TOP);
    snprintf(auth, strlen(api_key) + 32, "Authorization: Bearer %s", api_key);
    hdr = curl_slist_append(hdr, auth);
    curl_easy_setopt(e, CURLOPT_URL, full);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    cc = curl_easy_perform(e);
    if (b.toobig) {
        snprintf(err, errlen, "the answer is larger than %d bytes", AUDIT_SERVER_BODY_MAX);
        rc = ERR_TOOBIG;
        goto out;
    }
    if (cc != CURLE_OK) {
        snprintf(err, errlen, "%s", curl_easy_strerror(cc));
        goto out;
    }
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        snprintf(err, errlen, "GET /api/admin/partitions answered %ld%s", status,
                 status == 401 || status == 403 ? " (the admin key is needed)" : "");
        rc = ERR_INVALID;
        goto out;
    }
    *out = b.data ? cJSON_ParseWithLength(b.data, b.len) : NULL;
    if (!cJSON_IsObject(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        snprintf(err, errlen, "GET /api/admin/partitions: not a JSON object");
        rc = ERR_INVALID;
        goto out;
    }
    rc = 0;
out:
    curl_slist_free_all(hdr);
    if (e)
        curl_easy_cleanup(e);
    free(b.data);
    free(full);
    free(auth);
    return rc;
}

/* The census family whose pattern is name, or -1. */
static int family_index(const char *name)
{
    for (int k = 0; k < KF_COUNT; k++)
        if (!strcmp(key_family_pattern((enum key_family)k), name))
            return k;
    return -1;
}

static double num_at(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str_at(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int audit_server_fold(struct census *c, const cJSON *parts)
{
    const cJSON *fams = cJSON_GetObjectItemCaseSensitive(parts, "families"), *f;
    int raised = 0;
    cJSON_ArrayForEach(f, fams)
    {
        const char *name = str_at(f, "family"), *hot = str_at(f, "hottestKey");
        double peak = num_at(f, "peakWcu");
        int k = name ? family_index(name) : -1;
        struct census_family *cf;
        if (k < 0 || !(peak > 0) || peak > 1e9)
            continue;
        cf = &c->fam[k];
        if (peak <= cf->peak_wcu)
            continue;
        cf->peak_wcu = peak;
        cf->peak_second = 0;
        snprintf(cf->peak_pk, sizeof cf->peak_pk, "%s", hot ? hot : "");
        /* Counted as written, so the verdict is about its writes. */
        if (!cf->writes)
            cf->writes = 1;
        raised++;
    }
    if (raised)
        census_judge(c);
    return raised;
}

void audit_server_print(FILE *f, const char *url, const cJSON *parts)
{
    const cJSON *tot = cJSON_GetObjectItemCaseSensitive(parts, "totals");
    const cJSON *fams = cJSON_GetObjectItemCaseSensitive(parts, "families"), *x;
    const cJSON *top = cJSON_GetObjectItemCaseSensitive(parts, "top");
    fprintf(f, "\nServer capacity accounting (%s): %.1f WCU, %.1f RCU in the last %.0f s\n", url,
            num_at(tot, "wcu"), num_at(tot, "rcu"), num_at(parts, "windowSeconds"));
    fprintf(f, "  %-26s %12s %12s  %s\n", "pattern", "peak WCU/s", "peak RCU/s", "hottest key");
    cJSON_ArrayForEach(x, fams)
    {
        const char *name = str_at(x, "family"), *hot = str_at(x, "hottestKey");
        if (!name || (!num_at(x, "peakWcu") && !num_at(x, "peakRcu") && !hot))
            continue;
        fprintf(f, "  %-26s %12.1f %12.1f  %s\n", name, num_at(x, "peakWcu"), num_at(x, "peakRcu"),
                hot ? hot : "-");
    }
    fprintf(f, "  top keys (WCU, RCU in the window):\n");
    cJSON_ArrayForEach(x, top)
    {
        const char *pk = str_at(x, "pk");
        fprintf(f, "  %8.1f %8.1f  %s\n", num_at(x, "wcu"), num_at(x, "rcu"), pk ? pk : "?");
    }
}

cJSON *audit_server_json(const cJSON *parts)
{
    cJSON *j = cJSON_Duplicate(parts, true);
    cJSON *fams = cJSON_GetObjectItemCaseSensitive(j, "families");
    cJSON *f = fams ? fams->child : NULL;
    while (f) {
        cJSON *next = f->next;
        cJSON_DeleteItemFromObjectCaseSensitive(f, "minutes");
        if (!num_at(f, "peakWcu") && !num_at(f, "peakRcu") && !str_at(f, "hottestKey"))
            cJSON_Delete(cJSON_DetachItemViaPointer(fams, f));
        f = next;
    }
    return j;
}
