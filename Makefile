# Shortcuts; the README's commands are scripts/demo.sh and scripts/test.sh.
.PHONY: all demo test bench bench-analyze bench-analyze-memory bench-triage bench-triage-idle bench-rabbitmq soak lint clean

all:
	rebar3 compile

demo:
	./scripts/demo.sh

test:
	./scripts/test.sh

bench:
	./bench/run.sh

# Only the analyser's benchmark: replaces its section of BENCHMARKS.md.
bench-analyze:
	mkdir -p _build/bench
	./bench/analyze.sh >_build/bench/analyze.md
	./scripts/replace-section.sh '## dyntrace-analyze: reading speed' _build/bench/analyze.md

# The analyser's peak RSS on 1 M gen_server calls (one alias each): replaces
# its section of BENCHMARKS.md.
bench-analyze-memory:
	mkdir -p _build/bench
	./bench/analyze_memory.sh >_build/bench/analyze-memory.md
	./scripts/replace-section.sh '## dyntrace-analyze: memory on a trace' _build/bench/analyze-memory.md

# CPU per request untraced, under record(triage, ...) and under full
# tracing, side by side: replaces its section of BENCHMARKS.md.
bench-triage:
	./bench/triage.sh
	./scripts/replace-section.sh '## Triage: CPU per request' _build/bench/triage.md

# What triage and each of its parts cost a node that does nothing.
bench-triage-idle:
	./bench/triage_idle.sh
	./scripts/replace-section.sh '## Triage on an idle node' _build/bench/triage_idle.md

# Triage's cost on Debian's RabbitMQ with a pika client (needs rabbitmq-server
# and python3-pika: scripts/setup.sh): the RabbitMQ suite's bench group.
bench-rabbitmq:
	./bench/rabbitmq.sh
	./scripts/replace-section.sh '## Triage on RabbitMQ: broker CPU per message' _build/bench/rabbitmq.md

# 60 s at the highest event rate in an isolated node: memory must stay flat.
soak:
	rebar3 ct --suite test/dyntrace_reliability_SUITE --case soak_long

lint:
	./scripts/module-graph.sh >/dev/null
	./scripts/module-graph.sh analyze/src >/dev/null
	./scripts/erl-module-graph.sh >/dev/null
	cargo fmt --all -- --check
	cargo clippy --release --workspace --all-targets -- -D warnings
	cargo clippy --release -p dyntrace-analyze --no-default-features --all-targets -- -D warnings
	cargo test --release --workspace

clean:
	cargo clean
	rm -rf _build priv/*.so
