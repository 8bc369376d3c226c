%%% @doc Test helper for the reliability suite: a traced node with its own
%%% LTTng session daemon, which may be killed, stopped or absent without
%%% touching the machine's shared daemon.
%%%
%%% The node is an OTP `peer' started inside private mount and PID
%%% namespaces: `/var/run/lttng' (where apps and the `lttng' client find the
%%% root daemon) and `/dev/shm' (LTTng-UST's "daemon started" futex) are
%%% fresh tmpfs mounts, `HOME'/`LTTNG_HOME' a fresh directory, and when the
%%% node stops every process of the namespace (its daemons included) dies
%%% with it.
%%% ```
%%% N = dyntrace_rel_node:start(#{daemon => true}),
%%% {module, dyntrace} = dyntrace_rel_node:call(N, c, l, [dyntrace]),
%%% ok = dyntrace_rel_node:kill_daemon(N),
%%% dyntrace_rel_node:stop(N).
%%% '''
%%% The functions below "IN THE NODE" run inside such a node (the suite's
%%% code path is passed on): a heartbeat that measures stalls and a
%%% request/reply workload that counts completed calls.
-module(dyntrace_rel_node).

-export([start/1, stop/1, call/4, call/5,
         start_daemon/1, kill_daemon/1, stop_daemon/1, cont_daemon/1,
         stutter_daemon/3, end_stutter/2,
         load_times/0, load_times/1]).
-export([heartbeat_start/0, heartbeat_worst/0, heartbeat_reset/0,
         workload_start/2, workload_count/0, workload_stop/0,
         wait_enabled/1, traced_session/2, rss_bytes/0, median/1]).

-type node_ref() :: #{peer := pid(), home := string()}.
-export_type([node_ref/0]).

-define(CALL_TIMEOUT, 300000).

%%%===================================================================
%%% THE NODE
%%%===================================================================

%% @doc Starts an isolated node. `Opts': `daemon' (start a private session
%% daemon first, default false), `args' (extra `erl' arguments), `env'
%% (extra environment, `[{Name, Value}]').
-spec start(map()) -> node_ref().
start(Opts) ->
    Home = string:trim(os:cmd("mktemp -d /tmp/dyntrace-rel-home.XXXXXX")),
    Script = "mount -t tmpfs tmpfs /var/run/lttng && mount -t tmpfs tmpfs /dev/shm "
        "&& exec erl \"$@\"",
    Exec = {os:find_executable("unshare"),
            ["--pid", "--fork", "--mount-proc", "--mount", "--propagation", "private",
             "sh", "-c", Script, "sh"]},
    Paths = lists:usort([filename:dirname(code:which(M))
                         || M <- [dyntrace, lttng_session, ?MODULE]]),
    Args = lists:append([["-pa", P] || P <- Paths]) ++ maps:get(args, Opts, []),
    Env = [{"HOME", Home}, {"LTTNG_HOME", Home}] ++ maps:get(env, Opts, []),
    {ok, Peer, _} = peer:start_link(#{exec => Exec, connection => standard_io,
                                   args => Args, env => Env,
                                   wait_boot => 60000}),
    Node = #{peer => Peer, home => Home},
    case maps:get(daemon, Opts, false) of
        true -> ok = start_daemon(Node);
        false -> ok
    end,
    Node.

%% @doc Stops the node; its daemons die with its PID namespace.
-spec stop(node_ref()) -> ok.
stop(#{peer := Peer, home := Home}) ->
    unlink(Peer),
    try peer:stop(Peer) catch _:_ -> ok end,
    _ = os:cmd("rm -rf '" ++ Home ++ "'"),
    ok.

%% @doc `apply(M, F, A)' in the node.
-spec call(node_ref(), module(), atom(), list()) -> term().
call(Node, M, F, A) ->
    call(Node, M, F, A, ?CALL_TIMEOUT).

%% @doc `apply(M, F, A)' in the node, with a timeout in milliseconds.
-spec call(node_ref(), module(), atom(), list(), timeout()) -> term().
call(#{peer := Peer}, M, F, A, Timeout) ->
    peer:call(Peer, M, F, A, Timeout).

%% @doc Starts a session daemon in the node's namespace and waits until the
%% `lttng' client reaches it.
-spec start_daemon(node_ref()) -> ok.
start_daemon(Node) ->
    %% As scripts/isolated.sh: a minute before a busy node is dropped.
    sh(Node, "LTTNG_APP_SOCKET_TIMEOUT=60 lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1"),
    lttng_session:wait_until(fun() -> sh(Node, "lttng list >/dev/null 2>&1 && echo up") =:= "up\n" end, 100).

%% @doc SIGKILLs the node's session daemon and every process it started
%% (consumer daemons), as a crash would.
-spec kill_daemon(node_ref()) -> ok.
kill_daemon(Node) ->
    Pids = daemon_tree(Node),
    sh(Node, "kill -9 " ++ lists:join(" ", Pids)),
    sh(Node, "rm -f /var/run/lttng/lttng-sessiond.pid"),
    ok.

%% @doc SIGSTOPs the node's session daemon (and its consumers).
-spec stop_daemon(node_ref()) -> ok.
stop_daemon(Node) ->
    sh(Node, "kill -STOP " ++ lists:join(" ", daemon_tree(Node))),
    ok.

%% @doc SIGCONTs the node's session daemon (and its consumers).
-spec cont_daemon(node_ref()) -> ok.
cont_daemon(Node) ->
    sh(Node, "kill -CONT " ++ lists:join(" ", daemon_tree(Node))),
    ok.

%% @doc Makes the node's session daemon pause over and over, as a loaded
%% machine does to it: SIGSTOP for `StopMs', SIGCONT for `RunMs', until
%% end_stutter/2. Answers the OS pid of the shell loop that does it.
-spec stutter_daemon(node_ref(), pos_integer(), pos_integer()) -> string().
stutter_daemon(Node, StopMs, RunMs) ->
    Root = string:trim(sh(Node, "cat /var/run/lttng/lttng-sessiond.pid")),
    [_ | _] = Root,
    Loop = io_lib:format("(while kill -STOP ~s; do sleep ~.3f; kill -CONT ~s; sleep ~.3f; done) "
                         ">/dev/null 2>&1 & echo $!",
                         [Root, StopMs / 1000, Root, RunMs / 1000]),
    string:trim(sh(Node, Loop)).

%% @doc Ends stutter_daemon/3's loop and lets the daemon run.
-spec end_stutter(node_ref(), string()) -> ok.
end_stutter(Node, Loop) ->
    sh(Node, "kill " ++ Loop),
    cont_daemon(Node).

daemon_tree(Node) ->
    Root = string:trim(sh(Node, "cat /var/run/lttng/lttng-sessiond.pid")),
    [_ | _] = Root,
    descendants(Node, [Root], []).

descendants(_Node, [], Acc) ->
    lists:reverse(Acc);
descendants(Node, [Pid | Rest], Acc) ->
    Children = string:lexemes(sh(Node, "ps -o pid= --ppid " ++ Pid), " \n"),
    descendants(Node, Rest ++ Children, [Pid | Acc]).

sh(Node, Cmd) ->
    call(Node, os, cmd, [lists:flatten(Cmd)]).

%%%===================================================================
%%% LOAD TIMES (figures for the README)
%%%===================================================================

%% @doc `load_times(5)'.
-spec load_times() -> [{atom(), float()}].
load_times() ->
    load_times(5).

%% @doc The wall time of `l(dyntrace)' in a fresh node, median of `Runs'
%% runs, in ms: with no daemon, a running one, a SIGSTOPped one, and a
%% SIGSTOPped one with `LTTNG_UST_REGISTER_TIMEOUT' set to 3000 or 0 in
%% the VM's environment by the operator. Also prints them. From the top
%% directory, after `rebar3 ct' (or `erlc -o DIR test/*.erl'):
%% ```
%% erl -noshell -pa _build/test/lib/dyntrace/ebin -pa _build/test/lib/dyntrace/test \
%%     -eval 'dyntrace_rel_node:load_times(5), halt().'
%% '''
-spec load_times(pos_integer()) -> [{atom(), float()}].
load_times(Runs) ->
    Cases = [{no_daemon, none, []},
             {running_daemon, running, []},
             {stopped_daemon, stopped, []},
             {stopped_daemon_timeout_3000, stopped, [{"LTTNG_UST_REGISTER_TIMEOUT", "3000"}]},
             {stopped_daemon_timeout_0, stopped, [{"LTTNG_UST_REGISTER_TIMEOUT", "0"}]}],
    Figures = [{Name, median([load_time(Daemon, Env) || _ <- lists:seq(1, Runs)])}
               || {Name, Daemon, Env} <- Cases],
    [io:format("~-30s ~9.1f ms~n", [Name, Ms]) || {Name, Ms} <- Figures],
    Figures.

load_time(Daemon, Env) ->
    Node = start(#{daemon => Daemon =/= none, env => Env}),
    try
        Daemon =:= stopped andalso stop_daemon(Node),
        call(Node, erlang, apply, [fun timed_load/0, []])
    after
        stop(Node)
    end.

timed_load() ->
    T0 = erlang:monotonic_time(microsecond),
    {module, dyntrace} = c:l(dyntrace),
    (erlang:monotonic_time(microsecond) - T0) / 1000.

%%%===================================================================
%%% IN THE NODE
%%%===================================================================

%% @doc Starts `rel_heartbeat', a process that wakes every millisecond and
%% keeps the longest time between two wake-ups: the worst stall a normal
%% process saw.
-spec heartbeat_start() -> pid().
heartbeat_start() ->
    Pid = spawn(fun() -> heartbeat(now_us(), 0) end),
    register(rel_heartbeat, Pid),
    Pid.

heartbeat(Prev, Worst) ->
    receive
        {worst, From} ->
            From ! {rel_worst, Worst},
            heartbeat(Prev, Worst);
        reset ->
            heartbeat(now_us(), 0)
    after 1 ->
            Now = now_us(),
            heartbeat(Now, max(Worst, Now - Prev))
    end.

%% @doc The worst stall since the start (or the last reset), in ms.
-spec heartbeat_worst() -> float().
heartbeat_worst() ->
    rel_heartbeat ! {worst, self()},
    receive {rel_worst, W} -> W / 1000 end.

%% @doc Forgets the worst stall seen so far.
-spec heartbeat_reset() -> ok.
heartbeat_reset() ->
    rel_heartbeat ! reset,
    ok.

%% @doc Starts `N' workers, each making request/reply calls to its own
%% server in a loop, traced with `Flags' through dyntrace (none when
%% `Flags' is []). Every completed call bumps a shared counter.
-spec workload_start(pos_integer(), [atom()]) -> [pid()].
workload_start(N, Flags) ->
    Counter = counters:new(1, [write_concurrency]),
    persistent_term:put(rel_counter, Counter),
    Workers = [spawn(fun() -> worker(Counter) end) || _ <- lists:seq(1, N)],
    [erlang:trace(W, true, Flags ++ [{tracer, dyntrace, []}]) || W <- Workers, Flags =/= []],
    persistent_term:put(rel_workers, Workers),
    Workers.

worker(Counter) ->
    Server = spawn_link(fun server/0),
    worker(Counter, Server, 0).

worker(Counter, Server, N) ->
    Server ! {call, self(), {req, N}},
    receive {reply, {req, N}} -> ok end,
    counters:add(Counter, 1, 1),
    %% A short pause keeps the event rate (and the trace) reasonable.
    case N rem 20 of
        0 -> receive stop -> exit(normal) after 1 -> ok end;
        _ -> ok
    end,
    worker(Counter, Server, N + 1).

server() ->
    receive {call, From, Req} -> From ! {reply, Req} end,
    server().

%% @doc Calls completed by the workload so far.
-spec workload_count() -> non_neg_integer().
workload_count() ->
    counters:get(persistent_term:get(rel_counter), 1).

%% @doc Stops the workload's workers.
-spec workload_stop() -> ok.
workload_stop() ->
    [exit(W, kill) || W <- persistent_term:get(rel_workers)],
    ok.

%% @doc In the node: loads dyntrace, waits until it is registered, and
%% returns a started session with `Events' enabled and seen by the node.
-spec traced_session(atom(), [atom()]) -> lttng_session:session().
traced_session(Name, Events) ->
    {module, dyntrace} = c:l(dyntrace),
    ok = lttng_session:wait_registered(),
    S = lttng_session:create(Name, Events),
    ok = lttng_session:start(S),
    ok = wait_enabled(Events),
    S.

%% @doc As lttng_session:wait_enabled/1, with 30 s of patience: a loaded
%% CI machine can take seconds to run the `lttng' commands of a setup.
-spec wait_enabled([atom()]) -> ok.
wait_enabled(Events) ->
    lttng_session:wait_until(fun() -> Events -- dyntrace:enabled_events() =:= [] end, 300).

%% @doc This VM's resident set size (VmRSS), in bytes.
-spec rss_bytes() -> non_neg_integer().
rss_bytes() ->
    {ok, Status} = file:read_file("/proc/" ++ os:getpid() ++ "/status"),
    {match, [Kb]} = re:run(Status, "VmRSS:\\s+([0-9]+) kB", [{capture, all_but_first, list}]),
    list_to_integer(Kb) * 1024.

%% @doc The median of a list of numbers.
-spec median([number()]) -> number().
median(Xs) ->
    lists:nth((length(Xs) + 1) div 2, lists:sort(Xs)).

%%%===================================================================
%%% helpers
%%%===================================================================

now_us() ->
    erlang:monotonic_time(microsecond).

