/*
 * cmd_tui.c - `genuproof tui`: parses the options of TUI.md §1 from one
 * table (command line > environment > ~/.config/genuproof/tui.ini >
 * default), fills a struct tui_config and runs the dashboard on libev's
 * default loop.  The config file holds `name = value` lines with the
 * option names (flags take true/false); `#` and `;` start comments and
 * [sections] are ignored.  Errors are reported as file:line.
 */
#include "cmd/cmd_tui.h"

#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/options.h"
#include "tui/tui.h"
#include "util/xalloc.h"

#define CONF_MAX (64u * 1024u)

/* clang-format off */
const struct opt_def tui_options[] = {
    {"url", OPT_STRING, "URL", "http://127.0.0.1:8080", 0, 0, NULL, "GENUPROOF_URL", 0,
     "server base URL"},
    {"api-key", OPT_STRING, "KEY", NULL, 0, 0, NULL, "GENUPROOF_API_KEY", 0,
     "API key (brand key, or the admin key for --all-brands, ops log and audit)"},
    {"brand", OPT_STRING, "ID[,ID]", NULL, 0, 0, NULL, NULL, 0,
     "brands to watch (one live stream each)"},
    {"all-brands", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0,
     "watch every brand (admin key)"},
    {"theme", OPT_STRING, "NAME", NULL, 0, 0, NULL, "GENUPROOF_THEME", 0,
     "theme: default-dark, light, kiosk-hc, mono or a NAME.theme on the search path"},
    {"theme-dir", OPT_STRING, "DIR", NULL, 0, 0, NULL, "GENUPROOF_THEME_DIR", 0,
     "first directory searched for themes"},
    {"color", OPT_ENUM, "auto|always|never", "auto", 0, 0, "auto|always|never", NULL, 0,
     "colour: always ignores NO_COLOR, never uses the mono attributes"},
    {"ascii", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0,
     "ASCII glyphs only (automatic without a UTF-8 locale)"},
    {"tz", OPT_ENUM, "utc|local", "utc", 0, 0, "utc|local", NULL, 0,
     "time zone of displayed times (exports are always UTC)"},
    {"readonly", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0,
     "never send a POST (no recall, no resolve)"},
    {"kiosk", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0,
     "wall-monitor mode: read-only, rotating views, critical takeover, never exits"},
    {"rotate", OPT_INT, "SEC", "20", 1, 86400, NULL, NULL, 0,
     "kiosk: seconds per view"},
    {"views", OPT_STRING, "LIST", "overview,feed,map,ops", 0, 0, NULL, NULL, 0,
     "kiosk: views to rotate through"},
    {"takeover", OPT_ENUM, "critical|high|medium|low", "critical", 0, 0,
     "critical|high|medium|low", NULL, 0,
     "kiosk: lowest severity that takes the screen over"},
    {"shift", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0,
     "kiosk: move the frame one column every 15 minutes (burn-in)"},
    {"bell", OPT_ENUM, "off|critical|high", "off", 0, 0, "off|critical|high", NULL, 0,
     "ring the bell for new threats (at most once per 10 s)"},
    {"mouse", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0,
     "enable the mouse wheel"},
    {"days", OPT_INT, "N", "7", 1, 31, NULL, NULL, 0,
     "ops-log days shown"},
    {"record", OPT_STRING, "FILE", NULL, 0, 0, NULL, NULL, 0,
     "append every event and reply to FILE as JSONL"},
    {"replay", OPT_STRING, "FILE", NULL, 0, 0, NULL, NULL, 0,
     "play a --record file as live (no network)"},
    {"speed", OPT_STRING, "N", "1", 0, 0, NULL, NULL, 0,
     "replay speed factor"},
    {"plain", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0,
     "no curses: one tab-separated line per threat (also TERM=dumb, non-tty stdout)"},
    {"config", OPT_STRING, "FILE", NULL, 0, 0, NULL, NULL, 0,
     "config file (default ~/.config/genuproof/tui.ini; 'none' reads none)"},
    {NULL, 0, NULL, NULL, 0, 0, NULL, NULL, 0, NULL},
};
/* clang-format on */

static bool truthy(const char *v)
{
    return !strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
           !strcasecmp(v, "on");
}

static bool in_choices(const char *choices, const char *v)
{
    size_t n = strlen(v);
    while (choices && *choices) {
        size_t len = strcspn(choices, "|");
        if (len == n && !strncmp(choices, v, n))
            return true;
        choices += len + (choices[len] == '|');
    }
    return false;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/*
 * Applies the config file to the options not set on the command line or
 * by the environment.  The values point into *text (the caller frees).
 * A missing default file is fine.  On error returns -1 with "file:line:
 * message" in err; on success 0.
 */
static int apply_config(const char *path, bool explicit, struct opt_values *v, char **text,
                        char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    int rc = 0, line = 0;
    if (!f) {
        if (!explicit && errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *buf = xmalloc(CONF_MAX + 1);
    size_t n = fread(buf, 1, CONF_MAX + 1, f);
    fclose(f);
    if (n > CONF_MAX) {
        snprintf(err, errlen, "%s: larger than %u bytes", path, CONF_MAX);
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *text = buf;
    for (char *p = buf, *next; p && *p && !rc; p = next) {
        next = strchr(p, '\n');
        if (next)
            *next++ = '\0';
        line++;
        char *s = trim(p);
        if (!*s || *s == '#' || *s == ';' || *s == '[')
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected name = value", path, line);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *name = trim(s), *val = trim(eq + 1);
        size_t k;
        for (k = 0; k < v->n; k++)
            if (!strcmp(v->defs[k].name, name))
                break;
        if (k == v->n || !strcmp(name, "config")) {
            snprintf(err, errlen, "%s:%d: unknown option '%s'", path, line, name);
            rc = -1;
            break;
        }
        const struct opt_def *d = &v->defs[k];
        if (v->given[k])
            continue; /* flags and env win */
        if (d->type == OPT_FLAG) {
            v->val[k] = truthy(val) ? "1" : NULL;
        } else if (d->type == OPT_ENUM && !in_choices(d->choices, val)) {
            snprintf(err, errlen, "%s:%d: %s: expected one of %s", path, line, name, d->choices);
            rc = -1;
        } else if (d->type == OPT_INT) {
            char *end;
            long x = strtol(val, &end, 10);
            if (!*val || *end || x < d->min || x > d->max) {
                snprintf(err, errlen, "%s:%d: %s: expected %ld..%ld", path, line, name, d->min,
                         d->max);
                rc = -1;
            } else {
                v->val[k] = val;
            }
        } else if (!*val) {
            snprintf(err, errlen, "%s:%d: %s: empty value", path, line, name);
            rc = -1;
        } else {
            v->val[k] = val;
        }
    }
    return rc;
}

int cmd_tui(int argc, char **argv)
{
    struct opt_values o;
    struct tui_config cfg;
    bool help;
    char err[4096], confpath[1024];
    char *conftext = NULL, *brands = NULL;
    int rc = 2;

    if (opt_parse(tui_options, argc, argv, &o, &help, err, sizeof err)) {
        fprintf(stderr, "genuproof tui: %s\n", err);
        return 2;
    }
    if (help) {
        opt_usage(stdout, "tui", "The terminal dashboard: live threats, scans, ops log and health.",
                  tui_options);
        return 0;
    }
    const char *conf = opt_str(&o, "config");
    if (!conf) {
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        if (xdg && *xdg)
            snprintf(confpath, sizeof confpath, "%s/genuproof/tui.ini", xdg);
        else
            snprintf(confpath, sizeof confpath, "%s/.config/genuproof/tui.ini", home ? home : ".");
        conf = confpath;
    }
    if (strcmp(conf, "none") != 0 &&
        apply_config(conf, opt_given(&o, "config"), &o, &conftext, err, sizeof err)) {
        fprintf(stderr, "genuproof tui: %s\n", err);
        goto out;
    }

    tui_config_defaults(&cfg);
    cfg.url = opt_str(&o, "url");
    cfg.api_key = opt_str(&o, "api-key");
    cfg.all_brands = opt_flag(&o, "all-brands");
    if (opt_str(&o, "brand")) {
        brands = xstrdup(opt_str(&o, "brand"));
        for (char *save = NULL, *t = strtok_r(brands, ",", &save); t;
             t = strtok_r(NULL, ",", &save)) {
            t = trim(t);
            if (!*t)
                continue;
            if (cfg.nbrands >= TUI_BRANDS_MAX) {
                fprintf(stderr, "genuproof tui: at most %d brands\n", TUI_BRANDS_MAX);
                goto out;
            }
            cfg.brands[cfg.nbrands++] = t;
        }
    }
    if (!cfg.nbrands && !cfg.all_brands && !opt_str(&o, "replay")) {
        fprintf(stderr, "genuproof tui: give --brand ID[,ID] or --all-brands (see --help)\n");
        goto out;
    }
    cfg.theme = opt_str(&o, "theme");
    cfg.theme_dir = opt_str(&o, "theme-dir");
    const char *color = opt_str(&o, "color");
    cfg.color = !strcmp(color, "always")  ? TUI_COLOR_ALWAYS
                : !strcmp(color, "never") ? TUI_COLOR_NEVER
                                          : TUI_COLOR_AUTO;
    cfg.ascii = opt_flag(&o, "ascii");
    cfg.tz_local = !strcmp(opt_str(&o, "tz"), "local");
    cfg.readonly = opt_flag(&o, "readonly");
    cfg.kiosk = opt_flag(&o, "kiosk");
    cfg.rotate_s = (double)opt_int(&o, "rotate");
    cfg.views = opt_str(&o, "views");
    cfg.takeover = opt_str(&o, "takeover");
    cfg.shift = opt_flag(&o, "shift");
    const char *bell = opt_str(&o, "bell");
    cfg.bell = !strcmp(bell, "critical") ? TUI_BELL_CRITICAL
               : !strcmp(bell, "high")   ? TUI_BELL_HIGH
                                         : TUI_BELL_OFF;
    cfg.mouse = opt_flag(&o, "mouse");
    cfg.ops_days = (int)opt_int(&o, "days");
    cfg.record_path = opt_str(&o, "record");
    cfg.replay_path = opt_str(&o, "replay");
    char *end;
    cfg.speed = strtod(opt_str(&o, "speed"), &end);
    if (*end || !(cfg.speed > 0 && cfg.speed <= 10000)) {
        fprintf(stderr, "genuproof tui: --speed: expected a number above 0\n");
        goto out;
    }
    cfg.plain = opt_flag(&o, "plain");
    if (cfg.kiosk)
        cfg.readonly = true;

    rc = tui_run(EV_DEFAULT, &cfg) ? 1 : 0;
out:
    free(brands);
    free(conftext);
    return rc;
}
