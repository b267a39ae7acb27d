#!/usr/bin/env bash
# tests/e2e/api_doc.sh - keeps docs/api.md honest: the reference cannot
# drift from the code.
#
# Static part: every route of the route tables (src/api/*.c, entries
# `{HTTP_M_<METHOD>, "<path>", ...}`) needs a "### METHOD PATH" heading and
# at least one runnable example in docs/api.md; an operation the document
# marks "not yet served" must not be in a route table.
#
# Dynamic part: starts a server (--demo-data --no-detector
# --allow-private-webhooks, so every answer is deterministic) and runs
# every ```http-example block of the document in order:
#
#     ```http-example
#     METHOD /path?query            request line
#     Header: value                 request headers (optional)
#     {"json":"body"}               request body (optional, may span lines)
#     --
#     200                           expected status
#     Header: value                 expected response headers (optional)
#     {"json":"body"}               expected body (optional)
#     ```
#
# In the request, <name> is replaced by a variable: adminKey is predefined,
# others come from `<!-- save: name=JQ_EXPR ... -->` comments placed before
# an example (JQ_EXPR is applied to that example's response body).
# An unknown <name> in a request fails the example.
#
# In the expected response, a JSON body must have exactly the documented
# keys at every object level, the same JSON types, and equal values except
# where the value is free:
#   "<anything>"          any string ("x-<id>" : any string of that form)
#   <name> (bare)         any number; <bool>/<boolean>, <object>, <array>,
#                         <string>, <null> that type; <any> anything
#   [a, b, ...]           the array starts with elements matching a, b
#   [a, b]                exactly these elements (checked in order)
# A text body: each documented line (except "...") must match a line of
# the response ("<...>" matches anything).  Headers: same rule, the name
# compared case-insensitively.
#
# Exits with the usual PASS/FAIL lines; bounded (each request 10 s).
set -u
. "$(dirname "$0")/lib.bash"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DOC=${API_DOC:-$ROOT/docs/api.md}
EX="$GP_DIR/ex"
mkdir -p "$EX"

if [ ! -f "$DOC" ]; then
    fail "docs/api.md exists"
    gp_finish
fi

# ------------------------------------------------------------ static checks

# "GET /api/health" lines, one per route table entry.
grep -ho '{HTTP_M_[A-Z]*, *"/[^"]*"' "$ROOT"/src/api/*.c |
    sed -E 's/^\{HTTP_M_([A-Z]+), *"([^"]*)"/\1 \2/' | sort -u >"$GP_DIR/routes"

# Splits the document into examples: $EX/NNNN.req, .res, .meta
# (meta: line<TAB>saves<TAB>heading).
perl -e '
    my ($doc, $dir) = @ARGV;
    open(my $in, "<", $doc) or die "cannot read $doc\n";
    my ($n, $ln, $heading, $saves, $in_ex, $start, @lines) = (0, 0, "", "", 0, 0);
    sub flush_ex {
        my $txt = join("", @lines);
        my ($req, $res) = split(/^--[ \t]*\n/m, $txt, 2);
        $res = "" unless defined $res;
        my $base = sprintf("%s/%04d", $dir, $n);
        for (["req", $req], ["res", $res], ["meta", "$start\t$saves\t$heading\n"]) {
            open(my $o, ">", "$base.$_->[0]") or die;
            print $o $_->[1];
            close $o;
        }
        $saves = "";
    }
    while (my $l = <$in>) {
        $ln++;
        if ($in_ex) {
            if ($l =~ /^```\s*$/) { flush_ex(); $in_ex = 0; next; }
            push @lines, $l;
            next;
        }
        if ($l =~ /^```http-example\s*$/) { $n++; $in_ex = 1; $start = $ln; @lines = (); next; }
        $heading = $1 if $l =~ /^#{1,6}\s+(.*?)\s*$/;
        while ($l =~ /<!--\s*save:\s*(.*?)\s*-->/g) { $saves .= " $1"; }
    }
    die "unterminated http-example at line $start\n" if $in_ex;
' "$DOC" "$EX" || fail "docs/api.md parses"

# METHOD PATH of every example (query removed).
for f in "$EX"/*.req; do
    [ -f "$f" ] || continue
    head -n 1 "$f" | awk '{ sub(/\?.*/, "", $2); print $1, $2 }'
done | sort -u >"$GP_DIR/examples"

nroutes=$(wc -l <"$GP_DIR/routes")
missing_ex=0 missing_h=0
while read -r method path; do
    if ! grep -qxF "$method $path" "$GP_DIR/examples"; then
        fail "route $method $path has an example in docs/api.md"
        missing_ex=$((missing_ex + 1))
    fi
    if ! grep -qE "^### $method $(printf '%s' "$path" | sed 's/[.[\*^$]/\\&/g')\$" "$DOC"; then
        fail "route $method $path has a '### $method $path' section in docs/api.md"
        missing_h=$((missing_h + 1))
    fi
done <"$GP_DIR/routes"
check "all $nroutes routes of src/api have an example" '[ "$nroutes" -gt 0 ] && [ $missing_ex = 0 ]'
check "all $nroutes routes of src/api have a section" '[ "$nroutes" -gt 0 ] && [ $missing_h = 0 ]'

# "not yet served" rows must not name a served route.
stale=0
while IFS= read -r line; do
    op=$(printf '%s\n' "$line" | grep -oE '(GET|POST|PUT|PATCH|DELETE) `?/[^ `?|]*' | head -n 1 | tr -d '`')
    [ -n "$op" ] || continue
    if grep -qxF "$op" "$GP_DIR/routes"; then
        fail "docs/api.md marks $op 'not yet served' but src/api serves it"
        stale=$((stale + 1))
    fi
done < <(grep -i 'not yet served' "$DOC")
check "no served route is marked 'not yet served'" '[ $stale = 0 ]'

# ------------------------------------------------------------ helpers

# JSON comparison (jq): prints one line per mismatch.
JQ_CMP='
def bare: type == "string" and startswith("<<bare:") and endswith(">>");
def esc: gsub("(?<c>[.*+?^$|(){}\\[\\]\\\\/])"; "\\\(.c)");
def topat: "^" + ([splits("<[^<>]*>")] | map(esc) | join(".*")) + "$";
def short: tojson | if length > 80 then .[0:77] + "..." else . end;
def cmp($p; $d; $a):
  if ($d | bare) then
    ($d | ltrimstr("<<bare:") | rtrimstr(">>")) as $n
    | (if $n == "any" then null
       elif $n == "bool" or $n == "boolean" then "boolean"
       elif ($n == "object" or $n == "array" or $n == "string" or $n == "null") then $n
       else "number" end) as $t
    | if $t == null or ($a | type) == $t then empty
      else "\($p): expected any \($t), got \($a | short)" end
  elif ($d | type) != ($a | type) then
    "\($p): expected \($d | type) \($d | short), got \($a | type) \($a | short)"
  elif ($d | type) == "object" then
    ((($d | keys) - ($a | keys)) | if length > 0 then "\($p): missing keys \(join(", "))" else empty end),
    ((($a | keys) - ($d | keys)) | if length > 0 then "\($p): undocumented keys \(join(", "))" else empty end),
    (($d | keys) - (($d | keys) - ($a | keys)) | .[] as $k | cmp("\($p).\($k)"; $d[$k]; $a[$k]))
  elif ($d | type) == "array" then
    (($d | length) > 0 and $d[-1] == "<<more>>") as $more
    | (if $more then $d[0:-1] else $d end) as $dd
    | (if $more and ($a | length) < ($dd | length) then
         "\($p): expected at least \($dd | length) elements, got \($a | length)"
       elif ($more | not) and ($a | length) != ($dd | length) then
         "\($p): expected \($dd | length) elements, got \($a | length)"
       else empty end),
      (range(0; [($dd | length), ($a | length)] | min) as $i | cmp("\($p)[\($i)]"; $dd[$i]; $a[$i]))
  elif ($d | type) == "string" and ($d | test("<[^<>]*>")) then
    if ($a | test($d | topat; "s")) then empty else "\($p): \($a | short) does not match \($d | tojson)" end
  elif $d == $a then empty
  else "\($p): expected \($d | short), got \($a | short)" end;
cmp("$"; $d; $a)'

# Documented JSON -> plain JSON: bare <name> -> "<<bare:name>>", "..." in an
# array -> "<<more>>" (strings are copied untouched).
doc_json() {
    perl -0777 -pe 's{("(?:[^"\\]|\\.)*")|<([A-Za-z_][\w.-]*)>|\.\.\.}{defined $1 ? $1 : defined $2 ? "\"<<bare:$2>>\"" : "\"<<more>>\""}ge' "$1"
}

# match_lines DOC_FILE ACTUAL_FILE [i]: every non-empty DOC line other than
# "..." equals (or, with <...>, matches) some ACTUAL line; prints the ones
# that do not.  With "i" the part before the first ":" is case-insensitive
# (headers).
match_lines() {
    perl -e '
        my ($docf, $actf, $ci) = @ARGV;
        open(my $a, "<", $actf) or die; my @act = map { s/\r?\n$//r } <$a>;
        open(my $d, "<", $docf) or die;
        while (my $l = <$d>) {
            $l =~ s/\r?\n$//;
            next if $l =~ /^\s*$/ || $l =~ /^\s*\.\.\.\s*$/;
            my $re = join(".*", map { quotemeta } split(/<[^<>\n]*>/, $l, -1));
            my $ok = 0;
            for my $x (@act) {
                my $y = $x;
                if ($ci) { $y =~ s/^([^:]*)/lc $1/e; }
                my $want = $ci ? ($l =~ s/^([^:]*)/lc $1/er) : $l;
                my $wre = $ci ? join(".*", map { quotemeta } split(/<[^<>\n]*>/, $want, -1)) : $re;
                if ($y =~ /^$wre$/s) { $ok = 1; last; }
            }
            print "$l\n" unless $ok;
        }
    ' "$@"
}

declare -A V
V[adminKey]=$GP_ADMIN_KEY

# subst TEXT: replaces <name> with V[name]; returns 1 (and prints the
# name on stderr) when a placeholder has no variable.
subst() {
    local s=$1 k name
    for k in "${!V[@]}"; do s=${s//"<$k>"/${V[$k]}}; done
    name=$(printf '%s' "$s" | grep -oE '<[A-Za-z_][A-Za-z0-9_]*>' | head -n 1)
    if [ -n "$name" ]; then
        echo "$name" >&2
        printf '%s' "$s"
        return 1
    fi
    printf '%s' "$s"
}

HDR_RE='^[A-Za-z][A-Za-z0-9-]*: '

# ------------------------------------------------------------ run examples

gp_start --demo-data --no-detector --allow-private-webhooks || gp_finish

nex=0
for reqf in "$EX"/*.req; do
    [ -f "$reqf" ] || continue
    base=${reqf%.req}
    IFS=$'\t' read -r docline saves heading <"$base.meta"
    nex=$((nex + 1))

    # --- request ---
    mapfile -t L <"$reqf"
    reqline=${L[0]:-}
    method=${reqline%% *}
    target=${reqline#* }
    name="api.md:$docline $method ${target%%\?*}"
    i=1
    hdrs=()
    while [ $i -lt ${#L[@]} ] && [[ ${L[$i]} =~ $HDR_RE ]]; do
        hdrs+=("${L[$i]}")
        i=$((i + 1))
    done
    body=""
    if [ $i -lt ${#L[@]} ]; then body=$(printf '%s\n' "${L[@]:$i}"); fi

    bad=""
    target=$(subst "$target" 2>"$GP_DIR/undef") || bad=$(cat "$GP_DIR/undef")
    args=(-s -S -o "$GP_DIR/rb" -D "$GP_DIR/rh" -w '%{http_code}' -X "$method" --max-time 10)
    has_ct=0
    for h in "${hdrs[@]+"${hdrs[@]}"}"; do
        h=$(subst "$h" 2>"$GP_DIR/undef") || bad=$(cat "$GP_DIR/undef")
        args+=(-H "$h")
        [[ ${h,,} == content-type:* ]] && has_ct=1
    done
    if [ -n "$body" ]; then
        body=$(subst "$body" 2>"$GP_DIR/undef") || bad=$(cat "$GP_DIR/undef")
        printf '%s' "$body" >"$GP_DIR/reqbody"
        [ $has_ct = 1 ] || args+=(-H 'Content-Type: application/json')
        args+=(--data-binary "@$GP_DIR/reqbody")
    fi
    if [ -n "$bad" ]; then
        fail "$name: placeholder $bad has no saved value"
        continue
    fi
    if [ -z "$method" ] || [[ $target != /* ]]; then
        fail "$name: request line must be 'METHOD /path'"
        continue
    fi
    status=$(curl "${args[@]}" "$GP_URL$target" 2>"$GP_DIR/curlerr") || status="curl-error"
    tr -d '\r' <"$GP_DIR/rh" >"$GP_DIR/rh2" 2>/dev/null

    # --- expected response ---
    mapfile -t R <"$base.res"
    want=${R[0]:-}
    want=${want%% *}
    j=1
    : >"$GP_DIR/want_h"
    while [ $j -lt ${#R[@]} ] && [[ ${R[$j]} =~ $HDR_RE ]]; do
        printf '%s\n' "${R[$j]}" >>"$GP_DIR/want_h"
        j=$((j + 1))
    done
    while [ $j -lt ${#R[@]} ] && [ -z "${R[$j]//[[:space:]]/}" ]; do j=$((j + 1)); done
    : >"$GP_DIR/want_b"
    if [ $j -lt ${#R[@]} ]; then printf '%s\n' "${R[@]:$j}" >"$GP_DIR/want_b"; fi

    problems=()
    if [ -z "$want" ]; then
        problems+=("no expected status after '--'")
    elif [ "$status" != "$want" ]; then
        problems+=("status $status, documented $want")
    fi
    if [ -s "$GP_DIR/want_h" ]; then
        while IFS= read -r m; do problems+=("header not matched: $m"); done \
            < <(match_lines "$GP_DIR/want_h" "$GP_DIR/rh2" i)
    fi
    first=$(grep -m 1 -v '^[[:space:]]*$' "$GP_DIR/want_b" | sed 's/^[[:space:]]*//')
    case "$first" in
    "") ;;
    "{"* | "["*)
        if ! doc_json "$GP_DIR/want_b" >"$GP_DIR/want_j" || ! jq -e . "$GP_DIR/want_j" >/dev/null 2>&1; then
            problems+=("documented response is not valid JSON")
        elif ! jq -e . "$GP_DIR/rb" >/dev/null 2>&1; then
            problems+=("response is not JSON")
        else
            while IFS= read -r m; do problems+=("$m"); done \
                < <(jq -n -r --slurpfile d "$GP_DIR/want_j" --slurpfile a "$GP_DIR/rb" \
                    "\$d[0] as \$d | \$a[0] as \$a | $JQ_CMP")
        fi
        ;;
    *)
        while IFS= read -r m; do problems+=("body line not matched: $m"); done \
            < <(match_lines "$GP_DIR/want_b" "$GP_DIR/rb")
        ;;
    esac

    if [ ${#problems[@]} -eq 0 ]; then
        pass "$name -> $want"
    else
        fail "$name -> $want ($heading)"
        for m in "${problems[@]:0:12}"; do echo "  $m"; done
        echo "  response: $(head -c 400 "$GP_DIR/rb")"
    fi

    # --- saves (even after a failure, so later examples can still run) ---
    for s in $saves; do
        var=${s%%=*}
        expr=${s#*=}
        val=$(jq -r "$expr // empty" "$GP_DIR/rb" 2>/dev/null | head -n 1)
        if [ -z "$val" ]; then
            fail "$name: save $var=$expr found no value"
        else
            V[$var]=$val
        fi
    done
done
check "docs/api.md has examples" '[ $nex -gt 0 ]'

gp_stop
check "server exited cleanly after the examples" '[ "${GP_STOP_RC:-1}" = 0 ]'
gp_finish
