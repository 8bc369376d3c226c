%%% @doc Test helper: a cluster of Erlang nodes, each on a "host" of its
%%% own (network, UTS, PID and mount namespaces, with its own LTTng session
%%% daemon and epmd, made by `scripts/cluster.sh'), all streaming their
%%% traces to one lttng-relayd, and the suite's node driving them.
%%% ```
%%% C = dyntrace_cluster:start(3, Dir),         % namespaces, relay, peers
%%% [N1, N2, N3] = dyntrace_cluster:nodes(C),
%%% dyntrace_cluster:call(C, N1, M, F, A),      % apply(M, F, A) on node 1
%%% Names = dyntrace_cluster:record(C, Events), % a session on each node
%%% ... work ...
%%% dyntrace_cluster:finish(C),
%%% Events = dyntrace_cluster:read(C, Names),   % every node's events
%%% dyntrace_cluster:stop(C).                   % nothing of it is left
%%% '''
%%% The suite's node reaches each peer through its standard input and
%%% output (the `peer' module), not over the network: only the cluster's
%%% own namespaces hold its addresses.
-module(dyntrace_cluster).

-export([start/2, stop/1, nodes/1, call/5, script/1,
         record/2, record/3, finish/1, read/2, trace_dirs/2, live_urls/2, hub_port/2]).

-type cluster() :: #{dir := string(), script := string(),
                     peers := #{node() => pid()}, nodes := [node()]}.
-export_type([cluster/0]).

-define(COOKIE, "dyntrace_cluster_test").
-define(CALL_TIMEOUT, 120000).

%% @doc Starts `Count' nodes, named `n1@10.99.0.11'..., and the relay, with
%% `Dir' holding the cluster's state and the relay's output (`Dir/relay').
-spec start(pos_integer(), string()) -> cluster().
start(Count, Dir) ->
    Script = script("cluster.sh"),
    ok = sh_ok(Script ++ " up '" ++ Dir ++ "' " ++ integer_to_list(Count)),
    C0 = #{dir => Dir, script => Script, peers => #{}, nodes => []},
    try
        lists:foldl(fun(I, C) -> start_node(C, I) end, C0, lists:seq(1, Count))
    catch
        Class:Reason:Stack ->
            stop(C0),
            erlang:raise(Class, Reason, Stack)
    end.

start_node(#{dir := Dir, script := Script, peers := Peers, nodes := Nodes} = C, I) ->
    Index = integer_to_list(I),
    Address = string:trim(os:cmd(Script ++ " address '" ++ Dir ++ "' " ++ Index)),
    Paths = lists:usort([filename:dirname(code:which(M))
                         || M <- [dyntrace, lttng_session, ?MODULE]]),
    {ok, Peer, Node} =
        peer:start(#{exec => {Script, ["exec", Dir, Index, "erl"]},
                     connection => standard_io,
                     name => list_to_atom("n" ++ Index), host => Address,
                     longnames => true,
                     args => ["-setcookie", ?COOKIE | lists:append([["-pa", P] || P <- Paths])],
                     wait_boot => 60000}),
    C#{peers := Peers#{Node => Peer}, nodes := Nodes ++ [Node]}.

%% @doc Stops the nodes and removes the namespaces, daemons and processes
%% of the cluster; the relay's output stays.
-spec stop(cluster()) -> ok.
stop(#{dir := Dir, script := Script, peers := Peers}) ->
    %% A node that is already gone is fine: the namespaces go next.
    [try peer:stop(P) catch _:_ -> ok end || P <- maps:values(Peers)],
    ok = sh_ok(Script ++ " down '" ++ Dir ++ "'").

%% @doc The nodes' names, in order.
-spec nodes(cluster()) -> [node()].
nodes(#{nodes := Nodes}) ->
    Nodes.

%% @doc `apply(M, F, A)' on `Node'.
-spec call(cluster(), node(), module(), atom(), list()) -> term().
call(#{peers := Peers}, Node, M, F, A) ->
    peer:call(maps:get(Node, Peers), M, F, A, ?CALL_TIMEOUT).

%% @doc The path of a script of the project's `scripts/' directory.
-spec script(string()) -> string().
script(Name) ->
    %% The suites run from rebar3's _build; the scripts are in the checkout.
    Up = fun(D) -> filename:dirname(D) end,
    find_up(Up(code:which(?MODULE)), Name, Up).

find_up("/", Name, _Up) ->
    error({not_found, Name});
find_up(Dir, Name, Up) ->
    Path = filename:join([Dir, "scripts", Name]),
    case filelib:is_regular(Path) of
        true -> Path;
        false -> find_up(Up(Dir), Name, Up)
    end.

%% @doc `record(C, Events, #{})'.
-spec record(cluster(), [atom()]) -> [string()].
record(C, Events) ->
    record(C, Events, #{}).

%% @doc On every node: loads dyntrace, creates a session streamed to the
%% relay with `Events' enabled (`#{live => true}': a live session), starts
%% it and waits until the node sees the events enabled. The sessions'
%% names, in node order.
-spec record(cluster(), [atom()], #{live => boolean()}) -> [string()].
record(#{nodes := Nodes, dir := Dir, script := Script} = C, Events, Opts) ->
    Relay = string:trim(os:cmd(Script ++ " address '" ++ Dir ++ "' 0")),
    [begin
         {module, dyntrace} = call(C, N, code, ensure_loaded, [dyntrace]),
         ok = call(C, N, lttng_session, wait_registered, []),
         S = call(C, N, lttng_session, create,
                  [cluster, Events, #{url => "net://" ++ Relay,
                                      live => maps:get(live, Opts, false)}]),
         ok = call(C, N, lttng_session, start, [S]),
         ok = call(C, N, dyntrace_rel_node, wait_enabled, [Events]),
         call(C, N, persistent_term, put, [dyntrace_cluster_session, S]),
         maps:get(name, S)
     end || N <- Nodes].

%% @doc On every node: destroys the session, which sends the rest of its
%% trace to the relay first.
-spec finish(cluster()) -> ok.
finish(#{nodes := Nodes} = C) ->
    [begin
         S = call(C, N, persistent_term, get, [dyntrace_cluster_session]),
         ok = call(C, N, lttng_session, stop, [S]),
         _ = call(C, N, lttng_session, cmd_ok, ["lttng destroy " ++ maps:get(name, S)])
     end || N <- Nodes],
    ok.

%% @doc The events of the sessions `Names' (all nodes') from the relay's
%% output, in timestamp order.
-spec read(cluster(), [string()]) -> [lttng_session:event()].
read(C, Names) ->
    Events = lists:append([lttng_session:read(#{name => Dir, dir => Dir})
                           || Dir <- trace_dirs(C, Names)]),
    lists:sort(fun(#{ts := A}, #{ts := B}) -> A =< B end, Events).

%% @doc Where the relay wrote the sessions `Names' (on every host).
-spec trace_dirs(cluster(), [string()]) -> [string()].
trace_dirs(#{dir := Dir}, Names) ->
    lists:usort([Trace || Name <- Names,
                          Trace <- filelib:wildcard(filename:join([Dir, "relay", "*",
                                                                   Name ++ "-*"]))]).

%% @doc The lttng-live URLs of the sessions `Names' (in node order).
-spec live_urls(cluster(), [string()]) -> [string()].
live_urls(#{dir := Dir, script := Script}, Names) ->
    Relay = string:trim(os:cmd(Script ++ " address '" ++ Dir ++ "' 0")),
    [lists:flatten(io_lib:format("net://~s/host/node~b/~s", [Relay, I, Name]))
     || {I, Name} <- lists:zip(lists:seq(1, length(Names)), Names)].

%% @doc Runs `[Program | Args]' in the hub namespace, beside the relay
%% (where the live port is), as a port: `{exit_status, _}' and its output
%% (stdout and stderr) come as port messages.
-spec hub_port(cluster(), [string()]) -> port().
hub_port(#{dir := Dir, script := Script}, Command) ->
    open_port({spawn_executable, Script},
              [{args, ["hub", Dir | Command]}, exit_status, binary, stderr_to_stdout]).

sh_ok(Cmd) ->
    case lttng_session:cmd(Cmd) of
        {0, _} -> ok;
        {Status, Out} -> error({command_failed, Cmd, Status, Out})
    end.
