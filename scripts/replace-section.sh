#!/bin/sh
# Replaces a section of BENCHMARKS.md by a benchmark's new one: drops the
# section whose heading starts with HEADING (up to the next `## `), drops
# the blank lines that then end the file, and appends NEW (which starts
# with a blank line and its own heading).
#
#   scripts/replace-section.sh '## dyntrace-analyze: reading speed' _build/bench/analyze.md
set -eu
heading=$1
new=$2
tmp=$(mktemp BENCHMARKS.md.XXXXXX)
awk -v heading="$heading" '
    index($0, heading) == 1 { skip = 1; next }
    /^## / { skip = 0 }
    skip { next }
    $0 == "" { blank++; next }
    { while (blank > 0) { print ""; blank-- } print }
' BENCHMARKS.md >"$tmp"
cat "$new" >>"$tmp"
mv "$tmp" BENCHMARKS.md
