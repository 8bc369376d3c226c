%%% End-to-end: each case attaches dyntrace to processes or ports it owns,
%%% enables only the LTTng events it needs in its own session, does real
%%% work, reads the trace back with babeltrace2 and checks the field values
%%% a user would grep for. Every event of the Events table (docs/reference.md) is checked here.
-module(dyntrace_lttng_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1,
         init_per_testcase/2, end_per_testcase/2]).
-export([t_lttng_list/1,
         t_event_fields/1,
         t_readme_events/1,
         t_procs/1,
         t_ports/1,
         t_running_process/1,
         t_running_port/1,
         t_port_messages/1,
         t_call/1,
         t_call_return_to/1,
         t_call_exception/1,
         t_call_silent/1, t_call_repeated/1,
         t_send/1,
         t_send_remote/1,
         t_node_name/1,
         t_send_many_pids/1,
         t_receive/1,
         t_garbage_collection/1,
         t_garbage_collection_info_order/1,
         t_disabled_event/1,
         t_documented_order/1,
         t_options/1,
         t_options_identifiers/1,
         t_junk_callbacks/1,
         t_reload/1,
         t_load_beside_ebin/1,
         t_all/1]).

-import(dyntrace_test_mod, [actor/0, run/2]).

-define(SINK, dyntrace_ct_sink).
%% A name the VM's printer quotes.
-define(WORKER_NAME, 'dyntrace ct-worker').

suite() ->
    [{timetrap, {minutes, 2}}].

all() ->
    [t_lttng_list,
     t_event_fields,
     t_readme_events,
     t_procs,
     t_ports,
     t_running_process,
     t_running_port,
     t_port_messages,
     t_call,
     t_call_return_to,
     t_call_exception,
     t_call_silent,
     t_call_repeated,
     t_send,
     t_send_remote,
     t_node_name,
     t_send_many_pids,
     t_receive,
     t_garbage_collection,
     t_garbage_collection_info_order,
     t_disabled_event,
     t_documented_order,
     t_options,
     t_options_identifiers,
     t_junk_callbacks,
     t_reload,
     t_load_beside_ebin,
     t_all].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    true = is_list(dyntrace:enabled_events()),
    %% Loaded, so that trace patterns on it match before first use.
    {module, dyntrace_test_mod} = code:ensure_loaded(dyntrace_test_mod),
    Config.

end_per_suite(_Config) ->
    ok.

init_per_testcase(_Case, Config) ->
    Config.

end_per_testcase(Case, _Config) ->
    untrace_all(),
    destroy_sessions_of(Case),
    ok.

%%%===================================================================
%%% Cases
%%%===================================================================

%% `lttng list -u' lists exactly the events of `dyntrace:events()' for
%% this node, as soon as the module is loaded.
t_lttng_list(_Config) ->
    Expected = lists:sort(all_events()),
    ?assertEqual(Expected, lists:sort(listed_events(os:getpid()))).

%% The trace's own metadata declares each event's fields in the order and
%% with the types `dyntrace:events()' gives: tools written for OTP's LTTng
%% build read these declarations.
t_event_fields(_Config) ->
    S = start_session(t_event_fields, all_events()),
    ok = dyntrace:trace_send(send, [], self(), declared, #{extra => self()}),
    lttng_session:stop(S),
    #{dir := Dir} = S,
    [Metadata | _] = filelib:wildcard(filename:join(Dir, "**/metadata")),
    Text = lttng_session:cmd_ok("babeltrace2 --output-format=ctf-metadata '"
                                ++ filename:dirname(Metadata) ++ "'"),
    lttng_session:destroy(S),
    Declared = maps:from_list(
                 [{list_to_atom(Name), declared_fields(Body)}
                  || [Name, Body] <- match_all(Text, "(?s)name = \"org_erlang_dyntrace:"
                                               "([a-z0-9_]+)\";.*?fields := struct \\{"
                                               "(.*?)\\};")]),
    Ctf = #{string => string, u32 => {unsigned, 32}, u64 => {unsigned, 64},
            i64 => {signed, 64}},
    Expected = maps:from_list(
                 [{Name, [{maps:get(Type, Ctf), atom_to_list(F)} || {F, Type} <- Fields]}
                  || #{name := Name, fields := Fields} <- dyntrace:events()]),
    ?assertEqual(Expected, Declared).

%% The Events table of docs/reference.md is the contract: it names every event of
%% `dyntrace:events()' once, with its fields in order, and the integer
%% fields are the ones it says: `depth' unsigned 32-bit, the GC sizes
%% unsigned 64-bit, the user probes' integers signed 64-bit.
t_readme_events(_Config) ->
    Source = proplists:get_value(source, ?MODULE:module_info(compile)),
    Readme = filename:join([filename:dirname(filename:dirname(Source)), "docs", "reference.md"]),
    {ok, Text} = file:read_file(Readme),
    [_, FromHeader] = string:split(Text, <<"| event | fields |">>),
    [Table | _] = string:split(FromHeader, <<"\n\n">>),
    Rows = [[string:trim(Cell) || Cell <- string:split(Row, <<"|">>, all)]
            || <<"| ", _/binary>> = Row <- string:split(Table, <<"\n">>, all)],
    Documented = lists:sort(
                   [{binary_to_atom(Name), [binary_to_atom(F) || F <- fields_of(Fields)]}
                    || [<<>>, Names, Fields | _] <- Rows,
                       Name <- string:split(Names, <<" / ">>, all)]),
    Events = dyntrace:events(),
    ?assertEqual(lists:sort([{N, [F || {F, _} <- Fs]} || #{name := N, fields := Fs} <- Events]),
                 Documented),
    Integers = [{N, F, T} || #{name := N, fields := Fs} <- Events, {F, T} <- Fs, T =/= string],
    ?assertEqual([{N, depth, u32} || N <- [function_call, function_return]]
                 ++ [{N, F, u64} || N <- [gc_minor_start, gc_minor_end,
                                          gc_major_start, gc_major_end],
                                    F <- [gc_size_field(N), heap, old_heap]]
                 ++ [{node_name, channel, u64}]
                 ++ [{user_trace_i4s4, I, i64} || I <- [i1, i2, i3, i4]]
                 ++ [{user_trace_n, probe, u32}]
                 ++ [{user_trace_n, I, i64} || I <- [i1, i2, i3, i4]]
                 ++ [{memory_sample, F, u64} || F <- [total, processes, processes_used, system,
                                                      atom, atom_used, binary, code, ets]]
                 ++ [{allocator_sample, instance, u32}]
                 ++ [{allocator_sample, F, u64} || F <- [mbc_carriers, mbcs_size, sbc_carriers,
                                                         sbcs_size, blocks_size]]
                 ++ [{process_memory, F, u64} || F <- [memory, total_heap, bin_vheap,
                                                       message_queue_len]]
                 ++ lists:append(
                      [[{N, instance, u32}]
                       ++ [{N, F, u64} || F <- [size, mbc_carriers, mbcs_size, sbc_carriers,
                                               sbcs_size]]
                       || N <- [carrier_create, carrier_destroy]])
                 ++ [{call_guard, F, u64} || F <- [calls, ms]],
                 Integers).

gc_size_field(Event) ->
    case lists:suffix("_start", atom_to_list(Event)) of
        true -> need;
        false -> reclaimed
    end.

%% `pid (the port), entry, type' -> [pid, entry, type]
fields_of(Cell) ->
    [hd(string:split(string:trim(F), <<" ">>)) || F <- string:split(Cell, <<",">>, all)].

%% `string _pid;' and `integer { size = 32; ... signed = 0; ... } _depth;'
declared_fields(Body) ->
    [case Type of
         "string" -> {string, Name};
         _ ->
             [[Size]] = match_all(Type, "size = ([0-9]+);"),
             Sign = case match_all(Type, "signed = (0|false);") of
                        [] -> signed;
                        _ -> unsigned
                    end,
             {{Sign, list_to_integer(Size)}, Name}
     end
     || [Type, Name] <- match_all(Body, "(string|integer \\{[^}]*\\}) _([a-z0-9_]+);")].

%% spawn, link/unlink on both sides, register/unregister, exit.
t_procs(_Config) ->
    S = start_session(t_procs, [process_spawn, process_link, process_exit,
                                process_register]),
    A = actor(),
    Other = spawn(fun() -> link_unlink_on_request() end),
    trace(A, [procs, set_on_spawn]),
    %% The child's side of a spawn and seq_trace are no events.
    ?assertEqual(trace, dyntrace:enabled_procs(spawn, [], A)),
    ?assertEqual(discard, dyntrace:enabled_procs(spawned, [], A)),
    ?assertEqual(discard, dyntrace:enabled(seq_trace, [], A)),
    {Child, FunChild, Port} =
        run(A, fun() ->
                       C = spawn(dyntrace_test_mod, wait, [{shutdown, x}]),
                       true = link(C),
                       true = unlink(C),
                       true = register(?WORKER_NAME, self()),
                       true = unregister(?WORKER_NAME),
                       P = open_port({spawn, "cat"}, []),
                       true = unlink(P),
                       true = port_close(P),
                       {C, spawn(fun() -> receive never -> ok end end), P}
               end),
    Other ! {link_unlink, A, self()},
    receive {Other, done} -> ok end,
    ChildRef = monitor(process, Child),
    Child ! go,
    receive {'DOWN', ChildRef, process, Child, _} -> ok end,
    FunRef = monitor(process, FunChild),
    exit(FunChild, kill),
    receive {'DOWN', FunRef, process, FunChild, _} -> ok end,
    dyntrace_test_mod:stop(A),
    Events = read(S, [A, Child, Other, FunChild]),

    %% One event per spawn (the child's `spawned' writes none); a fun is
    %% started by erlang:apply/2, as the runtime reports it.
    ?assertEqual([#{<<"pid">> => text(Child), <<"parent">> => text(A),
                    <<"entry">> => <<"dyntrace_test_mod:wait/1">>},
                  #{<<"pid">> => text(FunChild), <<"parent">> => text(A),
                    <<"entry">> => <<"erlang:apply/2">>}],
                 [fields(E) || E <- lttng_session:select(process_spawn, Events)]),

    Links = [fields(E) || E <- lttng_session:select(process_link, Events)],
    Link = fun(From, To, Type) ->
                   #{<<"from">> => text(From), <<"to">> => text(To),
                     <<"type">> => Type}
           end,
    %% A's link/unlink, and the child's getting_linked/getting_unlinked
    %% (traced through set_on_spawn), which name A as `from' too.
    ?assertEqual(2, count(Link(A, Child, <<"link">>), Links)),
    ?assertEqual(2, count(Link(A, Child, <<"unlink">>), Links)),
    %% A is linked by Other: from = the other side.
    ?assertEqual(1, count(Link(Other, A, <<"link">>), Links)),
    ?assertEqual(1, count(Link(Other, A, <<"unlink">>), Links)),
    ?assertEqual(0, count(Link(A, Other, <<"link">>), Links)),
    %% A process's links to ports are process_link events too: open_port/2
    %% links the opener to the port.
    ?assertEqual([Link(A, Port, <<"link">>), Link(A, Port, <<"unlink">>)],
                 [L || #{<<"to">> := To} = L <- Links, To =:= text(Port)]),

    Registers = [fields(E) || E <- lttng_session:select(process_register, Events)],
    Name = <<"'dyntrace ct-worker'">>,
    ?assertEqual([#{<<"pid">> => text(A), <<"name">> => Name, <<"type">> => <<"register">>},
                  #{<<"pid">> => text(A), <<"name">> => Name, <<"type">> => <<"unregister">>}],
                 Registers),

    Exits = [fields(E) || E <- lttng_session:select(process_exit, Events)],
    ?assertEqual([#{<<"pid">> => text(Child), <<"reason">> => <<"{shutdown,x}">>},
                  #{<<"pid">> => text(FunChild), <<"reason">> => <<"killed">>},
                  #{<<"pid">> => text(A), <<"reason">> => <<"normal">>}],
                 Exits).

%% A port's open, links and close, and a port closed by its owner's exit.
t_ports(_Config) ->
    S = start_session(t_ports, [port_open, port_exit, port_link]),
    A = actor(),
    B = actor(),
    erlang:trace(new_ports, true, [ports, {tracer, dyntrace, []}]),
    {Port, Name} = run(A, fun() ->
                                  P = open_port({spawn, "cat -u"}, [binary]),
                                  {name, N} = erlang:port_info(P, name),
                                  true = unlink(P),
                                  true = link(P),
                                  true = port_close(P),
                                  {P, N}
                          end),
    Port2 = run(B, fun() -> open_port({spawn, "cat"}, [binary]) end),
    dyntrace_test_mod:stop(B, {shutdown, y}),
    wait_port_gone(Port2),
    Events = read(S, [Port, Port2]),

    Opens = [fields(E) || E <- lttng_session:select(port_open, Events)],
    ?assertEqual([#{<<"pid">> => text(A), <<"driver">> => atom_text(Name),
                    <<"port">> => text(Port)},
                  #{<<"pid">> => text(B), <<"driver">> => <<"cat">>,
                    <<"port">> => text(Port2)}],
                 Opens),
    ?assertEqual(<<"'cat -u'">>, atom_text(Name)),

    Links = [fields(E) || E <- lttng_session:select(port_link, Events)],
    Link = fun(From, To, Type) ->
                   #{<<"from">> => text(From), <<"to">> => text(To),
                     <<"type">> => Type}
           end,
    %% The port gets linked to its opener (from = the opener), then A's
    %% unlink/1 and link/1 reach the port's side.
    ?assertEqual([Link(A, Port, <<"link">>), Link(A, Port, <<"unlink">>),
                  Link(A, Port, <<"link">>), Link(B, Port2, <<"link">>)],
                 Links),

    Exits = [fields(E) || E <- lttng_session:select(port_exit, Events)],
    ?assertEqual([#{<<"port">> => text(Port), <<"reason">> => <<"normal">>},
                  #{<<"port">> => text(Port2), <<"reason">> => <<"{shutdown,y}">>}],
                 Exits).

%% process_scheduled: in/out while working, the exiting kinds at the end.
t_running_process(_Config) ->
    S = start_session(t_running_process, [process_scheduled]),
    A = actor(),
    trace(A, [running, exiting]),
    _ = run(A, fun() -> dyntrace_test_mod:work(10) end),
    _ = run(A, fun() -> erlang:yield() end),
    dyntrace_test_mod:stop(A),
    %% Killed while waiting, and owning a big table: freeing it takes
    %% the exiting process more than one time slice.
    B = actor(),
    run(B, fun() ->
                   T = ets:new(big, []),
                   ets:insert(T, [{N, N} || N <- lists:seq(1, 200000)])
           end),
    trace(B, [running, exiting]),
    BRef = monitor(process, B),
    exit(B, kill),
    receive {'DOWN', BRef, process, B, killed} -> ok end,
    All = [fields(E) || E <- lttng_session:select(process_scheduled, read(S, [A, B]))],
    [Events, BEvents] = [[E || #{<<"pid">> := P} = E <- All, P =:= text(X)] || X <- [A, B]],
    ct:log("~p", [BEvents]),
    BTypes = [T || #{<<"type">> := T} <- BEvents],
    ?assertEqual(<<"out_exited">>, lists:last(BTypes)),
    ?assert(lists:member(<<"in_exiting">>, BTypes)),
    ?assert(lists:member(<<"out_exiting">>, BTypes)),
    %% An exiting process runs no function any more.
    ?assertEqual([<<"undefined">>],
                 lists:usort([En || #{<<"type">> := <<"in_exiting">>, <<"entry">> := En}
                                        <- BEvents])),
    ?assert(length(Events) >= 4),
    ?assert(lists:all(fun(#{<<"pid">> := P}) -> P =:= text(A) end, Events)),
    Types = assert_scheduling_types(Events),
    ?assert(lists:member(<<"out_exited">>, Types)),
    lists:foreach(fun(#{<<"entry">> := Entry}) -> assert_entry(Entry) end, Events),
    %% Waiting for the next job, the actor is out in its receive loop.
    Loop = <<"dyntrace_test_mod:actor_loop/0">>,
    ?assert(lists:member(#{<<"pid">> => text(A), <<"entry">> => Loop,
                           <<"type">> => <<"out">>}, Events)).

%% port_scheduled: the `pid' field holds the port, entry the callback.
t_running_port(_Config) ->
    S = start_session(t_running_port, [port_scheduled]),
    A = actor(),
    Port = run(A, fun() -> open_port({spawn, "cat"}, [binary]) end),
    trace(Port, [running_ports]),
    <<"hello">> = run(A, fun() ->
                                 true = port_command(Port, <<"hello">>),
                                 receive {Port, {data, D}} -> D end
                         end),
    run(A, fun() -> port_close(Port) end),
    %% The generic callbacks tell a port's `in' from a process's by the
    %% tracee.
    ?assertEqual(trace, dyntrace:enabled(in, [], Port)),
    ok = wait_discard(fun() -> dyntrace:enabled(in, [], self()) end, process_scheduled),
    Events = [fields(E) || E <- lttng_session:select(port_scheduled, read(S, [Port]))],
    ?assert(length(Events) >= 2),
    ?assert(lists:all(fun(#{<<"pid">> := P}) -> P =:= text(Port) end, Events)),
    _ = assert_scheduling_types(Events),
    Entries = lists:usort([E || #{<<"entry">> := E} <- Events]),
    ?assert(lists:member(<<"command">>, Entries)),
    lists:foreach(fun(E) -> ?assertMatch({match, _}, re:run(E, "^[a-z_]+$")) end,
                  Entries).

%% Ports send and receive messages too: `from'/`to' hold the port.
t_port_messages(_Config) ->
    S = start_session(t_port_messages, [message_send, message_receive]),
    A = actor(),
    Port = run(A, fun() -> open_port({spawn, "cat"}, [binary]) end),
    trace(Port, [send, 'receive']),
    <<"ping">> = run(A, fun() ->
                                Port ! {self(), {command, <<"ping">>}},
                                receive {Port, {data, D}} -> D end
                        end),
    true = run(A, fun() -> port_close(Port) end),
    Events = read(S, [Port]),
    Receives = [fields(E) || E <- lttng_session:select(message_receive, Events)],
    ?assertEqual([#{<<"to">> => text(Port),
                    <<"message">> => iolist_to_binary(["{", text(A),
                                                       ",{command,<<\"ping\">>}}"])},
                  %% port_close/1 reaches the port as a close message.
                  #{<<"to">> => text(Port),
                    <<"message">> => iolist_to_binary(["{", text(A), ",close}"])}],
                 Receives),
    Sends = [fields(E) || E <- lttng_session:select(message_send, Events)],
    ?assertEqual([#{<<"from">> => text(Port), <<"to">> => text(A),
                    <<"message">> => iolist_to_binary(["{", text(Port),
                                                       ",{data,<<\"ping\">>}}"])}],
                 Sends).

%% function_call: entry and depth 0.
t_call(_Config) ->
    S = start_session(t_call, [function_call]),
    A = actor(),
    1 = erlang:trace_pattern({dyntrace_test_mod, work, 1}, true, [local]),
    trace(A, [call]),
    %% With `arity' the runtime hands {M,F,Arity} instead of the arguments.
    B = actor(),
    trace(B, [call, arity]),
    {acc, [1, 2, 3]} = run(A, fun() -> dyntrace_test_mod:work(3) end),
    {acc, [1]} = run(B, fun() -> dyntrace_test_mod:work(1) end),
    Events = [fields(E) || E <- lttng_session:select(function_call, read(S, [A, B]))],
    ?assertEqual([call_fields(A, <<"dyntrace_test_mod:work/1">>),
                  call_fields(B, <<"dyntrace_test_mod:work/1">>)],
                 Events).

%% function_return from return_from and return_to.
t_call_return_to(_Config) ->
    S = start_session(t_call_return_to, [function_call, function_return]),
    A = actor(),
    1 = erlang:trace_pattern({dyntrace_test_mod, work, 1},
                             [{'_', [], [{return_trace}]}], [local]),
    1 = erlang:trace_pattern({dyntrace_test_mod, outer, 1}, true, [local]),
    trace(A, [call, return_to]),
    {outer, {acc, [1, 2]}} = run(A, fun() -> dyntrace_test_mod:outer(2) end),
    Events = read(S, [A]),
    Calls = [fields(E) || E <- lttng_session:select(function_call, Events)],
    ?assertEqual([call_fields(A, <<"dyntrace_test_mod:outer/1">>),
                  call_fields(A, <<"dyntrace_test_mod:work/1">>)],
                 Calls),
    Returns = [fields(E) || E <- lttng_session:select(function_return, Events)],
    %% return_from work/1, return_to outer/1 (where work/1 returned to),
    %% then outer/1 returns to the actor's loop.
    ?assertEqual([call_fields(A, <<"dyntrace_test_mod:work/1">>),
                  call_fields(A, <<"dyntrace_test_mod:outer/1">>),
                  call_fields(A, <<"dyntrace_test_mod:actor_loop/0">>)],
                 Returns).

%% function_exception: the class of each exception.
t_call_exception(_Config) ->
    S = start_session(t_call_exception, [function_call, function_exception]),
    A = actor(),
    1 = erlang:trace_pattern({dyntrace_test_mod, fail, 1},
                             [{'_', [], [{exception_trace}]}], [local]),
    trace(A, [call]),
    Classes = [error, throw, exit],
    Classes = run(A, fun() -> [catch_class(C) || C <- Classes] end),
    Events = read(S, [A]),
    Entry = <<"dyntrace_test_mod:fail/1">>,
    ?assertEqual(lists:duplicate(3, call_fields(A, Entry)),
                 [fields(E) || E <- lttng_session:select(function_call, Events)]),
    ?assertEqual([#{<<"pid">> => text(A), <<"entry">> => Entry,
                    <<"class">> => atom_to_binary(C)} || C <- Classes],
                 [fields(E) || E <- lttng_session:select(function_exception, Events)]).

%% `silent': call events are suppressed until a match spec says
%% `{silent,false}', and again after one says `{silent,true}'.
t_call_silent(_Config) ->
    S = start_session(t_call_silent, [function_call, function_return,
                                      function_exception]),
    A = actor(),
    1 = erlang:trace_pattern({dyntrace_test_mod, work, 1},
                             [{'_', [], [{return_trace}]}], [local]),
    1 = erlang:trace_pattern({dyntrace_test_mod, unmute, 0},
                             [{'_', [], [{silent, false}]}], [local]),
    1 = erlang:trace_pattern({dyntrace_test_mod, mute, 0},
                             [{'_', [], [{silent, true}]}], [local]),
    trace(A, [call, silent]),
    _ = run(A, fun() ->
                       _ = dyntrace_test_mod:work(1),
                       ok = dyntrace_test_mod:unmute(),
                       _ = dyntrace_test_mod:work(2),
                       ok = dyntrace_test_mod:mute(),
                       dyntrace_test_mod:work(3)
               end),
    Events = read(S, [A]),
    Work = <<"dyntrace_test_mod:work/1">>,
    Calls = [fields(E) || E <- lttng_session:select(function_call, Events)],
    %% The match spec runs before the event is written: the call that says
    %% {silent,false} is seen, the one that says {silent,true} is not, and
    %% of the three work/1 calls only the one in between.
    ?assertEqual([call_fields(A, <<"dyntrace_test_mod:unmute/0">>),
                  call_fields(A, Work)],
                 Calls),
    Returns = [fields(E) || E <- lttng_session:select(function_return, Events)],
    ?assertEqual([call_fields(A, Work)], Returns).

%% Calls and returns over and over: from a process's second call on, the
%% pid's and the location's texts are those its scheduler keeps (the
%% short path), the first's are written anew (the general way); every
%% event's texts are the same, with the argument list and with `arity'.
t_call_repeated(_Config) ->
    S = start_session(t_call_repeated, [function_call, function_return]),
    1 = erlang:trace_pattern({dyntrace_test_mod, work, 1},
                             [{'_', [], [{return_trace}]}], [local]),
    A = actor(),
    trace(A, [call]),
    B = actor(),
    trace(B, [call, arity]),
    Calls = fun() -> [dyntrace_test_mod:work(N) || N <- lists:seq(1, 5)] end,
    _ = run(A, Calls),
    _ = run(B, Calls),
    Events = read(S, [A, B]),
    Want = lists:duplicate(5, call_fields(A, <<"dyntrace_test_mod:work/1">>)) ++
           lists:duplicate(5, call_fields(B, <<"dyntrace_test_mod:work/1">>)),
    ?assertEqual(Want, [fields(E) || E <- lttng_session:select(function_call, Events)]),
    ?assertEqual(Want, [fields(E) || E <- lttng_session:select(function_return, Events)]).

%% message_send: to a pid, to a registered name, to a dead process.
t_send(_Config) ->
    S = start_session(t_send, [message_send]),
    A = actor(),
    Sink = spawn(fun sink/0),
    true = register(?SINK, Sink),
    Dead = spawn(fun() -> ok end),
    DeadRef = monitor(process, Dead),
    receive {'DOWN', DeadRef, process, Dead, _} -> ok end,
    trace(A, [send]),
    run(A, fun() ->
                   Sink ! {acc, [1, 2, 3]},
                   ?SINK ! {by_name, "text"},
                   Dead ! to_the_dead,
                   ok
           end),
    Events = [fields(E) || E <- lttng_session:select(message_send, read(S, [A]))],
    Send = fun(To, Msg) ->
                   #{<<"from">> => text(A), <<"to">> => To, <<"message">> => Msg}
           end,
    ?assertEqual(1, count(Send(text(Sink), <<"{acc,[1,2,3]}">>), Events)),
    %% A send to a registered name: the runtime hands the name, as written.
    ?assertEqual(1, count(Send(atom_to_binary(?SINK), <<"{by_name,\"text\"}">>), Events)),
    ?assertEqual(1, count(Send(text(Dead), <<"to_the_dead">>), Events)).

%% Many senders, more than any cache of pid texts holds, on every
%% scheduler: each event's `from' is the sender's own pid, which the
%% message also carries.
t_send_many_pids(_Config) ->
    S = start_session(t_send_many_pids, [message_send]),
    A = actor(),
    trace(A, [send, set_on_spawn]),
    Count = 2000,
    Senders = run(A, fun() ->
                             Me = self(),
                             Ps = [spawn(fun() -> Me ! {hello, self()} end)
                                   || _ <- lists:seq(1, Count)],
                             [receive {hello, P} -> P end || P <- Ps]
                     end),
    Events = read(S, [A | Senders]),
    Hellos = [{From, Msg} || #{<<"from">> := From, <<"message">> := <<"{hello,", _/binary>> = Msg}
                                 <- [fields(E) || E <- lttng_session:select(message_send, Events)]],
    ?assertEqual(Count, length(Hellos)),
    ?assertEqual(lists:sort([iolist_to_binary(["{hello,", text(P), "}"]) || P <- Senders]),
                 lists:sort([Msg || {_, Msg} <- Hellos])),
    [?assertEqual(<<"{hello,", From/binary, "}">>, Msg) || {From, Msg} <- Hellos].

%% Sends to another node: remote pids as the VM numbers them, and a
%% {Name, Node} destination as written.
t_send_remote(_Config) ->
    distributed(fun send_remote/0).

send_remote() ->
    {ok, Peer, Node} = peer:start_link(#{name => peer:random_name(dyntrace_ct)}),
    try
        Remote = erpc:call(Node, erlang, spawn, [timer, sleep, [infinity]]),
        RemoteText = text(Remote),
        ?assertMatch({match, _}, re:run(RemoteText, "^<[1-9][0-9]*\\.[0-9]+\\.[0-9]+>$")),
        S = start_session(t_send_remote, [message_send]),
        A = actor(),
        trace(A, [send]),
        ok = run(A, fun() ->
                            Remote ! {remote, 1},
                            {nobody_here, Node} ! {remote, 2},
                            ok
                    end),
        Events = [fields(E) || E <- lttng_session:select(message_send, read(S, [A]))],
        ?assertEqual(1, count(#{<<"from">> => text(A), <<"to">> => RemoteText,
                                <<"message">> => <<"{remote,1}">>}, Events)),
        ?assertEqual(1, count(#{<<"from">> => text(A),
                                <<"to">> => iolist_to_binary(io_lib:format("~w", [{nobody_here, Node}])),
                                <<"message">> => <<"{remote,2}">>}, Events))
    after
        peer:stop(Peer)
    end.

%% node_name: without being asked, the node names itself when the event
%% becomes enabled and names a node that connects, with the channel its
%% pids are written with; on request, the whole table.
t_node_name(_Config) ->
    distributed(fun node_name/0).

node_name() ->
    S = start_session(t_node_name, [node_name, message_send]),
    %% The module looks once a second whether the event became enabled.
    timer:sleep(2500),
    {ok, Peer, Node} = peer:start_link(#{name => peer:random_name(dyntrace_ct)}),
    try
        Remote = erpc:call(Node, erlang, spawn, [timer, sleep, [infinity]]),
        A = actor(),
        trace(A, [send]),
        ok = run(A, fun() -> Remote ! hello, ok end),
        ok = dyntrace:announce_nodes(),
        lttng_session:stop(S),
        Events = lttng_session:read(S),
        lttng_session:destroy(S),
        %% Node names as the VM's printer writes atoms (quoted: they hold `@').
        [Self, Other] = [dyntrace:format_term(N, 1024) || N <- [node(), Node]],
        Rows = [{T, C, P} || #{name := node_name, fields := #{<<"node">> := N, <<"channel">> := C,
                                                            <<"peer">> := P, <<"type">> := T}}
                                 <- Events, N =:= Self],
        ct:log("node_name rows: ~p", [Rows]),
        [To] = [maps:get(<<"to">>, F) || #{name := message_send, fields := F} <- Events,
                                         maps:get(<<"message">>, F) =:= <<"hello">>],
        {match, [Channel]} = re:run(To, "^<([0-9]+)\\.", [{capture, all_but_first, list}]),
        ?assert(lists:member({<<"enable">>, 0, Self}, Rows)),
        ?assert(lists:member({<<"nodeup">>, list_to_integer(Channel), Other}, Rows)),
        ?assertEqual([{<<"request">>, 0, Self},
                      {<<"request">>, list_to_integer(Channel), Other}],
                     [R || {<<"request">>, _, _} = R <- Rows])
    after
        peer:stop(Peer)
    end.

%% Runs `Fun' in this node made distributed for it, or skips the case.
distributed(Fun) ->
    case dyntrace_peers:alive(list_to_atom("dyntrace_ct_" ++ os:getpid())) of
        ok ->
            try
                Fun()
            after
                net_kernel:stop()
            end;
        {error, Why} ->
            {skip, io_lib:format("no distribution: ~p", [Why])}
    end.

%% message_receive: the receiver and the message.
t_receive(_Config) ->
    S = start_session(t_receive, [message_receive]),
    A = actor(),
    trace(A, ['receive']),
    A ! {acc, [1, 2, 3]},
    {acc, [1, 2, 3]} = run(A, fun() -> receive {acc, _} = M -> M end end),
    Events = [fields(E) || E <- lttng_session:select(message_receive, read(S, [A]))],
    ?assertEqual(1, count(#{<<"to">> => text(A), <<"message">> => <<"{acc,[1,2,3]}">>},
                          Events)),
    ?assert(lists:all(fun(#{<<"to">> := To}) -> To =:= text(A) end, Events)).

%% The four GC events, with their sizes as integers.
t_garbage_collection(_Config) ->
    GcEvents = [gc_minor_start, gc_minor_end, gc_major_start, gc_major_end],
    S = start_session(t_garbage_collection, GcEvents),
    A = actor(),
    trace(A, [garbage_collection]),
    2000 = run(A, fun() -> dyntrace_test_mod:grow_and_collect(2000) end),
    Events = read(S, [A]),
    lists:foreach(
      fun(Name) ->
              Es = [fields(E) || E <- lttng_session:select(Name, Events)],
              ?assertNotEqual([], Es, Name),
              Size = case Name of
                         gc_minor_start -> <<"need">>;
                         gc_major_start -> <<"need">>;
                         _ -> <<"reclaimed">>
                     end,
              lists:foreach(
                fun(F) ->
                        ?assertEqual(lists:sort([<<"pid">>, Size, <<"heap">>, <<"old_heap">>]),
                                     lists:sort(maps:keys(F))),
                        ?assertEqual(text(A), maps:get(<<"pid">>, F)),
                        ?assert(is_integer(maps:get(Size, F))),
                        ?assert(maps:get(<<"heap">>, F) > 0),
                        ?assert(is_integer(maps:get(<<"old_heap">>, F)))
                end, Es)
      end, GcEvents),
    %% Minor collections reclaim the garbage of the loop.
    ?assert(lists:any(fun(E) -> lttng_session:field(<<"reclaimed">>, E) > 0 end,
                      lttng_session:select(gc_minor_end, Events))).

%% GC sizes are read by key, whatever the order of the info list.
t_garbage_collection_info_order(_Config) ->
    S = start_session(t_garbage_collection_info_order, [gc_minor_start, gc_major_end]),
    Me = self(),
    Info = [{heap_block_size, 610}, {mbuf_size, 1}, {recent_size, 2},
            {old_heap_block_size, 987}, {bin_vheap_size, 3}, {wordsize, 42}],
    ok = dyntrace:trace_garbage_collection(gc_minor_start, [], Me, Info, #{}),
    ok = dyntrace:trace_garbage_collection(gc_major_end, [], Me, lists:reverse(Info), #{}),
    Events = read(S, [Me]),
    ?assertEqual([{gc_minor_start, #{<<"pid">> => text(Me), <<"need">> => 42,
                                     <<"heap">> => 610, <<"old_heap">> => 987}},
                  {gc_major_end, #{<<"pid">> => text(Me), <<"reclaimed">> => 42,
                                   <<"heap">> => 610, <<"old_heap">> => 987}}],
                 [{N, F} || #{name := N, fields := F} <- Events]).

%% An event that no session enables is answered `discard' and not written.
t_disabled_event(_Config) ->
    S = start_session(t_disabled_event, [message_send]),
    ?assertEqual(trace, dyntrace:enabled_send(send, [], self())),
    ok = wait_discard(fun() -> dyntrace:enabled_receive('receive', [], self()) end,
                      message_receive),
    A = actor(),
    trace(A, [send, 'receive']),
    A ! {acc, [1]},
    {acc, [1]} = run(A, fun() -> receive {acc, _} = M -> self() ! M end end),
    Events = read(S, [A]),
    ?assertNotEqual([], lttng_session:select(message_send, Events)),
    ?assertEqual([], lttng_session:select(message_receive, Events)).

%% The documented order: enable-event, erlang:trace/3, then start. The
%% tracer stays attached while nothing is enabled; stop and disable-event
%% switch the events off again.
t_documented_order(_Config) ->
    S = lttng_session:create(t_documented_order, [message_send]),
    A = actor(),
    trace(A, [send]),
    %% Events while no session is started must not detach the tracer.
    ok = run(A, fun() -> [self() ! {before, N} || N <- lists:seq(1, 10)], ok end),
    ?assertEqual(trace, dyntrace:enabled(trace_status, [], A)),
    ?assertEqual({tracer, {dyntrace, []}}, erlang:trace_info(A, tracer)),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled([message_send]),
    ok = run(A, fun() -> self() ! {after_start, 1}, ok end),
    lttng_session:cmd_ok("lttng disable-event -u -s " ++ session_name(S)
                         ++ " org_erlang_dyntrace:message_send"),
    ok = wait_discard(fun() -> dyntrace:enabled_send(send, [], A) end, message_send),
    ok = run(A, fun() -> self() ! {after_disable, 1}, ok end),
    lttng_session:enable(S, [message_send]),
    ok = lttng_session:wait_enabled([message_send]),
    ok = run(A, fun() -> self() ! {after_enable, 1}, ok end),
    ok = lttng_session:stop(S),
    ok = wait_discard(fun() -> dyntrace:enabled_send(send, [], A) end, message_send),
    ?assertEqual({tracer, {dyntrace, []}}, erlang:trace_info(A, tracer)),
    Messages = [lttng_session:field(<<"message">>, E)
                || E <- lttng_session:select(message_send, read_stopped(S, [A]))],
    ?assertEqual([<<"{after_start,1}">>, <<"{after_enable,1}">>],
                 [M || <<"{after_", _/binary>> = M <- Messages]),
    ?assertEqual([], [M || <<"{before,", _/binary>> = M <- Messages]).

%% max_term_bytes: a cut message, a rejected option, an invalid state.
t_options(_Config) ->
    ?assertError({badarg, {max_term_bytes, 10}}, dyntrace:tracer(#{max_term_bytes => 10})),
    ?assertError({badarg, {max_term_bytes, 70000}},
                 dyntrace:tracer(#{max_term_bytes => 70000})),
    ?assertEqual({tracer, dyntrace, #{max_term_bytes => 64}},
                 dyntrace:tracer(#{max_term_bytes => 64})),
    S = start_session(t_options, [message_send]),
    Short = actor(),
    Bad = actor(),
    erlang:trace(Short, true, [send, dyntrace:tracer(#{max_term_bytes => 64})]),
    %% Straight into erlang:trace/3, past the validation.
    erlang:trace(Bad, true, [send, {tracer, dyntrace, #{max_term_bytes => 10}}]),
    Long = {long, lists:seq(1, 400)},
    LongText = iolist_to_binary(io_lib:format("~w", [Long])),
    ?assert(byte_size(LongText) > 1024),
    Medium = {medium, lists:seq(1, 100)},
    MediumText = iolist_to_binary(io_lib:format("~w", [Medium])),
    ?assert(byte_size(MediumText) > 64 andalso byte_size(MediumText) < 1024),
    #{bad_tracer_state := BadBefore} = dyntrace:stats(),
    ok = run(Short, fun() -> self() ! Medium, ok end),
    ok = run(Bad, fun() -> self() ! Medium, self() ! Long, ok end),
    #{bad_tracer_state := BadAfter} = dyntrace:stats(),
    Events = read(S, [Short, Bad]),
    Message = fun(From) ->
                      [lttng_session:field(<<"message">>, E)
                       || E <- lttng_session:select(message_send, Events),
                          lttng_session:field(<<"from">>, E) =:= text(From),
                          lttng_session:field(<<"to">>, E) =:= text(From)]
              end,
    [Cut] = Message(Short),
    ?assert(byte_size(Cut) =< 64),
    ?assertMatch(<<"{medium,[1,2,3,", _/binary>>, Cut),
    ?assertEqual(<<"...">>, binary:part(Cut, byte_size(Cut), -3)),
    ?assertEqual(dyntrace:format_term(Medium, 64), Cut),
    %% A cut text is the start of the full one.
    CutPrefix = binary:part(Cut, 0, byte_size(Cut) - 3),
    ?assertEqual(CutPrefix, binary:part(MediumText, 0, byte_size(CutPrefix))),
    %% The invalid state means the default limit, 1024 bytes.
    [BadMedium, BadLong] = Message(Bad),
    ?assertEqual(dyntrace:format_term(Medium, 1024), BadMedium),
    ?assertEqual(MediumText, BadMedium),
    ?assert(byte_size(BadMedium) > 64),
    ?assertMatch(<<"{medium,[1,2,3,", _/binary>>, BadMedium),
    ?assertEqual(dyntrace:format_term(Long, 1024), BadLong),
    BadLongPrefix = binary:part(BadLong, 0, byte_size(BadLong) - 3),
    ?assertEqual(BadLongPrefix, binary:part(LongText, 0, byte_size(BadLongPrefix))),
    ?assert(byte_size(BadLong) =< 1024 andalso byte_size(BadLong) > 64),
    ?assertEqual(<<"...">>, binary:part(BadLong, byte_size(BadLong), -3)),
    %% Every event written with the defaults for that reason is counted:
    %% its two sends to itself and its reply to this process.
    ?assertEqual(3, BadAfter - BadBefore).

%% The byte limit cuts terms (reasons, names), never identifiers (code
%% locations, pids).
t_options_identifiers(_Config) ->
    S = start_session(t_options_identifiers, [function_call, process_register,
                                              process_exit]),
    Long = a_function_whose_code_location_is_longer_than_the_smallest_byte_limit,
    1 = erlang:trace_pattern({dyntrace_test_mod, Long, 0}, true, [local]),
    A = actor(),
    erlang:trace(A, true, [call, procs, dyntrace:tracer(#{max_term_bytes => 64})]),
    LongName = list_to_atom(lists:duplicate(100, $n)),
    ok = run(A, fun() ->
                        ok = dyntrace_test_mod:Long(),
                        true = register(LongName, self()),
                        ok
                end),
    dyntrace_test_mod:stop(A, {long_reason, lists:seq(1, 100)}),
    Events = read(S, [A]),
    Entry = iolist_to_binary(["dyntrace_test_mod:", atom_to_list(Long), "/0"]),
    ?assert(byte_size(Entry) > 64),
    ?assertEqual([call_fields(A, Entry)],
                 [fields(E) || E <- lttng_session:select(function_call, Events)]),
    %% Registered, then unregistered by the exit.
    [#{<<"name">> := Name, <<"type">> := <<"register">>},
     #{<<"name">> := Name, <<"type">> := <<"unregister">>}] =
        [fields(E) || E <- lttng_session:select(process_register, Events)],
    [#{<<"reason">> := Reason}] = [fields(E) || E <- lttng_session:select(process_exit, Events)],
    lists:foreach(fun({Text, Prefix}) ->
                          ?assert(byte_size(Text) =< 64, Text),
                          ?assertEqual(<<"...">>, binary:part(Text, byte_size(Text), -3)),
                          ?assertEqual(Prefix, binary:part(Text, 0, byte_size(Prefix)))
                  end,
                  [{Name, <<"nnnnnnnnnn">>}, {Reason, <<"{long_reason,[1,2,3,">>}]).

%% Junk handed to the callbacks by hand: `ok', `trace', `discard' or
%% badarg, and the node keeps tracing.
t_junk_callbacks(_Config) ->
    S = start_session(t_junk_callbacks, all_events()),
    Me = self(),
    Port = hd(erlang:ports()),
    %% {Callback, Args, the answer the README's "What bad input gets" gives}
    Junk = [{enabled, [123, [], Me], discard},
            {enabled, [trace_status, junk, Port], trace},
            %% The enabled check reads neither the state nor the tracee.
            {enabled_send, [send, #{max_term_bytes => x}, make_ref()], trace},
            {enabled_procs, [<<"spawn">>, [], Me], discard},
            {trace, [send, [], Me, msg, #{}], badarg},
            {trace, [{send}, [], Me, msg, #{extra => Me}], ok},
            {trace_send, [send, [], Me, msg, not_a_map], badarg},
            {trace_send, [send, [], not_a_pid, msg, #{extra => Me}], badarg},
            %% A receiver that is no pid is written as a term (a name).
            {trace_send, [send, [], Me, msg, #{extra => make_ref()}], ok},
            {trace_procs, [spawn, [], Me, Me, #{extra => {m, f, not_a_list}}], ok},
            {trace_procs, [spawn, [], Me, not_a_pid, #{extra => {m, f, []}}], badarg},
            {trace_procs, [link, [], Me, 42, #{}], badarg},
            {trace_procs, [exit, [], Port, normal, #{}], badarg},
            {trace_ports, [open, [], Port, Me, #{}], badarg},
            {trace_ports, [closed, [], Me, normal, #{}], badarg},
            {trace_running_procs, [in, [], Me, {m, f, -1}, #{}], ok},
            {trace_running_procs, [out, [], Me, {"m", f, 1}, #{}], ok},
            {trace_running_ports, [in, [], Port, {not_an_atom}, #{}], ok},
            {trace_call, [call, [], Me, {m, f, lists:seq(1, 1000)}, #{}], ok},
            {trace_call, [call, [], Me, {m, f, [a | b]}, #{}], ok},
            {trace_call, [exception_from, [], Me, {m, f, 1}, #{extra => {1, 2}}], badarg},
            {trace_call, [exception_from, [], Me, {m, f, 1}, #{extra => nope}], badarg},
            {trace_receive, ['receive', [], make_ref(), msg, #{}], badarg},
            {trace_garbage_collection, [gc_minor_start, [], Me, not_a_list, #{}], badarg},
            {trace_garbage_collection, [gc_minor_start, [], Me, [a, b | c], #{}], badarg},
            {trace_garbage_collection, [gc_major_end, [], Me,
                                        [{heap_block_size, -1}, {wordsize, 1 bsl 70}], #{}],
             ok}],
    Before = dyntrace:stats(),
    Results = [{F, Args, junk_result(F, Args)} || {F, Args, _} <- Junk],
    After = dyntrace:stats(),
    ct:log("~p", [Results]),
    ?assertEqual([{F, Args, Expected} || {F, Args, Expected} <- Junk], Results),
    %% Each rejected call is counted, and only those.
    Rejected = length([badarg || {_, _, badarg} <- Junk]),
    ?assertEqual(Before#{bad_arguments := maps:get(bad_arguments, Before) + Rejected}, After),
    %% The node still traces: a real event appears.
    A = actor(),
    trace(A, [send]),
    ok = run(A, fun() -> self() ! still_tracing, ok end),
    lttng_session:stop(S),
    %% What junk did write still says what it claims: a process field
    %% holds a pid, a port field a port.
    [?assertEqual(ok, kinds_ok(E), E) || E <- lttng_session:read(S)],
    Sends = [fields(E) || E <- lttng_session:select(message_send, read_stopped(S, [A]))],
    ?assertEqual(1, count(#{<<"from">> => text(A), <<"to">> => text(A),
                            <<"message">> => <<"still_tracing">>}, Sends)).

%% A directory named like the application (`dyntrace-0.0.1') earlier on the
%% code path, without the libraries: the module still loads its NIF from
%% the `priv/' beside the `ebin/' it was loaded from.
t_load_beside_ebin(Config) ->
    Decoy = filename:join(?config(priv_dir, Config), "dyntrace-0.0.1"),
    ok = filelib:ensure_path(filename:join(Decoy, "ebin")),
    ok = filelib:ensure_path(filename:join(Decoy, "priv")),
    Ebin = filename:dirname(code:which(dyntrace)),
    %% The last -pa comes first on the path.
    Cmd = io_lib:format("erl -noshell -pa '~ts' -pa '~ts' -eval '"
                        "io:format(\"~~p ~~p~~n\", [code:priv_dir(dyntrace), "
                        "code:ensure_loaded(dyntrace)]), halt().'",
                        [Ebin, filename:join(Decoy, "ebin")]),
    Expected = io_lib:format("~p ~p~n", [filename:join(Decoy, "priv"), {module, dyntrace}]),
    ?assertEqual(lists:flatten(Expected), os:cmd(lists:flatten(Cmd))).

%% l(dyntrace) twice while it is the active tracer: tracing goes on.
t_reload(_Config) ->
    S = start_session(t_reload, [message_send]),
    A = actor(),
    trace(A, [send]),
    ok = run(A, fun() -> self() ! before_reload, ok end),
    {module, dyntrace} = c:l(dyntrace),
    ok = run(A, fun() -> self() ! after_first_reload, ok end),
    {module, dyntrace} = c:l(dyntrace),
    ok = run(A, fun() -> self() ! after_second_reload, ok end),
    ?assertEqual({tracer, {dyntrace, []}}, erlang:trace_info(A, tracer)),
    ?assert(lists:member(message_send, dyntrace:enabled_events())),
    Messages = [lttng_session:field(<<"message">>, E)
                || E <- lttng_session:select(message_send, read(S, [A])),
                   lttng_session:field(<<"to">>, E) =:= text(A)],
    ?assertEqual([<<"before_reload">>, <<"after_first_reload">>,
                  <<"after_second_reload">>], Messages).

%% Everything at once on one actor and its port: all 18 events of OTP's
%% appear, each with identifiers of the right kind.
t_all(_Config) ->
    S = start_session(t_all, otp_events()),
    A = actor(),
    1 = erlang:trace_pattern({dyntrace_test_mod, fail, 1},
                             [{'_', [], [{exception_trace}]}], [local]),
    #{bad_arguments := BadBefore} = dyntrace:stats(),
    trace(A, [all]),
    %% `all' includes `silent', which would hide the call events.
    1 = erlang:trace(A, false, [silent]),
    erlang:trace(new_ports, true, [all, {tracer, dyntrace, []}]),
    {Port, Child} =
        run(A, fun() ->
                       P = open_port({spawn, "cat"}, [binary]),
                       true = port_command(P, <<"x">>),
                       receive {P, {data, _}} -> ok end,
                       true = port_close(P),
                       C = spawn_link(dyntrace_test_mod, wait, [normal]),
                       true = register(?WORKER_NAME, C),
                       C ! go,
                       throw = catch_class(throw),
                       _ = dyntrace_test_mod:grow_and_collect(500),
                       {P, C}
               end),
    dyntrace_test_mod:stop(A),
    %% No call the runtime made was rejected.
    ?assertMatch(#{bad_arguments := BadBefore}, dyntrace:stats()),
    Events = read(S, [A, Port, Child]),
    ?assertEqual(lists:sort(otp_events()),
                 lists:usort([N || #{name := N} <- Events])),
    [?assertEqual(ok, kinds_ok(E), E) || E <- Events].

%%%===================================================================
%%% Helpers

%% The `type' of scheduling events: only the five kinds, `in' and `out'
%% among them. Returns the kinds seen.
assert_scheduling_types(Events) ->
    Types = lists:usort([T || #{<<"type">> := T} <- Events]),
    ?assertEqual([], Types -- [<<"in">>, <<"out">>, <<"in_exiting">>,
                               <<"out_exiting">>, <<"out_exited">>]),
    ?assert(lists:member(<<"in">>, Types)),
    ?assert(lists:member(<<"out">>, Types)),
    Types.
%%%===================================================================

%% The fields of each event that must hold a pid, and those that must
%% hold a port (the `pid' field of port_scheduled holds a port, as OTP's
%% backend writes it).
kinds_ok(#{name := Name, fields := Fields}) ->
    {Pids, Ports} = identifier_fields(Name),
    Bad = [K || K <- Pids, not is_pid_text(maps:get(K, Fields))]
        ++ [K || K <- Ports, not is_port_text(maps:get(K, Fields))],
    case Bad of
        [] -> ok;
        _ -> {wrong_kind, Bad}
    end.

identifier_fields(process_spawn) -> {[<<"pid">>, <<"parent">>], []};
identifier_fields(port_open) -> {[<<"pid">>], [<<"port">>]};
identifier_fields(port_exit) -> {[], [<<"port">>]};
%% Links join processes and ports either way round.
identifier_fields(process_link) -> {[], []};
identifier_fields(port_link) -> {[], []};
identifier_fields(port_scheduled) -> {[], [<<"pid">>]};
identifier_fields(message_send) -> {[], []};
identifier_fields(message_receive) -> {[], []};
%% Node names, written when the event becomes enabled (so in any session
%% that enables every event): node names, no identifiers.
identifier_fields(node_name) -> {[], []};
identifier_fields(_) -> {[<<"pid">>], []}.

is_pid_text(Text) ->
    re:run(Text, "^<[0-9]+\\.[0-9]+\\.[0-9]+>$") =/= nomatch.

is_port_text(Text) ->
    re:run(Text, "^#Port<[0-9]+\\.[0-9]+>$") =/= nomatch.

all_events() ->
    [Name || #{name := Name} <- dyntrace:events()].

%% The events trace tags emit: OTP's 18.
otp_events() ->
    [Name || #{name := Name, tags := [_ | _]} <- dyntrace:events()].

trace(Tracee, Flags) ->
    erlang:trace(Tracee, true, [{tracer, dyntrace, []} | Flags]).

untrace_all() ->
    _ = erlang:trace(all, false, [all]),
    _ = erlang:trace_pattern({'_', '_', '_'}, false, [local]),
    _ = erlang:trace_pattern({'_', '_', '_'}, false, [global]),
    _ = erlang:trace_pattern(send, true, []),
    _ = erlang:trace_pattern('receive', true, []),
    try unregister(?SINK) catch error:badarg -> ok end,
    ok.

%% A session of its own with `Events' enabled and started, once this
%% node's enabled checks see them.
start_session(Case, Events) ->
    S = lttng_session:create(Case, Events),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled(Events),
    S.

session_name(#{name := Name}) ->
    Name.

%% The session's events that concern the given pids and ports: tracees
%% of other processes of this node are left out.
read(S, Ids) ->
    lttng_session:stop(S),
    read_stopped(S, Ids).

read_stopped(S, Ids) ->
    Texts = [text(Id) || Id <- Ids],
    Events = lttng_session:read(S),
    lttng_session:destroy(S),
    Mine = [E || E <- Events, concerns(E, Texts)],
    ct:log("~b events, ~b of ours:~n~p", [length(Events), length(Mine), Mine]),
    Mine.

concerns(#{fields := Fields}, Texts) ->
    lists:any(fun(K) -> lists:member(maps:get(K, Fields, none), Texts) end,
              [<<"pid">>, <<"from">>, <<"to">>, <<"port">>]).

fields(#{fields := Fields}) ->
    Fields.

count(Item, List) ->
    length([X || X <- List, X =:= Item]).

call_fields(Pid, Entry) ->
    #{<<"pid">> => text(Pid), <<"entry">> => Entry, <<"depth">> => 0}.

text(Pid) when is_pid(Pid) ->
    list_to_binary(pid_to_list(Pid));
text(Port) when is_port(Port) ->
    list_to_binary(erlang:port_to_list(Port)).

%% An atom as the VM's printer writes it, quoted where it must be.
atom_text(Name) when is_list(Name) ->
    atom_text(list_to_atom(Name));
atom_text(Atom) ->
    iolist_to_binary(io_lib:format("~w", [Atom])).

assert_entry(<<"undefined">>) ->
    ok;
assert_entry(Entry) ->
    ?assertMatch({match, _}, re:run(Entry, "^('[^']+'|[a-z][a-zA-Z0-9_@]*):"
                                    "('[^']+'|[a-z][a-zA-Z0-9_@]*)/[0-9]+$"), Entry).

catch_class(Class) ->
    try dyntrace_test_mod:fail(Class)
    catch Class:{failed, Class} -> Class
    end.

link_unlink_on_request() ->
    receive
        {link_unlink, Pid, From} ->
            true = link(Pid),
            true = unlink(Pid),
            From ! {self(), done},
            receive stop -> ok end
    end.

sink() ->
    receive
        stop -> ok;
        _ -> sink()
    end.

wait_port_gone(Port) ->
    lttng_session:wait_until(fun() -> erlang:port_info(Port) =:= undefined end, 100).

%% Waits until `Check' answers `discard'. Another user's started session
%% that enables `Event' keeps it `trace' on this node: that is LTTng's
%% state, not ours, and the case says so instead of failing.
wait_discard(Check, Event) ->
    try
        lttng_session:wait_until(fun() -> Check() =:= discard end, 50)
    catch
        error:timeout ->
            case other_sessions_enable(Event) of
                [] ->
                    error({still_enabled, Event});
                Others ->
                    ct:comment(io_lib:format("~p also enabled by ~p", [Event, Others])),
                    ok
            end
    end.

%% Active sessions (not made by this node) that enable `Event'.
other_sessions_enable(Event) ->
    {0, Out} = lttng_session:cmd("lttng list"),
    Active = [N || [N] <- match_all(Out, "[0-9]+\\) (\\S+) .*\\[active\\]")],
    Mine = "_" ++ os:getpid() ++ "_",
    [N || N <- Active, string:find(N, Mine) =:= nomatch,
          session_enables(N, Event)].

session_enables(Name, Event) ->
    {_, Out} = lttng_session:cmd("lttng list " ++ Name),
    Pattern = "org_erlang_dyntrace:(" ++ atom_to_list(Event) ++ "|\\*) .*\\[enabled",
    match_all(Out, Pattern) =/= [].

match_all(Text, Pattern) ->
    case re:run(Text, Pattern, [global, {capture, all_but_first, list}]) of
        {match, Ms} -> Ms;
        nomatch -> []
    end.

%% The org_erlang_dyntrace events `lttng list -u' shows for process `OsPid'.
listed_events(OsPid) ->
    {0, Out} = lttng_session:cmd("lttng list -u"),
    Sections = string:split(Out, "PID: ", all),
    [Mine] = [S || S <- Sections, string:prefix(S, OsPid ++ " ") =/= nomatch],
    [list_to_atom(N) || [N] <- match_all(Mine, "org_erlang_dyntrace:([a-z0-9_]+) ")].

destroy_sessions_of(Case) ->
    {_, Out} = lttng_session:cmd("lttng list"),
    Prefix = atom_to_list(Case) ++ "_" ++ os:getpid() ++ "_",
    Base = os:getenv("DYNTRACE_TRACE_DIR", "/tmp/dyntrace-test-traces"),
    [lttng_session:destroy(#{name => N, dir => filename:join(Base, N)})
     || [N] <- match_all(Out, "[0-9]+\\) (\\S+) "),
        string:prefix(N, Prefix) =/= nomatch],
    ok.

junk_result(F, Args) ->
    try apply(dyntrace, F, Args)
    catch error:badarg -> badarg
    end.

