# ddb_lib.bash - DynamoDB Local for the e2e scripts (source after lib.bash).
#
#   ddb_start [table]   dummy AWS credentials for the process, skip the
#                       script (exit 0 with SKIP) when Java or the npm
#                       package is missing, start DynamoDB Local on a free
#                       loopback port in $DDB_DIR (sets PORT and EP), and
#                       with a table name create that table (a check).
#   ddb_stop            stops it (call from the script's EXIT trap).
# Sets HERE, TOOLS and DDB_DIR (under $GP_DIR) when sourced.

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOOLS="$HERE/../tools"
DDB_DIR="$GP_DIR/ddb"

ddb_start() {
    export AWS_ACCESS_KEY_ID=e2e AWS_SECRET_ACCESS_KEY=e2e AWS_REGION=us-east-1
    unset AWS_SESSION_TOKEN AWS_ENDPOINT_URL_DYNAMODB DYNAMODB_TABLE GENUPROOF_API_KEY
    if ! command -v java >/dev/null || [ ! -d "$HERE/../node_modules/amplify-dynamodb-simulator" ]; then
        echo "SKIP: DynamoDB Local needs java and tests/node_modules (make deps; cd tests && npm ci)"
        exit 0
    fi
    PORT=$(cd "$GP_DIR" && timeout 90 "$TOOLS/ddb_local.sh" start "$DDB_DIR") || {
        fail "DynamoDB Local starts"
        gp_finish
    }
    EP="http://127.0.0.1:$PORT"
    if [ -n "${1:-}" ]; then
        "$GENUPROOF_BIN" table create --dynamodb "$EP" --table "$1" --wait 30 >/dev/null 2>"$GP_DIR/table.err"
        check "table created" '[ $? -eq 0 ]'
    fi
}

# ddb_pending GSI1PK: how many items the table's GSI1 partition holds
# (read with the AWS SDK, not through the server).
ddb_pending() {
    NODE_NO_WARNINGS=1 node -e '
const path = require("path");
const { DynamoDBClient, QueryCommand } = require(path.join(process.argv[1], "..", "node_modules", "@aws-sdk", "client-dynamodb"));
const c = new DynamoDBClient({ endpoint: process.argv[2], region: "us-east-1",
    credentials: { accessKeyId: "e2e", secretAccessKey: "e2e" } });
c.send(new QueryCommand({ TableName: process.argv[3], IndexName: "GSI1",
    KeyConditionExpression: "GSI1PK = :p", ExpressionAttributeValues: { ":p": { S: process.argv[4] } },
    Select: "COUNT" })).then((r) => console.log(r.Count), (e) => { console.error(e.message); process.exit(1); });
' "$HERE" "$EP" "$TABLE" "$1"
}

ddb_stop() {
    "$TOOLS/ddb_local.sh" stop "$DDB_DIR" >/dev/null 2>&1
}
