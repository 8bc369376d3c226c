%%% What `dyntrace:record(triage, ...)' costs, beside no tracing and full
%%% tracing, side by side in one run: the node's CPU per request (its OS
%%% process's user and system time, from /proc/self/stat) on a request
%%% workload: `Clients' processes calling `Servers' gen_servers, each
%%% request a little work (sorting and hashing a 64-element list) and a
%%% reply. Configurations, in rotating order, each for RUN_MS:
%%% - untraced;
%%% - triage: `dyntrace:record(triage, #{wait => false})' started before
%%%   the run (its session made), stopped after;
%%% - full: `dyntrace:record([{trace, all, [messages, scheduling, procs,
%%%   gc]}, memory], ...)', every process's every event, as the issue's
%%%   "every process traced" run.
%%% Writes a Markdown section to the file named.
-module(triage_bench).
-behaviour(gen_server).

-export([main/1]).
-export([init/1, handle_call/3, handle_cast/2]).

-define(ROUNDS, 9).
-define(RUN_MS, 4000).
-define(SERVERS, 4).
-define(CLIENTS, 8).
-define(FULL, [{trace, all, [messages, scheduling, procs, gc]}, memory]).

%% @doc Runs the benchmark and writes the section to `Out'.
-spec main([string()]) -> no_return().
main([Out]) ->
    Start = {sh("date -u '+%Y-%m-%d %H:%M UTC'"), sh("cut -d' ' -f1-3 /proc/loadavg")},
    ok = lttng_session:ensure_daemon(),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    ok = lttng_session:wait_registered(),
    Servers = [begin {ok, P} = gen_server:start(?MODULE, [], []), P end
               || _ <- lists:seq(1, ?SERVERS)],
    Configs = [untraced, triage, full],
    Rounds = [[{C, run(C, Servers)} || C <- rotate(Configs, R)] || R <- lists:seq(1, ?ROUNDS)],
    [gen_server:stop(S) || S <- Servers],
    Lines = section(Start, Configs, Rounds),
    ok = file:write_file(Out, Lines),
    io:put_chars(Lines),
    halt(0).

%% One run of `Config': `{Requests, CpuMs, TraceBytes}'.
run(untraced, Servers) ->
    measure(Servers);
run(triage, Servers) ->
    recorded(triage, Servers);
run(full, Servers) ->
    recorded(?FULL, Servers).

recorded(What, Servers) ->
    H = case dyntrace:record(What, #{wait => false, duration => 3600000}) of
            {ok, Handle} ->
                Handle;
            {error, _} = Error ->
                %% What the daemon saw, for a failure that only a loaded
                %% machine shows.
                io:format("~p~n~s~s", [Error, os:cmd("lttng list -u 2>&1 | head -5"),
                                       os:cmd("lttng list 2>&1")]),
                halt(1)
        end,
    try
        {Requests, Cpu, _} = measure(Servers),
        {ok, Dir} = dyntrace:stop(H),
        Bytes = list_to_integer(hd(string:lexemes(os:cmd("du -sb '" ++ Dir ++ "'"), "\t"))),
        _ = os:cmd("rm -rf '" ++ Dir ++ "'"),
        {Requests, Cpu, Bytes}
    after
        ok = dyntrace:clear()
    end.

measure(Servers) ->
    Parent = self(),
    Until = erlang:monotonic_time(millisecond) + ?RUN_MS,
    C0 = cpu_ms(),
    Clients = [spawn_link(fun() -> Parent ! {self(), client(S, Until, 0)} end)
               || I <- lists:seq(1, ?CLIENTS),
                  S <- [lists:nth(1 + I rem ?SERVERS, Servers)]],
    Requests = lists:sum([receive {C, N} -> N end || C <- Clients]),
    {Requests, cpu_ms() - C0, 0}.

client(Server, Until, N) ->
    case erlang:monotonic_time(millisecond) >= Until of
        true ->
            N;
        false ->
            {ok, _} = gen_server:call(Server, {work, N}),
            client(Server, Until, N + 1)
    end.

%% This OS process's user and system CPU time, in ms.
cpu_ms() ->
    {ok, Stat} = file:read_file("/proc/self/stat"),
    %% After the command name's closing parenthesis: fields 3.. ; utime
    %% and stime are fields 14 and 15.
    [_, After] = string:split(Stat, ") ", trailing),
    Fields = string:lexemes(After, " "),
    Ticks = binary_to_integer(lists:nth(12, Fields)) + binary_to_integer(lists:nth(13, Fields)),
    Ticks * 1000 div clock_ticks().

clock_ticks() ->
    list_to_integer(string:trim(os:cmd("getconf CLK_TCK"))).

%%%===================================================================
%%% The servers
%%%===================================================================

%% @doc gen_server callback: no state.
-spec init([]) -> {ok, nostate}.
init([]) ->
    {ok, nostate}.

%% @doc gen_server callback: a little work per request.
-spec handle_call({work, integer()}, gen_server:from(), nostate) ->
          {reply, {ok, integer()}, nostate}.
handle_call({work, N}, _From, State) ->
    List = [erlang:phash2({N, I}) || I <- lists:seq(1, 64)],
    {reply, {ok, erlang:phash2(lists:sort(List))}, State}.

%% @doc gen_server callback: casts are ignored.
-spec handle_cast(term(), nostate) -> {noreply, nostate}.
handle_cast(_Msg, State) ->
    {noreply, State}.

%%%===================================================================
%%% The section
%%%===================================================================

section({Date, Load}, Configs, Rounds) ->
    Runs = lists:append(Rounds),
    PerRequest = fun({Requests, Cpu, _}) -> Cpu * 1000 / max(1, Requests) end,
    Median = maps:from_list([{C, median([PerRequest(R) || {C1, R} <- Runs, C1 =:= C])}
                             || C <- Configs]),
    %% Per round, each configuration against the same round's untraced run.
    Ratios = fun(C) ->
                     [PerRequest(proplists:get_value(C, Round))
                      / PerRequest(proplists:get_value(untraced, Round)) || Round <- Rounds]
             end,
    Sh = fun sh/1,
    ["\n## Triage: CPU per request, untraced, triage and full tracing\n\n",
     io_lib:format("Run ~s on ~s (`nproc` = ~s), OTP ~s, ~s; load average at the start ~s, at "
                   "the end ~s. "
                   "Command: `make bench-triage` (bench/triage_bench.erl). ~b clients calling ~b "
                   "gen_servers (each request: 64 hashes sorted and hashed), ~b s per run, ~b "
                   "rounds in rotating order. CPU: the node's OS process, user + system "
                   "(/proc/self/stat), schedulers without busy waiting (`+sbwt none`). Triage: "
                   "`dyntrace:record(triage, ...)` with its defaults. Full: `dyntrace:record(~w, "
                   "...)`. CPU per request: median of the rounds [min-max]; against untraced: "
                   "the median of the rounds' ratios (each against the same round's untraced "
                   "run) and its distribution-free interval (test/bench_stats.erl); trace size per "
                   "run.\n\n",
                   [Date,
                    Sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'"),
                    Sh("nproc"), erlang:system_info(otp_release),
                    hd(string:split(Sh("lttng --version"), " - ")),
                    Load, Sh("cut -d' ' -f1-3 /proc/loadavg"),
                    ?CLIENTS, ?SERVERS, ?RUN_MS div 1000, ?ROUNDS, ?FULL]),
     "| run | requests/s | CPU per request | vs. untraced | trace per run |\n"
     "|---|---:|---:|---:|---:|\n",
     [begin
          Mine = [R || {C1, R} <- Runs, C1 =:= C],
          Per = [PerRequest(R) || R <- Mine],
          Rate = median([N * 1000 / ?RUN_MS || {N, _, _} <- Mine]),
          Bytes = median([B || {_, _, B} <- Mine]),
          io_lib:format("| ~s | ~b | ~.2f us [~.2f-~.2f] | ~s | ~.1f MiB |\n",
                        [C, round(Rate), maps:get(C, Median), lists:min(Per), lists:max(Per),
                         case C of
                             untraced -> "1.00x";
                             _ -> bench_stats:interval_text(Ratios(C))
                         end, Bytes / 1048576])
      end || C <- Configs],
     io_lib:format("\nEach round's triage/untraced and full/untraced: ~s.\n",
                   [lists:join(", ", [io_lib:format("~.2fx/~.2fx", [T, F])
                                      || {T, F} <- lists:zip(Ratios(triage), Ratios(full))])]),
     io_lib:format("\nTarget: triage at most 1.10x untraced CPU per request: ~s.\n",
                   [case element(1, bench_stats:interval(Ratios(triage))) =< 1.10 of
                        true -> "yes";
                        false -> "no"
                    end])].

rotate(List, N) ->
    K = N rem length(List),
    lists:nthtail(K, List) ++ lists:sublist(List, K).

median(List) ->
    bench_stats:median(List).

sh(Cmd) ->
    string:trim(os:cmd(Cmd)).
