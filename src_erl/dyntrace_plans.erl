%%% @doc The plans of `dyntrace:trace/3' and `calls/2': every argument
%%% checked here, in the caller's process, and turned into a plan of the
%%% flags and patterns to set; nothing after this checks it again. A bad
%%% argument raises `error({badarg, {What, Value}})'. See docs/reference.md.
-module(dyntrace_plans).

-export([trace/4, calls/3, events/1, overlapping/2, may_meet/2]).

-include("dyntrace_ctl.hrl").

-type tracee() :: pid() | port() | atom().
-type procs() :: tracee() | procs_spec() | [tracee() | procs_spec()].
-type group() :: procs | ports | messages | calls | gc | scheduling | all.
-type event_or_group() :: dyntrace:event_name() | group().
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

%% A checked trace or calls plan, ready to set.
-type plan() :: #plan{}.

-export_type([procs/0, event_or_group/0, trace_opts/0, calls_opts/0, call_spec/0, plan/0]).

%% The options that go into the tracer state as they are.
-define(TRACER_OPTIONS, [max_term_bytes, payload, redact]).

%% @doc A checked `dyntrace:trace/3' plan; `Shared' holds tracer options (a
%% recording's, and its `max_events' count) that `Opts' may override.
-spec trace(term(), term(), term(), map()) -> plan().
trace(Procs, Events, Opts, Shared) ->
    #{limits := Limits} = validate_opts(Opts, #{}),
    Names = validate_events(Events),
    #plan{kind = trace,
          procs = validate_procs(Procs),
          events = Names,
          flags = flags_of(Names),
          tracer_state = tracer_state(maps:merge(Shared, Limits)),
          duration = maps:get(duration, Limits, infinity)}.

%% @doc A checked `dyntrace:calls/2' plan; `Shared' as for {@link trace/4}.
-spec calls(term(), term(), map()) -> plan().
calls(Spec, Opts, Shared) ->
    Defaults = #{return => false, exception => false, scope => global,
                 procs => all, force => false, exclude => [], max_rate => undefined},
    #{limits := Limits} = O = validate_opts(Opts, Defaults),
    Specs = case is_list(Spec) of
                true -> Spec;
                false -> [Spec]
            end,
    (Specs =/= [] andalso dyntrace_lib:is_proper_list(Specs)) orelse error({badarg, {calls, Spec}}),
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
    _ = dyntrace_options:validate(#{Key => Value}),
    Value;
validate_opt(duration, Ms) when is_integer(Ms), Ms > 0, Ms =< 16#ffffffff -> Ms;
validate_opt(return, B) when is_boolean(B) -> B;
validate_opt(exception, B) when is_boolean(B) -> B;
validate_opt(force, B) when is_boolean(B) -> B;
validate_opt(scope, S) when S =:= local; S =:= global -> S;
validate_opt(procs, P) -> P;
validate_opt(max_rate, Rate) -> dyntrace_guard:validate(Rate);
validate_opt(exclude, L) when is_list(L) ->
    dyntrace_lib:is_proper_list(L) orelse error({badarg, {exclude, L}}),
    [validate_exclude(MFA) || MFA <- L];
validate_opt(Key, Value) -> error({badarg, {Key, Value}}).

tracer_state(Limits) ->
    dyntrace_options:validate(maps:with([max_events | ?TRACER_OPTIONS], Limits)).

validate_procs([]) ->
    error({badarg, {procs, []}});
validate_procs(List) when is_list(List) ->
    dyntrace_lib:is_proper_list(List) orelse error({badarg, {procs, List}}),
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
    dyntrace_lib:is_proper_list(Events) orelse error({badarg, {events, Events}}),
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
    Valid = dyntrace_lib:is_proper_list(MS) andalso MS =/= []
        andalso lists:all(fun({_, G, B}) ->
                                  dyntrace_lib:is_proper_list(G)
                                      andalso dyntrace_lib:is_proper_list(B);
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

%% @doc The LTTng events a plan writes.
-spec events(plan()) -> [dyntrace:event_name()].
events(#plan{events = Events}) ->
    Events.

%%%===================================================================
%%% OVERLAPS (before OTP 27)
%%% A tracee has one tracer, and patterns are node-wide: a call with other
%%% options than a call already set, on a tracee that call may trace, would
%%% get no flags there (the runtime keeps the first tracer; `all' skips
%%% such tracees silently), and with a count, call events of the other's
%%% patterns would be counted in it. Such a call is refused.
%%%===================================================================

%% @doc Before OTP 27: `{overlaps, Id}' when `Plan' overlaps the plan of
%% entry `Id' among `Entries' (with another tracer state), else `false'.
-spec overlapping(plan(), [#trace{}]) -> {overlaps, pos_integer()} | false.
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

%% @doc Whether the processes and ports two plans name may meet.
-spec may_meet(plan(), plan()) -> boolean().
may_meet(#plan{procs = A}, #plan{procs = B}) ->
    meet(reach(A), reach(B)).
