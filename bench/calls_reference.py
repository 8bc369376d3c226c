#!/usr/bin/python3
"""Reference for `dyntrace-analyze calls --json`, written with Debian's
python3-bt2: the same pairing of function_call with function_return /
function_exception per process (the newest open call of the returning
function; newer open frames and returns without a call count as
unmatched; a call closed while another call of its function is open
below it is nested: counted, its time inside the outer call's), exact
percentiles from sorted durations. Used by
bench/analyze.sh to compare speed and to check that both agree.

    bench/calls_reference.py TRACE_DIR... > calls.json
"""
import json
import math
import sys

import bt2

PROVIDER = "org_erlang_dyntrace:"


def percentile(sorted_ns, q):
    """The smallest value with at least q of the values at or below it."""
    if not sorted_ns:
        return 0
    rank = max(1, math.ceil(q * len(sorted_ns)))
    return sorted_ns[rank - 1]


def main(paths):
    stacks = {}  # pid -> [(entry, start_ns)]
    durations = {}  # entry -> [ns]
    unmatched = {}  # entry -> count
    nested = {}  # entry -> count
    events = discarded = 0
    for msg in bt2.TraceCollectionMessageIterator(paths):
        if type(msg) is bt2._DiscardedEventsMessageConst:
            discarded += msg.count or 0
            continue
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        if not ev.name.startswith(PROVIDER):
            continue
        events += 1
        kind = ev.name[len(PROVIDER):]
        if kind == "process_exit":
            for entry, _ in stacks.pop(str(ev.payload_field["pid"]), []):
                unmatched[entry] = unmatched.get(entry, 0) + 1
            continue
        if kind not in ("function_call", "function_return", "function_exception"):
            continue
        payload = ev.payload_field
        pid = str(payload["pid"])
        entry = str(payload["entry"])
        ts = msg.default_clock_snapshot.ns_from_origin
        durations.setdefault(entry, [])
        stack = stacks.setdefault(pid, [])
        if kind == "function_call":
            stack.append((entry, ts))
            continue
        for k in range(len(stack) - 1, -1, -1):
            if stack[k][0] == entry:
                for above, _ in stack[k + 1:]:
                    unmatched[above] = unmatched.get(above, 0) + 1
                if any(e == entry for e, _ in stack[:k]):
                    nested[entry] = nested.get(entry, 0) + 1
                else:
                    durations[entry].append(ts - stack[k][1])
                del stack[k:]
                break
        else:
            unmatched[entry] = unmatched.get(entry, 0) + 1
    calls = []
    for entry, ns in durations.items():
        ns.sort()
        calls.append({
            "entry": entry,
            "count": len(ns),
            "nested": nested.get(entry, 0),
            "unmatched": unmatched.get(entry, 0),
            "p50_ns": percentile(ns, 0.5),
            "p90_ns": percentile(ns, 0.9),
            "p99_ns": percentile(ns, 0.99),
            "max_ns": ns[-1] if ns else 0,
        })
    calls.sort(key=lambda c: -sum(durations[c["entry"]]))
    json.dump({"events": events, "discarded": discarded, "calls": calls}, sys.stdout)
    print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: calls_reference.py TRACE_DIR...")
    main(sys.argv[1:])
