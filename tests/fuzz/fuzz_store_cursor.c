/*
 * fuzz_store_cursor.c - query cursors come back from clients: decoding
 * arbitrary text must fail cleanly or yield keys that encode and decode
 * to the same keys again.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    struct store_cursor c, d;
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    for (int gsi = 0; gsi < 2; gsi++) {
        if (store_cursor_decode(text, gsi, &c) != 0)
            continue;
        char *again = store_cursor_encode(c.pk, c.sk, c.gpk, c.gsk);
        if (!again || store_cursor_decode(again, gsi, &d) != 0)
            abort();
        if (strcmp(c.pk, d.pk) || strcmp(c.sk, d.sk) ||
            (gsi && (strcmp(c.gpk, d.gpk) || strcmp(c.gsk, d.gsk))))
            abort();
        store_cursor_free(&d);
        store_cursor_free(&c);
        free(again);
    }
    free(text);
    return 0;
}
