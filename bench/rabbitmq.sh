#!/bin/sh
# `make bench-rabbitmq`: Debian's RabbitMQ broker's CPU per message with a
# pika publisher and consumer, untraced, under `priv/dyntrace record ...
# triage` and under full tracing, side by side in rotating rounds of one
# run (the bench group of test/dyntrace_rabbitmq_SUITE.erl, with a session
# daemon of its own); writes _build/bench/rabbitmq.md (printed too), which
# the Makefile puts in BENCHMARKS.md. Needs root, LTTng, rabbitmq-server
# and python3-pika (scripts/setup.sh). DYNTRACE_BENCH_SECONDS (10) and
# DYNTRACE_BENCH_ROUNDS (9) set the runs: each round runs the broker
# untraced twice, so that each round gives its own ratios, and the median
# of the rounds' ratios has an interval (test/bench_stats.erl).
set -eu
cd "$(dirname "$0")/.."
OUT=$(pwd)/_build/bench
mkdir -p "$OUT"
rm -f "$OUT/rabbitmq-table.md"
DYNTRACE_BUILD_ANALYZER=1 rebar3 compile >/dev/null
DYNTRACE_BENCH_DIR=$OUT scripts/isolated.sh rebar3 ct --suite test/dyntrace_rabbitmq_SUITE \
    --group bench >&2
mv "$OUT/rabbitmq.md" "$OUT/rabbitmq-table.md"
{
    printf '\n## Triage on RabbitMQ: broker CPU per message\n\n'
    printf 'Issue 41'"'"'s target on a real service: `triage` at most 1.10x the untraced CPU per message. '
    printf 'Measured by `make bench-rabbitmq` (`bench/rabbitmq.sh`):\n\n'
    cat "$OUT/rabbitmq-table.md"
} >"$OUT/rabbitmq.md"
cat "$OUT/rabbitmq.md"
