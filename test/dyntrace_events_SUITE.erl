%%% The sampled events' writers against a real LTTng session: each of
%%% `dyntrace:emit_process_name/2', `emit_stack_sample/4',
%%% `emit_memory_sample/1', `emit_allocator_sample/7',
%%% `emit_process_memory/6' and `emit_carrier/8' writes its event with
%%% every field exactly as given (pids and atoms as the 18 events write
%%% them, `{M, F, A}' as `M:F/A'), cuts a long stack at the byte limit with
%%% `...', raises `badarg' on arguments of the wrong type and writes nothing
%%% when its event is not enabled.
-module(dyntrace_events_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([t_process_name/1, t_stack_sample/1, t_stack_cut/1, t_memory_sample/1,
         t_allocator_sample/1, t_process_memory/1, t_carrier/1, t_bad_arguments/1,
         t_not_enabled/1]).

-define(EVENTS, [process_name, stack_sample, memory_sample, allocator_sample,
                 process_memory, carrier_create, carrier_destroy]).
-define(U64_MAX, 18446744073709551615).
-define(U32_MAX, 4294967295).

suite() ->
    [{timetrap, {minutes, 2}}].

all() ->
    [t_process_name, t_stack_sample, t_stack_cut, t_memory_sample, t_allocator_sample,
     t_process_memory, t_carrier, t_bad_arguments, t_not_enabled].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    Config.

end_per_suite(_Config) ->
    ok.

%%%===================================================================
%%% Cases
%%%===================================================================

%% A registered name as its atom's text (quoted as the VM quotes it); an
%% initial call as `M:F/A', from an arity or an argument list. The rows of
%% this case's two processes only: once `process_name' is enabled, the
%% node's announcer writes the registered processes' names too.
t_process_name(_Config) ->
    Other = spawn(fun() -> receive stop -> ok end end),
    Events = record(t_process_name,
                    fun() ->
                            ok = dyntrace:emit_process_name(self(), shop_audit),
                            ok = dyntrace:emit_process_name(Other, 'Shop Audit'),
                            ok = dyntrace:emit_process_name(Other, {shop_srv, init, 1}),
                            ok = dyntrace:emit_process_name(Other, {shop_srv, init, [a, b]})
                    end),
    Other ! stop,
    ?assertEqual([{text(self()), <<"shop_audit">>},
                  {text(Other), <<"'Shop Audit'">>},
                  {text(Other), <<"shop_srv:init/1">>},
                  {text(Other), <<"shop_srv:init/2">>}],
                 [{field("pid", E), field("name", E)}
                  || E <- lttng_session:select(process_name, Events),
                     lists:member(field("pid", E), [text(self()), text(Other)])]).

%% A live process's own `current_stacktrace' and status, and a stack of
%% known frames: arity or argument list, quoted atoms, the location not
%% written; the empty stack is "".
t_stack_sample(_Config) ->
    Waiter = spawn(fun() -> dyntrace_test_mod:wait(stop) end),
    ok = lttng_session:wait_until(
           fun() -> process_info(Waiter, status) =:= {status, waiting} end, 50),
    [{current_stacktrace, Live}, {status, waiting}] =
        process_info(Waiter, [current_stacktrace, status]),
    LiveText = iolist_to_binary(lists:join(";", [mfa_text(M, F, A) || {M, F, A, _} <- Live])),
    ?assertMatch(<<"dyntrace_test_mod:wait/1", _/binary>>, LiveText),
    Known = [{m1, f1, 2, [{file, "m1.erl"}, {line, 3}]},
             {'M 2', 'f-2', [x, y, z], []},
             {m3, f3, 0, []}],
    Events = record(t_stack_sample,
                    fun() ->
                            ok = dyntrace:emit_stack_sample(Waiter, waiting, Live, 1024),
                            ok = dyntrace:emit_stack_sample(self(), running, Known, 64),
                            ok = dyntrace:emit_stack_sample(self(), garbage_collecting, [], 64)
                    end),
    Waiter ! go,
    ?assertEqual([{text(Waiter), <<"waiting">>, LiveText},
                  {text(self()), <<"running">>, <<"m1:f1/2;'M 2':'f-2'/3;m3:f3/0">>},
                  {text(self()), <<"garbage_collecting">>, <<>>}],
                 [{field("pid", E), field("status", E), field("stack", E)}
                  || E <- lttng_session:select(stack_sample, Events)]).

%% A stack whose text is longer than the limit is cut to the limit and
%% ends in `...'; one exactly the limit long is whole. Frames past the cut
%% are not read: a bad one there is no error, and a stack of a million
%% frames costs what is written.
t_stack_cut(_Config) ->
    Frame = {a_module, a_function, 1, []},
    %% "a_module:a_function/1" is 21 bytes, 22 with its separator.
    Three = [Frame, Frame, Frame],
    ThreeText = <<"a_module:a_function/1;a_module:a_function/1;a_module:a_function/1">>,
    65 = byte_size(ThreeText),
    Long = lists:duplicate(1000000, Frame) ++ [not_a_frame | improper],
    Events = record(t_stack_cut,
                    fun() ->
                            ok = dyntrace:emit_stack_sample(self(), running, Three, 65),
                            ok = dyntrace:emit_stack_sample(self(), running, Three, 64),
                            ok = dyntrace:emit_stack_sample(self(), running, Long, 100)
                    end),
    LongText = iolist_to_binary(lists:join(";", lists:duplicate(5, "a_module:a_function/1"))),
    ?assertEqual([ThreeText,
                  <<(binary:part(ThreeText, 0, 61))/binary, "...">>,
                  <<(binary:part(LongText, 0, 97))/binary, "...">>],
                 [field("stack", E) || E <- lttng_session:select(stack_sample, Events)]).

%% erlang:memory()'s answer as it is, and a list with categories missing
%% (written 0), an unknown key (skipped) and the largest value.
t_memory_sample(_Config) ->
    Memory = erlang:memory(),
    Keys = [total, processes, processes_used, system, atom, atom_used, binary, code, ets],
    Events = record(t_memory_sample,
                    fun() ->
                            ok = dyntrace:emit_memory_sample(Memory),
                            ok = dyntrace:emit_memory_sample([{ets, ?U64_MAX}, {unknown, 5},
                                                              {total, 7}])
                    end),
    ?assertEqual([[proplists:get_value(K, Memory) || K <- Keys],
                  [7, 0, 0, 0, 0, 0, 0, 0, ?U64_MAX]],
                 [[field(atom_to_list(K), E) || K <- Keys]
                  || E <- lttng_session:select(memory_sample, Events)]).

t_allocator_sample(_Config) ->
    Events = record(t_allocator_sample,
                    fun() ->
                            ok = dyntrace:emit_allocator_sample(binary_alloc, 3, 4, 5, 6, 7, 8),
                            ok = dyntrace:emit_allocator_sample(eheap_alloc, ?U32_MAX, 0, ?U64_MAX,
                                                                0, 0, 1)
                    end),
    ?assertEqual([[<<"binary_alloc">>, 3, 4, 5, 6, 7, 8],
                  [<<"eheap_alloc">>, ?U32_MAX, 0, ?U64_MAX, 0, 0, 1]],
                 [[field(F, E) || F <- ["type", "instance", "mbc_carriers", "mbcs_size",
                                        "sbc_carriers", "sbcs_size", "blocks_size"]]
                  || E <- lttng_session:select(allocator_sample, Events)]).

%% A name as process_name writes it; `[]' is "".
t_process_memory(_Config) ->
    Events = record(t_process_memory,
                    fun() ->
                            ok = dyntrace:emit_process_memory(self(), shop_audit, 1, 2, 3, 4),
                            ok = dyntrace:emit_process_memory(self(), {shop_srv, init, 1},
                                                              ?U64_MAX, 0, 0, 0),
                            ok = dyntrace:emit_process_memory(self(), [], 10, 20, 30, 40)
                    end),
    Pid = text(self()),
    ?assertEqual([[Pid, <<"shop_audit">>, 1, 2, 3, 4],
                  [Pid, <<"shop_srv:init/1">>, ?U64_MAX, 0, 0, 0],
                  [Pid, <<>>, 10, 20, 30, 40]],
                 [[field(F, E) || F <- ["pid", "name", "memory", "total_heap", "bin_vheap",
                                        "message_queue_len"]]
                  || E <- lttng_session:select(process_memory, Events)]).

t_carrier(_Config) ->
    Events = record(t_carrier,
                    fun() ->
                            ok = dyntrace:emit_carrier(create, ets_alloc, 1, 262144, 2, 524288,
                                                       0, 0),
                            ok = dyntrace:emit_carrier(destroy, ets_alloc, 1, 262144, 1, 262144,
                                                       3, ?U64_MAX)
                    end),
    Fields = ["type", "instance", "size", "mbc_carriers", "mbcs_size", "sbc_carriers",
              "sbcs_size"],
    ?assertEqual([{carrier_create, [<<"ets_alloc">>, 1, 262144, 2, 524288, 0, 0]},
                  {carrier_destroy, [<<"ets_alloc">>, 1, 262144, 1, 262144, 3, ?U64_MAX]}],
                 [{Name, [field(F, E) || F <- Fields]}
                  || #{name := Name} = E <- Events,
                     lists:member(Name, [carrier_create, carrier_destroy])]).

%% Arguments of the wrong type raise badarg whether the event is enabled
%% or not, and nothing is written for them; a stack's frames are read only
%% where the event is enabled.
t_bad_arguments(_Config) ->
    Always = [fun() -> dyntrace:emit_process_name(not_a_pid, name) end,
              fun() -> dyntrace:emit_process_name(self(), "name") end,
              fun() -> dyntrace:emit_process_name(self(), []) end,
              fun() -> dyntrace:emit_process_name(self(), {m, f}) end,
              fun() -> dyntrace:emit_process_name(self(), {m, "f", 1}) end,
              fun() -> dyntrace:emit_process_name(self(), {m, f, -1}) end,
              fun() -> dyntrace:emit_stack_sample(self(), "running", [], 64) end,
              fun() -> dyntrace:emit_stack_sample(self(), running, [], 63) end,
              fun() -> dyntrace:emit_stack_sample(self(), running, [], 65537) end,
              fun() -> dyntrace:emit_stack_sample(self(), running, not_a_list, 64) end,
              fun() -> dyntrace:emit_stack_sample(<<"pid">>, running, [], 64) end,
              fun() -> dyntrace:emit_memory_sample([{total, -1}]) end,
              fun() -> dyntrace:emit_memory_sample([{total, ?U64_MAX + 1}]) end,
              fun() -> dyntrace:emit_memory_sample([{total, 1} | improper]) end,
              fun() -> dyntrace:emit_memory_sample([{"total", 1}]) end,
              fun() -> dyntrace:emit_memory_sample(lists:duplicate(100, {total, 1})) end,
              fun() -> dyntrace:emit_memory_sample(#{total => 1}) end,
              fun() -> dyntrace:emit_allocator_sample("ets_alloc", 0, 1, 2, 3, 4, 5) end,
              fun() -> dyntrace:emit_allocator_sample(ets_alloc, ?U32_MAX + 1, 1, 2, 3, 4, 5) end,
              fun() -> dyntrace:emit_allocator_sample(ets_alloc, 0, 1, 2, 3, 4, 5.0) end,
              fun() -> dyntrace:emit_process_memory(self(), "name", 1, 2, 3, 4) end,
              fun() -> dyntrace:emit_process_memory(self(), [], -1, 2, 3, 4) end,
              fun() -> dyntrace:emit_process_memory(make_ref(), [], 1, 2, 3, 4) end,
              fun() -> dyntrace:emit_carrier(created, ets_alloc, 0, 1, 2, 3, 4, 5) end,
              fun() -> dyntrace:emit_carrier(create, ets_alloc, -1, 1, 2, 3, 4, 5) end,
              fun() -> dyntrace:emit_carrier(destroy, 7, 0, 1, 2, 3, 4, 5) end],
    Frames = [fun() -> dyntrace:emit_stack_sample(self(), running, [{m, f, 1}], 64) end,
              fun() -> dyntrace:emit_stack_sample(self(), running, [{m, f, a, []}], 64) end,
              fun() -> dyntrace:emit_stack_sample(self(), running, [{"m", f, 1, []}], 64) end,
              fun() -> dyntrace:emit_stack_sample(self(), running, [{m, f, 1, []} | x], 64) end,
              fun() -> dyntrace:emit_stack_sample(self(), running,
                                                  [{m, f, lists:seq(1, 256), []}], 64) end],
    Raised = fun(Funs) -> lists:map(fun dyntrace_test_trace:raised/1, Funs) end,
    ?assertEqual([badarg || _ <- Always], Raised(Always)),
    ?assertEqual([{returned, ok} || _ <- Frames], Raised(Frames)),
    Events = record(t_bad_arguments,
                    fun() ->
                            ?assertEqual([badarg || _ <- Always ++ Frames], Raised(Always ++ Frames))
                    end),
    ?assertEqual([], Events).

%% With only `process_name' enabled, the other writers write nothing;
%% with no session, none does.
t_not_enabled(_Config) ->
    ?assertEqual([], [E || E <- dyntrace:enabled_events(), lists:member(E, ?EVENTS)]),
    write_each(),
    S = lttng_session:start_tracked(t_not_enabled, [process_name]),
    Events = try
                 write_each(),
                 lttng_session:stop_and_read(S)
             after
                 lttng_session:destroy(S)
             end,
    ?assertEqual([process_name], [Name || #{name := Name} <- Events]).

%%%===================================================================
%%% Helpers
%%%===================================================================

write_each() ->
    ok = dyntrace:emit_process_name(self(), me),
    ok = dyntrace:emit_stack_sample(self(), running, [{m, f, 1, []}], 64),
    ok = dyntrace:emit_memory_sample(erlang:memory()),
    ok = dyntrace:emit_allocator_sample(ets_alloc, 0, 1, 2, 3, 4, 5),
    ok = dyntrace:emit_process_memory(self(), me, 1, 2, 3, 4),
    ok = dyntrace:emit_carrier(create, ets_alloc, 0, 1, 2, 3, 4, 5),
    ok = dyntrace:emit_carrier(destroy, ets_alloc, 0, 1, 2, 3, 4, 5).

%% Runs `Fun' with the events of the suite recorded; their events, in order.
record(Case, Fun) ->
    lttng_session:record(Case, ?EVENTS, Fun).

field(Name, Event) ->
    lttng_session:field(Name, Event).

mfa_text(M, F, A) when is_list(A) ->
    mfa_text(M, F, length(A));
mfa_text(M, F, A) ->
    io_lib:format("~w:~w/~b", [M, F, A]).

text(Pid) ->
    list_to_binary(pid_to_list(Pid)).
