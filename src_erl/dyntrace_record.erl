%%% @doc `dyntrace:record/2': one call records this node into an LTTng
%%% session of its own (made, started, stopped and destroyed with the
%%% `lttng' command, by a worker under dyntrace's supervisor), sets the
%%% flags, patterns and samplers through `dyntrace_ctl', and leaves the
%%% node and the session daemon as they were; `mode => flight' and
%%% `snapshot/1'; `lttng => external' for a session made outside the node
%%% (`dyntrace record'). What it does step by step, and why it is safe on
%%% a production node: docs/recording.md.
-module(dyntrace_record).
-behaviour(gen_server).

%%% PUBLIC (through dyntrace) %%%
-export([record/2, snapshot/1, events/1, events/2]).

%%% For dyntrace_nodes %%%
-export([new_name/0, temp_dir/0]).

%%% For dyntrace_nodes and dyntrace_cli (sessions made outside a node) %%%
-export([session_steps/4]).

%%% For dyntrace_ctl %%%
-export([start_link/2, stop/1, finish/1, describe/1, destroy_session/1, shutdown_ms/0]).

%%% For dyntrace_cli (the session it drives from outside) %%%
-export([lttng/1]).

%%% PRIVATE EXPORTS (gen_server) %%%
-export([init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2]).

-type item() :: {trace, dyntrace_ctl:procs(), [dyntrace_ctl:event_or_group()]}
              | {trace, dyntrace_ctl:procs(), [dyntrace_ctl:event_or_group()],
                 dyntrace_ctl:trace_opts()}
              | {calls, dyntrace_ctl:call_spec() | [dyntrace_ctl:call_spec()]}
              | {calls, dyntrace_ctl:call_spec() | [dyntrace_ctl:call_spec()],
                 dyntrace_ctl:calls_opts()}
              | {sample, dyntrace_sampler:procs()}
              | {sample, dyntrace_sampler:procs(), dyntrace_sampler:opts()}
              | memory
              | {memory, dyntrace_memory:opts()}
              | {focus, dyntrace_triage:opts()}.
-type opts() :: #{duration => pos_integer() | infinity,
                  max_events => pos_integer(),
                  wait => boolean(),
                  mode => normal | flight,
                  dir => file:filename_all(),
                  lttng => internal | external,
                  max_term_bytes => dyntrace:max_term_bytes(),
                  payload => dyntrace:payload_mode()
                           | #{dyntrace:field_kind() => dyntrace:payload_mode()},
                  redact => [term()]}.
-type handle() :: pos_integer().
-type status() :: #{id := pos_integer(),
                    kind := recording,
                    mode := normal | flight,
                    session := string(),
                    dir := file:filename(),
                    events := [dyntrace:event_name()],
                    lttng := internal | external,
                    parts := [pos_integer()],
                    duration := pos_integer() | infinity,
                    ms_left := non_neg_integer() | infinity}.
%% A checked recording, ready to run.
-opaque plan() :: #{name := string(),
                    dir := file:filename(),
                    mode := normal | flight,
                    duration := pos_integer() | infinity,
                    wait := boolean(),
                    parts := [dyntrace_ctl:plan() | dyntrace_sampler:plan()],
                    events := [dyntrace:event_name()],
                    budget := dyntrace:event_budget() | none,
                    lttng := internal | external,
                    caller := node() | none}.
-export_type([item/0, opts/0, handle/0, status/0, plan/0]).

%% The calls' rate guard a recording sets unless a calls item sets its
%% own: a function called more than 20,000 times a second loses its
%% pattern (dyntrace_guard).
-define(MAX_RATE, {20000, 1000}).
-define(DEFAULT_MS, 10000).
%% The events that name the node and its processes in every recording.
-define(NAMES, [node_name, process_name]).
%% How long a `lttng' command may take, and how long the recording waits
%% for this node to see its events enabled.
-define(COMMAND_MS, 30000).
-define(ENABLED_MS, 10000).
%% How often a recording with `max_events' looks whether they are spent.
-define(POLL_MS, 100).
-define(PROVIDER, "org_erlang_dyntrace").
%% The options of the recording itself; the tracer's go to every part.
-define(OWN_OPTS, [duration, max_events, wait, mode, dir, lttng]).
-define(TRACER_OPTS, [max_term_bytes, payload, redact]).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc See {@link dyntrace:record/2}.
-spec record([item()] | triage, opts()) -> {ok, file:filename() | handle()} | {error, term()}.
record(What, Opts) ->
    #{wait := Wait} = Plan = plan(What, Opts),
    case dyntrace_ctl_client:record_start(Plan) of
        {ok, Id, Pid} ->
            case call(Pid, setup) of
                ok when Wait -> call(Pid, wait);
                ok -> {ok, Id};
                {error, _} = Error -> Error
            end;
        {error, _} = Error ->
            Error
    end.

%% @doc The LTTng events a recording of `What' enables: what a session
%% made outside the node must enable for `record(What, #{lttng =>
%% external})'. Checks `What' as {@link record/2} does.
-spec events([item()]) -> [dyntrace:event_name()].
events(What) ->
    events(What, #{}).

%% @doc {@link events/1} with the recording's options (`lttng' ignored).
-spec events([item()], opts()) -> [dyntrace:event_name()].
events(What, Opts) when is_map(Opts) ->
    #{events := Events} = plan(What, maps:remove(lttng, Opts)),
    Events;
events(_What, Opts) ->
    error({badarg, {options, Opts}}).

%% @doc See {@link dyntrace:snapshot/1}.
-spec snapshot(handle()) -> {ok, file:filename()} | {error, term()}.
snapshot(Id) when is_integer(Id), Id > 0 ->
    case dyntrace_ctl_client:recording(Id) of
        {ok, Pid} -> call(Pid, snapshot);
        {error, _} = Error -> Error
    end;
snapshot(Id) ->
    error({badarg, {id, Id}}).

%%%===================================================================
%%% FOR dyntrace_ctl
%%%===================================================================

%% @private
-spec start_link(pos_integer(), plan()) -> {ok, pid()} | {error, term()}.
start_link(Id, Plan) ->
    gen_server:start_link(?MODULE, {Id, Plan}, []).

%% @doc Ends a recording now: its directory.
-spec stop(pid()) -> {ok, file:filename()} | {error, term()}.
stop(Pid) ->
    call(Pid, stop).

%% @doc Asks a recording to end (its parts are undone already, or are
%% undone by the recording).
-spec finish(pid()) -> ok.
finish(Pid) ->
    Pid ! {?MODULE, finish},
    ok.

%% @doc What `status()' lists of a recording, beside its id and parts.
-spec describe(plan()) -> map().
describe(#{name := Name, dir := Dir, mode := Mode, events := Events, duration := Ms,
           lttng := Lttng}) ->
    #{kind => recording, mode => Mode, session => Name, dir => Dir, events => Events,
      duration => Ms, lttng => Lttng}.

%% @doc Destroys a recording's session, if it is still there (a recording
%% that was killed before it could).
-spec destroy_session(plan()) -> ok.
destroy_session(#{lttng := external}) ->
    ok;
destroy_session(#{name := Name}) ->
    _ = lttng(["destroy", Name]),
    ok.

%% @doc How long the supervisor gives a recording to stop and destroy its
%% session when it stops it.
-spec shutdown_ms() -> pos_integer().
shutdown_ms() ->
    2 * ?COMMAND_MS + 5000.

call(Pid, Request) ->
    try
        gen_server:call(Pid, Request, infinity)
    catch
        exit:{Reason, {gen_server, call, _}} -> {error, {recording, Reason}}
    end.

%%%===================================================================
%%% CHECKING
%%% Everything is checked in the caller, before anything is made; a bad
%%% argument raises `error({badarg, {Key, Value}})'.
%%%===================================================================

plan(triage, Opts) ->
    {What, Own} = dyntrace_triage:items(Opts),
    plan(What, Own);
plan(What, Opts) when is_map(Opts) ->
    maps:foreach(fun(K, V) ->
                         lists:member(K, ?OWN_OPTS ++ ?TRACER_OPTS)
                             orelse error({badarg, {K, V}})
                 end, Opts),
    Mode = maps:get(mode, Opts, normal),
    lists:member(Mode, [normal, flight]) orelse error({badarg, {mode, Mode}}),
    Duration = maps:get(duration, Opts, case Mode of
                                            normal -> ?DEFAULT_MS;
                                            flight -> infinity
                                        end),
    (Duration =:= infinity andalso Mode =:= flight)
        orelse (is_integer(Duration) andalso Duration > 0 andalso Duration =< 16#ffffffff)
        orelse error({badarg, {duration, Duration}}),
    Lttng = maps:get(lttng, Opts, internal),
    (Lttng =:= internal orelse (Lttng =:= external andalso Mode =:= normal))
        orelse error({badarg, {lttng, Lttng}}),
    Wait = maps:get(wait, Opts, Mode =:= normal),
    (is_boolean(Wait) andalso not (Wait andalso Mode =:= flight))
        orelse error({badarg, {wait, Wait}}),
    %% The tracer's own checks; one count shared by every trace and calls
    %% part (the samplers count their own).
    Tracer = dyntrace_options:validate(maps:with([max_events | ?TRACER_OPTS], Opts)),
    Shared = case Tracer of
                 [] -> #{};
                 _ -> Tracer
             end,
    Budget = maps:get(max_events, Shared, none),
    (is_list(What) andalso What =/= [] andalso dyntrace_lib:is_proper_list(What))
        orelse error({badarg, {what, What}}),
    Parts = [part(Item, Shared, maps:get(max_events, Opts, undefined)) || Item <- What],
    Name = new_name(),
    Dir = case maps:get(dir, Opts, undefined) of
              undefined -> filename:join(temp_dir(), Name);
              D -> valid_dir(D)
          end,
    #{name => Name,
      dir => Dir,
      mode => Mode,
      duration => Duration,
      wait => Wait,
      parts => Parts,
      events => lists:usort(?NAMES ++ lists:flatmap(fun part_events/1, Parts)),
      budget => Budget,
      lttng => Lttng,
      caller => caller(Lttng)};
plan(_What, Opts) ->
    error({badarg, {options, Opts}}).

%% The LTTng events a part writes: a sampler's, or a trace or calls plan's.
part_events(#{kind := sample}) -> [stack_sample];
part_events(#{kind := memory, args := Args}) -> dyntrace_memory:events(Args);
part_events(#{kind := focus, args := Args}) -> dyntrace_triage:events(Args);
part_events(Plan) -> dyntrace_plans:events(Plan).

part({trace, Procs, Events}, Shared, Max) ->
    part({trace, Procs, Events, #{}}, Shared, Max);
part({trace, Procs, Events, Opts} = Item, Shared, _Max) ->
    own_limits(Opts, Item),
    dyntrace_plans:trace(Procs, Events, Opts, Shared);
part({calls, Spec}, Shared, Max) ->
    part({calls, Spec, #{}}, Shared, Max);
part({calls, Spec, Opts} = Item, Shared, _Max) ->
    own_limits(Opts, Item),
    %% A hot function never floods the recording: the rate guard is on
    %% unless the item sets its own.
    dyntrace_plans:calls(Spec, maps:merge(#{max_rate => ?MAX_RATE}, Opts), Shared);
part({sample, Procs}, Shared, Max) ->
    part({sample, Procs, #{}}, Shared, Max);
part({sample, Procs, Opts} = Item, _Shared, Max) ->
    own_limits(Opts, Item),
    dyntrace_sampler:plan(Procs, with_max(Opts, Max));
part(memory, Shared, Max) ->
    part({memory, #{}}, Shared, Max);
part({memory, Opts} = Item, _Shared, Max) ->
    own_limits(Opts, Item),
    dyntrace_memory:plan(with_max(Opts, Max));
part({focus, Opts} = Item, Shared, Max) ->
    own_limits(Opts, Item),
    dyntrace_triage:plan(with_max(Opts, Max), Shared);
part(Item, _Shared, _Max) ->
    error({badarg, {what, Item}}).

%% A part's limits are the recording's.
own_limits(Opts, _Item) when is_map(Opts) ->
    _ = [error({badarg, {K, V}}) || K <- [duration, max_events], {ok, V} <- [maps:find(K, Opts)]],
    ok;
own_limits(Opts, _Item) ->
    error({badarg, {options, Opts}}).

%% The node whose session records an external recording: the caller's
%% (an `rpc'/`erpc' call runs with the caller's group leader), `none'
%% when called from this node.
caller(internal) ->
    none;
caller(external) ->
    case node(group_leader()) of
        Node when Node =:= node() -> none;
        Node -> Node
    end.

with_max(Opts, undefined) -> Opts;
with_max(Opts, Max) -> Opts#{max_events => Max}.

valid_dir(Dir) ->
    try unicode:characters_to_list(Dir) of
        Text when is_list(Text), Text =/= [] -> filename:absname(Text);
        _ -> error({badarg, {dir, Dir}})
    catch
        error:_ -> error({badarg, {dir, Dir}})
    end.

%% @doc The `lttng' commands, in order, that make and start session
%% `Name' (`lttng create Name Create...'), recording `Events' of the OS
%% processes `OsPids' (their vpids tracked, the vpid in every event's
%% context).
-spec session_steps(string(), [string()], [dyntrace:event_name()], [string()]) -> [[string()]].
session_steps(Name, Create, Events, OsPids) ->
    List = string:join([?PROVIDER ":" ++ atom_to_list(E) || E <- Events], ","),
    [["create", Name | Create],
     ["enable-event", "--userspace", "--session=" ++ Name, List],
     ["add-context", "--userspace", "--session=" ++ Name, "--type=vpid"],
     ["track", "--userspace", "--session=" ++ Name, "--vpid=" ++ string:join(OsPids, ",")],
     ["start", Name]].

%% @doc A new recording's name, which sorts by start time (UTC, to the
%% second), then by node and call: `dyntrace-record-20261128T083512Z-4242-7'.
-spec new_name() -> string().
new_name() ->
    {{Y, Mo, D}, {H, Mi, S}} = calendar:universal_time(),
    lists:flatten(io_lib:format("dyntrace-record-~4..0b~2..0b~2..0bT~2..0b~2..0b~2..0bZ-~s-~b",
                                [Y, Mo, D, H, Mi, S, os:getpid(),
                                 erlang:unique_integer([positive])])).

%% @doc Where recordings go by default: `$TMPDIR', else `/tmp'.
-spec temp_dir() -> file:filename().
temp_dir() ->
    case os:getenv("TMPDIR") of
        Dir when is_list(Dir), Dir =/= [] -> Dir;
        _ -> "/tmp"
    end.

%%%===================================================================
%%% THE RECORDING
%%% A temporary child of dyntrace_sup: `setup' makes the session and asks
%%% dyntrace_ctl for the parts; `wait' answers when it has ended; the
%%% duration, a spent count, `stop' or dyntrace_ctl's `finish' end it.
%%%===================================================================

-record(rec, {id :: pos_integer(),
              plan :: plan(),
              made = false :: boolean(),
              samplers = [] :: [pid()],
              waiting = [] :: [gen_server:from()],
              ended = false :: false | {ok, file:filename()} | {error, term()}}).

%% @private
-spec init({pos_integer(), plan()}) -> {ok, #rec{}}.
init({Id, #{caller := Caller} = Plan}) ->
    %% terminate/2 destroys the session when the supervisor stops it.
    process_flag(trap_exit, true),
    %% An external session's owner gone: nothing records any more (an
    %% immediate nodedown if it is gone already).
    _ = Caller =:= none orelse monitor_node(Caller, true),
    {ok, #rec{id = Id, plan = Plan}}.

%% @private
-spec handle_call(term(), gen_server:from(), #rec{}) ->
          {reply, term(), #rec{}} | {noreply, #rec{}} | {stop, normal, term(), #rec{}}.
handle_call(setup, _From, #rec{made = false, ended = false} = R) ->
    case setup(R) of
        {ok, R1} ->
            {reply, ok, arm(R1)};
        {error, _} = Error ->
            R1 = teardown(R#rec{made = true}),
            {stop, normal, Error, R1#rec{ended = Error}}
    end;
handle_call(wait, From, #rec{ended = false, waiting = W} = R) ->
    {noreply, R#rec{waiting = [From | W]}};
handle_call(stop, From, #rec{ended = false, waiting = W} = R) ->
    {stop, normal, end_recording(R#rec{waiting = [From | W]})};
handle_call(snapshot, _From, #rec{ended = false, made = true,
                                  plan = #{mode := flight, name := Name, dir := Dir}} = R) ->
    {reply, snapshot(Name, Dir), R};
handle_call(snapshot, _From, #rec{ended = false, id = Id} = R) ->
    {reply, {error, {not_flight, Id}}, R};
handle_call(_Request, _From, #rec{ended = Ended} = R) when Ended =/= false ->
    {reply, Ended, R};
handle_call(_Request, _From, R) ->
    {reply, {error, unknown_request}, R}.

%% @private
-spec handle_cast(term(), #rec{}) -> {noreply, #rec{}}.
handle_cast(_Msg, R) ->
    {noreply, R}.

%% @private
-spec handle_info(term(), #rec{}) -> {noreply, #rec{}} | {stop, normal, #rec{}}.
handle_info({?MODULE, finish}, R) ->
    {stop, normal, end_recording(R)};
handle_info({nodedown, Node}, #rec{plan = #{caller := Node}} = R) ->
    {stop, normal, end_recording(R)};
handle_info({?MODULE, expired}, R) ->
    {stop, normal, end_recording(R)};
handle_info({?MODULE, poll}, R) ->
    case spent(R) of
        true -> {stop, normal, end_recording(R)};
        false -> {noreply, poll(R)}
    end;
handle_info(_Msg, R) ->
    {noreply, R}.

%% @private
-spec terminate(term(), #rec{}) -> ok.
terminate(_Reason, #rec{ended = false} = R) ->
    _ = end_recording(R),
    ok;
terminate(_Reason, _R) ->
    ok.

%% The steps, each undone by teardown/1 when a later one fails.
setup(#rec{id = Id, plan = #{name := Name, dir := Dir, mode := Mode, events := Events,
                             parts := Parts, lttng := Lttng}} = R) ->
    Create = ["--output=" ++ Dir] ++ [S || Mode =:= flight, S <- ["--snapshot"]],
    Steps = session_steps(Name, Create, Events, [os:getpid()]),
    case run([S || Lttng =:= internal, S <- Steps], R) of
        {ok, R1} ->
            case wait_enabled(Events, Lttng, ?ENABLED_MS) of
                ok ->
                    case dyntrace_ctl_client:record_parts(Id, Parts) of
                        {ok, Samplers} ->
                            ok = dyntrace_announcer:announce_nodes(),
                            ok = dyntrace_announcer:announce_processes(),
                            {ok, R1#rec{samplers = Samplers}};
                        {error, _} = Error ->
                            Error
                    end;
                {error, _} = Error ->
                    Error
            end;
        {error, _} = Error ->
            Error
    end.

run([], R) ->
    {ok, R};
run([Args | Steps], R) ->
    case lttng(Args) of
        {ok, _} -> run(Steps, R#rec{made = true});
        {error, Text} -> {error, {lttng, Text ++ no_daemon_hint(Text)}}
    end.

%% No daemon for a node of another user (its lttng reaches root's daemon
%% only as root or in group tracing): the way that needs no restart.
no_daemon_hint(Text) ->
    {User, Groups} = credentials(),
    Other = User =/= "root" andalso not lists:member("tracing", Groups),
    case string:find(Text, "No session daemon is available") of
        _ when not Other ->
            "";
        nomatch ->
            "";
        _ ->
            lists:flatten(
              io_lib:format(" (this node runs as ~s, not in group tracing: its lttng reaches "
                            "~s's own session daemon, not root's; without a restart, record "
                            "it from a root shell: priv/dyntrace record --node ~s; "
                            "docs/sharing.md)", [User, User, node()]))
    end.

%% Registration with the session daemon goes on in LTTng-UST's thread: the
%% events are enabled here a little after `lttng start'.
wait_enabled(Events, Lttng, Ms) when Ms =< 0 ->
    Missing = Events -- dyntrace:enabled_events(),
    {error, {lttng, lists:flatten(not_enabled(Lttng, Missing))}};
wait_enabled(Events, Lttng, Ms) ->
    case Events -- dyntrace:enabled_events() of
        [] -> ok;
        _ -> timer:sleep(10), wait_enabled(Events, Lttng, Ms - 10)
    end.

not_enabled(external, Missing) ->
    io_lib:format("this node saw ~w not enabled after ~b ms: the session that records it "
                  "must be started, with this node's vpid (~s) tracked, before "
                  "record/2 with lttng => external", [Missing, ?ENABLED_MS, os:getpid()]);
not_enabled(internal, Missing) ->
    OsPid = os:getpid(),
    case lttng(["list", "--userspace"]) of
        {ok, Apps} ->
            case string:find(Apps, "PID: " ++ OsPid ++ " ") of
                nomatch -> not_registered(Missing);
                _ -> registered(Missing, OsPid)
            end;
        {error, _} ->
            not_registered(Missing)
    end.

%% Registered, but the daemon's answers to the node's channel and event
%% registrations came after LTTng-UST's deadline (LTTNG_UST_REGISTER_TIMEOUT,
%% docs/reference.md): those stay disabled for the session.
registered(Missing, OsPid) ->
    Timeout = case os:getenv("LTTNG_UST_REGISTER_TIMEOUT") of
                  false -> "unset: 3000 ms";
                  Ms -> Ms ++ " ms; 10 ms at the least"
              end,
    io_lib:format("the session started and this node is registered with the daemon (lttng list -u "
                  "lists pid ~s), but it saw ~w not enabled after ~b ms: the daemon answered "
                  "its registration of the session's channel or events later than "
                  "LTTNG_UST_REGISTER_TIMEOUT (~s), and LTTng-UST dropped them for this "
                  "session (docs/reference.md, \"Loading and the LTTng session daemon\")",
                  [OsPid, Missing, ?ENABLED_MS, Timeout]).

not_registered(Missing) ->
    {User, Groups} = credentials(),
    Reaches = case User =:= "root" orelse lists:member("tracing", Groups) of
                  true -> "root's";
                  false -> User ++ "'s own"
              end,
    io_lib:format("the session started in the session daemon this node's lttng reaches "
                  "(~s, as ~s~s), but this node saw ~w not enabled after ~b ms: it is not "
                  "registered with that daemon. A node registers with the daemons that run "
                  "when dyntrace loads into it, root's (~s) and ~s's own (~s); one started "
                  "later may never see it, and group membership granted after the node "
                  "started does not count. Without a restart, record it from a root shell: "
                  "priv/dyntrace record --node ~s (docs/sharing.md)",
                  [Reaches, User, [" in group tracing" || lists:member("tracing", Groups)],
                   Missing, ?ENABLED_MS, daemon_state("/var/run/lttng"), User,
                   daemon_state(filename:join(lttng_home(), ".lttng")), node()]).

%% The node's OS user and groups, as its processes have them (groups
%% granted since it started are not among them).
credentials() ->
    case string:lexemes(os:cmd("id -un; id -Gn"), "\n") of
        [User, Groups | _] -> {User, string:lexemes(Groups, " ")};
        _ -> {"?", []}
    end.

%% Whether a session daemon runs in a run directory: its application
%% socket is there.
daemon_state(Dir) ->
    Running = filelib:wildcard(filename:join(Dir, "lttng-ust-sock-*")) =/= [],
    Dir ++ case Running of
               true -> ": running now";
               false -> ": not running now"
           end.

lttng_home() ->
    case {os:getenv("LTTNG_HOME"), os:getenv("HOME")} of
        {Home, _} when is_list(Home), Home =/= [] -> Home;
        {_, Home} when is_list(Home), Home =/= [] -> Home;
        _ -> "/"
    end.

arm(#rec{plan = #{duration := Ms}} = R) ->
    _ = Ms =:= infinity orelse erlang:send_after(Ms, self(), {?MODULE, expired}),
    poll(R).

poll(#rec{plan = #{budget := none}, samplers = []} = R) ->
    R;
poll(R) ->
    _ = erlang:send_after(?POLL_MS, self(), {?MODULE, poll}),
    R.

%% Whether every part has written its `max_events': the shared count of
%% the trace and calls parts, and the samplers (which end when theirs are).
spent(#rec{plan = #{budget := none}}) ->
    false;
spent(#rec{plan = #{budget := Budget, parts := Parts}, samplers = Samplers}) ->
    Traced = lists:any(fun(P) -> not is_map(P) end, Parts),
    (not Traced orelse dyntrace:events_left(Budget) =:= 0)
        andalso not lists:any(fun is_process_alive/1, Samplers).

%% Undoes the parts, then stops and destroys the session: the trace is
%% complete on disk when the waiters hear of it.
end_recording(#rec{plan = #{dir := Dir}} = R) ->
    R1 = teardown(R),
    Result = {ok, Dir},
    _ = [gen_server:reply(From, Result) || From <- R1#rec.waiting],
    R1#rec{waiting = [], ended = Result}.

teardown(#rec{id = Id, made = Made, plan = #{name := Name}} = R) ->
    _ = try dyntrace_ctl_client:undo_parts(Id)
        catch _:_ -> ok
        end,
    _ = Made andalso lttng(["stop", Name]),
    _ = Made andalso lttng(["destroy", Name]),
    R#rec{made = false}.

%% `lttng snapshot record': the new directory it wrote.
snapshot(Name, Dir) ->
    Before = snapshots(Dir),
    case lttng(["snapshot", "record", "--session=" ++ Name]) of
        {ok, _} ->
            case snapshots(Dir) -- Before of
                [New | _] -> {ok, filename:join(Dir, New)};
                [] -> {error, {lttng, "lttng snapshot record wrote no directory under " ++ Dir}}
            end;
        {error, Text} ->
            {error, {lttng, Text}}
    end.

snapshots(Dir) ->
    case file:list_dir(Dir) of
        {ok, Names} -> lists:sort([N || "snapshot-" ++ _ = N <- Names]);
        {error, _} -> []
    end.

%%%===================================================================
%%% THE lttng COMMAND
%%%===================================================================

%% @doc Runs `lttng Args' (never starting a session daemon of its own):
%% its output, or its message when it fails or is missing. One that does
%% not answer within 30 s is killed.
-spec lttng([string()]) -> {ok, string()} | {error, string()}.
lttng(Args) ->
    case os:find_executable("lttng") of
        false ->
            {error, "lttng: command not found (install lttng-tools: Debian/Ubuntu "
                    "apt-get install lttng-tools)"};
        Exe ->
            Port = open_port({spawn_executable, Exe},
                             [{args, ["--no-sessiond" | Args]}, exit_status, stderr_to_stdout,
                              binary, hide]),
            Deadline = erlang:monotonic_time(millisecond) + ?COMMAND_MS,
            collect(Port, Args, Deadline, [])
    end.

collect(Port, Args, Deadline, Acc) ->
    Ms = max(0, Deadline - erlang:monotonic_time(millisecond)),
    receive
        {Port, {data, Data}} ->
            collect(Port, Args, Deadline, [Data | Acc]);
        {Port, {exit_status, 0}} ->
            {ok, text(Acc)};
        {Port, {exit_status, _}} ->
            {error, "lttng " ++ string:join(Args, " ") ++ ": " ++ text(Acc)}
    after Ms ->
            _ = case erlang:port_info(Port, os_pid) of
                    {os_pid, OsPid} -> os:cmd("kill -9 " ++ integer_to_list(OsPid));
                    undefined -> ok
                end,
            try port_close(Port) catch error:badarg -> ok end,
            {error, "lttng " ++ string:join(Args, " ") ++ ": no answer after "
                 ++ integer_to_list(?COMMAND_MS) ++ " ms"}
    end.

text(Acc) ->
    string:trim(unicode:characters_to_list(iolist_to_binary(lists:reverse(Acc)))).
