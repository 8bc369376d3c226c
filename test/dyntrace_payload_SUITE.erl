%%% Payload modes end to end: processes traced with `payload' and `redact'
%%% options do real work whose messages, exit reasons and spawn arguments
%%% carry a secret; the trace, read both with babeltrace2 and as the raw
%%% CTF files on disk, must not hold it, and each mode's text is the one
%%% README defines (and `dyntrace:format_term/3' returns).
-module(dyntrace_payload_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1, end_per_testcase/2]).
-export([t_secrecy/1, t_mode_texts/1, t_kinds/1, t_cut_texts/1, t_fails_closed/1,
         t_message_paths/1]).
-export([secret_args/1]).

-import(dyntrace_test_mod, [actor/0, run/2]).

%% The events a payload reaches, and process_spawn, whose entry must not
%% carry the spawn arguments.
-define(EVENTS, [message_send, message_receive, process_exit, process_spawn,
                 process_register, port_open, port_exit]).
-define(SECRET, <<"QXZSECRETMARKERQXZ">>).
-define(SECRET_INT, 73164731647316473164).

suite() ->
    [{timetrap, {minutes, 3}}].

all() ->
    [t_secrecy, t_mode_texts, t_kinds, t_cut_texts, t_fails_closed, t_message_paths].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    Config.

end_per_suite(_Config) ->
    ok.

end_per_testcase(_Case, _Config) ->
    _ = erlang:trace(all, false, [all]),
    ok.

%%%===================================================================
%%% Cases
%%%===================================================================

%% With `none', `shape' and `size', and with `redact => [password]' when
%% the secret is only under that key, not one event holds the secret, in
%% babeltrace2's text or in the trace files. The same workload traced with
%% the defaults shows it in both (the check can fail).
t_secrecy(_Config) ->
    Keyed = payload_secrets:keyed(?SECRET, ?SECRET_INT),
    Bare = payload_secrets:bare(?SECRET, ?SECRET_INT),
    Runs = [{#{payload => none}, [Bare, Keyed]},
            {#{payload => shape}, [Bare, Keyed]},
            {#{payload => size}, [Bare, Keyed]},
            {#{redact => [password]}, [Keyed]},
            {#{payload => #{message => none, reason => size}}, [Bare, Keyed]}],
    [begin
         {Text, Raw, Events} = record_workload(Options, Terms),
         ct:log("~p: ~b events", [Options, length(Events)]),
         ?assertEqual({Options, false, false},
                      {Options, payload_secrets:shown(Text, ?SECRET, ?SECRET_INT),
                       payload_secrets:shown(Raw, ?SECRET, ?SECRET_INT)}),
         assert_workload_traced(Options, Terms, Events)
     end || {Options, Terms} <- Runs],
    {Text, Raw, Events} = record_workload(#{}, [Bare, Keyed]),
    ?assert(payload_secrets:shown(Text, ?SECRET, ?SECRET_INT)),
    ?assert(payload_secrets:shown(Raw, ?SECRET, ?SECRET_INT)),
    assert_workload_traced(#{}, [Bare, Keyed], Events).

%% Each mode's exact text for a set of terms, in the trace and from
%% format_term/3. The binaries come in the forms the tracer reads in place
%% (on the heap, off it) and one it asks the VM for up to OTP 26 (a
%% sub-binary).
t_mode_texts(_Config) ->
    Large = binary:copy(<<"0123456789">>, 10),
    Binaries = [binary:copy(<<"x">>, 64), Large, binary:part(Large, 10, 80)],
    Terms = [{B, <<"<<\"", B/binary, "\">>">>,
              iolist_to_binary(["<<_:", integer_to_list(byte_size(B)), "/binary>>"])}
             || B <- Binaries] ++
            [{{login, <<"alice">>, #{password => <<"hunter2">>, tries => 3}},
              <<"{login,<<\"alice\">>,#{password=><<\"hunter2\">>,tries=>3}}">>,
              <<"{login,<<_:5/binary>>,#{password=><<_:7/binary>>,tries=><int:1>}}">>},
             {"héllo", <<"\"héllo\""/utf8>>, <<"<string:5>">>},
             {-42, <<"-42">>, <<"<int:2>">>},
             {[1.5, x | tail], <<"[1.500000e+00,x|tail]">>, <<"[<float>,x|tail]">>},
             {<<1:3>>, <<"<<1:3>>">>, <<"<<_/bitstring>>">>},
             {1 bsl 70, <<"1180591620717411303424">>, <<"<bigint>">>},
             {{self(), fun lists:map/2}, iolist_to_binary(["{", pid_to_list(self()),
                                                            ",fun lists:map/2}"]),
              iolist_to_binary(["{", pid_to_list(self()), ",<fun>}"])}],
    Expected = fun(full, {_, Full, _}) -> Full;
                  (shape, {_, _, Shape}) -> Shape;
                  (size, {_, Full, _}) -> integer_to_binary(byte_size(Full));
                  (none, _) -> <<"-">>
               end,
    S = start_session(t_mode_texts, [message_send]),
    Senders = [{Mode, sender(#{payload => Mode}, [T || {T, _, _} <- Terms])}
               || Mode <- [full, shape, size, none]],
    Events = lttng_session:stop_and_read(S),
    lttng_session:destroy(S),
    [begin
         Want = [Expected(Mode, Term) || Term <- Terms],
         ?assertEqual({Mode, Want}, {Mode, messages_from(Pid, Events)}),
         ?assertEqual({Mode, Want},
                      {Mode, [dyntrace:format_term(T, message, #{payload => Mode})
                              || {T, _, _} <- Terms]})
     end || {Mode, Pid} <- Senders].

%% Per field kind: `payload => Mode' leaves registered names alone and
%% applies to reasons and drivers; a map sets kinds one by one.
t_kinds(_Config) ->
    S = start_session(t_kinds, ?EVENTS),
    Reason = {shutdown, #{password => <<"hunter2">>}},
    A = actor(),
    erlang:trace(A, true, [procs, send, dyntrace:tracer(#{payload => none})]),
    erlang:trace(new_ports, true, [ports, dyntrace:tracer(#{payload => none})]),
    Port = run(A, fun() ->
                          true = register('payload name', self()),
                          self() ! {secret, <<"hunter2">>},
                          P = open_port({spawn, "cat -u"}, [binary]),
                          true = port_close(P),
                          P
                  end),
    _ = erlang:trace(new_ports, false, [ports]),
    dyntrace_test_mod:stop(A, Reason),
    B = actor(),
    PerKind = #{payload => #{message => shape, reason => size}},
    erlang:trace(B, true, [procs, send, dyntrace:tracer(PerKind)]),
    run(B, fun() -> self() ! {hello, <<"hunter2">>}, ok end),
    dyntrace_test_mod:stop(B, Reason),
    Events = lttng_session:stop_and_read(S),
    lttng_session:destroy(S),
    Field = fun(Event, Key, Id) ->
                    [lttng_session:field(Key, E) || E <- lttng_session:select(Event, Events),
                                                    concerns(E, Id)]
            end,
    %% register/2, then the unregister at its exit.
    ?assertEqual([<<"'payload name'">>, <<"'payload name'">>],
                 Field(process_register, <<"name">>, A)),
    %% Its message to itself, then run/2's reply.
    ?assertEqual([<<"-">>, <<"-">>], Field(message_send, <<"message">>, A)),
    ?assertEqual([<<"-">>], Field(process_exit, <<"reason">>, A)),
    ?assertEqual([<<"-">>], Field(port_open, <<"driver">>, Port)),
    ?assertEqual([<<"-">>], Field(port_exit, <<"reason">>, Port)),
    ?assertMatch([<<"{hello,<<_:7/binary>>}">>, <<"{#Ref<", _/binary>>],
                 Field(message_send, <<"message">>, B)),
    ReasonSize = integer_to_binary(byte_size(dyntrace:format_term(Reason, 1024))),
    ?assertEqual([ReasonSize], Field(process_exit, <<"reason">>, B)),
    ?assertEqual(<<"{shutdown,#{password=><<\"hunter2\">>}}">>,
                 dyntrace:format_term(Reason, 1024)).

%% Cut texts end in `...', stay within the limit and are valid UTF-8, in
%% every mode that writes a term.
t_cut_texts(_Config) ->
    Long = {lists:duplicate(40, 'étéà'), [{k, <<"v">>} | lists:duplicate(40, "ééé")]},
    Options = [#{payload => shape, max_term_bytes => 64},
               #{redact => [k], max_term_bytes => 64},
               #{redact => [k], payload => shape, max_term_bytes => 64}],
    S = start_session(t_cut_texts, [message_send]),
    Senders = [{O, sender(O, [Long])} || O <- Options],
    SizeSender = sender(#{payload => size, max_term_bytes => 64}, [Long]),
    Events = lttng_session:stop_and_read(S),
    lttng_session:destroy(S),
    [begin
         [Text] = messages_from(Pid, Events),
         ct:log("~p: ~ts", [O, Text]),
         ?assertEqual(dyntrace:format_term(Long, message, O), Text),
         ?assert(byte_size(Text) =< 64 andalso byte_size(Text) >= 60),
         ?assertMatch(<<_:(byte_size(Text) - 3)/binary, "...">>, Text),
         ?assertEqual(Text, unicode:characters_to_binary(Text))
     end || {O, Pid} <- Senders],
    ?assertEqual([<<">64">>], messages_from(SizeSender, Events)).

%% A state that names `payload' or `redact' but reaches the callbacks
%% unchecked and invalid hides every term text (and is counted): an
%% option meant to hide never fails open (`none's text is `-'), a map of
%% any size. tracer/1 names the bad option.
t_fails_closed(_Config) ->
    Bad = [#{payload => bogus}, #{payload => #{message => bogus}},
           #{redact => password}, #{redact => [password | x]},
           #{payload => none, extra => 1}, #{redact => lists:seq(1, 33)},
           %% Past 32 keys a map is another structure, read another way.
           maps:from_list([{payload, none} | [{K, K} || K <- lists:seq(1, 40)]])],
    [?assertError({badarg, _}, dyntrace:tracer(State)) || State <- Bad],
    ?assertError({badarg, {payload, bogus}}, dyntrace:tracer(#{payload => bogus})),
    ?assertError({badarg, {redact, password}}, dyntrace:tracer(#{redact => password})),
    S = start_session(t_fails_closed, [message_send]),
    #{bad_tracer_state := Before} = dyntrace:stats(),
    Senders = [{State, sender(State, [{secret, ?SECRET}], raw)} || State <- Bad],
    #{bad_tracer_state := After} = dyntrace:stats(),
    Events = lttng_session:stop_and_read(S),
    lttng_session:destroy(S),
    [?assertEqual({State, [<<"-">>]}, {State, messages_from(Pid, Events)})
     || {State, Pid} <- Senders],
    ?assert(After - Before >= length(Bad)).

%% message_send and message_receive take a short path of their own when
%% both pids are local ones whose texts the scheduler has cached (from a
%% process's second message on), the general way otherwise (a port, a
%% name, a pid seen first): every event's texts are the same either way,
%% in full and in none.
t_message_paths(_Config) ->
    S = start_session(t_message_paths, [message_send, message_receive]),
    Runs = [{Mode, message_paths(Mode)} || Mode <- [full, none]],
    Events = lttng_session:stop_and_read(S),
    lttng_session:destroy(S),
    [begin
         Text = fun(none, _) -> <<"-">>;
                   (full, Term) -> dyntrace:format_term(Term, 1024)
                end,
         Sends = [{P, To, Text(Mode, M)}
                  || {To, M} <- [{P, {n, 1}}, {P, {n, 2}}, {P, {n, 3}},
                                 {Peer, {n, 1}}, {Peer, {n, 2}}, {Peer, {n, 3}},
                                 {Port, {P, {command, <<"x">>}}},
                                 {nowhere_registered, hello}, {Dead, hello},
                                 {self(), {done, P}}]],
         ?assertEqual({Mode, [{text(F), to_text(T), M} || {F, T, M} <- Sends]},
                      {Mode, [{lttng_session:field(<<"from">>, E),
                               lttng_session:field(<<"to">>, E),
                               lttng_session:field(<<"message">>, E)}
                              || E <- lttng_session:select(message_send, Events),
                                 concerns(E, P)]}),
         Receives = [{go, Port}, {n, 1}, {n, 2}, {n, 3}],
         ?assertEqual({Mode, [Text(Mode, M) || M <- Receives]},
                      {Mode, [lttng_session:field(<<"message">>, E)
                              || E <- lttng_session:select(message_receive, Events),
                                 lttng_session:field(<<"to">>, E) =:= text(P)]})
     end || {Mode, {P, Peer, Port, Dead}} <- Runs].

%% A process traced with `payload => Mode' for send and receive that
%% sends three messages to itself and three to another process, then one
%% to a port, one to a name no process has and one to a process that has
%% ended, and receives its own; then tells the caller it is done.
message_paths(Mode) ->
    Peer = spawn(fun() -> receive stop -> ok end end),
    {Dead, DeadRef} = spawn_monitor(fun() -> ok end),
    receive {'DOWN', DeadRef, process, Dead, _} -> ok end,
    Parent = self(),
    P = spawn(fun() ->
                      Port = receive {go, Port0} -> Port0 end,
                      [self() ! {n, N} || N <- [1, 2, 3]],
                      [Peer ! {n, N} || N <- [1, 2, 3]],
                      Port ! {self(), {command, <<"x">>}},
                      try nowhere_registered ! hello catch error:badarg -> ok end,
                      Dead ! hello,
                      [receive {n, N} -> ok end || N <- [1, 2, 3]],
                      Parent ! {done, self()}
              end),
    Port = open_port({spawn, "cat >/dev/null"}, [binary]),
    true = erlang:port_connect(Port, P),
    unlink(Port),
    erlang:trace(P, true, [send, 'receive', dyntrace:tracer(#{payload => Mode})]),
    P ! {go, Port},
    receive {done, P} -> ok end,
    Peer ! stop,
    %% The port closes with its owner, P, unless it is still closing.
    try port_close(Port) catch error:badarg -> ok end,
    {P, Peer, Port, Dead}.

to_text(Name) when is_atom(Name) -> atom_to_binary(Name);
to_text(Id) -> text(Id).

%%%===================================================================
%%% Helpers
%%%===================================================================

start_session(Case, Events) ->
    S = lttng_session:create(Case, Events),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled(Events),
    S.

%% A process traced with `Options' (checked by tracer/1) that sends each
%% term to itself, then ends.
sender(Options, Terms) ->
    sender(Options, Terms, checked).

sender(Options, Terms, How) ->
    Tracer = case How of
                 checked -> dyntrace:tracer(Options);
                 raw -> {tracer, dyntrace, Options}
             end,
    Pid = spawn(fun() -> receive go -> [self() ! T || T <- Terms] end end),
    erlang:trace(Pid, true, [send, Tracer]),
    Ref = monitor(process, Pid),
    Pid ! go,
    receive {'DOWN', Ref, process, Pid, _} -> Pid end.

messages_from(Pid, Events) ->
    [lttng_session:field(<<"message">>, E) || E <- lttng_session:select(message_send, Events),
                                              concerns(E, Pid)].

concerns(#{fields := Fields}, Id) ->
    Text = text(Id),
    lists:any(fun(K) -> maps:get(K, Fields, none) =:= Text end,
              [<<"pid">>, <<"from">>, <<"port">>]).

text(Pid) when is_pid(Pid) -> list_to_binary(pid_to_list(Pid));
text(Port) when is_port(Port) -> list_to_binary(erlang:port_to_list(Port)).

%% Runs the workload in a process tree traced with `Options'; returns
%% babeltrace2's text of the trace, the bytes of every file of the trace
%% directory, and the parsed events.
record_workload(Options, Terms) ->
    S = start_session(secrecy, ?EVENTS),
    Parent = spawn(fun() -> receive go -> workload(Terms) end end),
    erlang:trace(Parent, true, [send, 'receive', procs, set_on_spawn,
                                dyntrace:tracer(Options)]),
    Ref = monitor(process, Parent),
    Parent ! go,
    receive {'DOWN', Ref, process, Parent, _} -> ok end,
    ok = lttng_session:stop(S),
    #{dir := Dir} = S,
    {0, TextBytes} = lttng_session:cmd("babeltrace2 '" ++ Dir ++ "'"),
    Text = list_to_binary(TextBytes),
    Raw = filelib:fold_files(Dir, ".*", true,
                             fun(File, Acc) ->
                                     {ok, Bytes} = file:read_file(File),
                                     <<Acc/binary, Bytes/binary>>
                             end, <<>>),
    Events = lttng_session:read(S),
    lttng_session:destroy(S),
    ?assert(byte_size(Raw) > 0),
    {Text, Raw, Events}.

%% Messages to and from an echo process, children that exit with each
%% term, one spawned with the terms as its arguments, and the parent's
%% own exit with all of them.
workload(Terms) ->
    Echo = spawn(fun echo/0),
    [begin Echo ! {self(), T}, receive {echo, T} -> ok end end || T <- Terms],
    [begin
         {Pid, Ref} = spawn_monitor(fun() -> exit(T) end),
         receive {'DOWN', Ref, process, Pid, T} -> ok end
     end || T <- Terms],
    {Pid, Ref} = spawn_monitor(?MODULE, secret_args, [Terms]),
    receive {'DOWN', Ref, process, Pid, normal} -> ok end,
    Echo ! stop,
    exit({done, Terms}).

echo() ->
    receive
        {From, T} -> From ! {echo, T}, echo();
        stop -> ok
    end.

%% @doc The entry of a process spawned with the secret as its arguments.
-spec secret_args(list()) -> ok.
secret_args(Terms) when is_list(Terms) ->
    ok.

%% Every part of the workload reached the trace: sends and receives of
%% each term both ways, the exits, the spawns (entry without arguments).
assert_workload_traced(Options, Terms, Events) ->
    N = length(Terms),
    Count = fun(Name) -> length(lttng_session:select(Name, Events)) end,
    Counts = #{send => Count(message_send), 'receive' => Count(message_receive),
               exit => Count(process_exit), spawn => Count(process_spawn)},
    ct:log("~p: ~p", [Options, Counts]),
    ?assert(maps:get(send, Counts) >= 2 * N + 1),
    ?assert(maps:get('receive', Counts) >= 2 * N),
    ?assert(maps:get(exit, Counts) >= N + 3),
    ?assertEqual(N + 2, maps:get(spawn, Counts)),
    Entries = [lttng_session:field(<<"entry">>, E)
               || E <- lttng_session:select(process_spawn, Events)],
    ?assert(lists:member(<<"dyntrace_payload_SUITE:secret_args/1">>, Entries)).
