%%% @doc Where one enabled `message_send' spends its instructions: a short
%%% ping-pong traced by dyntrace into a running LTTng session, run under
%%% `valgrind --tool=callgrind' by `bench/profile.sh', and the Markdown
%%% section that reads the profile back.
%%%
%%% Callgrind counts instructions (Ir), not time: the figures are exact and
%%% repeatable on a noisy machine, and they show proportions; cache misses
%%% and the ring buffer's atomics cost more time than their share of Ir.
-module(dyntrace_profile).

-export([workload/1, report/3]).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc Runs `Trips' round trips of a 100-byte binary between two processes,
%% both traced (`send') by dyntrace into a running LTTng session; prints
%% `events N' (the events in the trace) and halts.
-spec workload(pos_integer()) -> no_return().
workload(Trips) ->
    ok = lttng_session:ensure_daemon(),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    ok = lttng_session:wait_registered(),
    S = lttng_session:create(bench_profile, [message_send]),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled([message_send]),
    Bin = binary:copy(<<"0123456789">>, 10),
    Me = self(),
    Echo = spawn(fun() -> echo(Me) end),
    _ = [erlang:trace(P, true, [send, {tracer, dyntrace, []}]) || P <- [self(), Echo]],
    ping(Echo, Trips, Bin),
    _ = [erlang:trace(P, false, [all]) || P <- [self(), Echo]],
    ok = lttng_session:stop(S),
    #{dir := Dir} = S,
    Out = os:cmd("babeltrace2 '" ++ Dir ++ "' -c sink.utils.counter -p step=+0"),
    io:format(standard_error, "~s~n", [Out]),
    {match, [N]} = re:run(Out, "^\\s*([0-9]+)\\s+event messages", [multiline, caseless, {capture, all_but_first, list}]),
    io:format("events ~s~n", [N]),
    lttng_session:destroy(S),
    halt(0).

%% @doc Reads `callgrind_annotate --tree=calling --inclusive=yes' output
%% and prints the Markdown breakdown of one event. `Events' is the number
%% of events the profiled run wrote; `Command' the command that ran it.
-spec report(file:filename(), string(), string()) -> no_return().
report(AnnotateFile, EventsText, Command) ->
    {ok, Bin} = file:read_file(AnnotateFile),
    Blocks = parse(Bin),
    Events = list_to_integer(string:trim(EventsText)),
    io:put_chars(markdown(Blocks, Events, Command)),
    halt(0).

%%%===================================================================
%%% PRIVATE
%%%===================================================================

echo(Peer) ->
    receive
        stop -> ok;
        Msg -> Peer ! Msg, echo(Peer)
    end.

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
    case re:run(Line, "^\\s*([0-9,]+) \\([ 0-9.]+%\\)\\s+([*>])\\s+(\\S+?)(?: \\(([0-9,]+)x\\))? \\[",
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

callee(Blocks, Fn, Callee) ->
    case maps:get(Fn, Blocks, undefined) of
        {_, Cs} -> maps:get(Callee, Cs, {0, 0});
        undefined -> {0, 0}
    end.

markdown(Blocks, Events, Command) ->
    NifFunc = <<"dyntrace_nif::_::__INVENTORY::nif_func">>,
    Emit = <<"dyntrace_nif::tracer::emit">>,
    NifIncl = incl(Blocks, NifFunc),
    {EmitIncl, EmitCalls} = callee(Blocks, NifFunc, Emit),
    {_, NifCalls} = callee(Blocks, NifFunc, <<"rustler::codegen_runtime::handle_nif_result">>),
    {Malloc, _} = callee(Blocks, NifFunc, <<"malloc">>),
    {Free, _} = callee(Blocks, NifFunc, <<"free">>),
    Part = fun(Name) -> element(1, callee(Blocks, Emit, Name)) end,
    Message = Part(<<"dyntrace_nif::format::format_term_bounded">>),
    Pids = Part(<<"dyntrace_nif::tracer::identifier">>),
    Tracepoint = Part(<<"dyntrace_emit_s3">>),
    CStr = Part(<<"dyntrace_nif::tracer::c_str">>),
    Extra = Part(<<"dyntrace_nif::tracer::Event::extra">>),
    Rest = EmitIncl - Message - Pids - Tracepoint - CStr - Extra,
    OutsideEmit = NifIncl - EmitIncl,
    VmTraceSend = incl(Blocks, <<"trace_send">>),
    PerEv = fun(X) -> fmt_int(X / max(1, EmitCalls)) end,
    Total = EmitIncl + OutsideEmit,
    Pct = fun(X) -> fmt_pct(X, Total) end,
    Row = fun(Label, X) ->
                  io_lib:format("| ~s | ~s | ~s |\n", [Label, PerEv(X), Pct(X)])
          end,
    [io_lib:format(
       "## Profile: one enabled `message_send`\n\n"
       "`valgrind --tool=callgrind` (hardware counters are not available to `perf` in this VM), "
       "a 100-byte binary ping-pong, both processes traced by dyntrace into a running "
       "LTTng session. Figures are instructions (Ir) per event, from "
       "`callgrind_annotate --inclusive=yes --tree=calling`; they are exact and repeatable, and "
       "show where the work is, not how long each part takes.\n\n"
       "Command: `~s`\n\n"
       "| part | Ir per event | share |\n|---|---|---|\n",
       [Command]),
     Row("NIF entry and exit outside the event (rustler wrapper: argument `Vec` malloc/free, "
         "catch_unwind, result), tag lookup and enabled load, over all `enabled_*`/`trace_*` calls", OutsideEmit),
     Row("&nbsp;&nbsp;of which malloc + free (rustler's argument vector)", Malloc + Free),
     Row("message text: `format_term_bounded` (enif_snprintf `%T` today)", Message),
     Row("two pids: `identifier` -> `format_identifier` (enif_snprintf `%T`)", Pids),
     Row("tracepoint: `dyntrace_emit_s3` (LTTng-UST probe, ring buffer reserve/copy/commit, RCU)", Tracepoint),
     Row("NUL-terminating the three fields (`c_str`, a scan per field)", CStr),
     Row("`extra` lookup in the options map", Extra),
     Row("the rest of `emit` (route lookup, enabled re-check, max_term_bytes, scratch buffers)", Rest),
     io_lib:format(
       "| **dyntrace total** (~s NIF calls per event) | **~s** | 100% |\n"
       "| for scale: the VM's `trace_send`, inclusive of the tracer NIFs it calls | ~s | |\n\n",
       [fmt(NifCalls / max(1, EmitCalls), 2), PerEv(Total), PerEv(VmTraceSend)]),
     io_lib:format("Per event = divided by the ~s calls of `emit`; the trace holds ~s events "
                   "(babeltrace2's counter; the difference is what LTTng discarded).\n\n",
                   [fmt_int(EmitCalls), fmt_int(Events)])].

fmt_int(X) -> integer_to_list(round(X)).

fmt(X, D) -> float_to_list(float(X), [{decimals, D}]).

fmt_pct(_, 0) -> "-";
fmt_pct(X, T) -> fmt(100 * X / T, 1) ++ "%".
