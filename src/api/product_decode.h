/*
 * product_decode.h - pure decoders for the JSON bodies of the product
 * endpoints (API.md §9.6-§9.18), one per POST body.
 *
 * Each takes the parsed body (an object, see dec_parse_body()) and fills
 * a request struct whose strings borrow from the body.  On success it
 * returns 0; on a bad body it returns ERR_INVALID and writes the exact
 * error text of the 400 answer into err (API.md messages for missing
 * fields, "<field> must be a <type>" for wrong types, "Invalid event
 * type" for an unknown event type).  Presence follows API.md §1.2
 * (JS-truthiness).  Ids are not validated here (see pd_id_ok()): an id
 * that cannot exist is answered 404 by the handler, like any unknown id.
 */
#ifndef GP_API_PRODUCT_DECODE_H
#define GP_API_PRODUCT_DECODE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* Most products in one batch / ids in one history call. */
#define PD_BATCH_MAX 50
/* Largest canonical text of a metadata/data object (bytes), and deepest
 * nesting inside it. */
#define PD_OBJ_MAX   (16 * 1024)
#define PD_OBJ_DEPTH 16
/* Longest id accepted by pd_id_ok(). */
#define PD_ID_MAX 128

/* True when s can be a product/brand id: 1..PD_ID_MAX bytes, no '#', no
 * control characters. */
bool pd_id_ok(const char *s);

struct pd_register {
    const char *brand_id, *name, *sku, *category, *description, *image_url, *location;
    const cJSON *metadata; /* object or NULL */
};
int pd_register(const cJSON *body, struct pd_register *out, char *err, size_t errlen);

struct pd_batch_item {
    const char *name; /* NULL: nameless, skipped */
    const char *sku, *category, *description, *location;
    const cJSON *metadata;
};
struct pd_batch {
    const char *brand_id;
    size_t n;
    struct pd_batch_item items[PD_BATCH_MAX];
};
int pd_batch(const cJSON *body, struct pd_batch *out, char *err, size_t errlen);

struct pd_event {
    const char *product_id, *type, *actor, *location;
    bool has_coordinates;
    double lat, lng;
    const cJSON *data; /* object or NULL */
};
int pd_event(const cJSON *body, struct pd_event *out, char *err, size_t errlen);

struct pd_history {
    const char *product_ids[PD_BATCH_MAX];
    size_t n;
    const char *type, *actor, *location;
};
int pd_history(const cJSON *body, struct pd_history *out, char *err, size_t errlen);

struct pd_transfer {
    const char *product_id, *new_owner, *location, *reason;
};
int pd_transfer(const cJSON *body, struct pd_transfer *out, char *err, size_t errlen);

struct pd_recall {
    const char *product_id, *reason, *issued_by;
};
int pd_recall(const cJSON *body, struct pd_recall *out, char *err, size_t errlen);

struct pd_claim {
    const char *product_id, *consumer_name, *email;
};
int pd_claim(const cJSON *body, struct pd_claim *out, char *err, size_t errlen);

struct pd_dispute {
    const char *product_id, *consumer_name, *email, *order_number, *notes;
};
int pd_dispute(const cJSON *body, struct pd_dispute *out, char *err, size_t errlen);

#endif
