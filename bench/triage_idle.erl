%%% What `dyntrace:record(triage, ...)' costs a node that does nothing:
%%% the part of its cost that does not grow with the load, which weighs
%%% most on a lightly loaded node (a broker at 1000 messages/s uses a fifth
%%% of a core). A node of `PROCS' idle proc_lib processes (each with a few
%%% dictionary entries, as a service's servers have), its CPU per second
%%% untraced, under triage and under each of triage's parts alone, in
%%% rotating rounds of one run. CPU: the time on a CPU of every thread of
%%% the node's OS process (/proc/self/task/*/schedstat, in ns: the 10 ms
%%% ticks of /proc/self/stat are too coarse for a few ms a second), over
%%% RUN_MS after a second to settle. Also each sampler's own time per
%%% round, from `dyntrace:status()'.
%%% Writes a Markdown section to the file named.
-module(triage_idle).

-export([main/1]).

-define(ROUNDS, 3).
-define(RUN_MS, 10000).
-define(SETTLE_MS, 1000).
-define(PROCS, 500).

%% @doc Runs the benchmark and writes the section to `Out'.
-spec main([string()]) -> no_return().
main([Out]) ->
    ok = lttng_session:ensure_daemon(),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    ok = lttng_session:wait_registered(),
    Idle = [proc_lib:spawn(fun() -> idle() end) || _ <- lists:seq(1, ?PROCS)],
    Configs = [untraced, triage, procs, memory, focus],
    Sh = fun(Cmd) -> string:trim(os:cmd(Cmd)) end,
    Start = {Sh("date -u '+%Y-%m-%d %H:%M UTC'"), Sh("cut -d' ' -f1-3 /proc/loadavg")},
    Runs = lists:append([[{C, run(C)} || C <- rotate(Configs, R)]
                         || R <- lists:seq(1, ?ROUNDS)]),
    [exit(P, kill) || P <- Idle],
    Lines = section(Start, Configs, Runs),
    ok = file:write_file(Out, Lines),
    io:put_chars(Lines),
    halt(0).

idle() ->
    [put({key, I}, lists:seq(1, 20)) || I <- lists:seq(1, 30)],
    receive stop -> ok end.

%% What each configuration records: triage, or one of its items.
what(triage) ->
    triage;
what(Part) ->
    {Items, _} = dyntrace_triage:items(#{}),
    [lists:keyfind(case Part of procs -> trace; _ -> Part end, 1, Items)].

%% One run: `{CpuMsPerS, #{SamplerKind => RoundUsMean}}'.
run(untraced) ->
    timer:sleep(?SETTLE_MS),
    {measure(), #{}};
run(Config) ->
    {ok, H} = dyntrace:record(what(Config), #{wait => false, duration => 3600000}),
    try
        timer:sleep(?SETTLE_MS),
        Cpu = measure(),
        Rounds = maps:from_list([{Kind, Us} || #{kind := Kind, round_us_mean := Us}
                                                   <- maps:get(traces, dyntrace:status())]),
        {ok, Dir} = dyntrace:stop(H),
        _ = os:cmd("rm -rf '" ++ Dir ++ "'"),
        {Cpu, Rounds}
    after
        ok = dyntrace:clear()
    end.

measure() ->
    C0 = cpu_ns(),
    T0 = erlang:monotonic_time(nanosecond),
    timer:sleep(?RUN_MS),
    (cpu_ns() - C0) / 1.0e6 / ((erlang:monotonic_time(nanosecond) - T0) / 1.0e9).

%% The time on a CPU of this OS process's threads, in ns.
cpu_ns() ->
    {ok, Tasks} = file:list_dir("/proc/self/task"),
    lists:sum([case file:read_file("/proc/self/task/" ++ T ++ "/schedstat") of
                   {ok, B} -> binary_to_integer(hd(string:lexemes(B, " ")));
                   {error, _} -> 0
               end || T <- Tasks]).

%%%===================================================================
%%% The section
%%%===================================================================

section({Date, Load}, Configs, Runs) ->
    Cpu = fun(C) -> lists:sort([Ms || {C1, {Ms, _}} <- Runs, C1 =:= C]) end,
    Base = median(Cpu(untraced)),
    Sh = fun(Cmd) -> string:trim(os:cmd(Cmd)) end,
    ["\n## Triage on an idle node: CPU per second\n\n",
     io_lib:format("Run ~s (`nproc` = ~s), OTP ~s; load average at start ~s. Command: `make "
                   "bench-triage-idle` (bench/triage_idle.erl). ~b idle proc_lib processes, "
                   "~b s per run after ~b s to settle, ~b rounds in rotating order. CPU: every "
                   "thread of the node's OS process (/proc/self/task/*/schedstat), schedulers "
                   "without busy waiting (`+sbwt none`). Triage's parts alone: `procs` = "
                   "`~w`, `memory` = `~w`, `focus` = `~w`. Median of the rounds [min-max]; the "
                   "samplers' own mean time per round (`dyntrace:status()`).\n\n",
                   [Date, Sh("nproc"), erlang:system_info(otp_release), Load,
                    ?PROCS, ?RUN_MS div 1000, ?SETTLE_MS div 1000, ?ROUNDS,
                    what(procs), what(memory), what(focus)]),
     "| run | node CPU | over untraced | sampler's round (mean) |\n"
     "|---|---:|---:|---|\n",
     [begin
          L = Cpu(C),
          Rounds = lists:usort(lists:append([maps:to_list(R) || {C1, {_, R}} <- Runs,
                                                                C1 =:= C])),
          Kinds = lists:usort([K || {K, _} <- Rounds]),
          io_lib:format("| ~s | ~.2f ms/s [~.2f-~.2f] | ~.2f ms/s | ~s |\n",
                        [C, median(L), hd(L), lists:last(L), median(L) - Base,
                         lists:join(", ", [io_lib:format("~s ~b us", [K, median([U || {K1, U} <- Rounds, K1 =:= K])])
                                           || K <- Kinds])])
      end || C <- Configs]].

rotate(List, N) ->
    K = N rem length(List),
    lists:nthtail(K, List) ++ lists:sublist(List, K).

median(List) ->
    lists:nth((length(List) + 1) div 2, lists:sort(List)).
