#!/bin/bash
# Memory benchmark of dyntrace-analyze (`make bench-analyze-memory`):
# records a trace of CALLS (default 1,000,000) gen_server calls, every
# reply sent to a fresh alias (bench/genserver_workload.erl), with a
# session daemon of its own, then measures the peak RSS of `latency`,
# `genserver`, `delivery`, `report` and `export --timeline` on it (/usr/bin/time -v). Prints a
# Markdown section for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
CALLS=${CALLS:-1000000}
OUT=_build/bench
mkdir -p "$OUT"
EXTRA_PACKAGES="time" ./scripts/setup.sh >&2
erlc -o "$OUT" bench/genserver_workload.erl test/lttng_session.erl
ANALYZE=priv/dyntrace-analyze
TRACE="$OUT/trace-genserver"
rm -rf "$TRACE"
scripts/isolated.sh erl -noshell -sname genserver_bench -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
    -eval "genserver_workload:main([\"$TRACE\", \"$CALLS\"])" >&2

# rss NAME CMD...: "peak_kib seconds" of one run.
rss() {
    local name=$1
    shift
    /usr/bin/time -v -o "$OUT/$name.time" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
    echo "$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$OUT/$name.time") \
$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$OUT/$name.time")"
}

events=$("$ANALYZE" rates --json "$TRACE" | grep -o '"events":[0-9]*' | cut -d: -f2)
discarded=$("$ANALYZE" rates --json "$TRACE" | grep -o '"discarded":[0-9]*' | cut -d: -f2)
calls=$("$ANALYZE" genserver --json "$TRACE" | python3 -c \
    'import json,sys; print(sum(r["count"] for r in json.load(sys.stdin)["genserver"]))')
rows=""
for a in latency genserver delivery report export; do
    if [ "$a" = report ]; then
        set -- $(rss "$a" "$ANALYZE" report "$OUT/report-genserver" "$TRACE")
        cmd="dyntrace-analyze report OUTDIR TRACE"
    elif [ "$a" = export ]; then
        # Every event written: the timeline is a few hundred bytes per message.
        set -- $(rss "$a" "$ANALYZE" export --timeline "$OUT/timeline.json" \
                     --max-events 1000000000 "$TRACE")
        rm -f "$OUT/timeline.json"
        cmd="dyntrace-analyze export --timeline FILE --max-events 1000000000 TRACE"
    else
        set -- $(rss "$a" "$ANALYZE" "$a" --json "$TRACE")
        cmd="dyntrace-analyze $a --json TRACE"
    fi
    rows="$rows| \`$cmd\` | $(($1 / 1024)) MiB | $2 |
"
done

cat <<EOF2

## dyntrace-analyze: memory on a trace of one reference per call

\`make bench-analyze-memory\` (bench/analyze_memory.sh), $(date -u +%Y-%m-%d) on $(nproc) cores of
$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr). Trace: $CALLS
gen_server:call/2 from 4 traced callers to one traced server (bench/genserver_workload.erl), every
reply sent to a fresh alias; message_send, message_receive, process_scheduled, process_register
and node_name recorded (the node distributed, so that \`delivery\` pairs its messages):
$events events, $discarded discarded by LTTng; \`genserver\` paired $calls calls. Peak RSS from
\`/usr/bin/time -v\`, one run each. Target: each under 100 MB.

| command | peak RSS | wall clock |
|---|---:|---:|
$rows
The report's page, \`index.html\`: $(($(stat -c %s "$OUT/report-genserver/index.html") / 1024)) KiB (at most 5 MB on any trace).
EOF2
