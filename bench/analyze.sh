#!/bin/bash
# Benchmark of dyntrace-analyze (`make bench-analyze`; also run by `make
# bench`): records a trace of 3 M and one of 10 M events (gen_server calls
# whose callback calls a traced function: calls, messages and scheduling,
# bench/analyze_workload.erl) with a session daemon of its own, kept under
# _build/bench for the next run (keyed by the workload's source). Reads the
# 10 M-event trace side by side with `babeltrace2 TRACE -o dummy`
# (libbabeltrace2's own decoding) with `calls`, `latency`, `genserver` and
# `findings`,
# on every core and on one (taskset), `export --parquet` beside them, and
# the 3 M-event trace with
# `calls` and the python3-bt2 reference (bench/calls_reference.py), which
# must agree. Prints a Markdown section for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=_build/bench
mkdir -p "$OUT"
EXTRA_PACKAGES="python3-bt2 time" ./scripts/setup.sh >&2
erlc -o "$OUT" bench/analyze_workload.erl test/lttng_session.erl
ANALYZE=priv/dyntrace-analyze
PY=/usr/bin/python3   # Debian's python3, which has python3-bt2
# An analysis is stopped past this much memory (virtual, KiB) or time.
LIMIT_KIB=4194304
LIMIT_S=600

# record DIR EVENTS: once per workload source; an unfinished one is redone.
record() {
    [ -e "$1/.recorded" ] && return
    rm -rf "$1"
    scripts/isolated.sh erl -noshell -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
        -eval "analyze_workload:main([\"$1\", \"$2\"])" >&2
    touch "$1/.recorded"
}

# measure NAME RUNS CMD...: "seconds peak_kib cpu_seconds" of the fastest
# of RUNS runs, or "failed" when one fails (over the limits included).
measure() {
    local name=$1 runs=$2 best="" line
    shift 2
    for _ in $(seq "$runs"); do
        if ! (ulimit -v $LIMIT_KIB; timeout $LIMIT_S /usr/bin/time -f "%e %M %U %S" -o "$OUT/time.txt" "$@" \
                  >"$OUT/$name.out" 2>"$OUT/$name.err"); then
            echo failed
            return
        fi
        line=$(tail -1 "$OUT/time.txt" | awk '{ printf "%s %s %.2f", $1, $2, $3 + $4 }')
        if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
            best=$line
        fi
    done
    echo "$best"
}

key=$(sha1sum bench/analyze_workload.erl | cut -c1-10)
T3="$OUT/trace-3M-$key"
T10="$OUT/trace-10M-$key"
record "$T3" 3000000
record "$T10" 10000000
load_before=$(cut -d' ' -f1 /proc/loadavg)
events3=$("$ANALYZE" calls --json "$T3" | grep -o '"events":[0-9]*' | cut -d: -f2)
events10=$("$ANALYZE" calls --json "$T10" | grep -o '"events":[0-9]*' | cut -d: -f2)

ours=$(measure analyze 2 "$ANALYZE" calls --json "$T3")
prof=$(measure profile 2 "$ANALYZE" profile --json "$T3")
py=$(measure python 1 "$PY" bench/calls_reference.py "$T3")
# What the cores give at once: two babeltrace2, one pinned on each of the
# first two cores; the slower one's seconds (best of two).
pair=""
for _ in 1 2; do
    start=$(date +%s.%N)
    taskset -c 0 babeltrace2 "$T10" -o dummy & first=$!
    taskset -c 1 babeltrace2 "$T10" -o dummy
    wait $first
    t=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    if [ -z "$pair" ] || awk -v a="$t" -v b="$pair" 'BEGIN { exit !(a < b) }'; then pair=$t; fi
done
# faster A B: the faster of two measures ("failed" if either failed).
faster() {
    if [ -z "$1" ]; then echo "$2"; return; fi
    if [ "$1" = failed ] || [ "$2" = failed ]; then echo failed; return; fi
    if awk -v a="${2%% *}" -v b="${1%% *}" 'BEGIN { exit !(a < b) }'; then echo "$2"; else echo "$1"; fi
}
# The 10 M-event reads in rounds, each command once per round, so that
# every one meets the machine's load of the same minutes; the best of
# three rounds each.
declare -A all one
bt10="" bt10_one=""
for _ in 1 2 3; do
    bt10=$(faster "$bt10" "$(measure babeltrace2 1 babeltrace2 "$T10" -o dummy)")
    bt10_one=$(faster "$bt10_one" "$(measure babeltrace2-1core 1 taskset -c 0 babeltrace2 "$T10" -o dummy)")
    for a in calls latency genserver findings; do
        all[$a]=$(faster "${all[$a]:-}" "$(measure "$a" 1 "$ANALYZE" "$a" --json "$T10")")
        one[$a]=$(faster "${one[$a]:-}" "$(measure "$a-1core" 1 taskset -c 0 "$ANALYZE" "$a" --json "$T10")")
    done
    # Every table of the trace written (docs/export.md), then removed.
    all[parquet]=$(faster "${all[parquet]:-}" \
        "$(measure parquet 1 "$ANALYZE" export --json --parquet "$OUT/parquet" "$T10")")
    rm -rf "$OUT/parquet"
    # The same analyses through libbabeltrace2 (--reader babeltrace2).
    for a in calls latency genserver findings; do
        all[bt-$a]=$(faster "${all[bt-$a]:-}" "$(measure "bt-$a" 1 "$ANALYZE" "$a" --json --reader babeltrace2 "$T10")")
        one[bt-$a]=$(faster "${one[bt-$a]:-}" "$(measure "bt-$a-1core" 1 taskset -c 0 "$ANALYZE" "$a" --json --reader babeltrace2 "$T10")")
    done
done
# Both readers must give the same answers.
same=yes
for a in calls latency genserver findings; do
    cmp -s "$OUT/$a.out" "$OUT/bt-$a.out" || same="NO ($a differs)"
done

# Both must find the same calls: counts equal, percentiles within the
# histogram's precision (3 significant digits).
agree=$("$PY" - "$OUT/analyze.out" "$OUT/python.out" <<'PYEOF'
import json, sys
ours, ref = (json.load(open(p)) for p in sys.argv[1:3])
rows = {c["entry"]: c for c in ours["calls"]}
bad = [c["entry"] for c in ref["calls"]
       if c["entry"] not in rows
       or any(rows[c["entry"]][k] != c[k] for k in ("count", "unmatched", "max_ns"))
       or any(abs(rows[c["entry"]][k] - c[k]) > c[k] / 1000 + 1 for k in ("p50_ns", "p90_ns", "p99_ns"))]
print("yes" if ours["events"] == ref["events"] and not bad else "NO: " + ", ".join(bad))
PYEOF
)

load_after=$(cut -d' ' -f3 /proc/loadavg)
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.2f M", n / s / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", b / a }'; }
set -- $ours; our_s=$1 our_kib=$2
set -- $prof; prof_s=$1 prof_kib=$2
set -- $py; py_s=$1 py_kib=$2
set -- $bt10; bt_s=$1 bt_kib=$2 bt_cpu=$3
set -- $bt10_one; bt1_s=$1 bt1_cpu=$3
# row LABEL CORES "seconds kib cpu" BASELINE_S BASELINE_CPU: one line of
# the 10 M-event table, its rate and its CPU against babeltrace2's of the
# same cores.
row() {
    if [ "$3" = failed ]; then
        echo "| $1 | $2 | failed (over $((LIMIT_KIB / 1024)) MiB or $LIMIT_S s) | | | | | |"
        return
    fi
    local base=$4 base_cpu=$5
    set -- "$1" "$2" $3
    echo "| $1 | $2 | $3 | $5 | $(rate "$events10" "$3") | $(($4 / 1024)) MiB | $(ratio "$3" "$base") | $(ratio "$5" "$base_cpu") |"
}
speedup() {
    if [ "${all[$1]}" = failed ] || [ "${one[$1]}" = failed ]; then echo "-"; return; fi
    ratio "${all[$1]%% *}" "${one[$1]%% *}"
}

cat <<EOF2

## dyntrace-analyze: reading speed and memory

\`make bench-analyze\` (bench/analyze.sh), $(date -u +%Y-%m-%d) on $(nproc) cores of
$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr), libbabeltrace2
$(dpkg-query -W -f '${Version}' libbabeltrace2-0 2>/dev/null). Traces: gen_server calls of 4 clients to 2
servers whose callback calls a traced function (function_call/return, message_send/receive,
process_scheduled; bench/analyze_workload.erl). 10 M-event trace: wall-clock seconds, best of three
rounds that run every command once each (so that each meets the same minutes of the machine's
load); 3 M-event trace: best of two runs (Python: one). CPU = user + system seconds of that run;
rate = events / wall second; ratio = that rate over babeltrace2's on the same cores; CPU ratio =
babeltrace2's CPU seconds over the analyser's (above 1: less work per event than babeltrace2's own
decoding; the figure a loaded machine changes least). "1" core: \`taskset -c 0\` (one decoding graph); "all": every core (the streams
decoded in parallel, one thread (or graph) per part, merged by timestamp). Load average (other jobs on the
machine): $load_before at the start, $load_after over the last 15 minutes.

| reader, $events10-event trace | cores | seconds | CPU s | events/s | peak RSS | rate vs. babeltrace2 | CPU ratio |
|---|---|---:|---:|---:|---:|---:|---:|
| \`babeltrace2 TRACE -o dummy\` (one thread) | all | $bt_s | $bt_cpu | $(rate "$events10" "$bt_s") | $((bt_kib / 1024)) MiB | 1.00x | 1.00x |
| \`babeltrace2 TRACE -o dummy\` | 1 | $bt1_s | $bt1_cpu | $(rate "$events10" "$bt1_s") | | 1.00x | 1.00x |
$(row '`dyntrace-analyze calls --json TRACE`' all "${all[calls]}" "$bt_s" "$bt_cpu")
$(row '`dyntrace-analyze calls --json TRACE`' 1 "${one[calls]}" "$bt1_s" "$bt1_cpu")
$(row '`dyntrace-analyze latency --json TRACE`' all "${all[latency]}" "$bt_s" "$bt_cpu")
$(row '`dyntrace-analyze latency --json TRACE`' 1 "${one[latency]}" "$bt1_s" "$bt1_cpu")
$(row '`dyntrace-analyze genserver --json TRACE`' all "${all[genserver]}" "$bt_s" "$bt_cpu")
$(row '`dyntrace-analyze genserver --json TRACE`' 1 "${one[genserver]}" "$bt1_s" "$bt1_cpu")
$(row '`dyntrace-analyze findings --json TRACE`' all "${all[findings]}" "$bt_s" "$bt_cpu")
$(row '`dyntrace-analyze findings --json TRACE`' 1 "${one[findings]}" "$bt1_s" "$bt1_cpu")
$(row '`dyntrace-analyze export --json --parquet DIR TRACE`' all "${all[parquet]}" "$bt_s" "$bt_cpu")
$(row '`... calls --json --reader babeltrace2 TRACE`' all "${all[bt-calls]}" "$bt_s" "$bt_cpu")
$(row '`... calls --json --reader babeltrace2 TRACE`' 1 "${one[bt-calls]}" "$bt1_s" "$bt1_cpu")
$(row '`... latency --json --reader babeltrace2 TRACE`' all "${all[bt-latency]}" "$bt_s" "$bt_cpu")
$(row '`... latency --json --reader babeltrace2 TRACE`' 1 "${one[bt-latency]}" "$bt1_s" "$bt1_cpu")
$(row '`... genserver --json --reader babeltrace2 TRACE`' all "${all[bt-genserver]}" "$bt_s" "$bt_cpu")
$(row '`... genserver --json --reader babeltrace2 TRACE`' 1 "${one[bt-genserver]}" "$bt1_s" "$bt1_cpu")
$(row '`... findings --json --reader babeltrace2 TRACE`' all "${all[bt-findings]}" "$bt_s" "$bt_cpu")
$(row '`... findings --json --reader babeltrace2 TRACE`' 1 "${one[bt-findings]}" "$bt1_s" "$bt1_cpu")

The analyser reads with its built-in CTF reader unless \`--reader babeltrace2\` says otherwise;
both print the same JSON for every analysis here: $same. Targets (built-in reader): at least 3x
babeltrace2's rate on one core and 5x on all for calls, latency, genserver and findings, peak RSS
at most 64 MiB (\`export --parquet\`, which holds a row group per table: 256 MiB). Speedup of every core over one: calls $(speedup calls), latency $(speedup latency),
genserver $(speedup genserver), findings $(speedup findings). What the machine's cores give at once: two \`babeltrace2 TRACE -o
dummy\`, one pinned on each of two cores, take $pair s together against $bt1_s s for one alone
(two independent cores: about the same; one core's worth shared: about twice).

| reader, $events3-event trace | seconds | events/s | peak RSS | analyser's rate vs. it |
|---|---:|---:|---:|---:|
| \`dyntrace-analyze calls --json TRACE\` | $our_s | $(rate "$events3" "$our_s") | $((our_kib / 1024)) MiB | 1.00x |
| \`dyntrace-analyze profile --json TRACE\` (same trace) | $prof_s | $(rate "$events3" "$prof_s") | $((prof_kib / 1024)) MiB | $(ratio "$our_s" "$prof_s") |
| \`bench/calls_reference.py TRACE\` (python3-bt2) | $py_s | $(rate "$events3" "$py_s") | $((py_kib / 1024)) MiB | $(ratio "$our_s" "$py_s") |

Target: at least 15x Python's rate. The analyser and the Python reference agree (same events,
counts, unmatched and max; percentiles within 0.1%): $agree.
EOF2
