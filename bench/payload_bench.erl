%%% @doc `make bench', payload modes: what one enabled `message_send'
%%% costs under each `payload' mode and with `redact', side by side in one
%%% run, against the VM's tracer dispatch alone (`floor_trace') and
%%% `limit_tracer', a C tracer that writes the same tracepoint with
%%% constant texts, the least an LTTng tracer can cost: `limit_none' with
%%% the texts `none' writes (the two pids and `-'), `limit_full' with those
%%% `full' writes.
%%%
%%% A process sends a term to itself and receives it, `sends' times, traced
%%% with `send' only; its own loop time is the figure. Each round runs every
%%% configuration once, in an order rotating per round. The LTTng session is
%%% a snapshot session (ring buffers in overwrite mode, nothing written to
%%% disk), so that the consumer daemon takes no CPU from the node.
%%%
%%% ```
%%% erl -noshell -pa _build/default/lib/dyntrace/ebin -pa _build/bench \
%%%     -eval 'payload_bench:main(["_build/bench/payload.md"])'
%%% '''
%%% `DYNTRACE_BENCH_ROUNDS' (default 9) and `DYNTRACE_BENCH_SCALE' (default
%%% 1.0, multiplies the sends per run) shorten a trial run.
-module(payload_bench).

-export([main/1, shapes/1, shape_messages/2, message_text/1]).

-define(SENDS, 100000).
-define(CALLEE, {bench_callee, same, 1}).
-define(CALLEE_TEXT, "bench_callee:same/1").
-define(BINARY, binary:copy(<<"0123456789">>, 10)).
%% A structured message without the redacted key: the redaction check
%% runs at each tuple and map key.
-define(STRUCT, {order, 42, #{id => 7, items => [a, b, c], customer => {user, <<"alice">>}},
                 [{qty, 3}, {price, 1.5}], ?BINARY}).

%% @doc Runs every configuration for both messages and writes the report
%% (Markdown) to `Out'; halts the node, non-zero on failure.
-spec main([string()]) -> no_return().
main([Out]) ->
    write_report(Out, fun() -> report(measure()) end).

%% @doc The message shapes real systems send, and call events: dyntrace's
%% added cost per enabled event against the limit tracer writing the same
%% texts, side by side in one run; writes the report (Markdown) to `Out'
%% and halts the node, non-zero on failure.
-spec shapes([string()]) -> no_return().
shapes([Out]) ->
    write_report(Out, fun() -> shapes_report(measure_shapes()) end).

%% @doc The messages of the shapes section as `Pid' would send them, `Ref'
%% an alias: `{Key, Description, Message}'. The call message and its reply
%% are those `gen_server:call/2' sends.
-spec shape_messages(pid(), reference()) -> [{atom(), string(), term()}].
shape_messages(Pid, Ref) ->
    Bin20 = <<"0123456789abcdefghij">>,
    [{binary, "a bare 100-byte binary", ?BINARY},
     {pid_binary, "`{self(), Bin100}`", {Pid, ?BINARY}},
     {gen_call, "`{'$gen_call', {Pid, [alias|Ref]}, {get, Key}}`",
      {'$gen_call', {Pid, [alias | Ref]}, {get, user_42}}},
     {gen_reply, "its reply `{[alias|Ref], Value}`", {[alias | Ref], {ok, 42}}},
     {record, "a record-like 6-tuple: atoms, small integers, a pid, a 20-byte binary",
      {order, 1234, Pid, Bin20, pending, 3}},
     {map8, "an 8-key small map",
      #{id => 7, qty => 3, status => open, owner => alice, region => eu, retries => 0,
        priority => 2, paid => true}}].

%% @doc The text dyntrace writes in `message_send''s `message' field for
%% `Term' under the default options.
-spec message_text(term()) -> binary().
message_text(Term) ->
    dyntrace:format_term(Term, message, []).

write_report(Out, Report) ->
    try file:write_file(Out, Report()) of
        ok -> halt(0)
    catch
        Class:Reason:Stack ->
            io:format(standard_error, "payload bench failed: ~p:~p~n~p~n", [Class, Reason, Stack]),
            halt(1)
    end.

%% Each message under every configuration, in one snapshot session.
measure() ->
    ok = lttng_session:ensure_daemon(),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    {module, floor_tracer} = code:ensure_loaded(floor_tracer),
    {module, limit_tracer} = code:ensure_loaded(limit_tracer),
    ok = lttng_session:wait_registered(),
    ok = floor_tracer:set_answer(trace),
    Session = snapshot_session([message_send]),
    try
        [{Name, Term, run(configs(), send_once(Term))} || {Name, Term} <- messages()]
    after
        lttng_session:cmd_ok("lttng destroy " ++ Session)
    end.

%% The shapes and the call events, each under `untraced', `limit_full'
%% and `full', in one snapshot session.
measure_shapes() ->
    ok = lttng_session:ensure_daemon(),
    _ = [{module, M} = code:ensure_loaded(M) || M <- [dyntrace, limit_tracer, bench_callee]],
    ok = lttng_session:wait_registered(),
    Events = [message_send, function_call, function_return],
    Session = snapshot_session(Events),
    Configs = [untraced, limit_full, full],
    Load0 = sh("cut -d' ' -f1-3 /proc/loadavg"),
    try
        Sends = [{io_lib:format("`~s`, ~s", [Key, Desc]), message_text(Term),
                  run(Configs, send_once(Term))}
                 || {Key, Desc, Term} <- shape_messages(self(), alias())],
        _ = erlang:trace_pattern(?CALLEE, [{'_', [], [{return_trace}]}], [local]),
        Calls = try run(Configs, fun call_once/1)
                after erlang:trace_pattern(?CALLEE, false, [local])
                end,
        {Load0, Sends, Calls}
    after
        lttng_session:cmd_ok("lttng destroy " ++ Session)
    end.

messages() ->
    [{"a 100-byte binary", ?BINARY}, {"an order tuple with a map, a proplist and the binary", ?STRUCT}].

configs() ->
    [untraced, floor_trace, limit_none, limit_full, full, shape, size, none, redact].

%% The dyntrace tracer state of each configuration.
state(full) -> [];
state(shape) -> #{payload => shape};
state(size) -> #{payload => size};
state(none) -> #{payload => none};
state(redact) -> #{redact => [password, secret, token]}.

tracer(floor_trace) -> {tracer, floor_tracer, []};
tracer(limit_none) -> {tracer, limit_tracer, []};
tracer(limit_full) -> {tracer, limit_tracer, []};
tracer(Config) -> dyntrace:tracer(state(Config)).

%% The limit tracer's texts: what dyntrace writes for this sender and
%% message under `none', or under `full'.
limit_texts(limit_none, Pid, Term) ->
    Pids = pid_to_list(Pid),
    limit_tracer:set_texts(Pids, Pids, dyntrace:format_term(Term, message, #{payload => none}));
limit_texts(limit_full, Pid, Term) ->
    Pids = pid_to_list(Pid),
    limit_tracer:set_texts(Pids, Pids, message_text(Term));
limit_texts(_, _, _) ->
    ok.

snapshot_session(Events) ->
    Name = "payload_bench_" ++ os:getpid(),
    Dir = filename:join("/tmp/dyntrace-bench", Name),
    lttng_session:cmd_ok("lttng create " ++ Name ++ " --snapshot --output=" ++ Dir),
    lttng_session:cmd_ok("lttng enable-event -u -s " ++ Name ++ " "
                         ++ lists:join(",", ["org_erlang_dyntrace:" ++ atom_to_list(E) || E <- Events])),
    lttng_session:cmd_ok("lttng track -u -s " ++ Name ++ " --vpid=" ++ os:getpid()),
    lttng_session:cmd_ok("lttng start " ++ Name),
    ok = lttng_session:wait_enabled(Events),
    ok = lttng_session:wait_until(fun limit_tracer:is_enabled/0, 100),
    Name.

%% #{Config => [ns of each round]}: `Once(Config)' runs one configuration.
run(Configs, Once) ->
    _ = Once(untraced),
    lists:foldl(
      fun(Round, Acc) ->
              lists:foldl(fun(Config, A) ->
                                  Ns = Once(Config),
                                  maps:update_with(Config, fun(L) -> [Ns | L] end, [Ns], A)
                          end, Acc, rotate(Configs, Round))
      end, #{}, lists:seq(0, rounds() - 1)).

%% One run of `Term' sent to itself by a process traced (`send') under
%% `Config': ns per send.
send_once(Term) ->
    Sends = sends(),
    fun(Config) ->
            timed(fun() -> loop(Sends, Term) end, Sends,
                  fun(Pid) ->
                          ok = limit_texts(Config, Pid, Term),
                          Config =/= untraced andalso erlang:trace(Pid, true, [send, tracer(Config)])
                  end)
    end.

%% One run of calls of `bench_callee:same/1' under return trace, by a
%% process traced (`call') under `Config': ns per call (two events).
call_once(Config) ->
    Calls = sends(),
    timed(fun() -> call_loop(Calls) end, Calls,
          fun(Pid) ->
                  Config =:= limit_full andalso
                      (ok = limit_tracer:set_call_texts(pid_to_list(Pid), ?CALLEE_TEXT)),
                  Config =/= untraced andalso erlang:trace(Pid, true, [call, tracer(Config)])
          end).

%% `Work' in a fresh process, traced by `Trace(Pid)' before it starts: ns
%% per unit of its `Units'.
timed(Work, Units, Trace) ->
    Parent = self(),
    garbage_collect(),
    Pid = spawn(fun() ->
                        receive go -> ok end,
                        T0 = erlang:monotonic_time(nanosecond),
                        Work(),
                        T1 = erlang:monotonic_time(nanosecond),
                        Parent ! {done, self(), (T1 - T0) / Units}
                end),
    _ = Trace(Pid),
    Pid ! go,
    receive {done, Pid, Ns} -> Ns end.

call_loop(0) -> ok;
call_loop(N) ->
    _ = bench_callee:same(N),
    call_loop(N - 1).

loop(0, _Term) -> ok;
loop(N, Term) ->
    self() ! Term,
    receive _ -> loop(N - 1, Term) end.

rotate(L, N) ->
    {A, B} = lists:split(N rem length(L), L),
    B ++ A.

%%%===================================================================
%%% REPORT
%%%===================================================================

report(Results) ->
    ["## Payload modes: one enabled message_send\n\n",
     io_lib:format("Command: `make bench` (`bench/payload_bench.erl`), ~b rounds of ~b sends per "
                   "configuration, order rotating per round; ~s, `nproc` = ~s, load at the end ~s. "
                   "A process sends the message to itself and receives it, traced with `send`; "
                   "ns per send is the loop's median time over the rounds (min-max), **added** "
                   "the median minus `untraced`'s. The LTTng session is a snapshot session "
                   "(nothing written to disk). `floor_trace`: `bench/floor_tracer.c` (the VM's "
                   "dispatch, nothing written); `limit_none` / `limit_full`: `bench/limit_tracer.c`, "
                   "a C tracer writing the same tracepoint with constant texts, those `none` writes "
                   "(the pids and `-`) / those `full` writes; `redact`: "
                   "`redact => [password, secret, token]`, keys the message does not hold.\n\n",
                   [rounds(), sends(), sh("uname -srm"), sh("nproc"),
                    sh("cut -d' ' -f1-3 /proc/loadavg")]),
     [message_md(Name, Runs) || {Name, _Term, Runs} <- Results],
     targets_md(Results)].

message_md(Name, Runs) ->
    Base = median(maps:get(untraced, Runs)),
    Full = median(maps:get(full, Runs)),
    Row = fun(Config) ->
                  Ns = maps:get(Config, Runs),
                  Med = median(Ns),
                  io_lib:format("| ~p | ~s (~s-~s) | ~s | ~s |\n",
                                [Config, fmt(Med, 0), fmt(lists:min(Ns), 0), fmt(lists:max(Ns), 0),
                                 fmt(Med - Base, 0), fmt(Med / Full, 2)])
          end,
    [io_lib:format("### ~s\n\n", [Name]),
     "| configuration | ns per send | added ns | x full |\n|---|---|---|---|\n",
     [Row(C) || C <- configs()], "\n"].

%% Each limit ratio twice: on the ns per send (the loop's whole time), and
%% on the added ns (less `untraced`'s: what tracing adds, as the per-event
%% cost against the limit is defined). That per-event target is on the
%% first message, the 100-byte binary.
targets_md(Results) ->
    Line = fun(I, Name, Runs) ->
                   Med = fun(C) -> median(maps:get(C, Runs)) end,
                   R = fun(A, B) -> Med(A) / Med(B) end,
                   Added = fun(A, B) -> (Med(A) - Med(untraced)) / (Med(B) - Med(untraced)) end,
                   None = R(none, limit_none),
                   NoneAdded = Added(none, limit_none),
                   Shape = R(shape, full),
                   Redact = R(redact, full),
                   FullAdded = Added(full, limit_full),
                   io_lib:format("- ~s: none ~s x limit_none per send (target <= 1.10: ~s), "
                                 "~s x in added ns (~s); "
                                 "shape ~s x full (target <= 1.00: ~s); "
                                 "redact ~s x full (target <= 1.10: ~s); "
                                 "full ~s x limit_full per send, ~s x in added ns~s\n",
                                 [Name, fmt(None, 2), verdict(None, 1.10), fmt(NoneAdded, 2),
                                  verdict(NoneAdded, 1.10), fmt(Shape, 2),
                                  verdict(Shape, 1.0), fmt(Redact, 2), verdict(Redact, 1.10),
                                  fmt(R(full, limit_full), 2), fmt(FullAdded, 2),
                                  [[" (target <= 1.25: ", verdict(FullAdded, 1.25), ")"]
                                   || I =:= 1]])
           end,
    ["**Against the targets** (median ns per send; the limit ratios also on the added ns):\n\n",
     [Line(I, Name, Runs) || {I, {Name, _, Runs}} <- lists:enumerate(Results)], "\n"].

shapes_report({Load0, Sends, Calls}) ->
    Med = fun(Runs, C) -> median(maps:get(C, Runs)) end,
    Row = fun(Event, Bytes, Runs, PerEvent) ->
                  Base = Med(Runs, untraced),
                  Added = fun(C) -> (Med(Runs, C) - Base) / PerEvent end,
                  Ns = maps:get(full, Runs),
                  Ratio = Added(full) / Added(limit_full),
                  io_lib:format("| ~s | ~s | ~s | ~s | ~s (~s-~s) | ~s | ~s |
",
                                [Event, Bytes, fmt(Base / PerEvent, 0), fmt(Added(limit_full), 0),
                                 fmt(Added(full), 0), fmt((lists:min(Ns) - Base) / PerEvent, 0),
                                 fmt((lists:max(Ns) - Base) / PerEvent, 0), fmt(Ratio, 2),
                                 verdict(Ratio, 1.25)])
          end,
    ["## Message shapes and call events against the limit tracer

",
     io_lib:format("Command: `erl -noshell -pa _build/default/lib/dyntrace/ebin -pa _build/bench "
                   "-eval 'payload_bench:shapes([\"_build/bench/shapes.md\"])'` (part of `make bench`, "
                   "`bench/payload_bench.erl`), ~b rounds of ~b sends (calls) per configuration, "
                   "order rotating per round; ~s, `nproc` = ~s, load average ~s at the start, ~s at "
                   "the end. Each message is sent by a process to itself and received, traced with "
                   "`send`; the calls are of `bench_callee:same/1` under `return_trace`, traced with "
                   "`call`, two events per call (`function_call`, `function_return`). Added ns per "
                   "event: the median loop time over the rounds less `untraced`'s (dyntrace's "
                   "min-max in brackets). The limit is `bench/limit_tracer.c`: the VM's dispatch and "
                   "the same tracepoint, writing the texts dyntrace writes for that message "
                   "(`dyntrace:format_term/3`, computed once before the run) without reading the "
                   "term. Target: dyntrace's added cost at most 1.25x the limit's. A snapshot "
                   "session (nothing written to disk). On a shared, loaded machine these ns move from "
                   "run to run; the instruction counts of the profile (`bench/profile.sh shapes`, "
                   "section *Profile: message shapes and call events*) are the steady figures.

",
                   [rounds(), sends(), sh("uname -srm"), sh("nproc"), Load0,
                    sh("cut -d' ' -f1-3 /proc/loadavg")]),
     "| event | message text bytes | untraced ns | limit added ns | dyntrace added ns | x limit "
     "| <= 1.25x |
|---|---|---|---|---|---|---|
",
     [Row(["`message_send`: ", string:replace(lists:flatten(Desc), "|", "\\|", all)], integer_to_list(byte_size(Text)), Runs, 1)
      || {Desc, Text, Runs} <- Sends],
     Row("`function_call` + `function_return` of `bench_callee:same/1` (per event)", "-", Calls, 2),
     "
The texts written (`message` field):

",
     [io_lib:format("- ~s: `~s`
", [Desc, Text]) || {Desc, Text, _} <- Sends], "
"].

verdict(X, Limit) when X =< Limit -> "meets";
verdict(_, _) -> "**misses**".

%% The lower median (the rounds are odd in number by default).
median(L) ->
    lists:nth((length(L) + 1) div 2, lists:sort(L)).

fmt(X, 0) -> integer_to_list(round(X));
fmt(X, D) -> float_to_list(float(X), [{decimals, D}]).

sh(Cmd) -> string:trim(os:cmd(Cmd)).

rounds() ->
    round(env_number("DYNTRACE_BENCH_ROUNDS", 9)).

sends() ->
    max(1000, round(?SENDS * env_number("DYNTRACE_BENCH_SCALE", 1.0))).

env_number(Name, Default) ->
    Text = os:getenv(Name, ""),
    try list_to_float(Text) catch error:badarg ->
            try list_to_integer(Text) catch error:badarg -> Default end
    end.
