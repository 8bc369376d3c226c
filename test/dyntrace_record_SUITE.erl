%%% `dyntrace:record/2' and a front door that never loses control, on a
%%% real session daemon: each mode of record/2 with the events it recorded
%%% counted and nothing left behind (flags, patterns, samplers, sessions);
%%% record/2 with no session daemon and no `lttng' command (in a node of
%%% its own); a bad call after a good one (the good one still listed,
%%% clear() stops it); dyntrace_ctl and its supervisor killed; an
%%% overlapping `max_events' (exactly N, or refused); each malformed
%%% argument.
-module(dyntrace_record_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1,
         init_per_testcase/2, end_per_testcase/2]).
-export([t_record_wait/1,
         t_record_stop/1,
         t_record_max_events/1,
         t_record_flight/1,
         t_record_samplers/1,
         t_record_no_daemon/1,
         t_record_no_lttng/1,
         t_record_as_user/1,
         t_bad_call_keeps_control/1,
         t_ctl_restarted/1,
         t_sup_killed/1,
         t_overlapping_max_events/1,
         t_overlapping_trace/1,
         t_malformed/1,
         t_option_limits/1,
         t_application/1]).
%% Run in peer nodes.
-export([record_gc/0, dyntrace_traced/0, application_steps/0]).

-import(dyntrace_test_mod, [actor/0, run/2]).
-import(dyntrace_test_trace, [flags/1, traced/1, sessions_available/0]).

-define(MOD, dyntrace_test_mod).

suite() ->
    [{timetrap, {minutes, 3}}].

all() ->
    [t_record_wait,
     t_record_stop,
     t_record_max_events,
     t_record_flight,
     t_record_samplers,
     t_record_no_daemon,
     t_record_no_lttng,
     t_record_as_user,
     t_bad_call_keeps_control,
     t_ctl_restarted,
     t_sup_killed,
     t_overlapping_max_events,
     t_overlapping_trace,
     t_malformed,
     t_option_limits,
     t_application].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    {module, ?MOD} = code:ensure_loaded(?MOD),
    Config.

end_per_suite(_Config) ->
    ok.

init_per_testcase(_Case, Config) ->
    Config.

end_per_testcase(Case, _Config) ->
    ok = dyntrace:clear(),
    lttng_session:destroy_left(Case).

%%%===================================================================
%%% record/2
%%%===================================================================

%% `record(What, #{duration => Ms})' answers the trace's directory once the
%% recording is over: the planted calls and messages are in it, exactly,
%% with the node's and the process's names; then nothing is left: no flag,
%% no pattern, no entry in status(), no session.
t_record_wait(_Config) ->
    A = actor(),
    Sink = sink(),
    What = [{trace, A, [message_send]},
            {calls, {?MOD, work, 1}, #{return => true, procs => [A]}}],
    when_traced(A, send, {?MOD, work, 1},
                fun() -> [?MOD:work(N) || N <- [1, 2, 3]], [Sink ! {m, I} || I <- [1, 2]] end),
    {ok, Dir} = dyntrace:record(What, #{duration => 3000}),
    Events = lttng_session:read(#{dir => Dir}),
    Mine = of_pids(Events, [A]),
    ?assertEqual(3, count(function_call, Mine)),
    ?assertEqual(3, count(function_return, Mine)),
    ?assertEqual([<<"{m,1}">>, <<"{m,2}">>], sent_to(Sink, Mine)),
    %% The names: the node's, and A's (its initial call).
    %% (The VM quotes an atom with `@' in it.)
    ?assert(lists:member(atom_to_binary(node()),
                         [string:trim(lttng_session:field("node", E), both, "'")
                          || E <- select(node_name, Events)])),
    ?assert(lists:member(text(A), [lttng_session:field("pid", E) || E <- select(process_name, Events)])),
    %% Only the events asked for (and the names).
    ?assertEqual([function_call, function_return, message_send, node_name, process_name],
                 lists:usort([N || #{name := N} <- Events])),
    nothing_left([A], [{?MOD, work, 1}]).

%% `wait => false': `{ok, Handle}' at once, status() lists the recording
%% and its parts; `stop(Handle)' ends it and answers its directory.
t_record_stop(_Config) ->
    A = actor(),
    Sink = sink(),
    {ok, H} = dyntrace:record([{trace, A, [messages]}], #{wait => false, duration => 60000}),
    #{recordings := [#{id := H, mode := normal, parts := [Part], dir := Dir, session := Name,
                       events := Events}],
      traces := [#{id := Part, recording := H, procs := [A]}]} = dyntrace:status(),
    ?assertEqual([message_receive, message_send, node_name, process_name], Events),
    ?assertNotEqual(nomatch, string:find(lttng_session:cmd_ok("lttng list"), Name)),
    run(A, fun() -> [Sink ! {m, I} || I <- lists:seq(1, 5)] end),
    ?assertEqual({ok, Dir}, dyntrace:stop(H)),
    ?assertEqual(5, length(sent_to(Sink, of_pids(lttng_session:read(#{dir => Dir}), [A])))),
    ?assertEqual({error, {no_such_id, H}}, dyntrace:stop(H)),
    nothing_left([A], []).

%% `max_events => 10' with a long duration: the recording ends once ten
%% events are written, with exactly ten, well before its duration.
t_record_max_events(_Config) ->
    A = actor(),
    Sink = sink(),
    when_traced(A, send, none, fun() -> [Sink ! {m, I} || I <- lists:seq(1, 100)] end),
    Start = erlang:monotonic_time(millisecond),
    {ok, Dir} = dyntrace:record([{trace, A, [message_send]}],
                                #{max_events => 10, duration => 120000}),
    ?assert(erlang:monotonic_time(millisecond) - Start < 60000),
    ?assertEqual(10, count(message_send, of_pids(lttng_session:read(#{dir => Dir}), [A]))),
    nothing_left([A], []).

%% `mode => flight': the session keeps what happens in its ring buffers;
%% each snapshot(Handle) writes what they hold into a new directory (the
%% second has the first's events and the later ones); stop(Handle) ends
%% the recording.
t_record_flight(_Config) ->
    A = actor(),
    Sink = sink(),
    {ok, H} = dyntrace:record([{trace, A, [message_send]}], #{mode => flight}),
    #{recordings := [#{id := H, mode := flight, dir := Dir}]} = dyntrace:status(),
    run(A, fun() -> [Sink ! {first, I} || I <- lists:seq(1, 5)] end),
    {ok, Snap1} = dyntrace:snapshot(H),
    run(A, fun() -> [Sink ! {second, I} || I <- lists:seq(1, 3)] end),
    {ok, Snap2} = dyntrace:snapshot(H),
    ?assertNotEqual(Snap1, Snap2),
    ?assertEqual(Dir, filename:dirname(Snap1)),
    ?assertEqual(5, length(sent_to(Sink, of_pids(lttng_session:read(#{dir => Snap1}), [A])))),
    ?assertEqual(8, length(sent_to(Sink, of_pids(lttng_session:read(#{dir => Snap2}), [A])))),
    ?assertEqual({ok, Dir}, dyntrace:stop(H)),
    ?assertMatch({error, _}, dyntrace:snapshot(H)),
    nothing_left([A], []).

%% Samplers as parts: stack samples of the process asked for and memory
%% samples, for the recording's duration; their processes end with it.
t_record_samplers(_Config) ->
    B = actor(),
    {ok, Dir} = dyntrace:record([{sample, B, #{interval => 5}}, {memory, #{interval => 50}}],
                                #{duration => 1000}),
    Events = lttng_session:read(#{dir => Dir}),
    Stacks = [E || E <- select(stack_sample, Events), lttng_session:field("pid", E) =:= text(B)],
    ?assert(length(Stacks) >= 10),
    ?assert(length(select(memory_sample, Events)) >= 5),
    nothing_left([B], []).

%% In a node that sees no session daemon (a mount namespace of its own,
%% with nothing at the daemon's socket path): `{error, {lttng, Text}}'
%% with lttng's own message, and the node is left as it was.
t_record_no_daemon(_Config) ->
    Erl = os:find_executable("erl"),
    Script = "mount -t tmpfs tmpfs /var/run/lttng && exec \"$0\" \"$@\"",
    {P, _} = start_peer(no_daemon, #{exec => {os:find_executable("unshare"),
                                             ["--mount", "--propagation", "private",
                                              "/bin/sh", "-c", Script, Erl]}}),
    refused(P, "No session daemon").

%% In a node whose PATH has no `lttng': `{error, {lttng, Text}}' saying so.
t_record_no_lttng(_Config) ->
    {P, _} = start_peer(no_lttng, #{}),
    refused(P, fun() -> true = peer:call(P, os, putenv, ["PATH", "/nonexistent"]) end,
            "lttng: command not found").

%% After `Setup', record/2 in peer `P' answers `{error, {lttng, Text}}'
%% with `Why' in `Text', and leaves the node as it was; the peer is stopped.
refused(P, Why) ->
    refused(P, fun() -> ok end, Why).

refused(P, Setup, Why) ->
    try
        _ = Setup(),
        {error, {lttng, Text}} = peer:call(P, ?MODULE, record_gc, []),
        ?assertNotEqual(nomatch, string:find(Text, Why), Text),
        left_as_it_was(P)
    after
        peer:stop(P)
    end.

%% A node running as an unprivileged user, with that user's own session
%% daemon (the root daemon of this suite is out of its reach): record/2
%% makes its session there, and the trace has the node's events.
t_record_as_user(_Config) ->
    %% Short: the daemon's sockets are made there (a socket path has at
    %% most 107 bytes).
    Home = lists:flatten(io_lib:format("/tmp/dyntrace-user-~s-~b",
                                       [os:getpid(), erlang:unique_integer([positive])])),
    ok = filelib:ensure_dir(filename:join(Home, "x")),
    lttng_session:cmd_ok("chmod a+rwx '" ++ Home ++ "'"),
    Env = [{"HOME", Home}, {"LTTNG_HOME", Home}],
    Priv = ["--reuid=nobody", "--regid=nogroup", "--clear-groups"],
    Setpriv = os:find_executable("setpriv"),
    lttng_session:cmd_ok(lists:flatten(["env HOME=", Home, " LTTNG_HOME=", Home, " ", Setpriv, " ",
                                        lists:join(" ", Priv), " lttng-sessiond --daemonize"])),
    {P, _} = start_peer(as_user, #{exec => {Setpriv, Priv ++ [os:find_executable("erl")]},
                                   env => Env}),
    try
        ok = peer:call(P, lttng_session, wait_until,
                       [fun() -> element(1, lttng_session:cmd("lttng list -u")) =:= 0 end, 100]),
        {ok, Dir} = peer:call(P, ?MODULE, record_gc, [], 60000),
        Events = lttng_session:read(#{dir => Dir}),
        ?assert(count(gc_major_end, Events) >= 3),
        left_as_it_was(P)
    after
        peer:stop(P),
        %% The user's daemon, by its pid file.
        os:cmd("kill $(cat '" ++ Home ++ "/.lttng/lttng-sessiond.pid')"),
        os:cmd("rm -rf '" ++ Home ++ "'")
    end.

%% @doc In a peer: records three major collections of a fresh process.
record_gc() ->
    Self = self(),
    Worker = spawn(fun() ->
                           receive go -> ok end,
                           [true = erlang:garbage_collect() || _ <- [1, 2, 3]],
                           Self ! done,
                           receive stop -> ok end
                   end),
    Driver = spawn(fun() ->
                           lttng_session:wait_until(fun() -> flags(Worker) =/= [] end, 300),
                           Worker ! go
                   end),
    Result = dyntrace:record([{trace, Worker, [gc]}], #{duration => 2000}),
    exit(Driver, kill),
    Result.

%%%===================================================================
%%% Keeping control
%%%===================================================================

%% A bad call after a good one (a malformed spec, a module that is not
%% loaded) leaves the good one listed, with its timer; clear() stops it:
%% no event after.
t_bad_call_keeps_control(_Config) ->
    S = lttng_session:start_tracked(t_bad_call_keeps_control, [message_send]),
    A = actor(),
    Sink = sink(),
    {ok, 1} = dyntrace:trace(A, [message_send], #{duration => 60000}),
    #{traces := [#{id := Id}]} = dyntrace:status(),
    ?assertError({badarg, {call_spec, _}}, dyntrace:calls({no_such_module, '_', 2}, #{})),
    ?assertEqual({ok, 0}, dyntrace:calls({no_such_module, '_', '_'}, #{})),
    #{traces := Traces} = dyntrace:status(),
    ?assertMatch([#{id := Id, ms_left := Ms}, _] when Ms > 50000, Traces),
    run(A, fun() -> Sink ! before end),
    ok = dyntrace:clear(),
    run(A, fun() -> Sink ! 'after' end),
    lttng_session:stop(S),
    ?assertEqual([<<"before">>], sent_to(Sink, of_pids(lttng_session:read(S), [A]))),
    lttng_session:destroy(S),
    nothing_left([A], []).

%% dyntrace_ctl killed: its supervisor restarts it, which finds every call
%% (same ids), their durations still run, and clear() removes what is left.
t_ctl_restarted(_Config) ->
    A = actor(),
    B = actor(),
    {ok, 1} = dyntrace:trace(A, [gc], #{duration => 1500}),
    {ok, 1} = dyntrace:calls({?MOD, work, 1}, #{procs => B}),
    {ok, Sid} = dyntrace:sample(B, #{interval => 50}),
    Ids = ids(),
    Ctl = whereis(dyntrace_ctl),
    exit(Ctl, kill),
    lttng_session:wait_until(fun() -> is_pid(whereis(dyntrace_ctl))
                                          andalso whereis(dyntrace_ctl) =/= Ctl end, 50),
    ?assertEqual(Ids, ids()),
    ?assertEqual([garbage_collection], flags(A)),
    lttng_session:wait_until(fun() -> flags(A) =:= [] end, 50),
    ?assertEqual(Ids -- [hd(Ids)], ids()),
    ?assert(lists:member(Sid, ids())),
    ok = dyntrace:clear(),
    nothing_left([A, B], [{?MOD, work, 1}]).

%% The supervisor killed (and with it what dyntrace_ctl remembered):
%% clear() still finds the flags the runtime shows with dyntrace as tracer
%% and removes them; status() lists them until then (before OTP 27; on 27+
%% the sessions ended with their handles).
t_sup_killed(_Config) ->
    S = lttng_session:start_tracked(t_sup_killed, [message_send]),
    A = actor(),
    Sink = sink(),
    {ok, 1} = dyntrace:trace(A, [message_send], #{}),
    Sup = whereis(dyntrace_sup),
    Ref = monitor(process, Sup),
    exit(Sup, kill),
    receive {'DOWN', Ref, process, Sup, _} -> ok end,
    case sessions_available() of
        false ->
            ?assertEqual([send], flags(A)),
            #{traces := Found} = dyntrace:status(),
            ?assertMatch([_], [T || #{kind := found, procs := Ps} = T <- Found,
                                    lists:member(A, Ps)]);
        true ->
            ok
    end,
    ok = dyntrace:clear(),
    run(A, fun() -> Sink ! 'after' end),
    lttng_session:stop(S),
    ?assertEqual([], sent_to(Sink, of_pids(lttng_session:read(S), [A]))),
    lttng_session:destroy(S),
    nothing_left([A], []).

%% A call with `max_events' whose processes another call (other options)
%% already traces: before OTP 27 it is refused, naming that call; with
%% trace sessions it gets exactly its own count.
t_overlapping_max_events(_Config) ->
    S = lttng_session:start_tracked(t_overlapping_max_events, [function_call]),
    A = actor(),
    {ok, 1} = dyntrace:calls({?MOD, outer, 1}, #{return => true}),
    #{traces := [#{id := First}]} = dyntrace:status(),
    case dyntrace:calls({?MOD, work, 1}, #{max_events => 10}) of
        {error, {overlaps, Id}} ->
            ?assertNot(sessions_available()),
            ?assertEqual(First, Id),
            ?assertMatch(#{traces := [#{id := First}]}, dyntrace:status()),
            ?assertEqual(false, traced({?MOD, work, 1}));
        {ok, 1} ->
            ?assert(sessions_available()),
            run(A, fun() -> [?MOD:work(N) || N <- lists:seq(1, 100)] end),
            lttng_session:stop(S),
            Work = [E || E <- of_pids(lttng_session:read(S), [A]),
                         lttng_session:field("entry", E) =:= <<"dyntrace_test_mod:work/1">>],
            ?assertEqual(10, length(Work))
    end,
    lttng_session:destroy(S).

%% The same with trace/3: a process traced with other options cannot be
%% traced with a limit before OTP 27 (`overlaps', not a silent tracer of
%% the first call); status() never lists a limit that does not hold.
t_overlapping_trace(_Config) ->
    A = actor(),
    {ok, 1} = dyntrace:trace(A, [messages], #{}),
    #{traces := [#{id := First}]} = dyntrace:status(),
    case sessions_available() of
        false ->
            ?assertEqual({error, {overlaps, First}},
                         dyntrace:trace(A, [gc], #{max_events => 10})),
            ?assertEqual({error, {overlaps, First}},
                         dyntrace:trace(all, [gc], #{duration => 10000, payload => none})),
            ?assertMatch(#{traces := [_]}, dyntrace:status()),
            %% The same options share the tracer: no overlap.
            ?assertEqual({ok, 1}, dyntrace:trace(A, [gc], #{duration => 10000}));
        true ->
            ?assertEqual({ok, 1}, dyntrace:trace(A, [gc], #{max_events => 10}))
    end.

%% Each malformed argument raises `{badarg, {Key, Value}}' before
%% anything is set or made.
t_malformed(_Config) ->
    A = actor(),
    Self = self(),
    Cases =
        [{fun() -> dyntrace:trace([Self | new], [gc], #{}) end, {procs, [Self | new]}},
         {fun() -> dyntrace:trace(A, [messages | gc], #{}) end, {events, [messages | gc]}},
         {fun() -> dyntrace:trace(A, [gc], #{redact => [a | b]}) end, {redact, [a | b]}},
         {fun() -> dyntrace:trace(A, [gc], #{max_term_bytes => 63}) end, {max_term_bytes, 63}},
         {fun() -> dyntrace:trace(A, [gc], #{payload => loud}) end, {payload, loud}},
         {fun() -> dyntrace:calls([{?MOD, work, 1} | x], #{}) end, {calls, [{?MOD, work, 1} | x]}},
         {fun() -> dyntrace:calls({?MOD, work, -1}, #{}) end, {arity, -1}},
         {fun() -> dyntrace:calls({?MOD, work, 300}, #{}) end, {arity, 300}},
         {fun() -> dyntrace:calls({?MOD, work, 1 bsl 70}, #{}) end, {arity, 1 bsl 70}},
         {fun() -> dyntrace:calls({"dyntrace_test_mod", work, 1}, #{}) end,
          {call_spec, {"dyntrace_test_mod", work, 1}}},
         {fun() -> dyntrace:calls({?MOD, <<"work">>, 1}, #{}) end,
          {call_spec, {?MOD, <<"work">>, 1}}},
         {fun() -> dyntrace:calls({?MOD, '_', 1}, #{}) end, {call_spec, {?MOD, '_', 1}}},
         {fun() -> dyntrace:calls({'_', work, '_'}, #{force => true}) end,
          {call_spec, {'_', work, '_'}}},
         {fun() -> dyntrace:calls({?MOD, work, {1}}, #{}) end, {call_spec, {?MOD, work, {1}}}},
         {fun() -> dyntrace:calls({?MOD, work, 1}, #{procs => [Self | x]}) end,
          {procs, [Self | x]}},
         {fun() -> dyntrace:sample([Self | x], #{}) end, {procs, [Self | x]}},
         {fun() -> dyntrace:memory(#{procs => [Self | x]}) end, {procs, [Self | x]}},
         {fun() -> dyntrace:record([{trace, A, [gc]} | x], #{}) end, {what, [{trace, A, [gc]} | x]}},
         {fun() -> dyntrace:record([], #{}) end, {what, []}},
         {fun() -> dyntrace:record([{bogus, A}], #{}) end, {what, {bogus, A}}},
         {fun() -> dyntrace:record([{trace, A, [gc], #{max_events => 5}}], #{}) end,
          {max_events, 5}},
         {fun() -> dyntrace:record([{trace, A, [gc]}], #{duration => 0}) end, {duration, 0}},
         {fun() -> dyntrace:record([{trace, A, [gc]}], #{mode => fast}) end, {mode, fast}},
         {fun() -> dyntrace:record([{trace, A, [gc]}], #{mode => flight, wait => true}) end,
          {wait, true}},
         {fun() -> dyntrace:record([{trace, A, [gc]}], #{dir => 42}) end, {dir, 42}},
         {fun() -> dyntrace:record([{trace, A, [gc]}], #{colour => red}) end, {colour, red}},
         {fun() -> dyntrace:stop(-1) end, {id, -1}},
         {fun() -> dyntrace:snapshot(x) end, {id, x}}],
    [?assertEqual({F, Expected}, {F, badarg(F)}) || {F, Expected} <- Cases],
    %% A match spec that is no proper list, or has an improper head.
    ?assertMatch({match_spec, _, _}, badarg(fun() -> dyntrace:calls({?MOD, work, [x | y]}, #{}) end)),
    ?assertMatch({match_spec, _, _},
                 badarg(fun() -> dyntrace:calls({?MOD, work, [{[a | b], [], []}]}, #{}) end)),
    nothing_left([A], [{?MOD, work, 1}]).

%% The option limits come from the NIF, and tracer/1 holds to them.
t_option_limits(_Config) ->
    #{max_term_bytes := {Min, Max, Default}, payload := Modes, kinds := Kinds,
      redact := MaxKeys, max_events := {1, MaxEvents}} = dyntrace:option_limits(),
    ?assertEqual({64, 65536, 1024}, {Min, Max, Default}),
    ?assertEqual([full, shape, size, none], Modes),
    ?assertEqual([message, reason, name, driver, callback], Kinds),
    ?assertEqual(32, MaxKeys),
    ?assertEqual(1 bsl 64 - 1, MaxEvents),
    [?assertMatch({tracer, dyntrace, _}, dyntrace:tracer(O))
     || O <- [#{max_term_bytes => Min}, #{max_term_bytes => Max},
              #{redact => lists:seq(1, MaxKeys)}, #{max_events => MaxEvents}]
            ++ [#{payload => #{K => M}} || K <- Kinds, M <- Modes]],
    [?assertEqual({K, V}, badarg(fun() -> dyntrace:tracer(#{K => V}) end))
     || {K, V} <- [{max_term_bytes, Min - 1}, {max_term_bytes, Max + 1},
                   {redact, lists:seq(0, MaxKeys)}, {max_events, MaxEvents + 1},
                   {max_events, 0}, {payload, #{colour => full}}]].

%%%===================================================================
%%% Helpers
%%%===================================================================

sink() ->
    spawn(fun() -> receive stop -> ok end end).

%% Runs `Work' in `A' as soon as `A' has `Flag' and `MFA' is traced (by a
%% recording starting now).
when_traced(A, Flag, MFA, Work) ->
    spawn_link(fun() ->
                       lttng_session:wait_until(
                         fun() -> lists:member(Flag, flags(A))
                                      andalso (MFA =:= none orelse traced(MFA) =/= false)
                         end, 600),
                       run(A, Work)
               end).

%% Nothing of dyntrace's is left: no flag on the processes, no pattern on
%% the functions, no entry in status(), no recording session, no sampler
%% or recording process under the supervisor.
nothing_left(Pids, MFAs) ->
    [?assertEqual({P, []}, {P, flags(P)}) || P <- Pids],
    [?assertEqual({MFA, false}, {MFA, traced(MFA)}) || MFA <- MFAs],
    ?assertMatch(#{traces := [], recordings := []}, dyntrace:status()),
    ?assertEqual(nomatch, string:find(lttng_session:cmd_ok("lttng list"), "dyntrace-record-")),
    ?assertEqual([dyntrace_ctl, dyntrace_node_names], children()).

children() ->
    lists:sort([Id || {Id, _, _, _} <- supervisor:which_children(dyntrace_sup)]).

%% A peer node is as it was: nothing listed, nothing traced by dyntrace.
left_as_it_was(P) ->
    ?assertMatch(#{traces := [], recordings := []}, peer:call(P, dyntrace, status, [])),
    ?assertEqual([], peer:call(P, ?MODULE, dyntrace_traced, [])).

%% @doc In a peer: the processes whose tracer is dyntrace.
dyntrace_traced() ->
    [P || P <- erlang:processes(),
          case erlang:trace_info(P, tracer) of
              {tracer, {dyntrace, _}} -> true;
              _ -> false
          end].

start_peer(Name, Opts) ->
    Paths = lists:usort([filename:dirname(code:which(M)) || M <- [dyntrace, lttng_session, ?MODULE]]),
    {ok, P, Node} = peer:start(Opts#{name => peer:random_name(Name), connection => standard_io,
                                     args => lists:append([["-pa", D] || D <- Paths])}),
    {module, dyntrace} = peer:call(P, code, ensure_loaded, [dyntrace]),
    {P, Node}.

%%%===================================================================
%%% The application
%%%===================================================================

%% In a node of its own: `application:ensure_all_started(dyntrace)' starts
%% the supervisor owning dyntrace_ctl and the announcer (the one the load
%% started unsupervised is replaced); stopping the application undoes the
%% front door's flags and ends its processes; a supervisor the front door
%% started before the application is adopted, with what it had set.
t_application(_Config) ->
    {P, _Node} = start_peer(t_application, #{}),
    try
        Steps = peer:call(P, ?MODULE, application_steps, []),
        ?assertMatch(#{loaded_announcer := Pid, started := {ok, [dyntrace]}}
                       when is_pid(Pid), Steps),
        #{loaded_announcer := Loaded, children := Children, announcer := Announcer,
          traced := Traced, stopped := Stopped, after_stop := AfterStop,
          adopted := Adopted} = Steps,
        ?assertEqual([dyntrace_ctl, dyntrace_node_names], lists:sort(maps:keys(Children))),
        ?assertEqual(maps:get(dyntrace_node_names, Children), Announcer),
        ?assertNotEqual(Loaded, Announcer),
        ?assertEqual({ok, 1}, Traced),
        ?assertEqual(ok, Stopped),
        ?assertEqual(#{sup => undefined, ctl => undefined, flags => []}, AfterStop),
        ?assertMatch(#{same_sup := true, listed := 1, flags := [send]}, Adopted)
    after
        peer:stop(P)
    end.

%% @doc In a peer: the steps of t_application, and what each showed.
application_steps() ->
    Loaded = whereis(dyntrace_node_names),
    {ok, _} = Started = application:ensure_all_started(dyntrace),
    Children = maps:from_list([{Id, Pid} || {Id, Pid, _, _}
                                                <- supervisor:which_children(dyntrace_sup)]),
    Announcer = whereis(dyntrace_node_names),
    A = spawn(timer, sleep, [infinity]),
    Traced = dyntrace:trace(A, [message_send], #{}),
    Stopped = application:stop(dyntrace),
    AfterStop = #{sup => whereis(dyntrace_sup), ctl => whereis(dyntrace_ctl),
                  flags => flags(A)},
    %% The front door first, then the application.
    B = spawn(timer, sleep, [infinity]),
    {ok, 1} = dyntrace:trace(B, [message_send], #{}),
    Sup = whereis(dyntrace_sup),
    {ok, [dyntrace]} = application:ensure_all_started(dyntrace),
    Adopted = #{same_sup => whereis(dyntrace_sup) =:= Sup,
                listed => length(maps:get(traces, dyntrace:status())),
                flags => flags(B)},
    ok = application:stop(dyntrace),
    #{loaded_announcer => Loaded, started => Started, children => Children,
      announcer => Announcer, traced => Traced, stopped => Stopped,
      after_stop => AfterStop, adopted => Adopted}.

ids() ->
    lists:sort([Id || #{id := Id} <- maps:get(traces, dyntrace:status())]).

select(Name, Events) ->
    lttng_session:select(Name, Events).

count(Name, Events) ->
    length(select(Name, Events)).

%% The events whose pid (or sender) is one of `Pids'.
of_pids(Events, Pids) ->
    Texts = [text(P) || P <- Pids],
    [E || #{fields := F} = E <- Events,
          lists:member(maps:get(<<"pid">>, F, maps:get(<<"from">>, F, none)), Texts)].

%% The messages of message_send events to `Sink'.
sent_to(Sink, Events) ->
    [lttng_session:field("message", E) || E <- select(message_send, Events),
                                          lttng_session:field("to", E) =:= text(Sink)].

text(Pid) -> list_to_binary(pid_to_list(Pid)).

badarg(F) ->
    try F() of
        Result -> {returned, Result}
    catch
        error:{badarg, What} -> What
    end.
