#!/usr/bin/env bash
# tests/e2e/catalog.sh - the static catalog routes (API.md §9.38-§9.40):
# shapes and counts of actors, categories and locations, the type and
# region filters, the D38 whitelist (inherited JavaScript names fall back
# to the full answer), and that every answer equals data/catalog.json
# (the compiled-in copy cannot drift from the data file).
set -u
. "$(dirname "$0")/lib.bash"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CAT="$ROOT/data/catalog.json"

gp_start || gp_finish
NOAUTH=1

req GET /api/catalog/categories
check_status "categories 200" 200
check_json "categories count 14" '.count == 14 and (.categories | length) == 14'
check "categories equal catalog.json" \
    '[ "$(jb .categories | jq -c .)" = "$(jq -c .categories "$CAT")" ]'

req GET /api/catalog/actors
check_status "actors 200" 200
check_json "actors counts 13/8/8/8/37" \
    '.count == {"carriers":13,"warehouses":8,"inspection":8,"retailers":8,"total":37}'
check "actors equal catalog.json" '[ "$(jb .actors | jq -c .)" = "$(jq -c .actors "$CAT")" ]'
check "actors group order" '[ "$(jb ".actors | keys_unsorted | join(\",\")")" = "carriers,warehouses,inspection,retailers" ]'

for t in carriers warehouses inspection retailers; do
    req GET "/api/catalog/actors?type=$t"
    check "actors type=$t" '[ "$(jb ".type")" = "$t" ] && [ "$(jb ".actors | length")" = "$(jb .count)" ] && [ "$(jb ".actors | tojson")" = "$(jq -c ".actors.$t" "$CAT")" ]'
done

for t in all constructor toString __proto__ hasOwnProperty CARRIERS; do
    req GET "/api/catalog/actors?type=$t"
    check "actors type=$t falls back to all (D38)" \
        '[ "$STATUS" = 200 ] && [ "$(jb .count.total)" = 37 ] && [ "$(jb "has(\"type\")")" = false ]'
done

req GET /api/catalog/locations
check_status "locations 200" 200
check_json "locations counts 16/9/12/37" \
    '.count == {"manufacturing":16,"distribution":9,"retail":12,"total":37}'
check "locations equal catalog.json" \
    '[ "$(jb .locations | jq -c .)" = "$(jq -c .locations "$CAT")" ]'

req GET "/api/catalog/locations?type=retail"
check "locations type=retail" '[ "$(jb .type)" = retail ] && [ "$(jb .count)" = 12 ] && [ "$(jb ".locations | tojson")" = "$(jq -c .locations.retail "$CAT")" ]'

for region in europe americas asia middle_east; do
    req GET "/api/catalog/locations?type=manufacturing&region=$region"
    want=$(jq -c --arg r "$region" '[.locations.manufacturing[] | select(.region == $r)]' "$CAT")
    check "locations manufacturing region=$region" \
        '[ "$(jb ".locations | tojson")" = "$want" ] && [ "$(jb .count)" = "$(printf %s "$want" | jq length)" ]'
    req GET "/api/catalog/locations?region=$region"
    want=$(jq -c --arg r "$region" '[.locations[] | map(select(.region == $r)) | length] | add' "$CAT")
    check "locations all region=$region total" '[ "$(jb .count.total)" = "$want" ]'
    check_json "locations all region=$region only that region" \
        "[.locations[][] | .region] | all(. == \"$region\")"
done

req GET "/api/catalog/locations?type=constructor&region=nowhere"
check "locations unknown type and region" \
    '[ "$STATUS" = 200 ] && [ "$(jb .count.total)" = 0 ] && [ "$(jb "has(\"type\")")" = false ]'

req POST /api/catalog/actors '{}'
check_status "POST actors is 405" 405

check "catalog_data.c is generated from catalog.json" \
    'python3 "$ROOT/tests/tools/gen_catalog.py" --check'

gp_stop
gp_finish
