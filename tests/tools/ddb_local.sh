#!/usr/bin/env bash
# ddb_local.sh - start or stop AWS's DynamoDB Local (bundled in the npm
# package amplify-dynamodb-simulator, installed by `cd tests && npm ci`)
# on a free loopback port, for the DynamoDB tests.
#
#   tests/tools/ddb_local.sh start [DIR]   starts it, waits until it answers,
#                                          prints the port on stdout
#   tests/tools/ddb_local.sh stop [DIR]    stops the instance started with DIR
#
# DIR (default /tmp/gp-ddb-local-$UID) keeps the pid, port and log files, so
# several instances can run side by side with different DIRs.  The database
# is in memory and shared by every access key and region (-sharedDb), so
# clients with different credentials see the same tables; telemetry is
# off (-disableTelemetry).  Needs java
# (Debian: openjdk-17-jre-headless).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmd=${1:-}
dir=${2:-/tmp/gp-ddb-local-$(id -u)}
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac

find_jar() {
    local base="$here/../node_modules/amplify-dynamodb-simulator"
    local jar
    jar=$(find "$base" -name DynamoDBLocal.jar -print -quit 2>/dev/null)
    [ -n "$jar" ] || return 1
    echo "$jar"
}

free_port() {
    python3 - <<'PY'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

case "$cmd" in
start)
    jar=$(find_jar) || { echo "ddb_local: DynamoDBLocal.jar not found (run: cd tests && npm ci)" >&2; exit 1; }
    command -v java >/dev/null || { echo "ddb_local: java not found (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
    mkdir -p "$dir"
    if [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
        cat "$dir/port"
        exit 0
    fi
    jdir=$(dirname "$jar")
    for attempt in 1 2 3; do
        port=$(free_port)
        # setsid: own process group, so stop can end java and nothing else.
        # Started in DIR: DynamoDB Local writes dynamodb-local-metadata.json
        # into its working directory.
        (cd "$dir" && exec setsid java -Djava.library.path="$jdir/DynamoDBLocal_lib" \
            -jar "$jar" -inMemory -sharedDb -disableTelemetry -port "$port" >"$dir/log" 2>&1 </dev/null) &
        pid=$!
        echo "$pid" >"$dir/pid"
        echo "$port" >"$dir/port"
        for _ in $(seq 1 150); do
            if ! kill -0 "$pid" 2>/dev/null; then
                break
            fi
            code=$(curl -s -o /dev/null -w '%{http_code}' -m 2 -X POST \
                "http://127.0.0.1:$port/" 2>/dev/null)
            if [ -n "$code" ] && [ "$code" != "000" ]; then
                echo "$port"
                exit 0
            fi
            sleep 0.2
        done
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        echo "ddb_local: attempt $attempt on port $port failed:" >&2
        tail -5 "$dir/log" >&2
    done
    rm -f "$dir/pid" "$dir/port"
    exit 1
    ;;
stop)
    if [ -f "$dir/pid" ]; then
        pid=$(cat "$dir/pid")
        kill "$pid" 2>/dev/null
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null
        rm -f "$dir/pid" "$dir/port"
    fi
    exit 0
    ;;
*)
    echo "usage: $0 start|stop [DIR]" >&2
    exit 2
    ;;
esac
