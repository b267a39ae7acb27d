/*
 * classify_model.h - the optional model-based threat classifier
 * (--classifier gemini|openai): asks a Gemini generateContent endpoint or
 * an OpenAI-compatible chat-completions endpoint for the same fields the
 * rule classifier fills (detect/classify.h): severity, attack vector,
 * narrative, recommended actions and confidence.
 *
 * Calls go through http/client.h (libcurl multi on the event loop), so
 * they never block it; each has a timeout (scaled).  The answer is
 * hostile input: it must be one JSON object whose fields pass strict
 * checks (a known severity, bounded strings, at most CLASSIFY_MODEL_
 * ACTIONS_MAX actions, confidence 0-100) or the call counts as failed.
 * On ANY failure (no answer, timeout, HTTP error, unusable output) the
 * callback reports err != 0 and the caller keeps the rule classification.
 *
 * The API key is sent only in a header (x-goog-api-key for Gemini,
 * Authorization: Bearer for OpenAI) and is never logged.
 *
 * Single-threaded, on the loop the model was created with.
 */
#ifndef GP_DETECT_CLASSIFY_MODEL_H
#define GP_DETECT_CLASSIFY_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "detect/classify.h"

struct ev_loop;
struct classify_model;

enum classify_provider {
    CLASSIFY_PROVIDER_RULES = 0,
    CLASSIFY_PROVIDER_GEMINI,
    CLASSIFY_PROVIDER_OPENAI
};

#define CLASSIFY_GEMINI_URL        "https://generativelanguage.googleapis.com/v1beta"
#define CLASSIFY_GEMINI_MODEL      "gemini-2.5-flash"
#define CLASSIFY_OPENAI_URL        "https://api.openai.com/v1"
#define CLASSIFY_OPENAI_MODEL      "gpt-4o-mini"
#define CLASSIFY_MODEL_TIMEOUT_S   10.0
#define CLASSIFY_MODEL_INFLIGHT    8
#define CLASSIFY_MODEL_ACTIONS_MAX 5
#define CLASSIFY_MODEL_ACTION_MAX  200
#define CLASSIFY_MODEL_VECTOR_MAX  64
#define CLASSIFY_MODEL_NAME_MAX    64

/* "rules" | "gemini" | "openai" -> provider; ERR_INVALID otherwise. */
int classify_provider_parse(const char *name, enum classify_provider *out);
const char *classify_provider_name(enum classify_provider p);

struct classify_model_config {
    enum classify_provider provider; /* GEMINI or OPENAI */
    const char *url;                 /* base URL; NULL -> the provider's */
    const char *api_key;             /* NULL -> env GEMINI_API_KEY / OPENAI_API_KEY */
    const char *model;               /* NULL -> CLASSIFY_GEMINI_MODEL / _OPENAI_MODEL */
    double timeout_s;                /* unscaled; 0 -> 10 */
    size_t max_inflight;             /* 0 -> 8; more calls fail at once (rules) */
};

/* What the model is told: the rule classifier's view of one alert. */
struct classify_model_input {
    const char *type;          /* alert type, e.g. "geographic_anomaly" */
    const char *details;       /* the rule narrative, with the numbers */
    const char *rule_severity; /* the rules' severity (context for the model) */
    const char *const *flags;  /* every check that fired */
    size_t nflags;
    const char *country; /* may be NULL */
};

struct classify_model_result {
    int err;           /* 0: the model gave a usable classification */
    const char *error; /* why not ("timeout", "HTTP 500", ...); NULL when err is 0 */
    const char *model; /* the model name asked */
    double latency_ms; /* duration of the call */
    /* valid when err is 0 (all strings live during the callback only) */
    const char *severity;       /* static: "low" | "medium" | "high" | "critical" */
    const char *severity_upper; /* static: "LOW" ... */
    const char *attack_vector;
    const char *narrative;
    const char *actions[CLASSIFY_MODEL_ACTIONS_MAX];
    size_t nactions;
    int confidence; /* 0-100 */
};

typedef void (*classify_model_cb)(void *arg, const struct classify_model_result *res);

/*
 * A model classifier on loop.  Refuses (NULL, message in err) a provider
 * other than gemini/openai, a URL that is not http(s), a model name
 * outside [A-Za-z0-9._:-] or longer than 64 bytes, and a missing API key
 * unless an explicit url is given (local OpenAI-compatible servers often
 * need none).
 */
struct classify_model *classify_model_new(struct ev_loop *loop,
                                          const struct classify_model_config *cfg, char *err,
                                          size_t errlen);
/* Abandons calls in flight (their callbacks never run) and frees. */
void classify_model_free(struct classify_model *m);

/*
 * Starts one classification.  Returns 0 and calls cb exactly once, later,
 * from the loop (with err set on any failure); or returns ERR_THROTTLED /
 * ERR_INVALID / ERR_IO without ever calling cb (the caller keeps the
 * rules).
 */
int classify_model_request(struct classify_model *m, const struct classify_model_input *in,
                           classify_model_cb cb, void *arg);
const char *classify_model_name(const struct classify_model *m);

/* The alert's aiAnalysis object for a successful result: {severity,
 * attack_vector, narrative, recommended_actions, confidence, model,
 * latency_ms}.  The caller owns it. */
cJSON *classify_model_analysis_json(const struct classify_model_result *r);

#ifdef UNITTEST
/* Parses the model's reply text (a JSON object, possibly inside a
 * ```json fence) into r; 0 or ERR_INVALID.  Strings point into storage
 * owned by *hold (cJSON_Delete it after use). */
int classify_model_parse_text(const char *text, struct classify_model_result *r, cJSON **hold);
#endif

#endif
