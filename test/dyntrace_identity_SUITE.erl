%%% Who is who in `dyntrace-analyze''s answers, on real traces: a
%%% registered server shown by its name beside its pid (text and JSON) and
%%% selected by it; replies to call aliases paired and counted per process;
%%% two nodes recorded into one session kept apart (LTTng's vpid context)
%%% or warned about (without it); a remote `gen_server:call({Name, Node})'
%%% paired by `delivery'; bad and empty selections; `--window' rows;
%%% `sched --by-function' and `genserver --slowest' on planted workloads.
-module(dyntrace_identity_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1, end_per_testcase/2]).
-export([t_registered_server_by_name/1,
         t_name_before_tracing/1,
         t_snapshot_names/1,
         t_genserver_slowest/1,
         t_selections/1,
         t_window/1,
         t_sched_by_function/1,
         t_two_nodes_one_session/1,
         t_one_label_everywhere/1,
         t_remote_call_delivery/1,
         t_one_host_delivery/1,
         t_short_lived_node_names/1]).
%% The traced workloads (some run in peer nodes).
-export([server_start/1, server_enter/1, init/1, handle_call/3, handle_cast/2,
         spin/1, fast_path/1, gc_worker/1, labelled_worker/1, sink_start/0, traced_send/2, remote_server/1, remote_calls/3,
         short_lived/0]).

-define(CALLS, 20).
-define(SLOW_MS, 20).
-define(SLOW_CALLS, 3).

suite() ->
    [{timetrap, {minutes, 5}}].

all() ->
    [t_registered_server_by_name,
     t_name_before_tracing,
     t_snapshot_names,
     t_genserver_slowest,
     t_selections,
     t_window,
     t_sched_by_function,
     t_two_nodes_one_session,
     t_one_label_everywhere,
     t_remote_call_delivery,
     t_one_host_delivery,
     t_short_lived_node_names].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    [{analyze, analyze_cmd:exe()} | Config].

end_per_suite(_Config) ->
    ok.

end_per_testcase(_Case, _Config) ->
    dyntrace_test_trace:untrace(?MODULE).

%%%===================================================================
%%% Workload
%%%===================================================================

%% @doc A gen_server registered as `Name', traced (procs, send, receive)
%% before it registers, so that the trace has its `process_register'.
server_start(Name) ->
    Parent = self(),
    Pid = proc_lib:spawn(?MODULE, server_enter, [{Parent, Name}]),
    1 = erlang:trace(Pid, true, [procs, send, 'receive', {tracer, dyntrace, []}]),
    Pid ! go,
    receive {registered, Pid} -> Pid after 10000 -> error(server_start) end.

%% @doc The server's process: registers, then is a gen_server.
server_enter({Parent, Name}) ->
    receive go -> ok end,
    true = register(Name, self()),
    Parent ! {registered, self()},
    gen_server:enter_loop(?MODULE, [], nostate, {local, Name}).

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

%% @doc Busy for `Ms' milliseconds (preempted while in this function).
spin(Ms) ->
    Stop = erlang:start_timer(Ms, self(), spun),
    spin_until(Stop, 0).

%% A slice is charged to the function the process is scheduled out in.
%% The loop calls nothing but itself (no clock BIF it could be scheduled
%% out in), and it ends on a timer's message, not on a clock it reads.
%% Once it has the message it waits 1 ms here: on a loaded host the OS can
%% keep the scheduler thread off the CPU for tens of ms inside a slice, and
%% the slice in which the time runs out would otherwise run on into
%% whatever the caller does next and be charged there, all of it.
spin_until(Stop, N) ->
    receive
        {timeout, Stop, spun} -> receive after 1 -> N end
    after 0 -> spin_until(Stop, N + 1)
    end.

%% @doc A traced function of the window workload.
fast_path(N) ->
    N + 1.

%% @doc In a node: a process registered as `worker' (traced before it
%% registers) that collects garbage `Times' times and writes two
%% `process_memory' rows of itself; waits for it, has the node write its
%% names, and answers the worker's pid as this node writes it.
labelled_worker(Times) ->
    pid_to_list(worker(worker, Times, true)).

%% @doc In a node: a process registered as `Name' (traced before it
%% registers) that collects garbage `Times' times; waits for it, then has
%% the node write its names.
gc_worker({Name, Times}) ->
    _ = worker(Name, Times, false),
    ok.

%% The workers of gc_worker/1 and labelled_worker/1 (`Memory': the
%% process_memory rows too); the worker's pid.
worker(Name, Times, Memory) ->
    Parent = self(),
    Pid = spawn(fun() ->
                        receive go -> ok end,
                        true = register(Name, self()),
                        [true = erlang:garbage_collect() || _ <- lists:seq(1, Times)],
                        _ = [ok = dyntrace:emit_process_memory(self(), Name, M, M, 0, 0)
                             || Memory, M <- [1000, 5000]],
                        Parent ! {done, self()}
                end),
    1 = erlang:trace(Pid, true, [procs, garbage_collection, {tracer, dyntrace, []}]),
    Pid ! go,
    receive {done, Pid} -> ok after 10000 -> error({worker, Name}) end,
    ok = dyntrace:announce_nodes(),
    timer:sleep(100),
    Pid.

%% @doc In a node that has not loaded dyntrace: a process registered as
%% `early_worker' before dyntrace loads, then dyntrace loaded, and once the
%% node records, the worker traced through three major collections; the
%% node ends 600 ms after the load (before the announcer's first look of
%% the once-a-second kind). Nothing asks the node to write its names.
short_lived() ->
    Loaded = erlang:monotonic_time(millisecond) + 600,
    Worker = spawn(fun() ->
                           receive {go, From} -> ok end,
                           [true = erlang:garbage_collect() || _ <- [1, 2, 3]],
                           From ! done,
                           %% Alive, and named, until the node ends.
                           receive stop -> ok end
                   end),
    true = register(early_worker, Worker),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    ok = lttng_session:wait_enabled([gc_major_end]),
    1 = erlang:trace(Worker, true, [garbage_collection, {tracer, dyntrace, []}]),
    Worker ! {go, self()},
    receive done -> ok after 10000 -> error(short_lived) end,
    timer:sleep(max(0, Loaded - erlang:monotonic_time(millisecond))).

%% @doc In a node of the cluster: the registered server `Name'.
remote_server(Name) ->
    Pid = server_start(Name),
    unlink(Pid),
    Pid.

%% @doc In a node: a process that takes every message, its receives
%% traced.
sink_start() ->
    Pid = spawn(fun Loop() -> receive _ -> Loop() end end),
    1 = erlang:trace(Pid, true, ['receive', {tracer, dyntrace, []}]),
    Pid.

%% @doc In a node: `Msg' sent to `To' by a process whose sends are traced.
traced_send(To, Msg) ->
    {Msg, _} = traced([send], fun() -> To ! Msg end),
    ok.

%% @doc In a node of the cluster: a traced process calling `{Name, Node}'
%% `N' times; the node then writes its names.
remote_calls(Name, Node, N) ->
    {_, Pid} = traced([send, 'receive'],
                      fun() -> [I = gen_server:call({Name, Node}, {get, I}) || I <- lists:seq(1, N)] end),
    ok = dyntrace:announce_nodes(),
    Pid.

traced(Flags, Fun) ->
    lttng_session:traced(Flags, Fun).

%%%===================================================================
%%% Cases
%%%===================================================================

%% A registered gen_server called 20 times by a traced caller, every reply
%% sent to a fresh alias: `genserver' shows the server by name beside its
%% pid (text and JSON), `--name' and `--pid' keep both sides of every call
%% (caller's latency and server's share, none unmatched), and `latency'
%% has one row per process, none per reference.
t_registered_server_by_name(Config) ->
    S = start_session(t_names, [process_register, message_send, message_receive,
                                process_scheduled]),
    Server = server_start(shop_audit),
    {_, Caller} = traced([send, 'receive', running],
                         fun() -> [I = gen_server:call(shop_audit, {get, I})
                                   || I <- lists:seq(1, ?CALLS)] end),
    ok = gen_server:stop(Server),
    lttng_session:stop(S),
    Rows = fun(Out) -> [R || R <- maps:get(<<"genserver">>, Out),
                             maps:get(<<"server">>, R) =:= pid_bin(Server)] end,
    All = analyze_ok(Config, ["genserver", "--json", dir(S)]),
    [Get] = Rows(All),
    ?assertMatch(#{<<"name">> := <<"shop_audit">>, <<"request">> := <<"get">>,
                   <<"count">> := ?CALLS, <<"unmatched">> := 0}, Get),
    {0, Text, <<>>} = analyze(Config, ["genserver", dir(S)]),
    ?assertNotEqual(nomatch, string:find(Text, "shop_audit " ++ pid_to_list(Server)), Text),
    [begin
         Out = analyze_ok(Config, ["genserver", "--json", Sel, Value, dir(S)]),
         [Row] = Rows(Out),
         ?assertMatch(#{<<"count">> := ?CALLS, <<"unmatched">> := 0}, Row),
         ?assert(maps:get(<<"server_max_ns">>, Row) > 0)
     end || {Sel, Value} <- [{"--name", "shop_audit"}, {"--pid", pid_to_list(Server)}]],
    Latency = analyze_ok(Config, ["latency", "--json", dir(S)]),
    To = [maps:get(<<"to">>, R) || R <- maps:get(<<"latency">>, Latency)],
    ?assertEqual([], [T || T <- To, binary:match(T, <<"#Ref">>) =/= nomatch]),
    ByTo = by(<<"to">>, maps:get(<<"latency">>, Latency)),
    ?assertMatch(#{<<"count">> := ?CALLS}, maps:get(pid_bin(Caller), ByTo)),
    ?assertMatch(#{<<"name">> := <<"shop_audit">>}, maps:get(pid_bin(Server), ByTo)),
    ?assertEqual(0, maps:get(<<"aliases_evicted">>, Latency)),
    lttng_session:destroy(S).

%% A gen_server registered before tracing began, called 20,000 times by a
%% traced caller; the trace names it only halfway, when it registers again
%% (10,000 calls in). `--name' selects the process, not the time after
%% the event naming it: `genserver --name' pairs all 20,000 calls, as
%% `--pid' does, with every event `--pid' keeps, and the JSON says the
%% name's earliest evidence is later than the process's first event.
t_name_before_tracing(Config) ->
    Half = 10000,
    {ok, Server} = gen_server:start({local, shop_early}, ?MODULE, [], []),
    S = lttng_session:create(t_early, [process_register, message_send, message_receive,
                                       process_scheduled],
                             #{subbuf_size => 8 bsl 20, num_subbuf => 4}),
    ok = lttng_session:track_self(S),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled([process_register, message_send]),
    1 = erlang:trace(Server, true, [procs, send, 'receive', running, {tracer, dyntrace, []}]),
    Calls = fun() -> [I = gen_server:call(shop_early, {get, I}) || I <- lists:seq(1, Half)] end,
    {_, _Caller} = traced([send, 'receive', running],
                          fun() ->
                                  Calls(),
                                  true = unregister(shop_early),
                                  true = register(shop_early, Server),
                                  Calls()
                          end),
    ok = gen_server:stop(Server),
    lttng_session:stop(S),
    Row = fun(Out) ->
                  ?assertEqual(0, maps:get(<<"discarded">>, Out)),
                  [R] = [R || R <- maps:get(<<"genserver">>, Out),
                              maps:get(<<"server">>, R) =:= pid_bin(Server)],
                  R
          end,
    ByPid = analyze_ok(Config, ["genserver", "--json", "--pid", pid_to_list(Server), dir(S)]),
    ByName = analyze_ok(Config, ["genserver", "--json", "--name", "shop_early", dir(S)]),
    All = 2 * Half,
    [?assertMatch(#{<<"count">> := All, <<"unmatched">> := 0}, Row(Out)) || Out <- [ByPid, ByName]],
    ?assert(maps:get(<<"events">>, ByName) >= maps:get(<<"events">>, ByPid)),
    [Later] = maps:get(<<"named_later">>, ByName),
    ?assertMatch(#{<<"name">> := <<"shop_early">>}, Later),
    ?assertEqual(pid_bin(Server), maps:get(<<"pid">>, Later)),
    ?assert(maps:get(<<"named_ns">>, Later) > maps:get(<<"first_ns">>, Later)),
    %% The selection starts with the first call (sent to the name).
    ?assert(maps:get(<<"first_ns">>, ByName) =< maps:get(<<"first_ns">>, Later)),
    ?assert(maps:get(<<"named_ns">>, Later) - maps:get(<<"first_ns">>, ByName)
            > (maps:get(<<"last_ns">>, ByName) - maps:get(<<"first_ns">>, ByName)) div 4),
    ?assertEqual([], maps:get(<<"named_later">>, ByPid)),
    {0, Text, <<>>} = analyze(Config, ["genserver", "--name", "shop_early", dir(S)]),
    ?assertNotEqual(nomatch, string:find(Text, "shop_early " ++ pid_to_list(Server)
                                         ++ " is named by the trace only at +"), Text),
    lttng_session:destroy(S).

%% The process_name snapshot names processes the trace never saw register:
%% an unnamed worker by its initial call (M:F/A), another by its registered
%% name. `gc' shows each beside its pid, and `--name' selects by either.
t_snapshot_names(Config) ->
    S = start_session(t_snapshot, [process_name, gc_major_start, gc_major_end]),
    Work = fun() -> [true = erlang:garbage_collect() || _ <- lists:seq(1, 3)], ok end,
    {_, Unnamed} = traced([garbage_collection],
                          fun() ->
                                  ok = dyntrace:emit_process_name(self(), {?MODULE, fast_path, 1}),
                                  Work()
                          end),
    {_, Named} = traced([garbage_collection],
                        fun() ->
                                true = register(snap_worker, self()),
                                ok = dyntrace:emit_process_name(self(), snap_worker),
                                Work()
                        end),
    lttng_session:stop(S),
    Out = analyze_ok(Config, ["gc", "--json", dir(S)]),
    Names = lists:sort([{maps:get(<<"pid">>, R), maps:get(<<"name">>, R)} || R <- maps:get(<<"gc">>, Out)]),
    ?assertEqual(lists:sort([{pid_bin(Unnamed), <<"dyntrace_identity_SUITE:fast_path/1">>},
                             {pid_bin(Named), <<"snap_worker">>}]), Names),
    [begin
         Sel = analyze_ok(Config, ["gc", "--json", "--name", Name, dir(S)]),
         ?assertMatch([#{<<"pid">> := P, <<"count">> := 3}], maps:get(<<"gc">>, Sel))
     end || {P, Name} <- [{pid_bin(Unnamed), "dyntrace_identity_SUITE:fast_path/1"},
                          {pid_bin(Named), "snap_worker"}]],
    {0, Text, <<>>} = analyze(Config, ["gc", dir(S)]),
    ?assertNotEqual(nomatch, string:find(Text, "snap_worker " ++ pid_to_list(Named)), Text),
    lttng_session:destroy(S).

%% Of 20 fast calls and 3 slow ones (20 ms each), `genserver --slowest 3'
%% lists exactly the slow ones: server name and pid, request, whole text,
%% caller, start, the caller's latency and the server's share (at least
%% the planted sleep), slowest first.
t_genserver_slowest(Config) ->
    S = start_session(t_slowest, [process_register, message_send, message_receive]),
    Server = server_start(shop_slow),
    {_, Caller} = traced([send, 'receive'],
                         fun() ->
                                 [I = gen_server:call(shop_slow, {get, I}) || I <- lists:seq(1, ?CALLS)],
                                 [ok = gen_server:call(shop_slow, {slow, ?SLOW_MS})
                                  || _ <- lists:seq(1, ?SLOW_CALLS)]
                         end),
    ok = gen_server:stop(Server),
    lttng_session:stop(S),
    Out = analyze_ok(Config, ["genserver", "--json", "--slowest", "3", dir(S)]),
    Slowest = maps:get(<<"slowest">>, Out),
    ?assertEqual(?SLOW_CALLS, length(Slowest)),
    [begin
         ?assertMatch(#{<<"server">> := _, <<"name">> := <<"shop_slow">>,
                        <<"request">> := <<"slow">>, <<"text">> := <<"{slow,20}">>}, C),
         ?assertEqual(pid_bin(Server), maps:get(<<"server">>, C)),
         ?assertEqual(pid_bin(Caller), maps:get(<<"caller">>, C)),
         ?assert(maps:get(<<"latency_ns">>, C) >= ?SLOW_MS * 1000000),
         ?assert(maps:get(<<"server_ns">>, C) >= ?SLOW_MS * 1000000),
         ?assert(maps:get(<<"start_ns">>, C) >= maps:get(<<"first_ns">>, Out))
     end || C <- Slowest],
    Latencies = [maps:get(<<"latency_ns">>, C) || C <- Slowest],
    ?assertEqual(lists:reverse(lists:sort(Latencies)), Latencies),
    {0, Text, <<>>} = analyze(Config, ["genserver", "--slowest", "3", dir(S)]),
    ?assertNotEqual(nomatch, string:find(Text, "The 3 slowest calls"), Text),
    lttng_session:destroy(S).

%% Contradictory or malformed selections are bad input (one line on
%% stderr, exit 1); a well-formed one that matches nothing prints the empty
%% tables and says what matched nothing (exit 0). Times are relative to the
%% first event recorded, or absolute (ns since the epoch, or UTC).
t_selections(Config) ->
    S = start_session(t_select, [message_send]),
    Sink = spawn(fun() -> receive stop -> ok end end),
    _ = traced([send], fun() -> [Sink ! {hello, I} || I <- lists:seq(1, 100)], ok end),
    Sink ! stop,
    lttng_session:stop(S),
    bad(Config, ["rates", "--from", "5s", "--to", "1s", dir(S)], ["--from", "--to"]),
    bad(Config, ["rates", "--pid", "garbage", dir(S)], ["garbage", "not a pid"]),
    bad(Config, ["rates", "--pid", "", dir(S)], ["not a pid"]),
    bad(Config, ["rates", "--name", "", dir(S)], ["empty name"]),
    bad(Config, ["rates", "--from", "2026-13-40T99:00:00", dir(S)], ["not a time"]),
    Nobody = "<0.9999.0>",
    {0, Text, <<>>} = analyze(Config, ["latency", "--pid", Nobody, dir(S)]),
    ?assertNotEqual(nomatch, string:find(Text, "nothing matched the selection --pid " ++ Nobody), Text),
    Empty = analyze_ok(Config, ["latency", "--json", "--name", "nobody_here", dir(S)]),
    ?assertEqual(<<"--name nobody_here">>, maps:get(<<"empty_selection">>, Empty)),
    ?assertEqual(0, maps:get(<<"events">>, Empty)),
    %% The whole trace from its first event's absolute time; nothing after
    %% its last.
    Whole = analyze_ok(Config, ["rates", "--json", dir(S)]),
    First = maps:get(<<"first_ns">>, Whole),
    Last = maps:get(<<"last_ns">>, Whole),
    ?assert(maps:get(<<"events">>, Whole) >= 100),
    Abs = analyze_ok(Config, ["rates", "--json", "--from", integer_to_list(First), dir(S)]),
    ?assertEqual(maps:get(<<"events">>, Whole), maps:get(<<"events">>, Abs)),
    After = utc(Last + 2000000000),
    Late = analyze_ok(Config, ["rates", "--json", "--from", After, dir(S)]),
    ?assertEqual(0, maps:get(<<"events">>, Late)),
    ?assertNotEqual(null, maps:get(<<"empty_selection">>, Late)),
    %% The header says which absolute time +0 is.
    {0, Header, <<>>} = analyze(Config, ["rates", dir(S)]),
    ?assertNotEqual(nomatch, string:find(Header, "+0 = " ++ lists:sublist(utc(First), 19)), Header),
    lttng_session:destroy(S).

%% A traced process makes 50 calls, sleeps 500 ms, and makes 50 more:
%% `calls --window 200ms' gives the calls' row once per window that had
%% calls (two windows, 50 each, their starts 200 ms apart at least), and
%% the text gives each window's count, p50 and p99 on a line of its own.
t_window(Config) ->
    S = start_session(t_window, [function_call, function_return]),
    Spec = [{'_', [], [{return_trace}]}],
    1 = erlang:trace_pattern({?MODULE, fast_path, 1}, Spec, [local]),
    Burst = fun() -> [?MODULE:fast_path(I) || I <- lists:seq(1, 50)] end,
    _ = traced([call], fun() -> Burst(), timer:sleep(500), Burst() end),
    lttng_session:stop(S),
    Out = analyze_ok(Config, ["calls", "--json", "--window", "200ms", dir(S)]),
    Rows = [R || R <- maps:get(<<"calls">>, Out),
                 maps:get(<<"entry">>, R) =:= <<"dyntrace_identity_SUITE:fast_path/1">>],
    ?assertEqual([50, 50], [maps:get(<<"count">>, R) || R <- Rows]),
    [W1, W2] = [maps:get(<<"window_start_ns">>, R) || R <- Rows],
    ?assertEqual(maps:get(<<"first_ns">>, Out), W1),
    ?assert(W2 - W1 >= 400000000),
    ?assertEqual(0, (W2 - W1) rem 200000000),
    {0, Text, <<>>} = analyze(Config, ["calls", "--window", "200ms", dir(S)]),
    ?assertNotEqual(nomatch, string:find(Text, "count, p50 and p99 per window of 200 ms"), Text),
    ?assertMatch({match, _}, re:run(Text, "dyntrace_identity_SUITE:fast_path/1 +\\+0 ns +50 +[0-9.]+ [nu]s +[0-9.]+ [nu]s"), Text),
    ?assertMatch({match, _}, re:run(Text, "\n +\\+[4-9][0-9]{2} ms +50 +[0-9.]+ [nu]s +[0-9.]+ [nu]s\n"), Text),
    lttng_session:destroy(S).

%% A process spins for 60 ms (preempted again and again inside its loop),
%% then waits: `sched --by-function' puts the loop first for that process,
%% with most of its time on a scheduler; the split adds up to its total.
t_sched_by_function(Config) ->
    S = start_session(t_sched_fn, [process_scheduled]),
    {_, Pid} = traced([running], fun() -> ?MODULE:spin(60), timer:sleep(20), ok end),
    lttng_session:stop(S),
    Out = analyze_ok(Config, ["sched", "--json", "--by-function", "--pid", pid_to_list(Pid), dir(S)]),
    Mine = [R || R <- maps:get(<<"sched_functions">>, Out), maps:get(<<"pid">>, R) =:= pid_bin(Pid)],
    [Top | Rest] = Mine,
    ?assertEqual(<<"dyntrace_identity_SUITE:spin_until/2">>, maps:get(<<"entry">>, Top)),
    ?assert(maps:get(<<"total_ns">>, Top) >= 40000000, Top),
    ?assert(maps:get(<<"total_ns">>, Top) > lists:sum([0 | [maps:get(<<"total_ns">>, R) || R <- Rest]])),
    [Total] = [maps:get(<<"total_ns">>, R) || R <- maps:get(<<"sched">>, Out),
                                              maps:get(<<"pid">>, R) =:= pid_bin(Pid)],
    ?assertEqual(Total, lists:sum([maps:get(<<"total_ns">>, R) || R <- Mine])),
    lttng_session:destroy(S).

%% Two nodes on this host, dyntrace loaded in both, record into one
%% session (LTTng's per-user buffers: one stream). Each has a process
%% registered as `worker' collecting garbage 5 times. Without the vpid
%% context the analysis cannot tell them apart and says so (text and
%% JSON, naming both nodes and the fix); with it, each node's worker is
%% its own row, named, with its node.
t_two_nodes_one_session(Config) ->
    Peers = [start_peer(N) || N <- [idt_a, idt_b]],
    try
        Names = [atom_to_binary(Node) || {_, Node} <- Peers],
        Events = [node_name, process_register, gc_minor_start, gc_minor_end,
                  gc_major_start, gc_major_end],
        Mixed = record_peers(Peers, t_mixed, Events, false),
        {0, Text, <<>>} = analyze(Config, ["gc", dir(Mixed)]),
        ?assertNotEqual(nomatch, string:find(Text, "warning: one stream holds the events of nodes"), Text),
        ?assertNotEqual(nomatch, string:find(Text, "lttng add-context -u -t vpid"), Text),
        Json = analyze_ok(Config, ["gc", "--json", dir(Mixed)]),
        ?assertEqual(true, maps:get(<<"nodes_mixed">>, Json)),
        [Stream] = [M || M <- maps:get(<<"mixed_nodes">>, Json), Names -- M =:= []],
        ?assert(length(Stream) >= 2),
        lttng_session:destroy(Mixed),
        Apart = record_peers(Peers, t_apart, Events, true),
        Out = analyze_ok(Config, ["gc", "--json", dir(Apart)]),
        ?assertEqual(false, maps:get(<<"nodes_mixed">>, Out)),
        Workers = lists:usort([maps:get(<<"node">>, R) || R <- maps:get(<<"gc">>, Out),
                                                         maps:get(<<"name">>, R) =:= <<"worker">>]),
        ?assertEqual(lists:sort(Names), Workers),
        [?assertEqual(5, lists:sum([maps:get(<<"count">>, R) || R <- maps:get(<<"gc">>, Out),
                                                              maps:get(<<"name">>, R) =:= <<"worker">>,
                                                              maps:get(<<"node">>, R) =:= N,
                                                              maps:get(<<"kind">>, R) =:= <<"major">>]))
         || N <- Names],
        lttng_session:destroy(Apart)
    after
        [peer:stop(P) || {P, _} <- Peers]
    end.

%% Two nodes recorded into one session (vpid context), each with a worker
%% registered as `worker': `gc' and `memory' write each worker
%% the one way, `worker <0.N.0> on NODE', in text, and as its pid, name
%% and node in JSON; the suffix that tells pids apart inside the analyser
%% (`@0') is nowhere.
t_one_label_everywhere(Config) ->
    Peers = [start_peer(N) || N <- [lbl_a, lbl_b]],
    try
        Events = [node_name, process_register, gc_major_start, gc_major_end,
                  process_memory],
        S = lttng_session:create(t_label, Events),
        lttng_session:cmd_ok("lttng add-context -u -s " ++ maps:get(name, S) ++ " -t vpid"),
        ok = lttng_session:start(S),
        [ok = peer:call(P, lttng_session, wait_enabled, [Events]) || {P, _} <- Peers],
        Workers = [{atom_to_list(Node), peer:call(P, ?MODULE, labelled_worker, [3])}
                   || {P, Node} <- Peers],
        lttng_session:stop(S),
        [begin
             {0, Text, <<>>} = analyze(Config, [Cmd, dir(S)]),
             ?assertEqual(nomatch, binary:match(Text, <<">@">>), Text),
             [?assertNotEqual(nomatch, string:find(Text, "worker " ++ Pid ++ " on " ++ Node), {Cmd, Text})
              || {Node, Pid} <- Workers],
             Json = analyze_ok(Config, [Cmd, "--json", dir(S)]),
             Rows = [R || {Key, Rs} <- maps:to_list(Json), is_list(Rs),
                          lists:member(Key, [<<"gc">>, <<"process_memory">>]), R <- Rs],
             ?assertNotEqual([], Rows, Json),
             Seen = lists:usort([{binary_to_list(maps:get(<<"node">>, R)), binary_to_list(maps:get(<<"pid">>, R))}
                                 || R <- Rows, maps:get(<<"name">>, R, null) =:= <<"worker">>]),
             ?assertEqual(lists:sort(Workers), Seen, {Cmd, Json})
         end || Cmd <- ["gc", "memory"]],
        lttng_session:destroy(S)
    after
        [peer:stop(P) || {P, _} <- Peers]
    end.

%% Two nodes of a cluster (each on a host of its own): n1 calls the server
%% registered as `shop' on n2 by `{shop, Node}' 20 times. `delivery' pairs
%% the calls (n1 -> n2) and their replies to the callers' aliases
%% (n2 -> n1): none unmatched, none unresolved.
t_remote_call_delivery(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "cluster"),
    C = dyntrace_cluster:start(2, Dir),
    try
        [N1, N2] = dyntrace_cluster:nodes(C),
        Sessions = dyntrace_cluster:record(C, [node_name, process_register, message_send,
                                               message_receive]),
        true = dyntrace_cluster:call(C, N1, net_kernel, connect_node, [N2]),
        _ = dyntrace_cluster:call(C, N2, ?MODULE, remote_server, [shop]),
        _ = dyntrace_cluster:call(C, N1, ?MODULE, remote_calls, [shop, N2, ?CALLS]),
        ok = dyntrace_cluster:call(C, N2, dyntrace, announce_nodes, []),
        ok = dyntrace_cluster:finish(C),
        Out = analyze_ok(Config, ["delivery", "--json" | dyntrace_cluster:trace_dirs(C, Sessions)]),
        Rows = [{maps:get(<<"from">>, R), maps:get(<<"to">>, R), maps:get(<<"count">>, R),
                 maps:get(<<"unmatched">>, R), maps:get(<<"unresolved_target">>, R)}
                || R <- maps:get(<<"delivery">>, Out)],
        [B1, B2] = [atom_to_binary(N) || N <- [N1, N2]],
        ?assert(lists:member({B1, B2, ?CALLS, 0, 0}, Rows), Rows),
        ?assert(lists:member({B2, B1, ?CALLS, 0, 0}, Rows), Rows),
        ?assertEqual([], [R || {_, <<"(unresolved)">>, _, _, _} = R <- Rows])
    after
        dyntrace_cluster:stop(C)
    end.

%% Two nodes of this host (one clock) recorded into one session (vpid
%% context): n1 calls the server registered as `shop' on n2 2,000 times.
%% `delivery' pairs every call and reply, and no receive is timestamped
%% before its send: no skew warning, `skewed' 0, one clock. Then a process
%% of n1 whose sends are not traced sends `{hello,1}' to a traced receiver
%% on n2, and later a traced one sends the same text: the first receive has
%% no send in the trace and is counted so; before, it was paired with the
%% later send of the other copy, a receive "before its send" blamed on the
%% hosts' clocks.
t_one_host_delivery(Config) ->
    Calls = 2000,
    Peers = [{_, N1}, {_, N2}] = [start_peer(N) || N <- [oh_a, oh_b]],
    [{P1, _}, {P2, _}] = Peers,
    try
        Events = [node_name, process_register, message_send, message_receive],
        S = lttng_session:create(t_one_host, Events, #{subbuf_size => 4 bsl 20, num_subbuf => 4}),
        lttng_session:cmd_ok("lttng add-context -u -s " ++ maps:get(name, S) ++ " -t vpid"),
        ok = lttng_session:start(S),
        [ok = peer:call(P, lttng_session, wait_enabled, [Events]) || P <- [P1, P2]],
        true = peer:call(P1, net_kernel, connect_node, [N2]),
        _ = peer:call(P2, ?MODULE, remote_server, [shop]),
        _ = peer:call(P1, ?MODULE, remote_calls, [shop, N2, Calls], 60000),
        Sink = peer:call(P2, ?MODULE, sink_start, []),
        {hello, 1} = peer:call(P1, erlang, send, [Sink, {hello, 1}]),
        timer:sleep(50),
        ok = peer:call(P1, ?MODULE, traced_send, [Sink, {hello, 1}]),
        timer:sleep(50),
        ok = peer:call(P2, dyntrace, announce_nodes, []),
        timer:sleep(200),
        lttng_session:stop(S),
        Out = analyze_ok(Config, ["delivery", "--json", dir(S)]),
        ?assertEqual(0, maps:get(<<"discarded">>, Out)),
        Rows = [{maps:get(<<"from">>, R), maps:get(<<"to">>, R), maps:get(<<"count">>, R),
                 maps:get(<<"unmatched">>, R)}
                || R <- maps:get(<<"delivery">>, Out)],
        [B1, B2] = [atom_to_binary(N) || N <- [N1, N2]],
        ?assert(lists:member({B1, B2, Calls + 1, 0}, Rows), Rows),
        ?assert(lists:member({B2, B1, Calls, 0}, Rows), Rows),
        [Counts] = maps:get(<<"delivery_summary">>, Out),
        %% {hello,1} of the untraced sender, and `go' of the untraced
        %% processes that start the server and the caller.
        ?assertMatch(#{<<"skewed">> := 0, <<"without_send">> := 3, <<"one_clock">> := <<"true">>},
                     Counts, Out),
        ?assertEqual([0, 0], [maps:get(<<"skewed">>, R) || R <- maps:get(<<"delivery_clocks">>, Out)]),
        {0, Text, <<>>} = analyze(Config, ["delivery", dir(S)]),
        ?assertEqual(nomatch, string:find(Text, "clock"), Text),
        ?assertNotEqual(nomatch, string:find(Text, "3 receives of messages whose send the trace does not hold"), Text),
        lttng_session:destroy(S)
    after
        [peer:stop(P) || {P, _} <- Peers]
    end.

%% Two nodes that live less than a second each: the names they write at load
%% (before LTTng-UST has registered with the session daemon) reach the
%% trace all the same, once it has. Nothing else asks them to: `gc' names
%% each node's worker, registered before dyntrace loaded, and its node.
t_short_lived_node_names(Config) ->
    Paths = lists:usort([filename:dirname(code:which(M)) || M <- [dyntrace, lttng_session, ?MODULE]]),
    Peers = [begin
                 {ok, P, Node} = peer:start(#{name => peer:random_name(N), connection => standard_io,
                                              args => lists:append([["-pa", D] || D <- Paths])}),
                 {P, Node}
             end || N <- [short_a, short_b]],
    Events = [node_name, process_name, gc_major_start, gc_major_end],
    S = lttng_session:create(t_short_lived, Events),
    try
        lttng_session:cmd_ok("lttng add-context -u -s " ++ maps:get(name, S) ++ " -t vpid"),
        ok = lttng_session:start(S),
        [begin
             Started = erlang:monotonic_time(millisecond),
             ok = peer:call(P, ?MODULE, short_lived, [], 30000),
             ok = peer:stop(P),
             ct:log("~p traced for ~b ms", [Node, erlang:monotonic_time(millisecond) - Started])
         end || {P, Node} <- Peers],
        lttng_session:stop(S),
        Out = analyze_ok(Config, ["gc", "--json", dir(S)]),
        Rows = [R || R <- maps:get(<<"gc">>, Out), maps:get(<<"name">>, R) =:= <<"early_worker">>,
                     maps:get(<<"kind">>, R) =:= <<"major">>],
        ?assertEqual(lists:sort([{atom_to_binary(Node), 3} || {_, Node} <- Peers]),
                     lists:sort([{maps:get(<<"node">>, R), maps:get(<<"count">>, R)} || R <- Rows]),
                     Out),
        {0, Text, <<>>} = analyze(Config, ["gc", dir(S)]),
        [?assertNotEqual(nomatch, string:find(Text, "on " ++ atom_to_list(Node)), Text)
         || {_, Node} <- Peers]
    after
        %% Those that a failed case left running.
        [peer:stop(P) || {P, _} <- Peers, is_process_alive(P)],
        lttng_session:destroy(S)
    end.

%%%===================================================================
%%% Helpers
%%%===================================================================

start_session(Name, Events) ->
    lttng_session:start_tracked(Name, Events).

%% A node of this host with dyntrace loaded, registered with the session
%% daemon.
start_peer(Name) ->
    Paths = lists:usort([filename:dirname(code:which(M)) || M <- [dyntrace, lttng_session, ?MODULE]]),
    {ok, P, Node} = peer:start(#{name => Name, connection => standard_io,
                                 args => lists:append([["-pa", D] || D <- Paths])}),
    {module, dyntrace} = peer:call(P, code, ensure_loaded, [dyntrace]),
    ok = peer:call(P, lttng_session, wait_registered, []),
    {P, Node}.

%% A session recording both peers (with the vpid context when `Vpid'),
%% each peer's worker run in it; stopped.
record_peers(Peers, Name, Events, Vpid) ->
    S = lttng_session:create(Name, Events),
    Vpid andalso lttng_session:cmd_ok("lttng add-context -u -s " ++ maps:get(name, S) ++ " -t vpid"),
    ok = lttng_session:start(S),
    [ok = peer:call(P, lttng_session, wait_enabled, [Events]) || {P, _} <- Peers],
    [ok = peer:call(P, ?MODULE, gc_worker, [{worker, 5}]) || {P, _} <- Peers],
    lttng_session:stop(S),
    S.

dir(#{dir := Dir}) ->
    Dir.

pid_bin(Pid) ->
    list_to_binary(pid_to_list(Pid)).

by(Key, Rows) ->
    maps:from_list([{maps:get(Key, R), R} || R <- Rows]).

%% ns since the epoch as the UTC text the analyser reads.
utc(Ns) ->
    Secs = Ns div 1000000000,
    {{Y, Mo, D}, {H, Mi, S}} = calendar:system_time_to_universal_time(Secs, second),
    lists:flatten(io_lib:format("~4..0b-~2..0b-~2..0bT~2..0b:~2..0b:~2..0b", [Y, Mo, D, H, Mi, S])).

analyze(Config, Args) ->
    {Status, Out, Stderr} = analyze_cmd:run(?config(analyze, Config), Args),
    ct:log("~p -> ~p~n~s~s", [Args, Status, Stderr, Out]),
    {Status, Out, Stderr}.

analyze_ok(Config, Args) ->
    analyze_cmd:json(?config(analyze, Config), Args).

bad(Config, Args, Mentions) ->
    analyze_cmd:bad(?config(analyze, Config), Args, Mentions).

