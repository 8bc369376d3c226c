#!/bin/bash
# Records the checkout hunt of docs/profile.md (scripts/profile_hunt.erl:
# examples/checkout_demo.erl traced, then sampled with dyntrace:sample/2)
# with a session daemon of its own, and prints what dyntrace-analyze makes
# of the traces: the outputs the README and docs/profile.md show. Usage:
# scripts/profile-hunt.sh [DIR] (default _build/profile-hunt; its traces are
# replaced).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-_build/profile-hunt}
A=priv/dyntrace-analyze
rm -rf "$DIR"
mkdir -p "$DIR/ebin"
erlc -o "$DIR/ebin" +warnings_as_errors examples/checkout_demo.erl scripts/profile_hunt.erl
scripts/isolated.sh erl -noshell -pa _build/default/lib/dyntrace/ebin -pa "$DIR/ebin" \
    -eval "profile_hunt:main([\"$DIR\"])" | tee "$DIR/pids.txt"
pid=$(sed -n 's/.*hunt-sampled: checkout is \(<[0-9.]*>\).*/\1/p' "$DIR/pids.txt")
run() {
    echo "\$ priv/dyntrace-analyze $*"
    "$A" "$@"
    echo
}
run findings "$DIR/hunt-triage"
run genserver "$DIR/hunt"
run genserver --slowest 3 "$DIR/hunt"
run profile --name checkout --folded "$DIR/checkout.folded" --flame "$DIR/checkout.svg" "$DIR/hunt"
head -3 "$DIR/checkout.folded"
echo
run calls "$DIR/hunt"
run profile --pid "$pid" --module checkout_demo "$DIR/hunt-sampled"
