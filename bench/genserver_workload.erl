%%% @doc Makes a trace of gen_server calls for the analyser's memory
%%% benchmark (bench/analyze_memory.sh): `Callers' traced processes call
%%% one traced gen_server until `Calls' calls are made; every call's reply
%%% goes to a fresh alias (OTP 24+), so the trace holds as many references
%%% as calls. Message sends and receives, scheduling, the server's
%%% registration and the node's name are recorded. Run it distributed
%%% (`-sname`), with a session daemon of its own (scripts/isolated.sh).
-module(genserver_workload).
-behaviour(gen_server).

-export([main/1]).
-export([init/1, handle_call/3, handle_cast/2]).

-define(CALLERS, 4).

%% @doc `main([TraceDir, Calls])': records the trace into `TraceDir'.
-spec main([string()]) -> no_return().
main([Dir, CallsText]) ->
    Calls = list_to_integer(CallsText),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    ok = lttng_session:wait_registered(),
    Name = "genserver_bench_" ++ os:getpid(),
    Events = [message_send, message_receive, process_scheduled, process_register, node_name],
    sh("lttng create " ++ Name ++ " --output=" ++ Dir),
    sh("lttng enable-channel -u -s " ++ Name ++ " --subbuf-size=8M --num-subbuf=16 big"),
    sh("lttng enable-event -u -s " ++ Name ++ " -c big "
       ++ lists:join(",", ["org_erlang_dyntrace:" ++ atom_to_list(E) || E <- Events])),
    sh("lttng start " ++ Name),
    ok = lttng_session:wait_enabled(Events),
    {ok, Server} = gen_server:start({local, bench_server}, ?MODULE, [], []),
    Flags = [send, 'receive', running, {tracer, dyntrace, []}],
    1 = erlang:trace(Server, true, [procs | Flags]),
    %% Registered again while traced: the trace names it.
    true = unregister(bench_server),
    true = register(bench_server, Server),
    ok = dyntrace:announce_nodes(),
    Each = Calls div ?CALLERS,
    Parent = self(),
    Pids = [spawn(fun() -> receive go -> ok end, loop(Each), Parent ! {done, self()} end)
            || _ <- lists:seq(1, ?CALLERS)],
    [1 = erlang:trace(P, true, Flags) || P <- Pids],
    T0 = erlang:monotonic_time(millisecond),
    [P ! go || P <- Pids],
    [receive {done, P} -> ok end || P <- Pids],
    T1 = erlang:monotonic_time(millisecond),
    sh("lttng stop " ++ Name),
    io:format("~b calls in ~b ms~n", [Each * ?CALLERS, T1 - T0]),
    sh("lttng list " ++ Name ++ " | grep -i discarded || true"),
    sh("lttng destroy " ++ Name),
    halt(0).

loop(0) ->
    ok;
loop(N) ->
    N = gen_server:call(bench_server, {get, N}),
    loop(N - 1).

%% @doc gen_server callback: no state.
-spec init([]) -> {ok, nostate}.
init([]) ->
    {ok, nostate}.

%% @doc gen_server callback: answers `{get, N}' with `N'.
-spec handle_call({get, integer()}, gen_server:from(), nostate) -> {reply, integer(), nostate}.
handle_call({get, N}, _From, State) ->
    {reply, N, State}.

%% @doc gen_server callback: casts are ignored.
-spec handle_cast(term(), nostate) -> {noreply, nostate}.
handle_cast(_Msg, State) ->
    {noreply, State}.

sh(Cmd) ->
    io:format("$ ~s~n~s", [Cmd, os:cmd(Cmd ++ " 2>&1")]).
