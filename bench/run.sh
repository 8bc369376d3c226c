#!/bin/sh
# `make bench`: builds the project and the benchmark's pieces into
# _build/bench, runs every workload in every configuration and writes
# BENCHMARKS.md (printed too). Needs root and LTTng, as the tests do.
set -eu
cd "$(dirname "$0")/.."
OUT=_build/bench
mkdir -p "$OUT"
# Packages, session daemon and build as for the tests, plus valgrind for
# the instruction profile.
EXTRA_PACKAGES=valgrind ./scripts/setup.sh
ERL_INCLUDE=$(erl -noshell -eval 'io:format("~s/erts-~s/include", [code:root_dir(), erlang:system_info(version)]), halt().')
cc -shared -fPIC -O2 -Wall -Wextra -I"$ERL_INCLUDE" -o "$OUT/floor_tracer.so" bench/floor_tracer.c
# The limit tracer writes dyntrace's own message_send tracepoint: it needs
# the tracepoint header the NIF's build generates from the event table.
TP_DIR=$(cargo build --release --message-format=json 2>/dev/null \
    | grep '"reason":"build-script-executed"' | grep dyntrace_nif \
    | sed -n 's/.*"out_dir":"\([^"]*\)".*/\1/p')
cc -shared -fPIC -O2 -Wall -Wextra -Wno-unused-parameter -I"$ERL_INCLUDE" -Inative/c_src -I"$TP_DIR" \
    -o "$OUT/limit_tracer.so" bench/limit_tracer.c -ldl
erlc -Werror +warn_missing_spec -o "$OUT" bench/floor_tracer.erl bench/limit_tracer.erl \
    bench/bench_callee.erl bench/dyntrace_bench.erl bench/dyntrace_profile.erl bench/payload_bench.erl \
    bench/probes_bench.erl bench/sample_workload.erl bench/sampler_bench.erl
erlc -o "$OUT" test/lttng_session.erl
erl -noshell -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
    -eval 'dyntrace_bench:main(["BENCHMARKS.md"])'
erl -noshell -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
    -eval 'payload_bench:main(["'"$OUT"'/payload.md"])'
cat "$OUT/payload.md" >>BENCHMARKS.md
erl -noshell -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
    -eval 'payload_bench:shapes(["'"$OUT"'/shapes.md"])'
cat "$OUT/shapes.md" >>BENCHMARKS.md
erl -noshell -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
    -eval 'probes_bench:main(["'"$OUT"'/probes.md"])'
cat "$OUT/probes.md" >>BENCHMARKS.md
erl -noshell -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
    -eval 'sampler_bench:main(["'"$OUT"'/samplers.md"])'
cat "$OUT/samplers.md" >>BENCHMARKS.md
if [ -x bench/profile.sh ]; then
    bench/profile.sh >>BENCHMARKS.md
fi
if [ -f bench/format_bench.escript ]; then
    escript bench/format_bench.escript >>BENCHMARKS.md
fi
bench/analyze.sh >>BENCHMARKS.md
# CPU per request untraced, under record(triage, ...) and under full
# tracing (also alone: make bench-triage).
erlc -Werror +warn_missing_spec -o "$OUT" bench/triage_bench.erl
erl -noshell +sbwt none +sbwtdcpu none +sbwtdio none -pa _build/default/lib/dyntrace/ebin -pa "$OUT" \
    -eval 'triage_bench:main(["'"$OUT"'/triage.md"])'
cat "$OUT/triage.md" >>BENCHMARKS.md
# The same on Debian's RabbitMQ with a pika client, the broker's CPU per
# message (also alone: make bench-rabbitmq).
bench/rabbitmq.sh >/dev/null
cat "$OUT/rabbitmq.md" >>BENCHMARKS.md
