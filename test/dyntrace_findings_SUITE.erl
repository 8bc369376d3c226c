%%% `dyntrace-analyze findings' on planted faults of real workloads, in
%%% this node, recorded with `dyntrace:record(triage, ...)': one case per
%%% kind of finding, each planted cause beside a harmless red herring (a
%%% large but flat queue, heap or binary, a periodic CPU burst, a slow but
%%% rare call, steady exceptions). `findings' must rank the cause in its
%%% top 3 and above anything it says of the red herring. One case adds to
%%% triage's items what triage does not record (docs/findings.md, "What
%%% each finding needs"): the caught exceptions of the suspect functions.
%%% A last case records two peer
%%% nodes with one `record(triage, #{nodes => ...})' call: a queue on one,
%%% the latency it causes on the other.
-module(dyntrace_findings_SUITE).
-behaviour(gen_server).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1,
         init_per_testcase/2, end_per_testcase/2]).
-export([t_growing_queue/1,
         t_receive_scans_queue/1,
         t_scheduler_hog/1,
         t_slow_requests/1,
         t_growing_latency/1,
         t_growing_heap/1,
         t_growing_memory/1,
         t_exception_burst/1,
         t_caught_exceptions/1,
         t_two_nodes/1]).
%% Run in peer nodes.
-export([start_store/0, start_asker/1]).
%% The planted servers (gen_server callbacks) and the traced functions.
-export([init/1, handle_call/3, handle_cast/2, fail/1, grumble/1, price/1]).

-define(RECORD_MS, 10000).
%% The workloads' registered names, killed after each case.
-define(NAMES, [store, archive, feeder, junker, scanner, ticker, spinner, shop, audit, buyer,
                auditor, ledger, steady, ledger_caller, steady_caller, hoarder, big,
                bin_keeper, bin_holder, flaky, grumpy]).

suite() ->
    [{timetrap, {minutes, 2}}].

all() ->
    [t_growing_queue,
     t_receive_scans_queue,
     t_scheduler_hog,
     t_slow_requests,
     t_growing_latency,
     t_growing_heap,
     t_growing_memory,
     t_exception_burst,
     t_caught_exceptions,
     t_two_nodes].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    [{analyze, analyze_cmd:exe()} | Config].

end_per_suite(_Config) ->
    ok.

init_per_testcase(Case, Config) ->
    ok = lttng_session:delete_traces(Case),
    Config.

end_per_testcase(_Case, _Config) ->
    ok = dyntrace:clear(),
    stop_workload(),
    ok.

%%%===================================================================
%%% The plan
%%%===================================================================

%%%===================================================================
%%% Cases
%%%===================================================================

%% `store' takes only `get' out of its queue while `note' arrives at
%% ~400/s; `archive' holds 50,000 messages it never reads, flat.
t_growing_queue(Config) ->
    start(archive, fun() -> receive wake_up -> ok end end),
    [archive ! {old, I} || I <- lists:seq(1, 50000)],
    start(store, fun store/0),
    start(feeder, fun() -> feed(0) end),
    [F | _] = Findings = planted(t_growing_queue, Config),
    ?assertEqual(<<"growing_queue">>, maps:get(<<"kind">>, F)),
    assert_ranked({<<"growing_queue">>, <<"store">>}, <<"archive">>, Findings),
    [Queue] = [Q || #{<<"kind">> := <<"growing_queue">>, <<"name">> := <<"store">>} = Q
                        <- Findings],
    %% Which messages make it grow, and where to look.
    ?assertNotEqual(nomatch, string:find(maps:get(<<"claim">>, Queue), "note")),
    ?assertEqual(<<"dyntrace-analyze mailbox --name store">>, maps:get(<<"see">>, Queue)),
    %% The evidence: `note' arrives at about the queue's growth, not taken
    %% out; `get' is.
    Mailbox = analyze_cmd:json(?config(analyze, Config),
                               ["mailbox", "--json", "--name", "store", last_trace()]),
    Kinds = [K || #{<<"name">> := <<"store">>} = K <- maps:get(<<"mailbox_kinds">>, Mailbox)],
    [Note] = [K || #{<<"kind">> := <<"note">>} = K <- Kinds],
    [Get] = [K || #{<<"kind">> := <<"get">>} = K <- Kinds],
    ?assertNotEqual(nomatch, string:find(maps:get(<<"note">>, Note), "not taken out")),
    ?assertEqual(<<>>, maps:get(<<"note">>, Get)),
    ?assert(maps:get(<<"count">>, Note) > 5 * maps:get(<<"count">>, Get)).

%% `scanner' takes `req' out of a queue that fills with `junk' (from the
%% second second on, ~5000/s): each receive scans the whole queue.
%% `ticker' burns 100 ms of CPU every second.
t_receive_scans_queue(Config) ->
    start(ticker, fun() -> tick() end),
    start(scanner, fun scan/0),
    start(feeder, fun request/0),
    %% The junk from the second second on: the first requests find the
    %% queue empty.
    start(junker, fun() -> timer:sleep(1000), junk(0) end),
    Findings = planted(t_receive_scans_queue, Config),
    assert_ranked({<<"receive_scans_queue">>, <<"scanner">>}, <<"ticker">>, Findings).

%% `spinner' never stops running; `ticker' burns 100 ms every second.
t_scheduler_hog(Config) ->
    start(ticker, fun() -> tick() end),
    start(spinner, fun() -> spin(0) end),
    Findings = planted(t_scheduler_hog, Config),
    assert_ranked({<<"scheduler_hog">>, <<"spinner">>}, <<"ticker">>, Findings),
    [Hog] = [H || #{<<"kind">> := <<"scheduler_hog">>, <<"name">> := <<"spinner">>} = H
                      <- Findings],
    ?assertNotEqual(nomatch, string:find(maps:get(<<"claim">>, Hog), "spin/1")).

%% `shop' spends 12 ms of CPU in price_until/2 per `buy', called again 1 ms
%% after each answer; `audit' takes 200 ms, called three times. Triage's
%% looks share out their 150 ms windows, one every two seconds, so shop
%% had two of the five (a recording at load average 11). At one call every
%% 37 ms, a loaded machine's windows held 3 calls in all, under
%% slow_requests' minimum of 5; at one every 17 ms, 8; now a window holds
%% up to 11.
t_slow_requests(Config) ->
    {ok, _} = gen_server:start({local, shop}, ?MODULE, shop, []),
    {ok, _} = gen_server:start({local, audit}, ?MODULE, audit, []),
    start(buyer, fun() -> call_every(shop, buy, 1, 0) end),
    start(auditor, fun() -> [begin timer:sleep(1000), gen_server:call(audit, {audit, I}) end
                             || I <- [1, 2, 3]] end),
    Findings = planted(t_slow_requests, Config),
    assert_ranked({<<"slow_requests">>, <<"shop">>}, <<"audit">>, Findings),
    [Slow] = [S || #{<<"kind">> := <<"slow_requests">>, <<"name">> := <<"shop">>} = S
                       <- Findings],
    %% Where the server's time goes.
    ?assertNotEqual(nomatch, string:find(maps:get(<<"claim">>, Slow), "price_until/2")).

%% `ledger' looks a key up in a list that grows with the time since its
%% first call, which comes once the recording is on (T^2/100 entries T ms
%% after it: 40,000 at 2 s, 360,000 at 6 s), called again 1 ms after each
%% answer; `steady' answers each call in 3 ms, always. A list that grew
%% per call, from before the recording, grew with the CPU the node got: on
%% a loaded host the recording could start at a list already long and see
%% it barely double. A triage look lasts 150 ms and the late calls are the
%% slow ones: a caller pausing longer leaves too few of them in a look.
t_growing_latency(Config) ->
    {ok, _} = gen_server:start({local, ledger}, ?MODULE, ledger, []),
    {ok, _} = gen_server:start({local, steady}, ?MODULE, steady, []),
    start(ledger_caller, fun() -> wait_for(process_memory), call_every(ledger, lookup, 1, 0) end),
    start(steady_caller, fun() -> call_every(steady, nap, 10, 0) end),
    Findings = planted(t_growing_latency, Config),
    assert_ranked({<<"growing_latency">>, <<"ledger">>}, <<"steady">>, Findings).

%% `hoarder' keeps 2000 more tuples every 10 ms; `big' holds a list of
%% 500,000 and makes a little garbage now and then.
t_growing_heap(Config) ->
    start(big, fun() -> big(lists:seq(1, 500000)) end),
    start(hoarder, fun() -> hoard([]) end),
    Findings = planted(t_growing_heap, Config),
    assert_ranked({<<"growing_heap">>, <<"hoarder">>}, <<"big">>, Findings).

%% `bin_keeper' keeps a new 64 KiB binary every 10 ms; `bin_holder' holds
%% 32 MiB of binaries, flat.
t_growing_memory(Config) ->
    start(bin_holder, fun() -> hold([binary:copy(<<I>>, 1 bsl 20) || I <- lists:seq(1, 32)]) end),
    start(bin_keeper, fun() -> keep([]) end),
    Findings = planted(t_growing_memory, Config),
    assert_ranked({<<"growing_memory">>, <<"bin_keeper">>}, <<"bin_holder">>, Findings).

%% `flaky' spawns 3000 workers that crash at once; `grumpy''s workers
%% crash twice a second. Triage traces no calls; it sees the crashes in
%% every process's exits.
t_exception_burst(Config) ->
    start(grumpy, fun() -> crash_every(500, 0) end),
    start(flaky, fun() ->
                         %% The burst 1.5 s into the recording.
                         wait_for(process_exit),
                         timer:sleep(1500),
                         [spawn(fun() -> exit({planted, I}) end) || I <- lists:seq(1, 3000)],
                         receive stop -> ok end
                 end),
    Findings = planted(t_exception_burst, Config),
    assert_ranked({<<"exception_burst">>, <<"flaky">>}, <<"grumpy">>, Findings).

%% `flaky' raises 3000 times in a burst and catches them; `grumpy' raises
%% twice a second. A caught exception leaves no trace but the call's, and
%% triage traces no calls (docs/findings.md): the operator adds the
%% suspect functions' exceptions to triage's items.
t_caught_exceptions(Config) ->
    start(grumpy, fun() -> grumble_every(500) end),
    start(flaky, fun() ->
                         %% The burst 1.5 s into the recording, once it
                         %% traces exceptions.
                         wait_for(function_exception),
                         timer:sleep(1500),
                         [raised(fun ?MODULE:fail/1, I) || I <- lists:seq(1, 3000)],
                         receive stop -> ok end
                 end),
    Calls = {calls, [{?MODULE, fail, 1}, {?MODULE, grumble, 1}], #{exception => true}},
    Findings = planted(t_caught_exceptions, [Calls], Config),
    assert_ranked({<<"exception_burst">>, <<"flaky">>}, <<"grumpy">>, Findings).

%% Two nodes: on A, `store' takes only `get' out of its queue while
%% `note' piles up; each `receive' it enters scans every note queued. On
%% B, the gen_server `front' asks A's store for each call it answers, and
%% is asked again as soon as it answers: each `get' arrives while the
%% store scans after the last, and waits for the scan, whose length grows
%% with the queue. One `record(triage, #{nodes => [A, B]})' records both;
%% `findings' names A's store and B's front in its top 3.
t_two_nodes(Config) ->
    ok = dyntrace_peers:alive(findings_suite),
    {PA, A} = dyntrace_peers:start(findings_a, ?MODULE),
    {PB, B} = dyntrace_peers:start(findings_b, ?MODULE),
    try
        _ = erpc:call(A, ?MODULE, start_store, []),
        _ = erpc:call(B, ?MODULE, start_asker, [A]),
        Dir = filename:join(os:getenv("DYNTRACE_TRACE_DIR", "/tmp/dyntrace-test-traces"),
                            lists:concat([t_two_nodes, "_", os:getpid(), "_",
                                          erlang:unique_integer([positive])])),
        {ok, Trace, Answer} = dyntrace:record(triage, #{nodes => [A, B], duration => ?RECORD_MS,
                                                        dir => Dir}),
        ?assertEqual(#{recorded => lists:sort([A, B]), unreachable => [], failed => []}, Answer),
        Exe = ?config(analyze, Config),
        {0, Text, _} = analyze_cmd:run(Exe, ["findings", Trace]),
        ct:log("~s", [Text]),
        Findings = maps:get(<<"findings">>, analyze_cmd:json(Exe, ["findings", "--json", Trace])),
        ?assert(rank(fun(F) -> maps:get(<<"kind">>, F) =:= <<"growing_queue">>
                                   andalso maps:get(<<"name">>, F) =:= <<"store">>
                                   andalso maps:get(<<"node">>, F) =:= atom_to_binary(A)
                     end, Findings) =< 3, Findings),
        %% On B, front's calls wait for the store's scan of its queue:
        %% its latency grows with A's queue.
        ?assert(rank(fun(F) -> maps:get(<<"kind">>, F) =:= <<"growing_latency">>
                                   andalso maps:get(<<"name">>, F) =:= <<"front">>
                                   andalso maps:get(<<"node">>, F) =:= atom_to_binary(B)
                     end, Findings) =< 3, Findings)
    after
        peer:stop(PA),
        peer:stop(PB)
    end.

%%%===================================================================
%%% Recording and checking
%%%===================================================================

%% Records the workload started with the plan, stops it, and answers the
%% findings (JSON), the text logged.
planted(Case, Config) ->
    planted(Case, [], Config).

%% The same, with triage's items (`dyntrace_triage:items/1') and the
%% items `More'.
planted(Case, More, Config) ->
    Dir = filename:join(os:getenv("DYNTRACE_TRACE_DIR", "/tmp/dyntrace-test-traces"),
                        lists:concat([Case, "_", os:getpid(), "_",
                                      erlang:unique_integer([positive])])),
    Opts = #{duration => ?RECORD_MS, dir => Dir},
    {ok, Trace} = case More of
                      [] ->
                          dyntrace:record(triage, Opts);
                      _ ->
                          {Items, Own} = dyntrace_triage:items(Opts),
                          dyntrace:record(Items ++ More, Own)
                  end,
    put(last_trace, Trace),
    stop_workload(),
    Exe = ?config(analyze, Config),
    {0, Text, _} = analyze_cmd:run(Exe, ["findings", Trace]),
    ct:log("~s", [Text]),
    maps:get(<<"findings">>, analyze_cmd:json(Exe, ["findings", "--json", Trace])).

last_trace() ->
    get(last_trace).

%% The finding `Kind' of the process named `Name' ranks in the top 3, and
%% above every finding about the red herring `Herring'.
assert_ranked({Kind, Name}, Herring, Findings) ->
    Cause = rank(fun(F) -> maps:get(<<"kind">>, F) =:= Kind
                               andalso maps:get(<<"name">>, F) =:= Name end, Findings),
    Other = rank(fun(F) -> maps:get(<<"name">>, F) =:= Herring end, Findings),
    ?assert(Cause =< 3, {Kind, Name, Findings}),
    ?assert(Cause < Other, {Kind, Name, Herring, Findings}).

rank(Pred, Findings) ->
    case [maps:get(<<"rank">>, F) || F <- Findings, Pred(F)] of
        [R | _] -> R;
        [] -> infinity
    end.

%% @doc In a peer node: `store', which takes only `get' out of its queue,
%% and its feeder of notes (ended with the node).
-spec start_store() -> pid().
start_store() ->
    Store = start(store, fun store/0),
    %% The notes from the recording's start: the first calls find the
    %% queue short.
    spawn(fun() -> wait_for(process_memory), feed_notes(0) end),
    Store.

%% @doc In a peer node: the gen_server `front', which asks `Node''s
%% store for `get' twice in each call, and `asker', which calls it again as
%% soon as it answers (ended with the node).
-spec start_asker(node()) -> pid().
start_asker(Node) ->
    {ok, _} = gen_server:start({local, front}, ?MODULE, {front, {store, Node}}, []),
    start(asker, fun() -> call_every(front, ask, 0, 0) end).

%% 100 notes every ms or so.
feed_notes(I) ->
    [store ! {note, I} || _ <- lists:seq(1, 100)],
    timer:sleep(1),
    feed_notes(I + 1).

start(Name, Fun) ->
    Pid = spawn(Fun),
    true = register(Name, Pid),
    Pid.

stop_workload() ->
    [exit(P, kill) || Name <- ?NAMES, P <- [whereis(Name)], is_pid(P)],
    ok.

%%%===================================================================
%%% The workloads
%%%===================================================================

store() ->
    receive {get, From} -> From ! {got, self()} end,
    store().

%% A note every 2 ms, a get every 20 ms.
feed(I) ->
    store ! {note, I},
    case I rem 10 of
        0 -> store ! {get, self()}, receive {got, _} -> ok end;
        _ -> ok
    end,
    timer:sleep(2),
    feed(I + 1).

scan() ->
    receive {req, From} -> From ! {done, self()} end,
    scan().

%% A request every ms or so, each awaited.
request() ->
    scanner ! {req, self()},
    receive {done, _} -> ok end,
    timer:sleep(1),
    request().

%% 10 junk messages every ms or so, whatever the scanner does.
junk(I) ->
    [scanner ! {junk, I, J} || J <- lists:seq(1, 10)],
    timer:sleep(1),
    junk(I + 1).

%% 100 ms of CPU every second.
tick() ->
    burn(100),
    timer:sleep(900),
    tick().

spin(N) ->
    spin(N + 1).

burn(Ms) ->
    Until = erlang:monotonic_time(millisecond) + Ms,
    burn_until(Until).

burn_until(Until) ->
    case erlang:monotonic_time(millisecond) < Until of
        true -> _ = lists:sum(lists:seq(1, 100)), burn_until(Until);
        false -> ok
    end.

call_every(Server, Request, Ms, I) ->
    _ = gen_server:call(Server, {Request, I}, infinity),
    timer:sleep(Ms),
    call_every(Server, Request, Ms, I + 1).

hoard(Kept) ->
    timer:sleep(10),
    hoard([{kept, I, self()} || I <- lists:seq(1, 2000)] ++ Kept).

big(List) ->
    timer:sleep(50),
    _ = lists:seq(1, 1000),
    big(List).

keep(Bins) ->
    timer:sleep(10),
    keep([binary:copy(<<(length(Bins) rem 256)>>, 65536) | Bins]).

hold(Bins) ->
    receive stop -> Bins end.

crash_every(Ms, I) ->
    spawn(fun() -> exit({grumpy, I}) end),
    timer:sleep(Ms),
    crash_every(Ms, I + 1).

grumble_every(Ms) ->
    raised(fun ?MODULE:grumble/1, Ms),
    timer:sleep(Ms),
    grumble_every(Ms).

%% Returns once `Event' is enabled in a started session.
wait_for(Event) ->
    case lists:member(Event, dyntrace:enabled_events()) of
        true -> ok;
        false -> timer:sleep(50), wait_for(Event)
    end.

%% Calls `Fun(Arg)', which raises.
raised(Fun, Arg) ->
    try Fun(Arg) of
        _ -> ok
    catch
        error:_ -> ok
    end.

%% @doc Raises (traced with exception => true).
-spec fail(integer()) -> no_return().
fail(I) ->
    error({planted, I}).

%% @doc Raises (traced with exception => true).
-spec grumble(integer()) -> no_return().
grumble(I) ->
    error({grumpy, I}).

%% @doc Burns `Ms' of CPU in price_until/2: where `shop' spends its time.
-spec price(pos_integer()) -> ok.
price(Ms) ->
    price_until(erlang:monotonic_time(millisecond) + Ms, 0).

price_until(Until, N) ->
    case N rem 1000 =:= 0 andalso erlang:monotonic_time(millisecond) >= Until of
        true -> ok;
        false -> price_until(Until, N + 1)
    end.

%%%===================================================================
%%% The planted servers
%%%===================================================================

%% @doc gen_server: a planted server of kind `Kind'.
-spec init(atom() | {front, term()}) -> {ok, term()}.
init(ledger) ->
    {ok, {ledger, [], 0, first_call}};
init(Kind) ->
    {ok, Kind}.

%% @doc gen_server: `shop' prices for 12 ms, `audit' for 200 ms, `ledger'
%% scans its list (T^2/100 entries T ms after its first call), `steady'
%% naps 3 ms, `front' asks its store twice.
-spec handle_call(term(), gen_server:from(), term()) -> {reply, term(), term()}.
handle_call({buy, _}, _From, shop) ->
    {reply, price(12), shop};
handle_call({audit, _}, _From, audit) ->
    {reply, burn(200), audit};
handle_call({lookup, I}, _From, {ledger, List, Len, Since}) ->
    Found = lists:member({absent, I}, List),
    Now = erlang:monotonic_time(millisecond),
    Start = case Since of first_call -> Now; _ -> Since end,
    More = max(0, (Now - Start) * (Now - Start) div 100 - Len),
    {reply, Found, {ledger, lists:duplicate(More, {entry, I}) ++ List, Len + More, Start}};
handle_call({ask, _}, _From, {front, Store} = State) ->
    _ = [begin Store ! {get, self()}, receive {got, _} -> ok end end || _ <- [1, 2]],
    {reply, ok, State};
handle_call({nap, _}, _From, steady) ->
    timer:sleep(3),
    {reply, ok, steady}.

%% @doc gen_server: no casts.
-spec handle_cast(term(), term()) -> {noreply, term()}.
handle_cast(_, State) ->
    {noreply, State}.
