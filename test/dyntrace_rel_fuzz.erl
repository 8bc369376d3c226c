%%% @doc Test helper for the reliability suite: every exported dyntrace
%%% callback called with junk, in a node where all 18 events are enabled so
%%% that the emit path runs. Runs inside the node under test
%%% (`dyntrace_reliability_SUITE:hostile_input/1').
%%%
%%% A call may return `ok', `trace', `discard', a binary (`format_term/2',
%%% at most the limit asked), `{tracer, dyntrace, _}' (`tracer/1'), or raise
%%% `badarg' / `{badarg, _}'. Anything else is collected in `bad'.
-module(dyntrace_rel_fuzz).

-export([run/0, run/1, table/0]).

%% @doc `run(10000)'.
-spec run() -> map().
run() ->
    run(10000).

%% @doc Calls each callback `Calls' times with junk; then checks that a real
%% event is still written with the right fields. Returns `#{bad, outcomes,
%% table, real_event, seed, stats}'.
-spec run(pos_integer()) -> map().
run(Calls) ->
    {module, dyntrace} = c:l(dyntrace),
    ok = lttng_session:wait_registered(),
    %% Small buffers: the events are written (the emit path runs) and
    %% mostly dropped, so the trace stays small on disk.
    Events = [Name || #{name := Name} <- dyntrace:events()],
    S = lttng_session:create(fuzz, Events, #{subbuf_size => 8192, num_subbuf => 2}),
    ok = lttng_session:start(S),
    ok = dyntrace_rel_node:wait_enabled(Events),
    Seed = {erlang:unique_integer([positive]), erlang:phash2(os:timestamp()), 17},
    rand:seed(exsss, Seed),
    Pool = pool(),
    Results = [{F, fuzz(F, Calls, Pool)} || F <- callbacks()],
    Bad = lists:append([B || {_, #{bad := B}} <- Results]),
    Outcomes = maps:from_list([{F, maps:without([bad], R)} || {F, R} <- Results]),
    Table = table(),
    ok = lttng_session:stop(S),
    lttng_session:destroy(S),
    #{seed => Seed, bad => lists:sublist(Bad, 20), outcomes => Outcomes,
      table => Table, real_event => real_event(), stats => dyntrace:stats()}.

callbacks() ->
    [{enabled, 3}, {trace, 5}, {format_term, 2}, {format_term, 3}, {tracer, 1}]
        ++ lists:append([[{list_to_atom("enabled_" ++ atom_to_list(C)), 3},
                          {list_to_atom("trace_" ++ atom_to_list(C)), 5}]
                         || {C, _} <- classes()]).

%% Each trace class with the tags that become its events (dyntrace:events()),
%% read once per fuzzing process.
classes() ->
    case get(classes) of
        undefined ->
            Tags = [ClassTag || #{tags := Tags} <- dyntrace:events(), ClassTag <- Tags],
            Classes = [{Class, [T || {C, T} <- Tags, C =:= Class]}
                       || Class <- lists:usort([C || {C, _} <- Tags])],
            put(classes, Classes),
            Classes;
        Classes ->
            Classes
    end.

%% After the junk: a send traced for real gives one correct event.
real_event() ->
    S = lttng_session:create(after_fuzz, [message_send]),
    ok = lttng_session:start(S),
    ok = dyntrace_rel_node:wait_enabled([message_send]),
    Sink = spawn(fun() -> receive stop -> ok end end),
    Me = self(),
    P = spawn(fun() -> receive go -> Sink ! {after_fuzz, 42}, Me ! done end end),
    erlang:trace(P, true, [send, dyntrace:tracer()]),
    P ! go,
    receive done -> ok end,
    Sink ! stop,
    Events = lttng_session:stop_and_read(S),
    lttng_session:destroy(S),
    From = list_to_binary(pid_to_list(P)),
    To = list_to_binary(pid_to_list(Sink)),
    case [F || #{name := message_send, fields := F} <- Events,
               maps:get(<<"from">>, F) =:= From,
               maps:get(<<"message">>, F) =/= <<"done">>] of
        [#{<<"to">> := To} = Fields] -> {ok, Fields};
        Other -> {wrong, Other}
    end.

%%%===================================================================
%%% the fuzz loop
%%%===================================================================

fuzz({Name, Arity}, Calls, Pool) ->
    lists:foldl(fun(_, Acc) ->
                        Args = args(Name, Arity, Pool),
                        classify(Name, Args, call(Name, Args), Acc)
                end, #{bad => []}, lists:seq(1, Calls)).

call(Name, Args) ->
    try apply(dyntrace, Name, Args) of
        Value -> {returned, Value}
    catch
        Class:Reason -> {raised, Class, Reason}
    end.

classify(Name, Args, Result, Acc) ->
    Kind = case {kind(Name), Result} of
               {enabled, {returned, R}} when R =:= trace; R =:= discard -> R;
               {trace, {returned, ok}} -> ok;
               {format, {returned, B}} when is_binary(B) ->
                   case byte_size(B) =< format_limit(Args) of
                       true -> binary;
                       false -> too_long
                   end;
               {tracer, {returned, {tracer, dyntrace, _}}} -> tracer;
               {_, {raised, error, badarg}} -> badarg;
               {Checked, {raised, error, {badarg, _}}} when Checked =:= tracer; Checked =:= format ->
                   badarg_pair;
               _ -> bad
           end,
    Acc1 = maps:update_with(Kind, fun(C) -> C + 1 end, 1, Acc),
    case Kind of
        K when K =:= bad; K =:= too_long ->
            Acc1#{bad := [{Name, shorten(Args), shorten(Result)} | maps:get(bad, Acc)]};
        _ ->
            Acc1
    end.

%% The byte limit of format_term/2's or format_term/3's text.
format_limit([_Term, Max]) -> Max;
format_limit([_Term, _Kind, Options]) when is_map(Options) ->
    maps:get(max_term_bytes, Options, 1024);
format_limit([_Term, _Kind, _Options]) -> 1024.

kind(format_term) -> format;
kind(tracer) -> tracer;
kind(Name) ->
    case atom_to_list(Name) of
        "enabled" ++ _ -> enabled;
        "trace" ++ _ -> trace
    end.

shorten(Term) ->
    case erts_debug:flat_size(Term) > 200 of
        true -> {large_term, erts_debug:flat_size(Term)};
        false -> Term
    end.

%%%===================================================================
%%% arguments
%%%===================================================================

args(enabled, 3, P) -> [tag(any, P), state(P), tracee(P)];
args(trace, 5, P) -> [tag(any, P), state(P), tracee(P), trace_term(P), opts(P)];
args(format_term, 2, P) -> [junk(P), limit(P)];
args(format_term, 3, P) ->
    [junk(P), one([message, reason, name, driver, callback, junk(P)]), state(P)];
args(tracer, 1, P) -> [state(P)];
args(Name, 3, P) -> [tag(class_of(Name), P), state(P), tracee(P)];
args(Name, 5, P) -> [tag(class_of(Name), P), state(P), tracee(P), trace_term(P), opts(P)].

class_of(Name) ->
    [_, Class] = string:split(atom_to_list(Name), "_"),
    list_to_atom(Class).

%% Mostly the class's own tags (so that events are emitted), else any tag
%% of any class, trace_status, seq_trace, or junk.
tag(Class, P) ->
    Classes = classes(),
    All = lists:append([T || {_, T} <- Classes]),
    Own = case lists:keyfind(Class, 1, Classes) of
              {_, Tags} -> Tags;
              false -> All
          end,
    pick([{6, fun() -> one(Own) end},
          {2, fun() -> one(All) end},
          {1, fun() -> one([trace_status, seq_trace, spawned, return_to, foo, 'EXIT']) end},
          {1, fun() -> junk(P) end}]).

state(P) ->
    pick([{4, fun() -> [] end},
          {2, fun() -> #{max_term_bytes => 64 + rand:uniform(65536 - 64)} end},
          {2, fun() -> payload_state(P) end},
          {1, fun() -> #{} end},
          {3, fun() -> bad_state(P) end}]).

bad_state(P) ->
    one([#{max_term_bytes => one([0, -1, 63, 65537, 1 bsl 70, -(1 bsl 70), 1.0e3,
                                  "100", foo, junk(P)])},
         #{foo => junk(P)},
         #{max_term_bytes => 100, bar => 1},
         #{payload => junk(P)},
         #{payload => #{junk(P) => junk(P)}},
         #{redact => junk(P)},
         #{redact => [junk(P) | junk(P)]},
         #{payload => none, bar => 1},
         #{junk(P) => junk(P)},
         big_map(),
         [max_term_bytes],
         [{max_term_bytes, 100}],
         junk(P)]).

%% Valid payload options: a mode or modes per kind, keys from the junk.
payload_state(P) ->
    Modes = [full, shape, size, none],
    Payload = pick([{1, fun() -> one(Modes) end},
                    {1, fun() -> maps:from_list([{K, one(Modes)}
                                                 || K <- [message, reason, name], rand:uniform(2) =:= 1])
                        end}]),
    #{payload => Payload, redact => [junk(P) || _ <- lists:seq(1, rand:uniform(4) - 1)],
      max_term_bytes => 64 + rand:uniform(1000)}.

tracee(P) ->
    pick([{5, fun() -> self() end},
          {2, fun() -> one(element(1, P)) end},
          {1, fun() -> remote_pid() end},
          {2, fun() -> junk(P) end}]).

%% Right shapes for some class, wrong shapes, or junk.
trace_term(P) ->
    pick([{2, fun() -> {lists, reverse, one([1, [a, b], 256, -1, 1 bsl 40, [a | b], foo])} end},
          {1, fun() -> {lists, reverse} end},
          {1, fun() -> {junk(P), junk(P), junk(P)} end},
          {2, fun() -> gc_info(P) end},
          {2, fun() -> self() end},
          {4, fun() -> junk(P) end}]).

gc_info(P) ->
    one([[{wordsize, 10}, {heap_block_size, 233}, {old_heap_block_size, 0}],
         [{wordsize, -1}, {heap_block_size, 1 bsl 70}, {old_heap_block_size, foo}],
         [{wordsize, 10} | junk(P)],
         [junk(P), junk(P)],
         lists:duplicate(1000, {wordsize, 1}),
         []]).

opts(P) ->
    pick([{2, fun() -> #{} end},
          {4, fun() -> #{extra => one([self(), {lists, reverse, [a]}, junk(P),
                                       {error, badarg}, {throw, x}, {1, 2}])} end},
          {2, fun() -> #{extra => junk(P), match_spec_result => junk(P),
                         scheduler_id => junk(P), timestamp => junk(P)} end},
          {1, fun() -> [{extra, self()}] end},
          {1, fun() -> junk(P) end}]).

limit(P) ->
    pick([{6, fun() -> 64 + rand:uniform(65536 - 64) end},
          {1, fun() -> one([64, 65536]) end},
          {3, fun() -> one([63, 65537, 0, -1, 1 bsl 70, 1024.0, foo, junk(P)]) end}]).

%% Any term: drawn from the pool, or built now.
junk({Ports, Small, Huge}) ->
    case rand:uniform(2000) of
        1 -> one(Huge);
        _ ->
            pick([{6, fun() -> one(Small) end},
                  {2, fun() -> list_to_tuple([one(Small) || _ <- lists:seq(1, rand:uniform(4))]) end},
                  {2, fun() -> [one(Small) || _ <- lists:seq(1, rand:uniform(5))] end},
                  {1, fun() -> maps:from_list([{one(Small), one(Small)}
                                               || _ <- lists:seq(1, rand:uniform(40))]) end},
                  {1, fun() -> one(Ports) end},
                  {1, fun() -> crypto_bytes(rand:uniform(300)) end}])
    end.

pool() ->
    Port = open_port({spawn, "cat"}, []),
    Closed = open_port({spawn, "true"}, []),
    port_close(Closed),
    Dead = spawn(fun() -> ok end),
    Atom255 = list_to_atom(lists:duplicate(255, $a)),
    Small = [foo, '', Atom255, 'quoted atom', 'é', 'ünïcödé', true, undefined, ok,
             send, 'receive', call, spawn, link, in, gc_minor_start, trace_status,
             0, 1, -1, 255, 256, 1 bsl 27, -(1 bsl 59), 1 bsl 64, 1 bsl 200,
             0.0, -0.0, 1.5, 1.0e308, -1.0e-308,
             <<>>, <<"abc">>, <<1, 2, 3>>, <<97, 1:5>>, <<255, 254, 0>>, <<"é"/utf8>>,
             binary:part(binary:copy(<<"x">>, 100), 10, 20),
             [], "string", [$a | b], [1, 2 | 3], [[[[]]]], "é", [16#10FFFF, 0],
             {}, {a}, {a, b, c, d}, {lists, reverse, 1}, {lists, reverse, [a]},
             #{}, #{a => 1}, #{{x} => [y]},
             self(), Dead, remote_pid(), Port, Closed, remote_port(),
             make_ref(), remote_ref(),
             fun() -> ok end, fun lists:reverse/1, fun(X) -> {X, Port} end],
    Huge = [lists:seq(1, 3000000),
            lists:foldl(fun(_, A) -> [A] end, [], lists:seq(1, 2000000)),
            lists:foldl(fun(_, A) -> {A} end, {}, lists:seq(1, 1000000)),
            binary:copy(<<"0123456789">>, 1000000),
            big_map(),
            1 bsl 1000000,
            list_to_tuple(lists:seq(1, 100000)),
            lists:duplicate(100000, 'ünïcödé')],
    {[Port, Closed, remote_port()], Small, Huge}.

big_map() ->
    maps:from_list([{K, [K]} || K <- lists:seq(1, 100)]).

%% Pids, ports and refs of a node named `other@host', built from their
%% external format (they cannot be made otherwise in a single node).
remote_pid() ->
    binary_to_term(<<131, 88, 119, 10, "other@host", 42:32, 0:32, 7:32>>).

remote_port() ->
    binary_to_term(<<131, 89, 119, 10, "other@host", 9:32, 7:32>>).

remote_ref() ->
    binary_to_term(<<131, 90, 3:16, 119, 10, "other@host", 7:32, 1:32, 2:32, 3:32>>).

crypto_bytes(N) ->
    list_to_binary([rand:uniform(256) - 1 || _ <- lists:seq(1, N)]).

one(List) ->
    lists:nth(rand:uniform(length(List)), List).

pick(Weighted) ->
    Total = lists:sum([W || {W, _} <- Weighted]),
    pick(rand:uniform(Total), Weighted).

pick(N, [{W, F} | _]) when N =< W -> F();
pick(N, [{W, _} | Rest]) -> pick(N - W, Rest).

%%%===================================================================
%%% the table for the README
%%%===================================================================

%% @doc One representative call per kind of bad input, and what it gets:
%% `{Input, Call, Outcome, StatsDelta}' rows as Markdown text.
-spec table() -> binary().
table() ->
    Me = self(),
    Port = hd(erlang:ports()),
    Rows =
        [{"unknown tag", fun() -> dyntrace:enabled_send(foo, [], Me) end},
         {"non-atom tag", fun() -> dyntrace:enabled_send({send}, [], Me) end},
         {"tag of another class", fun() -> dyntrace:enabled_send(call, [], Me) end},
         {"trace_status", fun() -> dyntrace:enabled_send(trace_status, [], Me) end},
         {"seq_trace", fun() -> dyntrace:enabled(seq_trace, [], Me) end},
         {"junk tracer state (enabled)", fun() -> dyntrace:enabled_send(send, foo, Me) end},
         {"junk tracee (enabled)", fun() -> dyntrace:enabled_send(send, [], foo) end},
         {"unknown tag (trace)", fun() -> dyntrace:trace_send(foo, [], Me, x, #{extra => Me}) end},
         {"tracee not a pid/port", fun() -> dyntrace:trace_send(send, [], foo, x, #{extra => Me}) end},
         {"port tracee for a process event",
          fun() -> dyntrace:trace_procs(exit, [], Port, normal, #{}) end},
         {"opts not a map", fun() -> dyntrace:trace_send(send, [], Me, x, [{extra, Me}]) end},
         {"opts without extra (send)", fun() -> dyntrace:trace_send(send, [], Me, x, #{}) end},
         {"send to a non-pid extra", fun() -> dyntrace:trace_send(send, [], Me, x, #{extra => {a, b}}) end},
         {"call: {M,F} instead of {M,F,A}", fun() -> dyntrace:trace_call(call, [], Me, {lists, reverse}, #{}) end},
         {"call: arity a bignum", fun() -> dyntrace:trace_call(call, [], Me, {lists, reverse, 1 bsl 70}, #{}) end},
         {"call: improper argument list", fun() -> dyntrace:trace_call(call, [], Me, {lists, reverse, [a | b]}, #{}) end},
         {"exception_from without {Class, Value}",
          fun() -> dyntrace:trace_call(exception_from, [], Me, {m, f, 1}, #{extra => foo}) end},
         {"spawn: extra not {M,F,Args}",
          fun() -> dyntrace:trace_procs(spawn, [], Me, Me, #{extra => foo}) end},
         {"spawn: new process not a pid",
          fun() -> dyntrace:trace_procs(spawn, [], Me, foo, #{extra => {m, f, []}}) end},
         {"link: other side not a pid/port", fun() -> dyntrace:trace_procs(link, [], Me, foo, #{}) end},
         {"GC info not a list", fun() -> dyntrace:trace_garbage_collection(gc_minor_start, [], Me, foo, #{}) end},
         {"GC info improper list",
          fun() -> dyntrace:trace_garbage_collection(gc_minor_start, [], Me, [{wordsize, 1} | x], #{}) end},
         {"GC info wrong values",
          fun() -> dyntrace:trace_garbage_collection(gc_minor_start, [], Me, [{wordsize, -1}, {heap_block_size, foo}], #{}) end},
         {"invalid tracer state (trace)", fun() -> dyntrace:trace_send(send, #{max_term_bytes => 1}, Me, x, #{extra => Me}) end},
         {"3M-element list message", fun() -> dyntrace:trace_send(send, [], Me, lists:seq(1, 3000000), #{extra => Me}) end},
         {"2M-deep nested message",
          fun() -> dyntrace:trace_send(send, [], Me, lists:foldl(fun(_, A) -> [A] end, [], lists:seq(1, 2000000)), #{extra => Me}) end},
         {"format_term limit 63", fun() -> dyntrace:format_term(x, 63) end},
         {"format_term limit 65537", fun() -> dyntrace:format_term(x, 65537) end},
         {"format_term limit not an integer", fun() -> dyntrace:format_term(x, 100.0) end},
         {"format_term huge term", fun() -> byte_size(dyntrace:format_term(lists:seq(1, 3000000), 64)) end},
         {"tracer/1 not a map", fun() -> dyntrace:tracer(foo) end},
         {"tracer/1 [] (the default state)", fun() -> dyntrace:tracer([]) end},
         {"tracer/1 unknown key", fun() -> dyntrace:tracer(#{foo => 1}) end},
         {"tracer/1 out of range", fun() -> dyntrace:tracer(#{max_term_bytes => 63}) end},
         {"tracer/1 not an integer", fun() -> dyntrace:tracer(#{max_term_bytes => 1.0e3}) end}],
    Lines = [begin
                 S0 = dyntrace:stats(),
                 Outcome = case call_fun(F) of
                               {returned, V} -> io_lib:format("returns `~0p`", [V]);
                               {raised, C, R} -> io_lib:format("raises `~0p:~0p`", [C, R])
                           end,
                 S1 = dyntrace:stats(),
                 Counted = [io_lib:format("~s +~b", [K, maps:get(K, S1) - V0])
                            || {K, V0} <- maps:to_list(S0), maps:get(K, S1) =/= V0],
                 io_lib:format("| ~s | ~s | ~s |~n",
                               [Input, Outcome, lists:join(", ", Counted)])
             end || {Input, F} <- Rows],
    iolist_to_binary(["| input | outcome | counted in stats() |\n|---|---|---|\n" | Lines]).

call_fun(F) ->
    try F() of
        V -> {returned, V}
    catch
        C:R -> {raised, C, R}
    end.
