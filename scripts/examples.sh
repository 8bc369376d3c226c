#!/bin/bash
# Builds the two example applications as a user would, each from a clean
# copy with this repository's committed HEAD as its git dependency:
# examples/rebar3_app (a relx release) and examples/mix_app (a Mix release),
# both with runtime_tools. Then, for each, the README's "Using it in your
# application" commands: start the release as a daemon, check that the
# node's dyntrace is ours and has its NIF, record the worker with
# dyntrace:record/2 (a session of its own, tracking the node's pid) and read
# the events back, stop the node; then the same node in interactive mode. Runs with an LTTng
# session daemon, epmd and network of its own (scripts/isolated.sh: so also
# offline, as Hex and crates.io are here). Ends with "N passed, N failed".
#
# Uncommitted changes are not in the dependency: it is the committed HEAD.
# The NIF's cargo build is cached in _build/examples/cargo-target.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ "${DYNTRACE_ISOLATED:-}" != inside ]; then
    EXTRA_PACKAGES=elixir ./scripts/setup.sh >/dev/null || exit 1
    exec scripts/isolated.sh "$0" "$@"
fi

work="$root/_build/examples"
mkdir -p "$work"
export DYNTRACE_GIT_URL="file://$root"
DYNTRACE_GIT_REF=$(git rev-parse HEAD)
export DYNTRACE_GIT_REF
export CARGO_TARGET_DIR="$work/cargo-target"
# Mix without Hex: rebar3 from the system, a Mix home of its own.
MIX_REBAR3=$(command -v rebar3)
export MIX_REBAR3 MIX_HOME="$work/mix-home" HEX_OFFLINE=1

passed=0
failed=0
# check WHAT COMMAND...: one counted check.
check() {
    local what=$1
    shift
    if "$@"; then
        echo "ok:     $what"
        passed=$((passed + 1))
    else
        echo "FAILED: $what"
        failed=$((failed + 1))
    fi
}
# has TEXT PATTERN: TEXT has a line matching the extended regex PATTERN
# (and says what it had when not).
has() {
    grep -Eq -- "$2" <<<"$1" || { printf '    expected /%s/ in:\n%s\n' "$2" "$1" | sed 's/^/    /'; false; }
}

# A clean copy of examples/NAME in _build/examples/NAME.
fresh_copy() {
    rm -rf "${work:?}/$1"
    cp -r "examples/$1" "$work/$1"
}

# Waits until the release answers (its `pid` command), at most 60 s.
wait_up() {
    for _ in $(seq 120); do
        "$1" pid >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    false
}

# Waits until the OS process PID is gone, at most 60 s.
wait_gone() {
    for _ in $(seq 120); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.5
    done
    false
}

# record_worker NAME BIN EVAL WORKER_PID RECORD_EXPR PING_EXPR STOP_EXPR: the
# worker recorded with dyntrace:record/2 (`wait => false`, into
# _build/examples/NAME-trace: a session of its own, made and destroyed by
# the node), one ping, dyntrace:stop/1 (STOP_EXPR with HANDLE for the
# handle record/2 answered); checks the worker's receive and send, and that
# no session is left.
record_worker() {
    local name=$1 bin=$2 eval=$3 worker=$4 record=$5 ping=$6 stop=$7
    local out="$work/$name-trace" answer handle
    rm -rf "$out"
    answer=$("$bin" "$eval" "${record//OUT/$out}" 2>&1)
    check "$name: dyntrace:record/2 of the worker answers a handle" has "$answer" 'ok, ?[0-9]+'
    handle=$(grep -Eo 'ok, ?[0-9]+' <<<"$answer" | grep -Eo '[0-9]+$' | head -1)
    check "$name: the worker answers" has "$("$bin" "$eval" "$ping" 2>&1)" 'pong, ?:?examples'
    check "$name: dyntrace:stop/1 answers the trace's directory" \
        has "$("$bin" "$eval" "${stop//HANDLE/${handle:-0}}" 2>&1)" "$out"
    check "$name: no session left behind" has "$(lttng list 2>&1)" '^Currently no available'
    local events
    events=$(babeltrace2 "$out" 2>&1)
    check "$name: message_receive of the ping, to the worker, read back from LTTng" \
        has "$events" "org_erlang_dyntrace:message_receive: .*to = \"$worker\", message = \".*\\{ping,examples\\}\\}\""
    check "$name: message_send of the answer, from the worker" \
        has "$events" "org_erlang_dyntrace:message_send: .*from = \"$worker\", .*\\{pong,examples\\}\\}\""
}

# stop_node NAME BIN: `stop` answers and the node's process ends.
stop_node() {
    local pid
    pid=$("$2" pid)
    check "$1: stop" "$2" stop
    check "$1: the node's process has ended" wait_gone "$pid"
}

# The node's log (LOGDIR/erlang.log.*) has no error report.
quiet_log() {
    ! grep -A3 'ERROR REPORT' "$1"/erlang.log.* 2>/dev/null
}

# ours NAME BIN EVAL WHICH_EXPR AVAILABLE_EXPR MODE_EXPR MODE: the running
# node's dyntrace comes from the release's dyntrace application, its NIF
# is loaded, and the node runs in MODE.
ours() {
    local name=$1 bin=$2 eval=$3 which=$4 available=$5 mode_expr=$6 mode=$7
    check "$name ($mode): the node runs in $mode mode" has "$("$bin" "$eval" "$mode_expr" 2>&1)" "$mode"
    check "$name ($mode): code:which(dyntrace) is ours" \
        has "$("$bin" "$eval" "$which" 2>&1)" '/lib/dyntrace-[0-9.]+/ebin/dyntrace\.beam'
    check "$name ($mode): dyntrace:available() is true" has "$("$bin" "$eval" "$available" 2>&1)" '^true$'
}

# The release holds runtime_tools, and no dyntrace.beam but ours.
one_dyntrace() {
    local rel=$1 beams
    beams=$(cd "$rel" && ls lib/*/ebin/dyntrace.beam)
    ls -d "$rel"/lib/runtime_tools-* >/dev/null && [ "$beams" = "$(ls "$rel"/lib/dyntrace-*/ebin/dyntrace.beam | sed "s|^$rel/||")" ]
}

# The README's rebar3 steps, in a copy of examples/rebar3_app.
rebar3_example() {
    echo "==> examples/rebar3_app: a relx release (README: rebar3)"
    fresh_copy rebar3_app
    cd "$work/rebar3_app" || return
    local rel=_build/default/rel/rebar3_app
    local bin=$rel/bin/rebar3_app worker
    check "rebar3_app: rebar3 release" rebar3 release
    [ -x "$bin" ] || return 0
    check "rebar3_app: runtime_tools in the release, and one dyntrace.beam, ours" one_dyntrace "$rel"
    check "rebar3_app: daemon" "$bin" daemon
    check "rebar3_app: the node answers" wait_up "$bin"
    ours rebar3_app "$bin" eval 'code:which(dyntrace).' 'dyntrace:available().' \
        'init:get_argument(mode).' embedded
    check "rebar3_app: the dyntrace application started its supervisor, which owns dyntrace_ctl" \
        has "$("$bin" eval '[Id || {Id, _, _, _} <- supervisor:which_children(dyntrace_sup)].' 2>&1)" \
        'dyntrace_ctl'
    worker=$("$bin" eval 'pid_to_list(whereis(rebar3_app_worker)).' | tr -d '"')
    record_worker rebar3_app "$bin" eval "$worker" \
        'dyntrace:record([{trace, rebar3_app_worker, [messages]}], #{wait => false, duration => 60000, dir => "OUT"}).' \
        'rebar3_app_worker:ping(examples).' 'dyntrace:stop(HANDLE).'
    stop_node rebar3_app "$bin"
    check "rebar3_app (interactive): daemon" env CODE_LOADING_MODE=interactive "$bin" daemon
    check "rebar3_app (interactive): the node answers" wait_up "$bin"
    ours rebar3_app "$bin" eval 'code:which(dyntrace).' 'dyntrace:available().' \
        'init:get_argument(mode).' interactive
    stop_node "rebar3_app (interactive)" "$bin"
    check "rebar3_app: no error in the nodes' log" quiet_log "$rel/log"
}

# The README's Mix steps, in a copy of examples/mix_app.
mix_example() {
    echo "==> examples/mix_app: a Mix release (README: Mix)"
    fresh_copy mix_app
    cd "$work/mix_app" || return
    local rel=_build/prod/rel/mix_app
    local bin=$rel/bin/mix_app worker
    check "mix_app: mix deps.get" mix deps.get
    check "mix_app: MIX_ENV=prod mix release" env MIX_ENV=prod mix release
    [ -x "$bin" ] || return 0
    check "mix_app: runtime_tools in the release, and one dyntrace.beam, ours" one_dyntrace "$rel"
    check "mix_app: daemon" "$bin" daemon
    check "mix_app: the node answers" wait_up "$bin"
    ours mix_app "$bin" rpc 'IO.inspect(:code.which(:dyntrace))' \
        'IO.inspect(:dyntrace.available())' 'IO.inspect(:init.get_argument(:mode))' embedded
    check "mix_app: the dyntrace application started its supervisor, which owns dyntrace_ctl" \
        has "$("$bin" rpc 'IO.inspect(for {id, _, _, _} <- :supervisor.which_children(:dyntrace_sup), do: id)' 2>&1)" \
        'dyntrace_ctl'
    worker=$("$bin" rpc 'IO.write(:erlang.pid_to_list(Process.whereis(MixApp.Worker)))')
    record_worker mix_app "$bin" rpc "$worker" \
        'IO.inspect(:dyntrace.record([{:trace, MixApp.Worker, [:messages]}], %{wait: false, duration: 60_000, dir: "OUT"}))' \
        'IO.inspect(MixApp.Worker.ping(:examples))' 'IO.inspect(:dyntrace.stop(HANDLE))'
    stop_node mix_app "$bin"
    check "mix_app (interactive): daemon" env RELEASE_MODE=interactive "$bin" daemon
    check "mix_app (interactive): the node answers" wait_up "$bin"
    ours mix_app "$bin" rpc 'IO.inspect(:code.which(:dyntrace))' \
        'IO.inspect(:dyntrace.available())' 'IO.inspect(:init.get_argument(:mode))' interactive
    stop_node "mix_app (interactive)" "$bin"
    check "mix_app: no error in the nodes' log" quiet_log "$rel/tmp/log"
}

rebar3_example || failed=$((failed + 1))
cd "$root" || exit 1
mix_example || failed=$((failed + 1))
cd "$root" || exit 1

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
