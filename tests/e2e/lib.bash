# tests/e2e/lib.bash - helpers for end-to-end scripts (sourced, not run).
#
#   gp_start [serve args...]   starts "$GENUPROOF_BIN serve" on 127.0.0.1 with an
#                              ephemeral port and a temp database; sets
#                              GP_URL, GP_PID, GP_DIR, GP_DB, GP_LOG, GP_ADMIN_KEY.
#                              Extra args are passed to serve (e.g. --demo-data).
#   gp_stop                    SIGTERM, wait (max 10 s), then SIGKILL.
#   gp_restart [args...]       stop and start again on the same database and port.
#   req METHOD PATH [JSON] [curl args...]
#                              sets STATUS, BODY (and HEADERS file $GP_DIR/h) for
#                              a request with the admin key unless NOAUTH=1 or
#                              AUTH="Bearer ..." is set.
#   check NAME COND...         evaluates "COND..." with test(1)-like eval; prints PASS/FAIL
#   check_json NAME JQ_EXPR    PASS when `jq -e JQ_EXPR` holds on $BODY
#   check_status NAME CODE     PASS when $STATUS == CODE
#   jb JQ_EXPR                 prints jq -r JQ_EXPR of $BODY
#   gp_finish                  prints the summary line of this script and exits 1 on failure
#   DEMO_BRAND, DEMO_PRODUCTS  ids of --demo-data's brand and five products
#                              (API.md's demo data set, src/api/demo.c); DEMO_PRODUCT
#                              is the first, the watch.  demo.sh checks the set itself.
set -u
DEMO_BRAND=5019622c-9860-4b83-a5c6-adb82ebd0412
DEMO_PRODUCTS=(e084595c97320cfcc85309943f345760 a203cf1574baa2a0e3465ad645057a34
    7f03eff9d91d3126ab499c0c5ced1eb4 992f9b2101e397ca04af4146331d3392
    fc7dc14042f82f28cbb7691a402fdcae)
DEMO_PRODUCT=${DEMO_PRODUCTS[0]}
GP_FAILS=0
GP_PASSES=0
: "${GENUPROOF_BIN:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/san/genuproof}"
export GENUPROOF_TIME_SCALE="${GENUPROOF_TIME_SCALE:-0.05}"
GP_DIR=$(mktemp -d /tmp/gp-e2e.XXXXXX)
GP_DB="$GP_DIR/genuproof.db"
GP_LOG="$GP_DIR/server.log"
GP_PID=""
GP_PORT=0
GP_ADMIN_KEY="gpadmin_$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export GP_ADMIN_KEY

gp_cleanup() {
    if [ -n "$GP_PID" ] && kill -0 "$GP_PID" 2>/dev/null; then kill -9 "$GP_PID" 2>/dev/null; fi
    rm -rf "$GP_DIR"
}
trap gp_cleanup EXIT

gp_start() {
    rm -f "$GP_DIR/port"
    GENUPROOF_ADMIN_KEY="$GP_ADMIN_KEY" SIGNING_SECRET="${SIGNING_SECRET:-e2e-test-secret}" \
        "$GENUPROOF_BIN" serve --listen "127.0.0.1:$GP_PORT" --db "$GP_DB" \
        --port-file "$GP_DIR/port" "$@" >>"$GP_LOG" 2>&1 &
    GP_PID=$!
    local i
    for i in $(seq 1 200); do
        if [ -s "$GP_DIR/port" ]; then
            GP_PORT=$(cat "$GP_DIR/port")
            GP_URL="http://127.0.0.1:$GP_PORT"
            return 0
        fi
        kill -0 "$GP_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "FAIL: server did not start"; tail -n 40 "$GP_LOG"; GP_FAILS=$((GP_FAILS + 1))
    return 1
}

gp_stop() {
    [ -n "$GP_PID" ] || return 0
    kill -TERM "$GP_PID" 2>/dev/null
    local i
    for i in $(seq 1 200); do kill -0 "$GP_PID" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$GP_PID" 2>/dev/null
    wait "$GP_PID" 2>/dev/null
    GP_STOP_RC=$?
    GP_PID=""
}

gp_restart() { gp_stop; gp_start "$@"; }

req() {
    local method=$1 path=$2 data=${3:-}
    shift 3 2>/dev/null || shift $#
    local auth=()
    if [ "${NOAUTH:-0}" != 1 ]; then auth=(-H "Authorization: ${AUTH:-Bearer $GP_ADMIN_KEY}"); fi
    local args=(-s -S -o "$GP_DIR/b" -D "$GP_DIR/h" -w '%{http_code}' -X "$method" --max-time 20 "${auth[@]}")
    if [ -n "$data" ]; then args+=(-H 'Content-Type: application/json' --data-binary "$data"); fi
    STATUS=$(curl "${args[@]}" "$@" "$GP_URL$path")
    BODY=$(cat "$GP_DIR/b")
}

pass() { echo "PASS: $1"; GP_PASSES=$((GP_PASSES + 1)); }
fail() { echo "FAIL: $1"; GP_FAILS=$((GP_FAILS + 1)); }

check() {
    local name=$1; shift
    if eval "$@"; then pass "$name"; else fail "$name"; echo "  condition: $*"; fi
}

check_status() {
    if [ "$STATUS" = "$2" ]; then pass "$1"; else fail "$1"; echo "  status $STATUS (want $2): ${BODY:0:300}"; fi
}

check_json() {
    if printf '%s' "$BODY" | jq -e "$2" >/dev/null 2>&1; then pass "$1"; else
        fail "$1"; echo "  jq $2 on: ${BODY:0:400}"; fi
}

jb() { printf '%s' "$BODY" | jq -r "$1"; }

# wait_until "COND" [tries]: evaluates COND every $WAIT_STEP s (default
# 0.1) until it holds, at most tries times (default 100).
wait_until() {
    local i
    for i in $(seq 1 "${2:-100}"); do eval "$1" && return 0; sleep "${WAIT_STEP:-0.1}"; done
    return 1
}

gp_finish() {
    echo "# $(basename "$0"): $GP_PASSES passed, $GP_FAILS failed"
    [ "$GP_FAILS" -eq 0 ]
    exit $?
}
