%%% @doc The front door's process, behind `dyntrace:trace/3', `calls/2',
%%% `sample/2', `memory/1', `stop/1', `clear/0' and `status/0': the caller
%%% checks its arguments (`dyntrace_plans'), this supervised process sets
%%% them (`dyntrace_runtime'), starts the samplers and recordings, keeps
%%% every entry in `dyntrace_sup''s table before it sets it (its restart
%%% finds them again), ends an entry after its `duration' and undoes it on
%%% `stop/1' or `clear/0'. Why that is safe on a production node, and the
%%% contract: docs/reference.md, "The front door".
-module(dyntrace_ctl).
-behaviour(gen_server).

%%% PUBLIC (through dyntrace) %%%
-export([trace/3, calls/2, clear/0, status/0, sample/2, memory/1, stop/1]).

%%% PRIVATE EXPORTS (gen_server) %%%
-export([start_link/0, init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2]).

-include("dyntrace_ctl.hrl").

-type procs() :: dyntrace_plans:procs().
-type event_or_group() :: dyntrace_plans:event_or_group().
-type trace_opts() :: dyntrace_plans:trace_opts().
-type calls_opts() :: dyntrace_plans:calls_opts().
-type call_spec() :: dyntrace_plans:call_spec().
-type plan() :: dyntrace_plans:plan().
-type result() :: {ok, Matched :: non_neg_integer()} | {error, term()}.
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

-export_type([procs/0, event_or_group/0, trace_opts/0, calls_opts/0,
              call_spec/0, result/0, status/0, plan/0]).

-define(SERVER, ?MODULE).
%% How long clear() waits for the recordings it ended to be gone.
-define(CLEAR_WAIT_MS, 60000).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc See {@link dyntrace:trace/3}.
-spec trace(procs(), [event_or_group()], trace_opts()) -> result().
trace(Procs, Events, Opts) ->
    Plan = dyntrace_plans:trace(Procs, Events, Opts, #{}),
    named(dyntrace_ctl_client:start(Plan)).

%% @doc See {@link dyntrace:calls/2}.
-spec calls(call_spec() | [call_spec()], calls_opts()) -> result().
calls(Spec, Opts) ->
    Plan = dyntrace_plans:calls(Spec, Opts, #{}),
    named(dyntrace_ctl_client:start(Plan)).

%% @doc See {@link dyntrace:sample/2}.
-spec sample(dyntrace_sampler:procs(), dyntrace_sampler:opts()) ->
          {ok, pos_integer()} | {error, term()}.
sample(Procs, Opts) ->
    named(dyntrace_ctl_client:start_sampler(dyntrace_sampler:plan(Procs, Opts))).

%% What was started writes the node's and its processes' names now, in
%% the caller: a session made before it (by anyone: record/2, the
%% operator's `lttng', an outside command) names processes that started
%% or registered before it began. (A session made later is named by the
%% announcer when `process_name' becomes enabled.)
named({ok, _} = Started) ->
    ok = dyntrace_announcer:announce_nodes(),
    ok = dyntrace_announcer:announce_processes(),
    Started;
named(Other) ->
    Other.

%% @doc See {@link dyntrace:memory/1}.
-spec memory(dyntrace_memory:opts()) -> {ok, pos_integer()} | {error, term()}.
memory(Opts) ->
    dyntrace_ctl_client:start_sampler(dyntrace_memory:plan(Opts)).

%% @doc See {@link dyntrace:stop/1}.
-spec stop(pos_integer()) -> ok | {ok, file:filename()} | {error, term()}.
stop(Id) when is_integer(Id), Id > 0 ->
    case dyntrace_ctl_client:stop(Id) of
        {recording, Pid} -> dyntrace_record:stop(Pid);
        Other -> Other
    end;
stop(Id) ->
    error({badarg, {id, Id}}).

%% @doc See {@link dyntrace:clear/0}.
-spec clear() -> ok.
clear() ->
    {ok, Ended} = dyntrace_ctl_client:clear(),
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
    {Traces, Recordings} = dyntrace_ctl_client:status(),
    #{traces => Traces,
      recordings => Recordings,
      sessions => dyntrace_runtime:sessions_available(),
      lttng_enabled => dyntrace:enabled_events(),
      counters => dyntrace:stats()}.

%%%===================================================================
%%% THE OWNER PROCESS
%%% Started by dyntrace_sup (on first use) and supervised: it holds the
%%% duration timers and monitors the samplers and recordings; what it set
%%% is in dyntrace_sup's table, so that its restart finds it again.
%%%===================================================================

-type state() :: #{timers := #{pos_integer() => reference()},
                   monitors := #{reference() => pos_integer()}}.

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
    Session = dyntrace_runtime:session_for(Plan, Entries),
    case Session =:= legacy andalso dyntrace_plans:overlapping(Plan, Entries) of
        {overlaps, Id} ->
            {{error, {overlaps, Id}}, State};
        false ->
            T = #trace{id = new_id(), kind = Plan#plan.kind, plan = Plan, session = Session,
                       deadline = deadline(Plan#plan.duration), owner = Owner},
            put(T),
            try dyntrace_runtime:set(Session, Plan) of
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
    dyntrace_runtime:sweep(),
    {{ok, Workers}, State1}.

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
    case dyntrace_runtime:sessions_available() of
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
                        end, #{}, [Tr || {_, St, _} = Tr <- dyntrace_runtime:legacy_tracees(),
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
         || S <- dyntrace_runtime:dyntrace_sessions(), not lists:member(S, Weak)],
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
    _ = [dyntrace_runtime:set_pattern(S, MFA, true, [call_count]) || MFA <- Functions],
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
            Count = fun(MFA) -> dyntrace_runtime:call_count(S, MFA) end,
            {G1, Over} = dyntrace_guard:poll(G, Count),
            Scopes = lists:usort([Scope || {_, MS, [Scope]} <- Patterns, MS =/= false]),
            {Calls, Ms} = dyntrace_guard:rate(G1),
            _ = [begin
                     _ = [dyntrace_runtime:set_pattern(S, MFA, false, [Scope]) || Scope <- Scopes],
                     _ = dyntrace_runtime:set_pattern(S, MFA, false, [call_count]),
                     dyntrace:emit_call_guard(MFA, Calls, Ms)
                 end || MFA <- Over],
            Removed = [{MFA, false, [Scope]} || MFA <- Over, Scope <- Scopes],
            put(T#trace{plan = P#plan{guard = G1, patterns = Patterns ++ Removed}}),
            _ = erlang:send_after(dyntrace_guard:interval(G1), self(), {guard, Id}),
            ok;
        _ ->
            ok
    end.

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

%% Undoes one entry; `Others' are the entries that stay (it may be among
%% them: it is left out).
undo(#trace{id = Id, session = {sampler, _, _}}, _Others) ->
    dyntrace_sup:stop_child({sampler, Id});
undo(#trace{session = {recording, _}}, _Others) ->
    ok;
undo(T, Others) ->
    dyntrace_runtime:undo(T, Others).
