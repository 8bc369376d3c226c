#!/bin/bash
# Installs what dyntrace needs on Debian 12 (as root; rabbitmq-server and
# python3-pika: the real service the RabbitMQ suite traces; chromium, headless,
# loads the analyser's report page in its tests, npm's speedscope app
# the profiles and timelines `dyntrace-analyze` exports, and DuckDB, in a
# Python venv of its own, the Parquet tables it exports), starts an LTTng
# session daemon when none answers, and builds the NIF and the analyser.
# Idempotent: a second run installs nothing and only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(erlang-base erlang-dev erlang-common-test erlang-runtime-tools
          erlang-proper erlang-tools rebar3 lttng-tools liblttng-ust-dev
          babeltrace2 libbabeltrace2-dev pkg-config python3-bt2 gcc make iproute2
          chromium fonts-dejavu-core rabbitmq-server python3-pika python3-venv)

missing=()
for p in "${PACKAGES[@]}" ${EXTRA_PACKAGES:-}; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "==> installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# speedscope's static app (dyntrace_export_SUITE opens the exported
# profile and timeline in it), pinned: the suite reads its page.
command -v npm >/dev/null 2>&1 || {
    echo "==> installing: nodejs npm"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
}
SPEEDSCOPE=speedscope@1.25.0
if ! npm ls -g --depth=0 "$SPEEDSCOPE" >/dev/null 2>&1; then
    echo "==> installing: $SPEEDSCOPE (npm, global)"
    npm install -g --no-audit --no-fund "$SPEEDSCOPE" >/dev/null
fi

# DuckDB (PyPI's duckdb, pinned; pytz for its timestamps with a zone):
# dyntrace_export_SUITE runs SQL over the exported Parquet tables with
# this interpreter, by this path. A venv: Debian's python3 is externally
# managed.
DUCKDB_VENV=/var/cache/dyntrace/duckdb-venv
DUCKDB_PACKAGES=(duckdb==1.4.2 pytz==2025.2)
if ! "$DUCKDB_VENV/bin/python" -c \
        'import duckdb, pytz, sys; sys.exit(duckdb.__version__ != "1.4.2")' 2>/dev/null; then
    echo "==> installing: ${DUCKDB_PACKAGES[*]} (pip, in $DUCKDB_VENV)"
    /usr/bin/python3 -m venv "$DUCKDB_VENV"
    "$DUCKDB_VENV/bin/pip" install -q --disable-pip-version-check "${DUCKDB_PACKAGES[@]}"
fi

# rustler 0.39 needs Rust >= 1.91; Debian 12's own rustc is older.
if ! command -v cargo >/dev/null 2>&1; then
    [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || {
    echo "dyntrace: cargo not found; install a Rust toolchain >= 1.91 (rustup)" >&2
    exit 1
}

if ! lttng list >/dev/null 2>&1; then
    echo "==> starting the LTTng session daemon"
    lttng-sessiond --daemonize
    for _ in $(seq 50); do lttng list >/dev/null 2>&1 && break; sleep 0.1; done
fi

echo "==> building the NIF and dyntrace-analyze"
# A dependency's build makes the NIF only (scripts/build-nif.sh); here the
# analyser too.
DYNTRACE_BUILD_ANALYZER=1 rebar3 compile
