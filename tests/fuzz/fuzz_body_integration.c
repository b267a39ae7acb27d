/*
 * fuzz_body_integration.c - POST /api/integrations/configure and
 * /simulate bodies: raw bytes through the body parser and the
 * integration decoders.  An accepted configure body names a known type
 * and a valid brand id; an accepted simulate journey has 1..SIM_STEPS_MAX
 * steps of declared types with actors and sources; a refused body must
 * say why.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/decode.h"
#include "api/ingest_decode.h"
#include "core/brand.h"
#include "core/event.h"
#include "core/integration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct integ_simulate_req s;
    struct integ_configure_req c;
    char err[200];
    cJSON *body = dec_parse_body((const char *)data, size);

    if (!body)
        return 0;
    err[0] = '\0';
    if (integ_decode_configure(body, &c, err, sizeof err) == 0) {
        if (!brand_id_ok(c.brand_id) || !integration_type_find(c.type) ||
            (c.config && !cJSON_IsObject(c.config)))
            __builtin_trap();
    } else if (!err[0]) {
        __builtin_trap();
    }
    err[0] = '\0';
    if (integ_decode_simulate(body, &s, err, sizeof err) == 0) {
        if (!brand_id_ok(s.brand_id) || !s.product_name || !s.journey)
            __builtin_trap();
        err[0] = '\0';
        if (integ_simulate_steps(body, &s, err, sizeof err) == 0) {
            if (s.n == 0 || s.n > SIM_STEPS_MAX)
                __builtin_trap();
            for (size_t i = 0; i < s.n; i++)
                if (!event_type_valid(s.steps[i].type) || !s.steps[i].actor || !s.steps[i].source)
                    __builtin_trap();
        } else if (!err[0]) {
            __builtin_trap();
        }
    } else if (!err[0]) {
        __builtin_trap();
    }
    cJSON_Delete(body);
    return 0;
}
