/*
 * ddb_table.c - create, describe and delete the GenuProof table (see
 * ddb_table.h).  Waits poll DescribeTable with a doubling interval (0.1 s
 * up to 2 s, time-scaled) until the deadline.
 */
#include "store/ddb_table.h"

#include <string.h>
#include <time.h>

#include "util/backoff.h"
#include "util/err.h"
#include "util/timescale.h"

bool ddb_table_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n < 3 || n > DDB_TABLE_NAME_MAX)
        return false;
    return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_s(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int ddb_table_describe(struct ddb_http *h, const char *table, cJSON **desc)
{
    cJSON *req = cJSON_CreateObject(), *resp = NULL, *t;
    int rc;
    *desc = NULL;
    cJSON_AddStringToObject(req, "TableName", table);
    rc = ddb_call(h, "DynamoDB_20120810.DescribeTable", req, &resp, NULL);
    if (!rc) {
        t = cJSON_DetachItemFromObjectCaseSensitive(resp, "Table");
        if (cJSON_IsObject(t))
            *desc = t;
        else {
            cJSON_Delete(t);
            rc = ERR_IO;
        }
    }
    cJSON_Delete(req);
    cJSON_Delete(resp);
    return rc;
}

/* Waits until the table is ACTIVE with every index ACTIVE (want_gone:
 * until it no longer exists).  On success 0 (and *desc when not NULL). */
static int wait_table(struct ddb_http *h, const char *table, bool want_gone, double timeout_s,
                      cJSON **desc)
{
    double deadline = mono_s() + scaled(timeout_s), delay = 0;
    for (;;) {
        cJSON *d = NULL;
        int rc = ddb_table_describe(h, table, &d);
        if (want_gone && rc == ERR_NOTFOUND)
            return 0;
        if (rc && rc != ERR_NOTFOUND)
            return rc;
        if (!want_gone && !rc) {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(d, "TableStatus"), *g;
            bool ready = cJSON_IsString(st) && !strcmp(st->valuestring, "ACTIVE");
            cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(d, "GlobalSecondaryIndexes"))
            {
                const cJSON *is = cJSON_GetObjectItemCaseSensitive(g, "IndexStatus");
                if (cJSON_IsString(is) && strcmp(is->valuestring, "ACTIVE"))
                    ready = false;
            }
            if (ready) {
                if (desc)
                    *desc = d;
                else
                    cJSON_Delete(d);
                return 0;
            }
        }
        cJSON_Delete(d);
        if (mono_s() >= deadline)
            return ERR_TIMEOUT;
        delay = backoff_next(delay, 0.1, 2.0);
        pause_s(scaled(delay));
    }
}

static cJSON *key_elem(const char *name, const char *type)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "AttributeName", name);
    cJSON_AddStringToObject(o, "KeyType", type);
    return o;
}

static cJSON *attr_def(const char *name)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "AttributeName", name);
    cJSON_AddStringToObject(o, "AttributeType", "S");
    return o;
}

static cJSON *create_request(const char *table)
{
    cJSON *req = cJSON_CreateObject(), *a, *k, *g, *gi, *gk, *p, *ss;
    cJSON_AddStringToObject(req, "TableName", table);
    a = cJSON_AddArrayToObject(req, "AttributeDefinitions");
    cJSON_AddItemToArray(a, attr_def("PK"));
    cJSON_AddItemToArray(a, attr_def("SK"));
    cJSON_AddItemToArray(a, attr_def("GSI1PK"));
    cJSON_AddItemToArray(a, attr_def("GSI1SK"));
    k = cJSON_AddArrayToObject(req, "KeySchema");
    cJSON_AddItemToArray(k, key_elem("PK", "HASH"));
    cJSON_AddItemToArray(k, key_elem("SK", "RANGE"));
    g = cJSON_AddArrayToObject(req, "GlobalSecondaryIndexes");
    gi = cJSON_CreateObject();
    cJSON_AddStringToObject(gi, "IndexName", "GSI1");
    gk = cJSON_AddArrayToObject(gi, "KeySchema");
    cJSON_AddItemToArray(gk, key_elem("GSI1PK", "HASH"));
    cJSON_AddItemToArray(gk, key_elem("GSI1SK", "RANGE"));
    p = cJSON_AddObjectToObject(gi, "Projection");
    cJSON_AddStringToObject(p, "ProjectionType", "ALL");
    cJSON_AddItemToArray(g, gi);
    cJSON_AddStringToObject(req, "BillingMode", "PAY_PER_REQUEST");
    ss = cJSON_AddObjectToObject(req, "StreamSpecification");
    cJSON_AddTrueToObject(ss, "StreamEnabled");
    cJSON_AddStringToObject(ss, "StreamViewType", "NEW_IMAGE");
    return req;
}

int ddb_table_create(struct ddb_http *h, const char *table, double timeout_s, cJSON **desc)
{
    cJSON *req = create_request(table), *resp = NULL, *ttl = NULL, *spec;
    struct ddb_error e;
    int rc;
    if (desc)
        *desc = NULL;
    rc = ddb_call(h, "DynamoDB_20120810.CreateTable", req, &resp, &e);
    if (rc == ERR_CONFLICT || (rc && !strcmp(e.type, "ResourceInUseException")))
        rc = ERR_CONFLICT;
    if (!rc)
        rc = wait_table(h, table, false, timeout_s, NULL);
    if (!rc) {
        cJSON_Delete(resp);
        resp = NULL;
        ttl = cJSON_CreateObject();
        cJSON_AddStringToObject(ttl, "TableName", table);
        spec = cJSON_AddObjectToObject(ttl, "TimeToLiveSpecification");
        cJSON_AddTrueToObject(spec, "Enabled");
        cJSON_AddStringToObject(spec, "AttributeName", "ttl");
        rc = ddb_call(h, "DynamoDB_20120810.UpdateTimeToLive", ttl, &resp, NULL);
    }
    if (!rc && desc)
        rc = wait_table(h, table, false, timeout_s, desc);
    cJSON_Delete(req);
    cJSON_Delete(resp);
    cJSON_Delete(ttl);
    return rc;
}

int ddb_table_delete(struct ddb_http *h, const char *table, double timeout_s)
{
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    int rc;
    cJSON_AddStringToObject(req, "TableName", table);
    rc = ddb_call(h, "DynamoDB_20120810.DeleteTable", req, &resp, NULL);
    if (!rc)
        rc = wait_table(h, table, true, timeout_s, NULL);
    cJSON_Delete(req);
    cJSON_Delete(resp);
    return rc;
}
