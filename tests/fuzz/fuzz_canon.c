/*
 * fuzz_canon.c - canon.c must be idempotent: for any document cJSON
 * accepts, the canonical text parses again and re-canonicalises to the
 * very same bytes (numbers round-trip, escapes are stable, invalid UTF-8
 * is replaced once and then stays).  Any difference aborts.  Texts with
 * a lone surrogate escape are only checked for being written at all,
 * since cJSON cannot read them back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/canon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* True when text holds a \\udXXX escape: canon writes one only for a lone
 * surrogate (WTF-8 input), which is valid JSON that cJSON refuses. */
static int has_lone_surrogate(const char *t)
{
    for (size_t i = 0; t[i]; i++) {
        if (t[i] != '\\')
            continue;
        if (t[i + 1] == 'u' && t[i + 2] == 'd' && strchr("89abcdef", t[i + 3]) && t[i + 3])
            return 1;
        i++; /* skip the escaped char */
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *first = NULL, *second = NULL;
    char *t1 = NULL, *t2 = NULL;

    if (size > 1 << 16)
        return 0;
    first = cJSON_ParseWithLength((const char *)data, size);
    if (!first)
        goto out;
    t1 = canon_dup(first);
    if (!t1)
        abort(); /* within cJSON's nesting limit, writing cannot fail */
    second = cJSON_Parse(t1);
    if (!second) {
        if (has_lone_surrogate(t1))
            goto out;
        abort(); /* our own output must be valid JSON */
    }
    t2 = canon_dup(second);
    if (!t2 || strcmp(t1, t2) != 0)
        abort();
out:
    free(t1);
    free(t2);
    cJSON_Delete(first);
    cJSON_Delete(second);
    return 0;
}
