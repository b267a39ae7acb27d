/*
 * options.c - table-driven option parsing (options.h) and the table of
 * `genuproof serve`.
 */
#include "cmd/options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

/* clang-format off */
const struct opt_def serve_options[] = {
    {"listen", OPT_STRING, "HOST:PORT", "127.0.0.1:8080", 0, 0, NULL, NULL, 0,
     "address to listen on ([::1]:PORT for IPv6; port 0 = any free port)"},
    {"db", OPT_STRING, "PATH", "./genuproof.db", 0, 0, NULL, NULL, 0,
     "SQLite database file (created on first start)"},
    {"port-file", OPT_STRING, "FILE", NULL, 0, 0, NULL, NULL, 0,
     "write the bound port to FILE once listening"},
    {"demo-data", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0,
     "create the demo brand and products when missing (allows the dev signing secret)"},
    {"auth", OPT_ENUM, "on|none", "on", 0, 0, "on|none", NULL, 0,
     "none disables authentication (local demos, original clients)"},
    {"rate-limit", OPT_INT, "N", "50", 0, 1000000, NULL, NULL, 0,
     "requests/s per client IP on consumer endpoints (burst 2N); 0 = off"},
    {"trust-proxy", OPT_STRING, "LIST", "127.0.0.0/8,::1", 0, 0, NULL, NULL, 0,
     "addresses/CIDRs whose X-Forwarded-For and geo headers are believed ('none': no proxy)"},
    {"geoip", OPT_STRING, "FILE", NULL, 0, 0, NULL, NULL, 0,
     "MaxMind .mmdb database for country/city of direct clients"},
    {"signing-secret-file", OPT_STRING, "FILE", NULL, 0, 0, NULL, NULL, 0,
     "read the product signing secret from FILE (else env SIGNING_SECRET)"},
    {"cors-origin", OPT_STRING, "ORIGIN", NULL, 0, 0, NULL, NULL, 0,
     "send CORS headers allowing ORIGIN"},
    {"max-body", OPT_INT, "BYTES", "1048576", 1024, 67108864, NULL, NULL, 0,
     "largest request body accepted (413 beyond)"},
    {"durability", OPT_ENUM, "full|normal", "full", 0, 0, "full|normal", NULL, 0,
     "full: fsync every commit (a 2xx survives power loss); normal: survives a crash only"},
    {"base-url", OPT_STRING, "URL", "https://genuproof.com", 0, 0, NULL, "BASE_URL", 0,
     "public base URL used in verify links, QR codes and certificates"},
    {"no-detector", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0,
     "do not run the in-process threat detector (alerts wait until a server runs it)"},
    {"detector-batch", OPT_INT, "N", "100", 1, 1000, NULL, NULL, 0,
     "change-stream records per detector batch (one transaction each)"},
    OPT_DEF_OPS_LOG,
    {"detector-window", OPT_INT, "SEC", "0", 0, 3600, NULL, NULL, 0,
     "wait up to SEC seconds for a full detector batch; 0 = process at once"},
    {"sse-buffer", OPT_INT, "BYTES", "262144", 1024, 67108864, NULL, NULL, 0,
     "output buffer per SSE client (/api/stream); a client further behind is dropped"},
    {"sse-max-streams", OPT_INT, "N", "1000", 1, 1000000, NULL, NULL, 0,
     "concurrent /api/stream connections per brand (and for ?all=1); 429 beyond"},
    {"sse-mode", OPT_ENUM, "auto|push|poll", "auto", 0, 0, "auto|push|poll", NULL, 0,
     "live stream source: push from the change stream, or poll the GSI1 index every 250 ms "
     "(no scan events); auto = poll on DynamoDB, push otherwise"},
    /* Reserved for later versions (refused for now). */
    {"workers", OPT_INT, "N", "1", 1, 64, NULL, "GENUPROOF_WORKERS", 0,
     "worker processes sharing the port (SO_REUSEPORT); worker 0 runs the detector"},
    /* The store driver (issue 7). */
    {"store", OPT_ENUM, "sqlite|dynamodb", "sqlite", 0, 0, "sqlite|dynamodb", NULL, 0,
     "store driver: sqlite (--db) or dynamodb (table made by `genuproof table create`)"},
    {"dynamodb", OPT_STRING, "URL", NULL, 0, 0, NULL, NULL, 0,
     "DynamoDB endpoint; implies --store dynamodb (default: AWS_ENDPOINT_URL_DYNAMODB, else "
     "the AWS_REGION endpoint)"},
    {"table", OPT_STRING, "NAME", "authentik", 0, 0, NULL, "DYNAMODB_TABLE", 0,
     "DynamoDB table name"},
    /* Webhooks and the model classifier (H10). */
    {"allow-private-webhooks", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0,
     "let webhooks target private, loopback and link-local addresses (tests, labs)"},
    {"classifier", OPT_ENUM, "rules|gemini|openai", "rules", 0, 0, "rules|gemini|openai",
     "GENUPROOF_CLASSIFIER", 0,
     "threat classifier: rules, or a model re-classifying detector alerts (key from "
     "GEMINI_API_KEY / OPENAI_API_KEY; rules on any model error)"},
    {"classifier-url", OPT_STRING, "URL", NULL, 0, 0, NULL, "GENUPROOF_CLASSIFIER_URL", 0,
     "model API base URL (default: the provider's public endpoint)"},
    {"classifier-model", OPT_STRING, "NAME", NULL, 0, 0, NULL, "GENUPROOF_CLASSIFIER_MODEL", 0,
     "model name (default gemini-2.5-flash / gpt-4o-mini)"},
    {"classifier-timeout", OPT_INT, "SEC", "10", 1, 120, NULL, NULL, 0,
     "model call timeout in seconds (scaled); the rules stand when it passes"},
    {NULL, 0, NULL, NULL, 0, 0, NULL, NULL, 0, NULL},
};
/* clang-format on */

static int find(const struct opt_def *defs, const char *name, size_t len)
{
    for (int i = 0; defs[i].name; i++)
        if (strlen(defs[i].name) == len && !strncmp(defs[i].name, name, len))
            return i;
    return -1;
}

static int index_of(const struct opt_values *v, const char *name)
{
    return find(v->defs, name, strlen(name));
}

/* Checks value against the row's type.  0 or ERR_INVALID + message. */
static int check_value(const struct opt_def *d, const char *val, const char *src, char *err,
                       size_t errlen)
{
    if (d->type == OPT_INT) {
        char *end;
        errno = 0;
        long x = strtol(val, &end, 10);
        if (!*val || *end || errno || x < d->min || x > d->max) {
            snprintf(err, errlen, "%s: --%s: expected an integer from %ld to %ld, got '%s'", src,
                     d->name, d->min, d->max, val);
            return ERR_INVALID;
        }
    } else if (d->type == OPT_ENUM) {
        size_t n = strlen(val);
        const char *c = d->choices;
        while (c && *c) {
            size_t len = strcspn(c, "|");
            if (len == n && !strncmp(c, val, n))
                return 0;
            c += len + (c[len] == '|');
        }
        snprintf(err, errlen, "%s: --%s: expected one of %s, got '%s'", src, d->name, d->choices,
                 val);
        return ERR_INVALID;
    } else if (d->type == OPT_STRING && !*val) {
        snprintf(err, errlen, "%s: --%s: empty value", src, d->name);
        return ERR_INVALID;
    }
    return 0;
}

int opt_parse(const struct opt_def *defs, int argc, char **argv, struct opt_values *v, bool *help,
              char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    v->defs = defs;
    *help = false;
    while (defs[v->n].name)
        v->n++;
    if (v->n > OPT_MAX) {
        snprintf(err, errlen, "internal: option table too large");
        return ERR_INVALID;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            *help = true;
            return 0;
        }
        if (strncmp(a, "--", 2) || !a[2]) {
            snprintf(err, errlen, "unexpected argument '%s'", a);
            return ERR_INVALID;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        int k = find(defs, name, nlen);
        if (k < 0) {
            snprintf(err, errlen, "unknown option '--%.*s' (see --help)", (int)nlen, name);
            return ERR_INVALID;
        }
        const struct opt_def *d = &defs[k];
        if (d->flags & OPTF_LATER) {
            snprintf(err, errlen, "option --%s is not available in this version", d->name);
            return ERR_INVALID;
        }
        const char *val;
        if (d->type == OPT_FLAG) {
            if (eq) {
                snprintf(err, errlen, "option --%s takes no value", d->name);
                return ERR_INVALID;
            }
            val = "1";
        } else if (eq) {
            val = eq + 1;
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            snprintf(err, errlen, "option --%s needs a value (%s)", d->name,
                     d->metavar ? d->metavar : "VALUE");
            return ERR_INVALID;
        }
        if (check_value(d, val, "command line", err, errlen))
            return ERR_INVALID;
        v->val[k] = val;
        v->given[k] = true;
    }
    for (size_t k = 0; k < v->n; k++) {
        const struct opt_def *d = &defs[k];
        if (v->given[k] || (d->flags & OPTF_LATER))
            continue;
        const char *e = d->env ? getenv(d->env) : NULL;
        if (e && *e) {
            char src[96];
            snprintf(src, sizeof src, "environment %s", d->env);
            if (check_value(d, e, src, err, errlen))
                return ERR_INVALID;
            v->val[k] = e;
            v->given[k] = true;
        } else {
            v->val[k] = d->def;
        }
    }
    return 0;
}

const char *opt_str(const struct opt_values *v, const char *name)
{
    int k = index_of(v, name);
    return k < 0 ? NULL : v->val[k];
}

long opt_int(const struct opt_values *v, const char *name)
{
    const char *s = opt_str(v, name);
    return s ? strtol(s, NULL, 10) : 0;
}

bool opt_flag(const struct opt_values *v, const char *name)
{
    const char *s = opt_str(v, name);
    return s && *s;
}

bool opt_given(const struct opt_values *v, const char *name)
{
    int k = index_of(v, name);
    return k >= 0 && v->given[k];
}

void opt_usage(FILE *f, const char *cmd, const char *summary, const struct opt_def *defs)
{
    fprintf(f, "usage: genuproof %s [options]\n\n%s\n\noptions:\n", cmd, summary);
    for (int i = 0; defs[i].name; i++) {
        const struct opt_def *d = &defs[i];
        if (d->flags & OPTF_LATER)
            continue;
        char head[64];
        if (d->metavar && d->type != OPT_FLAG)
            snprintf(head, sizeof head, "--%s %s", d->name, d->metavar);
        else
            snprintf(head, sizeof head, "--%s", d->name);
        fprintf(f, "  %-30s %s", head, d->help);
        if (d->def && d->type != OPT_FLAG)
            fprintf(f, " (default %s)", d->def);
        if (d->env)
            fprintf(f, " [env %s]", d->env);
        fputc('\n', f);
    }
    fprintf(f, "  %-30s %s\n", "--help", "show this help");
}

bool opt_opslog_changes(const struct opt_values *o)
{
    const char *v = opt_str(o, "ops-log");
    return v && !strcmp(v, "changes");
}
