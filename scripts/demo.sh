#!/bin/bash
# Sets everything up (Debian packages, LTTng session daemon, build) and runs
# a short traced workload whose LTTng events are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
mkdir -p _build/demo
erlc -o _build/demo +warnings_as_errors examples/dyntrace_demo.erl
exec erl -noshell -pa _build/default/lib/dyntrace/ebin -pa _build/demo -s dyntrace_demo main
