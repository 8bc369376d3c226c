#!/bin/bash
# A cluster of isolated "hosts" on this machine, for tracing distributed
# Erlang through one lttng-relayd.
#
# Each node I (1..N) gets its own network namespace (address 10.99.0.1I on a
# bridge), hostname (UTS namespace), PID and mount namespaces (a private
# /var/run/lttng and /dev/shm), LTTng session daemon and epmd. A hub network
# namespace holds the bridge (10.99.0.1) and an lttng-relayd listening there
# (control 5342, data 5343, live 5344). The addresses exist only inside
# these namespaces: the machine's own network is never touched.
#
#   scripts/cluster.sh up DIR [N]        # N nodes (default 3); state in DIR
#   scripts/cluster.sh exec DIR I CMD... # CMD inside node I (lttng, erl, ...)
#   scripts/cluster.sh hub DIR CMD...    # CMD in the hub (reaches every node)
#   scripts/cluster.sh address DIR I     # node I's address (hub: 0)
#   scripts/cluster.sh down DIR          # kills everything `up` started
#
# The relay writes to DIR/relay/HOSTNAME/SESSION-DATE/ (one trace per node).
# `down` removes the namespaces and processes but leaves DIR/relay.
set -euo pipefail

SUBNET=10.99.0
die() { echo "cluster.sh: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (network, PID, mount and UTS namespaces)"

address() { if [ "$1" = 0 ]; then echo "$SUBNET.1"; else echo "$SUBNET.1$1"; fi; }
state() { cat "$DIR/$1" 2>/dev/null || die "no cluster in $DIR (missing $1)"; }

# The PID (in our PID namespace) of the init process of node I's namespaces.
node_init() {
    local keeper
    keeper=$(state "n$1.pid")
    cat "/proc/$keeper/task/$keeper/children" 2>/dev/null | awk '{ print $1 }'
}

up() {
    local count=$1 prefix hub i ns
    [ "$count" -ge 1 ] && [ "$count" -le 9 ] || die "between 1 and 9 nodes, not $count"
    [ ! -e "$DIR/prefix" ] || die "$DIR already holds a cluster; run: $0 down $DIR"
    mkdir -p "$DIR/relay"
    DIR=$(cd "$DIR" && pwd)
    # Unique per run, so that two clusters on the machine never collide.
    prefix="dtc$$"
    echo "$prefix" >"$DIR/prefix"
    echo "$count" >"$DIR/count"
    hub="$prefix-hub"
    ip netns add "$hub"
    ip -n "$hub" link set lo up
    ip -n "$hub" link add br0 type bridge
    ip -n "$hub" addr add "$(address 0)/24" dev br0
    ip -n "$hub" link set br0 up
    for i in $(seq "$count"); do
        ns="$prefix-n$i"
        ip netns add "$ns"
        ip -n "$ns" link set lo up
        ip -n "$hub" link add "veth$i" type veth peer name eth0 netns "$ns"
        ip -n "$hub" link set "veth$i" master br0 up
        ip -n "$ns" addr add "$(address "$i")/24" dev eth0
        ip -n "$ns" link set eth0 up
        mkdir -p "$DIR/n$i/home"
        # The keeper: init of the node's PID namespace; when it dies (or
        # its unshare parent is killed) every process of the node dies.
        ip netns exec "$ns" unshare --uts --pid --kill-child --mount-proc \
            --mount --propagation private \
            env HOME="$DIR/n$i/home" LTTNG_HOME="$DIR/n$i/home" sh -c '
                hostname "$1"
                mount -t tmpfs tmpfs /var/run/lttng
                mount -t tmpfs tmpfs /dev/shm
                epmd -daemon
                LTTNG_APP_SOCKET_TIMEOUT=60 lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1
                exec sleep infinity' sh "node$i" </dev/null >/dev/null 2>&1 &
        echo $! >"$DIR/n$i.pid"
    done
    ip netns exec "$hub" unshare --pid --kill-child --mount-proc \
        lttng-relayd --output="$DIR/relay" \
        --control-port="tcp://$(address 0):5342" --data-port="tcp://$(address 0):5343" \
        --live-port="tcp://$(address 0):5344" </dev/null >"$DIR/relayd.log" 2>&1 &
    echo $! >"$DIR/relayd.pid"
    for i in $(seq "$count"); do
        wait_for "node $i's session daemon" in_node "$i" lttng list
        wait_for "node $i's epmd" in_node "$i" epmd -names
    done
    wait_for "the relay daemon" ip netns exec "$hub" sh -c \
        "ss -ltn | grep -q '$(address 0):5342 '"
}

wait_for() {
    local what=$1
    shift
    for _ in $(seq 100); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    die "$what did not start (state in $DIR)"
}

in_node() {
    local i=$1 init
    shift
    init=$(node_init "$i")
    [ -n "$init" ] || die "node $i of $DIR is not running"
    nsenter --target "$init" --net --uts --pid --mount --wd="$PWD" \
        env HOME="$DIR/n$i/home" LTTNG_HOME="$DIR/n$i/home" "$@"
}

down() {
    local prefix count i pid
    prefix=$(cat "$DIR/prefix" 2>/dev/null) || return 0
    count=$(cat "$DIR/count")
    for pid in $(cat "$DIR"/n*.pid "$DIR/relayd.pid" 2>/dev/null); do
        kill -KILL "$pid" 2>/dev/null || true
    done
    for ns in "$prefix-hub" $(for i in $(seq "$count"); do echo "$prefix-n$i"; done); do
        if ip netns list | grep -qw "^$ns"; then
            # Anything still inside one of our namespaces was started by us.
            for pid in $(ip netns pids "$ns"); do kill -KILL "$pid" 2>/dev/null || true; done
            ip netns del "$ns"
        fi
    done
    rm -rf "$DIR"/n[0-9]* "$DIR"/*.pid "$DIR/prefix" "$DIR/count"
}

[ $# -ge 2 ] || die "usage: $0 up|exec|hub|address|down DIR ..."
cmd=$1
DIR=$2
shift 2
case "$cmd" in
    up) up "${1:-3}" ;;
    exec)
        [ $# -ge 2 ] || die "usage: $0 exec DIR I CMD..."
        DIR=$(cd "$DIR" && pwd)
        in_node "$@" ;;
    hub)
        [ $# -ge 1 ] || die "usage: $0 hub DIR CMD..."
        exec ip netns exec "$(state prefix)-hub" "$@" ;;
    address) address "${1:?node number}" ;;
    down) down ;;
    *) die "unknown command $cmd (up, exec, hub, address, down)" ;;
esac
