#!/bin/bash
# Benchmark of dyntrace-analyze (`make bench-analyze`; also run by `make
# bench`): records a trace of 3 M and one of 10 M events (calls and returns
# of a traced function) with a session daemon of its own, then reads the
# 3 M-event trace side by side with `babeltrace2 TRACE -o dummy`
# (libbabeltrace2's own decoding: the floor), `dyntrace-analyze calls
# --json` and the python3-bt2 reference (bench/calls_reference.py), checks
# that the analyser and the reference agree, and measures peak RSS on the
# 10 M-event trace. Prints a Markdown section for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=_build/bench
mkdir -p "$OUT"
EXTRA_PACKAGES="python3-bt2 time" ./scripts/setup.sh >&2
erlc -o "$OUT" bench/analyze_workload.erl test/lttng_session.erl
ANALYZE=priv/dyntrace-analyze
PY=/usr/bin/python3   # Debian's python3, which has python3-bt2

record() {  # record DIR EVENTS
    rm -rf "$1"
    scripts/isolated.sh erl -noshell -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
        -eval "analyze_workload:main([\"$1\", \"$2\"])" >&2
}

# measure NAME CMD...: "seconds peak_kib" of the best of two runs (one for python).
measure() {
    local name=$1 runs=2 best="" line
    shift
    [ "$name" = python ] && runs=1
    for _ in $(seq $runs); do
        /usr/bin/time -f "%e %M" -o "$OUT/time.txt" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
        line=$(tail -1 "$OUT/time.txt")
        if [ -z "$best" ] || awk -v a="${line% *}" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then
            best=$line
        fi
    done
    echo "$best"
}

load_before=$(cut -d' ' -f1 /proc/loadavg)
T3="$OUT/trace-3M"
T10="$OUT/trace-10M"
record "$T3" 3000000
record "$T10" 10000000
events3=$("$ANALYZE" calls --json "$T3" | grep -o '"events":[0-9]*' | cut -d: -f2)
events10=$("$ANALYZE" calls --json "$T10" | grep -o '"events":[0-9]*' | cut -d: -f2)

bt=$(measure babeltrace2 babeltrace2 "$T3" -o dummy)
ours=$(measure analyze "$ANALYZE" calls --json "$T3")
prof=$(measure profile "$ANALYZE" profile --json "$T3")
py=$(measure python "$PY" bench/calls_reference.py "$T3")
bt10=$(measure babeltrace2-10M babeltrace2 "$T10" -o dummy)
ours10=$(measure analyze-10M "$ANALYZE" calls --json "$T10")

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
set -- $bt; bt_s=$1 bt_kib=$2
set -- $ours; our_s=$1 our_kib=$2
set -- $prof; prof_s=$1 prof_kib=$2
set -- $py; py_s=$1 py_kib=$2
set -- $bt10; bt10_s=$1 bt10_kib=$2
set -- $ours10; our10_s=$1 our10_kib=$2

cat <<EOF2

## dyntrace-analyze: reading speed and memory

\`make bench-analyze\` (bench/analyze.sh), $(date -u +%Y-%m-%d) on $(nproc) cores of
$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr), libbabeltrace2
$(dpkg-query -W -f '${Version}' libbabeltrace2-0 2>/dev/null). Traces: function_call/function_return of
4 processes (bench/analyze_workload.erl). Wall-clock seconds, best of two runs (Python: one); rate =
events / second; ratio = the analyser's rate over the other's. Load average (other jobs on the
machine): $load_before at the start, $load_after over the last 15 minutes.

| reader, $events3-event trace | seconds | events/s | peak RSS | analyser's rate vs. it |
|---|---:|---:|---:|---:|
| \`babeltrace2 TRACE -o dummy\` (floor) | $bt_s | $(rate "$events3" "$bt_s") | $((bt_kib / 1024)) MiB | $(ratio "$our_s" "$bt_s") |
| \`dyntrace-analyze calls --json TRACE\` | $our_s | $(rate "$events3" "$our_s") | $((our_kib / 1024)) MiB | 1.00x |
| \`dyntrace-analyze profile --json TRACE\` (same trace) | $prof_s | $(rate "$events3" "$prof_s") | $((prof_kib / 1024)) MiB | $(ratio "$our_s" "$prof_s") |
| \`bench/calls_reference.py TRACE\` (python3-bt2) | $py_s | $(rate "$events3" "$py_s") | $((py_kib / 1024)) MiB | $(ratio "$our_s" "$py_s") |

Targets: at least 0.60x babeltrace2's rate, at least 15x Python's. The analyser and the Python
reference agree (same events, counts, unmatched and max; percentiles within 0.1%): $agree.

| reader, $events10-event trace | seconds | events/s | peak RSS |
|---|---:|---:|---:|
| \`babeltrace2 TRACE -o dummy\` | $bt10_s | $(rate "$events10" "$bt10_s") | $((bt10_kib / 1024)) MiB |
| \`dyntrace-analyze calls --json TRACE\` | $our10_s | $(rate "$events10" "$our10_s") | $((our10_kib / 1024)) MiB |

Peak RSS stays flat from 3 M to 10 M events ($((our_kib / 1024)) MiB, $((our10_kib / 1024)) MiB): the
analyser keeps open calls per process and one histogram per code location, nothing per event.
EOF2
