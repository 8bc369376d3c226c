%%% @doc A traced 3-node cluster: each node on a host of its own (network,
%%% hostname, session daemon, epmd), every node's trace streamed to one
%%% lttng-relayd, and the relay's output read back. Needs root (namespaces).
-module(dyntrace_cluster_SUITE).

-include_lib("common_test/include/ct.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([t_one_trace_per_host/1,
         t_live_delivery/1,
         t_stop_removes_everything/1,
         t_demo_interrupted/1]).
-export([echo_start/0, ping_all/2, fill_stream/1]).

-define(EVENTS, [message_send, message_receive]).
%% Pings each node's sender makes to each other node's echo process.
-define(PINGS, 50).

suite() ->
    [{timetrap, {minutes, 5}}].

all() ->
    [t_one_trace_per_host,
     t_live_delivery,
     t_stop_removes_everything,
     t_demo_interrupted].

init_per_suite(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "cluster"),
    C = dyntrace_cluster:start(3, Dir),
    [{cluster, C} | Config].

end_per_suite(Config) ->
    dyntrace_cluster:stop(?config(cluster, Config)).

%%%===================================================================
%%% CASES
%%%===================================================================

%% Every node pings every other node's echo process with the same text,
%% all at once; the relay's output holds one trace per host, each with
%% exactly the sends and receives its node made, sends addressed to remote
%% pids as the sending node numbers them. Each trace names its node, and
%% the channel of every remote pid it wrote: the pid, renumbered, is a
%% receiver in the trace of the node so named. dyntrace-analyze pairs
%% every send with its receive on the right node, though the texts repeat
%% (the same `pong' from two nodes, the same-looking `{ping,<0.N.0>}' from
%% senders of the same local number on different nodes).
t_one_trace_per_host(Config) ->
    C = ?config(cluster, Config),
    Sessions = dyntrace_cluster:record(C, [node_name | ?EVENTS]),
    ok = ping_everyone(C),
    ok = dyntrace_cluster:finish(C),
    Events = dyntrace_cluster:read(C, Sessions),
    Hosts = [<<"node1">>, <<"node2">>, <<"node3">>],
    Hosts = lists:usort([H || #{host := H} <- Events]),
    [begin
         Sends = [E || #{host := H, name := message_send} = E <- Events, H =:= Host],
         Receives = [E || #{host := H, name := message_receive} = E <- Events, H =:= Host],
         %% Its sender's pings and its echo's pongs; the same received.
         {Host, ?PINGS * 4, ?PINGS * 4} = {Host, length(Sends), length(Receives)},
         Pings = [E || E <- Sends,
                       string:prefix(lttng_session:field("message", E), "{ping,") =/= nomatch],
         ?PINGS * 2 = length(Pings),
         [true = remote_pid(lttng_session:field("to", E)) || E <- Sends]
     end || Host <- Hosts],
    Names = node_names(Events),
    Own = maps:from_list([{H, P} || {{H, 0}, P} <- maps:to_list(Names)]),
    Hosts = lists:sort(maps:keys(Own)),
    HostOf = maps:from_list([{P, H} || {H, P} <- maps:to_list(Own)]),
    Receivers = lists:usort([{H, lttng_session:field("to", E)}
                             || #{host := H, name := message_receive} = E <- Events]),
    [begin
         {match, [Channel, Local]} = re:run(To, "^<([0-9]+)\\.(.*)$",
                                            [{capture, all_but_first, binary}]),
         Peer = maps:get({Host, binary_to_integer(Channel)}, Names),
         true = lists:member({maps:get(Peer, HostOf), <<"<0.", Local/binary>>}, Receivers)
     end || #{host := Host, name := message_send, fields := #{<<"to">> := To}} <- Events],
    ok = all_delivered(C, analyze(["delivery", "--json" | dyntrace_cluster:trace_dirs(C, Sessions)])).

%% The same, read live from the relay while the nodes record. The viewer
%% attaches after each node wrote its names (when the event was enabled)
%% and nobody writes them again by hand: the sends and receives wait for
%% the nodes' next 10-s refresh and are paired then, within a printed
%% table; the last table, when the sessions end, has every delivery.
t_live_delivery(Config) ->
    C = ?config(cluster, Config),
    Sessions = dyntrace_cluster:record(C, [node_name | ?EVENTS], #{live => true}),
    Urls = dyntrace_cluster:live_urls(C, Sessions),
    %% The names written when the event was enabled (the announcer looks
    %% once a second) go out before the viewer attaches, and other events
    %% after them: a viewer starts from a stream's last packet.
    timer:sleep(2000),
    [ok = dyntrace_cluster:call(C, N, ?MODULE, fill_stream, [2000]) || N <- dyntrace_cluster:nodes(C)],
    timer:sleep(2000),
    Port = dyntrace_cluster:hub_port(C, [analyzer(), "delivery", "--json", "--every", "1s" | Urls]),
    %% A live viewer sees a stream's events from when it attaches, and
    %% looks for streams once a live-timer period (1 s): give it a few
    %% before the workload starts.
    timer:sleep(5000),
    ok = ping_everyone(C),
    Delivered = fun(Line) ->
                        try all_delivered(C, Line)
                        catch error:_ -> false
                        end
                end,
    %% The refresh comes at most 11 s after the event was enabled; the
    %% analysis then has it within its 2-s reordering window and prints
    %% every second.
    {Seen, Buffer} = lines_until(Port, Delivered, <<>>, [],
                                 erlang:monotonic_time(millisecond) + 40000),
    ct:log("~b tables before every delivery was paired; in each, {events read, sends and "
           "receives waiting for names}: ~p", [length(Seen), [progress(L) || L <- Seen]]),
    ok = dyntrace_cluster:finish(C),
    {0, Out} = analyze_cmd:collect(Port),
    Last = lists:last(binary:split(<<Buffer/binary, Out/binary>>, <<"\n">>, [global, trim_all])),
    ok = all_delivered(C, Last).

%% Reads the port's lines until `Done' holds for one; the lines before it
%% and what is left unread of the last chunk.
lines_until(Port, Done, Buffer, Seen, Deadline) ->
    case binary:split(Buffer, <<"\n">>) of
        [Line, Rest] ->
            case Done(Line) of
                ok -> {lists:reverse(Seen), Rest};
                false -> lines_until(Port, Done, Rest, [Line | Seen], Deadline)
            end;
        [Partial] ->
            Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
            receive
                {Port, {data, D}} -> lines_until(Port, Done, <<Partial/binary, D/binary>>, Seen, Deadline)
            after Left ->
                    ct:log("last tables:~n~s", [lists:join("\n", lists:sublist(Seen, 3))]),
                    error(not_all_delivered_live)
            end
    end.

progress(Line) ->
    {#{<<"events">> := Events, <<"delivery_summary">> := [#{<<"waiting_for_names">> := W}]}, _} =
        json_text:value(Line),
    {Events, W}.

%% Stopping the cluster leaves none of its namespaces and processes.
t_stop_removes_everything(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "second"),
    C = dyntrace_cluster:start(2, Dir),
    Prefix = read_file(filename:join(Dir, "prefix")),
    Keepers = [read_file(filename:join(Dir, F)) || F <- ["n1.pid", "n2.pid", "relayd.pid"]],
    [true = alive(P) || P <- Keepers],
    3 = length(namespaces(Prefix)),
    ok = dyntrace_cluster:stop(C),
    [] = namespaces(Prefix),
    [false = alive(P) || P <- Keepers],
    ok.

%% The demo script, interrupted once its nodes run, removes everything it
%% started.
t_demo_interrupted(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "demo"),
    Demo = dyntrace_cluster:script("cluster-demo.sh"),
    Port = open_port({spawn_executable, Demo}, [{args, [Dir]}, {env, [{"DYNTRACE_BUILT", "1"}]},
                                               exit_status, stderr_to_stdout]),
    {os_pid, Pid} = erlang:port_info(Port, os_pid),
    PrefixFile = filename:join(Dir, "prefix"),
    ok = lttng_session:wait_until(fun() -> filelib:is_regular(filename:join(Dir, "n3.pid")) end, 600),
    Prefix = read_file(PrefixFile),
    Keepers = [read_file(filename:join(Dir, F)) || F <- ["n1.pid", "n2.pid", "n3.pid"]],
    4 = length(namespaces(Prefix)),
    _ = os:cmd("kill -TERM " ++ integer_to_list(Pid)),
    Status = receive {Port, {exit_status, S}} -> S after 60000 -> timeout end,
    true = Status =/= 0,
    [] = namespaces(Prefix),
    [false = alive(P) || P <- Keepers],
    false = filelib:is_regular(PrefixFile),
    ok.

%% Every node's sender pings every other node's echo process, all nodes
%% at once.
ping_everyone(C) ->
    Nodes = dyntrace_cluster:nodes(C),
    Echoes = [{N, dyntrace_cluster:call(C, N, ?MODULE, echo_start, [])} || N <- Nodes],
    Parent = self(),
    _ = [spawn_link(fun() ->
                            Others = [E || {M, E} <- Echoes, M =/= N],
                            Parent ! {done, N, dyntrace_cluster:call(C, N, ?MODULE, ping_all,
                                                                     [Others, ?PINGS])}
                    end) || N <- Nodes],
    Replies = [receive {done, N, R} -> R end || N <- Nodes],
    [?PINGS * 2 = R || R <- Replies],
    ok.

%% The delivery table has every ordered pair of nodes, each with its
%% pings and pongs (2 x ?PINGS), none unmatched, none paired by guess.
all_delivered(C, Json) ->
    {#{<<"delivery">> := Rows, <<"delivery_summary">> := [Summary]}, _} = json_text:value(Json),
    ct:log("~p~n~p", [Rows, Summary]),
    Names = [atom_to_binary(N) || N <- dyntrace_cluster:nodes(C)],
    Expected = [{A, B, ?PINGS * 2, 0} || A <- Names, B <- Names, A =/= B],
    Expected = lists:sort([{A, B, N, U} || #{<<"from">> := A, <<"to">> := B, <<"count">> := N,
                                             <<"unmatched">> := U} <- Rows]),
    #{<<"unresolved">> := 0, <<"waiting_for_names">> := 0, <<"ambiguous">> := 0,
      <<"skewed">> := Skewed} = Summary,
    %% Each node's daemon measures its own clock offset for its trace: a
    %% few receives may be stamped microseconds before their send.
    true = Skewed =< 10,
    [true = Max > 0 andalso Max < 1000000000 || #{<<"max_ns">> := Max} <- Rows],
    ok.

analyzer() ->
    filename:join(code:priv_dir(dyntrace), "dyntrace-analyze").

analyze(Args) ->
    Port = open_port({spawn_executable, analyzer()}, [{args, Args}, exit_status, binary]),
    {0, Out} = analyze_cmd:collect(Port),
    Out.

%%%===================================================================
%%% IN THE NODES
%%%===================================================================

%% @doc Starts a traced process that answers every `ping' with `pong'.
-spec echo_start() -> pid().
echo_start() ->
    Echo = spawn(fun echo/0),
    erlang:trace(Echo, true, [send, 'receive', {tracer, dyntrace, []}]),
    Echo.

echo() ->
    receive {ping, From} -> From ! pong end,
    echo().

%% @doc Writes `N' receives that no send pairs with (the sender is not
%% traced) into this node's stream.
-spec fill_stream(pos_integer()) -> ok.
fill_stream(N) ->
    {Sink, Ref} = spawn_monitor(fun() -> receive stop -> ok end end),
    1 = erlang:trace(Sink, true, ['receive', {tracer, dyntrace, []}]),
    [Sink ! {filler, I} || I <- lists:seq(1, N)],
    Sink ! stop,
    receive {'DOWN', Ref, process, Sink, normal} -> ok end.

%% @doc Traced, sends `N' pings to each of `Echoes' and waits for each pong;
%% the number of pongs.
-spec ping_all([pid()], pos_integer()) -> non_neg_integer().
ping_all(Echoes, N) ->
    erlang:trace(self(), true, [send, 'receive', {tracer, dyntrace, []}]),
    Pongs = lists:sum([ping(E) || _ <- lists:seq(1, N), E <- Echoes]),
    erlang:trace(self(), false, [send, 'receive']),
    Pongs.

ping(Echo) ->
    Echo ! {ping, self()},
    receive pong -> 1 after 10000 -> 0 end.

%%%===================================================================
%%% helpers
%%%===================================================================

%% A pid of another node, as the VM writes it: `<C.N.S>' with C > 0.
remote_pid(Text) ->
    case re:run(Text, "^<([0-9]+)\\.[0-9]+\\.[0-9]+>$", [{capture, all_but_first, list}]) of
        {match, [C]} -> list_to_integer(C) > 0;
        nomatch -> false
    end.

%% {Host, Channel} => Peer, from the node_name events.
node_names(Events) ->
    maps:from_list([{{H, C}, P} || #{host := H, name := node_name,
                                     fields := #{<<"channel">> := C, <<"peer">> := P}} <- Events]).

namespaces(Prefix) ->
    [L || L <- string:lexemes(os:cmd("ip netns list"), "\n"), string:prefix(L, Prefix) =/= nomatch].

alive(Pid) ->
    filelib:is_dir("/proc/" ++ Pid).

read_file(Path) ->
    {ok, Bin} = file:read_file(Path),
    string:trim(binary_to_list(Bin)).
