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
# an example (JQ_EXPR is applied to that example's JSON response).  An
# unknown <name> in a request fails the example.
#
# In the expected response, a JSON body must have exactly the documented
# keys at every object level, the same JSON types, and equal values except
# where the value is free:
#   "<anything>"          any string ("x-<id>": any string of that form)
#   <name> (bare)         any number; <bool>/<boolean>, <object>, <array>,
#                         <string>, <null> that type; <any> anything
#   [a, b, ...]           at least these elements, checked in order
#   [a, b]                exactly these elements, checked in order
# A text body: each documented line (except "...") must equal a line of
# the response ("<...>" matches anything).  Headers: same rule, the name
# compared case-insensitively.
#
# The work is done by one perl pass (parse, static checks, JSON
# preparation) and per example one curl and one jq, so the script stays
# fast on a loaded machine.
set -u
. "$(dirname "$0")/lib.bash"
shopt -u patsub_replacement 2>/dev/null || true

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DOC=${API_DOC:-$ROOT/docs/api.md}
EX="$GP_DIR/ex"
mkdir -p "$EX"

if [ ! -f "$DOC" ]; then
    fail "docs/api.md exists"
    gp_finish
fi

# ------------------------------------------------ parse and static checks
#
# Writes $EX/NNNN.sh (shell assignments X_* describing example NNNN),
# $EX/NNNN.want (expected JSON, placeholders rewritten, or text) and
# $EX/NNNN.wanth (expected headers); prints "PASS: ..."/"FAIL: ..." lines
# for the static checks.
perl -MJSON::PP -e '
    use strict; use warnings;
    my ($doc, $dir, @src) = @ARGV;
    sub shq { my $s = shift; $s =~ s/\x27/\x27\\\x27\x27/g; return "\x27$s\x27"; }
    sub put { my ($f, $t) = @_; open(my $o, ">", $f) or die "$f: $!\n"; print $o $t; close $o; }
    my $hdr = qr/^[A-Za-z][A-Za-z0-9-]*: /;

    # Documented JSON -> plain JSON: bare <name> -> "<<bare:name>>", an
    # array element "..." -> "<<more>>"; strings are copied untouched.
    sub doc_json {
        my $t = shift;
        $t =~ s{("(?:[^"\\]|\\.)*")|<([A-Za-z_][\w.-]*)>|\.\.\.}{defined $1 ? $1 : defined $2 ? "\"<<bare:$2>>\"" : "\"<<more>>\""}ge;
        return $t;
    }

    my (%route, @examples, %heading, @nys);
    for my $f (@src) {
        open(my $in, "<", $f) or die "$f: $!\n";
        local $/; my $c = <$in>;
        $route{"$1 $2"} = 1 while $c =~ /\{HTTP_M_([A-Z]+),\s*"(\/[^"]*)"/g;
    }

    open(my $in, "<", $doc) or die "cannot read $doc\n";
    my ($n, $ln, $head, $saves, $in_ex, $start, @lines) = (0, 0, "", "", 0, 0);
    while (my $l = <$in>) {
        $ln++;
        if ($in_ex) {
            if ($l !~ /^```\s*$/) { push @lines, $l; next; }
            $in_ex = 0;
            my ($req, $res) = split(/^--[ \t]*\n/m, join("", @lines), 2);
            my @q = split(/\n/, $req // ""); my @r = split(/\n/, $res // "");
            my $line0 = shift(@q) // "";
            my (@qh, @rh);
            my $err = "";
            my ($method, $target) = $line0 =~ /^([A-Z]+)\s+(\S+)\s*$/;
            $err = "request line must be METHOD /path" unless defined $target && $target =~ m{^/};
            push @qh, shift @q while @q && $q[0] =~ $hdr;
            my $status = shift(@r) // "";
            $status =~ s/^\s*(\d{3}).*/$1/s or $err ||= "no expected status after --";
            push @rh, shift @r while @r && $r[0] =~ $hdr;
            shift @r while @r && $r[0] =~ /^\s*$/;
            my $body = join("\n", @r);
            my $kind = $body =~ /\S/ ? ($body =~ /^\s*[\[{]/ ? "json" : "text") : "none";
            my $base = sprintf("%s/%04d", $dir, ++$n);
            if ($kind eq "json") {
                my $j = doc_json($body);
                eval { JSON::PP->new->decode($j); 1 } or $err ||= "documented response is not valid JSON";
                put("$base.want", $j);
            } else {
                put("$base.want", "$body\n");
            }
            put("$base.wanth", join("", map { "$_\n" } @rh));
            my @sv = split(" ", $saves);
            $err ||= "save needs a JSON response" if @sv && $kind ne "json";
            put("$base.sh", join("",
                "X_LINE=$start\n", "X_HEADING=", shq($head), "\n",
                "X_METHOD=", shq($method // ""), "\n", "X_TARGET=", shq($target // ""), "\n",
                "X_HEADERS=(", join(" ", map { shq($_) } @qh), ")\n",
                "X_BODY=", shq(join("\n", @q)), "\n",
                "X_STATUS=", shq($status), "\n", "X_KIND=$kind\n", "X_HAS_H=", (@rh ? 1 : 0), "\n",
                "X_SAVES=(", join(" ", map { shq($_) } @sv), ")\n",
                "X_ERR=", shq($err), "\n"));
            if (defined $target) { (my $p = $target) =~ s/\?.*//; push @examples, "$method $p"; }
            $saves = "";
            next;
        }
        if ($l =~ /^```http-example\s*$/) { $in_ex = 1; $start = $ln; @lines = (); next; }
        if ($l =~ /^(#{1,6})\s+(.*?)\s*$/) {
            $head = $2;
            $heading{$2} = 1 if length($1) == 3;
        }
        $saves .= " $1" while $l =~ /<!--\s*save:\s*(.*?)\s*-->/g;
        push @nys, $l if $l =~ /not yet served/i;
    }
    print "FAIL: docs/api.md: unterminated http-example at line $start\n" if $in_ex;

    my %ex = map { $_ => 1 } @examples;
    my ($nr, $mex, $mh) = (scalar(keys %route), 0, 0);
    for my $r (sort keys %route) {
        unless ($ex{$r}) { print "FAIL: route $r has an example in docs/api.md\n"; $mex++; }
        unless ($heading{$r}) { print "FAIL: route $r has a \x27### $r\x27 section in docs/api.md\n"; $mh++; }
    }
    print(($nr && !$mex ? "PASS" : "FAIL"), ": all $nr routes of src/api have an example\n");
    print(($nr && !$mh ? "PASS" : "FAIL"), ": all $nr routes of src/api have a section\n");
    my $stale = 0;
    for my $l (@nys) {
        next unless $l =~ m{\b(GET|POST|PUT|PATCH|DELETE)\b[\s|`]*(/[^\s`?|]*)};
        next unless $route{"$1 $2"};
        print "FAIL: docs/api.md marks $1 $2 \x27not yet served\x27 but src/api serves it\n";
        $stale++;
    }
    print(($stale ? "FAIL" : "PASS"), ": no served route is marked \x27not yet served\x27\n");
    print(($n ? "PASS" : "FAIL"), ": docs/api.md has examples ($n)\n");
' "$DOC" "$EX" "$ROOT"/src/api/*.c >"$GP_DIR/static" 2>&1 || echo "FAIL: docs/api.md could not be parsed" >>"$GP_DIR/static"
while IFS= read -r line; do
    case "$line" in
    "PASS: "*) pass "${line#PASS: }" ;;
    "FAIL: "*) fail "${line#FAIL: }" ;;
    *) fail "parser: $line" ;;
    esac
done <"$GP_DIR/static"

# ------------------------------------------------------------ helpers

# jq definitions: cmp(path; documented; actual) prints one line per
# mismatch.
JQ_DEFS='
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
'

# match_lines DOC_FILE ACTUAL_FILE [i]: prints every non-empty DOC line
# (other than "...") that equals (with <...> as a wildcard) no ACTUAL
# line.  With "i" the part before the first ":" is compared
# case-insensitively (headers).
match_lines() {
    perl -e '
        my ($docf, $actf, $ci) = @ARGV;
        my $norm = sub { my $s = shift; $s =~ s/\r?\n$//; $s =~ s/^([^:]*)/lc $1/e if $ci; $s };
        open(my $a, "<", $actf) or die; my @act = map { $norm->($_) } <$a>;
        open(my $d, "<", $docf) or die;
        while (my $l = <$d>) {
            $l = $norm->($l);
            next if $l =~ /^\s*(\.\.\.)?\s*$/;
            my $re = join(".*", map { quotemeta } split(/<[^<>]*>/, $l, -1));
            print "$l\n" unless grep { /^$re$/s } @act;
        }
    ' "$@"
}

declare -A V
V[adminKey]=$GP_ADMIN_KEY

# subst TEXT: SUBST = TEXT with every <name> replaced by V[name]; returns
# 1 with UNDEF set when a placeholder has no value.
subst() {
    local k
    SUBST=$1
    for k in "${!V[@]}"; do SUBST=${SUBST//"<$k>"/${V[$k]}}; done
    if [[ $SUBST =~ \<([A-Za-z_][A-Za-z0-9_]*)\> ]]; then
        UNDEF=${BASH_REMATCH[1]}
        return 1
    fi
    return 0
}

# ------------------------------------------------------------ run examples
#
# The loop sends the requests (one curl each; a jq only for saves) and
# checks status, headers and text bodies; the JSON bodies are compared
# afterwards in a single jq run over all examples.

gp_start --demo-data --no-detector --allow-private-webhooks || gp_finish

declare -a NAME WANT PROB
jq_args=()
jq_prog=""
i=0
for exf in "$EX"/*.sh; do
    [ -f "$exf" ] || continue
    base=${exf%.sh}
    # shellcheck disable=SC1090
    . "$exf"
    i=$((i + 1))
    NAME[i]="api.md:$X_LINE $X_METHOD ${X_TARGET%%\?*}"
    WANT[i]="$X_STATUS ($X_HEADING)"
    PROB[i]=""
    if [ -n "$X_ERR" ]; then
        PROB[i]="$X_ERR"$'\n'
        continue
    fi

    # --- request ---
    UNDEF=""
    subst "$X_TARGET"
    target=$SUBST
    args=(-s -o "$base.got" -D "$base.goth" -w '%{http_code}' -X "$X_METHOD" --max-time 10)
    has_ct=0
    for h in "${X_HEADERS[@]+"${X_HEADERS[@]}"}"; do
        subst "$h"
        args+=(-H "$SUBST")
        [[ ${SUBST,,} == content-type:* ]] && has_ct=1
    done
    if [ -n "$X_BODY" ]; then
        subst "$X_BODY"
        printf '%s' "$SUBST" >"$GP_DIR/reqbody"
        [ $has_ct = 1 ] || args+=(-H 'Content-Type: application/json')
        args+=(--data-binary "@$GP_DIR/reqbody")
    fi
    if [ -n "$UNDEF" ]; then
        PROB[i]="<$UNDEF> in the request has no saved value"$'\n'
        continue
    fi
    : >"$base.got"
    status=$(curl "${args[@]}" "$GP_URL$target") || status="(curl failed: $status)"

    # --- status, headers, text body ---
    [ "$status" = "$X_STATUS" ] || PROB[i]+="status $status, documented $X_STATUS"$'\n'
    if [ "$X_HAS_H" = 1 ]; then
        out=$(match_lines "$base.wanth" "$base.goth" i)
        [ -z "$out" ] || PROB[i]+=$(printf 'header not matched: %s\n' "$out")$'\n'
    fi
    case "$X_KIND" in
    json)
        jq_args+=(--slurpfile "d$i" "$base.want" --rawfile "a$i" "$base.got")
        jq_prog+="${jq_prog:+, }(\$a$i | try fromjson catch \"<<not json>>\") as \$a | "
        jq_prog+="if \$a == \"<<not json>>\" then \"$i response is not JSON\" "
        jq_prog+="else (cmp(\"\$\"; \$d${i}[0]; \$a) | \"$i \" + .) end"
        ;;
    text)
        out=$(match_lines "$base.want" "$base.got")
        [ -z "$out" ] || PROB[i]+=$(printf 'body line not matched: %s\n' "$out")$'\n'
        ;;
    esac

    # --- saves (kept even when the example fails, so later ones still run) ---
    if [ ${#X_SAVES[@]} -gt 0 ]; then
        prog=""
        for s in "${X_SAVES[@]}"; do
            prog+="${prog:+, }(\"${s%%=*} \" + ((\$a | ${s#*=}) // \"\" | tostring))"
        done
        out=$(jq -r -n --rawfile a "$base.got" "(\$a | try fromjson catch null) as \$a | $prog" 2>&1)
        for s in "${X_SAVES[@]}"; do
            var=${s%%=*}
            val=""
            while IFS= read -r m; do
                [ "${m%% *}" = "$var" ] && { val=${m#* }; break; }
            done <<<"$out"
            if [ -z "$val" ]; then
                PROB[i]+="save $s found no value"$'\n'
            else
                V[$var]=$val
            fi
        done
    fi
done

# --- JSON bodies, all in one jq run ---
if [ -n "$jq_prog" ]; then
    out=$(jq -n -r "${jq_args[@]}" "$JQ_DEFS $jq_prog" 2>&1) || out="0 jq failed: ${out:0:300}"
    while IFS= read -r m; do
        [ -n "$m" ] || continue
        n=${m%% *}
        if [ "$n" = 0 ]; then fail "JSON comparison: ${m#* }"; else PROB[n]+="${m#* }"$'\n'; fi
    done <<<"$out"
fi

for ((k = 1; k <= i; k++)); do
    if [ -z "${PROB[k]}" ]; then
        pass "${NAME[k]} -> ${WANT[k]%% *}"
    else
        fail "${NAME[k]} -> ${WANT[k]}"
        printf '%s' "${PROB[k]}" | head -n 12 | sed 's/^/  /'
        f=$(printf '%s/%04d.got' "$EX" "$k")
        [ -f "$f" ] && head -c 400 "$f" | sed 's/^/  response| /' && echo
    fi
done

gp_stop
check "server exited cleanly after the examples" '[ "${GP_STOP_RC:-1}" = 0 ]'
gp_finish
