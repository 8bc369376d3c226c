%%% End-to-end for `dyntrace-analyze': this node traces a workload whose
%%% answer it knows (a planted slow path it times itself, garbage
%%% collections, messages), LTTng records it, and the analyser's JSON must
%%% give that answer. Bad input must get one line on stderr naming the
%%% input and a non-zero exit status.
-module(dyntrace_analyze_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1,
         init_per_testcase/2, end_per_testcase/2]).
-export([t_exceptions/1,
         t_calls_planted_slow_path/1,
         t_python_reference_agrees/1,
         t_gc_pairs/1,
         t_latency_pairs_sends/1,
         t_two_traces_merged/1,
         t_counted_kinds_same_answer/1,
         t_genserver/1,
         t_probes/1,
         t_live/1,
         t_discarded/1,
         t_bad_input/1]).
%% The traced workload; a gen_server's callbacks.
-export([slow_path/1, fast_path/1, serve/1, raise/1]).
-export([init/1, handle_call/3, handle_cast/2]).

-define(SLOW_MS, 8).
-define(REQUESTS, 200).
-define(SLOW_EVERY, 20).

suite() ->
    [{timetrap, {minutes, 3}}].

all() ->
    [t_calls_planted_slow_path,
     t_python_reference_agrees,
     t_gc_pairs,
     t_latency_pairs_sends,
     t_two_traces_merged,
     t_counted_kinds_same_answer,
     t_genserver,
     t_probes,
     t_live,
     t_discarded,
     t_exceptions,
     t_bad_input].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    [{analyze, analyze_cmd:exe()} | Config].

end_per_suite(_Config) ->
    ok.

init_per_testcase(_Case, Config) ->
    Config.

end_per_testcase(_Case, _Config) ->
    dyntrace_test_trace:untrace(?MODULE).

%%%===================================================================
%%% Workload
%%%===================================================================

%% @doc The planted slow path: sleeps `Ms' milliseconds.
slow_path(Ms) ->
    timer:sleep(Ms),
    slow.

%% @doc The common fast path.
fast_path(N) ->
    lists:sum(lists:seq(1, N)).

%% @doc A server answering `{Ref, From}' requests until `stop'.
serve(Count) ->
    receive
        {req, From, Ref} ->
            From ! {Ref, Count},
            serve(Count + 1);
        stop ->
            ok
    end.

%% @doc gen_server callback: no state.
init([]) ->
    {ok, nostate}.

%% @doc gen_server callback: `{get, N}' answers at once, `{slow, Ms}'
%% after `Ms' milliseconds.
handle_call({get, N}, _From, State) ->
    {reply, N, State};
handle_call({slow, Ms}, _From, State) ->
    timer:sleep(Ms),
    {reply, ok, State}.

%% @doc gen_server callback: casts are ignored.
handle_cast(_Msg, State) ->
    {noreply, State}.

traced(Flags, Fun) ->
    lttng_session:traced(Flags, Fun).

%%%===================================================================
%%% Cases
%%%===================================================================

%% Every 20th of 200 requests takes the slow path; the node times each
%% slow call. `calls --slower-than' lists exactly those calls, each within
%% 1 ms of the node's own measurement, and the per-entry counts are exact.
t_calls_planted_slow_path(Config) ->
    S = start_session(t_calls, [function_call, function_return, function_exception]),
    {Measured, Pid} = planted_calls(),
    lttng_session:stop(S),
    Out = analyze_ok(Config, ["calls", "--json", "--slower-than", "4ms",
                              "--pid", pid_text(Pid), dir(S)]),
    Slow = maps:get(<<"slow">>, Out),
    ?assertEqual(?REQUESTS div ?SLOW_EVERY, length(Measured)),
    ?assertEqual(length(Measured), length(Slow)),
    lists:foreach(
      fun({Node, Call}) ->
              ?assertEqual(<<"dyntrace_analyze_SUITE:slow_path/1">>, maps:get(<<"entry">>, Call)),
              ?assertEqual(pid_text(Pid), binary_to_list(maps:get(<<"pid">>, Call))),
              Ns = maps:get(<<"duration_ns">>, Call),
              ?assert(abs(Ns - Node) =< 1000000, {Ns, Node}),
              ?assert(is_integer(maps:get(<<"cpu_call">>, Call))),
              ?assert(is_integer(maps:get(<<"cpu_return">>, Call)))
      end, lists:zip(Measured, Slow)),
    Rows = by(<<"entry">>, maps:get(<<"calls">>, Out)),
    SlowRow = maps:get(<<"dyntrace_analyze_SUITE:slow_path/1">>, Rows),
    FastRow = maps:get(<<"dyntrace_analyze_SUITE:fast_path/1">>, Rows),
    ?assertEqual({10, 0}, {maps:get(<<"count">>, SlowRow), maps:get(<<"unmatched">>, SlowRow)}),
    ?assertEqual({190, 0}, {maps:get(<<"count">>, FastRow), maps:get(<<"unmatched">>, FastRow)}),
    ?assert(maps:get(<<"p50_ns">>, SlowRow) >= ?SLOW_MS * 1000000),
    ?assertEqual(lists:max([maps:get(<<"duration_ns">>, C) || C <- Slow]),
                 maps:get(<<"max_ns">>, SlowRow)),
    ?assertEqual(0, maps:get(<<"discarded">>, Out)),
    %% --from (time after the trace's first event) just before the 6th slow
    %% call keeps exactly the last five.
    Sixth = maps:get(<<"start_ns">>, lists:nth(6, Slow)),
    From = integer_to_list(Sixth - maps:get(<<"first_ns">>, Out) - 1000) ++ "ns",
    Late = analyze_ok(Config, ["calls", "--json", "--slower-than", "4ms", "--from", From, dir(S)]),
    ?assertEqual(lists:nthtail(5, Slow), maps:get(<<"slow">>, Late)),
    %% The report plots exactly the planted calls over time.
    Report = filename:join(lttng_session:base_dir(), "report_" ++ os:getpid()),
    {0, _, _} = analyze(Config, ["report", Report, "--slower-than", "4ms", "--pid", pid_text(Pid), dir(S)]),
    {ok, Page} = file:read_file(filename:join(Report, "index.html")),
    ?assertNotEqual(nomatch, string:find(Page, "dyntrace_analyze_SUITE:slow_path/1")),
    ?assertEqual(length(Measured), length(binary:matches(Page, <<"<circle class=\"slow-call\"">>))),
    lttng_session:cmd_ok("rm -rf " ++ Report),
    lttng_session:destroy(S).

%% The Python reference of the benchmark (bench/calls_reference.py, with
%% python3-bt2) and the analyser agree on one trace: same events, counts,
%% unmatched and max; percentiles within the histogram's precision (0.1%).
t_python_reference_agrees(Config) ->
    S = start_session(t_python, [function_call, function_return, function_exception]),
    _ = planted_calls(),
    lttng_session:stop(S),
    Ours = analyze_ok(Config, ["calls", "--json", dir(S)]),
    Script = filename:join([filename:dirname(filename:dirname(?FILE)), "bench", "calls_reference.py"]),
    {0, Text} = lttng_session:cmd("/usr/bin/python3 " ++ Script ++ " " ++ dir(S)),
    {Ref, _} = json_text:value(list_to_binary(Text)),
    ?assertEqual(maps:get(<<"events">>, Ref), maps:get(<<"events">>, Ours)),
    OursByEntry = by(<<"entry">>, maps:get(<<"calls">>, Ours)),
    RefRows = maps:get(<<"calls">>, Ref),
    ?assertEqual(lists:sort(maps:keys(OursByEntry)), lists:sort([maps:get(<<"entry">>, R) || R <- RefRows])),
    lists:foreach(
      fun(R) ->
              O = maps:get(maps:get(<<"entry">>, R), OursByEntry),
              [?assertEqual(maps:get(K, R), maps:get(K, O), K)
               || K <- [<<"count">>, <<"unmatched">>, <<"max_ns">>]],
              [?assert(abs(maps:get(K, R) - maps:get(K, O)) =< maps:get(K, R) div 1000 + 1, {K, R, O})
               || K <- [<<"p50_ns">>, <<"p90_ns">>, <<"p99_ns">>]]
      end, RefRows),
    lttng_session:destroy(S).

%% Every 20th of 200 requests takes the slow path, timed by the caller;
%% returns those times and the traced process.
planted_calls() ->
    Spec = [{'_', [], [{return_trace}]}],
    1 = erlang:trace_pattern({?MODULE, slow_path, 1}, Spec, [local]),
    1 = erlang:trace_pattern({?MODULE, fast_path, 1}, Spec, [local]),
    Request = fun(I) when I rem ?SLOW_EVERY =:= 0 ->
                      T0 = erlang:monotonic_time(nanosecond),
                      slow = ?MODULE:slow_path(?SLOW_MS),
                      [erlang:monotonic_time(nanosecond) - T0];
                 (I) ->
                      _ = ?MODULE:fast_path(I),
                      []
              end,
    traced([call], fun() -> lists:append([Request(I) || I <- lists:seq(1, ?REQUESTS)]) end).

%% `gc' counts one pause per start/end pair of each kind and process, as
%% read from the trace by babeltrace2.
t_gc_pairs(Config) ->
    Gc = [gc_minor_start, gc_minor_end, gc_major_start, gc_major_end],
    S = start_session(t_gc, Gc),
    {_, Pid} = traced([garbage_collection],
                      fun() ->
                              _ = lists:foldl(fun(I, Acc) -> [{I, I} | Acc] end, [], lists:seq(1, 200000)),
                              true = erlang:garbage_collect(),
                              ok
                      end),
    lttng_session:stop(S),
    Events = [E || E <- lttng_session:read(S), lttng_session:field(<<"pid">>, E) =:= pid_bin(Pid)],
    Pairs = fun(Start, End) -> gc_pairs([N || #{name := N} <- Events], Start, End, none, 0) end,
    Minor = Pairs(gc_minor_start, gc_minor_end),
    Major = Pairs(gc_major_start, gc_major_end),
    ?assert(Minor > 0),
    ?assert(Major > 0),
    Out = analyze_ok(Config, ["gc", "--json", dir(S)]),
    Mine = [R || R <- maps:get(<<"gc">>, Out), maps:get(<<"pid">>, R) =:= pid_bin(Pid)],
    ?assertEqual(#{<<"minor">> => Minor, <<"major">> => Major},
                 maps:from_list([{maps:get(<<"kind">>, R), maps:get(<<"count">>, R)} || R <- Mine])),
    lttng_session:destroy(S).

%% `exceptions' on a recording of planted raises: 30 errors in one
%% process, 12 throws over two others, and returns that raise nothing;
%% each location and class counted exactly, with its processes.
t_exceptions(Config) ->
    {ok, H} = dyntrace:record([{calls, {?MODULE, raise, 1}, #{exception => true}}],
                              #{wait => false, duration => 120000}),
    Run = fun(Class, N) ->
                  {Pid, Ref} = spawn_monitor(fun() -> [raised(Class) || _ <- lists:seq(1, N)] end),
                  receive {'DOWN', Ref, process, Pid, _} -> Pid end
          end,
    Erring = Run(error, 30),
    _ = [Run(throw, 6) || _ <- [1, 2]],
    _ = Run(none, 5),
    {ok, Dir} = dyntrace:stop(H),
    Out = analyze_ok(Config, ["exceptions", "--json", Dir]),
    Rows = [{maps:get(<<"entry">>, R), maps:get(<<"class">>, R), maps:get(<<"count">>, R),
             maps:get(<<"processes">>, R)} || R <- maps:get(<<"exceptions">>, Out)],
    Entry = iolist_to_binary(io_lib:format("~p:raise/1", [?MODULE])),
    ?assertEqual([{Entry, <<"error">>, 30, 1}, {Entry, <<"throw">>, 12, 2}], Rows),
    [Error | _] = maps:get(<<"exceptions">>, Out),
    ?assertEqual(pid_bin(Erring), maps:get(<<"last_pid">>, Error)).

raised(Class) ->
    try ?MODULE:raise(Class)
    catch _:planted -> ok
    end.

%% @doc Raises an exception of `Class' (none: returns).
-spec raise(error | throw | none) -> ok.
raise(error) -> error(planted);
raise(throw) -> throw(planted);
raise(none) -> ok.

gc_pairs([], _Start, _End, _Open, N) -> N;
gc_pairs([Start | Rest], Start, End, _, N) -> gc_pairs(Rest, Start, End, open, N);
gc_pairs([End | Rest], Start, End, open, N) -> gc_pairs(Rest, Start, End, none, N + 1);
gc_pairs([_ | Rest], Start, End, Open, N) -> gc_pairs(Rest, Start, End, Open, N).

%% `latency' pairs every send that has a later schedule-in of its
%% receiver, and its worst case is the trace's worst such wait.
t_latency_pairs_sends(Config) ->
    S = start_session(t_latency, [message_send, process_scheduled]),
    {_, Client} = ping_server(),
    lttng_session:stop(S),
    Events = lttng_session:read(S),
    {Paired, Max} = send_to_schedule_in(Events),
    ?assert(Paired >= 100),
    Out = analyze_ok(Config, ["latency", "--json", dir(S)]),
    [All] = maps:get(<<"latency_all">>, Out),
    ?assertEqual({Paired, Max}, {maps:get(<<"count">>, All), maps:get(<<"max_ns">>, All)}),
    Rows = by(<<"to">>, maps:get(<<"latency">>, Out)),
    ?assertMatch(#{<<"count">> := 100}, maps:get(pid_bin(Client), Rows)),
    lttng_session:destroy(S).

%% A client sends 100 requests to a server; both traced. Returns once
%% both have exited and been scheduled out for the last time.
ping_server() ->
    Server = spawn(?MODULE, serve, [0]),
    Watch = erlang:monitor(process, Server),
    1 = erlang:trace(Server, true, [send, running, {tracer, dyntrace, []}]),
    {_, Client} = Result =
        traced([send, running],
               fun() ->
                       [begin
                            Ref = make_ref(),
                            Server ! {req, self(), Ref},
                            receive {Ref, _} -> ok end
                        end || _ <- lists:seq(1, 100)],
                       Server ! stop
               end),
    receive {'DOWN', Watch, process, Server, _} -> ok end,
    lttng_session:wait_until(fun() -> not is_process_alive(Client) end, 100),
    timer:sleep(100),
    Result.

%% What the analyser must find, straight from the trace: each send waits
%% for its receiver's next schedule-in.
send_to_schedule_in(Events) ->
    {_, Paired, Max} =
        lists:foldl(
          fun(#{name := message_send, ts := Ts} = E, {Pending, P, M}) ->
                  To = lttng_session:field(<<"to">>, E),
                  {maps:update_with(To, fun(L) -> [Ts | L] end, [Ts], Pending), P, M};
             (#{name := process_scheduled, ts := Ts} = E, {Pending, P, M}) ->
                  Pid = lttng_session:field(<<"pid">>, E),
                  case {lttng_session:field(<<"type">>, E), maps:take(Pid, Pending)} of
                      {In, {Sent, Rest}} when In =:= <<"in">>; In =:= <<"in_exiting">> ->
                          {Rest, P + length(Sent), lists:max([M | [Ts - T || T <- Sent]])};
                      _ ->
                          {Pending, P, M}
                  end;
             (_, Acc) ->
                  Acc
          end, {#{}, 0, 0}, Events),
    {Paired, Max}.

%% Sends in one trace, schedule-ins in another, recorded at the same time:
%% given together, the analyser must see them as one timeline, so its
%% latency equals that of a third trace holding both event kinds (each
%% session stamps its copy of an event itself: tens of ns apart).
t_two_traces_merged(Config) ->
    Sends = start_session(t_merge_sends, [message_send]),
    Scheds = start_session(t_merge_scheds, [process_scheduled]),
    Both = start_session(t_merge_both, [message_send, process_scheduled]),
    _ = ping_server(),
    [lttng_session:stop(S) || S <- [Sends, Scheds, Both]],
    Merged = analyze_ok(Config, ["latency", "--json", dir(Sends), dir(Scheds)]),
    Single = analyze_ok(Config, ["latency", "--json", dir(Both)]),
    [M] = maps:get(<<"latency_all">>, Merged),
    [S1] = maps:get(<<"latency_all">>, Single),
    Get = fun(Key, Row) -> maps:get(Key, Row) end,
    ?assert(Get(<<"count">>, S1) >= 100),
    ?assertEqual(Get(<<"count">>, S1), Get(<<"count">>, M)),
    ?assertEqual(maps:get(<<"events">>, Single), maps:get(<<"events">>, Merged)),
    %% Each session stamps its copy of an event itself: tens of ns apart,
    %% or microseconds when the writer is preempted between the two copies
    %% (a loaded machine). Read one trace after the other instead of
    %% merged, the waits would be off by orders of magnitude.
    Close = fun(Key) -> abs(Get(Key, S1) - Get(Key, M)) =< Get(Key, S1) div 4 end,
    ?assert(Close(<<"p50_ns">>), {S1, M}),
    ?assert(Close(<<"total_ns">>), {S1, M}),
    [lttng_session:destroy(S) || S <- [Sends, Scheds, Both]].

%% An analysis that reads some kinds of a trace of several: the events of
%% the others are counted rather than handed on, and its answer is the one
%% it gives when every event is handed on (`--from 0s' needs each one's
%% time), its event count that of `rates' (which looks at every event); on
%% every core (the streams decoded in parallel) and on one.
t_counted_kinds_same_answer(Config) ->
    S = start_session(t_counted, [message_send, process_scheduled]),
    _ = ping_server(),
    lttng_session:stop(S),
    Exe = ?config(analyze, Config),
    Events = fun(Out) -> maps:get(<<"events">>, Out) end,
    All = Events(analyze_ok(Config, ["rates", "--json", dir(S)])),
    ?assert(All >= 400, All),
    [begin
         Counted = analyze_cmd:json(Run, Pin ++ [A, "--json", dir(S)]),
         Handed = analyze_cmd:json(Run, Pin ++ [A, "--json", "--from", "0s", dir(S)]),
         ?assertEqual(Handed, Counted),
         ?assertEqual(All, Events(Counted), A)
     end || A <- ["calls", "genserver", "sched", "latency"],
            {Run, Pin} <- [{Exe, []}, {"taskset", ["-c", "0", Exe]}]],
    lttng_session:destroy(S).

%% 20 fast and 5 slow gen_server calls, traced by their messages only:
%% `genserver' pairs each call with its reply by the reference, per
%% request; the slow ones' latency holds the planted sleep and no more
%% than the caller measured, and the server's share holds the sleep.
t_genserver(Config) ->
    S = start_session(t_genserver, [message_send, message_receive]),
    {ok, Server} = gen_server:start(?MODULE, [], []),
    1 = erlang:trace(Server, true, [send, 'receive', {tracer, dyntrace, []}]),
    Slow = fun() ->
                   T0 = erlang:monotonic_time(nanosecond),
                   ok = gen_server:call(Server, {slow, ?SLOW_MS}),
                   erlang:monotonic_time(nanosecond) - T0
           end,
    {Measured, _Client} =
        traced([send, 'receive'],
               fun() ->
                       [I = gen_server:call(Server, {get, I}) || I <- lists:seq(1, 20)],
                       [Slow() || _ <- lists:seq(1, 5)]
               end),
    ok = gen_server:stop(Server),
    lttng_session:stop(S),
    Out = analyze_ok(Config, ["genserver", "--json", dir(S)]),
    Rows = by(<<"request">>, [R || R <- maps:get(<<"genserver">>, Out),
                                   maps:get(<<"server">>, R) =:= pid_bin(Server)]),
    ?assertEqual([<<"get">>, <<"slow">>], lists:sort(maps:keys(Rows))),
    #{<<"get">> := Get, <<"slow">> := SlowRow} = Rows,
    ?assertEqual({20, 0}, {maps:get(<<"count">>, Get), maps:get(<<"unmatched">>, Get)}),
    ?assertEqual({5, 0}, {maps:get(<<"count">>, SlowRow), maps:get(<<"unmatched">>, SlowRow)}),
    %% The reply's `receive' event is its arrival in the caller's queue:
    %% the caller's own clock also counts its wait to be scheduled again.
    ?assert(maps:get(<<"max_ns">>, SlowRow) =< lists:max(Measured)),
    ?assert(maps:get(<<"server_p50_ns">>, SlowRow) >= ?SLOW_MS * 1000000),
    ?assert(maps:get(<<"p50_ns">>, SlowRow) >= maps:get(<<"server_p50_ns">>, SlowRow)),
    lttng_session:destroy(S).

%% User probes fired a known number of times with known integers, by three
%% processes one after the other (the third with a dynamic trace tag):
%% `probes' counts each probe (event and number, first string, tag)
%% exactly and gives each integer argument's exact min, percentiles and
%% max; `--by-pid' splits a probe per process, `--pid' keeps one process's,
%% `--max-probes' keeps the first probes and counts the events of the rest;
%% `rates' and the report have them too.
t_probes(Config) ->
    S = start_session(t_probes, [user_trace_s1, user_trace_i4s4, user_trace_n]),
    Run = fun(Tag, Fun) ->
                  {Pid, Ref} = spawn_monitor(fun() ->
                                                     _ = dyntrace:put_tag(Tag),
                                                     Fun()
                                             end),
                  receive {'DOWN', Ref, process, Pid, normal} -> Pid end
          end,
    First = Run(undefined,
                fun() ->
                        [true = dyntrace:p(I, -I, "work") || I <- lists:seq(1, 100)],
                        [true = dyntrace:pn(7, I * 10, "checkout") || I <- lists:seq(1, 20)],
                        [true = dyntrace:user_trace_s1("hello") || _ <- lists:seq(1, 3)],
                        true = dyntrace:p("bare"),
                        [true = dyntrace:p(5, "shared") || _ <- lists:seq(1, 4)]
                end),
    _ = Run(undefined, fun() -> [true = dyntrace:p(6, "shared") || _ <- lists:seq(1, 6)] end),
    _ = Run(<<"req-1">>,
            fun() ->
                    [true = dyntrace:pn(7, I, "checkout") || I <- lists:seq(1, 20)],
                    [true = dyntrace:p(1000000, "big") || _ <- lists:seq(1, 5)]
            end),
    lttng_session:stop(S),
    Out = analyze_ok(Config, ["probes", "--json", dir(S)]),
    Key = fun(R) -> {maps:get(<<"probe">>, R), maps:get(<<"name">>, R), maps:get(<<"tag">>, R)} end,
    Counts = lists:sort([{Key(R), maps:get(<<"count">>, R)} || R <- maps:get(<<"probes">>, Out)]),
    ?assertEqual(lists:sort([{{<<"p">>, <<"work">>, <<>>}, 100},
                             {{<<"pn(7)">>, <<"checkout">>, <<>>}, 20},
                             {{<<"pn(7)">>, <<"checkout">>, <<"req-1">>}, 20},
                             {{<<"s1">>, <<"hello">>, <<>>}, 3},
                             {{<<"p">>, <<"bare">>, <<>>}, 1},
                             {{<<"p">>, <<"shared">>, <<>>}, 10},
                             {{<<"p">>, <<"big">>, <<"req-1">>}, 5}]),
                 Counts),
    %% Min, p50, p90, p99, max: the ceil(q * count)-th value, exact below
    %% 256; `big' is one value, exact too. Integers always 0 have no row.
    Ints = lists:sort([{Key(R), maps:get(<<"arg">>, R),
                        [maps:get(K, R) || K <- [<<"count">>, <<"min">>, <<"p50">>, <<"p90">>,
                                                 <<"p99">>, <<"max">>]]}
                       || R <- maps:get(<<"probe_ints">>, Out)]),
    ?assertEqual(lists:sort([{{<<"p">>, <<"work">>, <<>>}, <<"i1">>, [100, 1, 50, 90, 99, 100]},
                             {{<<"p">>, <<"work">>, <<>>}, <<"i2">>, [100, -100, -51, -11, -2, -1]},
                             {{<<"pn(7)">>, <<"checkout">>, <<>>}, <<"i1">>, [20, 10, 100, 180, 200, 200]},
                             {{<<"pn(7)">>, <<"checkout">>, <<"req-1">>}, <<"i1">>, [20, 1, 10, 18, 20, 20]},
                             {{<<"p">>, <<"shared">>, <<>>}, <<"i1">>, [10, 5, 6, 6, 6, 6]},
                             {{<<"p">>, <<"big">>, <<"req-1">>}, <<"i1">>,
                              [5, 1000000, 1000000, 1000000, 1000000, 1000000]}]),
                 Ints),
    ?assertEqual([#{<<"kept">> => 7, <<"over_cap">> => 0}], maps:get(<<"probes_summary">>, Out)),
    %% Per process: `shared' is 4 of the first process's and 6 of the second's.
    ByPid = analyze_ok(Config, ["probes", "--json", "--by-pid", dir(S)]),
    ?assertEqual([4, 6], lists:sort([maps:get(<<"count">>, R) || R <- maps:get(<<"probes">>, ByPid),
                                      maps:get(<<"name">>, R) =:= <<"shared">>])),
    Mine = analyze_ok(Config, ["probes", "--json", "--pid", pid_text(First), dir(S)]),
    ?assertEqual(100 + 20 + 3 + 1 + 4, lists:sum([maps:get(<<"count">>, R) || R <- maps:get(<<"probes">>, Mine)])),
    %% The first two probes seen are kept; the other 39 events counted.
    Capped = analyze_ok(Config, ["probes", "--json", "--max-probes", "2", dir(S)]),
    ?assertEqual([{{<<"p">>, <<"work">>, <<>>}, 100}, {{<<"pn(7)">>, <<"checkout">>, <<>>}, 20}],
                 lists:sort([{Key(R), maps:get(<<"count">>, R)} || R <- maps:get(<<"probes">>, Capped)])),
    ?assertEqual([#{<<"kept">> => 2, <<"over_cap">> => 39}], maps:get(<<"probes_summary">>, Capped)),
    {0, Text, <<>>} = analyze(Config, ["probes", "--max-probes", "2", dir(S)]),
    ?assertNotEqual(nomatch, string:find(Text, "39 events of probes beyond the first 2")),
    %% `rates' counts them per event name; the report has their table.
    Rates = analyze_ok(Config, ["rates", "--json", dir(S)]),
    PerEvent = fun(Name) -> lists:sum([maps:get(<<"count">>, R) || R <- maps:get(<<"rates">>, Rates),
                                                                 maps:get(<<"event">>, R) =:= Name])
               end,
    ?assertEqual({116, 40, 3}, {PerEvent(<<"user_trace_i4s4">>), PerEvent(<<"user_trace_n">>),
                                PerEvent(<<"user_trace_s1">>)}),
    Report = filename:join(lttng_session:base_dir(), "probes_report_" ++ os:getpid()),
    {0, _, _} = analyze(Config, ["report", Report, dir(S)]),
    {ok, Page} = file:read_file(filename:join(Report, "index.html")),
    ?assertNotEqual(nomatch, string:find(Page, "\">User probes: events per probe")),
    ?assertNotEqual(nomatch, string:find(Page, "<tr><td>pn(7)</td><td>checkout</td><td>req-1</td>"
                                               "<td class=\"num\" data-v=\"20\">20</td>")),
    lttng_session:cmd_ok("rm -rf " ++ Report),
    lttng_session:destroy(S).

%% Live: the analyser reads a `lttng create --live' session through a relay
%% daemon while the node records, prints its results every second, and
%% exits when the session is destroyed, having seen every event.
t_live(Config) ->
    case os:getenv("DYNTRACE_ISOLATED") of
        "inside" -> live(Config);
        _ -> {skip, "starts its own lttng-relayd: run it in scripts/isolated.sh"}
    end.

live(Config) ->
    _ = lttng_session:cmd("lttng-relayd -d"),
    Name = "t_live_" ++ os:getpid(),
    lttng_session:cmd_ok("lttng create " ++ Name ++ " --live=200000 --set-url=net://127.0.0.1"),
    lttng_session:cmd_ok("lttng enable-event -u -s " ++ Name ++ " org_erlang_dyntrace:message_send"),
    lttng_session:cmd_ok("lttng start " ++ Name),
    ok = lttng_session:wait_enabled([message_send]),
    Host = string:trim(os:cmd("hostname")),
    Url = "net://127.0.0.1/host/" ++ Host ++ "/" ++ Name,
    Port = open_port({spawn_executable, ?config(analyze, Config)},
                     [{args, ["rates", "--json", "--every", "1s", Url]}, exit_status, binary, hide]),
    %% A live viewer reads from where the session is when it attaches:
    %% its first output says it has.
    First = receive {Port, {data, D}} -> D after 60000 -> error(no_live_output) end,
    Sink = spawn(fun() -> receive _ -> ok end end),
    {_, _} = traced([send], fun() -> [Sink ! I || I <- lists:seq(1, 1000)], ok end),
    timer:sleep(3000),
    lttng_session:cmd_ok("lttng stop " ++ Name),
    lttng_session:cmd_ok("lttng destroy " ++ Name),
    {Status, Rest} = analyze_cmd:collect(Port),
    Out = <<First/binary, Rest/binary>>,
    ct:log("~s", [Out]),
    ?assertEqual(0, Status),
    Lines = binary:split(Out, <<"\n">>, [global, trim_all]),
    ?assert(length(Lines) >= 2),
    {Last, <<>>} = json_text:value(lists:last(Lines)),
    %% 1000 sends to the sink and the result sent back to this process.
    Sends = [maps:get(<<"count">>, R) || R <- maps:get(<<"rates">>, Last),
                                         maps:get(<<"event">>, R) =:= <<"message_send">>],
    ?assertEqual(1001, lists:sum(Sends)).

%% A flood into small buffers makes LTTng discard events: every output
%% says how many, as the session daemon counted them, and the text output
%% says the results are incomplete.
t_discarded(Config) ->
    S = lttng_session:create(t_discarded, [message_send], #{subbuf_size => 4096, num_subbuf => 2}),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled([message_send]),
    Sink = spawn(fun() -> receive _ -> ok end end),
    _ = traced([send], fun() -> [Sink ! {flood, I} || I <- lists:seq(1, 200000)], ok end),
    lttng_session:stop(S),
    Lost = lttng_session:discarded(S),
    ?assert(Lost > 0),
    Json = analyze_ok(Config, ["rates", "--json", dir(S)]),
    ?assertEqual(Lost, maps:get(<<"discarded">>, Json)),
    {0, Text, <<>>} = analyze(Config, ["latency", dir(S)]),
    [First | _] = binary:split(Text, <<"\n">>),
    Expected = integer_to_list(Lost) ++ " discarded by LTTng: results are incomplete",
    ?assertNotEqual(nomatch, string:find(First, Expected), First),
    lttng_session:destroy(S).

%% Bad input: one line on stderr naming the input, exit status 1.
t_bad_input(Config) ->
    Empty = filename:join(lttng_session:base_dir(), "empty_" ++ os:getpid()),
    ok = filelib:ensure_dir(filename:join(Empty, "x")),
    bad(Config, ["calls", Empty], [Empty, "no CTF trace"]),
    bad(Config, ["calls", Empty ++ "/missing"], [Empty ++ "/missing"]),
    %% A trace of ours without one org_erlang_dyntrace event in it.
    Quiet = start_session(t_quiet, [process_spawn]),
    lttng_session:stop(Quiet),
    bad(Config, ["gc", dir(Quiet)], [dir(Quiet), "no org_erlang_dyntrace events"]),
    lttng_session:destroy(Quiet),
    %% A copy of a trace to damage (a stream cut short is read up to its
    %% last whole packet: dyntrace_damage_SUITE).
    S = start_session(t_cut, [message_send, process_scheduled]),
    _ = ping_server(),
    lttng_session:stop(S),
    Cut = filename:join(lttng_session:base_dir(), "cut_" ++ os:getpid()),
    lttng_session:cmd_ok("rm -rf " ++ Cut ++ " && cp -r " ++ dir(S) ++ " " ++ Cut),
    %% Metadata cut short (libbabeltrace2 itself would loop on it).
    [Metadata] = filelib:wildcard(filename:join(Cut, "**/metadata")),
    lttng_session:cmd_ok("truncate -s 300 " ++ Metadata),
    bad(Config, ["latency", Cut], [Metadata, "metadata"]),
    %% No relay daemon listens on port 1.
    Url = "net://127.0.0.1:1/host/nohost/nosession",
    bad(Config, ["calls", Url], [Url, "Connection refused"]),
    %% An option's value out of range, or an option that does not exist.
    bad(Config, ["probes", "--max-probes", "0", Empty], ["--max-probes", "`0`"]),
    bad(Config, ["probes", "--by-tag", Empty], ["--by-tag"]),
    lttng_session:cmd_ok("rm -rf " ++ Cut ++ " " ++ Empty),
    lttng_session:destroy(S).

bad(Config, Args, Mentions) ->
    analyze_cmd:bad(?config(analyze, Config), Args, Mentions).

%%%===================================================================
%%% Helpers
%%%===================================================================

start_session(Name, Events) ->
    lttng_session:start_tracked(Name, Events).

dir(#{dir := Dir}) ->
    Dir.

pid_text(Pid) ->
    pid_to_list(Pid).

pid_bin(Pid) ->
    list_to_binary(pid_to_list(Pid)).

by(Key, Rows) ->
    maps:from_list([{maps:get(Key, R), R} || R <- Rows]).

analyze(Config, Args) ->
    analyze_cmd:run(?config(analyze, Config), Args).

analyze_ok(Config, Args) ->
    analyze_cmd:json(?config(analyze, Config), Args).
