/*
 * fuzz_item_json.c - differential: item_json_parse against cJSON.  For
 * any input both must agree on success, and on success build the same
 * tree - the fast path may refuse, never differ.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/item_json.h"

/* cJSON_Compare calls inf != inf; compare numbers bit for bit instead. */
static int same(const cJSON *a, const cJSON *b)
{
    /* item_json interns common keys (cJSON_StringIsConst); cJSON does not. */
    if ((a->type & ~cJSON_StringIsConst) != (b->type & ~cJSON_StringIsConst) ||
        !a->string != !b->string)
        return 0;
    if (a->string && strcmp(a->string, b->string))
        return 0;
    if (cJSON_IsString(a) && strcmp(a->valuestring, b->valuestring))
        return 0;
    if (cJSON_IsNumber(a) &&
        (memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) || a->valueint != b->valueint))
        return 0;
    for (a = a->child, b = b->child; a && b; a = a->next, b = b->next)
        if (!same(a, b))
            return 0;
    return !a && !b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *mine = item_json_parse((const char *)data, size);
    cJSON *ref = cJSON_ParseWithLength((const char *)data, size);
    if (!mine != !ref)
        abort();
    if (mine && !same(mine, ref))
        abort();
    cJSON_Delete(mine);
    cJSON_Delete(ref);
    return 0;
}
