#!/bin/bash
# The README's latency hunt, run for real on the checkout service of
# examples/checkout_demo.erl (a `checkout' gen_server whose coupon carts
# burn the CPU, an `inventory' server it calls): one dyntrace:record/2 call
# while 20 clients make 50 checkouts each, then `genserver' (which request
# is slow), `genserver --slowest' (which instances), `profile --name
# checkout' (where inside the server the time goes) and its flame graph.
# The README's output comes from this script.
#
#   scripts/hunt.sh [--no-setup]   (the trace and flame graph in _build/hunt)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${1:-}" = --no-setup ] || ./scripts/setup.sh >/dev/null
OUT=$(pwd)/_build/hunt
rm -rf "$OUT"
mkdir -p "$OUT/ebin"
erlc -o "$OUT/ebin" +warnings_as_errors examples/checkout_demo.erl

# What the operator types in the node's shell.
read -r -d '' HUNT <<'ERL' || true
    ok = checkout_demo:start(),
    {ok, Handle} = dyntrace:record([{trace, all, [messages, scheduling]},
                                    {calls, {checkout_demo, '_', '_'},
                                     #{scope => local, return => true}}],
                                   #{wait => false, duration => 60000,
                                     dir => os:getenv("HUNT_DIR")}),
    ok = checkout_demo:load(20, 50),
    {ok, Dir} = dyntrace:stop(Handle),
    io:format("~s~n", [Dir]),
    halt().
ERL
echo '==> 1> dyntrace:record([{trace, all, [messages, scheduling]}, {calls, {checkout_demo, '"'_', '_'"'}, #{scope => local, return => true}}], #{wait => false, ...}).'
dir=$(HUNT_DIR="$OUT/trace" erl -noshell -pa _build/default/lib/dyntrace/ebin -pa "$OUT/ebin" \
    -eval "$HUNT")
echo "$dir"
run() {
    echo
    echo "\$ dyntrace-analyze $*"
    priv/dyntrace-analyze "$@"
}
run genserver "$dir"
run genserver --slowest 3 "$dir"
run profile --name checkout --top 6 "$dir"
run profile --name checkout --flame "$OUT/flame.svg" "$dir" >/dev/null
echo "(flame graph: $OUT/flame.svg)"
