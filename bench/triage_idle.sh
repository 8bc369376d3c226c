#!/bin/sh
# `make bench-triage-idle`: what record(triage, ...) and each of its parts
# cost a node that does nothing, in CPU per second (bench/triage_idle.erl);
# writes _build/bench/triage_idle.md (printed too), which the Makefile puts
# in BENCHMARKS.md. Needs root and LTTng, as the tests do.
set -eu
cd "$(dirname "$0")/.."
OUT=_build/bench
mkdir -p "$OUT"
rebar3 compile >/dev/null
erlc -Werror +warn_missing_spec -o "$OUT" bench/triage_idle.erl
erlc -o "$OUT" test/lttng_session.erl
# No busy waiting: a scheduler that spins while idle would count as CPU.
erl -noshell +sbwt none +sbwtdcpu none +sbwtdio none \
    -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
    -eval 'triage_idle:main(["'"$OUT"'/triage_idle.md"])'
