#!/usr/bin/env bash
# ddb_detect.sh - `genuproof detect` on DynamoDB Local: the detector
# scenarios (geographic anomaly over 3 countries, burst) raise their alerts
# exactly once; two detectors share the stream through leases, and when the
# one reading the shard is killed (-9) the other takes over within two
# lease periods with exact alert counts; a scan parked because its product
# was missing is replayed through `serve` once the product exists, and
# counted once (alert, threatCount, the product's and the brand's scanCount).
set -u
cd "$(dirname "$0")/../.."
: "${GENUPROOF_BIN:=$PWD/build/san/genuproof}"
export GENUPROOF_TIME_SCALE="${GENUPROOF_TIME_SCALE:-0.05}"
export AWS_ACCESS_KEY_ID=e2e AWS_SECRET_ACCESS_KEY=e2e AWS_REGION=us-east-1 NODE_NO_WARNINGS=1
unset AWS_SESSION_TOKEN AWS_PROFILE
fails=0
dir=$(mktemp -d /tmp/gp-ddb-detect.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
    tests/tools/ddb_local.sh stop "$dir/ddb" >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }

if ! command -v java >/dev/null || ! command -v node >/dev/null; then
    echo "SKIP: ddb_detect (java or node missing)"
    exit 0
fi
# From $dir: DynamoDB Local leaves a metadata file in its working directory.
port=$(cd "$dir" && "$OLDPWD/tests/tools/ddb_local.sh" start "$dir/ddb") || { echo "SKIP: ddb_detect (DynamoDB Local did not start)"; exit 0; }
url="http://127.0.0.1:$port"
table=gp-detect-e2e
# Lease period: 20 s scaled by 0.05 = 1 s.
lease_s=20
lease_ms=$(awk -v s="$lease_s" -v k="$GENUPROOF_TIME_SCALE" 'BEGIN { printf "%d", s * k * 1000 }')

helper() { node tests/e2e/ddb_detect.js "$url" "$table" "$@"; }
stats() { helper stats b-e2e; }
# jq -e on the stats in $S; false when there are none.
sj() { [ -n "$S" ] && echo "$S" | jq -e "$1" >/dev/null; }

start_detector() { # $1 = worker id; sets DET_PID
    "$GENUPROOF_BIN" detect --dynamodb "$url" --table "$table" --worker-id "$1" \
        --lease-s "$lease_s" --poll-ms 100 >>"$dir/$1.log" 2>&1 &
    DET_PID=$!
    pids+=("$DET_PID")
}

# Polls until jq expression $2 holds on the stats (at most $1 seconds).
wait_stats() {
    local limit=$1 expr=$2 t0=$SECONDS
    while [ $((SECONDS - t0)) -lt "$limit" ]; do
        S=$(stats) && sj "$expr" && return 0
        sleep 0.3
    done
    S=$(stats)
    return 1
}

if "$GENUPROOF_BIN" table create --dynamodb "$url" --table "$table" --wait 30 >/dev/null 2>"$dir/create.log"; then
    pass "table created with its stream"
else
    fail "table create"; cat "$dir/create.log"; exit 1
fi

# ---- single worker: scenarios ----
helper geo g 3 && helper burst pb || fail "seeding scans"
start_detector w1
w1=$DET_PID
if wait_stats 30 '.geo == 3 and .burst == 1 and .threatCount == 4'; then
    pass "geographic anomaly x3 and burst raised"
else
    fail "alerts after the first batch: $S"
fi
sleep 1 # idle rounds must not add anything
S=$(stats)
sj '.counts.geographic_anomaly == [1,1,1] and .counts.burst_scan == [3]' \
    && pass "each alert once, burst count 3" || fail "alert counts: $S"
sj '.threatCount == 4 and .opslog == 6' \
    && pass "threatCount and ops log exact" || fail "counters: $S"
sj '.leases | length == 1 and .[0].owner == "w1"' \
    && pass "w1 holds the shard lease" || fail "leases: $S"

# ---- restart: nothing processed twice ----
kill -TERM "$w1"
wait "$w1"; rc=$?
[ "$rc" -eq 0 ] && pass "detect exits 0 on SIGTERM" || fail "detect exit status $rc"
grep -q '"msg":"detect: stopping"' "$dir/w1.log" && pass "JSON log lines" || fail "log: $(tail -3 "$dir/w1.log")"
start_detector w1
w1=$DET_PID
sleep 2
S=$(stats)
sj '.geo == 3 and .threatCount == 4 and .opslog == 6' \
    && pass "restart from the checkpoint changes nothing" || fail "after restart: $S"

# ---- two workers, the owner killed ----
start_detector w2
w2=$DET_PID
sleep 1
helper geo h 10 || fail "seeding phase 2"
if wait_stats 30 '.geo == 13'; then pass "phase 2 processed"; else fail "phase 2: $S"; fi
owner=$(echo "$S" | jq -r '.leases[0].owner')
if [ "$owner" = w1 ]; then victim=$w1; survivor=w2; else victim=$w2; survivor=w1; fi
# Kill the owner while phase 3 is being written and read.
helper geo k 10 &
seeder=$!
sleep 1
t_kill=$(date +%s%3N)
kill -9 "$victim"
wait "$victim" 2>/dev/null
wait "$seeder" || fail "seeding phase 3"
if wait_stats 30 ".geo == 23 and (.leases[0].owner == \"$survivor\")"; then
    pass "$survivor took over the shard of the killed $owner"
else
    fail "takeover: $S"
fi
# The survivor's last "leased shard" log line: within 2 lease periods of
# the kill (plus 300 ms for a round under the sanitizers).
t_lease=$(grep '"msg":"ddb detector [^"]*: leased shard' "$dir/$survivor.log" | tail -1 | jq -r .time)
took=$(( $(date -d "$t_lease" +%s%3N) - t_kill ))
[ "$took" -ge 0 ] && [ "$took" -le $((2 * lease_ms + 300)) ] \
    && pass "takeover ${took} ms after the kill (lease ${lease_ms} ms)" \
    || fail "takeover ${took} ms after the kill (lease ${lease_ms} ms)"
sleep 1
S=$(stats)
sj '(.counts.geographic_anomaly | length == 23 and all(. == 1)) and .threatCount == 24 and .opslog == 26' \
    && pass "no record skipped or counted twice across the takeover" || fail "final counts: $S"

# ---- a parked scan replayed through `serve` on the same table ----
before=$(helper counts o-1 b-e2e)
t_before=$(stats | jq .threatCount)
helper orphan o-1 || fail "seeding the orphan scan"
t0=$SECONDS
while [ $((SECONDS - t0)) -lt 30 ]; do
    [ "$(helper counts o-1 b-e2e | jq .dlq)" = 1 ] && break
    sleep 0.3
done
[ "$(helper counts o-1 b-e2e | jq .dlq)" = 1 ] && pass "scan of a missing product parked" \
    || fail "no dead letter: $(helper counts o-1 b-e2e)"
admin=e2e-admin-key-0123456789abcdef0123456789
printf 'e2e-signing-secret-0123456789abcdef' >"$dir/secret"
GENUPROOF_ADMIN_KEY=$admin "$GENUPROOF_BIN" serve --dynamodb "$url" --table "$table" \
    --listen 127.0.0.1:0 --port-file "$dir/serve.port" --signing-secret-file "$dir/secret" \
    >>"$dir/serve.log" 2>&1 &
pids+=("$!")
for _ in $(seq 100); do [ -s "$dir/serve.port" ] && break; sleep 0.1; done
api="http://127.0.0.1:$(cat "$dir/serve.port" 2>/dev/null)"
A="Authorization: Bearer $admin"
dl=$(curl -s -H "$A" "$api/api/admin/dlq")
echo "$dl" | jq -e '.count == 1 and (.records[0].streamPos | test("^[0-9]{40}@shardId-")) and .records[0].reader != "detector"' >/dev/null \
    && pass "dead letter listed with its stream position" || fail "dlq: $dl"
seq=$(echo "$dl" | jq .records[0].seq)
out=$(curl -s -H "$A" -d '{"all":true}' "$api/api/admin/dlq/replay")
echo "$out" | jq -e '.replayed == 0 and .failed == 1 and (.results[0].error | test("still cannot be processed"))' >/dev/null \
    && pass "replay refused while the product is missing" || fail "early replay: $out"
helper product o-1 || fail "writing the product"
out=$(curl -s -H "$A" -d '{"all":true}' "$api/api/admin/dlq/replay")
echo "$out" | jq -e '.replayed == 1 and .failed == 0 and .results[0].alertsCreated == 1 and .results[0].opsLog == 1' >/dev/null \
    && pass "replayed once the product exists" || fail "replay: $out"
sleep 1 # the running detector must not count it again
after=$(helper counts o-1 b-e2e)
jq -n --argjson b "$before" --argjson a "$after" -e '$a.scanCount == 1 and $a.brandScans == $b.brandScans + 1 and $a.dlq == 0' >/dev/null \
    && pass "the replayed scan counted once (product and brand scanCount)" || fail "counts: $before -> $after"
[ "$(stats | jq .threatCount)" = $((t_before + 1)) ] && pass "threatCount +1" || fail "threatCount: $t_before -> $(stats | jq .threatCount)"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "$A" -d "{\"seq\":$seq}" "$api/api/admin/dlq/replay")
[ "$code" = 404 ] && pass "the dead letter is gone (404)" || fail "second replay: $code"
# webhooks: delivered on DynamoDB too (tests/e2e/ddb_webhooks.sh); the
# dispatcher takes deliveries from the pending index, it reads no stream
! grep -q 'not delivered on this store\|reading the change stream failed\|webhooks: .*failed' "$dir/serve.log" \
    && pass "serve on DynamoDB: webhook dispatcher up, no stream reader failing" || fail "serve log: $(grep -i webhook "$dir/serve.log" | head -3)"

# and a registration carries no warning
brand=$(curl -s -H "$A" -H 'Content-Type: application/json' \
    -d '{"name":"Hook Brand","domain":"hook.example","industry":"food"}' "$api/api/brands" | jq -r .id)
out=$(curl -s -H "$A" -H 'Content-Type: application/json' \
    -d "{\"brandId\":\"$brand\",\"url\":\"https://93.184.215.14/hook\"}" "$api/api/webhooks")
echo "$out" | jq -e '(.id | length) > 0 and (.secret | startswith("whsec_")) and (has("warning") | not)' >/dev/null \
    && pass "webhook registered on DynamoDB, without a warning" || fail "register: $out"
out=$(curl -s -H "$A" "$api/api/webhooks?brandId=$brand")
echo "$out" | jq -e '.webhooks | length == 1' >/dev/null && pass "and listed" || fail "list: $out"

# ---- `detect --ops-log changes` on a table of its own ----
table=gp-detect-e2e-changes
if "$GENUPROOF_BIN" table create --dynamodb "$url" --table "$table" --wait 30 >/dev/null 2>"$dir/create2.log"; then
    helper burst pc || fail "seeding the burst (changes)"
    "$GENUPROOF_BIN" detect --dynamodb "$url" --table "$table" --worker-id wc \
        --lease-s "$lease_s" --poll-ms 100 --ops-log changes >>"$dir/wc.log" 2>&1 &
    pids+=($!)
    if wait_stats 30 '.burst == 1 and .counts.burst_scan == [3]'; then
        sj '.opslog == 1' && pass "--ops-log changes: one entry for the 3 burst scans of one verdict" ||
            fail "--ops-log changes: $S"
    else
        fail "--ops-log changes: the burst was not raised: $S"
    fi
else
    fail "second table create"; cat "$dir/create2.log"
fi

for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
if [ "$fails" -eq 0 ]; then exit 0; fi
echo "--- serve"; tail -20 "$dir/serve.log" 2>/dev/null
for f in "$dir"/w*.log; do echo "--- $f"; tail -20 "$f"; done
exit 1
