#!/bin/sh
# Profiles one enabled message_send under callgrind and prints the
# Markdown breakdown (appended to BENCHMARKS.md by bench/run.sh).
# Expects bench/run.sh to have built _build/bench.
set -eu
cd "$(dirname "$0")/.."
OUT=_build/bench
TRIPS=${DYNTRACE_PROFILE_TRIPS:-10000}
if ! command -v valgrind >/dev/null 2>&1; then
    printf '## Profile\n\nvalgrind is not installed: no profile.\n\n'
    exit 0
fi
rm -f "$OUT"/callgrind.out.*
# --smc-check=all: the JIT writes code through a second mapping, which
# valgrind must see as self-modifying code. Only the emulator is profiled.
CMD="valgrind --tool=callgrind --smc-check=all --trace-children=yes --trace-children-skip='*/dirname,*/basename,*erl_child_setup,*inet_gethost,*/sh' erl -noshell +S 1 ... -eval 'dyntrace_profile:workload($TRIPS)'"
valgrind --tool=callgrind --smc-check=all --trace-children=yes \
    --trace-children-skip='*/dirname,*/basename,*erl_child_setup,*inet_gethost,*/sh' \
    --callgrind-out-file="$OUT/callgrind.out.%p" \
    erl -noshell +S 1 -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
    -eval "dyntrace_profile:workload($TRIPS)" >"$OUT/profile.stdout" 2>"$OUT/profile.stderr"
EVENTS=$(sed -n 's/^events //p' "$OUT/profile.stdout")
PROFILE=$(grep -l 'dyntrace_profile:workload' "$OUT"/callgrind.out.* | head -1)
callgrind_annotate --threshold=100 --inclusive=yes --tree=calling "$PROFILE" >"$OUT/callgrind.txt" 2>/dev/null
erl -noshell -pa "$OUT" -eval "dyntrace_profile:report(\"$OUT/callgrind.txt\", \"$EVENTS\", \"$CMD\")"
