#!/bin/sh
# Profiles one enabled message_send, and the probe-off path, under
# callgrind and prints the Markdown breakdown (bench/run.sh appends it to
# BENCHMARKS.md); then each message shape and the call events against the
# limit tracer. `bench/profile.sh shapes` profiles only the latter.
# Expects bench/run.sh to have built _build/bench.
set -eu
cd "$(dirname "$0")/.."
OUT=_build/bench
PART=${1:-all}
TRIPS=${DYNTRACE_PROFILE_TRIPS:-10000}
SENDS=${DYNTRACE_PROFILE_SENDS:-5000}
CALLS=${DYNTRACE_PROFILE_CALLS:-10000}
if ! command -v valgrind >/dev/null 2>&1; then
    printf '## Profile\n\nvalgrind is not installed: no profile.\n\n'
    exit 0
fi
# --smc-check=all: the JIT writes code through a second mapping, which
# valgrind must treat as self-modifying code. Only the emulator is
# profiled, not the shell, lttng or babeltrace2 it runs. --dump-instr:
# costs per instruction, from which the report counts the code lines a
# tracer runs per event (callgrind.NAME.out, the emulator's raw profile).
profile() {
    name=$1
    shift
    rm -f "$OUT/callgrind.$name".*
    valgrind --tool=callgrind --smc-check=all --dump-instr=yes --trace-children=yes \
        --trace-children-skip='*/dirname,*/basename,*erl_child_setup,*inet_gethost,*/sh' \
        --callgrind-out-file="$OUT/callgrind.$name.%p" \
        erl -noshell +S 1 -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
        -eval "$@" >"$OUT/profile.$name.stdout" 2>"$OUT/profile.$name.stderr"
    # The emulator's profile is the largest: `erl` starts it through a
    # shell script, whose profile names the workload too.
    cp "$(ls -S $(grep -l 'dyntrace_profile:workload' "$OUT/callgrind.$name".*) | head -1)" \
        "$OUT/callgrind.$name.out"
    callgrind_annotate --threshold=100 --inclusive=yes --tree=calling "$OUT/callgrind.$name.out" \
        >"$OUT/callgrind.$name.txt" 2>/dev/null
}
profile_shapes() {
    shapes="binary pid_binary gen_call gen_reply record map8"
    for shape in $shapes; do
        profile "shape_$shape" "dyntrace_profile:workload_shape(dyntrace, $shape, $SENDS)"
        profile "shape_${shape}_limit" "dyntrace_profile:workload_shape(limit_tracer, $shape, $SENDS)"
    done
    profile shape_calls "dyntrace_profile:workload_calls(dyntrace, $SENDS)"
    profile shape_calls_limit "dyntrace_profile:workload_calls(limit_tracer, $SENDS)"
    erl -noshell -pa "$OUT" -eval \
        "dyntrace_profile:shapes_report(\"$OUT\", \"$shapes calls\", \"$SENDS\")"
}
if [ "$PART" = shapes ]; then
    profile_shapes
    exit 0
fi
profile send "dyntrace_profile:workload($TRIPS)"
profile limit "dyntrace_profile:workload_limit($TRIPS)"
profile none "dyntrace_profile:workload_none($TRIPS)"
profile call "dyntrace_profile:workload_call($CALLS)"
profile limit_none "dyntrace_profile:workload_limit_none($TRIPS)"
profile off "dyntrace_profile:workload_off($CALLS)"
profile procs "dyntrace_profile:workload_procs_off($CALLS)"
EVENTS=$(sed -n 's/^events //p' "$OUT/profile.send.stdout")
erl -noshell -pa "$OUT" -eval \
    "dyntrace_profile:report(\"$OUT/callgrind.send.txt\", \"$OUT/callgrind.limit.txt\", \"$OUT/callgrind.none.txt\", \"$OUT/callgrind.limit_none.txt\", \"$OUT/callgrind.call.txt\", \"$OUT/callgrind.off.txt\", \"$OUT/callgrind.procs.txt\", \"$CALLS\", \"$EVENTS\")"
profile_shapes
