%%% @doc Peer nodes on this host for the suites that record several nodes
%%% with `record/2''s `nodes' option: this node made distributed, and
%%% peers that load the suite's code and dyntrace.
-module(dyntrace_peers).

-export([alive/1, start/2]).

%% @doc Makes this node distributed as `Name' (a suite's node is not, by
%% default), starting epmd; a distributed node stays as it is. `{error,
%% Why}' when distribution cannot start.
-spec alive(atom()) -> ok | {error, term()}.
alive(Name) ->
    case is_alive() of
        true ->
            ok;
        false ->
            %% `epmd -daemon' returns before the daemon listens.
            _ = os:cmd("epmd -daemon"),
            lttng_session:wait_until(fun() -> element(1, lttng_session:cmd("epmd -names")) =:= 0 end,
                                     50),
            case net_kernel:start([Name, shortnames]) of
                {ok, _} -> ok;
                {error, _} = Error -> Error
            end
    end.

%% @doc Starts a peer named after `Name' with the code of dyntrace, the
%% test helpers and `Suite' in its path, and dyntrace loaded: `{Peer, Node}'.
-spec start(atom(), module()) -> {pid(), node()}.
start(Name, Suite) ->
    Paths = lists:usort([filename:dirname(code:which(M))
                         || M <- [dyntrace, lttng_session, Suite, analyze_cmd]]),
    %% Over distribution (record/2 reaches the nodes so): erpc, not peer:call.
    {ok, P, Node} = peer:start(#{name => peer:random_name(Name),
                                 args => lists:append([["-pa", D] || D <- Paths])}),
    {module, dyntrace} = erpc:call(Node, code, ensure_loaded, [dyntrace]),
    {P, Node}.
