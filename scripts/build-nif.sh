#!/bin/sh
# Builds the NIF (and its C tracepoint provider) with cargo and puts both
# in priv/; with DYNTRACE_BUILD_ANALYZER=1 also the trace analyser
# `dyntrace-analyze` (which needs libbabeltrace2-dev; scripts/setup.sh sets
# it). Called by `rebar3 compile`, also when dyntrace is a dependency of a
# release: its build host then needs cargo and liblttng-ust-dev only.
# Honours CARGO_TARGET_DIR (a cache shared between builds).
set -eu
cd "$(dirname "$0")/.."
files="libdyntrace_nif.so libdyntrace_lttng.so"
if [ "${DYNTRACE_BUILD_ANALYZER:-0}" = 1 ]; then
    cargo build --release --quiet
    files="$files dyntrace-analyze"
else
    cargo build --release --quiet -p dyntrace_nif
fi
target="${CARGO_TARGET_DIR:-target}"
mkdir -p priv
# The NIF and its LTTng-UST probe provider (see native/build.rs). Rename
# into place so a running node never sees a half-written library (a temp
# name per build: two builds may run at once).
for file in $files; do
    tmp="priv/$file.$$.tmp"
    cp -f "$target/release/$file" "$tmp"
    mv -f "$tmp" "priv/$file"
done
