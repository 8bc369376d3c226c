#!/bin/bash
# Runs every test: lints (cargo fmt, clippy -D warnings, Erlang compiled
# with warnings_as_errors), then each Common Test suite against an LTTng
# session daemon of its own (scripts/isolated.sh), so that no other
# recording session on the machine can disturb it. Ends with an
# "N passed, N failed" line. Arguments go to `rebar3 ct` (one isolated run).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

echo "==> cargo fmt --check, cargo clippy -D warnings (whole workspace)"
cargo fmt --all -- --check
cargo clippy --release --quiet --workspace --all-targets -- -D warnings

echo "==> cargo test -p dyntrace-analyze (the analyses' state machines)"
cargo test --release --quiet -p dyntrace-analyze

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
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
# once per run; add them up (`|| true`: under pipefail a grep that finds
# nothing, e.g. no "Failed" when all pass, would end the script here).
sum() { grep -oE "$1" "$log" | grep -oE '[0-9]+' | awk '{ n += $1 } END { print n + 0 }' || true; }
passed=$(sum '(All|Passed) [0-9]+ tests?')
failed=$(sum 'Failed [0-9]+ tests?')
echo "${passed:-0} passed, ${failed:-0} failed"
exit "$status"
