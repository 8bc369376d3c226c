#!/bin/sh
# Builds the Rust workspace: the NIF (and its C tracepoint provider) and the
# trace analyser; puts the NIF and `dyntrace-analyze` in priv/.
# Called by `rebar3 compile`; runs from the project's top directory.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p priv
# The NIF and its LTTng-UST probe provider (see native/build.rs). Rename
# into place so a running node never sees a half-written library (a temp
# name per build: two builds may run at once).
for file in libdyntrace_nif.so libdyntrace_lttng.so dyntrace-analyze; do
    tmp="priv/$file.$$.tmp"
    cp -f "target/release/$file" "$tmp"
    mv -f "$tmp" "priv/$file"
done
