#!/bin/bash
# Traces a 3-node Erlang cluster into one lttng-relayd (see scripts/cluster.sh
# for the namespaces): each node records message_send, message_receive and
# node_name into a session streamed to the relay, examples/dyntrace_cluster_demo.erl
# runs a replicated put across the nodes, and the relay's output (one trace
# per node's hostname) is read back. Everything started here is removed on
# exit, failure or Ctrl-C; the relay's output is kept and its path printed.
#
#   scripts/cluster-demo.sh [DIR]     # DIR: where the relay writes (default: a new /tmp dir)
set -euo pipefail
cd "$(dirname "$0")/.."
# DYNTRACE_BUILT=1: the caller has set up and built (the test suites do;
# under the newest-OTP stage Debian's rebar3 cannot run).
[ -n "${DYNTRACE_BUILT:-}" ] || ./scripts/setup.sh >/dev/null

DIR=${1:-$(mktemp -d /tmp/dyntrace-cluster.XXXXXX)}
COOKIE="dyntrace_cluster_$$"
SESSION=cluster
EVENTS=org_erlang_dyntrace:message_send,org_erlang_dyntrace:message_receive,org_erlang_dyntrace:node_name
EBIN=_build/default/lib/dyntrace/ebin
mkdir -p _build/cluster-demo "$DIR/logs"
erlc -o _build/cluster-demo +warnings_as_errors examples/dyntrace_cluster_demo.erl

cleanup() { scripts/cluster.sh down "$DIR"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs a command in node I, printed as typed there.
on() { local i=$1; shift; echo "node$i\$ $*"; scripts/cluster.sh exec "$DIR" "$i" "$@"; }
node() { echo "n$1@$(scripts/cluster.sh address "$DIR" "$1")"; }
relay=$(scripts/cluster.sh address "$DIR" 0)

echo "==> 3 nodes (own network, hostname, session daemon, epmd) and a relay at $relay"
scripts/cluster.sh up "$DIR" 3
for i in 1 2 3; do
    echo "==> node$i: $(node "$i")"
    on "$i" lttng create "$SESSION" --live --set-url="net://$relay"
    on "$i" lttng enable-event -u -s "$SESSION" "$EVENTS"
    on "$i" lttng start "$SESSION"
done
for i in 2 3; do
    scripts/cluster.sh exec "$DIR" "$i" erl -noshell -name "$(node "$i")" -setcookie "$COOKIE" \
        -pa "$EBIN" -pa _build/cluster-demo >"$DIR/logs/node$i.log" 2>&1 &
done
echo "==> dyntrace-analyze, live, beside the relay (every second, to $DIR/logs/live.txt)"
urls=()
for i in 1 2 3; do urls+=("net://$relay/host/node$i/$SESSION"); done
echo "\$ dyntrace-analyze delivery --every 1s ${urls[*]}"
scripts/cluster.sh hub "$DIR" priv/dyntrace-analyze delivery --every 1s "${urls[@]}" \
    >"$DIR/logs/live.txt" 2>&1 &
live=$!
echo "==> the workload, from node1"
scripts/cluster.sh exec "$DIR" 1 erl -noshell -name "$(node 1)" -setcookie "$COOKIE" \
    -pa "$EBIN" -pa _build/cluster-demo \
    -s dyntrace_cluster_demo main "$(node 2)" "$(node 3)"
wait_nodes() { for pid in $(jobs -p); do [ "$pid" = "$live" ] || wait "$pid"; done; }
wait_nodes
# Live readers fetch new streams at the sessions' live timer (1 s): let
# them find every node's before the sessions end.
sleep 3
for i in 1 2 3; do
    # destroy waits until the node's consumer has sent everything to the relay.
    scripts/cluster.sh exec "$DIR" "$i" lttng destroy "$SESSION" >/dev/null
done

# The live reader ends when the sessions do.
wait "$live" || echo "(the live analysis failed: $DIR/logs/live.txt)"
echo "==> its last table"
tac "$DIR/logs/live.txt" | sed -n '1,/^Message delivery/p' | tac
echo "==> the relay's output: one trace per host"
(cd "$DIR/relay" && find . -mindepth 2 -maxdepth 2 -type d | sort)
echo "\$ babeltrace2 $DIR/relay | head -4"
babeltrace2 "$DIR/relay" | sed -n 1,4p
echo "events per host and name:"
babeltrace2 "$DIR/relay" |
    sed -nE 's/^\[[^]]*\] \(\+[^)]*\) ([^ ]+) org_erlang_dyntrace:([a-z_]+):.*/\1 \2/p' |
    sort | uniq -c | awk '{ printf "  %-8s %-16s %6d\n", $2, $3, $1 }'
echo "what each node's channel numbers name (node_name events):"
babeltrace2 "$DIR/relay" |
    sed -nE 's/^.* ([^ ]+) org_erlang_dyntrace:node_name: .*node = "([^"]*)", channel = ([0-9]+), peer = "([^"]*)".*/\1 \2 \3 \4/p' |
    sed "s/\\\\'/'/g" | sort -u | awk '{ printf "  %-8s %-18s %6s -> %s\n", $1, $2, $3, $4 }'
echo "==> the same analysis over the relay's output"
echo "\$ dyntrace-analyze delivery $DIR/relay"
priv/dyntrace-analyze delivery "$DIR/relay"
echo "trace kept in $DIR/relay"
