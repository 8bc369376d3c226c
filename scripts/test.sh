#!/bin/bash
# Runs every test: lints (cargo fmt, clippy -D warnings, Erlang compiled
# with warnings_as_errors), then the Common Test suites against the real
# LTTng session daemon. Ends with an "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

echo "==> cargo fmt --check, cargo clippy -D warnings"
cargo fmt --all -- --check
cargo clippy --release --quiet -- -D warnings

echo "==> rebar3 ct"
log=$(mktemp)
status=0
rebar3 ct "$@" 2>&1 | tee "$log" || status=$?
passed=$(grep -oE '(All|Passed) [0-9]+ tests?' "$log" | grep -oE '[0-9]+' | tail -1 || true)
failed=$(grep -oE 'Failed [0-9]+ tests?' "$log" | grep -oE '[0-9]+' | tail -1 || true)
rm -f "$log"
echo "${passed:-0} passed, ${failed:-0} failed"
exit "$status"
