%%% @doc Makes a large trace for the analyser's benchmark (bench/analyze.sh):
%%% `?CLIENTS' processes make `gen_server:call's to `?SERVERS' servers whose
%%% callback calls a traced function, until about `Events' events are
%%% recorded: per request the client's send and its reply's receive, the
%%% server's receive, send, call and return, and the scheduling of both
%%% (so `calls', `latency' and `genserver' each have their share). Every
%%% 1000th call takes a slow path. Run it with a session daemon of its own
%%% (scripts/isolated.sh).
-module(analyze_workload).

-behaviour(gen_server).

-export([main/1, step/1]).
-export([init/1, handle_call/3, handle_cast/2]).

-define(CLIENTS, 4).
-define(SERVERS, 2).
%% Events per request, about (6 message and call events, scheduling).
-define(EVENTS_PER_REQUEST, 10).
-define(EVENTS, "org_erlang_dyntrace:function_call,org_erlang_dyntrace:function_return,"
        "org_erlang_dyntrace:message_send,org_erlang_dyntrace:message_receive,"
        "org_erlang_dyntrace:process_scheduled").

%% @doc `main([TraceDir, Events])': records the trace into `TraceDir'.
-spec main([string()]) -> no_return().
main([Dir, EventsText]) ->
    Events = list_to_integer(EventsText),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    ok = lttng_session:wait_registered(),
    Name = "analyze_bench_" ++ os:getpid(),
    sh("lttng create " ++ Name ++ " --output=" ++ Dir),
    sh("lttng enable-channel -u -s " ++ Name ++ " --subbuf-size=4M --num-subbuf=8 big"),
    sh("lttng enable-event -u -s " ++ Name ++ " -c big " ?EVENTS),
    sh("lttng start " ++ Name),
    ok = lttng_session:wait_enabled([function_call, function_return, message_send,
                                     message_receive, process_scheduled]),
    1 = erlang:trace_pattern({?MODULE, step, 1}, [{'_', [], [{return_trace}]}], [local]),
    Servers = [begin {ok, S} = gen_server:start(?MODULE, [], []), S end
               || _ <- lists:seq(1, ?SERVERS)],
    Requests = Events div ?EVENTS_PER_REQUEST div ?CLIENTS,
    Parent = self(),
    Clients = [spawn(fun() ->
                             receive go -> ok end,
                             loop(lists:nth(I rem ?SERVERS + 1, Servers), Requests),
                             Parent ! {done, self()}
                     end)
               || I <- lists:seq(1, ?CLIENTS)],
    Flags = [call, send, 'receive', running, {tracer, dyntrace, []}],
    [1 = erlang:trace(P, true, Flags) || P <- Servers ++ Clients],
    T0 = erlang:monotonic_time(millisecond),
    [P ! go || P <- Clients],
    [receive {done, P} -> ok end || P <- Clients],
    T1 = erlang:monotonic_time(millisecond),
    sh("lttng stop " ++ Name),
    io:format("~b requests in ~b ms~n", [Requests * ?CLIENTS, T1 - T0]),
    sh("lttng list " ++ Name ++ " | grep -i discarded || true"),
    sh("lttng destroy " ++ Name),
    halt(0).

loop(_Server, 0) ->
    ok;
loop(Server, N) ->
    _ = gen_server:call(Server, {step, N}),
    loop(Server, N - 1).

%% @doc The traced function: a little work, more every 1000th call.
-spec step(integer()) -> integer().
step(N) when N rem 1000 =:= 0 ->
    lists:sum(lists:seq(1, 20000));
step(N) ->
    N * 2.

%% @doc gen_server callback: no state.
-spec init([]) -> {ok, nostate}.
init([]) ->
    {ok, nostate}.

%% @doc gen_server callback: `{step, N}' answers `step(N)'.
-spec handle_call({step, integer()}, gen_server:from(), nostate) -> {reply, integer(), nostate}.
handle_call({step, N}, _From, State) ->
    {reply, ?MODULE:step(N), State}.

%% @doc gen_server callback: casts are ignored.
-spec handle_cast(term(), nostate) -> {noreply, nostate}.
handle_cast(_Msg, State) ->
    {noreply, State}.

sh(Cmd) ->
    io:format("$ ~s~n~s", [Cmd, os:cmd(Cmd ++ " 2>&1")]).
