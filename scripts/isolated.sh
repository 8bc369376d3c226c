#!/bin/bash
# Runs a command with an LTTng session daemon of its own, which nothing else
# on the machine can see or disturb: private PID, mount and network
# namespaces (so also an epmd of its own, on a loopback of its own), fresh
# tmpfs mounts on /var/run/lttng (where applications and the `lttng` client
# find the root daemon) and /dev/shm (LTTng-UST's shared memory), and a
# fresh LTTNG_HOME. Every process started inside, the daemon included, dies
# with the command. Exits with the command's status.
#
#   scripts/isolated.sh rebar3 ct --suite test/dyntrace_lttng_SUITE
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "$0: needs root (namespaces, tmpfs mounts)" >&2; exit 2; }

if [ "${DYNTRACE_ISOLATED:-}" != inside ]; then
    exec unshare --pid --fork --mount-proc --mount --propagation private --net \
        env DYNTRACE_ISOLATED=inside "$0" "$@"
fi

ip link set lo up
mkdir -p /var/run/lttng
mount -t tmpfs tmpfs /var/run/lttng
mount -t tmpfs tmpfs /dev/shm
LTTNG_HOME=$(mktemp -d /tmp/dyntrace-isolated.XXXXXX)
export LTTNG_HOME
trap 'rm -rf "$LTTNG_HOME"' EXIT
# Traces of this run in a directory of its own: runs in other PID
# namespaces have the same pids, and would write and remove the same
# names under a shared one.
if [ -z "${DYNTRACE_TRACE_DIR:-}" ]; then
    DYNTRACE_TRACE_DIR=$(mktemp -d /tmp/dyntrace-test-traces.XXXXXX)
    export DYNTRACE_TRACE_DIR
fi

# A daemon drops an application that leaves a command unanswered for
# LTTNG_APP_SOCKET_TIMEOUT seconds (5 by default), and the node is then
# not traced again: on a loaded 2-core machine a test node's LTTng-UST
# thread can starve that long. The tests' daemons wait a minute.
LTTNG_APP_SOCKET_TIMEOUT=60 lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1
for _ in $(seq 100); do lttng list >/dev/null 2>&1 && break; sleep 0.1; done
lttng list >/dev/null 2>&1 || { echo "$0: the private session daemon did not start" >&2; exit 1; }

status=0
"$@" || status=$?
exit "$status"
