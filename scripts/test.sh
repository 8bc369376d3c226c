#!/bin/bash
# Runs every test: lints (the NIF's and the analyser's module graphs free
# of cycles and of imports pointing up a layer, the Erlang modules' graph
# free of cycles, cargo fmt,
# clippy -D warnings, the analyser built without C libraries, Erlang
# compiled with warnings_as_errors), the Rust unit tests (cargo test), then each
# Common Test suite against an LTTng
# session daemon of its own (scripts/isolated.sh), so that no other
# recording session on the machine can disturb it. Ends with an
# "N passed, N failed" line. Arguments go to `rebar3 ct` (one isolated run).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

echo "==> module graphs of native/src, analyze/src (no cycle, no import up a layer) and src_erl (no cycle), cargo fmt --check, cargo clippy -D warnings, pure-Rust analyser"
./scripts/module-graph.sh >/dev/null
./scripts/module-graph.sh analyze/src >/dev/null
./scripts/erl-module-graph.sh >/dev/null
cargo fmt --all -- --check
cargo clippy --release --quiet --workspace --all-targets -- -D warnings
# The analyser alone, as `cargo install --path analyze --no-default-features`
# builds it on a machine without libbabeltrace2: no C library linked.
cargo clippy --release --quiet -p dyntrace-analyze --no-default-features --all-targets -- -D warnings

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
echo "==> cargo test (Rust unit tests, no VM; the analyser's also without C libraries)"
cargo test --release --quiet --workspace 2>&1 | tee -a "$log" || status=$?
cargo test --release --quiet -p dyntrace-analyze --no-default-features 2>&1 | tee -a "$log" || status=$?
if [ $# -gt 0 ]; then
    echo "==> rebar3 ct $*"
    scripts/isolated.sh rebar3 ct "$@" 2>&1 | tee -a "$log" || status=$?
else
    for suite in test/*_SUITE.erl; do
        echo "==> rebar3 ct --suite $suite (own session daemon)"
        scripts/isolated.sh rebar3 ct --suite "$suite" 2>&1 | tee -a "$log" || status=$?
    done
fi
# rebar3 prints "All N tests passed." or "Failed N tests. Passed M tests."
# once per run, cargo "test result: ... N passed; M failed"; add them up.
sum() {
    awk -v re="$1" '{ while (match($0, re)) { m = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", m); n += m; $0 = substr($0, RSTART + RLENGTH) } } END { print n + 0 }' "$log"
}
passed=$(sum '(All|Passed) [0-9]+ tests?|[0-9]+ passed;')
failed=$(sum 'Failed [0-9]+ tests?|[0-9]+ failed;')
echo "${passed:-0} passed, ${failed:-0} failed"
exit "$status"
