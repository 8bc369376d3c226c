#!/bin/sh
# Builds the Rust NIF (and its C tracepoint provider) and puts it in priv/.
# Called by `rebar3 compile`; runs from the project's top directory.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p priv
# The NIF and its LTTng-UST probe provider (see native/build.rs). Rename
# into place so a running node never sees a half-written library (a temp
# name per build: two builds may run at once).
for lib in libdyntrace_nif.so libdyntrace_lttng.so; do
    tmp="priv/$lib.$$.tmp"
    cp -f "target/release/$lib" "$tmp"
    mv -f "$tmp" "priv/$lib"
done
