#!/usr/bin/env bash
# tests/e2e/webhook_lookup.sh - webhook registration looks the target's
# name up off the loop: while a slow name server answers, other requests
# are served; the registration answers once the name is known (200, the
# item written, audited and still there after a restart), 400 for a
# private answer or a lookup that outlives its deadline; a client that
# hangs up meanwhile costs nothing but the lookup; SIGTERM with a lookup
# pending answers it and exits 0.
# Name servers of every speed come from an LD_PRELOAD getaddrinfo()
# (tests/tools/slow_dns.c): slow.gp-test answers a public address after
# SLOW_DNS_MS, hang.gp-test after 10 s, private.gp-test 10.0.0.5.
set -u
. "$(dirname "$0")/lib.bash"

SHIM="$(cd "$(dirname "$0")/../.." && pwd)/build/san/tests/slow_dns.so"
if [ ! -f "$SHIM" ]; then
    echo "FAIL: $SHIM not built (make test-build)"
    gp_finish
fi
# Real seconds: the lookup's deadline is 3 s scaled.
export GENUPROOF_TIME_SCALE=1
export LD_PRELOAD="$SHIM"
export SLOW_DNS_MS=1500
# The shim comes before the sanitizer runtime in the library list.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:verify_asan_link_order=0"

gp_start || gp_finish
unset LD_PRELOAD # curl and jq resolve for real

req POST /api/brands '{"name":"Lookup Brand","domain":"lookup.example","industry":"fashion"}'
A=$(jb .id)
KA=$(jb .apiKey)
check "setup: brand" '[ -n "$A" ] && [ -n "$KA" ]'

post_hook() { # $1 = url, $2 = out file, [$3 = max time]: background POST
    curl -s -o "$2" -w '%{http_code} %{time_total}\n' --max-time "${3:-20}" \
        -H "Authorization: Bearer $KA" -H 'Content-Type: application/json' \
        --data-binary "{\"brandId\":\"$A\",\"url\":\"$1\"}" "$GP_URL/api/webhooks" >"$2.w" 2>/dev/null
}
hook_count() {
    AUTH="Bearer $KA" req GET "/api/webhooks?brandId=$A"
    jb '.webhooks | length'
}

# ---- a slow name: other requests go on meanwhile ----
post_hook "https://slow.gp-test/hook" "$GP_DIR/slow" &
POST_PID=$!
sleep 0.2
FAST=0
for i in 1 2 3 4 5; do
    T=$(curl -s -o /dev/null -w '%{time_total}' --max-time 5 "$GP_URL/api/health")
    awk -v t="$T" 'BEGIN { exit !(t < 0.5) }' && FAST=$((FAST + 1))
done
check "5 health requests answered in < 0.5 s each during the lookup" '[ "$FAST" = 5 ]'
check "the registration was still waiting for the name" 'kill -0 $POST_PID 2>/dev/null'
wait "$POST_PID"
read -r CODE TOTAL <"$GP_DIR/slow.w"
BODY=$(cat "$GP_DIR/slow")
check "slow name: 200 once it is known" '[ "$CODE" = 200 ]'
check "slow name: answered after the lookup (>= 1.4 s: $TOTAL)" \
    'awk -v t="$TOTAL" "BEGIN { exit !(t >= 1.4) }"'
check_json "slow name: the webhook and its secret" \
    '(.id | length) > 0 and (.secret | startswith("whsec_")) and .url == "https://slow.gp-test/hook"'
W1=$(jb .id)
check "listed" '[ "$(hook_count)" = 1 ]'
AUTH="Bearer $KA" req GET "/api/webhooks?brandId=$A"
check_json "listed with its url" ".webhooks[0].id == \"$W1\" and .webhooks[0].url == \"https://slow.gp-test/hook\""
req GET "/api/audit?limit=50"
check_json "audited" \
    "[.entries[] | select(.action == \"webhook.created\" and .details == \"$W1\" and .brandId == \"$A\")] | length == 1"

# ---- answers that refuse ----
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"https://private.gp-test/x\"}"
check_status "a name with a private address: 400" 400
check_json "private message" '.error == "Webhook URL must not point to a private or loopback address"'
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"https://unknown.gp-test/x\"}"
check_status "an unknown name: 400" 400
check_json "unknown name message" '.error == "Webhook host cannot be resolved"'
T0=$(date +%s.%N)
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"https://hang.gp-test/x\"}"
T1=$(date +%s.%N)
check_status "a lookup past its deadline: 400" 400
check_json "deadline message" '.error == "Webhook host cannot be resolved"'
check "answered at the deadline (about 3 s)" \
    'awk -v a="$T0" -v b="$T1" "BEGIN { d = b - a; exit !(d >= 2.5 && d < 8) }"'
check "refused names were not registered" '[ "$(hook_count)" = 1 ]'

# ---- the client gives up first ----
post_hook "https://slow.gp-test/gone" "$GP_DIR/gone" 0.3
read -r CODE TOTAL <"$GP_DIR/gone.w"
check "client gave up before the answer" '[ "$CODE" = 000 ]'
sleep 1.8
check "server still up" 'kill -0 $GP_PID 2>/dev/null'
# A client's FIN reads as a half-close (http.h): it is answered, then
# closed, so the registration is made like any other.
check "the registration of a half-closed client is made" '[ "$(hook_count)" = 2 ]'
NOAUTH=1 req GET /api/health
check_status "and the server answers" 200

# ---- keep-alive: the next request on the connection waits its turn ----
OUT=$(curl -s --max-time 10 -H "Authorization: Bearer $KA" -H 'Content-Type: application/json' \
    --data-binary "{\"brandId\":\"$A\",\"url\":\"https://slow.gp-test/second\"}" "$GP_URL/api/webhooks" \
    --next -s --max-time 10 "$GP_URL/api/health")
check "same connection: the registration, then the next request" \
    'printf "%s" "$OUT" | grep -q "slow.gp-test/second" && printf "%s" "$OUT" | grep -q "\"status\""'
check "three registered" '[ "$(hook_count)" = 3 ]'

# ---- restart: what was answered 200 is there ----
gp_stop
check "clean stop" '[ "$GP_STOP_RC" = 0 ]'
export LD_PRELOAD="$SHIM"
gp_start || gp_finish
unset LD_PRELOAD
check "after a restart the three webhooks are there" '[ "$(hook_count)" = 3 ]'

# ---- SIGTERM with a lookup pending ----
post_hook "https://hang.gp-test/stop" "$GP_DIR/stop" &
POST_PID=$!
sleep 0.3
T0=$(date +%s.%N)
gp_stop
T1=$(date +%s.%N)
wait "$POST_PID"
check "SIGTERM with a lookup pending: exit 0" '[ "$GP_STOP_RC" = 0 ]'
check "it drained within the lookup's deadline" \
    'awk -v a="$T0" -v b="$T1" "BEGIN { exit !(b - a < 6) }"'
read -r CODE TOTAL <"$GP_DIR/stop.w"
check "the pending registration got its answer (400) before the exit" '[ "$CODE" = 400 ]'
check "no sanitizer report" '! grep -q "Sanitizer" "$GP_LOG"'

gp_finish
