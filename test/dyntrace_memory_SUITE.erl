%%% `dyntrace:memory/1' and `dyntrace-analyze memory' on three planted
%%% leaks beside a busy normal workload, in this node, recorded in a real
%%% LTTng session:
%%% - `bin_hoarder' keeps every refc binary it receives;
%%% - the ETS table `leaky_table' only grows;
%%% - `picky_reader' receives selectively, so its mailbox grows.
%%% The analyser must show each as the worst growth of its kind: the
%%% hoarder by binary heap, the table in the `ets' category, the reader by
%%% queue, each by its registered name. The sampler's own options, limits
%%% and bad arguments are checked as for `trace/3'.
-module(dyntrace_memory_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1,
         init_per_testcase/2, end_per_testcase/2]).
%% A process of the workload.
-export([idle/0]).
-export([t_planted_leaks/1,
         t_events_and_fields/1,
         t_limits_and_status/1,
         t_bad_arguments/1]).

-define(EVENTS, [memory_sample, allocator_sample, process_memory,
                 carrier_create, carrier_destroy, node_name]).
%% A refc binary (larger than 64 bytes: kept off the process heap).
-define(BIN_BYTES, 8192).
-define(ROUND_MS, 200).
-define(FEEDS, 6).
-define(FEEDS_PER_ROUND, 100).

suite() ->
    [{timetrap, {minutes, 3}}].

all() ->
    [t_planted_leaks,
     t_events_and_fields,
     t_limits_and_status,
     t_bad_arguments].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    [{analyze, analyze_cmd:exe()} | Config].

end_per_suite(_Config) ->
    ok.

init_per_testcase(Case, Config) ->
    ok = lttng_session:delete_traces(Case),
    Config.

end_per_testcase(Case, _Config) ->
    ok = dyntrace:clear(),
    lttng_session:destroy_left(Case),
    [exit(P, kill) || Name <- [bin_hoarder, picky_reader, busy_sup],
                      P <- [whereis(Name)], is_pid(P)],
    _ = [ets:delete(leaky_table) || ets:info(leaky_table) =/= undefined],
    ok.

%%%===================================================================
%%% Cases
%%%===================================================================

t_planted_leaks(Config) ->
    S = lttng_session:start_tracked(t_planted_leaks, ?EVENTS),
    start_busy_workload(20),
    start_leaks(),
    {ok, _} = dyntrace:memory(#{interval => ?ROUND_MS, top => 20, carriers => 1000}),
    %% The first round is before any leak and the last after them all, so
    %% that their samples see exactly the table's growth in between.
    wait_round(1),
    EtsBefore = ets_bytes(),
    lists:foreach(fun(_) ->
                          leak(?FEEDS_PER_ROUND),
                          %% A whole round after the leak.
                          wait_round(rounds() + 2)
                  end, lists:seq(1, ?FEEDS)),
    EtsGrowth = ets_bytes() - EtsBefore,
    ok = dyntrace:clear(),
    lttng_session:stop(S),
    Json = analyze_ok(Config, ["memory", "--json", dir(S)]),
    Procs = maps:get(<<"process_memory">>, Json),
    Series = maps:get(<<"memory">>, Json),
    ct:log("ets grew ~b bytes~nseries ~p~nprocesses ~p", [EtsGrowth, Series, Procs]),

    %% The hoarder: the worst binary heap growth, by name.
    [Hoarder | _] = worst(<<"bin_first">>, <<"bin_last">>, Procs),
    ?assertEqual(<<"bin_hoarder">>, maps:get(<<"name">>, Hoarder)),
    Fed = ?FEEDS * ?FEEDS_PER_ROUND,
    ?assert(maps:get(<<"bin_last">>, Hoarder) >= Fed * ?BIN_BYTES),
    ?assert(maps:get(<<"bin_last">>, Hoarder) - maps:get(<<"bin_first">>, Hoarder)
            >= (Fed - ?FEEDS_PER_ROUND) * ?BIN_BYTES),
    %% The picky reader: the worst queue growth, by name.
    [Reader | _] = worst(<<"queue_first">>, <<"queue_last">>, Procs),
    ?assertEqual(<<"picky_reader">>, maps:get(<<"name">>, Reader)),
    %% Every unwanted message stays; the reader shows from its first.
    ?assertEqual(Fed, maps:get(<<"queue_last">>, Reader)),
    ?assert(maps:get(<<"queue_last">>, Reader) - maps:get(<<"queue_first">>, Reader)
            >= Fed - ?FEEDS_PER_ROUND),
    %% The table: the ets category grew as the table did (other tables
    %% of the node change a little meanwhile).
    [Ets] = [R || #{<<"series">> := <<"ets">>} = R <- Series],
    EtsSeen = maps:get(<<"last">>, Ets) - maps:get(<<"first">>, Ets),
    ?assert(abs(EtsSeen - EtsGrowth) =< EtsGrowth div 10, {EtsSeen, EtsGrowth}),
    ?assert(maps:get(<<"growth_per_s">>, Ets) > 0),
    %% The hoarded binaries took new binary_alloc carriers, which the
    %% carrier reads saw appear.
    Created = [E || E <- lttng_session:select(carrier_create, lttng_session:read(S)),
                    lttng_session:field("type", E) =:= <<"binary_alloc">>],
    ?assertNotEqual([], Created),
    [?assert(lttng_session:field("size", E) > 0) || E <- Created],
    %% Text output names the leaks too, and flags them as candidates.
    {0, Text, <<>>} = analyze(Config, ["memory", dir(S)]),
    ct:log("~s", [Text]),
    [?assertMatch({match, _}, re:run(Text, Flag), Flag)
     || Flag <- ["leak candidate \\(grew in every window\\): ets",
                 "bin_hoarder <[0-9]+\\.[0-9]+\\.[0-9]+> binary heap",
                 "picky_reader <[0-9]+\\.[0-9]+\\.[0-9]+> queue"]],
    lttng_session:destroy(S).

%% One round's events and their fields: the categories add up, every
%% allocator type is sampled, a process named in `procs' is reported, by
%% its initial call when it has no registered name.
t_events_and_fields(_Config) ->
    S = lttng_session:start_tracked(t_events_and_fields, ?EVENTS),
    Idle = proc_lib:spawn(?MODULE, idle, []),
    {ok, _} = dyntrace:memory(#{interval => 100, top => 3, procs => [Idle],
                                max_events => 1000}),
    lttng_session:wait_until(fun() -> rounds() >= 3 end, 100),
    ok = dyntrace:clear(),
    Events = lttng_session:stop_and_read(S),
    [M | _] = lttng_session:select(memory_sample, Events),
    ?assert(lttng_session:field("total", M) > 0),
    ?assertEqual(lttng_session:field("total", M),
                 lttng_session:field("processes", M) + lttng_session:field("system", M)),
    Types = lists:usort([lttng_session:field("type", E)
                         || E <- lttng_session:select(allocator_sample, Events)]),
    ?assertEqual(lists:sort([atom_to_binary(T) || T <- erlang:system_info(alloc_util_allocators)]),
                 Types),
    IdleText = list_to_binary(pid_to_list(Idle)),
    Mine = [E || E <- lttng_session:select(process_memory, Events),
                 lttng_session:field("pid", E) =:= IdleText],
    ?assert(length(Mine) >= 3),
    [?assertEqual(<<"dyntrace_memory_SUITE:idle/0">>, lttng_session:field("name", E))
     || E <- Mine],
    %% Top 3 and the named one per round, at most.
    Rounds = length(lttng_session:select(memory_sample, Events)),
    ?assert(length(lttng_session:select(process_memory, Events)) =< 4 * Rounds),
    lttng_session:destroy(S),
    %% `allocators => false' (triage's sampler): the rest, no allocator.
    S2 = lttng_session:start_tracked(t_events_and_fields_2, ?EVENTS),
    {ok, _} = dyntrace:memory(#{interval => 100, top => 3, procs => [Idle], allocators => false,
                                max_events => 1000}),
    lttng_session:wait_until(fun() -> rounds() >= 3 end, 100),
    ok = dyntrace:clear(),
    Events2 = lttng_session:stop_and_read(S2),
    ?assert(length(lttng_session:select(memory_sample, Events2)) >= 3),
    ?assert(length(lttng_session:select(process_memory, Events2)) >= 3),
    ?assertEqual([], lttng_session:select(allocator_sample, Events2)),
    exit(Idle, kill),
    lttng_session:destroy(S2).

%% status() lists the sampler; max_events ends it after that many events;
%% duration ends it; clear() ends it.
t_limits_and_status(_Config) ->
    S = lttng_session:start_tracked(t_limits_and_status, [memory_sample]),
    {ok, Id} = dyntrace:memory(#{interval => 20, max_events => 7}),
    lttng_session:wait_until(fun() -> traces() =:= [] end, 100),
    ?assertEqual(7, length(lttng_session:select(memory_sample,
                                                lttng_session:stop_and_read(S)))),
    {ok, Id2} = dyntrace:memory(#{duration => 200}),
    ?assertNotEqual(Id, Id2),
    [#{id := Id2, kind := memory, ms_left := Left, events_left := infinity}] = traces(),
    ?assert(Left =< 200),
    lttng_session:wait_until(fun() -> traces() =:= [] end, 100),
    {ok, _} = dyntrace:memory(#{}),
    ?assertMatch([_], traces()),
    ok = dyntrace:clear(),
    ?assertEqual([], traces()),
    lttng_session:destroy(S).

t_bad_arguments(_Config) ->
    [?assertError({badarg, _}, dyntrace:memory(Opts))
     || Opts <- [#{interval => 0}, #{top => -1}, #{top => 100000}, #{procs => self()},
                 #{procs => ["x"]}, #{carriers => yes}, #{allocators => 1}, #{sweep => 0},
                 #{sweep => 1.5}, #{max_events => 0},
                 #{unknown => 1}, [{interval, 10}]]],
    ?assertEqual([], traces()).

%%%===================================================================
%%% The workload
%%%===================================================================

%% @doc Waits forever.
idle() ->
    receive never_sent -> ok end.

%% The leaks: two processes and a table, fed by leak/1.
start_leaks() ->
    register(bin_hoarder, spawn(fun() -> hoard([]) end)),
    register(picky_reader, spawn(fun picky/0)),
    leaky_table = ets:new(leaky_table, [named_table, public, set]),
    ok.

%% `N' binaries kept, `N' messages left in the queue, `N' rows more, each
%% acknowledged (the leakers have taken them when this returns).
leak(N) ->
    lists:foreach(fun(_) ->
                          I = erlang:unique_integer([positive]),
                          bin_hoarder ! {bin, binary:copy(<<I:32>>, ?BIN_BYTES div 4)},
                          picky_reader ! {unwanted, I},
                          true = ets:insert(leaky_table, {I, lists:duplicate(20, I)})
                  end, lists:seq(1, N)),
    [begin Name ! {sync, self()}, receive {synced, Name} -> ok end end
     || Name <- [bin_hoarder, picky_reader]],
    ok.

hoard(Kept) ->
    receive
        {bin, B} -> hoard([B | Kept]);
        {sync, From} -> From ! {synced, bin_hoarder}, hoard(Kept)
    end.

%% Takes only what it wants: `unwanted' messages stay.
picky() ->
    receive
        {sync, From} -> From ! {synced, picky_reader}, picky()
    end.

ets_bytes() ->
    ets:info(leaky_table, memory) * erlang:system_info(wordsize).

%% Workers that allocate and drop memory (binaries, heaps, a table of
%% their own that they empty) and talk to each other, without leaking.
start_busy_workload(Workers) ->
    Parent = self(),
    Sup = spawn(fun() ->
                        Pids = [spawn_link(fun() -> busy(I, 0) end) || I <- lists:seq(1, Workers)],
                        Parent ! {busy, Pids},
                        receive never_sent -> ok end
                end),
    register(busy_sup, Sup),
    receive {busy, _} -> ok end.

busy(I, N) ->
    Garbage = [binary:copy(<<I:8>>, 4096) || _ <- lists:seq(1, 5)],
    _ = lists:sum([byte_size(B) || B <- Garbage]),
    _ = lists:seq(1, 2000),
    receive after 10 -> ok end,
    busy(I, N + 1).

%%%===================================================================
%%% Helpers
%%%===================================================================

dir(#{dir := Dir}) ->
    Dir.

traces() ->
    maps:get(traces, dyntrace:status()).

%% Waits until the sampler has done `N' rounds.
wait_round(N) ->
    lttng_session:wait_until(fun() -> rounds() >= N end, 100).

rounds() ->
    case traces() of
        [#{rounds := R}] -> R;
        [] -> 0
    end.

%% Rows by growth of one figure, worst first.
worst(First, Last, Rows) ->
    lists:sort(fun(A, B) ->
                       maps:get(Last, A) - maps:get(First, A) >= maps:get(Last, B) - maps:get(First, B)
               end, Rows).

analyze(Config, Args) ->
    analyze_cmd:run(?config(analyze, Config), Args).

analyze_ok(Config, Args) ->
    analyze_cmd:json(?config(analyze, Config), Args).
