%%% @doc Makes a large trace for the analyser's benchmark (bench/analyze.sh):
%%% `Procs' processes each make calls to a traced function (a call and a
%%% return event each) until `Events' events are recorded; every 1000th
%%% call takes a slow path. Run it with a session daemon of its own
%%% (scripts/isolated.sh).
-module(analyze_workload).

-export([main/1, step/1]).

-define(PROCS, 4).

%% @doc `main([TraceDir, Events])': records the trace into `TraceDir'.
-spec main([string()]) -> no_return().
main([Dir, EventsText]) ->
    Events = list_to_integer(EventsText),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    ok = lttng_session:wait_registered(),
    Name = "analyze_bench_" ++ os:getpid(),
    sh("lttng create " ++ Name ++ " --output=" ++ Dir),
    sh("lttng enable-channel -u -s " ++ Name ++ " --subbuf-size=4M --num-subbuf=8 big"),
    sh("lttng enable-event -u -s " ++ Name ++ " -c big "
       "org_erlang_dyntrace:function_call,org_erlang_dyntrace:function_return"),
    sh("lttng start " ++ Name),
    ok = lttng_session:wait_enabled([function_call, function_return]),
    1 = erlang:trace_pattern({?MODULE, step, 1}, [{'_', [], [{return_trace}]}], [local]),
    Calls = Events div 2 div ?PROCS,
    Parent = self(),
    Pids = [spawn(fun() -> receive go -> ok end, loop(Calls), Parent ! {done, self()} end)
            || _ <- lists:seq(1, ?PROCS)],
    [erlang:trace(P, true, [call, {tracer, dyntrace, []}]) || P <- Pids],
    T0 = erlang:monotonic_time(millisecond),
    [P ! go || P <- Pids],
    [receive {done, P} -> ok end || P <- Pids],
    T1 = erlang:monotonic_time(millisecond),
    sh("lttng stop " ++ Name),
    io:format("~b calls in ~b ms~n", [Calls * ?PROCS, T1 - T0]),
    sh("lttng list " ++ Name ++ " | grep -i discarded || true"),
    sh("lttng destroy " ++ Name),
    halt(0).

loop(0) ->
    ok;
loop(N) ->
    _ = ?MODULE:step(N),
    loop(N - 1).

%% @doc The traced function: a little work, more every 1000th call.
-spec step(integer()) -> integer().
step(N) when N rem 1000 =:= 0 ->
    lists:sum(lists:seq(1, 20000));
step(N) ->
    N * 2.

sh(Cmd) ->
    io:format("$ ~s~n~s", [Cmd, os:cmd(Cmd ++ " 2>&1")]).
