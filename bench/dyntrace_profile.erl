%%% @doc Where one enabled `message_send' spends its instructions: a short
%%% ping-pong traced by dyntrace into a running LTTng session, run under
%%% `valgrind --tool=callgrind' by `bench/profile.sh', and the Markdown
%%% section that reads the profile back.
%%%
%%% Callgrind counts instructions (Ir), not time: the figures are exact and
%%% repeatable on a noisy machine, and they show proportions; cache misses
%%% and the ring buffer's atomics cost more time than their share of Ir.
-module(dyntrace_profile).

-export([workload/1, workload_limit/1, workload_none/1, workload_limit_none/1, workload_off/1,
         workload_procs_off/1, workload_call/1, workload_shape/3, workload_calls/2, report/9,
         shapes_report/3]).

-define(CALLBACKS, "dyntrace_nif::callbacks::").
-define(TRACE_SEND, <<?CALLBACKS "trace_send">>).

%% The parts of a callback's Ir in the shapes' profile.
-define(PARTS, ["term walk", "term reads", "leaf text", "pid/ref text", "buffer", "tracepoint",
                "callback"]).



%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc Runs `Trips' round trips of a 100-byte binary between two processes,
%% both traced (`send') by dyntrace into a running LTTng session; prints
%% `events N' (the events in the trace) and halts.
-spec workload(pos_integer()) -> no_return().
workload(Trips) ->
    ping_pong(Trips, dyntrace, []).

%% @doc The same with `limit_tracer' (the VM's dispatch and one tracepoint
%% of constant texts, see `bench/limit_tracer.c') instead of dyntrace.
-spec workload_limit(pos_integer()) -> no_return().
workload_limit(Trips) ->
    ping_pong(Trips, limit_tracer, []).

%% @doc `workload/1' with the tracer state `#{payload => none}'.
-spec workload_none(pos_integer()) -> no_return().
workload_none(Trips) ->
    ping_pong(Trips, dyntrace, #{payload => none}).

%% @doc `workload_limit/1' with the texts `payload => none' writes (the
%% two pids and `-').
-spec workload_limit_none(pos_integer()) -> no_return().
workload_limit_none(Trips) ->
    ping_pong(Trips, limit_tracer, #{payload => none}).

%% @doc `Calls' calls of a traced function (`call' trace, exception_trace)
%% with function_call, function_return and function_exception recorded in
%% a running LTTng session; prints `events N' and halts.
-spec workload_call(pos_integer()) -> no_return().
workload_call(Calls) ->
    ok = lttng_session:ensure_daemon(),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    {module, bench_callee} = code:ensure_loaded(bench_callee),
    ok = lttng_session:wait_registered(),
    Events = [function_call, function_return, function_exception],
    S = lttng_session:create(bench_profile_call, Events),
    ok = lttng_session:track_self(S),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled(Events),
    ok = call_traced(dyntrace, Calls),
    ok = lttng_session:stop(S),
    io:format("events ~b~n", [lttng_session:recorded(S)]),
    lttng_session:destroy(S),
    halt(0).

%% @doc `Sends' messages of shape `Shape' (a key of
%% `payload_bench:shape_messages/2') sent by a process to itself, traced
%% (`send') by `Tracer' into a running LTTng session: dyntrace, or the limit
%% tracer writing the texts dyntrace writes; prints `events N' and halts.
-spec workload_shape(dyntrace | limit_tracer, atom(), pos_integer()) -> no_return().
workload_shape(Tracer, Shape, Sends) ->
    S = start_session(bench_profile_shape, [message_send], Tracer),
    {Shape, _, Term} = lists:keyfind(Shape, 1, payload_bench:shape_messages(self(), alias())),
    Text = payload_bench:message_text(Term),
    traced_run(fun() -> self_sends(Sends, Term) end, send, Tracer,
               fun(Pid) -> limit_tracer:set_texts(pid_to_list(Pid), pid_to_list(Pid), Text) end),
    finish_session(S).

%% @doc `Calls' calls of `bench_callee:same/1' under `return_trace' (a
%% `function_call' and a `function_return' each), traced (`call') by
%% `Tracer' into a running LTTng session; prints `events N' and halts.
-spec workload_calls(dyntrace | limit_tracer, pos_integer()) -> no_return().
workload_calls(Tracer, Calls) ->
    {module, bench_callee} = code:ensure_loaded(bench_callee),
    %% message_send too: the limit tracer tells when its library sees it.
    S = start_session(bench_profile_calls, [function_call, function_return, message_send], Tracer),
    _ = erlang:trace_pattern({bench_callee, same, 1}, [{'_', [], [{return_trace}]}], [local]),
    traced_run(fun() -> same_calls(Calls) end, call, Tracer,
               fun(Pid) -> limit_tracer:set_call_texts(pid_to_list(Pid), "bench_callee:same/1") end),
    _ = erlang:trace_pattern({bench_callee, same, 1}, false, [local]),
    finish_session(S).

start_session(Name, Events, Tracer) ->
    ok = lttng_session:ensure_daemon(),
    _ = [{module, M} = code:ensure_loaded(M) || M <- [dyntrace, Tracer, payload_bench]],
    ok = lttng_session:wait_registered(),
    S = lttng_session:create(Name, Events),
    ok = lttng_session:track_self(S),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled(Events),
    Tracer =:= limit_tracer andalso
        (ok = lttng_session:wait_until(fun limit_tracer:is_enabled/0, 100)),
    S.

finish_session(S) ->
    ok = lttng_session:stop(S),
    io:format("events ~b~n", [lttng_session:recorded(S)]),
    lttng_session:destroy(S),
    halt(0).

%% `Work' in a fresh process traced with `Flag' by `Tracer' (the limit
%% tracer's texts set by `LimitTexts(Pid)' first), to its end.
traced_run(Work, Flag, Tracer, LimitTexts) ->
    W = spawn(fun() -> receive go -> Work() end end),
    Tracer =:= limit_tracer andalso (ok = LimitTexts(W)),
    1 = erlang:trace(W, true, [Flag, {tracer, Tracer, []}]),
    Ref = monitor(process, W),
    W ! go,
    receive {'DOWN', Ref, process, W, _} -> ok end.

self_sends(0, _Term) -> ok;
self_sends(K, Term) ->
    self() ! Term,
    receive _ -> self_sends(K - 1, Term) end.

same_calls(0) -> ok;
same_calls(K) ->
    _ = bench_callee:same(K),
    same_calls(K - 1).

%% `State' is dyntrace's tracer state; the limit tracer writes the texts
%% dyntrace writes under it.
ping_pong(Trips, Tracer, State) ->
    ok = lttng_session:ensure_daemon(),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    {module, Tracer} = code:ensure_loaded(Tracer),
    ok = lttng_session:wait_registered(),
    S = lttng_session:create(bench_profile, [message_send]),
    %% Only this node: other nodes tracing sends would write into it too.
    ok = lttng_session:track_self(S),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled([message_send]),
    Tracer =:= limit_tracer andalso
        (ok = lttng_session:wait_until(fun limit_tracer:is_enabled/0, 100)),
    Bin = binary:copy(<<"0123456789">>, 10),
    Me = self(),
    Echo = spawn(fun() -> echo(Me) end),
    Tracer =:= limit_tracer andalso
        (ok = limit_tracer:set_texts(pid_to_list(Me), pid_to_list(Echo),
                                     message_text(Bin, State))),
    TracerState = case Tracer of dyntrace -> State; limit_tracer -> [] end,
    _ = [erlang:trace(P, true, [send, {tracer, Tracer, TracerState}]) || P <- [self(), Echo]],
    ping(Echo, Trips, Bin),
    _ = [erlang:trace(P, false, [all]) || P <- [self(), Echo]],
    ok = lttng_session:stop(S),
    io:format("events ~b~n", [lttng_session:recorded(S)]),
    lttng_session:destroy(S),
    halt(0).

%% @doc The probe-off path: `Calls' calls of a traced function with
%% exception trace, first with dyntrace attached and its events off, then
%% with `floor_tracer' answering `discard'; halts.
-spec workload_off(pos_integer()) -> no_return().
workload_off(Calls) ->
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    {module, floor_tracer} = code:ensure_loaded(floor_tracer),
    {module, bench_callee} = code:ensure_loaded(bench_callee),
    ok = floor_tracer:set_answer(discard),
    _ = [call_traced(Tracer, Calls) || Tracer <- [dyntrace, floor_tracer]],
    halt(0).

%% @doc The probe-off path for process events: `Children' processes
%% spawned, linked, registered and exiting under `procs' and `set_on_spawn'
%% tracing, first by dyntrace with its events off, then by `floor_tracer'
%% answering `discard'; halts.
-spec workload_procs_off(pos_integer()) -> no_return().
workload_procs_off(Children) ->
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    {module, floor_tracer} = code:ensure_loaded(floor_tracer),
    {module, dyntrace_bench} = code:ensure_loaded(dyntrace_bench),
    ok = floor_tracer:set_answer(discard),
    _ = [churn_traced(Tracer, Children) || Tracer <- [dyntrace, floor_tracer]],
    halt(0).

%% @doc Reads the `callgrind_annotate --tree=calling --inclusive=yes' output
%% of the probe-on runs (`SendFile', `LimitFile', and the same under
%% `payload => none': `NoneFile', `LimitNoneFile') and of the probe-off
%% runs (`OffFile', `Calls' traced calls; `ProcsFile', `Calls' children),
%% and of the call events (`CallFile'), and prints the Markdown breakdown.
-spec report(file:filename(), file:filename(), file:filename(), file:filename(),
             file:filename(), file:filename(), file:filename(), string(), string()) -> no_return().
report(SendFile, LimitFile, NoneFile, LimitNoneFile, CallFile, OffFile, ProcsFile, CallsText,
       EventsText) ->
    Calls = list_to_integer(string:trim(CallsText)),
    Events = list_to_integer(string:trim(EventsText)),
    io:put_chars([send_md(parse_file(SendFile), Events),
                  limit_md(profile(SendFile), profile(LimitFile), Events),
                  none_md(profile(NoneFile), profile(LimitNoneFile), Events),
                  call_md(parse_file(CallFile)),
                  "## Profile: the probe off\n\n"
                  "The same way, with dyntrace attached and its events off, then with "
                  "`floor_tracer` answering `discard`: the Ir of the tracers' `enabled*` "
                  "callbacks, which is all a switched-off tracer adds (the VM's own work is "
                  "the same for both).\n\n",
                  off_md(parse_file(OffFile), Calls, "traced call",
                         "calls of a traced function (`call` trace, `exception_trace`; "
                         "`dyntrace_profile:workload_off/1`)"),
                  off_md(parse_file(ProcsFile), Calls, "child",
                         "children spawned, linked, registered and exiting (`procs`, "
                         "`set_on_spawn`; `dyntrace_profile:workload_procs_off/1`)")]),
    halt(0).

%% @doc Reads the profiles `bench/profile.sh shapes' wrote in `Dir' (for
%% each name of `ShapesText', space-separated, `callgrind.shape_NAME' by
%% dyntrace and `callgrind.shape_NAME_limit' by the limit tracer; `calls'
%% the call events) of `SendsText' sends (calls) each, and prints the
%% Markdown section: Ir per event against the limit, and where dyntrace's
%% go.
-spec shapes_report(file:filename(), string(), string()) -> no_return().
shapes_report(Dir, ShapesText, SendsText) ->
    Sends = list_to_integer(string:trim(SendsText)),
    Rows = [shape_row(Dir, Shape, Sends) || Shape <- string:lexemes(ShapesText, " ")],
    Parts = ?PARTS,
    io:put_chars(
      ["## Profile: message shapes and call events against the limit tracer\n\n"
       "`bench/profile.sh shapes`: for each shape, `valgrind --tool=callgrind` on a process "
       "sending the message to itself ", integer_to_list(Sends), " times, traced (`send`) by "
       "dyntrace into a running LTTng session, then by the limit tracer writing dyntrace's "
       "texts (`dyntrace_profile:workload_shape/3`); `calls`: ", integer_to_list(Sends),
       " calls of `bench_callee:same/1` under `return_trace`, two events each "
       "(`workload_calls/2`). Instructions (Ir) per event, exact and repeatable on a loaded "
       "machine. *Callbacks*: the tracer's NIF callbacks (`enabled*` and `trace*`), inclusive; "
       "*dispatch + callbacks*: the VM's `trace_send` inclusive (sends only), what tracing "
       "adds to a send in instructions. *NIF code*: the instructions run in the tracer's own "
       "library per event and the distinct 64-byte code lines holding them (both call the same "
       "tracepoint probe, in `libdyntrace_lttng.so`, outside either library).\n\n"
       "| event | callbacks: dyntrace | limit | x limit | dispatch + callbacks: dyntrace | limit "
       "| x limit | NIF code: dyntrace Ir / lines | limit Ir / lines |\n"
       "|---|---|---|---|---|---|---|---|---|\n",
       [R || {R, _} <- Rows],
       "\nWhere dyntrace's `trace_send` (`trace_call`) callback spends its Ir per event, "
       "from the call tree under it (each function's own Ir, and what it calls outside its "
       "library counted with it): *term walk* the walk over the term (`format::walk::run` and "
       "what it inlines: reading term words, the atoms' and pids' kept texts, separators; "
       "`short_path::written`); *term reads* the ground floor's readers when not inlined "
       "(`vm::`) and the VM's `enif_*` calls the walk makes (type, tuple, list cell, map "
       "iterator); *leaf text* atoms, integers and binaries written by functions of their own "
       "(`format::binary_text::write_bytes`, `format::number`, `decimal`, `format::atom`); "
       "*pid/ref text* references written from their numbers (`vm::reference`), the VM's `%T` "
       "printer (`format::leaf::snprintf`, `enif_snprintf`) for the identifiers it writes, the "
       "identifier cache; *buffer* copying into the text buffer (`memcpy`); *tracepoint* the "
       "LTTng-UST probe (reserve, copy, commit); *callback* the rest (dispatch on the tag, "
       "enabled re-check, pid texts of the event, state). The largest functions: own Ir per "
       "event with what they call outside the library.\n\n"
       "| event | ", lists:join(" | ", Parts), " | largest functions |\n|---|",
       [["---|" || _ <- Parts]], "---|\n",
       [B || {_, B} <- Rows], "\n"]),
    halt(0).

%%%===================================================================
%%% PRIVATE
%%%===================================================================

%% The two table rows of one shape: Ir against the limit, and the parts.
shape_row(Dir, Shape, Sends) ->
    File = fun(Suffix) -> filename:join(Dir, "callgrind.shape_" ++ Shape ++ Suffix) end,
    {Dyn, DynRaw} = profile(File(".txt")),
    {Lim, LimRaw} = profile(File("_limit.txt")),
    {Root, Events, Label} =
        case Shape of
            "calls" -> {<<?CALLBACKS "trace_call">>, 2 * Sends,
                        "`calls`, `function_call` + `function_return` of `bench_callee:same/1`"};
            _ -> {?TRACE_SEND, Sends, ["`message_send`: ", Shape]}
        end,
    Per = fun(X) -> X / Events end,
    DynCb = Per(lists:sum([I || {_, I} <- callbacks(Dyn)])),
    LimCb = Per(lists:sum([I || {F, {I, _}} <- maps:to_list(Lim),
                                string:prefix(binary_to_list(F), "limit_") =/= nomatch])),
    Vm = fun(Blocks) -> incl(Blocks, <<"trace_send">>) / max(1, calls_to(Blocks, <<"trace_send">>)) end,
    Dispatch = case Shape of
                   "calls" -> ["-", "-", "-"];
                   _ -> [fmt_int(Vm(Dyn)), fmt_int(Vm(Lim)), fmt(Vm(Dyn) / max(1, Vm(Lim)), 2)]
               end,
    {DLines, DIr} = code_lines(DynRaw, <<"/libdyntrace_nif.so">>, Events),
    {LLines, LIr} = code_lines(LimRaw, <<"/limit_tracer.so">>, Events),
    {Parts, ByFn} = parts(Dyn, objects(File(".txt")), Root),
    RootEvents = max(1, calls_to(Dyn, Root)),
    Top = lists:sublist(lists:reverse(lists:keysort(2, maps:to_list(ByFn))), 4),
    {io_lib:format("| ~s | ~s | ~s | ~s | ~s | ~s / ~b | ~s / ~b |\n",
                   [Label, fmt_int(DynCb), fmt_int(LimCb), fmt(DynCb / max(1, LimCb), 2),
                    lists:join(" | ", Dispatch), fmt_int(DIr), DLines, fmt_int(LIr), LLines]),
     ["| ", Label, " | ",
      lists:join(" | ", [fmt_int(maps:get(P, Parts, 0) / RootEvents) || P <- ?PARTS]), " | ",
      lists:join(", ", [io_lib:format("`~s` ~s", [short_name(F), fmt_int(I / RootEvents)])
                        || {F, I} <- Top]), " |\n"]}.

short_name(F) ->
    lists:flatten(string:replace(binary_to_list(F), "dyntrace_nif::", "")).

%% Ir under `Root' by part, and by function: a walk of the call tree
%% through the functions of the tracer's library, each adding its own Ir
%% (inclusive less its callees') and the inclusive Ir of what it calls
%% outside the library.
parts(Blocks, Objects, Root) ->
    parts([Root], #{Root => true}, Blocks, Objects, {#{}, #{}}).

parts([], _Seen, _Blocks, _Objects, Acc) ->
    Acc;
parts([F | Rest], Seen, Blocks, Objects, Acc) ->
    {Incl, Callees} = maps:get(F, Blocks, {0, #{}}),
    Part = part(F),
    Own = Incl - lists:sum([I || {I, _} <- maps:values(Callees)]),
    Add = fun(P, X, {ByPart, ByFn}) ->
                  Sum = fun(K, M) -> maps:update_with(K, fun(Y) -> Y + X end, X, M) end,
                  {Sum(P, ByPart), Sum(F, ByFn)}
          end,
    {Next, Seen1, Acc1} =
        maps:fold(
          fun(G, {I, _}, {N, S, A}) ->
                  case ours_lib(maps:get(G, Objects, <<>>)) of
                      true when not is_map_key(G, S) -> {[G | N], S#{G => true}, A};
                      true -> {N, S, A};
                      false -> {N, S, Add(foreign_part(Part, G), I, A)}
                  end
          end, {[], Seen, Add(Part, Own, Acc)}, Callees),
    parts(Next ++ Rest, Seen1, Blocks, Objects, Acc1).

ours_lib(Object) ->
    binary:match(Object, <<"libdyntrace_nif.so">>) =/= nomatch.

%% The first part whose name patterns `F' matches.
part(F) ->
    Name = binary_to_list(F),
    Has = fun(Sub) -> string:find(Name, Sub) =/= nomatch end,
    Parts = [{"tracepoint", ["dyntrace_emit_", "lttng"]},
             {"pid/ref text", ["format::leaf::snprintf", "ident_cache", "write_identifier",
                               "format_identifier", "vm::reference"]},
             {"leaf text", ["write_leaf_of", "write_bytes", "write_decimal", "format::atom",
                            "format::shape", "format::leaf", "format::number",
                            "format::binary_text", "text_cache", "decimal::"]},
             {"buffer", ["format::bounded_text"]},
             {"term reads", ["vm::"]},
             {"term walk", ["format", "short_path::written"]}],
    case [P || {P, Subs} <- Parts, lists:any(Has, Subs)] of
        [P | _] -> P;
        [] -> "callback"
    end.

%% What a function of the tracer's library calls outside it counts with
%% its caller's part, but copies count as the buffer's and the VM's term
%% accessors under the walk as term reads.
foreign_part(Part, G) when Part =:= "term walk"; Part =:= "callback" ->
    Name = binary_to_list(G),
    case {string:find(Name, "mem") =/= nomatch, string:prefix(Name, "enif_") =/= nomatch} of
        {true, _} -> "buffer";
        {_, true} when Part =:= "term walk" -> "term reads";
        _ -> Part
    end;
foreign_part(Part, _) ->
    Part.

%% #{Function => its object's path}, from the `*' lines of a
%% `callgrind_annotate --tree=calling' output and their `>' lines.
objects(File) ->
    {ok, Bin} = file:read_file(File),
    maps:from_list(
      [{fname(Fn), Obj}
       || Line <- binary:split(Bin, <<"\n">>, [global]),
          {match, [Fn, Obj]} <- [re:run(Line, "^\\s*[0-9,]+ \\([ 0-9.]+%\\)\\s+[*>]\\s+(\\S+?)"
                                         "(?: \\([0-9,]+x\\))? \\[(.*)\\]\\s*$",
                                         [{capture, all_but_first, binary}])]]).

call_traced(Tracer, Calls) ->
    W = spawn(fun() ->
                      receive go -> ok end,
                      _ = [try bench_callee:step(I) catch throw:_ -> ok end || I <- lists:seq(1, Calls)],
                      ok
              end),
    1 = erlang:trace(W, true, [call, {tracer, Tracer, []}]),
    _ = erlang:trace_pattern({bench_callee, '_', '_'}, [{'_', [], [{exception_trace}]}], [local]),
    Ref = monitor(process, W),
    W ! go,
    receive {'DOWN', Ref, process, W, _} -> ok end,
    _ = erlang:trace_pattern({bench_callee, '_', '_'}, false, [local]),
    ok.

churn_traced(Tracer, Children) ->
    W = spawn(fun() ->
                      process_flag(trap_exit, true),
                      receive go -> ok end,
                      churn(Children)
              end),
    1 = erlang:trace(W, true, [procs, set_on_spawn, {tracer, Tracer, []}]),
    Ref = monitor(process, W),
    W ! go,
    receive {'DOWN', Ref, process, W, _} -> ok end.

churn(0) -> ok;
churn(K) ->
    C = spawn_link(dyntrace_bench, churn_child, []),
    receive {'EXIT', C, _} -> churn(K - 1) end.

echo(Peer) ->
    receive
        stop -> ok;
        Msg -> Peer ! Msg, echo(Peer)
    end.

message_text(Bin, []) -> dyntrace:format_term(Bin, 1024);
message_text(Bin, State) -> dyntrace:format_term(Bin, message, State).

ping(_Echo, 0, _Bin) -> ok;
ping(Echo, K, Bin) ->
    Echo ! Bin,
    receive B when is_binary(B) -> ping(Echo, K - 1, Bin) end.

%% #{Function => {Inclusive, #{Callee => {Inclusive, Calls}}}}
parse(Bin) ->
    Lines = binary:split(Bin, <<"\n">>, [global]),
    parse(Lines, undefined, #{}).

parse([], _, Acc) -> Acc;
parse([Line | Rest], Cur, Acc) ->
    %% Names may hold spaces (C++ signatures): a `*' line must start a
    %% block, or the calls after it would count as the block before's.
    case re:run(Line, "^\\s*([0-9,]+) \\([ 0-9.]+%\\)\\s+([*>])\\s+(.+?)(?: \\(([0-9,]+)x\\))? \\[",
                [{capture, all_but_first, binary}]) of
        {match, [Ir, <<"*">>, Fn | _]} ->
            parse(Rest, fname(Fn), Acc#{fname(Fn) => {num(Ir), #{}}});
        {match, [Ir, <<">">>, Fn, Calls]} when Cur =/= undefined ->
            {Incl, Callees} = maps:get(Cur, Acc),
            parse(Rest, Cur, Acc#{Cur => {Incl, Callees#{fname(Fn) => {num(Ir), num(Calls)}}}});
        _ ->
            parse(Rest, Cur, Acc)
    end.

fname(Fn) ->
    case binary:split(Fn, <<":">>) of
        [<<"???">>, Name] -> Name;
        [_File, Name] -> Name;
        [Name] -> Name
    end.

num(<<>>) -> 0;
num(B) -> binary_to_integer(binary:replace(B, <<",">>, <<>>, [global])).

incl(Blocks, Fn) ->
    case maps:get(Fn, Blocks, undefined) of
        {I, _} -> I;
        undefined -> 0
    end.

%% Whether a callee of the callbacks is the tracer's own, the tracepoint's
%% or the runtime library's; callgrind also counts some of the VM's code
%% (JIT stubs) as called from a callback, which `send_md' lumps together.
ours(F) ->
    lists:any(fun(P) -> string:prefix(binary_to_list(F), P) =/= nomatch end,
              ["dyntrace", "__tls_get_addr", "std::", "<alloc::", "core::", "enif_"]).

%% What the parts of the profile are, where the name alone does not say.
describe(<<"dyntrace_nif::format::format_term_bounded">>) -> "the message text";
describe(<<"dyntrace_nif::format::field::write_field">>) -> "the message text";
describe(<<"dyntrace_nif::fields::EventTerms::term_text">>) -> "the message text";
describe(<<"dyntrace_nif::short_path::written">>) -> "the message text";
describe(<<"dyntrace_nif::general_path::emit">>) -> "the general way (a pid's first event on a scheduler)";
describe(<<"dyntrace_emit_message_send">>) -> "the tracepoint: LTTng-UST probe, ring buffer reserve/copy/commit";
describe(<<"dyntrace_nif::fields::identifier">>) -> "pid texts (cached)";
describe(<<"dyntrace_nif::ident_cache::write_identifier">>) -> "pid texts (cached)";
describe(<<"dyntrace_nif::ident_cache::IdentCache::write">>) -> "pid texts (cached)";
describe(<<"dyntrace_nif::fields::EventTerms::extra">>) -> "the `extra` lookup in the options map";
describe(<<"enif_snprintf">>) -> "the VM's `%T` printer";
describe(_) -> "".

send_md(Blocks, TraceEvents) ->
    Events = calls_to(Blocks, ?TRACE_SEND),
    PerEv = fun(X) -> fmt_int(X / max(1, Events)) end,
    Callbacks = callbacks(Blocks),
    Total = lists:sum([I || {_, I} <- Callbacks]),
    Pct = fun(X) -> fmt_pct(X, Total) end,
    Row = fun(Label, X) -> io_lib:format("| ~s | ~s | ~s |\n", [Label, PerEv(X), Pct(X)]) end,
    {SendIncl, SendCallees} = maps:get(?TRACE_SEND, Blocks, {0, #{}}),
    Callees = expand(Blocks, maps:to_list(SendCallees)),
    {Ours, Others} = lists:partition(fun({F, _}) -> ours(F) end, Callees),
    Parts = lists:reverse(lists:keysort(2, Ours)),
    Other = lists:sum([I || {_, I} <- Others]),
    Own = SendIncl - lists:sum([I || {_, I} <- Callees]),
    ["## Profile: one enabled `message_send`\n\n"
     "`valgrind --tool=callgrind --smc-check=all` on the emulator (`perf` has no hardware "
     "counters in this VM): a 100-byte binary ping-pong between two processes, both traced "
     "(`send`) by dyntrace into a running LTTng session (`bench/profile.sh`, "
     "`dyntrace_profile:workload/1`). Instructions (Ir) per event, inclusive, from "
     "`callgrind_annotate --inclusive=yes --tree=calling`: exact and repeatable on a noisy "
     "machine; they show where the work is, not how long each part takes (cache misses and "
     "the ring buffer's atomics cost more time than their share).\n\n"
     "| part | Ir per event | share |\n|---|---|---|\n",
     [Row(io_lib:format("`~s` (~s calls per event)", [F, fmt(C / max(1, Events), 2)]), I)
      || {F, I} <- Callbacks, C <- [calls_to(Blocks, F)]],
     [Row(io_lib:format("&nbsp;&nbsp;in `trace_send`: `~s` ~s", [F, describe(F)]), I)
      || {F, I} <- Parts],
     Row("&nbsp;&nbsp;in `trace_send`: its own instructions (tag, enabled re-check, pid texts, "
         "tracer state, `extra` lookup)", Own),
     Row("&nbsp;&nbsp;in `trace_send`: code outside the tracer that callgrind counts as called "
         "from it (JIT code, the VM's)", Other),
     io_lib:format("| **all tracer callbacks** | **~s** | 100% |\n"
                   "| for scale: the VM's `trace_send`, inclusive of the callbacks it calls | ~s | |\n\n",
                   [PerEv(Total), PerEv(incl(Blocks, <<"trace_send">>))]),
     io_lib:format("Per event: divided by the ~s calls of `trace_send`. The trace holds ~s events "
                   "(babeltrace2's counter).\n\n", [fmt_int(Events), fmt_int(TraceEvents)])].

%% The VM's `trace_send' (its dispatch and the tracer callbacks it calls)
%% per event, with dyntrace and with the limit tracer.
limit_md(Dyntrace, Limit, Events) ->
    against_limit("Against the limit tracer (`bench/limit_tracer.c`: the VM's dispatch and the "
                  "same tracepoint with constant texts, `dyntrace_profile:workload_limit/1`), "
                  "the VM's `trace_send` inclusive per event",
                  Dyntrace, Limit, Events).

%% The same under `payload => none', against the limit tracer writing the
%% texts `none' writes.
none_md(Dyntrace, Limit, Events) ->
    against_limit("With `payload => none` (`dyntrace_profile:workload_none/1`) against the limit "
                  "tracer writing the texts `none` writes, the two pids and `-` "
                  "(`workload_limit_none/1`)",
                  Dyntrace, Limit, Events).

against_limit(What, {Dyntrace, DyntraceRaw}, {Limit, LimitRaw}, Events) ->
    Per = fun(Blocks) -> incl(Blocks, <<"trace_send">>) / max(1, Events) end,
    {D, L} = {Per(Dyntrace), Per(Limit)},
    {DLines, DIr} = code_lines(DyntraceRaw, <<"/libdyntrace_nif.so">>, Events),
    {LLines, LIr} = code_lines(LimitRaw, <<"/limit_tracer.so">>, Events),
    io_lib:format("~s: dyntrace ~s Ir, limit ~s Ir: ~s x the limit's instructions. "
                  "The tracer's own code (its library, the tracepoint's probe aside): "
                  "dyntrace runs ~s Ir over ~b distinct 64-byte code lines per event, the limit "
                  "~s Ir over ~b.\n\n",
                  [What, fmt_int(D), fmt_int(L), fmt(D / max(1, L), 2),
                   fmt_int(DIr), DLines, fmt_int(LIr), LLines]).

%% The code of the objects whose path ends in `Object' that runs at every
%% event: the distinct 64-byte lines holding instructions run at least
%% once every other event, and the instructions run there per event.
%% `Raw' is a callgrind profile made with `--dump-instr=yes'.
code_lines(Raw, Object, Events) ->
    {ok, Bin} = file:read_file(Raw),
    Costs = instr_costs(binary:split(Bin, <<"\n">>, [global]), Object,
                        #{names => #{}, in => false, addr => 0, skip => false}, #{}),
    Hot = [Ir || Ir <- maps:values(Costs), Ir * 2 >= Events],
    {length(Hot), lists:sum(Hot) / max(1, Events)}.

%% Ir per code line (address div 64) of `Object', from callgrind's format:
%% `ob=' names the object of the functions that follow (`(N) path' the
%% first time, `(N)' after), cost lines start with the instruction's
%% address (`0x..', or `+N'/`-N'/`*' from the one before) and end with
%% the Ir (the profile counts Ir alone), and the line after `calls=' is
%% a call's inclusive cost.
instr_costs([], _Object, _St, Acc) ->
    Acc;
instr_costs([<<"ob=", Name/binary>> | Rest], Object, St, Acc) ->
    {Path, St1} = object_name(Name, St),
    In = binary:longest_common_suffix([Path, Object]) =:= byte_size(Object),
    instr_costs(Rest, Object, St1#{in := In}, Acc);
instr_costs([<<"cob=", Name/binary>> | Rest], Object, St, Acc) ->
    {_, St1} = object_name(Name, St),
    instr_costs(Rest, Object, St1, Acc);
instr_costs([<<"calls=", _/binary>> | Rest], Object, St, Acc) ->
    instr_costs(Rest, Object, St#{skip := true}, Acc);
instr_costs([<<C, _/binary>> = Line | Rest], Object, #{addr := Addr0} = St, Acc)
  when C =:= $+; C =:= $-; C =:= $*; C >= $0, C =< $9 ->
    [Pos | Fields] = binary:split(Line, <<" ">>, [global, trim_all]),
    Addr = position(Pos, Addr0),
    Acc1 = case St of
               #{skip := false, in := true} when Fields =/= [] ->
                   Ir = count(lists:last(Fields)),
                   maps:update_with(Addr bsr 6, fun(Sum) -> Sum + Ir end, Ir, Acc);
               _ ->
                   Acc
           end,
    instr_costs(Rest, Object, St#{addr := Addr, skip := false}, Acc1);
instr_costs([_ | Rest], Object, St, Acc) ->
    instr_costs(Rest, Object, St, Acc).

object_name(Name, #{names := Names} = St) ->
    case re:run(Name, "^\\(([0-9]+)\\)(?: (.*))?$", [{capture, all_but_first, binary}]) of
        {match, [Id, Path]} -> {Path, St#{names := Names#{Id => Path}}};
        {match, [Id]} -> {maps:get(Id, Names, <<>>), St};
        nomatch -> {Name, St}
    end.

position(<<"*">>, Addr) -> Addr;
position(<<"+", N/binary>>, Addr) -> Addr + number(N);
position(<<"-", N/binary>>, Addr) -> Addr - number(N);
position(N, _Addr) -> number(N).

number(<<"0x", Hex/binary>>) -> binary_to_integer(Hex, 16);
number(Dec) -> binary_to_integer(Dec).

count(Bin) ->
    try binary_to_integer(Bin) catch error:badarg -> 0 end.

%% Call events: dyntrace's `trace_call' callback per event (a call and its
%% return or exception), and the tracepoints' share of it.
call_md(Blocks) ->
    Events = max(1, calls_to(Blocks, <<?CALLBACKS "trace_call">>)),
    Tracepoints = lists:sum([I || {F, {I, _}} <- maps:to_list(Blocks),
                                  string:prefix(binary_to_list(F), "dyntrace_emit_function_") =/= nomatch]),
    io_lib:format("Call events (`dyntrace_profile:workload_call/1`: traced calls with `exception_trace`, "
                  "`function_call` and `function_return` recorded): `trace_call` takes ~s Ir per "
                  "event, ~s of them the tracepoint.\n\n",
                  [fmt_int(incl(Blocks, <<?CALLBACKS "trace_call">>) / Events),
                   fmt_int(Tracepoints / Events)]).

%% The parts of `trace_send', looking through the event dispatch and the
%% field extraction when the compiler kept them as functions of their own.
expand(Blocks, Callees) ->
    lists:append(
      [case string:prefix(binary_to_list(F), "dyntrace_nif::fields::write_event") =/= nomatch
               orelse string:prefix(binary_to_list(F), "dyntrace_nif::fields::message_send") =/= nomatch of
           true -> expand(Blocks, maps:to_list(element(2, maps:get(F, Blocks, {0, #{}}))));
           false -> [{F, I}]
       end || {F, {I, _}} <- Callees]).

%% The probe-off path: what the enabled callbacks cost per traced call,
%% dyntrace against the floor tracer (whose callbacks are one C function).
off_md(Blocks, N, Unit, What) ->
    Dyn = [{F, I} || {F, I} <- callbacks(Blocks),
                     string:prefix(binary_to_list(F), ?CALLBACKS "enabled") =/= nomatch],
    FloorIncl = incl(Blocks, <<"enabled">>),
    FloorCalls = calls_to(Blocks, <<"enabled">>),
    Per = fun(X) -> fmt(X / max(1, N), 1) end,
    [fmt_int(N), " ", What, ":\n\n",
     io_lib:format("| callback | calls per ~s | Ir per ~s |\n|---|---|---|\n", [Unit, Unit]),
     [io_lib:format("| `~s` | ~s | ~s |\n", [F, Per(calls_to(Blocks, F)), Per(I)]) || {F, I} <- Dyn],
     io_lib:format("| **dyntrace, all** | | **~s** |\n"
                   "| `floor_tracer` `enabled` (C, one function for all) | ~s | ~s |\n\n",
                   [Per(lists:sum([I || {_, I} <- Dyn])), Per(FloorCalls), Per(FloorIncl)])].

parse_file(File) ->
    {ok, Bin} = file:read_file(File),
    parse(Bin).

%% The inclusive tree of `File' (`callgrind.NAME.txt') and the name of
%% the raw profile beside it (`callgrind.NAME.out').
profile(File) ->
    {parse_file(File), filename:rootname(File) ++ ".out"}.

%% The tracer's NIF callbacks that ran, with their inclusive Ir.
callbacks(Blocks) ->
    lists:reverse(lists:keysort(2, [{F, I} || {F, {I, _}} <- maps:to_list(Blocks),
                                             string:prefix(binary_to_list(F), ?CALLBACKS) =/= nomatch,
                                             I > 0])).

%% All calls to `Fn', over all its callers.
calls_to(Blocks, Fn) ->
    lists:sum([C || {_, {_, #{Fn := {_, C}}}} <- maps:to_list(Blocks)]).

fmt_int(X) -> integer_to_list(round(X)).

fmt(X, D) -> float_to_list(float(X), [{decimals, D}]).

fmt_pct(_, 0) -> "-";
fmt_pct(X, T) -> fmt(100 * X / T, 1) ++ "%".
