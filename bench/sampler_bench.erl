%%% What dyntrace's samplers cost, side by side in one run:
%%% - stack sampling: a CPU-bound gen_server workload (4 servers, 4
%%%   clients; bench/sample_workload.erl) untraced, sampled every 1 ms with
%%%   dyntrace:sample/2 (stack_sample recorded), and traced with local call
%%%   tracing of its module (function_call and function_return recorded);
%%%   calls answered per second, rounds in rotating order, median;
%%% - memory sampling: dyntrace:memory/1 at its default 1 s on a node with
%%%   100,000 idle processes: the sampler's own time per round (what
%%%   status() reports), and the schedulers' busy time beside an idle
%%%   stretch of the same length.
%%% Writes a Markdown section to the file named.
-module(sampler_bench).

-export([main/1]).

-define(ROUNDS, 7).
-define(RUN_MS, 2000).
-define(SERVERS, 4).
-define(PROCESSES, 100000).
-define(MEMORY_MS, 30000).
-define(MEMORY_EVENTS, [memory_sample, allocator_sample, process_memory]).
-define(CARRIER_EVENTS, [carrier_create, carrier_destroy]).

%% @doc Runs both benchmarks and writes the section to `Out'.
-spec main([string()]) -> no_return().
main([Out]) ->
    ok = lttng_session:ensure_daemon(),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    ok = lttng_session:wait_registered(),
    Machine = machine(),
    Stacks = stack_sampling(),
    Memory = memory_sampling(),
    Lines = ["## Samplers: sampled stacks and memory\n\n", Machine, Stacks, Memory],
    ok = file:write_file(Out, Lines),
    io:put_chars(Lines),
    halt(0).

%%%===================================================================
%%% STACK SAMPLING
%%%===================================================================

stack_sampling() ->
    Servers = sample_workload:start(?SERVERS),
    Sampled = lttng_session:start_tracked(sampler_bench_stacks, [stack_sample]),
    Traced = lttng_session:start_tracked(sampler_bench_calls, [function_call, function_return]),
    Configs = [untraced, sampled, traced],
    Runs = lists:append(
             [[{C, run(C, Servers)} || C <- rotate(Configs, R)] || R <- lists:seq(1, ?ROUNDS)]),
    sample_workload:stop(Servers),
    [lttng_session:stop(S) || S <- [Sampled, Traced]],
    Discarded = [{sampled, lttng_session:discarded(Sampled)},
                 {traced, lttng_session:discarded(Traced)}],
    Recorded = [{sampled, lttng_session:recorded(Sampled)}],
    [lttng_session:destroy(S) || S <- [Sampled, Traced]],
    Median = maps:from_list([{C, median([R || {C1, R} <- Runs, C1 =:= C])} || C <- Configs]),
    Base = maps:get(untraced, Median),
    Samples = round(proplists:get_value(sampled, Recorded) / (?ROUNDS * ?RUN_MS / 1000)),
    [io_lib:format("Stack sampling (bench/sampler_bench.erl): ~b gen_servers answering CPU-bound "
                   "calls (bench/sample_workload.erl), one client each, ~b s per run, ~b rounds "
                   "in rotating order; calls answered per second, median of the rounds "
                   "[min-max]. Sampled: `dyntrace:sample(Servers, #{interval => 1})` with "
                   "`stack_sample` recorded (~b samples written per second of sampling). "
                   "Traced: `dyntrace:calls({sample_workload, '_', '_'}, #{scope => local, "
                   "return => true})` with `function_call` and `function_return` recorded "
                   "(~b events discarded by LTTng; ~b in the sampled session).\n\n",
                   [?SERVERS, ?RUN_MS div 1000, ?ROUNDS, Samples,
                    proplists:get_value(traced, Discarded),
                    proplists:get_value(sampled, Discarded)]),
     "| workload | calls/s | vs. untraced |\n|---|---:|---:|\n",
     [begin
          All = [R || {C1, R} <- Runs, C1 =:= C],
          io_lib:format("| ~s | ~b [~b-~b] | ~.3fx |\n",
                        [C, round(maps:get(C, Median)), round(lists:min(All)), round(lists:max(All)),
                         maps:get(C, Median) / Base])
      end || C <- Configs],
     io_lib:format("\nTarget: sampled within 5% of untraced (>= 0.950x): ~s.\n\n",
                   [yes_no(maps:get(sampled, Median) / Base >= 0.95)])].

%% Calls answered per second in one run of `Config'.
run(untraced, Servers) ->
    sample_workload:run(Servers, ?RUN_MS) * 1000 / ?RUN_MS;
run(sampled, Servers) ->
    {ok, _} = dyntrace:sample(Servers, #{interval => 1}),
    try run(untraced, Servers) after ok = dyntrace:clear() end;
run(traced, Servers) ->
    {ok, _} = dyntrace:calls({sample_workload, '_', '_'}, #{scope => local, return => true}),
    try run(untraced, Servers) after ok = dyntrace:clear() end.

%%%===================================================================
%%% MEMORY SAMPLING
%%%===================================================================

memory_sampling() ->
    Idle = [spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, ?PROCESSES)],
    erlang:garbage_collect(),
    _ = erlang:system_flag(scheduler_wall_time, true),
    {IdleBusy, _} = busy_during(fun() -> timer:sleep(?MEMORY_MS) end),
    Rows = [memory_run("memory_sample, allocator_sample, process_memory", ?MEMORY_EVENTS),
            memory_run("the same and carrier_create, carrier_destroy (instrument:carriers/0 "
                       "every 10 s)", ?MEMORY_EVENTS ++ ?CARRIER_EVENTS)],
    All = erlang:system_info(process_count),
    [P ! stop || P <- Idle],
    [io_lib:format("Memory sampling (bench/sampler_bench.erl): `dyntrace:memory(#{})` (interval "
                   "1 s, top 20) for ~b s on a node of ~b idle processes (~b in all), the events "
                   "recorded. Time per round: the sampler's own, from `dyntrace:status()` "
                   "(wall time of a round, mean and max; a round reads at most 500 processes, "
                   "so a sweep over all of them takes ~b rounds); share of one core = mean / "
                   "interval. Schedulers' busy time: the node's scheduler_wall_time over the run, "
                   "in ms per second, beside the same stretch idle (~.1f ms/s).\n\n",
                   [?MEMORY_MS div 1000, ?PROCESSES, All,
                    ?PROCESSES div 500, IdleBusy]),
     "| events enabled | rounds | time per round (mean) | max | share of one core | "
     "schedulers busy, ms/s (idle) |\n|---|---:|---:|---:|---:|---:|\n",
     [io_lib:format("| ~s | ~b | ~.2f ms | ~.2f ms | ~.2f% | ~.1f (~.1f) |\n",
                    [Name, Rounds, Mean / 1000, Max / 1000, Mean / 10000, Busy, IdleBusy])
      || {Name, Rounds, Mean, Max, Busy} <- Rows],
     io_lib:format("\nTarget: at most 1% of one core per round at 1 s: ~s.\n\n",
                   [yes_no(lists:all(fun({_, _, Mean, _, _}) -> Mean =< 10000 end, Rows))])].

memory_run(Name, Events) ->
    S = lttng_session:start_tracked(sampler_bench_memory, Events),
    {ok, _} = dyntrace:memory(#{}),
    {Busy, Status} = busy_during(fun() ->
                                         timer:sleep(?MEMORY_MS),
                                         [T] = maps:get(traces, dyntrace:status()),
                                         T
                                 end),
    ok = dyntrace:clear(),
    lttng_session:destroy(S),
    #{rounds := Rounds, round_us_mean := Mean, round_us_max := Max} = Status,
    {Name, Rounds, Mean, Max, Busy}.

%% The schedulers' busy time while `Fun' runs, ms per second of wall time,
%% and what `Fun' answers.
busy_during(Fun) ->
    T0 = erlang:monotonic_time(millisecond),
    W0 = lists:sort(erlang:statistics(scheduler_wall_time)),
    Result = Fun(),
    W1 = lists:sort(erlang:statistics(scheduler_wall_time)),
    Ms = erlang:monotonic_time(millisecond) - T0,
    %% scheduler_wall_time counts in native time units.
    BusyNative = lists:sum([A1 - A0 || {{I, A0, _}, {I, A1, _}} <- lists:zip(W0, W1)]),
    {erlang:convert_time_unit(BusyNative, native, microsecond) / Ms, Result}.

%%%===================================================================
%%% HELPERS
%%%===================================================================

rotate(List, N) ->
    K = N rem length(List),
    lists:nthtail(K, List) ++ lists:sublist(List, K).

median(List) ->
    lists:nth((length(List) + 1) div 2, lists:sort(List)).

yes_no(true) -> "yes";
yes_no(false) -> "no".

machine() ->
    Sh = fun(C) -> string:trim(os:cmd(C)) end,
    io_lib:format("Run ~s on ~s (`nproc` = ~s), OTP ~s, ~s; load average at start ~s. "
                  "Command: `make bench` (this section alone: see bench/run.sh).\n\n",
                  [Sh("date -u '+%Y-%m-%d %H:%M UTC'"),
                   Sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'"),
                   Sh("nproc"), erlang:system_info(otp_release),
                   hd(string:split(Sh("lttng --version"), " - ")),
                   Sh("cut -d' ' -f1-3 /proc/loadavg")]).
