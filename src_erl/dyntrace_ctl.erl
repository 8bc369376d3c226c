%%% @doc The front door behind `dyntrace:trace/3', `calls/2', `clear/0' and
%%% `status/0': one call sets the trace flags (and patterns) that feed the
%%% LTTng events asked for, with limits, and one call undoes it.
%%%
%%% Why it is safe on a production node:
%%% - the flags come from the tracer's own event table, so a call sets only
%%%   the flags its events need;
%%% - `max_events => N' is counted in the NIF: after `N' events written the
%%%   tracer answers `remove' and the runtime drops the flags itself, with no
%%%   process or mailbox in the way however fast events come;
%%% - `duration => Ms' undoes everything that call set after `Ms', from a
%%%   long-lived process of its own (not linked to the caller): the limits
%%%   hold after the shell that set them is gone;
%%% - a pattern on every module, or on every function of a module of erts,
%%%   kernel or stdlib, is refused unless `force => true' (a careless
%%%   pattern must not take a node down);
%%% - `clear()' undoes what dyntrace set and nothing else: on OTP 27 and
%%%   later the calls run in dyntrace's own trace sessions (dbg, tprof and
%%%   other sessions are untouched), before that only the tracees whose
%%%   tracer is a call's tracer lose that call's flags.
%%%
%%% ```
%%% 1> dyntrace:calls({queue, in, fun([_, Q]) when is_tuple(Q) -> return_trace() end},
%%%                   #{max_events => 10, duration => 60000}).
%%% {ok,1}
%%% 2> dyntrace:trace(whereis(logger), [messages, gc], #{max_events => 1000}).
%%% {ok,1}
%%% 3> dyntrace:status().
%%% #{counters => #{bad_arguments => 0,bad_tracer_state => 0},
%%%   lttng_enabled => [function_call,function_return],
%%%   sessions => false,
%%%   traces => [#{events_left => 10,flags => [call],id => 1,
%%%                ms_left => 58512, ...}, ...]}
%%% 4> dyntrace:clear().
%%% ok
%%% '''
%%% Nothing is recorded until the events are enabled in an LTTng session
%%% (`lttng enable-event -u org_erlang_dyntrace:function_call'...).
-module(dyntrace_ctl).
-behaviour(gen_server).

%%% PUBLIC (through dyntrace) %%%
-export([trace/3, calls/2, clear/0, status/0, sample/2, memory/1]).

%%% PRIVATE EXPORTS (gen_server) %%%
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

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
                        force => boolean()}.
-type match_fun() :: fun(([term()]) -> term()).
-type call_spec() :: {module() | '_', atom(), arity() | '_' | ets:match_spec()
                                              | match_fun()}.
-type result() :: {ok, Matched :: non_neg_integer()} | {error, term()}.
-type trace_status() :: #{id := pos_integer(),
                          kind := trace | calls | sample | memory,
                          procs := [pid() | port() | procs_spec()],
                          flags := [atom()],
                          patterns := [{mfa_pattern(), ets:match_spec() | true,
                                        [local | global]}],
                          events_left := non_neg_integer() | infinity,
                          ms_left := non_neg_integer() | infinity}.
-type status() :: #{traces := [trace_status()],
                    sessions := boolean(),
                    lttng_enabled := [dyntrace:event_name()],
                    counters := dyntrace:counters()}.
-type mfa_pattern() :: {module() | '_', atom(), arity() | '_'}.

-export_type([procs/0, event_or_group/0, trace_opts/0, calls_opts/0,
              call_spec/0, result/0, status/0]).

-define(SERVER, ?MODULE).
%% The options that go into the tracer state as they are.
-define(TRACER_OPTIONS, [max_term_bytes, payload, redact]).

%% What one call set: enough to undo exactly that.
-record(plan, {kind :: trace | calls | sample | memory,
               procs = [] :: [pid() | port() | procs_spec()],
               flags = [] :: [atom()],
               patterns = [] :: [{mfa_pattern(), ets:match_spec() | true,
                                  [local | global]}],
               tracer_state :: dyntrace:tracer_state(),
               duration = infinity :: millisecs() | infinity}).

-record(trace, {id :: pos_integer(),
                plan :: #plan{},
                %% OTP 27+: the call's own trace session; `legacy' before.
                session :: legacy | term(),
                timer :: reference() | undefined,
                deadline :: integer() | infinity}).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc See {@link dyntrace:trace/3}.
-spec trace(procs(), [event_or_group()], trace_opts()) -> result().
trace(Procs, Events, Opts) ->
    Plan = validate_trace(Procs, Events, Opts),
    call({start, Plan}).

%% @doc See {@link dyntrace:calls/2}.
-spec calls(call_spec() | [call_spec()], calls_opts()) -> result().
calls(Spec, Opts) ->
    Plan = validate_calls(Spec, Opts),
    call({start, Plan}).

%% @doc See {@link dyntrace:sample/2}.
-spec sample(dyntrace_sampler:procs(), dyntrace_sampler:opts()) -> {ok, pos_integer()}.
sample(Procs, Opts) ->
    call({start_sampler, dyntrace_sampler:plan(Procs, Opts)}).

%% @doc See {@link dyntrace:memory/1}.
-spec memory(dyntrace_memory:opts()) -> {ok, pos_integer()}.
memory(Opts) ->
    call({start_sampler, dyntrace_memory:plan(Opts)}).

%% @doc See {@link dyntrace:clear/0}.
-spec clear() -> ok.
clear() ->
    case whereis(?SERVER) of
        undefined -> ok;
        _ -> call(clear)
    end.

%% @doc See {@link dyntrace:status/0}.
-spec status() -> status().
status() ->
    Traces = case whereis(?SERVER) of
                 undefined -> [];
                 _ -> call(status)
             end,
    #{traces => Traces,
      sessions => sessions_available(),
      lttng_enabled => dyntrace:enabled_events(),
      counters => dyntrace:stats()}.

%%%===================================================================
%%% THE OWNER PROCESS
%%% Started on first use, registered, linked to nobody: it holds the
%%% duration timers and, on OTP 27+, the trace session handles (a handle
%%% that is garbage collected ends its session).
%%%===================================================================

call(Request) ->
    gen_server:call(owner(), Request, infinity).

owner() ->
    case gen_server:start({local, ?SERVER}, ?MODULE, [], []) of
        {ok, Pid} -> Pid;
        {error, {already_started, Pid}} -> Pid
    end.

%% @private
-spec init([]) -> {ok, #{pos_integer() => #trace{}}}.
init([]) ->
    {ok, #{}}.

%% @private
-spec handle_call(term(), gen_server:from(), #{pos_integer() => #trace{}}) ->
          {reply, term(), #{pos_integer() => #trace{}}}.
handle_call({start, Plan}, _From, Traces) ->
    Id = erlang:unique_integer([positive, monotonic]),
    Trace = #trace{id = Id, plan = Plan, session = session_for(Plan, Traces)},
    try set(Trace#trace.session, Plan) of
        Matched -> {reply, {ok, Matched}, Traces#{Id => arm(Trace)}}
    catch
        %% Whatever was set so far is undone: a call sets all or nothing.
        throw:{refused, Reason} ->
            undo(Trace, maps:values(Traces)),
            {reply, {error, Reason}, Traces};
        error:Reason ->
            undo(Trace, maps:values(Traces)),
            {reply, {error, Reason}, Traces}
    end;
handle_call({start_sampler, #{kind := Kind, procs := Procs, duration := Ms} = SPlan},
            _From, Traces) ->
    Id = erlang:unique_integer([positive, monotonic]),
    {Pid, Counters} = dyntrace_sampler:start(SPlan, self()),
    %% A state of its own: no trace call ever shares a sampler's session.
    Plan = #plan{kind = Kind, procs = Procs, tracer_state = {sampler, Id}, duration = Ms},
    Session = {sampler, Pid, erlang:monitor(process, Pid), Counters},
    {reply, {ok, Id}, Traces#{Id => arm(#trace{id = Id, plan = Plan, session = Session})}};
handle_call(clear, _From, Traces) ->
    undo_all(maps:values(Traces)),
    {reply, ok, #{}};
handle_call(status, _From, Traces) ->
    {reply, [describe(T) || T <- maps:values(Traces)], Traces};
handle_call(_Other, _From, Traces) ->
    {reply, {error, unknown_request}, Traces}.

%% @private
-spec handle_cast(term(), #{pos_integer() => #trace{}}) ->
          {noreply, #{pos_integer() => #trace{}}}.
handle_cast(_Msg, Traces) ->
    {noreply, Traces}.

%% @private
-spec handle_info(term(), #{pos_integer() => #trace{}}) ->
          {noreply, #{pos_integer() => #trace{}}}.
handle_info({expired, Id}, Traces) ->
    case maps:take(Id, Traces) of
        {Trace, Rest} ->
            undo(Trace#trace{timer = undefined}, maps:values(Rest)),
            {noreply, Rest};
        error ->
            {noreply, Traces}
    end;
handle_info({'DOWN', Ref, process, _, _}, Traces) ->
    %% A sampler that ended by itself (max_events, its targets gone).
    case [T || #trace{session = {sampler, _, R, _}} = T <- maps:values(Traces), R =:= Ref] of
        [#trace{id = Id} = T] ->
            undo(T, []),
            {noreply, maps:remove(Id, Traces)};
        [] ->
            {noreply, Traces}
    end;
handle_info(_Msg, Traces) ->
    {noreply, Traces}.

arm(#trace{plan = #plan{duration = infinity}} = T) ->
    T#trace{deadline = infinity};
arm(#trace{id = Id, plan = #plan{duration = Ms}} = T) ->
    T#trace{timer = erlang:send_after(Ms, self(), {expired, Id}),
            deadline = erlang:monotonic_time(millisecond) + Ms}.

describe(#trace{id = Id, plan = P, deadline = Deadline} = T) ->
    Left = case Deadline of
               infinity -> infinity;
               _ -> max(0, Deadline - erlang:monotonic_time(millisecond))
           end,
    maps:merge(#{id => Id,
                 kind => P#plan.kind,
                 procs => P#plan.procs,
                 flags => P#plan.flags,
                 patterns => P#plan.patterns,
                 events_left => events_left(P#plan.tracer_state),
                 ms_left => Left},
               sampler_status(T)).

sampler_status(#trace{session = {sampler, _, _, Counters}}) ->
    dyntrace_sampler:describe(Counters);
sampler_status(_) ->
    #{}.

events_left(#{max_events := Budget}) -> dyntrace:events_left(Budget);
events_left(_) -> infinity.

%%%===================================================================
%%% SETTING AND UNDOING
%%% OTP 27+: dyntrace's own sessions, one per tracer state (calls with the
%%% same options share one, so that an event is written once; a call with
%%% `max_events' has a count of its own, hence a session of its own). The
%%% last call of a session destroys it; the others turn off what they set.
%%% Before OTP 27: the static session, where a tracee has one tracer;
%%% undoing removes a call's flags only from the tracees whose tracer is
%%% still that call's.
%%%===================================================================

session_for(#plan{tracer_state = State}, Traces) ->
    case sessions_available() of
        true ->
            Same = [S || #trace{plan = #plan{tracer_state = St}, session = S}
                             <- maps:values(Traces), St =:= State],
            case Same of
                [Session | _] -> Session;
                [] -> trace:session_create(dyntrace, {dyntrace, State}, [])
            end;
        false ->
            legacy
    end.

set(Session, #plan{procs = Procs, flags = Flags, patterns = Patterns,
                   tracer_state = State}) ->
    Tracees = lists:sum([set_flags(Session, P, Flags, State) || P <- Procs]),
    Functions = lists:sum([set_pattern(Session, MFA, MS, PF)
                           || {MFA, MS, PF} <- Patterns]),
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

set_pattern(legacy, MFA, MS, PatternFlags) ->
    erlang:trace_pattern(MFA, MS, PatternFlags);
set_pattern(Session, MFA, MS, PatternFlags) ->
    trace:function(Session, MFA, MS, PatternFlags).

undo_all([]) ->
    ok;
undo_all([Trace | Others]) ->
    undo(Trace, Others),
    undo_all(Others).

%% Undoes one call; `Others' are the calls that stay.
undo(#trace{timer = Timer} = T, Others) when is_reference(Timer) ->
    _ = erlang:cancel_timer(Timer),
    undo(T#trace{timer = undefined}, Others);
undo(#trace{session = {sampler, Pid, Ref, _}}, _Others) ->
    erlang:demonitor(Ref, [flush]),
    dyntrace_sampler:stop(Pid);
undo(#trace{session = legacy, plan = Plan}, Others) ->
    #plan{procs = Procs, flags = Flags, patterns = Patterns,
          tracer_state = State} = Plan,
    Tracer = {tracer, {dyntrace, State}},
    _ = [erlang:trace_pattern(MFA, false, PF) || {MFA, _, PF} <- Patterns],
    _ = [untrace(T, Flags) || P <- Procs, T <- tracees(P),
                              erlang:trace_info(T, tracer) =:= Tracer],
    reapply([T || #trace{session = legacy, plan = #plan{tracer_state = St}} = T <- Others,
                  St =:= State]);
undo(#trace{session = Session, plan = Plan}, Others) ->
    case [T || #trace{session = S} = T <- Others, S =:= Session] of
        [] ->
            trace:session_destroy(Session);
        Sharing ->
            #plan{procs = Procs, flags = Flags, patterns = Patterns} = Plan,
            _ = [trace:function(Session, MFA, false, PF) || {MFA, _, PF} <- Patterns],
            _ = [untrace(Session, Kind, Spec, Flags)
                 || P <- Procs, {Kind, Spec} <- session_specs(P)],
            reapply(Sharing)
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

%% Whether this runtime has trace sessions (OTP 27 and later).
sessions_available() ->
    code:ensure_loaded(trace) =:= {module, trace}
        andalso erlang:function_exported(trace, session_create, 3).

%%%===================================================================
%%% VALIDATION
%%% Everything a caller passes is checked here, in the caller's process,
%%% and turned into a #plan{}; nothing after this checks it again. A bad
%%% argument raises `error({badarg, {What, Value}})'.
%%%===================================================================

validate_trace(Procs, Events, Opts) ->
    #{limits := Limits} = validate_opts(Opts, #{}),
    #plan{kind = trace,
          procs = validate_procs(Procs),
          flags = flags_of(validate_events(Events)),
          tracer_state = tracer_state(Limits),
          duration = maps:get(duration, Limits, infinity)}.

validate_calls(Spec, Opts) ->
    Defaults = #{return => false, exception => false, scope => global,
                 procs => all, force => false},
    #{limits := Limits} = O = validate_opts(Opts, Defaults),
    Specs = case is_list(Spec) of
                true -> Spec;
                false -> [Spec]
            end,
    Specs =/= [] orelse error({badarg, {calls, Spec}}),
    Actions = [{exception_trace} || maps:get(exception, O)]
        ++ [{return_trace} || maps:get(return, O), not maps:get(exception, O)],
    #plan{kind = calls,
          procs = validate_procs(maps:get(procs, O)),
          flags = [call],
          patterns = [validate_call_spec(S, Actions, O) || S <- Specs],
          tracer_state = tracer_state(Limits),
          duration = maps:get(duration, Limits, infinity)}.

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

validate_opt(Key, Value) when Key =:= max_term_bytes; Key =:= payload; Key =:= redact ->
    %% The tracer's own check.
    {tracer, dyntrace, #{Key := Valid}} = dyntrace:tracer(#{Key => Value}),
    Valid;
validate_opt(max_events, N) when is_integer(N), N > 0, N < 1 bsl 64 -> N;
validate_opt(duration, Ms) when is_integer(Ms), Ms > 0, Ms =< 16#ffffffff -> Ms;
validate_opt(return, B) when is_boolean(B) -> B;
validate_opt(exception, B) when is_boolean(B) -> B;
validate_opt(force, B) when is_boolean(B) -> B;
validate_opt(scope, S) when S =:= local; S =:= global -> S;
validate_opt(procs, P) -> P;
validate_opt(Key, Value) -> error({badarg, {Key, Value}}).

tracer_state(Limits) ->
    {tracer, dyntrace, State} = dyntrace:tracer(maps:with([max_events | ?TRACER_OPTIONS],
                                                          Limits)),
    State.

validate_procs([]) ->
    error({badarg, {procs, []}});
validate_procs(List) when is_list(List) ->
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

validate_call_spec({M, F, A} = Spec, Actions, #{force := Force, scope := Scope})
  when is_atom(M), is_atom(F) ->
    MFA = {M, F, arity_of(A)},
    Force orelse refuse_wide(MFA),
    M =:= '_' orelse code:ensure_loaded(M),
    {MFA, match_spec(A, Actions, Spec), [Scope]};
validate_call_spec(Spec, _, _) ->
    error({badarg, {call_spec, Spec}}).

arity_of(A) when is_integer(A), A >= 0, A =< 255 -> A;
arity_of(_) -> '_'.

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
