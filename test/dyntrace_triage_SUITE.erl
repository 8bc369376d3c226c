%%% `dyntrace:record(triage, Opts)' on a node with the faults triage is
%%% for: a queue that grows, a process that hogs a scheduler, one that
%%% makes garbage. Each is singled out for a focus window; message,
%%% scheduling, GC and stack events exist only for the processes singled
%%% out and only inside their windows; the memory sampler shows the queue;
%%% the processes are named; nothing is left set afterwards.
-module(dyntrace_triage_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1,
         init_per_testcase/2, end_per_testcase/2]).
-export([t_triage/1,
         t_triage_options/1,
         t_nodes/1,
         t_findings/1]).
%% Run in peer nodes.
-export([start_fed_store/1]).

-import(dyntrace_test_trace, [flags/1]).

%% The events that only a focus window writes.
-define(WINDOWED, [message_send, message_receive, process_scheduled, gc_minor_start,
                   gc_minor_end, gc_major_start, gc_major_end, stack_sample]).

suite() ->
    [{timetrap, {minutes, 3}}].

all() ->
    [t_triage,
     t_triage_options,
     t_nodes,
     t_findings].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    Config.

end_per_suite(_Config) ->
    ok.

init_per_testcase(_Case, Config) ->
    Config.

end_per_testcase(_Case, _Config) ->
    ok = dyntrace:clear().

%%%===================================================================
%%% Cases
%%%===================================================================

%% Three faults at once; `record(triage, ...)' for 9 s (four looks).
t_triage(_Config) ->
    Store = start_store(triage_store),
    Feeder = start_feeder(Store),
    Hog = start_hog(),
    Garbage = start_garbage(),
    Workload = [Store, Feeder, Hog, Garbage],
    try
        {ok, Dir} = dyntrace:record(triage, #{duration => 9000}),
        %% The directory's name sorts by start time.
        ?assertMatch({match, _}, re:run(filename:basename(Dir),
                                        "^dyntrace-record-[0-9]{8}T[0-9]{6}Z-[0-9]+-[0-9]+$")),
        Events = lttng_session:read(#{dir => Dir}),
        Windows = windows(Events),
        ct:log("events ~p~nwindows ~p~nworkload ~p",
               [maps:to_list(lists:foldl(fun(#{name := N}, Acc) ->
                                                 maps:update_with(N, fun(C) -> C + 1 end, 1, Acc)
                                         end, #{}, Events)),
                maps:to_list(maps:map(fun(_, Ws) -> length(Ws) end, Windows)),
                [{N, text(whereis(N))} || N <- [triage_store, triage_hog, triage_garbage]]]),
        %% Each fault was singled out.
        [?assert(is_map_key(text(P), Windows)) || P <- [Store, Hog, Garbage]],
        %% Windowed events only for those singled out, inside their windows.
        Outside = [E || #{name := N} = E <- Events, lists:member(N, ?WINDOWED),
                        not inside(E, Windows)],
        ?assertEqual([], Outside),
        %% Inside the store's windows, its exact queue and reductions at
        %% both ends: the queue grows, the reductions go on.
        [_ | _] = StoreCounts = maps:get(text(Store), counted(Events)),
        [?assert(Q1 > Q0 andalso R1 > R0, StoreCounts) || {{Q0, R0}, {Q1, R1}} <- StoreCounts],
        %% What each window shows of its fault.
        ?assert(count_of(message_receive, "to", Store, Events) > 0),
        ?assert(count_of(process_scheduled, "pid", Hog, Events) > 0),
        ?assert(count_of(gc_minor_start, "pid", Garbage, Events)
                + count_of(gc_major_start, "pid", Garbage, Events) > 0),
        ?assert(count_of(stack_sample, "pid", Hog, Events) > 0),
        %% The memory sampler shows the store's queue growing.
        Queue = [lttng_session:field("message_queue_len", E)
                 || E <- lttng_session:select(process_memory, Events),
                    lttng_session:field("pid", E) =:= text(Store)],
        ?assertMatch([_, _ | _], Queue),
        ?assert(lists:last(Queue) > hd(Queue)),
        %% Names: the registered processes, and the node.
        Names = maps:from_list([{lttng_session:field("pid", E), lttng_session:field("name", E)}
                                || E <- lttng_session:select(process_name, Events)]),
        ?assertEqual(<<"triage_store">>, maps:get(text(Store), Names)),
        ?assertEqual(<<"triage_hog">>, maps:get(text(Hog), Names)),
        ?assertMatch([_ | _], lttng_session:select(node_name, Events)),
        %% Nothing left set.
        ?assertMatch(#{traces := [], recordings := []}, dyntrace:status()),
        [?assertEqual({P, []}, {P, flags(P)}) || P <- Workload],
        ?assertEqual(nomatch, string:find(lttng_session:cmd_ok("lttng list"), "dyntrace-record-"))
    after
        [exit(P, kill) || P <- Workload]
    end.

%% Bad focus options are refused before anything is made.
t_triage_options(_Config) ->
    [?assertEqual(What, badarg(fun() -> dyntrace:record(triage, Opts) end))
     || {Opts, What} <- [{#{focus => #{window => 3000}}, {window, 3000}},
                         {#{focus => #{count => 0}}, {count, 0}},
                         {#{focus => #{period => x}}, {period, x}},
                         {#{focus => #{nonsense => 1}}, {nonsense, 1}},
                         {#{focus => #{duration => 10}}, {duration, 10}},
                         {#{focus => nonsense}, {options, nonsense}},
                         {nonsense, {options, nonsense}}]],
    ?assertMatch(#{traces := [], recordings := []}, dyntrace:status()).

%% `nodes => [A, B, C, Gone]': the peers recorded at once into one
%% directory: A and C (this host) in one LTTng session that this node
%% makes, B as if on another host (recorded there, its trace gathered
%% over distribution); the node that cannot be reached named in the
%% answer; babeltrace2 and dyntrace-analyze read the directory as one
%% timeline.
t_nodes(_Config) ->
    ok = dyntrace_peers:alive(triage_suite),
    {PA, A} = dyntrace_peers:start(triage_a, ?MODULE),
    {PB, B} = dyntrace_peers:start(triage_b, ?MODULE),
    {PC, C} = dyntrace_peers:start(triage_c, ?MODULE),
    try
        ok = erpc:call(B, application, set_env, [dyntrace, host, "elsewhere"]),
        Stores = [erpc:call(N, ?MODULE, start_fed_store, [S])
                  || {N, S} <- [{A, store_a}, {B, store_b}, {C, store_c}]],
        Gone = 'nobody@nohost',
        {ok, Dir, Answer} = dyntrace:record(triage, #{nodes => [A, B, C, Gone],
                                                      duration => 5000}),
        ?assertEqual(#{recorded => lists:sort([A, B, C]), unreachable => [Gone], failed => []},
                     Answer),
        ?assertMatch({match, _}, re:run(filename:basename(Dir),
                                        "^dyntrace-record-[0-9]{8}T[0-9]{6}Z-[0-9]+-[0-9]+$")),
        %% A and C (this host) in one session, in a directory named after
        %% the host; B (another host) recorded there and gathered here.
        Host = dyntrace_nodes:host(),
        ?assertEqual(lists:sort([Host, atom_to_list(B)]),
                     lists:sort(element(2, file:list_dir(Dir)))),
        Shared = filename:join(Dir, Host),
        ?assertMatch([_], filelib:wildcard(filename:join(Shared, "**/metadata"))),
        ?assertEqual(lists:sort([atom_to_binary(A), atom_to_binary(C)]),
                     writers(lttng_session:read(#{dir => Shared}))),
        %% One timeline: every node's events, in time order.
        Events = lttng_session:read(#{dir => Dir}),
        Ts = [T || #{ts := T} <- Events],
        ?assertEqual(lists:sort(Ts), Ts),
        ?assertEqual(lists:sort([atom_to_binary(N) || N <- [A, B, C]]), writers(Events)),
        Names = [lttng_session:field("name", E) || E <- lttng_session:select(process_name, Events)],
        [?assert(lists:member(Store, Names)) || Store <- [<<"store_a">>, <<"store_b">>, <<"store_c">>]],
        %% The analyser reads every node's trace in the directory.
        {0, Memory, _} = analyze_cmd:run(analyze_cmd:exe(), ["memory", Dir]),
        ct:log("~s", [Memory]),
        [?assertNotEqual(nomatch, string:find(Memory, Store), Store)
         || Store <- ["store_a", "store_b", "store_c"]],
        %% Nothing left on any node, and no session left here.
        [?assertMatch(#{traces := [], recordings := []}, erpc:call(N, dyntrace, status, []))
         || N <- [A, B, C]],
        {_, Sessions} = lttng_session:cmd("lttng list"),
        ?assertEqual(nomatch, string:find(Sessions, "dyntrace-nodes-"), Sessions),
        _ = Stores
    after
        peer:stop(PA),
        peer:stop(PB),
        peer:stop(PC)
    end.

%% The nodes whose node_name events (channel 0: the node's own) a trace
%% holds.
writers(Events) ->
    lists:usort([string:trim(lttng_session:field("node", E), both, "'")
                 || E <- lttng_session:select(node_name, Events),
                    lttng_session:field("channel", E) =:= 0]).

%% `findings => true': once the trace is complete, what `dyntrace-analyze
%% findings DIR' prints, or one line saying this analyser has no such
%% command.
t_findings(_Config) ->
    ct:capture_start(),
    {ok, Dir} = try dyntrace:record([{trace, self(), [message_send]}],
                                    #{duration => 500, findings => true})
                after ct:capture_stop()
                end,
    Printed = lists:append(ct:capture_get([])),
    Exe = analyze_cmd:exe(),
    Expected = case analyze_cmd:run(Exe, ["findings", Dir]) of
                   {0, Out, _} ->
                       binary_to_list(Out);
                   {_, _, Err} ->
                       ?assertNotEqual(nomatch, string:find(Err, "unrecognized subcommand")),
                       "dyntrace: findings: " ++ Exe ++ " has no findings command "
                           "(a newer build has it)\n"
               end,
    ?assertEqual(Expected, Printed),
    ?assertEqual({findings, x}, badarg(fun() -> dyntrace:record(triage, #{findings => x}) end)),
    ?assertEqual({findings, true},
                 badarg(fun() -> dyntrace:record(triage, #{findings => true, wait => false}) end)).

%%%===================================================================
%%% Workloads
%%%===================================================================

%% A server that only takes `{get, From}' out of its queue: the notes
%% a feeder sends pile up.
start_store(Name) ->
    P = spawn(fun Loop() -> receive {get, From} -> From ! ok, Loop() end end),
    true = register(Name, P),
    P.

%% A store and its feeder (in a peer node, which the case stops).
start_fed_store(Name) ->
    P = start_store(Name),
    _ = start_feeder(P),
    P.

start_feeder(Store) ->
    spawn(fun Loop() ->
                  [Store ! {note, I} || I <- lists:seq(1, 50)],
                  timer:sleep(10),
                  Loop()
          end).

%% Busy half the time in slices of 50 ms.
start_hog() ->
    P = spawn(fun Loop() ->
                      Until = erlang:monotonic_time(millisecond) + 50,
                      spin(Until),
                      timer:sleep(50),
                      Loop()
              end),
    true = register(triage_hog, P),
    P.

spin(Until) ->
    case erlang:monotonic_time(millisecond) >= Until of
        true -> ok;
        false -> _ = erlang:phash2(make_ref()), spin(Until)
    end.

%% Garbage: a list of 20000 tuples made and dropped, 20 times a second.
start_garbage() ->
    P = spawn(fun Loop() ->
                      _ = length([{I, I} || I <- lists:seq(1, 20000)]),
                      timer:sleep(50),
                      Loop()
              end),
    true = register(triage_garbage, P),
    P.

%%%===================================================================
%%% Helpers
%%%===================================================================

%% Per process, its focus windows: `{Start, End}' (nanoseconds; a window
%% the recording's end cut short ends at `infinity').
windows(Events) ->
    Marks = [{lttng_session:field("pid", E), Ts, lttng_session:field("message", E)}
             || #{ts := Ts} = E <- lttng_session:select(user_trace_s1, Events)],
    lists:foldl(fun({Pid, Ts, <<"dyntrace_focus start", _/binary>>}, Acc) ->
                        maps:update_with(Pid, fun(Ws) -> [{Ts, infinity} | Ws] end,
                                         [{Ts, infinity}], Acc);
                   ({Pid, Ts, <<"dyntrace_focus end">>}, Acc) ->
                        [{Start, infinity} | Ws] = maps:get(Pid, Acc),
                        Acc#{Pid := [{Start, Ts} | Ws]};
                   ({_Pid, _Ts, <<"dyntrace_focus count_", _/binary>>}, Acc) ->
                        Acc
                end, #{}, Marks).

%% Per process, its counted windows inside its focus windows: the queue
%% and reductions at their two marks, `{{Q0, R0}, {Q1, R1}}'.
counted(Events) ->
    Marks = [{lttng_session:field("pid", E), lttng_session:field("message", E)}
             || E <- lttng_session:select(user_trace_s1, Events)],
    Counts = fun(Text) ->
                     {match, [Q, R]} = re:run(Text, "queue=([0-9]+) reductions=([0-9]+)$",
                                              [{capture, all_but_first, binary}]),
                     {binary_to_integer(Q), binary_to_integer(R)}
             end,
    {_, Done} = lists:foldl(
                  fun({Pid, <<"dyntrace_focus count_from ", Text/binary>>}, {Open, Acc}) ->
                          {Open#{Pid => Counts(Text)}, Acc};
                     ({Pid, <<"dyntrace_focus count_to ", Text/binary>>}, {Open, Acc}) ->
                          {From, Open1} = maps:take(Pid, Open),
                          {Open1, maps:update_with(Pid, fun(L) -> [{From, Counts(Text)} | L] end,
                                                   [{From, Counts(Text)}], Acc)};
                     (_, State) ->
                          State
                  end, {#{}, #{}}, Marks),
    Done.

inside(#{name := Name, ts := Ts} = E, Windows) ->
    Key = case Name of
              message_send -> "from";
              message_receive -> "to";
              _ -> "pid"
          end,
    lists:any(fun({Start, End}) -> Ts >= Start andalso (End =:= infinity orelse Ts =< End) end,
              maps:get(lttng_session:field(Key, E), Windows, [])).

count_of(Name, Key, Pid, Events) ->
    length([E || E <- lttng_session:select(Name, Events),
                 lttng_session:field(Key, E) =:= text(Pid)]).

text(Pid) -> list_to_binary(pid_to_list(Pid)).

badarg(F) ->
    try F() of
        Result -> {returned, Result}
    catch
        error:{badarg, What} -> What
    end.
