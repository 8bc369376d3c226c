%%% @doc What a plan sets in the runtime, and undoes, and what the runtime
%%% shows traced by dyntrace.
%%% OTP 27+: dyntrace's own sessions, one per tracer state (calls with the
%%% same options share one, so that an event is written once; a call with
%%% `max_events' has a count of its own, hence a session of its own). The
%%% last call of a session destroys it; the others turn off what they set.
%%% Before OTP 27: the static session, where a tracee has one tracer;
%%% undoing removes a call's flags only from the tracees whose tracer is
%%% still that call's. Undoing never raises: each step is on its own.
-module(dyntrace_runtime).

-export([session_for/2, set/2, undo/2, sweep/0, legacy_tracees/0, dyntrace_sessions/0,
         sessions_available/0, set_pattern/4, call_count/2]).

-include("dyntrace_ctl.hrl").

%% The name of dyntrace's trace sessions (OTP 27+).
-define(MODULE_SESSION, dyntrace).

%% @doc The session a plan is set in: `legacy' before OTP 27; after, the
%% session of an entry with the same tracer state, else a new one.
-spec session_for(#plan{}, [#trace{}]) -> term().
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

%% @doc Sets a plan in `Session': how many tracees, or functions when it
%% has patterns, it matched. A tracee it cannot trace throws
%% `{refused, {cannot_trace, Procs}}'.
-spec set(term(), #plan{}) -> integer().
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

%% @doc A trace pattern in `Session' (`legacy': the static session).
-spec set_pattern(term(), mfa() | {module() | '_', atom(), arity() | '_'},
                  ets:match_spec() | boolean(), [atom()]) -> non_neg_integer().
set_pattern(legacy, MFA, MS, PatternFlags) ->
    erlang:trace_pattern(MFA, MS, PatternFlags);
set_pattern(Session, MFA, MS, PatternFlags) ->
    trace:function(Session, MFA, MS, PatternFlags).

%% @doc Undoes one trace, calls or found entry; `Others' are the entries
%% that stay (it may be among them: it is left out).
-spec undo(#trace{}, [#trace{}]) -> ok.
undo(#trace{id = Id} = T, Others) ->
    undo1(T, [O || #trace{id = I} = O <- Others, I =/= Id]).

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
touched(#plan{flags = Flags, patterns = Patterns} = Plan, Others) ->
    [T || #trace{plan = #plan{flags = F, patterns = Pt} = P} = T <- Others,
          (Patterns =/= [] andalso Pt =/= [])
              orelse (Flags -- F =/= Flags andalso dyntrace_plans:may_meet(Plan, P))].

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

%% @doc Whether this runtime has trace sessions (OTP 27 and later). Asked
%% once: before OTP 27, code:ensure_loaded(trace) searches the whole code
%% path every time (0.6-3 ms on a test node, more on a node with a long
%% path), and triage's controller opens a window every 2 s.
-spec sessions_available() -> boolean().
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

%% @doc Undoes what the runtime shows traced by dyntrace: every tracee
%% whose tracer is dyntrace in the runtime's own session; on OTP 27+ every
%% session of dyntrace's.
-spec sweep() -> ok.
sweep() ->
    _ = [untrace(T, [all]) || {T, _, _} <- legacy_tracees()],
    _ = [session_destroy(S) || S <- dyntrace_sessions()],
    ok.

%% @doc The tracees of the static session whose tracer is dyntrace: each
%% with its tracer state and flags.
-spec legacy_tracees() -> [{pid() | port() | atom(), dyntrace:tracer_state(), [atom()]}].
legacy_tracees() ->
    [{T, St, Flags}
     || T <- [new_processes, new_ports | erlang:processes() ++ erlang:ports()],
        {tracer, {dyntrace, St}} <- [trace_info(T, tracer)],
        {flags, Flags} <- [trace_info(T, flags)]].

trace_info(T, What) ->
    try erlang:trace_info(T, What)
    catch error:badarg -> undefined
    end.

%% @doc The weak handles of the sessions named dyntrace (OTP 27+).
-spec dyntrace_sessions() -> [term()].
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

%% @doc A function's call count in `Session'; `undefined' when unknown.
-spec call_count(term(), mfa()) -> non_neg_integer() | undefined.
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
