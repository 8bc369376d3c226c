#!/bin/sh
# `make bench-triage`: CPU per request untraced, under record(triage, ...)
# and under full tracing, side by side in one run (bench/triage_bench.erl);
# writes _build/bench/triage.md (printed too), which the Makefile puts in
# BENCHMARKS.md. Needs root and LTTng, as the tests do.
set -eu
cd "$(dirname "$0")/.."
OUT=_build/bench
mkdir -p "$OUT"
rebar3 compile >/dev/null
erlc -Werror +warn_missing_spec -o "$OUT" bench/triage_bench.erl
erlc -o "$OUT" test/lttng_session.erl test/bench_stats.erl
# No busy waiting: a scheduler that spins while idle would count as CPU.
erl -noshell +sbwt none +sbwtdcpu none +sbwtdio none \
    -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
    -eval 'triage_bench:main(["'"$OUT"'/triage.md"])'
