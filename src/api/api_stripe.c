/*
 * api_stripe.c - pricing plans and subscription checkout (API.md §9.46,
 * §9.47), plans from the compiled-in catalog (core/catalog_data.h).
 *
 *   GET  /api/stripe/checkout   PUBLIC  {"plans":{starter,brand,business}}
 *   POST /api/stripe/checkout   starter: PUBLIC; paid plans: BRAND
 *
 * A paid plan with STRIPE_SECRET_KEY set creates a Stripe Checkout Session:
 * a form-encoded POST to $STRIPE_API_BASE/v1/checkout/sessions (default
 * https://api.stripe.com) through the app's asynchronous HTTP client
 * (http/client.h).  The handler does not block the loop: it defers its
 * answer (app_defer, app.h) and completes it from the client's callback
 * (app_resume) with {"url": session url}, or 500 {"error":"Checkout
 * failed"} on any failure (transport, non-2xx, no url).  Each request
 * carries a fresh random Idempotency-Key, so a retry of the same
 * outbound request by a proxy or by Stripe's client conventions cannot
 * open two sessions; a new click is a new checkout.  The plan name is
 * whitelisted [D38].  Configuration is read from the environment at
 * request time (API.md §1.4): STRIPE_SECRET_KEY, STRIPE_BRAND_PRICE_ID,
 * STRIPE_BUSINESS_PRICE_ID, STRIPE_API_BASE.
 */
#include "api/api_stripe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "core/catalog_data.h"
#include "core/ids.h"
#include "http/client.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define STRIPE_TIMEOUT_S 20.0
#define STRIPE_FORM_MAX  (16 * 1024)
#define STRIPE_KEY_MAX   512

/* A non-empty environment value or NULL. */
static const char *env(const char *name)
{
    const char *v = name ? getenv(name) : NULL;
    return v && *v ? v : NULL;
}

/* {"name","amount","products"(,"priceId"),"features"} of a plan. */
static void write_plan(struct jsonw *w, const struct catalog_plan *p)
{
    const char *price = env(p->price_id_env);
    jsonw_obj(w);
    jsonw_kstr(w, "name", p->name);
    jsonw_kint(w, "amount", p->amount);
    jsonw_kstr(w, "products", p->products);
    if (price)
        jsonw_kstr(w, "priceId", price);
    jsonw_key(w, "features");
    jsonw_arr(w);
    for (size_t i = 0; i < p->nfeatures; i++)
        jsonw_str(w, p->features[i]);
    jsonw_end(w);
    jsonw_end(w);
}

static void checkout_plans(struct api_req *r)
{
    struct jsonw *w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "plans");
    jsonw_obj(w);
    for (size_t i = 0; i < catalog_nplans; i++) {
        jsonw_key(w, catalog_plans[i].id);
        write_plan(w, &catalog_plans[i]);
    }
    jsonw_end(w);
    jsonw_end(w);
}

/* ---------- the form body ---------- */

/* Appends s percent-encoded (application/x-www-form-urlencoded). */
static int form_enc(struct buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && !rc; p++) {
        unsigned char c = *p;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            rc = buf_putc(b, (char)c);
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            rc = buf_append(b, e, 3);
        }
    }
    return rc;
}

static int form_add(struct buf *b, const char *key, const char *value)
{
    int rc = 0;
    if (b->len)
        rc = buf_putc(b, '&');
    if (!rc)
        rc = form_enc(b, key);
    if (!rc)
        rc = buf_putc(b, '=');
    if (!rc)
        rc = form_enc(b, value);
    return rc;
}

/* The Checkout Session parameters of API.md §9.46. */
static int build_form(struct buf *b, const struct catalog_plan *p, const char *base,
                      const char *brand_id, const char *email)
{
    char tmp[2048];
    const char *price = env(p->price_id_env);
    int rc = form_add(b, "mode", "subscription");
    if (!rc)
        rc = form_add(b, "payment_method_types[]", "card");
    if (!rc)
        rc = form_add(b, "line_items[0][quantity]", "1");
    if (price) {
        if (!rc)
            rc = form_add(b, "line_items[0][price]", price);
    } else {
        struct buf desc = BUF_INIT(4096);
        rc = rc ? rc : buf_printf(&desc, "%s. ", p->products);
        for (size_t i = 0; i < p->nfeatures && !rc; i++)
            rc = buf_printf(&desc, "%s%s", i ? ", " : "", p->features[i]);
        snprintf(tmp, sizeof tmp, "%ld", p->amount);
        if (!rc)
            rc = form_add(b, "line_items[0][price_data][currency]", p->currency);
        if (!rc)
            rc = form_add(b, "line_items[0][price_data][unit_amount]", tmp);
        if (!rc)
            rc = form_add(b, "line_items[0][price_data][recurring][interval]",
                          p->interval ? p->interval : "month");
        snprintf(tmp, sizeof tmp, "GenuProof %s", p->name);
        if (!rc)
            rc = form_add(b, "line_items[0][price_data][product_data][name]", tmp);
        if (!rc)
            rc = form_add(b, "line_items[0][price_data][product_data][description]",
                          buf_cstr(&desc));
        buf_free(&desc);
    }
    snprintf(tmp, sizeof tmp, "%s/dashboard?plan=%s&success=true", base, p->id);
    if (!rc)
        rc = form_add(b, "success_url", tmp);
    snprintf(tmp, sizeof tmp, "%s/pricing", base);
    if (!rc)
        rc = form_add(b, "cancel_url", tmp);
    if (!rc && email)
        rc = form_add(b, "customer_email", email);
    if (!rc)
        rc = form_add(b, "metadata[brandId]", brand_id ? brand_id : "");
    if (!rc)
        rc = form_add(b, "metadata[plan]", p->id);
    return rc;
}

/* ---------- the deferred answer ---------- */

/* One checkout waiting for Stripe (app.h's deferred requests). */
struct checkout {
    struct api_resume resume;
    const char *url; /* the session's, during the resume; NULL: failed */
};

static void checkout_resume(struct api_req *r, void *arg)
{
    struct checkout *co = arg;
    if (!co->url) {
        api_error(r, 500, "Checkout failed");
        return;
    }
    struct jsonw *w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kstr(w, "url", co->url);
    jsonw_end(w);
}

static void checkout_done(void *arg, const struct http_client_res *cres)
{
    struct checkout *co = arg;
    cJSON *doc = NULL;

    if (!cres->err && cres->status >= 200 && cres->status < 300) {
        doc = cJSON_ParseWithLength(cres->body, cres->body_len);
        const char *u = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "url"));
        if (u && *u)
            co->url = u;
    }
    if (!co->url)
        log_msg(LOG_WARN, NULL, "stripe: checkout session failed (status %ld, %s)", cres->status,
                cres->err ? cres->error : "no url in the answer");
    app_resume(&co->resume, checkout_resume, co); /* nothing when the client is gone */
    cJSON_Delete(doc);
    free(co);
}

/* Starts the session request and defers the answer; answers 500 itself
 * when the request cannot be started. */
static void checkout_start(struct api_req *r, const struct catalog_plan *p, const char *secret,
                           const char *brand_id, const char *email)
{
    struct http_client *hc = app_http_client(r->app);
    const char *base = env("STRIPE_API_BASE");
    struct buf form = BUF_INIT(STRIPE_FORM_MAX);
    char url[HTTP_CLIENT_URL_MAX];
    char auth[STRIPE_KEY_MAX + 32], idem[64], hex[33];
    struct checkout *co = NULL;
    int rc;

    if (!hc || strlen(secret) > STRIPE_KEY_MAX || strpbrk(secret, "\r\n")) {
        rc = ERR_UNAVAILABLE;
        goto fail;
    }
    base = base ? base : STRIPE_API_BASE_DEFAULT;
    if ((size_t)snprintf(url, sizeof url, "%s/v1/checkout/sessions", base) >= sizeof url) {
        rc = ERR_INVALID;
        goto fail;
    }
    rc = build_form(&form, p, api_base_url(r), brand_id, email);
    if (rc)
        goto fail;
    ids_random_hex(16, hex);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", secret);
    snprintf(idem, sizeof idem, "Idempotency-Key: %s", hex);
    const char *headers[] = {auth, idem, "Content-Type: application/x-www-form-urlencoded"};
    struct http_client_req req = {.method = "POST",
                                  .url = url,
                                  .headers = headers,
                                  .nheaders = 3,
                                  .body = buf_cstr(&form),
                                  .body_len = form.len,
                                  .timeout_s = scaled(STRIPE_TIMEOUT_S)};
    co = xcalloc(1, sizeof *co);
    rc = http_client_start(hc, &req, checkout_done, co);
    memset(auth, 0, sizeof auth);
    if (rc)
        goto fail;
    /* the request outlives a client that goes: checkout_done frees co */
    app_defer(r, &co->resume, NULL, NULL);
    buf_free(&form);
    return;
fail:
    memset(auth, 0, sizeof auth);
    free(co);
    buf_free(&form);
    api_fail(r, "Checkout failed", rc);
}

static void checkout_post(struct api_req *r)
{
    cJSON *body = api_body(r);
    const char *plan_id = NULL, *brand_id = NULL, *email = NULL;
    const struct catalog_plan *p;
    const char *secret;

    if (!body)
        return;
    if (api_body_str(r, body, "plan", &plan_id) < 0 ||
        api_body_str(r, body, "brandId", &brand_id) < 0 ||
        api_body_str(r, body, "email", &email) < 0)
        return;
    p = catalog_plan_find(plan_id);
    if (!p) {
        api_error(r, 400, "Invalid plan");
        return;
    }
    if (p->amount == 0) {
        struct jsonw *w = api_json(r, 200);
        jsonw_obj(w);
        jsonw_kstr(w, "url", "/dashboard");
        jsonw_kbool(w, "free", true);
        jsonw_end(w);
        return;
    }
    /* A paid plan is bought for a brand: the caller must hold its key
     * (or the admin key); without brandId any brand or admin key. */
    if (brand_id) {
        if (!api_require_brand(r, brand_id))
            return;
    } else if (r->who.kind != API_PRINCIPAL_BRAND && r->who.kind != API_PRINCIPAL_ADMIN) {
        api_error(r, 401, "Unauthorized");
        return;
    }
    if (!brand_id && r->who.kind == API_PRINCIPAL_BRAND)
        brand_id = r->who.brand_id;
    secret = env("STRIPE_SECRET_KEY");
    if (!secret) {
        struct jsonw *w = api_json(r, 200);
        jsonw_obj(w);
        jsonw_key(w, "plan");
        write_plan(w, p);
        jsonw_kstr(w, "message", "Stripe not configured. Contact sales@genuproof.com");
        jsonw_end(w);
        return;
    }
    checkout_start(r, p, secret, brand_id, email);
}

const struct api_route api_stripe_routes[] = {
    {HTTP_M_GET, "/api/stripe/checkout", API_PUBLIC, checkout_plans},
    {HTTP_M_POST, "/api/stripe/checkout", API_OPTIONAL, checkout_post},
    {0},
};
