#!/bin/sh
# Builds the Rust NIF (and its C tracepoint provider) and puts it in priv/.
# Called by `rebar3 compile`; runs from the project's top directory.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p priv
cp -f target/release/libdyntrace_nif.so priv/libdyntrace_nif.so.tmp
# Rename into place so a running node never sees a half-written library.
mv -f priv/libdyntrace_nif.so.tmp priv/libdyntrace_nif.so
