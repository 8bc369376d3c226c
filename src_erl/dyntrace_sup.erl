%%% @doc The top of dyntrace's processes: `dyntrace_ctl', the announcer
%%% (`dyntrace_node_names'), and the samplers and recordings as they start.
%%% Started on first use (or by `dyntrace_app'), registered and linked to
%%% nobody: it never takes the node down. It owns the table where
%%% `dyntrace_ctl' writes what it sets, so that a restarted `dyntrace_ctl'
%%% finds it again. See docs/reference.md and docs/releases.md.
-module(dyntrace_sup).
-behaviour(supervisor).

%%% PUBLIC (through dyntrace_ctl) %%%
-export([ensure_started/0, stop/0, start_child/1, stop_child/1, table/0]).

%%% PRIVATE EXPORTS (supervisor) %%%
-export([init/1]).

-define(SERVER, ?MODULE).
-define(TABLE, dyntrace_ctl).
%% Restarts of dyntrace_ctl tolerated within the period (seconds).
-define(INTENSITY, 10).
-define(PERIOD, 10).
%% How long dyntrace_ctl has to undo what it set when the supervisor stops.
-define(CTL_SHUTDOWN_MS, 30000).
%% Starts tried, 20 ms apart, while a previous supervisor's processes end.
-define(START_TRIES, 100).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc The supervisor's pid, started now unless it runs.
-spec ensure_started() -> pid().
ensure_started() ->
    case whereis(?SERVER) of
        undefined -> start();
        Pid -> Pid
    end.

%% @doc Stops the supervisor and its processes (`dyntrace_ctl' first undoes
%% what it set); `ok' also when it was not running.
-spec stop() -> ok.
stop() ->
    case whereis(?SERVER) of
        undefined ->
            ok;
        Pid ->
            try proc_lib:stop(Pid, shutdown, infinity)
            catch exit:noproc -> ok
            end
    end.

%% @doc Starts a temporary child (a sampler or a recording) under the
%% supervisor: its pid, or the start's error.
-spec start_child(supervisor:child_spec()) -> {ok, pid()} | {error, term()}.
start_child(#{} = Spec) ->
    case supervisor:start_child(?SERVER, Spec#{restart => temporary}) of
        {ok, Pid} -> {ok, Pid};
        {ok, Pid, _} -> {ok, Pid};
        {error, _} = Error -> Error
    end.

%% @doc Stops a child started by {@link start_child/1} and waits until it
%% has ended; `ok' also when it had ended.
-spec stop_child(term()) -> ok.
stop_child(Id) ->
    _ = supervisor:terminate_child(?SERVER, Id),
    ok.

%% @doc The table where `dyntrace_ctl' keeps what it set.
-spec table() -> ets:table().
table() ->
    ?TABLE.

%%%===================================================================
%%% STARTING
%%%===================================================================

%% Started by a process of its own, which unlinks it and ends: the
%% supervisor ends with nobody but itself, and a start that fails (a
%% dyntrace_ctl of the previous supervisor still ending) never takes the
%% caller down; it is tried again. A starter killed before it unlinked
%% takes the new supervisor with it, which is harmless: nothing was set.
start() ->
    start(?START_TRIES).

start(Tries) ->
    {Starter, Ref} = spawn_monitor(fun() ->
                                           Result = supervisor:start_link({local, ?SERVER},
                                                                          ?MODULE, []),
                                           _ = [unlink(Pid) || {ok, Pid} <- [Result]],
                                           exit({started, Result})
                                   end),
    receive
        {'DOWN', Ref, process, Starter, {started, {ok, Pid}}} ->
            Pid;
        {'DOWN', Ref, process, Starter, {started, {error, {already_started, Pid}}}} ->
            Pid;
        {'DOWN', Ref, process, Starter, _} when Tries > 0 ->
            timer:sleep(20),
            start(Tries - 1);
        {'DOWN', Ref, process, Starter, Reason} ->
            error({dyntrace_sup, Reason})
    end.

%% @private
-spec init([]) -> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init([]) ->
    %% Not the caller's group leader: a remote shell's goes away with it.
    case whereis(user) of
        undefined -> ok;
        User -> group_leader(User, self())
    end,
    ?TABLE = ets:new(?TABLE, [named_table, public, set]),
    Ctl = #{id => dyntrace_ctl,
            start => {dyntrace_ctl, start_link, []},
            restart => permanent,
            shutdown => ?CTL_SHUTDOWN_MS,
            type => worker},
    Announcer = #{id => dyntrace_node_names,
                  start => {dyntrace_announcer, start_link, []},
                  restart => transient,
                  shutdown => brutal_kill,
                  type => worker},
    {ok, {#{strategy => one_for_one, intensity => ?INTENSITY, period => ?PERIOD},
          [Ctl, Announcer]}}.
