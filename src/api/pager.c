/*
 * pager.c - multi-page store queries.
 *
 * A page stops at the query's item limit or at STORE_PAGE_BYTES, and its
 * cursor says where to resume.  When the caller wants at most N items,
 * each page asks for only the items still missing, so a bounded listing
 * never reads (or is charged for) more than it returns.
 */
#include "api/pager.h"

#include <limits.h>
#include <stdlib.h>

#include "util/err.h"
#include "util/xalloc.h"

/* Items to ask for in the next page (0 = as many as fit a page). */
static int page_limit(size_t max, size_t done)
{
    size_t left;

    if (!max)
        return 0;
    left = max - done;
    return left > (size_t)INT_MAX ? INT_MAX : (int)left;
}

int pager_each(struct store *s, const struct store_query *q, size_t max, pager_fn fn, void *arg,
               size_t *seen)
{
    struct store_query pq = *q;
    struct store_result res = {0};
    char *cursor = NULL;
    size_t n = 0;
    int rc = 0, stop = 0;

    pq.start = NULL;
    pq.count_only = false;
    while (!stop && (!max || n < max)) {
        const cJSON *it;

        pq.limit = page_limit(max, n);
        pq.start = cursor;
        rc = store_query(s, &pq, &res);
        if (rc)
            goto out;
        cJSON_ArrayForEach(it, res.items)
        {
            if (max && n >= max) {
                stop = 1;
                break;
            }
            n++;
            rc = fn(arg, it);
            if (rc) {
                stop = 1;
                break;
            }
        }
        free(cursor);
        cursor = res.next ? xstrdup(res.next) : NULL;
        store_result_free(&res);
        if (rc < 0)
            goto out;
        rc = 0;
        if (!cursor)
            break;
    }
out:
    free(cursor);
    if (seen)
        *seen = n;
    return rc;
}

int pager_collect(struct store *s, const struct store_query *q, size_t max, cJSON **out)
{
    struct store_query pq = *q;
    struct store_result res = {0};
    char *cursor = NULL;
    cJSON *arr = cJSON_CreateArray();
    size_t n = 0;
    int rc = 0;

    *out = NULL;
    if (!arr)
        return ERR_NOMEM;
    pq.count_only = false;
    while (!max || n < max) {
        cJSON *it;

        pq.limit = page_limit(max, n);
        pq.start = cursor;
        rc = store_query(s, &pq, &res);
        if (rc)
            goto out;
        /* Move the page's items into the result (detaching the head is O(1)). */
        while (res.items && (it = res.items->child) && (!max || n < max)) {
            cJSON_DetachItemViaPointer(res.items, it);
            cJSON_AddItemToArray(arr, it);
            n++;
        }
        free(cursor);
        cursor = res.next ? xstrdup(res.next) : NULL;
        store_result_free(&res);
        if (!cursor)
            break;
    }
out:
    free(cursor);
    if (rc) {
        cJSON_Delete(arr);
        return rc;
    }
    *out = arr;
    return 0;
}

void pager_move_all(cJSON *dst, cJSON *src)
{
    cJSON *it;

    while (src && (it = src->child)) {
        cJSON_DetachItemViaPointer(src, it);
        cJSON_AddItemToArray(dst, it);
    }
    cJSON_Delete(src);
}
