/*
 * ddb_marshal.c - AttributeValue marshalling and the stored item layout
 * (see ddb_marshal.h).
 *
 * Numbers are written with canon_number_str() - JavaScript's
 * Number::toString - which DynamoDB accepts as a decimal and which the
 * original (Node.js) system would have written itself.  Reading a number
 * goes through strtod; DynamoDB's 38-digit decimals beyond a double's
 * precision are rounded, as the JavaScript SDK does.
 */
#include "store/ddb_marshal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/canon.h"

static const char *const CANON_ATTRS[] = {"metadata", "data"};

bool ddb_canon_attr(const char *name)
{
    for (size_t i = 0; i < sizeof(CANON_ATTRS) / sizeof(CANON_ATTRS[0]); i++)
        if (!strcmp(name, CANON_ATTRS[i]))
            return true;
    return false;
}

bool ddb_canon_name(const char *name, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%sCanonical", name);
    return n > 0 && (size_t)n < cap;
}

cJSON *ddb_marshal_value(const cJSON *v)
{
    cJSON *av = cJSON_CreateObject(), *inner = NULL;
    char num[CANON_NUM_MAX];
    if (!av)
        return NULL;
    if (cJSON_IsString(v)) {
        inner = cJSON_AddStringToObject(av, "S", v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        if (!isfinite(v->valuedouble))
            goto fail;
        canon_number_str(v->valuedouble, num);
        inner = cJSON_AddStringToObject(av, "N", num);
    } else if (cJSON_IsBool(v)) {
        inner = cJSON_AddBoolToObject(av, "BOOL", cJSON_IsTrue(v));
    } else if (cJSON_IsNull(v)) {
        inner = cJSON_AddTrueToObject(av, "NULL");
    } else if (cJSON_IsArray(v)) {
        const cJSON *e;
        inner = cJSON_AddArrayToObject(av, "L");
        cJSON_ArrayForEach(e, v)
        {
            cJSON *m = ddb_marshal_value(e);
            if (!m || !inner)
                goto fail_m;
            cJSON_AddItemToArray(inner, m);
            continue;
        fail_m:
            cJSON_Delete(m);
            goto fail;
        }
    } else if (cJSON_IsObject(v)) {
        const cJSON *e;
        inner = cJSON_AddObjectToObject(av, "M");
        cJSON_ArrayForEach(e, v)
        {
            cJSON *m = ddb_marshal_value(e);
            if (!m || !inner || !e->string) {
                cJSON_Delete(m);
                goto fail;
            }
            cJSON_AddItemToObject(inner, e->string, m);
        }
    }
    if (!inner)
        goto fail;
    return av;
fail:
    cJSON_Delete(av);
    return NULL;
}

static cJSON *unmarshal(const cJSON *av, int depth)
{
    const cJSON *t;
    cJSON *out = NULL;
    if (depth > DDB_DEPTH_MAX || !cJSON_IsObject(av) || !av->child || av->child->next)
        return NULL;
    t = av->child;
    if (!t->string)
        return NULL;
    if (!strcmp(t->string, "S") || !strcmp(t->string, "B")) {
        return cJSON_IsString(t) ? cJSON_CreateString(t->valuestring) : NULL;
    } else if (!strcmp(t->string, "N")) {
        char *end;
        double d;
        if (!cJSON_IsString(t) || !t->valuestring[0])
            return NULL;
        d = strtod(t->valuestring, &end);
        if (*end || !isfinite(d))
            return NULL;
        return cJSON_CreateNumber(d);
    } else if (!strcmp(t->string, "BOOL")) {
        return cJSON_IsBool(t) ? cJSON_CreateBool(cJSON_IsTrue(t)) : NULL;
    } else if (!strcmp(t->string, "NULL")) {
        return cJSON_CreateNull();
    } else if (!strcmp(t->string, "L")) {
        const cJSON *e;
        if (!cJSON_IsArray(t))
            return NULL;
        out = cJSON_CreateArray();
        cJSON_ArrayForEach(e, t)
        {
            cJSON *v = unmarshal(e, depth + 1);
            if (!v)
                goto fail;
            cJSON_AddItemToArray(out, v);
        }
        return out;
    } else if (!strcmp(t->string, "M")) {
        const cJSON *e;
        if (!cJSON_IsObject(t))
            return NULL;
        out = cJSON_CreateObject();
        cJSON_ArrayForEach(e, t)
        {
            cJSON *v = unmarshal(e, depth + 1);
            if (!v || !e->string) {
                cJSON_Delete(v);
                goto fail;
            }
            cJSON_AddItemToObject(out, e->string, v);
        }
        return out;
    } else if (!strcmp(t->string, "SS") || !strcmp(t->string, "NS") || !strcmp(t->string, "BS")) {
        const cJSON *e;
        bool num = t->string[0] == 'N';
        if (!cJSON_IsArray(t))
            return NULL;
        out = cJSON_CreateArray();
        cJSON_ArrayForEach(e, t)
        {
            cJSON *v;
            if (!cJSON_IsString(e))
                goto fail;
            if (num) {
                char *end;
                double d = strtod(e->valuestring, &end);
                if (*end || !isfinite(d))
                    goto fail;
                v = cJSON_CreateNumber(d);
            } else {
                v = cJSON_CreateString(e->valuestring);
            }
            cJSON_AddItemToArray(out, v);
        }
        return out;
    }
    return NULL;
fail:
    cJSON_Delete(out);
    return NULL;
}

cJSON *ddb_unmarshal_value(const cJSON *av)
{
    return unmarshal(av, 0);
}

cJSON *ddb_marshal_item(const cJSON *item)
{
    cJSON *map = cJSON_CreateObject();
    const cJSON *e;
    if (!map || !cJSON_IsObject(item))
        goto fail;
    cJSON_ArrayForEach(e, item)
    {
        cJSON *av;
        char cname[64];
        if (!e->string)
            goto fail;
        /* A stale companion given by the caller is replaced below. */
        if (strlen(e->string) > 9 && !strcmp(e->string + strlen(e->string) - 9, "Canonical")) {
            char base[64];
            size_t bl = strlen(e->string) - 9;
            if (bl < sizeof(base)) {
                memcpy(base, e->string, bl);
                base[bl] = '\0';
                if (ddb_canon_attr(base) &&
                    cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(item, base)))
                    continue;
            }
        }
        av = ddb_marshal_value(e);
        if (!av)
            goto fail;
        cJSON_AddItemToObject(map, e->string, av);
        if (cJSON_IsObject(e) && ddb_canon_attr(e->string) &&
            ddb_canon_name(e->string, cname, sizeof(cname))) {
            char *text = canon_dup(e);
            cJSON *s = text ? cJSON_CreateObject() : NULL;
            if (!s || !cJSON_AddStringToObject(s, "S", text)) {
                free(text);
                cJSON_Delete(s);
                goto fail;
            }
            free(text);
            cJSON_AddItemToObject(map, cname, s);
        }
    }
    return map;
fail:
    cJSON_Delete(map);
    return NULL;
}

cJSON *ddb_unmarshal_item(const cJSON *map)
{
    cJSON *item = cJSON_CreateObject();
    const cJSON *e;
    if (!item || !cJSON_IsObject(map))
        goto fail;
    cJSON_ArrayForEach(e, map)
    {
        cJSON *v;
        if (!e->string)
            goto fail;
        v = unmarshal(e, 0);
        if (!v)
            goto fail;
        cJSON_AddItemToObject(item, e->string, v);
    }
    /* Fold the companions back. */
    for (size_t i = 0; i < sizeof(CANON_ATTRS) / sizeof(CANON_ATTRS[0]); i++) {
        char cname[64];
        cJSON *cv, *mv, *parsed;
        if (!ddb_canon_name(CANON_ATTRS[i], cname, sizeof(cname)))
            continue;
        cv = cJSON_GetObjectItemCaseSensitive(item, cname);
        mv = cJSON_GetObjectItemCaseSensitive(item, CANON_ATTRS[i]);
        if (!cv || !cJSON_IsString(cv))
            continue;
        parsed = cJSON_IsObject(mv) ? cJSON_Parse(cv->valuestring) : NULL;
        /* Only when the map still holds the same object: another writer
         * (the original system, the SDK) may have changed the map alone. */
        if (cJSON_IsObject(parsed) && cJSON_Compare(parsed, mv, true))
            cJSON_ReplaceItemInObjectCaseSensitive(item, CANON_ATTRS[i], parsed);
        else
            cJSON_Delete(parsed);
        cJSON_DeleteItemFromObjectCaseSensitive(item, cname);
    }
    return item;
fail:
    cJSON_Delete(item);
    return NULL;
}
