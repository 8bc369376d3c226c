#!/bin/bash
# Regenerates docs/report.png, the README's picture of a report: records
# the checkout service of examples/checkout_demo.erl (20 clients of 50
# checkouts each; its servers' messages, scheduling, GC and registration,
# every call of the module with its return, memory sampled every 100 ms)
# with a session daemon of its own, runs `dyntrace-analyze report` on the
# trace and has headless chromium take a screenshot of the page's top.
#
#   scripts/report-screenshot.sh [OUTPUT.png]   (default docs/report.png)
set -euo pipefail
cd "$(dirname "$0")/.."
PNG=${1:-docs/report.png}
if [ "${DYNTRACE_ISOLATED:-}" != inside ]; then
    ./scripts/setup.sh >&2
    exec scripts/isolated.sh "$0" "$PNG"
fi

OUT=$(pwd)/_build/report-screenshot
rm -rf "$OUT"
mkdir -p "$OUT/ebin"
erlc -o "$OUT/ebin" +warnings_as_errors examples/checkout_demo.erl test/lttng_session.erl
# The recording, as a user would make it.
read -r -d '' RECORD <<'ERL' || true
    ok = lttng_session:traced_node(),
    Events = [process_spawn, process_exit, process_register, process_scheduled,
              message_send, message_receive, function_call, function_return,
              function_exception, gc_minor_start, gc_minor_end, gc_major_start,
              gc_major_end, memory_sample, allocator_sample, process_memory],
    S = lttng_session:start_tracked(checkout, Events),
    %% Traced from their start, so that the servers register in the trace.
    {ok, _} = dyntrace:trace(new_processes, [procs, messages, scheduling, gc], #{}),
    {ok, _} = dyntrace:calls({checkout_demo, '_', '_'}, #{scope => local, return => true}),
    {ok, _} = dyntrace:memory(#{interval => 100}),
    ok = checkout_demo:start(),
    ok = checkout_demo:load(20, 50),
    ok = dyntrace:clear(),
    ok = lttng_session:stop(S),
    ok = file:write_file(filename:join(os:getenv("DYNTRACE_TRACE_DIR"), "trace"), maps:get(dir, S)),
    halt().
ERL
DYNTRACE_TRACE_DIR="$OUT" erl -noshell -pa _build/default/lib/dyntrace/ebin -pa "$OUT/ebin" \
    -eval "$RECORD" >&2
TRACE=$(cat "$OUT/trace")
priv/dyntrace-analyze report "$OUT/report" "$TRACE" >&2
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$OUT/chromium" --hide-scrollbars --window-size=1280,1500 \
    --screenshot="$PNG" "file://$OUT/report/index.html" 2>/dev/null
echo "wrote $PNG from $OUT/report/index.html"
