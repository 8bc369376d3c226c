%%% The front door as an operator uses it: `dyntrace:trace/3' and
%%% `dyntrace:calls/2' with limits, `dyntrace:clear/0', `dyntrace:status/0'.
%%% Each case records a real LTTng session and reads it back with
%%% babeltrace2, or reads what the runtime says is traced
%%% (`erlang:trace_info/2', or `trace:info/3' over every session on OTP
%%% 27+), as a user would check it.
-module(dyntrace_ctl_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([t_calls_exclude/1, t_calls_guard/1, t_calls_guard_global/1, all/0, suite/0, init_per_suite/1, end_per_suite/1,
         init_per_testcase/2, end_per_testcase/2]).
-export([t_trace_messages/1,
         t_trace_flags_from_events/1,
         t_trace_registered_name/1,
         t_calls/1,
         t_calls_match_fun/1,
         t_calls_exception/1,
         t_max_events/1,
         t_max_events_concurrent/1,
         t_max_events_with_payload/1,
         t_duration/1,
         t_limits_outlive_caller/1,
         t_overlapping_calls/1,
         t_clear_leaves_dbg/1,
         t_wide_patterns_refused/1,
         t_bad_arguments/1,
         t_status/1,
         t_dbg_module_tracer/1,
         t_sessions/1,
         t_names_on_every_path/1]).

-import(dyntrace_test_mod, [actor/0, run/2]).
-import(dyntrace_test_trace, [flags/1, traced/1, sessions_available/0]).

suite() ->
    [{timetrap, {minutes, 2}}].

all() ->
    [t_trace_messages,
     t_trace_flags_from_events,
     t_trace_registered_name,
     t_calls,
     t_calls_match_fun,
     t_calls_exception,
     t_calls_exclude,
     t_calls_guard,
     t_calls_guard_global,
     t_max_events,
     t_max_events_concurrent,
     t_max_events_with_payload,
     t_duration,
     t_limits_outlive_caller,
     t_overlapping_calls,
     t_clear_leaves_dbg,
     t_wide_patterns_refused,
     t_bad_arguments,
     t_status,
     t_dbg_module_tracer,
     t_sessions,
     t_names_on_every_path].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    {module, dyntrace_test_mod} = code:ensure_loaded(dyntrace_test_mod),
    Config.

end_per_suite(_Config) ->
    ok.

init_per_testcase(_Case, Config) ->
    Config.

end_per_testcase(_Case, _Config) ->
    ok = dyntrace:clear(),
    dbg:stop().

%%%===================================================================
%%% Cases
%%%===================================================================

%% A node loaded long before, a session made from outside it (the `lttng'
%% command line, as an operator does) with `process_name' and `node_name'
%% enabled, then `trace/3', `calls/2' or `sample/2': the trace names the
%% processes registered before, and the node. The announcer (which names
%% processes when the event becomes enabled) is suspended, so that only
%% the call can have written the names.
t_names_on_every_path(_Config) ->
    %% The front door's first use replaces the announcer the load started
    %% by its supervisor's: the one to suspend is that one.
    _ = dyntrace:status(),
    Announcer = whereis(dyntrace_node_names),
    true = is_pid(Announcer),
    A = actor(),
    Starts = [{trace, fun() -> dyntrace:trace(A, [message_send], #{}) end},
              {calls, fun() -> dyntrace:calls({dyntrace_test_mod, work, 1}, #{procs => [A]}) end},
              {sample, fun() -> dyntrace:sample(A, #{interval => 50}) end}],
    [begin
         Name = list_to_atom("names_probe_" ++ atom_to_list(Path)),
         Probe = spawn(fun() -> receive stop -> ok end end),
         true = register(Name, Probe),
         true = erlang:suspend_process(Announcer),
         try
             S = start_session(t_names_on_every_path, [process_name, node_name]),
             {ok, _} = Start(),
             lttng_session:stop(S),
             Events = lttng_session:read(S),
             Named = [lttng_session:field("name", E)
                      || E <- lttng_session:select(process_name, Events),
                         lttng_session:field("pid", E) =:= text(Probe)],
             ?assertEqual({Path, [atom_to_binary(Name)]}, {Path, Named}),
             Nodes = [string:trim(lttng_session:field("node", E), both, "'")
                      || E <- lttng_session:select(node_name, Events)],
             ?assert(lists:member(atom_to_binary(node()), Nodes)),
             lttng_session:destroy(S)
         after
             true = erlang:resume_process(Announcer),
             ok = dyntrace:clear(),
             Probe ! stop
         end
     end || {Path, Start} <- Starts],
    ok.

%% `trace(Pid, [messages], #{})': the actor's sends and receives are
%% recorded with their own fields, and nothing else of it.
t_trace_messages(_Config) ->
    S = start_session(t_trace_messages, [message_send, message_receive, process_exit]),
    A = actor(),
    ?assertEqual({ok, 1}, dyntrace:trace(A, [messages], #{})),
    Sink = spawn(fun() -> receive stop -> ok end end),
    run(A, fun() -> Sink ! {hello, 42} end),
    Events = read(S, A),
    [Send | _] = [E || E <- lttng_session:select(message_send, Events),
                       lttng_session:field("to", E) =:= text(Sink)],
    ?assertEqual(text(A), lttng_session:field("from", Send)),
    ?assertEqual(<<"{hello,42}">>, lttng_session:field("message", Send)),
    Received = [lttng_session:field("message", E)
                || E <- lttng_session:select(message_receive, Events),
                   lttng_session:field("to", E) =:= text(A)],
    ?assert(Received =/= []),
    %% The exit is a procs event: not asked for, so not traced.
    dyntrace_test_mod:stop(A),
    ?assertEqual([], lttng_session:select(process_exit, read(S, A))),
    lttng_session:destroy(S).

%% The flags set are those whose trace tags feed the events asked for, as
%% the NIF's event table says: one event, one class; a group, its classes.
t_trace_flags_from_events(_Config) ->
    Cases = [{[message_send], [send]},
             {[message_receive], ['receive']},
             {[gc_major_end], [garbage_collection]},
             {[process_exit, process_link], [procs]},
             {[process_scheduled], [running_procs]},
             {[messages], ['receive', send]},
             {[gc], [garbage_collection]},
             {[calls], [call]},
             {[scheduling], [running_procs]},
             {[all], [call, garbage_collection, procs, 'receive', running_procs, send]}],
    [begin
         A = actor(),
         {ok, 1} = dyntrace:trace(A, Events, #{}),
         ?assertEqual({Events, Expected}, {Events, flags(A)}),
         ok = dyntrace:clear(),
         ?assertEqual([], flags(A)),
         dyntrace_test_mod:stop(A)
     end || {Events, Expected} <- Cases],
    %% A port gets the port classes of a group.
    Port = open_port({spawn, "cat"}, [binary]),
    {ok, 1} = dyntrace:trace(Port, [scheduling], #{}),
    ?assertEqual([running_ports], flags(Port)),
    ok = dyntrace:clear(),
    port_close(Port).

%% Registered names and lists of tracees are resolved when the call is made.
t_trace_registered_name(_Config) ->
    A = actor(),
    B = actor(),
    true = register(dyntrace_ctl_suite_actor, A),
    ?assertEqual({ok, 2}, dyntrace:trace([dyntrace_ctl_suite_actor, B], [gc], #{})),
    ?assertEqual([garbage_collection], flags(A)),
    ?assertEqual([garbage_collection], flags(B)),
    ?assertError({badarg, {procs, no_such_name, not_registered}},
                 dyntrace:trace(no_such_name, [gc], #{})).

%% `calls({M, F, A}, #{return => true, procs => [Pid]})': function_call and
%% function_return with the code location, from that process only.
t_calls(_Config) ->
    S = start_session(t_calls, [function_call, function_return]),
    A = actor(),
    B = actor(),
    ?assertEqual({ok, 1}, dyntrace:calls({dyntrace_test_mod, work, 1},
                                         #{return => true, procs => [A]})),
    run(A, fun() -> dyntrace_test_mod:work(3) end),
    run(B, fun() -> dyntrace_test_mod:work(3) end),
    Events = read(S, [A, B]),
    Entry = <<"dyntrace_test_mod:work/1">>,
    ?assertEqual([{function_call, text(A), Entry}, {function_return, text(A), Entry}],
                 [{N, lttng_session:field("pid", E), lttng_session:field("entry", E)}
                  || #{name := N} = E <- Events]),
    lttng_session:destroy(S).

%% `{M, '_', '_'}' over a module with one hot helper (called 200,000
%% times), the helper excluded: every call of the other functions is
%% recorded, none of the helper's, nothing discarded; the answer counts the
%% functions left, and status/0 shows the exclusion.
t_calls_exclude(_Config) ->
    Events = [function_call, function_return],
    S = start_session(t_calls_exclude, Events, #{subbuf_size => 1 bsl 20, num_subbuf => 4}),
    A = actor(),
    Mod = dyntrace_test_mod,
    Functions = length(Mod:module_info(functions)),
    Hot = {Mod, helper, '_'},
    ?assertEqual({ok, Functions - 1},
                 dyntrace:calls({Mod, '_', '_'}, #{scope => local, return => true, procs => [A],
                                                   exclude => [Hot]})),
    #{traces := [#{patterns := Patterns}]} = dyntrace:status(),
    ?assert(lists:member({Hot, false, [local]}, Patterns), Patterns),
    Steps = 100,
    run(A, fun() -> Mod:hot_run(Steps, 2000) end),
    Calls = [lttng_session:field("entry", E) || #{name := function_call} = E <- read(S, A)],
    Count = fun(Entry) -> length([C || C <- Calls, C =:= Entry]) end,
    ?assertEqual({1, Steps, 0},
                 {Count(<<"dyntrace_test_mod:hot_run/2">>), Count(<<"dyntrace_test_mod:step/2">>),
                  Count(<<"dyntrace_test_mod:helper/1">>)}),
    ok = nothing_discarded(S),
    lttng_session:destroy(S).

%% The rate guard: `{M, '_', '_'}' with `max_rate => {1000, 100}' over a
%% module whose helper is called 200,000 times: the helper's pattern is
%% removed while it runs, one call_guard event names it and the limit,
%% status/0 lists it as guarded, every call of the other functions is
%% recorded, nothing is discarded, and `calls' says so.
t_calls_guard(_Config) ->
    Events = [function_call, function_return, call_guard],
    S = start_session(t_calls_guard, Events, #{subbuf_size => 1 bsl 20, num_subbuf => 4}),
    A = actor(),
    Mod = dyntrace_test_mod,
    {ok, _} = dyntrace:calls({Mod, '_', '_'}, #{scope => local, return => true, procs => [A],
                                                max_rate => {1000, 100}}),
    Steps = 50,
    run(A, fun() -> Mod:hot_run(Steps, 4000) end),
    #{traces := [#{guarded := Guarded, patterns := Patterns}]} = dyntrace:status(),
    ?assertEqual([{Mod, helper, 1}], Guarded),
    ?assert(lists:member({{Mod, helper, 1}, false, [local]}, Patterns), Patterns),
    lttng_session:stop(S),
    All = lttng_session:read(S),
    [Guard] = lttng_session:select(call_guard, All),
    ?assertEqual({<<"dyntrace_test_mod:helper/1">>, 1000, 100},
                 {lttng_session:field("entry", Guard), lttng_session:field("calls", Guard),
                  lttng_session:field("ms", Guard)}),
    Calls = [lttng_session:field("entry", E) || E <- lttng_session:select(function_call, All),
                                                lttng_session:field("pid", E) =:= text(A)],
    Count = fun(Entry) -> length([C || C <- Calls, C =:= Entry]) end,
    ?assertEqual({1, Steps}, {Count(<<"dyntrace_test_mod:hot_run/2">>),
                              Count(<<"dyntrace_test_mod:step/2">>)}),
    Hot = Count(<<"dyntrace_test_mod:helper/1">>),
    ?assert(Hot > 0 andalso Hot < Steps * 4000, Hot),
    ok = nothing_discarded(S),
    %% The analyser says which function the guard took out, and when.
    {0, Text, _} = analyze_cmd:run(analyze_cmd:exe(), ["calls", maps:get(dir, S)]),
    ?assertMatch({match, _}, re:run(Text, "the rate guard removed dyntrace_test_mod:helper/1's "
                                    "pattern at \\+[0-9.]+ s \\(more than 1000 calls per 100 ms\\)"),
                 Text),
    lttng_session:destroy(S).

%% The rate guard does not cover a global pattern (docs/reference.md says
%% why: a call_count pattern would turn the function's global trace off):
%% `{M, '_', '_'}' global with `max_rate => {1000, 100}' over a function
%% called through the export 10,000 times in well under a second records
%% every call, no call_guard event, nothing listed as guarded.
t_calls_guard_global(_Config) ->
    Events = [function_call, call_guard],
    S = start_session(t_calls_guard_global, Events, #{subbuf_size => 1 bsl 20, num_subbuf => 4}),
    A = actor(),
    Mod = dyntrace_test_mod,
    {ok, _} = dyntrace:calls({Mod, '_', '_'}, #{procs => [A], max_rate => {1000, 100}}),
    Steps = 20,
    Helpers = 500,
    run(A, fun() -> Mod:hot_remote_run(Steps, Helpers) end),
    #{traces := [#{guarded := Guarded}]} = dyntrace:status(),
    ?assertEqual([], Guarded),
    lttng_session:stop(S),
    All = lttng_session:read(S),
    ?assertEqual([], lttng_session:select(call_guard, All)),
    Calls = [lttng_session:field("entry", E) || E <- lttng_session:select(function_call, All),
                                                lttng_session:field("pid", E) =:= text(A)],
    Count = fun(Entry) -> length([C || C <- Calls, C =:= Entry]) end,
    ?assertEqual({1, Steps, Steps * Helpers},
                 {Count(<<"dyntrace_test_mod:hot_remote_run/2">>),
                  Count(<<"dyntrace_test_mod:remote_step/2">>),
                  Count(<<"dyntrace_test_mod:remote_helper/1">>)}),
    ok = nothing_discarded(S),
    lttng_session:destroy(S).

%% A fun made in the shell becomes the match spec: only the calls whose
%% arguments it matches are recorded.
t_calls_match_fun(_Config) ->
    S = start_session(t_calls_match_fun, [function_call, function_return]),
    A = actor(),
    Fun = shell_fun("fun([N]) when N > 2 -> return_trace() end."),
    {ok, 1} = dyntrace:calls({dyntrace_test_mod, work, Fun}, #{procs => A}),
    run(A, fun() -> [dyntrace_test_mod:work(N) || N <- [1, 2, 3, 4]] end),
    Events = read(S, A),
    ?assertEqual([function_call, function_return, function_call, function_return],
                 [N || #{name := N} <- Events]),
    %% A compiled fun has no source for the match spec.
    ?assertError({badarg, {match_fun_not_from_shell, _}},
                 dyntrace:calls({dyntrace_test_mod, work, fun([_]) -> true end}, #{})),
    lttng_session:destroy(S).

%% `exception => true': function_exception with its class. (The runtime
%% sets up the exception trace only when the call event itself is wanted,
%% so function_call is enabled too.)
t_calls_exception(_Config) ->
    S = start_session(t_calls_exception, [function_call, function_exception]),
    A = actor(),
    {ok, 1} = dyntrace:calls({dyntrace_test_mod, fail, 1},
                             #{exception => true, procs => [A]}),
    run(A, fun() ->
                   try dyntrace_test_mod:fail(throw) catch throw:Thrown -> Thrown end
           end),
    [E] = lttng_session:select(function_exception, read(S, A)),
    ?assertEqual({<<"dyntrace_test_mod:fail/1">>, <<"throw">>},
                 {lttng_session:field("entry", E), lttng_session:field("class", E)}),
    lttng_session:destroy(S).

%% `max_events => N': exactly N events in the trace however many happen,
%% after which the runtime itself dropped the tracee's flags.
t_max_events(_Config) ->
    S = start_session(t_max_events, [message_send]),
    A = actor(),
    B = actor(),
    {ok, 2} = dyntrace:trace([A, B], [message_send], #{max_events => 7}),
    Sink = spawn(fun() -> receive stop -> ok end end),
    Send = fun() -> [Sink ! N || N <- lists:seq(1, 10)] end,
    run(A, Send),
    run(B, Send),
    ?assertEqual(7, length(read(S, [A, B]))),
    [#{events_left := 0}] = maps:get(traces, dyntrace:status()),
    %% The next event each saw answered `remove'.
    ?assertEqual([], flags(A)),
    ?assertEqual([], flags(B)),
    lttng_session:destroy(S).

%% The tracer's other options go through too, beside the count: three
%% messages written, each as `payload => none' writes it.
t_max_events_with_payload(_Config) ->
    S = start_session(t_max_events_with_payload, [message_send]),
    A = actor(),
    {ok, 1} = dyntrace:trace(A, [message_send], #{max_events => 3, payload => none}),
    Sink = spawn(fun() -> receive stop -> ok end end),
    run(A, fun() -> [Sink ! {secret, N} || N <- lists:seq(1, 10)] end),
    ?assertEqual([<<"-">>, <<"-">>, <<"-">>],
                 [lttng_session:field("message", E) || E <- read(S, A)]),
    ?assertEqual({payload, loud}, badarg(fun() -> dyntrace:trace(A, [gc], #{payload => loud}) end)),
    lttng_session:destroy(S).

%% One count shared by processes sending at once on every scheduler: still
%% exactly N events written, none dropped by LTTng.
t_max_events_concurrent(_Config) ->
    S = start_session(t_max_events_concurrent, [message_send]),
    Senders = [actor() || _ <- lists:seq(1, 2 * erlang:system_info(schedulers_online))],
    {ok, _} = dyntrace:trace(Senders, [message_send], #{max_events => 1000}),
    Sink = spawn(fun() -> receive stop -> ok end end),
    Self = self(),
    [Sender ! {run, Self, Sender, fun() -> [Sink ! N || N <- lists:seq(1, 1000)] end}
     || Sender <- Senders],
    [receive {Sender, _} -> ok end || Sender <- Senders],
    Events = read(S, Senders),
    ?assertEqual(0, lttng_session:discarded(S)),
    ?assertEqual(1000, length(Events)),
    lttng_session:destroy(S).

%% `duration => Ms': the flags and patterns that call set are gone after
%% Ms, and nothing more is recorded.
t_duration(_Config) ->
    S = start_session(t_duration, [function_call]),
    A = actor(),
    Set = erlang:monotonic_time(millisecond),
    {ok, 1} = dyntrace:calls({dyntrace_test_mod, work, 1},
                             #{procs => A, duration => 1000}),
    run(A, fun() -> dyntrace_test_mod:work(1) end),
    ?assertEqual([call], flags(A)),
    lttng_session:wait_until(fun() -> flags(A) =:= [] end, 50),
    ?assert(erlang:monotonic_time(millisecond) - Set >= 1000),
    ?assertEqual(false, traced({dyntrace_test_mod, work, 1})),
    run(A, fun() -> dyntrace_test_mod:work(2) end),
    ?assertEqual(1, length(read(S, A))),
    ?assertEqual([], maps:get(traces, dyntrace:status())),
    lttng_session:destroy(S).

%% A limit set from a process that is gone still holds.
t_limits_outlive_caller(_Config) ->
    A = actor(),
    Self = self(),
    Shell = spawn(fun() ->
                          Self ! {set, dyntrace:trace(A, [gc], #{duration => 1000})},
                          exit(shell_gone)
                  end),
    receive {set, {ok, 1}} -> ok end,
    ?assertEqual(false, is_process_alive(Shell)),
    ?assertEqual([garbage_collection], flags(A)),
    lttng_session:wait_until(
      fun() -> flags(A) =:= [] end, 50).

%% Two calls on one process: each event is written once, and when one
%% call ends, what the other set stays (`send' here).
t_overlapping_calls(_Config) ->
    S = start_session(t_overlapping_calls, [message_send]),
    A = actor(),
    {ok, 1} = dyntrace:trace(A, [message_send], #{}),
    {ok, 1} = dyntrace:trace(A, [messages], #{duration => 1000}),
    ?assertEqual(['receive', send], flags(A)),
    Sink = spawn(fun() -> receive stop -> ok end end),
    run(A, fun() -> Sink ! once end),
    lttng_session:wait_until(fun() -> flags(A) =:= [send] end, 50),
    run(A, fun() -> Sink ! after_one_ended end),
    Sent = [lttng_session:field("message", E) || E <- read(S, A),
                                                 lttng_session:field("to", E) =:= text(Sink)],
    ?assertEqual([<<"once">>, <<"after_one_ended">>], Sent),
    lttng_session:destroy(S).

%% `clear()' undoes dyntrace's flags and patterns, and leaves what dbg set
%% on another process and another function as it was.
t_clear_leaves_dbg(_Config) ->
    A = actor(),
    D = actor(),
    {ok, _} = dbg:tracer(process, {fun(_, N) -> N + 1 end, 0}),
    {ok, _} = dbg:p(D, [send, call]),
    {ok, _} = dbg:tpl(dyntrace_test_mod, outer, 1, []),
    {ok, 1} = dyntrace:trace(A, [messages, procs], #{}),
    {ok, 1} = dyntrace:calls({dyntrace_test_mod, work, 1}, #{procs => A, return => true}),
    {ok, 0} = dyntrace:trace(new_processes, [gc], #{}),
    %% Before OTP 27 a process has one tracer: dbg's keeps D.
    case sessions_available() of
        false -> ?assertEqual({error, {cannot_trace, D}}, dyntrace:trace(D, [gc], #{}));
        true -> ?assertEqual({ok, 1}, dyntrace:trace(D, [gc], #{}))
    end,
    Spawned = actor(),
    ?assertEqual([garbage_collection], flags(Spawned)),
    ok = dyntrace:clear(),
    ?assertEqual([], flags(A)),
    ?assertEqual([], flags(Spawned)),
    ?assertEqual([], flags(new_processes)),
    ?assertEqual(false, traced({dyntrace_test_mod, work, 1})),
    ?assertEqual([call, send], flags(D)),
    ?assertEqual(local, traced({dyntrace_test_mod, outer, 1})).

%% A pattern on every module, or on every function of an erts, kernel or
%% stdlib module, needs `force'; with it, it is set.
t_wide_patterns_refused(_Config) ->
    A = actor(),
    [?assertError({badarg, {too_wide, _, _}}, dyntrace:calls(Spec, #{procs => A}))
     || Spec <- [{'_', '_', '_'}, {lists, '_', '_'}, {erlang, '_', [{'_', [], []}]},
                 [{dyntrace_test_mod, work, 1}, {ets, '_', '_'}]]],
    ?assertEqual([], maps:get(traces, dyntrace:status())),
    %% The suite's own module is none of those.
    {ok, N} = dyntrace:calls({dyntrace_test_mod, '_', '_'}, #{procs => A}),
    ?assert(N > 5),
    {ok, M} = dyntrace:calls({lists, '_', '_'}, #{procs => A, force => true}),
    ?assert(M > 50).

%% Bad options and arguments raise `{badarg, {What, Value}}', in the
%% caller, before anything is traced.
t_bad_arguments(_Config) ->
    A = actor(),
    Bad = [{fun() -> dyntrace:trace(A, [no_such_event], #{}) end, {event, no_such_event}},
           {fun() -> dyntrace:trace(A, [], #{}) end, {events, []}},
           {fun() -> dyntrace:trace(A, [gc], #{max_events => 0}) end, {max_events, 0}},
           {fun() -> dyntrace:trace(A, [gc], #{duration => -1}) end, {duration, -1}},
           {fun() -> dyntrace:trace(A, [gc], #{max_term_bytes => 10}) end,
            {max_term_bytes, 10}},
           {fun() -> dyntrace:trace(A, [gc], #{return => true}) end, {return, true}},
           {fun() -> dyntrace:trace(A, [gc], [max_events]) end, {options, [max_events]}},
           {fun() -> dyntrace:trace({not_a, pid}, [gc], #{}) end, {procs, {not_a, pid}}},
           {fun() -> dyntrace:calls({dyntrace_test_mod, work}, #{}) end,
            {call_spec, {dyntrace_test_mod, work}}},
           {fun() -> dyntrace:calls({dyntrace_test_mod, work, 1}, #{scope => wide}) end,
            {scope, wide}}],
    [?assertEqual(Expected, badarg(F)) || {F, Expected} <- Bad],
    ?assertMatch({match_spec, {dyntrace_test_mod, work, [{bad}]}, _},
                 badarg(fun() -> dyntrace:calls({dyntrace_test_mod, work, [{bad}]}, #{}) end)),
    ?assertEqual([], flags(A)),
    ?assertEqual([], maps:get(traces, dyntrace:status())),
    %% tracer/1 makes the count from an integer, and takes only its own.
    {tracer, dyntrace, #{max_events := Budget}} = dyntrace:tracer(#{max_events => 5}),
    ?assertEqual(5, dyntrace:events_left(Budget)),
    ?assertEqual({tracer, dyntrace, #{max_events => Budget}},
                 dyntrace:tracer(#{max_events => Budget})),
    Ref = make_ref(),
    ?assertEqual({max_events, Ref}, badarg(fun() -> dyntrace:tracer(#{max_events => Ref}) end)),
    ?assertEqual({max_events, 0}, badarg(fun() -> dyntrace:tracer(#{max_events => 0}) end)).

%% `status()': per call what it traces and what its limits have left, the
%% LTTng events enabled now, the counters.
t_status(_Config) ->
    S = start_session(t_status, [gc_major_end]),
    A = actor(),
    {ok, 1} = dyntrace:trace(A, [gc_major_end], #{max_events => 2, duration => 60000}),
    run(A, fun() -> erlang:garbage_collect() end),
    lttng_session:wait_until(fun() -> events_left() =:= [1] end, 50),
    #{traces := [T], lttng_enabled := Enabled, counters := Counters,
      sessions := Sessions} = dyntrace:status(),
    ?assertMatch(#{kind := trace, procs := [A], flags := [garbage_collection],
                   patterns := [], events_left := 1}, T),
    #{ms_left := MsLeft} = T,
    ?assert(MsLeft > 50000 andalso MsLeft =< 60000),
    ?assert(lists:member(gc_major_end, Enabled)),
    ?assertMatch(#{bad_tracer_state := _, bad_arguments := _}, Counters),
    ?assertEqual(sessions_available(), Sessions),
    lttng_session:destroy(S).

%% `dbg:tracer(module, {dyntrace, State})' makes dbg's trace go to LTTng.
t_dbg_module_tracer(_Config) ->
    S = start_session(t_dbg_module_tracer, [message_send]),
    A = actor(),
    {ok, _} = dbg:tracer(module, {dyntrace, #{max_term_bytes => 64}}),
    {ok, _} = dbg:p(A, [send]),
    Sink = spawn(fun() -> receive stop -> ok end end),
    run(A, fun() -> Sink ! lists:seq(1, 100) end),
    [E | _] = [E || E <- read(S, A), lttng_session:field("to", E) =:= text(Sink)],
    Message = lttng_session:field("message", E),
    ?assert(byte_size(Message) =< 64),
    ?assertMatch({_, <<"...">>}, split_binary(Message, byte_size(Message) - 3)),
    lttng_session:destroy(S).

%% OTP 27+: each call runs in a trace session of its own, so that a dbg
%% trace of the same process goes on untouched, before and after clear().
t_sessions(_Config) ->
    case sessions_available() of
        false ->
            {skip, "trace sessions need OTP 27 or later (this is OTP "
             ++ erlang:system_info(otp_release) ++ ")"};
        true ->
            S = start_session(t_sessions, [message_send]),
            A = actor(),
            Self = self(),
            {ok, _} = dbg:tracer(process, {fun(Msg, _) -> Self ! {dbg, Msg} end, ok}),
            {ok, _} = dbg:p(A, [send]),
            {ok, 1} = dyntrace:trace(A, [message_send], #{}),
            #{traces := [_]} = dyntrace:status(),
            Sink = spawn(fun() -> receive stop -> ok end end),
            run(A, fun() -> Sink ! in_both end),
            receive {dbg, {trace, A, send, in_both, Sink}} -> ok
            after 5000 -> error(no_dbg_message)
            end,
            ok = dyntrace:clear(),
            run(A, fun() -> Sink ! dbg_only end),
            receive {dbg, {trace, A, send, dbg_only, Sink}} -> ok
            after 5000 -> error(dbg_trace_lost)
            end,
            Sent = [lttng_session:field("message", E) || E <- read(S, A),
                                                      lttng_session:field("to", E) =:= text(Sink)],
            ?assertEqual([<<"in_both">>], Sent),
            lttng_session:destroy(S)
    end.

%%%===================================================================
%%% Helpers
%%%===================================================================

start_session(Case, Events) ->
    start_session(Case, Events, #{}).

%% As start_session/2, with lttng_session:create/3's channel options.
start_session(Case, Events, Opts) ->
    S = lttng_session:create(Case, Events, Opts),
    ok = lttng_session:track_self(S),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled(Events),
    S.

%% The session's channel discarded no event.
nothing_discarded(S) ->
    {0, Listed} = lttng_session:cmd("lttng list " ++ maps:get(name, S)),
    ?assertMatch({match, _}, re:run(Listed, "Discarded events: 0\n")),
    ?assertEqual(nomatch, re:run(Listed, "Discarded events: [1-9]")),
    ok.

%% The events of the session that concern the given tracees.
read(S, Tracees) when is_list(Tracees) ->
    lttng_session:stop(S),
    Texts = [text(T) || T <- Tracees],
    Events = lttng_session:read(S),
    lttng_session:start(S),
    [E || #{fields := F} = E <- Events,
          lists:any(fun(Key) -> lists:member(maps:get(Key, F, none), Texts) end,
                    [<<"pid">>, <<"from">>, <<"to">>])];
read(S, Tracee) ->
    read(S, [Tracee]).

text(Pid) when is_pid(Pid) -> list_to_binary(pid_to_list(Pid));
text(Port) when is_port(Port) -> list_to_binary(erlang:port_to_list(Port)).

shell_fun(Source) ->
    {ok, Tokens, _} = erl_scan:string(Source),
    {ok, [Expr]} = erl_parse:parse_exprs(Tokens),
    {value, Fun, _} = erl_eval:expr(Expr, erl_eval:new_bindings()),
    Fun.

badarg(F) ->
    try F() of
        Result -> {returned, Result}
    catch
        error:{badarg, What} -> What
    end.

events_left() ->
    [N || #{events_left := N} <- maps:get(traces, dyntrace:status())].
