%%% @doc The workload of `scripts/cluster-demo.sh': a replicated key-value
%%% put across three nodes, traced by dyntrace on every node.
%%%
%%% It runs on the first node. On each node a `store' process holds values;
%%% a coordinator on the first node puts each key to the stores of the
%%% second and third nodes and waits for both acknowledgements, and the
%%% second node's store forwards a replica of every put to the third node's
%%% store. Keys repeat, so the same message text crosses the same pair of
%%% nodes many times. Every store and the coordinator trace their own sends
%%% and receives through dyntrace; LTTng decides what is recorded.
%%% ```
%%% erl -name n1@10.99.0.11 -s dyntrace_cluster_demo main n2@10.99.0.12 n3@10.99.0.13
%%% '''
-module(dyntrace_cluster_demo).

-export([main/1, store/2]).

-define(ROUNDS, 200).
-define(KEYS, 4).
-define(EVENTS, [message_send, message_receive, node_name]).

%% @doc Runs the workload with the two other nodes, prints what crossed
%% which pair of nodes, stops the other nodes and halts (status 0 on
%% success).
-spec main([node()]) -> no_return().
main([Second, Third] = Others) ->
    Nodes = [node() | Others],
    [pong = wait_ping(N, 100) || N <- Others],
    [{module, dyntrace} = rpc:call(N, code, ensure_loaded, [dyntrace]) || N <- Nodes],
    [ok = wait_enabled(N, 300) || N <- Nodes],
    %% Each node names itself and its peers when it sees node_name enabled
    %% (it looks once a second); this run is shorter, so ask now.
    [ok = rpc:call(N, dyntrace, announce_nodes, []) || N <- Nodes],
    %% A full mesh first, so that no put waits for a connection.
    pong = rpc:call(Second, net_adm, ping, [Third]),
    ThirdStore = start_store(Third, none),
    SecondStore = start_store(Second, ThirdStore),
    T0 = erlang:monotonic_time(microsecond),
    Coordinator = spawn_link(fun() -> coordinator([SecondStore, ThirdStore]) end),
    Ref = monitor(process, Coordinator),
    receive {'DOWN', Ref, process, Coordinator, normal} -> ok end,
    Us = erlang:monotonic_time(microsecond) - T0,
    %% The replicas travel on their own: wait until all have arrived.
    ?ROUNDS = stored(SecondStore, ?ROUNDS),
    ?ROUNDS * 2 = stored(ThirdStore, ?ROUNDS * 2),
    io:format("~b puts in ~.1f ms; messages between nodes:~n", [?ROUNDS, Us / 1000]),
    [io:format("  ~-16s -> ~-16s ~b~n", [From, To, ?ROUNDS])
     || {From, To} <- [{node(), Second}, {node(), Third}, {Second, node()},
                       {Third, node()}, {Second, Third}]],
    [exit(S, done) || S <- [SecondStore, ThirdStore]],
    [rpc:call(N, init, stop, []) || N <- Others],
    halt(0).

coordinator(Stores) ->
    trace_self(),
    [put_all(Stores, {key, I rem ?KEYS}, I) || I <- lists:seq(1, ?ROUNDS)],
    ok.

put_all(Stores, Key, Value) ->
    [S ! {put, Key, Value, self()} || S <- Stores],
    [receive {ok, Key} -> ok end || _ <- Stores].

start_store(Node, Replica) ->
    Store = spawn(Node, ?MODULE, store, [self(), Replica]),
    receive {ready, Store} -> Store end.

%% The number of puts and replicas `Store' has taken, once it reaches `Count'.
stored(Store, Count) ->
    Store ! {stored, self()},
    receive
        {stored, Store, Count} -> Count;
        {stored, Store, _} -> timer:sleep(10), stored(Store, Count)
    after 10000 -> timeout
    end.

%% @doc A store, traced from its start (then it tells `Parent'):
%% acknowledges every put and forwards it to `Replica'.
-spec store(pid(), pid() | none) -> no_return().
store(Parent, Replica) ->
    trace_self(),
    Parent ! {ready, self()},
    store_loop(Replica, 0).

store_loop(Replica, Stored) ->
    receive
        {put, Key, Value, From} ->
            From ! {ok, Key},
            [Replica ! {replica, Key, Value} || is_pid(Replica)],
            store_loop(Replica, Stored + 1);
        {replica, _Key, _Value} ->
            store_loop(Replica, Stored + 1);
        {stored, From} ->
            From ! {stored, self(), Stored},
            store_loop(Replica, Stored)
    end.

trace_self() ->
    erlang:trace(self(), true, [send, 'receive', {tracer, dyntrace, []}]).

wait_ping(_Node, 0) ->
    pang;
wait_ping(Node, N) ->
    case net_adm:ping(Node) of
        pong -> pong;
        pang -> timer:sleep(100), wait_ping(Node, N - 1)
    end.

%% The node's LTTng session may take a moment to enable the events there.
wait_enabled(Node, 0) ->
    io:format("the events were not enabled on ~s~n", [Node]),
    halt(1);
wait_enabled(Node, N) ->
    case ?EVENTS -- rpc:call(Node, dyntrace, enabled_events, []) of
        [] -> ok;
        _ -> timer:sleep(100), wait_enabled(Node, N - 1)
    end.
