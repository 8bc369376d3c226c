%%% @doc The front door behind `dyntrace:trace/3', `calls/2', `sample/2',
%%% `memory/1', `record/2', `stop/1', `clear/0' and `status/0': one call
%%% sets the trace flags (and patterns) that feed the LTTng events asked
%%% for, with limits, and one call undoes it.
%%%
%%% Why it is safe on a production node:
%%% - the flags come from the tracer's own event table, so a call sets only
%%%   the flags its events need;
%%% - every argument is checked in the caller before anything is set; a
%%%   call sets all it asked for or nothing, and no argument, module state
%%%   or race takes this process down (a failure inside it undoes what the
%%%   call set so far and answers `{error, Reason}');
%%% - `max_events => N' is counted in the NIF: after `N' events written the
%%%   tracer answers `remove' and the runtime drops the flags itself, with no
%%%   process or mailbox in the way however fast events come;
%%% - `duration => Ms' undoes everything that call set after `Ms', from
%%%   this long-lived process (not linked to the caller): the limits hold
%%%   after the shell that set them is gone;
%%% - a limit holds or the call is refused: before OTP 27 a process has one
%%%   tracer and patterns are node-wide, so a call whose processes (or, with
%%%   a count, whose call tracing) another call with other options already
%%%   traces is refused with `{error, {overlaps, Id}}' rather than listed
%%%   with a limit the runtime would not apply;
%%% - what is set is written, before it is set, to a table that outlives
%%%   this process (`dyntrace_sup' owns it): this process is supervised,
%%%   and its restart finds every call, limit, sampler and recording again;
%%% - `clear()' works from what the runtime says is set with dyntrace as
%%%   tracer (`erlang:trace_info/2'; on OTP 27+ dyntrace's trace sessions),
%%%   not only from what this process remembers;
%%% - a pattern on every module, or on every function of a module of erts,
%%%   kernel or stdlib, is refused unless `force => true' (a careless
%%%   pattern must not take a node down).
%%%
%%% ```
%%% 1> dyntrace:calls({queue, in, fun([_, Q]) when is_tuple(Q) -> return_trace() end},
%%%                   #{max_events => 10, duration => 60000}).
%%% {ok,1}
%%% 2> dyntrace:trace(whereis(logger), [messages, gc], #{max_events => 1000}).
%%% {ok,1}
%%% 3> dyntrace:status().
%%% 4> dyntrace:clear().
%%% ok
%%% '''
%%% Nothing is recorded until the events are enabled in an LTTng session
%%% (`lttng enable-event -u org_erlang_dyntrace:function_call'...), or
%%% use `dyntrace:record/2', which makes the session too.
-module(dyntrace_ctl).
-behaviour(gen_server).

%%% PUBLIC (through dyntrace) %%%
-export([trace/3, calls/2, clear/0, status/0, sample/2, memory/1, stop/1]).

%%% For dyntrace_record (checked plans, and its parts) %%%
-export([focus/1]).
-export([trace_plan/4, calls_plan/3, plan_events/1, record_start/1, record_parts/2,
         undo_parts/1, recording/1]).

%%% For the samplers and dyntrace_record %%%
-export([is_proper_list/1]).

%%% PRIVATE EXPORTS (gen_server) %%%
-export([start_link/0, init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2]).

-type tracee() :: pid() | port() | atom().
-type procs_spec() :: all | processes | ports | existing | existing_processes
                    | existing_ports | new | new_processes | new_ports.
-type procs() :: tracee() | procs_spec() | [tracee() | procs_spec()].
-type group() :: procs | ports | messages | calls | gc | scheduling | all.
-type event_or_group() :: dyntrace:event_name() | group().
-type millisecs() :: pos_integer().
%% The tracer's options (dyntrace:tracer/1) and the limits.
-type limits() :: #{max_term_bytes => dyntrace:max_term_bytes(),
                    payload => dyntrace:payload_mode()
                             | #{dyntrace:field_kind() => dyntrace:payload_mode()},
                    redact => [term()],
                    max_events => pos_integer(),
                    duration => millisecs()}.
-type trace_opts() :: limits().
-type calls_opts() :: #{max_term_bytes => dyntrace:max_term_bytes(),
                        payload => dyntrace:payload_mode()
                                 | #{dyntrace:field_kind() => dyntrace:payload_mode()},
                        redact => [term()],
                        max_events => pos_integer(),
                        duration => millisecs(),
                        return => boolean(),
                        exception => boolean(),
                        scope => local | global,
                        procs => procs(),
                        force => boolean(),
                        exclude => [mfa_pattern()],
                        max_rate => dyntrace_guard:rate()}.
-type match_fun() :: fun(([term()]) -> term()).
-type call_spec() :: {module() | '_', atom(), arity() | '_' | ets:match_spec()
                                              | match_fun()}.
-type result() :: {ok, Matched :: non_neg_integer()} | {error, term()}.
-type kind() :: trace | calls | sample | memory | found.
-type trace_status() :: #{id := pos_integer(),
                          kind := kind(),
                          procs := [pid() | port() | procs_spec()],
                          flags := [atom()],
                          patterns := [{mfa_pattern(), ets:match_spec() | true | false,
                                        [local | global]}],
                          events_left := non_neg_integer() | infinity,
                          ms_left := non_neg_integer() | infinity,
                          recording => pos_integer(),
                          guarded => [mfa()]}.
-type status() :: #{traces := [trace_status()],
                    recordings := [dyntrace_record:status()],
                    sessions := boolean(),
                    lttng_enabled := [dyntrace:event_name()],
                    counters := dyntrace:counters()}.
-type mfa_pattern() :: {module() | '_', atom(), arity() | '_'}.

-export_type([procs/0, event_or_group/0, trace_opts/0, calls_opts/0,
              call_spec/0, result/0, status/0, plan/0]).

-define(SERVER, ?MODULE).
%% The options that go into the tracer state as they are.
-define(TRACER_OPTIONS, [max_term_bytes, payload, redact]).
%% How long clear() waits for the recordings it ended to be gone.
-define(CLEAR_WAIT_MS, 60000).
%% How often a caller looks again for a dyntrace_ctl being restarted.
-define(RESTART_TRIES, 50).
%% The name of dyntrace's trace sessions (OTP 27+).
-define(MODULE_SESSION, dyntrace).

%% What one call set: enough to undo exactly that.
-record(plan, {kind :: trace | calls | found,
               procs = [] :: [pid() | port() | procs_spec()],
               events = [] :: [dyntrace:event_name()],
               flags = [] :: [atom()],
               patterns = [] :: [{mfa_pattern(), ets:match_spec() | true | false,
                                  [local | global]}],
               tracer_state = [] :: dyntrace:tracer_state(),
               duration = infinity :: millisecs() | infinity,
               %% calls: the rate guard asked for, and once set, its state.
               max_rate :: dyntrace_guard:rate() | undefined,
               guard :: dyntrace_guard:guard() | undefined}).

%% One entry of status(): a call (its plan), a sampler (its sampler plan),
%% a recording (its own plan), or what the runtime showed traced by dyntrace
%% that no entry accounted for (`found').
-record(trace, {id :: pos_integer(),
                kind :: kind() | recording,
                plan :: #plan{} | dyntrace_sampler:plan() | map(),
                %% OTP 27+: the call's trace session; `legacy' before;
                %% `{sampler, Pid, Counters}'; `{recording, Pid}'.
                session :: term(),
                deadline = infinity :: integer() | infinity,
                %% The recording this is a part of.
                owner :: pos_integer() | undefined}).

%% A checked trace or calls plan, ready to set.
-opaque plan() :: #plan{}.

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc See {@link dyntrace:trace/3}.
-spec trace(procs(), [event_or_group()], trace_opts()) -> result().
trace(Procs, Events, Opts) ->
    Plan = trace_plan(Procs, Events, Opts, #{}),
    named(call({start, Plan})).

%% @doc See {@link dyntrace:calls/2}.
-spec calls(call_spec() | [call_spec()], calls_opts()) -> result().
calls(Spec, Opts) ->
    Plan = calls_plan(Spec, Opts, #{}),
    named(call({start, Plan})).

%% @doc See {@link dyntrace:sample/2}.
-spec sample(dyntrace_sampler:procs(), dyntrace_sampler:opts()) ->
          {ok, pos_integer()} | {error, term()}.
sample(Procs, Opts) ->
    named(call({start_sampler, dyntrace_sampler:plan(Procs, Opts)})).

%% What was started writes the node's and its processes' names now, in
%% the caller: a session made before it (by anyone: record/2, the
%% operator's `lttng', an outside command) names processes that started
%% or registered before it began. (A session made later is named by the
%% announcer when `process_name' becomes enabled.)
named({ok, _} = Started) ->
    ok = dyntrace:announce_nodes(),
    ok = dyntrace:announce_processes(),
    Started;
named(Other) ->
    Other.

%% @doc See {@link dyntrace:memory/1}.
-spec memory(dyntrace_memory:opts()) -> {ok, pos_integer()} | {error, term()}.
memory(Opts) ->
    call({start_sampler, dyntrace_memory:plan(Opts)}).

%% @doc See {@link dyntrace:stop/1}.
-spec stop(pos_integer()) -> ok | {ok, file:filename()} | {error, term()}.
stop(Id) when is_integer(Id), Id > 0 ->
    case call({stop, Id}) of
        {recording, Pid} -> dyntrace_record:stop(Pid);
        Other -> Other
    end;
stop(Id) ->
    error({badarg, {id, Id}}).

%% @doc See {@link dyntrace:clear/0}.
-spec clear() -> ok.
clear() ->
    {ok, Ended} = call(clear),
    %% The recordings ended stop and destroy their sessions on their own:
    %% wait until they have.
    Refs = [erlang:monitor(process, P) || P <- Ended],
    Deadline = erlang:monotonic_time(millisecond) + ?CLEAR_WAIT_MS,
    _ = [receive {'DOWN', R, process, _, _} -> ok
         after max(0, Deadline - erlang:monotonic_time(millisecond)) -> ok
         end || R <- Refs],
    ok.

%% @doc See {@link dyntrace:status/0}.
-spec status() -> status().
status() ->
    {Traces, Recordings} = call(status),
    #{traces => Traces,
      recordings => Recordings,
      sessions => sessions_available(),
      lttng_enabled => dyntrace:enabled_events(),
      counters => dyntrace:stats()}.

%% @doc Whether `List' is a proper list (strict checks call this before
%% walking a list a user passed).
-spec is_proper_list(term()) -> boolean().
is_proper_list(List) when is_list(List) ->
    try length(List) of
        _ -> true
    catch
        error:badarg -> false
    end;
is_proper_list(_) ->
    false.

%%%===================================================================
%%% FOR dyntrace_record
%%%===================================================================

%% @doc Registers a recording (its worker is started under dyntrace's
%% supervisor with `Plan'): its id and worker.
-spec record_start(map()) -> {ok, pos_integer(), pid()} | {error, term()}.
record_start(Plan) ->
    call({record_start, Plan}).

%% @doc Sets the parts of recording `Id' (plans of {@link trace_plan/4} and
%% {@link calls_plan/3}, sampler plans), all or none: the samplers' pids.
-spec record_parts(pos_integer(), [plan() | dyntrace_sampler:plan()]) ->
          {ok, [pid()]} | {error, term()}.
record_parts(Id, Parts) ->
    call({record_parts, Id, Parts}).

%% @doc Undoes what the parts of recording `Id' set.
-spec undo_parts(pos_integer()) -> ok.
undo_parts(Id) ->
    call({undo_parts, Id}).

%% @doc Sets a focus window of triage's controller (the calling sampler):
%% a trace plan owned by the controller's recording, ended by its
%% duration, {@link stop/1} or the recording's end. Its id.
-spec focus(plan()) -> {ok, pos_integer()} | {error, term()}.
focus(Plan) ->
    call({focus, self(), Plan}).

%% @doc The worker of recording `Id', if it runs.
-spec recording(pos_integer()) -> {ok, pid()} | {error, term()}.
recording(Id) ->
    call({recording, Id}).

%% @doc The LTTng events the parts of a recording write: those of a
%% {@link trace_plan/4} or {@link calls_plan/3} plan, or of a sampler.
-spec plan_events(plan() | dyntrace_sampler:plan()) -> [dyntrace:event_name()].
plan_events(#plan{events = Events}) ->
    Events;
plan_events(#{kind := sample}) ->
    [stack_sample];
plan_events(#{kind := memory, args := Args}) ->
    dyntrace_memory:events(Args);
plan_events(#{kind := focus, args := Args}) ->
    dyntrace_triage:events(Args).

%%%===================================================================
%%% THE OWNER PROCESS
%%% Started by dyntrace_sup (on first use) and supervised: it holds the
%%% duration timers and monitors the samplers and recordings; what it set
%%% is in dyntrace_sup's table, so that its restart finds it again.
%%%===================================================================

-type state() :: #{timers := #{pos_integer() => reference()},
                   monitors := #{reference() => pos_integer()}}.

%% Calls the owner; one that is being restarted is waited for, one that
%% ends during the call is an error, not an exit in the caller.
call(Request) ->
    call(Request, ?RESTART_TRIES).

call(Request, Tries) ->
    _ = dyntrace_sup:ensure_started(),
    case whereis(?SERVER) of
        undefined when Tries > 0 ->
            timer:sleep(20),
            call(Request, Tries - 1);
        undefined ->
            error({dyntrace_ctl, not_running});
        Pid ->
            try
                gen_server:call(Pid, Request, infinity)
            catch
                %% Not delivered: it ended before; its restart is asked.
                exit:{noproc, {gen_server, call, _}} when Tries > 0 ->
                    call(Request, Tries - 1);
                %% It ended during the call: asked again where that is
                %% harmless; otherwise what the call set, if anything, is
                %% in the table, and the restart lists it.
                exit:{_, {gen_server, call, _}} when Tries > 0, Request =:= status;
                                                     Tries > 0, Request =:= clear ->
                    call(Request, Tries - 1);
                exit:{Reason, {gen_server, call, _}} ->
                    {error, {dyntrace_ctl, Reason}}
            end
    end.

%% @private
-spec start_link() -> {ok, pid()} | {error, term()}.
start_link() ->
    gen_server:start_link({local, ?SERVER}, ?MODULE, [], []).

%% @private
-spec init([]) -> {ok, state()}.
init([]) ->
    %% terminate/2 runs when the supervisor stops it: it undoes what it set.
    process_flag(trap_exit, true),
    State = #{timers => #{}, monitors => #{}},
    %% A failure here must not make the supervisor give up: what could not
    %% be adopted stays in the table, for status() and clear().
    {ok, safely(fun() -> adopt(State) end, State)}.

%% @private
-spec handle_call(term(), gen_server:from(), state()) -> {reply, term(), state()}.
handle_call(Request, _From, State) ->
    try request(Request, State) of
        {Reply, NewState} -> {reply, Reply, NewState}
    catch
        Class:Reason:Stack ->
            %% A bug: said, and nothing left half set (request/2 undoes
            %% what it set before it raises).
            logger:error("dyntrace_ctl: ~p failed: ~p:~p ~p", [Request, Class, Reason, Stack]),
            {reply, {error, {internal, Reason}}, State}
    end.

%% @private
-spec handle_cast(term(), state()) -> {noreply, state()}.
handle_cast(_Msg, State) ->
    {noreply, State}.

%% @private
-spec handle_info(term(), state()) -> {noreply, state()}.
handle_info({expired, Id}, #{timers := Timers} = State) ->
    State1 = State#{timers := maps:remove(Id, Timers)},
    {noreply, safely(fun() -> end_entry(Id, State1) end, State1)};
handle_info({'DOWN', Ref, process, _, Reason}, #{monitors := Monitors} = State) ->
    case maps:take(Ref, Monitors) of
        {Id, Rest} ->
            State1 = State#{monitors := Rest},
            {noreply, safely(fun() -> ended(Id, Reason, State1) end, State1)};
        error ->
            {noreply, State}
    end;
handle_info({guard, Id}, State) ->
    {noreply, safely(fun() -> guard_poll(Id), State end, State)};
handle_info(_Msg, State) ->
    {noreply, State}.

%% @private
%% Stopped by its supervisor (or the node): undoes everything. A crash
%% leaves the table as it is, for the restart to find.
-spec terminate(term(), state()) -> ok.
terminate(Reason, State) when Reason =:= shutdown; Reason =:= normal;
                              element(1, Reason) =:= shutdown ->
    _ = safely(fun() -> {_, S} = clear_all(State), S end, State),
    ok;
terminate(_Reason, _State) ->
    ok.

safely(Fun, State) ->
    try
        Fun()
    catch
        Class:Reason:Stack ->
            logger:error("dyntrace_ctl: ~p:~p ~p", [Class, Reason, Stack]),
            State
    end.

request({start, Plan}, State) ->
    start(Plan, undefined, State);
request({start_sampler, SPlan}, State) ->
    start_sampler(SPlan, undefined, State);
request({stop, Id}, State) ->
    case lookup(Id) of
        #trace{kind = recording, session = {recording, Pid}} -> {{recording, Pid}, State};
        #trace{} -> {ok, end_entry(Id, State)};
        undefined -> {{error, {no_such_id, Id}}, State}
    end;
request(clear, State) ->
    clear_all(State);
request(status, State) ->
    Entries = entries(),
    {{[describe(T) || #trace{kind = K} = T <- Entries, K =/= recording],
      [describe_recording(T, Entries) || #trace{kind = recording} = T <- Entries]},
     State};
request({record_start, Plan}, State) ->
    record_start(Plan, State);
request({record_parts, Id, Parts}, State) ->
    record_parts(Id, Parts, State);
request({undo_parts, Id}, State) ->
    {ok, undo_parts(Id, State)};
request({focus, Sampler, Plan}, State) ->
    Owner = case [O || #trace{session = {sampler, P, _}, owner = O} <- entries(), P =:= Sampler] of
                [O | _] -> O;
                [] -> undefined
            end,
    case start(Plan, Owner, State) of
        {{ok, _}, State1} ->
            Id = lists:max([I || #trace{id = I, plan = P} <- entries(), P =:= Plan]),
            {{ok, Id}, State1};
        Refused ->
            Refused
    end;
request({recording, Id}, State) ->
    case lookup(Id) of
        #trace{kind = recording, session = {recording, Pid}} when is_pid(Pid) -> {{ok, Pid}, State};
        _ -> {{error, {no_such_recording, Id}}, State}
    end;
request(_Other, State) ->
    {{error, unknown_request}, State}.

%%%===================================================================
%%% STARTING AND ENDING ENTRIES
%%%===================================================================

%% A trace or calls plan: refused when it overlaps another call (before
%% OTP 27); written to the table, then set; undone if setting fails.
start(#plan{} = Plan, Owner, State) ->
    Entries = entries(),
    Session = session_for(Plan, Entries),
    case Session =:= legacy andalso overlapping(Plan, Entries) of
        {overlaps, Id} ->
            {{error, {overlaps, Id}}, State};
        false ->
            T = #trace{id = new_id(), kind = Plan#plan.kind, plan = Plan, session = Session,
                       deadline = deadline(Plan#plan.duration), owner = Owner},
            put(T),
            try set(Session, Plan) of
                Matched ->
                    ok = guard(T),
                    {{ok, Matched}, arm(T, State)}
            catch
                Class:Reason ->
                    undo(T, entries() -- [T]),
                    delete(T#trace.id),
                    {{error, refusal(Class, Reason)}, State}
            end
    end.

refusal(throw, {refused, Reason}) -> Reason;
refusal(_, Reason) -> Reason.

%% A sampler: a temporary child of dyntrace_sup, watched from here.
start_sampler(#{kind := Kind, duration := Ms} = SPlan, Owner, State) ->
    Id = new_id(),
    Counters = dyntrace_sampler:counters(SPlan),
    Spec = #{id => {sampler, Id}, start => {dyntrace_sampler, start_link, [SPlan, Counters]},
             shutdown => brutal_kill},
    T = #trace{id = Id, kind = Kind, plan = SPlan, session = {sampler, undefined, Counters},
               deadline = deadline(Ms), owner = Owner},
    put(T),
    case dyntrace_sup:start_child(Spec) of
        {ok, Pid} ->
            T1 = T#trace{session = {sampler, Pid, Counters}},
            put(T1),
            {{ok, Id}, monitor_entry(Id, Pid, arm(T1, State))};
        {error, Reason} ->
            delete(Id),
            {{error, {sampler, Reason}}, State}
    end.

%% Ends entry `Id' (its duration passed, or stop/1): undone and forgotten.
end_entry(Id, State) ->
    case lookup(Id) of
        undefined ->
            State;
        #trace{kind = recording, session = {recording, Pid}} ->
            %% The worker ends itself (stop/1 asks it); a duration is its own.
            _ = is_pid(Pid) andalso dyntrace_record:finish(Pid),
            State;
        T ->
            forget(T, State)
    end.

%% Undoes `T', forgets it, its timer and its monitor.
forget(T, State) ->
    forget_all([T], State).

%% Forgets several entries at once: none of them is set again when
%% another is undone.
forget_all(Ts, State) ->
    _ = [delete(Id) || #trace{id = Id} <- Ts],
    Others = entries(),
    lists:foldl(fun(#trace{id = Id} = T, S) ->
                        undo(T, Others),
                        unarm(Id, S)
                end, State, Ts).

%% A sampler or recording worker ended.
ended(Id, Reason, State) ->
    case lookup(Id) of
        #trace{kind = recording, plan = RPlan} ->
            State1 = undo_parts(Id, State),
            %% A worker killed before it could destroy its session.
            Reason =:= normal orelse dyntrace_record:destroy_session(RPlan),
            delete(Id),
            unarm(Id, State1);
        #trace{} = T ->
            forget(T, State);
        undefined ->
            State
    end.

%%%===================================================================
%%% RECORDINGS
%%%===================================================================

record_start(RPlan, State) ->
    Id = new_id(),
    T = #trace{id = Id, kind = recording, plan = RPlan, session = {recording, undefined},
               deadline = deadline(maps:get(duration, dyntrace_record:describe(RPlan)))},
    put(T),
    Spec = #{id => {recording, Id}, start => {dyntrace_record, start_link, [Id, RPlan]},
             shutdown => dyntrace_record:shutdown_ms()},
    case dyntrace_sup:start_child(Spec) of
        {ok, Pid} ->
            put(T#trace{session = {recording, Pid}}),
            {{ok, Id, Pid}, monitor_entry(Id, Pid, State)};
        {error, Reason} ->
            delete(Id),
            {{error, {recording, Reason}}, State}
    end.

%% All parts or none.
record_parts(Id, Parts, State) ->
    case lookup(Id) of
        #trace{kind = recording} -> record_parts(Id, Parts, [], State);
        _ -> {{error, {no_such_recording, Id}}, State}
    end.

record_parts(_Id, [], Samplers, State) ->
    {{ok, lists:reverse(Samplers)}, State};
record_parts(Id, [Part | Parts], Samplers, State) ->
    Started = case Part of
                  #plan{} -> start(Part, Id, State);
                  #{} -> start_sampler(Part, Id, State)
              end,
    case Started of
        {{ok, SamplerId}, State1} when is_map(Part) ->
            #trace{session = {sampler, Pid, _}} = lookup(SamplerId),
            record_parts(Id, Parts, [Pid | Samplers], State1);
        {{ok, _}, State1} ->
            record_parts(Id, Parts, Samplers, State1);
        {{error, _} = Error, State1} ->
            {Error, undo_parts(Id, State1)}
    end.

undo_parts(Id, State) ->
    forget_all([T || #trace{owner = O} = T <- entries(), O =:= Id], State).

%%%===================================================================
%%% CLEAR
%%%===================================================================

%% Everything in the table, then whatever the runtime still shows traced
%% by dyntrace. Recordings end on their own (their sessions are theirs
%% to stop and destroy): their workers, for clear/0 to wait for.
clear_all(State) ->
    Entries = entries(),
    {Recordings, Others} = lists:partition(fun(#trace{kind = K}) -> K =:= recording end, Entries),
    State1 = forget_all(Others, State),
    Workers = [Pid || #trace{session = {recording, Pid}} <- Recordings, is_pid(Pid)],
    _ = [dyntrace_record:finish(Pid) || Pid <- Workers],
    sweep(),
    {{ok, Workers}, State1}.

%% What the runtime shows: every tracee whose tracer is dyntrace, in the
%% runtime's own session; on OTP 27+ every session of dyntrace's.
sweep() ->
    _ = [untrace(T, [all]) || {T, _, _} <- legacy_tracees()],
    _ = [session_destroy(S) || S <- dyntrace_sessions()],
    ok.

legacy_tracees() ->
    [{T, St, Flags}
     || T <- [new_processes, new_ports | erlang:processes() ++ erlang:ports()],
        {tracer, {dyntrace, St}} <- [trace_info(T, tracer)],
        {flags, Flags} <- [trace_info(T, flags)]].

trace_info(T, What) ->
    try erlang:trace_info(T, What)
    catch error:badarg -> undefined
    end.

%% The weak handles of the sessions named dyntrace (OTP 27+).
dyntrace_sessions() ->
    case sessions_available() of
        true -> [S || S <- trace:session_info(all), session_name(S) =:= ?MODULE_SESSION];
        false -> []
    end.

session_name(Weak) when is_tuple(Weak), tuple_size(Weak) =:= 2 -> element(1, Weak);
session_name(_) -> undefined.

session_destroy(Session) ->
    try trace:session_destroy(Session)
    catch error:_ -> false
    end.

%%%===================================================================
%%% ADOPTING WHAT IS SET (at start, and after a restart)
%%%===================================================================

%% The table's entries get their timers and monitors again (a sampler or
%% recording that ended meanwhile is undone); then what the runtime shows
%% traced by dyntrace that no entry accounts for becomes a `found' entry,
%% which status() lists and clear() removes.
adopt(State) ->
    Entries = entries(),
    State1 = lists:foldl(fun adopt/2, State, Entries),
    Known = entries(),
    case sessions_available() of
        false -> adopt_legacy(Known, State1);
        true -> adopt_sessions(Known, State1)
    end.

adopt(#trace{id = Id, session = {sampler, Pid, _}} = T, State) ->
    adopt_process(T, Pid, arm(T, State), Id);
adopt(#trace{id = Id, session = {recording, Pid}} = T, State) ->
    adopt_process(T, Pid, State, Id);
adopt(T, State) ->
    arm(T, State).

adopt_process(T, Pid, State, Id) ->
    case is_pid(Pid) andalso is_process_alive(Pid) of
        true -> monitor_entry(Id, Pid, State);
        false -> ended(T#trace.id, killed, State)
    end.

adopt_legacy(Known, State) ->
    States = [St || #trace{session = legacy, plan = #plan{tracer_state = St}} <- Known],
    Found = lists:foldl(fun({T, St, Flags}, Acc) ->
                                maps:update_with(St, fun({Ts, Fs}) -> {[T | Ts], Flags ++ Fs} end,
                                                 {[T], Flags}, Acc)
                        end, #{}, [Tr || {_, St, _} = Tr <- legacy_tracees(),
                                         not lists:member(St, States)]),
    maps:foreach(fun(St, {Tracees, Flags}) ->
                         put(#trace{id = new_id(), kind = found,
                                    plan = #plan{kind = found, procs = lists:usort(Tracees),
                                                 flags = lists:usort(Flags), tracer_state = St},
                                    session = legacy})
                 end, Found),
    State.

adopt_sessions(Known, State) ->
    Weak = [weak(S) || #trace{session = S} <- Known],
    _ = [put(#trace{id = new_id(), kind = found, plan = #plan{kind = found}, session = S})
         || S <- dyntrace_sessions(), not lists:member(S, Weak)],
    State.

weak({_Strong, Weak}) -> Weak;
weak(Other) -> Other.

%%%===================================================================
%%% THE TABLE, TIMERS AND MONITORS
%%%===================================================================

%% In the order they were made.
entries() ->
    [T || {_, T} <- lists:sort(ets:tab2list(dyntrace_sup:table()))].

lookup(Id) ->
    case ets:lookup(dyntrace_sup:table(), Id) of
        [{_, T}] -> T;
        [] -> undefined
    end.

put(#trace{id = Id} = T) ->
    true = ets:insert(dyntrace_sup:table(), {Id, T}),
    ok.

delete(Id) ->
    true = ets:delete(dyntrace_sup:table(), Id),
    ok.

new_id() ->
    erlang:unique_integer([positive, monotonic]).

deadline(infinity) -> infinity;
deadline(Ms) -> erlang:monotonic_time(millisecond) + Ms.

%%%===================================================================
%%% THE RATE GUARD (dyntrace_guard)
%%%===================================================================

%% A calls entry with `max_rate': a call_count pattern on every function
%% its patterns match, the guard's state in its plan, and the first look
%% armed. Answers `State' (the looks are timers of their own, re-armed by
%% each look while the entry lasts).
guard(#trace{plan = #plan{kind = calls, max_rate = {_, _} = Rate} = P, session = S} = T) ->
    Functions = guarded_functions(P#plan.patterns),
    _ = [set_pattern(S, MFA, true, [call_count]) || MFA <- Functions],
    G = dyntrace_guard:new(Rate, Functions),
    put(T#trace{plan = P#plan{guard = G}}),
    _ = erlang:send_after(dyntrace_guard:interval(G), self(), {guard, T#trace.id}),
    ok;
guard(#trace{}) ->
    ok.

%% The functions of loaded modules that the local patterns match and no
%% exclusion takes out (a pattern on every module is not guarded). A
%% global pattern is not guarded: the runtime turns a function's global
%% trace off when a call_count pattern is set on it.
guarded_functions(Patterns) ->
    Matches = fun({M, F, A}, {PM, PF, PA}) ->
                      (PM =:= '_' orelse PM =:= M) andalso (PF =:= '_' orelse PF =:= F)
                          andalso (PA =:= '_' orelse PA =:= A)
              end,
    Excluded = [E || {E, false, _} <- Patterns],
    lists:usort([MFA || {{M, _, _} = Pat, MS, [local]} <- Patterns, MS =/= false, M =/= '_',
                        erlang:module_loaded(M),
                        {F, A} <- M:module_info(functions),
                        MFA <- [{M, F, A}],
                        Matches(MFA, Pat),
                        not lists:any(fun(E) -> Matches(MFA, E) end, Excluded)]).

%% One look: a function called faster than the rate loses its trace
%% pattern now, and one call_guard event names it.
guard_poll(Id) ->
    case lookup(Id) of
        #trace{plan = #plan{guard = #{} = G, patterns = Patterns} = P, session = S} = T ->
            {G1, Over} = dyntrace_guard:poll(G, fun(MFA) -> call_count(S, MFA) end),
            Scopes = lists:usort([Scope || {_, MS, [Scope]} <- Patterns, MS =/= false]),
            {Calls, Ms} = dyntrace_guard:rate(G1),
            _ = [begin
                     _ = [set_pattern(S, MFA, false, [Scope]) || Scope <- Scopes],
                     _ = set_pattern(S, MFA, false, [call_count]),
                     dyntrace:emit_call_guard(MFA, Calls, Ms)
                 end || MFA <- Over],
            Removed = [{MFA, false, [Scope]} || MFA <- Over, Scope <- Scopes],
            put(T#trace{plan = P#plan{guard = G1, patterns = Patterns ++ Removed}}),
            _ = erlang:send_after(dyntrace_guard:interval(G1), self(), {guard, Id}),
            ok;
        _ ->
            ok
    end.

call_count(legacy, MFA) ->
    call_count_of(erlang:trace_info(MFA, call_count));
call_count(Session, MFA) ->
    call_count_of(trace:info(Session, MFA, call_count)).

call_count_of({call_count, N}) when is_integer(N) -> N;
call_count_of(_) -> undefined.

%% The guard's call_count patterns, undone with its entry.
unguard(Session, #plan{guard = #{} = G}) ->
    _ = [unpattern(Session, MFA, [call_count])
         || MFA <- dyntrace_guard:functions(G) ++ dyntrace_guard:removed(G)],
    ok;
unguard(_, _) ->
    ok.

%% A timer for an entry with a deadline (a passed one fires at once).
arm(#trace{kind = recording}, State) ->
    State;
arm(#trace{deadline = infinity}, State) ->
    State;
arm(#trace{id = Id, deadline = Deadline}, #{timers := Timers} = State) ->
    Ms = max(0, Deadline - erlang:monotonic_time(millisecond)),
    State#{timers := Timers#{Id => erlang:send_after(Ms, self(), {expired, Id})}}.

unarm(Id, #{timers := Timers, monitors := Monitors} = State) ->
    Timers1 = case maps:take(Id, Timers) of
                  {Ref, Rest} -> _ = erlang:cancel_timer(Ref), Rest;
                  error -> Timers
              end,
    Monitors1 = maps:filter(fun(Ref, I) when I =:= Id -> erlang:demonitor(Ref, [flush]), false;
                               (_, _) -> true
                            end, Monitors),
    State#{timers := Timers1, monitors := Monitors1}.

monitor_entry(Id, Pid, #{monitors := Monitors} = State) ->
    State#{monitors := Monitors#{erlang:monitor(process, Pid) => Id}}.

%%%===================================================================
%%% STATUS
%%%===================================================================

describe(#trace{id = Id, kind = Kind, plan = #plan{} = P, owner = Owner} = T) ->
    with_owner(Owner, maps:merge(#{id => Id,
                                   kind => Kind,
                                   procs => P#plan.procs,
                                   flags => P#plan.flags,
                                   patterns => P#plan.patterns,
                                   events_left => events_left(P#plan.tracer_state),
                                   ms_left => ms_left(T)},
                                 guarded(P#plan.guard)));
describe(#trace{id = Id, kind = Kind, plan = #{procs := Procs}, session = {sampler, _, Counters},
                owner = Owner} = T) ->
    with_owner(Owner, maps:merge(#{id => Id, kind => Kind, procs => Procs, flags => [],
                                   patterns => [], ms_left => ms_left(T)},
                                 dyntrace_sampler:describe(Counters))).

%% The functions the rate guard took out, when the entry has a guard.
guarded(undefined) -> #{};
guarded(G) -> #{guarded => dyntrace_guard:removed(G)}.

with_owner(undefined, Map) -> Map;
with_owner(Owner, Map) -> Map#{recording => Owner}.

describe_recording(#trace{id = Id, plan = RPlan} = T, Entries) ->
    Parts = [P || #trace{id = P, owner = O} <- Entries, O =:= Id],
    maps:merge(dyntrace_record:describe(RPlan), #{id => Id, parts => Parts, ms_left => ms_left(T)}).

ms_left(#trace{deadline = infinity}) -> infinity;
ms_left(#trace{deadline = Deadline}) -> max(0, Deadline - erlang:monotonic_time(millisecond)).

events_left(#{max_events := Budget}) ->
    try dyntrace:events_left(Budget)
    catch error:_ -> 0
    end;
events_left(_) -> infinity.

%%%===================================================================
%%% SETTING AND UNDOING
%%% OTP 27+: dyntrace's own sessions, one per tracer state (calls with the
%%% same options share one, so that an event is written once; a call with
%%% `max_events' has a count of its own, hence a session of its own). The
%%% last call of a session destroys it; the others turn off what they set.
%%% Before OTP 27: the static session, where a tracee has one tracer;
%%% undoing removes a call's flags only from the tracees whose tracer is
%%% still that call's. Undoing never raises: each step is on its own.
%%%===================================================================

session_for(#plan{tracer_state = State}, Entries) ->
    case sessions_available() of
        true ->
            Same = [S || #trace{kind = K, plan = #plan{tracer_state = St}, session = S}
                             <- Entries, K =/= found, St =:= State],
            case Same of
                [Session | _] -> Session;
                [] -> trace:session_create(?MODULE_SESSION, {dyntrace, State}, [])
            end;
        false ->
            legacy
    end.

set(Session, #plan{procs = Procs, flags = Flags, patterns = Patterns,
                   tracer_state = State}) ->
    Tracees = lists:sum([set_flags(Session, P, Flags, State) || P <- Procs]),
    _ = [leave_out_own(Session, Flags, State) || P <- Procs, not is_pid(P), not is_port(P)],
    %% An exclusion takes its functions out of the count.
    Functions = lists:sum([case MS of
                               false -> -set_pattern(Session, MFA, MS, PF);
                               _ -> set_pattern(Session, MFA, MS, PF)
                           end || {MFA, MS, PF} <- Patterns]),
    case Patterns of
        [] -> Tracees;
        _ -> Functions
    end.

%% A tracee that another tracer has (OTP 25, 26), or that ended since it
%% was named, is refused: the call undoes what it set so far.
set_flags(Session, Procs, Flags, State) ->
    try
        case Session of
            legacy ->
                erlang:trace(Procs, true,
                             [{tracer, dyntrace, State} | flags_for(Procs, Flags)]);
            _ ->
                lists:sum([session_trace(Session, Kind, Spec, true, Flags)
                           || {Kind, Spec} <- session_specs(Procs)])
        end
    catch
        error:badarg -> throw({refused, {cannot_trace, Procs}})
    end.

%% dyntrace's own processes (the supervisor and what it links: this
%% process, the announcer, samplers, recordings) are not the user's
%% workload: a spec that names every process leaves them out, so that
%% the front door's own messages never fill the user's trace.
leave_out_own(Session, Flags, State) ->
    Own = case whereis(dyntrace_sup) of
              undefined ->
                  [self()];
              Sup ->
                  Links = case erlang:process_info(Sup, links) of
                              {links, L} -> L;
                              undefined -> []
                          end,
                  lists:usort([self(), Sup | [P || P <- Links, is_pid(P)]])
          end,
    Tracer = {tracer, {dyntrace, State}},
    _ = [case Session of
             legacy ->
                 trace_info(P, tracer) =:= Tracer andalso untrace(P, flags_for(P, Flags));
             _ ->
                 untrace(Session, process, P, Flags)
         end || P <- Own],
    ok.

set_pattern(legacy, MFA, MS, PatternFlags) ->
    erlang:trace_pattern(MFA, MS, PatternFlags);
set_pattern(Session, MFA, MS, PatternFlags) ->
    trace:function(Session, MFA, MS, PatternFlags).

%% Undoes one entry; `Others' are the entries that stay (it may be among
%% them: it is left out).
undo(#trace{id = Id} = T, Others) ->
    undo1(T, [O || #trace{id = I} = O <- Others, I =/= Id]).

undo1(#trace{id = Id, session = {sampler, _, _}}, _Others) ->
    dyntrace_sup:stop_child({sampler, Id});
undo1(#trace{session = {recording, _}}, _Others) ->
    ok;
undo1(#trace{kind = found, session = legacy, plan = #plan{procs = Procs, tracer_state = St}},
      _Others) ->
    _ = [untrace(T, [all]) || T <- Procs, trace_info(T, tracer) =:= {tracer, {dyntrace, St}}],
    ok;
undo1(#trace{kind = found, session = Session}, _Others) ->
    _ = session_destroy(Session),
    ok;
undo1(#trace{session = legacy, plan = Plan}, Others) ->
    #plan{procs = Procs, flags = Flags, patterns = Patterns, tracer_state = State} = Plan,
    Tracer = {tracer, {dyntrace, State}},
    _ = [unpattern(legacy, MFA, PF) || {MFA, _, PF} <- Patterns],
    ok = unguard(legacy, Plan),
    _ = [untrace(T, Flags) || P <- Procs, T <- tracees(P), trace_info(T, tracer) =:= Tracer],
    reapply(touched(Plan, [T || #trace{session = legacy, kind = K,
                                       plan = #plan{tracer_state = St}} = T <- Others,
                                K =/= found, St =:= State]));
undo1(#trace{session = Session, plan = Plan}, Others) ->
    case [T || #trace{session = S} = T <- Others, S =:= Session] of
        [] ->
            _ = session_destroy(Session),
            ok;
        Sharing ->
            #plan{procs = Procs, flags = Flags, patterns = Patterns} = Plan,
            _ = [unpattern(Session, MFA, PF) || {MFA, _, PF} <- Patterns],
            ok = unguard(Session, Plan),
            _ = [untrace(Session, Kind, Spec, Flags)
                 || P <- Procs, {Kind, Spec} <- session_specs(P)],
            reapply(touched(Plan, Sharing))
    end.

%% The entries an undone plan may have taken a flag or pattern from: those
%% that set one of its flags on a tracee it reached, or patterns too. The
%% others are left alone: setting `all' again is not free (a triage
%% recording's focus windows end every few seconds beside a part on every
%% process).
touched(#plan{flags = Flags, procs = Procs, patterns = Patterns}, Others) ->
    [T || #trace{plan = #plan{flags = F, procs = P, patterns = Pt}} = T <- Others,
          (Patterns =/= [] andalso Pt =/= [])
              orelse (Flags -- F =/= Flags andalso meet(reach(Procs), reach(P)))].

unpattern(Session, MFA, PatternFlags) ->
    try set_pattern(Session, MFA, false, PatternFlags)
    catch error:_ -> 0
    end.

%% Sets again what the calls that share a tracer with an undone one set:
%% a flag or pattern both had stays on. A tracee gone since is skipped.
reapply(Traces) ->
    lists:foreach(fun(#trace{session = Session, plan = Plan}) ->
                          try set(Session, Plan)
                          catch _:_ -> 0
                          end
                  end, Traces).

%% The tracees that may have a procs spec's flags now: a spec with `new'
%% in it also reached every process and port created since.
tracees(existing_processes) -> erlang:processes();
tracees(existing_ports) -> erlang:ports();
tracees(existing) -> erlang:processes() ++ erlang:ports();
tracees(Spec) when is_atom(Spec) ->
    [new_processes, new_ports | erlang:processes() ++ erlang:ports()];
tracees(PidOrPort) -> [PidOrPort].

untrace(Tracee, Flags) ->
    try
        erlang:trace(Tracee, false, Flags)
    catch
        %% It ended since it was listed.
        error:badarg -> 0
    end.

untrace(Session, Kind, Spec, Flags) ->
    try
        session_trace(Session, Kind, Spec, false, Flags)
    catch
        error:badarg -> 0
    end.

%% `erlang:trace/3' specs as the session functions take them.
session_specs(P) when is_pid(P) -> [{process, P}];
session_specs(P) when is_port(P) -> [{port, P}];
session_specs(all) -> [{process, all}, {port, all}];
session_specs(processes) -> [{process, all}];
session_specs(ports) -> [{port, all}];
session_specs(existing) -> [{process, existing}, {port, existing}];
session_specs(existing_processes) -> [{process, existing}];
session_specs(existing_ports) -> [{port, existing}];
session_specs(new) -> [{process, new}, {port, new}];
session_specs(new_processes) -> [{process, new}];
session_specs(new_ports) -> [{port, new}].

session_trace(Session, process, Spec, How, Flags) ->
    trace:process(Session, Spec, How, flags_for(process, Flags));
session_trace(Session, port, Spec, How, Flags) ->
    trace:port(Session, Spec, How, flags_for(port, Flags)).

%% The flags of the classes a tracee has events of: a process is never
%% scheduled as a port, nor a port garbage collected.
flags_for(P, Flags) when is_pid(P); P =:= process; P =:= processes;
                         P =:= existing_processes; P =:= new_processes ->
    Flags -- [ports, running_ports];
flags_for(P, Flags) when is_port(P); P =:= port; P =:= ports;
                         P =:= existing_ports; P =:= new_ports ->
    [F || F <- Flags, lists:member(F, [ports, running_ports, send, 'receive'])];
flags_for(_Both, Flags) ->
    Flags.

%% Whether this runtime has trace sessions (OTP 27 and later). Asked
%% once: before OTP 27, code:ensure_loaded(trace) searches the whole code
%% path every time (0.6-3 ms on a test node, more on a node with a long
%% path), and triage's controller opens a window every 2 s.
sessions_available() ->
    case persistent_term:get({?MODULE, sessions_available}, undefined) of
        undefined ->
            Available = code:ensure_loaded(trace) =:= {module, trace}
                andalso erlang:function_exported(trace, session_create, 3),
            persistent_term:put({?MODULE, sessions_available}, Available),
            Available;
        Available ->
            Available
    end.

%%%===================================================================
%%% OVERLAPS (before OTP 27)
%%% A tracee has one tracer, and patterns are node-wide: a call with other
%%% options than a call already set, on a tracee that call may trace, would
%%% get no flags there (the runtime keeps the first tracer; `all' skips
%%% such tracees silently), and with a count, call events of the other's
%%% patterns would be counted in it. Such a call is refused.
%%%===================================================================

overlapping(#plan{tracer_state = St} = Plan, Entries) ->
    case [Id || #trace{id = Id, session = legacy, plan = #plan{tracer_state = Other} = P}
                    <- Entries, Other =/= St, conflict(Plan, P)] of
        [] -> false;
        [Id | _] -> {overlaps, Id}
    end.

conflict(A, B) ->
    meet(reach(A#plan.procs), reach(B#plan.procs))
        orelse (calls_traced(A) andalso calls_traced(B) andalso (counted(A) orelse counted(B))).

calls_traced(#plan{flags = Flags}) -> lists:member(call, Flags).

counted(#plan{tracer_state = #{max_events := _}}) -> true;
counted(_) -> false.

%% Which tracees a procs list may reach: every process, every port, and
%% the pids and ports named.
reach(Procs) ->
    lists:foldl(fun(P, {_, _, Ids}) when P =:= all; P =:= existing; P =:= new ->
                        {true, true, Ids};
                   (P, {_, Os, Ids}) when P =:= processes; P =:= existing_processes;
                                          P =:= new_processes ->
                        {true, Os, Ids};
                   (P, {Ps, _, Ids}) when P =:= ports; P =:= existing_ports;
                                          P =:= new_ports ->
                        {Ps, true, Ids};
                   (P, {Ps, Os, Ids}) ->
                        {Ps, Os, [P | Ids]}
                end, {false, false, []}, Procs).

meet({Ps1, Os1, Ids1}, {Ps2, Os2, Ids2}) ->
    (Ps1 andalso (Ps2 orelse lists:any(fun is_pid/1, Ids2)))
        orelse (Ps2 andalso lists:any(fun is_pid/1, Ids1))
        orelse (Os1 andalso (Os2 orelse lists:any(fun is_port/1, Ids2)))
        orelse (Os2 andalso lists:any(fun is_port/1, Ids1))
        orelse Ids1 -- Ids2 =/= Ids1.

%%%===================================================================
%%% VALIDATION
%%% Everything a caller passes is checked here, in the caller's process,
%%% and turned into a #plan{}; nothing after this checks it again. A bad
%%% argument raises `error({badarg, {What, Value}})'.
%%%===================================================================

%% @doc A checked `trace/3' plan; `Shared' holds tracer options (a
%% recording's, and its `max_events' count) that `Opts' may override.
-spec trace_plan(term(), term(), term(), map()) -> plan().
trace_plan(Procs, Events, Opts, Shared) ->
    #{limits := Limits} = validate_opts(Opts, #{}),
    Names = validate_events(Events),
    #plan{kind = trace,
          procs = validate_procs(Procs),
          events = Names,
          flags = flags_of(Names),
          tracer_state = tracer_state(maps:merge(Shared, Limits)),
          duration = maps:get(duration, Limits, infinity)}.

%% @doc A checked `calls/2' plan; `Shared' as for {@link trace_plan/4}.
-spec calls_plan(term(), term(), map()) -> plan().
calls_plan(Spec, Opts, Shared) ->
    Defaults = #{return => false, exception => false, scope => global,
                 procs => all, force => false, exclude => [], max_rate => undefined},
    #{limits := Limits} = O = validate_opts(Opts, Defaults),
    Specs = case is_list(Spec) of
                true -> Spec;
                false -> [Spec]
            end,
    (Specs =/= [] andalso is_proper_list(Specs)) orelse error({badarg, {calls, Spec}}),
    Exception = maps:get(exception, O),
    Return = maps:get(return, O) orelse Exception,
    Actions = [{exception_trace} || Exception] ++ [{return_trace} || Return, not Exception],
    #plan{kind = calls,
          procs = validate_procs(maps:get(procs, O)),
          events = [function_call] ++ [function_return || Return]
              ++ [function_exception || Exception]
              ++ [call_guard || maps:get(max_rate, O) =/= undefined],
          flags = [call],
          %% Exclusions come after the patterns: set in this order, they
          %% take their functions out again.
          patterns = [validate_call_spec(S, Actions, O) || S <- Specs]
              ++ [{MFA, false, [maps:get(scope, O)]} || MFA <- maps:get(exclude, O)],
          tracer_state = tracer_state(maps:merge(Shared, Limits)),
          duration = maps:get(duration, Limits, infinity),
          max_rate = maps:get(max_rate, O)}.

%% `Defaults' with `Opts' over them, the limits every call takes under key
%% `limits'. A key that is neither a limit nor in `Defaults' is refused.
validate_opts(Opts, Defaults) when is_map(Opts) ->
    maps:fold(fun(Key, Value, Acc = #{limits := Limits}) ->
                      Valid = validate_opt(Key, Value),
                      case lists:member(Key, [duration, max_events | ?TRACER_OPTIONS]) of
                          true -> Acc#{limits := Limits#{Key => Valid}};
                          false when is_map_key(Key, Defaults) -> Acc#{Key => Valid};
                          false -> error({badarg, {Key, Value}})
                      end
              end, Defaults#{limits => #{}}, Opts);
validate_opts(Opts, _) ->
    error({badarg, {options, Opts}}).

validate_opt(Key, Value) when Key =:= max_term_bytes; Key =:= payload; Key =:= redact;
                              Key =:= max_events ->
    %% The tracer's own check (max_events becomes a count when the plan
    %% is made).
    _ = dyntrace:tracer(#{Key => Value}),
    Value;
validate_opt(duration, Ms) when is_integer(Ms), Ms > 0, Ms =< 16#ffffffff -> Ms;
validate_opt(return, B) when is_boolean(B) -> B;
validate_opt(exception, B) when is_boolean(B) -> B;
validate_opt(force, B) when is_boolean(B) -> B;
validate_opt(scope, S) when S =:= local; S =:= global -> S;
validate_opt(procs, P) -> P;
validate_opt(max_rate, Rate) -> dyntrace_guard:validate(Rate);
validate_opt(exclude, L) when is_list(L) ->
    is_proper_list(L) orelse error({badarg, {exclude, L}}),
    [validate_exclude(MFA) || MFA <- L];
validate_opt(Key, Value) -> error({badarg, {Key, Value}}).

tracer_state(Limits) ->
    {tracer, dyntrace, State} = dyntrace:tracer(maps:with([max_events | ?TRACER_OPTIONS],
                                                          Limits)),
    State.

validate_procs([]) ->
    error({badarg, {procs, []}});
validate_procs(List) when is_list(List) ->
    is_proper_list(List) orelse error({badarg, {procs, List}}),
    lists:usort([validate_tracee(P) || P <- List]);
validate_procs(One) ->
    [validate_tracee(One)].

validate_tracee(P) when is_pid(P), node(P) =:= node() -> P;
validate_tracee(P) when is_port(P), node(P) =:= node() -> P;
validate_tracee(Spec) when Spec =:= all; Spec =:= processes; Spec =:= ports;
                           Spec =:= existing; Spec =:= existing_processes;
                           Spec =:= existing_ports; Spec =:= new;
                           Spec =:= new_processes; Spec =:= new_ports ->
    Spec;
validate_tracee(Name) when is_atom(Name) ->
    case whereis(Name) of
        undefined -> error({badarg, {procs, Name, not_registered}});
        Tracee -> Tracee
    end;
validate_tracee(Other) ->
    error({badarg, {procs, Other}}).

%% The event names that `Events' stands for.
validate_events(Events) when is_list(Events), Events =/= [] ->
    is_proper_list(Events) orelse error({badarg, {events, Events}}),
    Table = event_table(),
    lists:usort(lists:flatmap(fun(E) -> events_of(E, Table) end, Events));
validate_events(Events) ->
    error({badarg, {events, Events}}).

events_of(Name, Table) ->
    case [N || #{name := N} <- Table, N =:= Name] of
        [_] ->
            [Name];
        [] ->
            case group_classes(Name) of
                undefined -> error({badarg, {event, Name}});
                Classes -> [N || #{name := N, tags := Tags} <- Table,
                                 lists:any(fun({C, _}) -> lists:member(C, Classes) end,
                                           Tags)]
            end
    end.

%% A group is the events fed by some trace classes.
group_classes(procs) -> [procs];
group_classes(ports) -> [ports];
group_classes(messages) -> [send, 'receive'];
group_classes(calls) -> [call];
group_classes(gc) -> [garbage_collection];
group_classes(scheduling) -> [running_procs, running_ports];
group_classes(all) -> [procs, ports, send, 'receive', call, garbage_collection,
                       running_procs, running_ports];
group_classes(_) -> undefined.

%% The trace flags that feed `Events': each tag's class is the flag.
flags_of(Events) ->
    lists:usort([Class || #{name := N, tags := Tags} <- event_table(),
                          lists:member(N, Events), {Class, _} <- Tags]).

%% `{M, F, A}': atoms, `A' an arity (0..255), `'_'', a match spec or a
%% shell fun; `'_'' for F means any arity, for M any function too (the
%% shapes `erlang:trace_pattern/3' takes).
validate_call_spec({M, F, A} = Spec, Actions, #{force := Force, scope := Scope})
  when is_atom(M), is_atom(F) ->
    Arity = arity_of(A, Spec),
    (F =/= '_' orelse Arity =:= '_') andalso (M =/= '_' orelse F =:= '_')
        orelse error({badarg, {call_spec, Spec}}),
    MFA = {M, F, Arity},
    Force orelse refuse_wide(MFA),
    M =:= '_' orelse code:ensure_loaded(M),
    {MFA, match_spec(A, Actions, Spec), [Scope]};
validate_call_spec(Spec, _, _) ->
    error({badarg, {call_spec, Spec}}).

%% An `exclude' pattern: `{M, F, Arity | '_'}' as a call spec names
%% functions, without a match spec.
validate_exclude({M, F, A} = MFA) when is_atom(M), is_atom(F),
                                       (A =:= '_' orelse (is_integer(A) andalso A >= 0
                                                          andalso A =< 255)),
                                       (F =/= '_' orelse A =:= '_'),
                                       (M =/= '_' orelse F =:= '_') ->
    MFA;
validate_exclude(Other) ->
    error({badarg, {exclude, Other}}).

arity_of(A, _) when is_integer(A), A >= 0, A =< 255 -> A;
arity_of(A, _) when is_integer(A) -> error({badarg, {arity, A}});
arity_of('_', _) -> '_';
arity_of(A, _) when is_list(A); is_function(A, 1) -> '_';
arity_of(_, Spec) -> error({badarg, {call_spec, Spec}}).

%% recon's rule: a pattern that matches the whole node, or every function
%% of a module that every process calls (the runtime's own, kernel's,
%% stdlib's), needs `force'.
refuse_wide({'_', _, _} = MFA) ->
    error({badarg, {too_wide, MFA, "matches every module; add force => true"}});
refuse_wide({M, '_', _} = MFA) ->
    case is_core_module(M) of
        true -> error({badarg, {too_wide, MFA, "every function of a module of erts, "
                                "kernel or stdlib; add force => true"}});
        false -> ok
    end;
refuse_wide(_) ->
    ok.

is_core_module(M) ->
    code:which(M) =:= preloaded
        orelse lists:member(application:get_application(M), [{ok, kernel}, {ok, stdlib}]).

match_spec(A, Actions, _) when is_integer(A); A =:= '_' ->
    case Actions of
        [] -> true;
        _ -> [{'_', [], Actions}]
    end;
match_spec(Fun, Actions, Spec) when is_function(Fun, 1) ->
    %% Shell funs only: the shell keeps their source, which fun2ms reads.
    MS = try dbg:fun2ms(Fun) of
             Result when is_list(Result) -> Result;
             _ -> error({badarg, {match_fun, Spec}})
         catch
             exit:_ -> error({badarg, {match_fun_not_from_shell, Spec}})
         end,
    match_spec(MS, Actions, Spec);
match_spec(MS, Actions, Spec) when is_list(MS) ->
    Valid = is_proper_list(MS) andalso MS =/= []
        andalso lists:all(fun({_, G, B}) -> is_proper_list(G) andalso is_proper_list(B);
                             (_) -> false
                          end, MS),
    Valid orelse error({badarg, {match_spec, Spec, not_a_match_spec}}),
    case erlang:match_spec_test([], MS, trace) of
        {ok, _, _, _} -> [{Head, Guards, Body ++ (Actions -- Body)}
                          || {Head, Guards, Body} <- MS];
        {error, Why} -> error({badarg, {match_spec, Spec, Why}})
    end;
match_spec(_, _, Spec) ->
    error({badarg, {call_spec, Spec}}).

%%%===================================================================
%%% THE EVENT TABLE
%%% The NIF's own table (native/events.table): each event with the trace
%%% tags that emit it, each tag with its class, which is its trace flag.
%%%===================================================================

event_table() ->
    dyntrace:events().
