%%% @doc The announcer: a registered process (`dyntrace_node_names') that
%%% writes the `node_name' events when the module loads, when a node
%%% connects or disconnects, when the event becomes enabled and every 10 s
%%% while it is, and the registered processes' `process_name' events when
%%% that event becomes enabled. `dyntrace:announce_nodes/0' and
%%% `announce_processes/0' write them on request; see docs/reference.md.
-module(dyntrace_announcer).

-export([announce_nodes/0, announce_processes/0, start/0, start_link/0]).

%%% PRIVATE EXPORTS (the loop, called as ?MODULE: to move to new code) %%%
-export([loop/1]).

-define(NODE_NAMES, dyntrace_node_names).
%% How often the announcer looks whether `node_name' became enabled, and
%% how often it rewrites the names while it is.
-define(NODE_NAMES_POLL_MS, 1000).
-define(NODE_NAMES_REFRESH_MS, 10000).
%% How many times (10 ms apart) the announcer waits for dyntrace's on_load
%% to return.
-define(ON_LOAD_WAITS, 1000).
%% How long (in 10 ms steps) the announcer waits at load for LTTng-UST to
%% have registered with a session daemon that records its names.
-define(START_POLLS, 500).
-define(START_POLL_MS, 10).
%% The most processes announce_processes/0 names in one call.
-define(MAX_ANNOUNCED, 100000).

%% @doc See {@link dyntrace:announce_nodes/0}.
-spec announce_nodes() -> ok.
announce_nodes() ->
    write_node_names(request, [node() | nodes(connected)]).

%% @doc See {@link dyntrace:announce_processes/0}.
-spec announce_processes() -> ok.
announce_processes() ->
    case lists:member(process_name, dyntrace:enabled_events()) of
        true ->
            _ = [case dyntrace_lib:process_name(P) of
                     [] -> ok;
                     Name -> dyntrace:emit_process_name(P, Name)
                 end || P <- lists:sublist(erlang:processes(), ?MAX_ANNOUNCED)],
            ok;
        false ->
            ok
    end.

%% @doc Starts the announcer unsupervised (dyntrace's on_load), or asks the
%% one that runs to write the names again.
-spec start() -> ok.
start() ->
    case whereis(?NODE_NAMES) of
        undefined -> _ = spawn(fun init/0), ok;
        Pid -> Pid ! {announce, load}, ok
    end.

%% @doc The announcer as `dyntrace_sup''s child: it replaces the one the
%% load started unsupervised (which holds nothing the new one does not
%% find again). Not for users.
-spec start_link() -> {ok, pid()}.
start_link() ->
    case whereis(?NODE_NAMES) of
        undefined ->
            ok;
        Old ->
            Ref = monitor(process, Old),
            exit(Old, kill),
            receive {'DOWN', Ref, process, Old, _} -> ok end
    end,
    {ok, spawn_link(fun init/0)}.

%% Spawned from the on_load function: the module's exports answer only
%% once that has returned (a call before is undef, as in an embedded
%% release's boot), so the announcer waits for it.
init() ->
    try register(?NODE_NAMES, self()) of
        true ->
            ok = net_kernel:monitor_nodes(true, [{node_type, all}]),
            wait_loaded(?ON_LOAD_WAITS),
            ?MODULE:loop(#{node => node(), enabled => false, since => 0,
                                      start => {?START_POLLS, [node_name, process_name]}})
    catch
        %% Another announcer registered first.
        error:badarg -> ok
    end.

%% LTTng-UST registers with the session daemon from its own thread, 50 to
%% 100 ms (more on a loaded host) after the module loads: a row written
%% before is lost. The load's rows are written once this node sees their
%% event enabled: the node's names once `node_name' is, the registered
%% processes' names once `process_name' is (the daemon may enable one
%% before the other). The announcer looks every 10 ms for at most 5 s
%% after the load (then every second, as before): a node that lives a
%% second names itself in its trace. Answers the events still to write.
announce_at_start(Left) ->
    Now = [E || E <- Left, lists:member(E, dyntrace:enabled_events())],
    _ = [write_load_rows(E) || E <- Now],
    Left -- Now.

write_load_rows(node_name) ->
    write_node_names(load, [node() | nodes(connected)]);
write_load_rows(process_name) ->
    _ = [try dyntrace:emit_process_name(P, Name) catch error:badarg -> ok end
         || Name <- registered(), P <- [whereis(Name)], is_pid(P)],
    ok.

wait_loaded(0) ->
    exit(normal);
wait_loaded(Tries) ->
    case erlang:module_loaded(dyntrace) of
        true -> ok;
        false -> receive after 10 -> wait_loaded(Tries - 1) end
    end.

%% @doc The announcer's loop, exported so that it moves to new code when
%% the module is reloaded. Not for users.
-spec loop(#{node := node(), enabled := boolean(), since := non_neg_integer(),
                         named => boolean(),
                         start => {non_neg_integer(), [dyntrace:event_name()]}}) ->
          no_return().
loop(State) ->
    Timeout = case State of
                  #{start := {Polls, [_ | _]}} when Polls > 0 -> ?START_POLL_MS;
                  _ -> ?NODE_NAMES_POLL_MS
              end,
    receive
        {nodeup, Node, _} ->
            write_node_names(nodeup, [node(), Node]),
            ?MODULE:loop(State);
        {nodedown, Node, _} ->
            %% Not when distribution stopped: the node is `nonode@nohost'
            %% then, and would number its own former name as a stranger.
            is_alive() andalso write_node_names(nodedown, [Node]),
            ?MODULE:loop(State);
        {announce, Why} ->
            write_node_names(Why, [node() | nodes(connected)]),
            ?MODULE:loop(State)
    after Timeout ->
            ?MODULE:loop(node_names_tick(State))
    end.

%% The first seconds after the load: the load's rows. Then: the rows
%% again when the event became enabled, the node was renamed, or every
%% 10 s while it is enabled.
node_names_tick(#{start := {Polls, [_ | _] = Left}} = State) when Polls > 0 ->
    Still = announce_at_start(Left),
    Named = State#{named => not lists:member(process_name, Still)},
    case lists:member(node_name, Left) andalso not lists:member(node_name, Still) of
        true -> Named#{start := {Polls - 1, Still}, enabled := true, since := 0};
        false -> Named#{start := {Polls - 1, Still}}
    end;
node_names_tick(#{node := Self, enabled := WasEnabled, since := Since} = State) ->
    Enabled = lists:member(node_name, dyntrace:enabled_events()),
    %% A session that enables `process_name' after the load's first
    %% seconds (made from outside, after trace/3 and the like started):
    %% the registered processes' names, as at the load, once per time the
    %% event becomes enabled.
    Named = lists:member(process_name, dyntrace:enabled_events()),
    _ = Named andalso not maps:get(named, State, false) andalso write_load_rows(process_name),
    Why = if
              Enabled andalso not WasEnabled -> enable;
              Enabled andalso node() =/= Self -> nodeup;
              Enabled andalso Since >= ?NODE_NAMES_REFRESH_MS -> refresh;
              true -> none
          end,
    Why =/= none andalso write_node_names(Why, [node() | nodes(connected)]),
    State#{node := node(), enabled := Enabled, named => Named,
           since := case Why of
                        none -> Since + ?NODE_NAMES_POLL_MS;
                        _ -> 0
                    end}.

write_node_names(Why, Nodes) ->
    Self = node(),
    [dyntrace:emit_node_name(Self, channel(N), N, Why) || N <- Nodes],
    ok.

%% The channel number the VM writes first in the text of `Node''s pids,
%% ports and refs here: 0 for this node, otherwise the index of `Node''s
%% name in this node's atom table. Read from the text of a pid of `Node'.
channel(Node) when Node =:= node() ->
    0;
channel(Node) ->
    Name = atom_to_binary(Node, utf8),
    %% NEW_PID_EXT, node as ATOM_UTF8_EXT, number, serial and creation 0.
    Pid = binary_to_term(<<131, 88, 118, (byte_size(Name)):16, Name/binary, 0:32, 0:32, 0:32>>),
    [Channel | _] = string:lexemes(pid_to_list(Pid), "<."),
    list_to_integer(Channel).
