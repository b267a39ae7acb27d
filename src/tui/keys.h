/*
 * keys.h - the dashboard's key handling as a pure state machine
 * (TUI.md §5): one table of bindings drives both the dispatch and the
 * help overlay, and every key is handled by keys_handle(state, model,
 * key, now) without curses or network.  Whatever needs the outside world
 * (refresh, export, theme change, recall, resolve, opening a product) is
 * returned as a request in struct ui_req for the glue (tui.c) to carry
 * out, so tests drive the whole key map with plain function calls.
 */
#ifndef GP_TUI_KEYS_H
#define GP_TUI_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/model.h"
#include "tui/views.h"

/* Key codes: Unicode code points for text keys, these above for the rest
 * (screen.c maps curses' KEY_* onto them). */
enum {
    TK_CTRL_C = 3,
    TK_TAB = 9,
    TK_ENTER = 10,
    TK_CTRL_L = 12,
    TK_ESC = 27,
    TK_BACKSPACE = 127,
    TK_BASE = 0x110000,
    TK_UP,
    TK_DOWN,
    TK_LEFT,
    TK_RIGHT,
    TK_PGUP,
    TK_PGDN,
    TK_HOME,
    TK_END,
    TK_BTAB, /* Shift-Tab */
    TK_F1,
    TK_F5,
    TK_RESIZE,
    TK_MOUSE_UP, /* wheel (only with --mouse) */
    TK_MOUSE_DOWN
};

enum ui_mode {
    UI_NORMAL = 0,
    UI_HELP,          /* ?/F1 overlay, filtered as you type */
    UI_FILTER,        /* / prompt */
    UI_COMMAND,       /* : prompt */
    UI_QUIT,          /* q: "Quit? (y/N)" */
    UI_PICKER,        /* b: brand picker */
    UI_RECALL_REASON, /* X: reason prompt */
    UI_RECALL_CODE    /* X: type the product code */
};

/* Reaction flags returned by keys_handle (htop's Htop_Reaction). */
#define UI_REDRAW 0x01u /* the frame changed */
#define UI_FULL   0x02u /* repaint every cell (Ctrl-L, theme change) */
#define UI_QUITF  0x04u /* leave tui_run */
#define UI_REQ    0x08u /* req holds a request for the glue */

enum ui_req_kind {
    REQ_NONE = 0,
    REQ_REFRESH,        /* R / F5: net_refresh */
    REQ_EXPORT_JSONL,   /* e / :export */
    REQ_EXPORT_CSV,     /* E / :export csv */
    REQ_THEME_CYCLE,    /* T */
    REQ_THEME_SET,      /* :theme NAME (arg) */
    REQ_OPEN_PRODUCT,   /* c / :product ID (arg): fetch it for the chain view */
    REQ_BRAND_PRODUCTS, /* l: the brand's products list */
    REQ_PRODUCT_SCANS,  /* v in the chain view */
    REQ_RECALL,         /* arg = product id, arg2 = reason */
    REQ_RESOLVE,        /* arg = alert id, num = brand index */
    REQ_DAYS,           /* num = ops days */
    REQ_SUBSCRIBE,      /* picker: the subscribed set changed */
    REQ_BRAND,          /* the current brand changed (num) */
    REQ_BELL_TEST       /* nothing yet; reserved */
};

struct ui_req {
    enum ui_req_kind kind;
    long num;
    char arg[128];
    char arg2[256];
};

#define UI_INPUT_MAX  200
#define UI_BRANDS_MAX 64

struct ui_state {
    enum view_id view;
    enum ui_mode mode;
    size_t brand; /* current brand (model index) */
    size_t nbrands;
    bool subscribed[UI_BRANDS_MAX]; /* picker: streams wanted */
    size_t picker_sel;
    bool readonly, kiosk, tz_local;
    int bell;                 /* enum tui_bell */
    char input[UI_INPUT_MAX]; /* text of the open prompt */
    size_t input_len;
    char help_filter[64];
    char last_filter[UI_INPUT_MAX]; /* for n/N */
    /* view context the keys change */
    bool feed_detail;
    char chain_product_id[64];
    char chain_code[64]; /* the code to type to confirm a recall */
    size_t chain_sel;
    bool chain_expanded, chain_scans;
    bool chain_pick;       /* l: the brand's products to open one of */
    size_t chain_pick_sel; /* the selected product of the list */
    bool heat_reads;       /* Heat view shows reads (RCU) instead of writes (w toggles) */
    bool map_product;
    char map_product_id[64];
    int ops_days;
    size_t scroll;
    int page_rows; /* rows of the current list (PgUp/PgDn); set by the glue */
    char recall_reason[UI_INPUT_MAX];
    char message[160]; /* one-line notice in the status bar */
    int64_t message_until_ms;
};

/* One entry of the key table (also the help overlay's lines). */
struct key_binding {
    const char *keys; /* label, e.g. "j k ↓ ↑" */
    const char *help;
    unsigned views; /* bit per enum view_id; 0 = every view */
};

/* Sets defaults: Overview, normal mode, every brand subscribed. */
void ui_state_init(struct ui_state *s, size_t nbrands, bool readonly, bool kiosk);
/*
 * Handles one key at wall-clock now_ms.  Kiosk mode ignores every key
 * but Ctrl-C.  Returns UI_* flags; with UI_REQ, *req says what the glue
 * must do (req is always reset first).
 */
unsigned keys_handle(struct ui_state *s, struct model *m, int key, int64_t now_ms,
                     struct ui_req *req);
/* Sets a status-bar notice shown for ms milliseconds. */
void ui_notice(struct ui_state *s, int64_t now_ms, int64_t ms, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The binding table (ends with keys == NULL) for the help overlay. */
const struct key_binding *keys_table(void);
/* The short hint line of a view ("j/k move  Enter open ..."). */
const char *keys_hint(enum view_id v, bool readonly);
/* Fills a view context from the state (pointers into s stay valid while s
 * does). */
void ui_fill_ctx(const struct ui_state *s, struct view_ctx *ctx);
/* Runs a `:` command line (without the colon); req is reset first.  Exposed for tests. */
unsigned keys_command(struct ui_state *s, struct model *m, const char *line, int64_t now_ms,
                      struct ui_req *req);

#endif
