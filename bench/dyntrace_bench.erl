%%% @doc `make bench': what tracing costs a node, dyntrace against the VM's
%%% own ways of tracing, measured side by side in one run.
%%%
%%% Each workload is a real Erlang workload (message ping-pong, a tight loop
%%% of traced calls, spawn/link/register/exit churn, sends of huge terms).
%%% Each round runs it once per configuration, the configurations in a
%%% rotating order so that a burst of load from elsewhere on the machine
%%% does not always hit the same one:
%%%
%%% - `untraced': no tracing at all, the baseline;
%%% - `floor_discard' / `floor_trace': `floor_tracer', a C tracer module
%%%   that answers `discard' (or `trace') and writes nothing: the least a
%%%   switched-off (or switched-on) tracer module can cost;
%%% - `probe_off': dyntrace attached, its LTTng events not enabled;
%%% - `probe_on': dyntrace attached, the events enabled in a running LTTng
%%%   session (discard mode, default buffers);
%%% - `limit' (send workload only): `limit_tracer', a C tracer module that
%%%   writes the same `message_send' tracepoint into the same session with
%%%   constant texts of the real lengths: the VM's dispatch plus one
%%%   tracepoint, the least an LTTng tracer can add per event;
%%% - `dbg_port': `dbg:trace_port(file, ...)', the binary trace file port;
%%% - `dbg_process': `dbg:tracer(process, ...)' with a handler that
%%%   `io:format's every message (`~p') to `/dev/null'.
%%%
%%% Wall time is the workload's own time, from `go' to its last process
%%% reporting done. A process tracer or a trace port may still be writing
%%% then: the time until it has caught up is reported apart ("drain").
%%%
%%% Usage (the `bench' target of the Makefile does this):
%%% ```
%%% erl -noshell -pa _build/default/lib/dyntrace/ebin -pa _build/bench \
%%%     -eval 'dyntrace_bench:main(["BENCHMARKS.md"])'
%%% '''
%%% `DYNTRACE_BENCH_ROUNDS' (default 7; the send workload runs twice as
%%% many, since its ratio against the limit is the closest call and a
%%% ping-pong round is short), `DYNTRACE_BENCH_SCALE' (default 1.0,
%%% multiplies the workload sizes) and `DYNTRACE_BENCH_ONLY' (a comma list
%%% of workloads) shorten a trial run.
-module(dyntrace_bench).

-export([main/1]).
%%% PRIVATE EXPORTS %%%
-export([churn_child/0]).

-define(CONFIGS, [untraced, floor_discard, probe_off, floor_trace, probe_on, limit,
                  dbg_port, dbg_process]).
%% The limit tracer writes message_send only, with the send workload's texts.
-define(LIMIT_WORKLOADS, [send]).
%% Beyond this, the node's memory is the run's problem, not the figure:
%% a process tracer over it is killed (with the io server it writes
%% through, which is where `io:format' does its formatting) and its round
%% marked capped.
-define(MEMORY_LIMIT, (2 * 1024 * 1024 * 1024)).
-define(SAMPLE_MS, 10).
-define(MB, (1024 * 1024)).
%% The huge workload's sends: three terms to a live process, then to an
%% exited one.
-define(HUGE_SENDS, [1, 2, 3, 4, 5, 6]).

-type config() :: untraced | floor_discard | probe_off | floor_trace | probe_on
                | limit | dbg_port | dbg_process.
-type workload() :: #{name := atom(), title := string(), events := [atom()],
                      flags := [atom()], params := map(), rounds := pos_integer(),
                      cap_ms := pos_integer(), round_cap_ms := pos_integer()}.
-type run() :: #{wall_us := non_neg_integer(), drain_us := non_neg_integer(),
                 peak := non_neg_integer(), at_done := non_neg_integer(),
                 qmax := non_neg_integer(), count := non_neg_integer() | undefined,
                 detail := [non_neg_integer()], consumer_ms := integer(),
                 capped := boolean(), contaminated := boolean()}.

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc Runs every workload in every configuration and writes the report
%% to `Out' (also printed); halts the node, non-zero on failure.
-spec main([string()]) -> no_return().
main([Out]) ->
    try
        Start = erlang:monotonic_time(millisecond),
        ok = lttng_session:ensure_daemon(),
        {module, dyntrace} = code:ensure_loaded(dyntrace),
        {module, floor_tracer} = code:ensure_loaded(floor_tracer),
        {module, limit_tracer} = code:ensure_loaded(limit_tracer),
        {module, bench_callee} = code:ensure_loaded(bench_callee),
        ok = lttng_session:wait_registered(),
        Machine = machine(),
        Results = [run_workload(W) || #{name := N} = W <- workloads(), selected(N)],
        Secs = (erlang:monotonic_time(millisecond) - Start) div 1000,
        Report = report(Machine, Results, Secs),
        ok = file:write_file(Out, Report),
        io:put_chars(Report),
        halt(0)
    catch
        Class:Reason:Stack ->
            io:format(standard_error, "bench failed: ~p:~p~n~p~n", [Class, Reason, Stack]),
            halt(1)
    end.

%% @doc A child of the spawn-churn workload: registers itself and exits.
-spec churn_child() -> ok.
churn_child() ->
    true = register(bench_churn_child, self()),
    ok.

%%%===================================================================
%%% WORKLOADS
%%%===================================================================

-spec workloads() -> [workload()].
workloads() ->
    Scale = scale(),
    Rounds = rounds(),
    N = fun(X) -> max(1, round(X * Scale)) end,
    [#{name => send,
       title => "send: 8 pairs ping-ponging a 100-byte binary",
       events => [message_send], flags => [send],
       params => #{pairs => 8, trips => N(10000)},
       rounds => 2 * Rounds, cap_ms => 150000, round_cap_ms => 60000},
     #{name => call,
       title => "call: local calls to a traced function, exception_trace",
       events => [function_call, function_return, function_exception],
       flags => [call],
       params => #{calls => N(100000)},
       rounds => Rounds, cap_ms => 150000, round_cap_ms => 60000},
     #{name => spawn,
       title => "spawn: spawn_link, register, exit churn",
       events => [process_spawn, process_link, process_exit, process_register],
       flags => [procs, set_on_spawn],
       params => #{children => N(10000)},
       rounds => Rounds, cap_ms => 150000, round_cap_ms => 60000},
     #{name => huge,
       title => "huge: 3M-element list, 2M-deep nesting, 64 MiB binary, each to a live "
                "and to an exited process",
       events => [message_send], flags => [send],
       params => #{list => 3000000, depth => 2000000, binary => 64 * ?MB},
       rounds => min(Rounds, 5), cap_ms => 40000, round_cap_ms => 30000}].

%% A started workload: its processes wait for `go'.
start(send, #{pairs := Pairs, trips := Trips}) ->
    Parent = self(),
    Bin = binary:copy(<<"0123456789">>, 10),
    Ps = [begin
              Pong = spawn(fun() -> receive {peer, P} -> pong(P) end end),
              Ping = spawn(fun() ->
                                   receive go -> ok end,
                                   ping(Pong, Trips, Bin),
                                   done(Parent)
                           end),
              Pong ! {peer, Ping},
              {Ping, Pong}
          end || _ <- lists:seq(1, Pairs)],
    Pings = [P || {P, _} <- Ps],
    Pongs = [P || {_, P} <- Ps],
    #{traced => Pings ++ Pongs, go => Pings, stop => Pongs, message => Bin};
start(call, #{calls := Calls}) ->
    Parent = self(),
    W = spawn(fun() -> receive go -> ok end, call_loop(Calls), done(Parent) end),
    #{traced => [W], go => [W], stop => []};
start(spawn, #{children := Children}) ->
    Parent = self(),
    W = spawn(fun() ->
                      process_flag(trap_exit, true),
                      receive go -> ok end,
                      churn(Children),
                      done(Parent)
              end),
    #{traced => [W], go => [W], stop => []};
start(huge, #{list := Len, depth := Depth, binary := Bytes}) ->
    Parent = self(),
    Sink = spawn(fun() -> receive {peer, P} -> sink(P) end end),
    %% A send to a process that has exited copies nothing: its time is the
    %% tracer's work alone.
    {Dead, Ref} = spawn_monitor(fun() -> ok end),
    receive {'DOWN', Ref, process, Dead, _} -> ok end,
    Sender = spawn(fun() ->
                           Terms = [lists:seq(1, Len), nest(Depth, []), <<0:(Bytes * 8)>>],
                           Parent ! {ready, self()},
                           receive go -> ok end,
                           Times = [send_timed(Sink, T) || T <- Terms]
                               ++ [send_timed(Dead, T) || T <- Terms],
                           done(Parent, Times)
                   end),
    Sink ! {peer, Sender},
    receive {ready, Sender} -> ok end,
    #{traced => [Sender], go => [Sender], stop => [Sink]}.

ping(_Pong, 0, _Bin) -> ok;
ping(Pong, K, Bin) ->
    Pong ! Bin,
    receive B when is_binary(B) -> ping(Pong, K - 1, Bin) end.

pong(Peer) ->
    receive
        stop -> ok;
        Msg -> Peer ! Msg, pong(Peer)
    end.

call_loop(0) -> ok;
call_loop(I) ->
    _ = try bench_callee:step(I) catch throw:_ -> ok end,
    call_loop(I - 1).

churn(0) -> ok;
churn(K) ->
    C = spawn_link(?MODULE, churn_child, []),
    receive {'EXIT', C, _} -> churn(K - 1) end.

sink(Peer) ->
    receive
        stop -> ok;
        _ -> Peer ! {ack, self()}, sink(Peer)
    end.

nest(0, Acc) -> Acc;
nest(D, Acc) -> nest(D - 1, [Acc]).

%% Tracing stops before the report, so only the workload's events count.
done(Parent) ->
    done(Parent, []).

done(Parent, Detail) ->
    _ = erlang:trace(self(), false, [all]),
    Parent ! {done, self(), Detail}.

%% The time of the send itself (the copy and the tracer's work), in us;
%% a live sink acknowledges, so that sends do not pile up.
send_timed(To, Term) ->
    T0 = erlang:monotonic_time(microsecond),
    To ! Term,
    T1 = erlang:monotonic_time(microsecond),
    case is_process_alive(To) of
        true -> receive {ack, To} -> T1 - T0 end;
        false -> T1 - T0
    end.

%%%===================================================================
%%% RUNNING
%%%===================================================================

run_workload(#{name := Name, events := Events, rounds := Rounds} = W) ->
    log("~p: warm-up", [Name]),
    _ = run_once(W, untraced, undefined),
    Session = lttng_session:create("bench_" ++ atom_to_list(Name), Events),
    ok = lttng_session:track_self(Session),
    try
        Runs = run_rounds(W, Session, 1, Rounds, #{}),
        {Recorded, Discarded} = count_lttng(Session),
        log("~p: lttng recorded ~b, discarded ~b", [Name, Recorded, Discarded]),
        #{workload => W, runs => Runs, recorded => Recorded, discarded => Discarded}
    after
        lttng_session:destroy(Session)
    end.

run_rounds(_W, _S, R, Rounds, Acc) when R > Rounds ->
    maps:map(fun(_, Rs) -> lists:reverse(Rs) end, Acc);
run_rounds(#{name := Name, cap_ms := Cap} = W, S, R, Rounds, Acc) ->
    Order = [C || C <- rotate(?CONFIGS, R - 1),
                  C =/= limit orelse lists:member(Name, ?LIMIT_WORKLOADS)],
    Acc1 = lists:foldl(
             fun(Config, A) ->
                     Done = maps:get(Config, A, []),
                     Spent = lists:sum([Wall + Drain || #{wall_us := Wall, drain_us := Drain} <- Done]) div 1000,
                     case Done =/= [] andalso Spent > Cap of
                         true ->
                             A;
                         false ->
                             Run = run_once(W, Config, S),
                             log("~p round ~b ~p: ~.1f ms (drain ~.1f ms)~s",
                                 [Name, R, Config, maps:get(wall_us, Run) / 1000,
                                  maps:get(drain_us, Run) / 1000,
                                  [" CAPPED" || maps:get(capped, Run)]]),
                             A#{Config => [Run | Done]}
                     end
             end, Acc, Order),
    run_rounds(W, S, R + 1, Rounds, Acc1).

rotate(L, N) ->
    K = N rem length(L),
    {A, B} = lists:split(K, L),
    B ++ A.

-spec run_once(workload(), config(), lttng_session:session() | undefined) -> run().
run_once(#{name := Name, params := Params, flags := Flags, events := Events,
           round_cap_ms := RoundCap}, Config, Session) ->
    garbage_collect(),
    Work = start(Name, Params),
    Contaminated = prepare_lttng(Config, Session, Events),
    Tracer = attach(Config, Name, Work, Flags),
    Sampler = start_sampler(tracer_id(Tracer), tracer_pids(Tracer)),
    Consumer0 = consumer_cpu_ms(),
    T0 = erlang:monotonic_time(microsecond),
    _ = [P ! go || P <- maps:get(go, Work)],
    {Finished, Detail} = wait_done(maps:get(go, Work), RoundCap, []),
    Capped = Finished =/= ok,
    T1 = erlang:monotonic_time(microsecond),
    AtDone = erlang:memory(total),
    {DrainCapped, Count} = drain(Tracer, RoundCap),
    T2 = erlang:monotonic_time(microsecond),
    {Peak, QMax, Killed} = stop_sampler(Sampler),
    detach(Config, Name, Work),
    finish_lttng(Config, Session, Events),
    Consumer = consumer_cpu_ms() - Consumer0,
    #{wall_us => T1 - T0, drain_us => T2 - T1, peak => Peak, at_done => AtDone,
      qmax => QMax, count => Count, capped => Capped orelse DrainCapped orelse Killed,
      detail => Detail, consumer_ms => Consumer,
      contaminated => Contaminated}.

%% probe_on starts the session and waits for the node to see the events;
%% every other configuration waits for them to be off (another run's
%% session may still be winding down) and reports if they are not.
prepare_lttng(probe_on, S, Events) ->
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled(Events),
    false;
prepare_lttng(limit, S, Events) ->
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled(Events),
    ok = lttng_session:wait_until(fun limit_tracer:is_enabled/0, 100),
    false;
prepare_lttng(_, _, Events) ->
    wait_disabled(Events, 30) =/= ok.

finish_lttng(Config, S, Events) when Config =:= probe_on; Config =:= limit ->
    ok = lttng_session:stop(S),
    _ = wait_disabled(Events, 50),
    ok;
finish_lttng(_, _, _) ->
    ok.

%% CPU time of the LTTng consumer daemons, which copy the ring buffers to
%% disk: on 2 cores, time they take is time the node does not get. They
%% serve every session on the machine, so this is an upper bound.
consumer_cpu_ms() ->
    Pids = string:lexemes(os:cmd("pgrep -x lttng-consumerd"), "\n"),
    lists:sum([cpu_ms(P) || P <- Pids]).

cpu_ms(Pid) ->
    case file:read_file("/proc/" ++ Pid ++ "/stat") of
        {ok, Stat} ->
            [_, AfterComm] = binary:split(Stat, <<") ">>),
            Fields = binary:split(AfterComm, <<" ">>, [global]),
            %% utime and stime, fields 14 and 15 of stat(5), in 10 ms ticks.
            (binary_to_integer(lists:nth(12, Fields)) + binary_to_integer(lists:nth(13, Fields))) * 10;
        {error, _} ->
            0
    end.

wait_disabled(_Events, 0) ->
    contaminated;
wait_disabled(Events, N) ->
    case [E || E <- dyntrace:enabled_events(), lists:member(E, Events)] of
        [] -> ok;
        _ -> timer:sleep(100), wait_disabled(Events, N - 1)
    end.

attach(untraced, _, _, _) ->
    none;
attach(Config, Name, #{traced := Pids} = Work, Flags) ->
    Tracer = tracer(Config),
    Config =:= limit andalso set_limit_texts(Work),
    _ = [erlang:trace(P, true, [tracer_flag(Tracer) | Flags]) || P <- Pids],
    Name =:= call andalso
        erlang:trace_pattern({bench_callee, '_', '_'}, [{'_', [], [{exception_trace}]}], [local]),
    Tracer.

tracer(probe_off) -> {module, dyntrace};
tracer(probe_on) -> {module, dyntrace};
tracer(limit) -> {module, limit_tracer};
tracer(floor_discard) -> ok = floor_tracer:set_answer(discard), _ = floor_tracer:take_count(), {floor, floor_tracer};
tracer(floor_trace) -> ok = floor_tracer:set_answer(trace), _ = floor_tracer:take_count(), {floor, floor_tracer};
tracer(dbg_port) ->
    File = filename:join(trace_dir(), "dbg_port_" ++ os:getpid() ++ ".trace"),
    _ = file:delete(File),
    {ok, _} = dbg:tracer(port, dbg:trace_port(file, File)),
    {ok, Port} = dbg:get_tracer(),
    {port, Port, File};
tracer(dbg_process) ->
    {ok, Fd} = file:open("/dev/null", [write]),
    C = counters:new(1, []),
    Handler = fun(M, {F, Cs}) -> io:format(F, "~p~n", [M]), counters:add(Cs, 1, 1), {F, Cs} end,
    {ok, _} = dbg:tracer(process, {Handler, {Fd, C}}),
    {ok, Pid} = dbg:get_tracer(),
    {process, Pid, Fd, C}.

%% The texts dyntrace writes for a ping's send to its pong.
set_limit_texts(#{go := [Ping | _], stop := [Pong | _], message := Message}) ->
    ok = limit_tracer:set_texts(pid_to_list(Ping), pid_to_list(Pong),
                                dyntrace:format_term(Message, 1024)).

tracer_flag({module, M}) -> {tracer, M, []};
tracer_flag({floor, M}) -> {tracer, M, []};
tracer_flag({port, Port, _}) -> {tracer, Port};
tracer_flag({process, Pid, _, _}) -> {tracer, Pid}.

tracer_id({port, Port, _}) -> Port;
tracer_id({process, Pid, _, _}) -> Pid;
tracer_id(_) -> undefined.

tracer_pids({process, Pid, Fd, _}) -> [Pid, Fd];
tracer_pids(_) -> [].

%% Waits until the tracer has written everything; the events it handled.
drain(none, _) ->
    {false, undefined};
drain({module, _}, _) ->
    {false, undefined};
drain({floor, M}, _) ->
    {false, M:take_count()};
drain({port, Port, File}, Cap) ->
    Self = self(),
    F = spawn(fun() ->
                      Flushed = try dbg:flush_trace_port() catch _:_ -> failed end,
                      Self ! {flushed, self(), Flushed}
              end),
    Capped = receive {flushed, F, _} -> false after Cap -> exit(F, kill), true end,
    _ = Port,
    stop_dbg(),
    {Count, _Dropped} = count_trace_file(File),
    _ = file:delete(File),
    {Capped, Count};
drain({process, Pid, Fd, C}, Cap) ->
    Deadline = erlang:monotonic_time(millisecond) + Cap,
    Capped = wait_idle(Pid, Deadline) =/= ok,
    Capped andalso [exit(P, kill) || P <- [Pid, Fd]],
    stop_dbg(),
    _ = file:close(Fd),
    {Capped, counters:get(C, 1)}.

%% dbg's server dies with a tracer we killed; either way it is gone after.
stop_dbg() ->
    _ = try dbg:stop() catch _:_ -> ok end,
    case whereis(dbg) of
        undefined -> ok;
        Dbg -> exit(Dbg, kill), timer:sleep(10), stop_dbg()
    end.

%% dbg's tracer takes its whole mailbox at once, then writes it: it is idle
%% when its mailbox is empty and it waits in its receive.
wait_idle(Pid, Deadline) ->
    case erlang:process_info(Pid, [message_queue_len, status, current_function]) of
        undefined -> killed;
        [{message_queue_len, 0}, {status, waiting},
         {current_function, {dbg, recv_all_traces, 3}}] -> ok;
        _ ->
            case erlang:monotonic_time(millisecond) > Deadline of
                true -> timeout;
                false -> timer:sleep(2), wait_idle(Pid, Deadline)
            end
    end.

detach(Config, Name, #{traced := Traced, stop := Stop}) ->
    _ = [try erlang:trace(P, false, [all]) catch error:badarg -> 0 end || P <- Traced],
    Config =/= untraced andalso Name =:= call andalso
        erlang:trace_pattern({bench_callee, '_', '_'}, false, [local]),
    _ = [begin exit(P, kill) end || P <- Traced, not lists:member(P, Stop)],
    _ = [P ! stop || P <- Stop],
    ok.

wait_done([], _, Detail) -> {ok, Detail};
wait_done([P | Ps], Cap, Detail) ->
    receive
        {done, P, D} -> wait_done(Ps, Cap, Detail ++ D)
    after Cap ->
            _ = [exit(Q, kill) || Q <- [P | Ps]],
            {timeout, Detail}
    end.

%% The binary trace file: <<0, Size:32, Term/binary>> per message, or
%% <<1, Dropped:32>> where the port dropped messages.
count_trace_file(File) ->
    case file:open(File, [read, raw, binary]) of
        {ok, Fd} ->
            try count_entries(Fd, 0, 0, 0) after file:close(Fd) end;
        {error, _} ->
            {0, 0}
    end.

count_entries(Fd, Pos, N, Dropped) ->
    case file:pread(Fd, Pos, 5) of
        {ok, <<0, Size:32>>} -> count_entries(Fd, Pos + 5 + Size, N + 1, Dropped);
        {ok, <<1, D:32>>} -> count_entries(Fd, Pos + 5, N, Dropped + D);
        _ -> {N, Dropped}
    end.

%% Events in the session's trace and the events LTTng discarded (see
%% lttng_session:recorded/1 and discarded/1).
count_lttng(S) ->
    {lttng_session:recorded(S), lttng_session:discarded(S)}.

%%%===================================================================
%%% MEMORY SAMPLER
%%%===================================================================

start_sampler(Tracer, Victims) ->
    spawn_link(fun() ->
                       process_flag(priority, max),
                       sample(Tracer, Victims, erlang:memory(total), 0, false)
               end).

sample(Tracer, Victims, Peak, QMax, Killed) ->
    Mem = erlang:memory(total),
    Q = queue_len(Tracer),
    Kill = Mem > ?MEMORY_LIMIT andalso Victims =/= [] andalso not Killed,
    Kill andalso [exit(P, kill) || P <- Victims],
    receive
        {stop, From} -> From ! {sampled, self(), max(Peak, Mem), max(QMax, Q), Killed orelse Kill}
    after ?SAMPLE_MS ->
            sample(Tracer, Victims, max(Peak, Mem), max(QMax, Q), Killed orelse Kill)
    end.

queue_len(Pid) when is_pid(Pid) ->
    case erlang:process_info(Pid, message_queue_len) of
        {message_queue_len, N} -> N;
        undefined -> 0
    end;
queue_len(Port) when is_port(Port) ->
    case erlang:port_info(Port, queue_size) of
        {queue_size, N} -> N;
        undefined -> 0
    end;
queue_len(_) ->
    0.

stop_sampler(S) ->
    unlink(S),
    S ! {stop, self()},
    receive {sampled, S, Peak, QMax, Killed} -> {Peak, QMax, Killed} end.

%%%===================================================================
%%% REPORT
%%%===================================================================

report(Machine, Results, Secs) ->
    [<<"# Benchmarks\n\n">>,
     "Generated by `make bench` (`bench/run.sh`, `bench/dyntrace_bench.erl`); do not edit by hand.\n\n",
     machine_md(Machine, Secs),
     method_md(),
     [workload_md(R) || R <- Results],
     targets_md(Results)].

machine_md(#{nproc := NProc, cpu := Cpu, otp := Otp, lttng := Lttng, bt := Bt,
             kernel := Kernel, load := Load, sessions := Sessions, date := Date}, Secs) ->
    io_lib:format(
      "## Machine and command\n\n"
      "- date: ~s\n- CPU: ~s, `nproc` = ~s\n- kernel: ~s\n- OTP ~s, ~s\n- ~s; ~s\n"
      "- load average at start: ~s (the machine is shared: other work ran during the run)\n"
      "- other LTTng recording sessions on the daemon at start: ~b\n"
      "- command: `make bench` (rounds ~b, send ~b, scale ~s, workloads ~s); run time ~b s\n\n",
      [Date, Cpu, NProc, Kernel, Otp, erlang:system_info(system_version) -- "\n",
       Lttng, Bt, Load, Sessions, rounds(), 2 * rounds(), float_to_list(scale(), [{decimals, 2}]),
       case os:getenv("DYNTRACE_BENCH_ONLY") of false -> "all"; O -> O end, Secs]).

method_md() ->
    "## How to read the tables\n\n"
    "Each round runs the workload once per configuration (order rotating per round); "
    "a row gives the median wall time of its rounds and the min-max. "
    "Wall time is the traced workload's own time; **drain** is the time a `dbg` tracer "
    "needed afterwards to catch up (its mailbox or port queue empty, its file flushed). "
    "LTTng's consumer daemon writes the trace outside the node and is not in either figure (its CPU time is given under the targets).\n\n"
    "- `untraced`: no tracing. `floor_discard` / `floor_trace`: `bench/floor_tracer.c`, a NIF "
    "tracer that answers `discard` / `trace` and writes nothing (the VM's own dispatch cost).\n"
    "- `probe_off`: dyntrace attached, the LTTng events not enabled. `probe_on`: enabled in a "
    "running session (discard mode, default channel).\n"
    "- `limit` (send only): `bench/limit_tracer.c`, a NIF tracer that writes the same "
    "`message_send` tracepoint into the same session with constant texts of the lengths dyntrace "
    "writes: the VM's dispatch plus one tracepoint, no term read. The `probe_on` events column "
    "counts the events of both (per recording round).\n"
    "- `dbg_port`: `dbg:tracer(port, dbg:trace_port(file, F))`. `dbg_process`: "
    "`dbg:tracer(process, {fun(M, Fd) -> io:format(Fd, \"~p~n\", [M]), Fd end, Fd})` to `/dev/null`.\n"
    "- **x untraced**: median / median of `untraced`. **ns/event**: (median - untraced median) / "
    "trace events per round, the events being the `trace*` calls the VM made to `floor_trace` "
    "(every configuration that traces sees the same events). `+drain` adds the drain time.\n"
    "- **events**: per round, as each tracer saw them: `floor_trace` counts its calls, `dbg` "
    "configurations the messages written; `probe_on` the events in the LTTng trace "
    "(babeltrace2's `sink.utils.counter`) and the events LTTng discarded (the channel's "
    "statistics in `lttng list`), over all rounds / rounds. "
    "dyntrace writes no event for tags that map to none (`spawned`, for example), so it can "
    "record fewer than the VM produced.\n"
    "- memory: `erlang:memory(total)`, peak (sampled every 10 ms, drain included) and at the "
    "end of the workload; **queue**: the largest tracer mailbox (`dbg_process`) or port queue "
    "(`dbg_port`) seen.\n"
    "- CAPPED: a round that hit the per-round time cap or the memory limit "
    "(2 GiB; the tracer process and its io server are killed); a configuration stops after its time budget.\n\n".

workload_md(#{workload := #{name := Name, title := Title, params := Params},
              runs := Runs, recorded := Recorded, discarded := Discarded}) ->
    Base = median_wall(maps:get(untraced, Runs, [])),
    Events = events_per_round(Runs),
    %% probe_on and limit rounds both record into the workload's session.
    OnRounds = length(maps:get(probe_on, Runs, [])) + length(maps:get(limit, Runs, [])),
    Header = io_lib:format(
               "## ~s\n\nParameters: `~0p`. Trace events per round (VM): ~s.\n\n"
               "| configuration | rounds | wall ms median (min-max) | x untraced | ns/event | "
               "+drain ns/event | drain ms | events/round | peak MB | end MB | queue |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n",
               [Title, Params, fmt_int(Events)]),
    Rows = [row(C, maps:get(C, Runs, []), Base, Events, {Recorded, Discarded, OnRounds})
            || C <- configs_run(Runs)],
    Extra = case Name of
                huge -> huge_md(Runs, Base);
                _ -> ""
            end,
    [Header, Rows, "\n", Extra].

row(Config, [], _, _, _) ->
    io_lib:format("| ~p | 0 | - | - | - | - | - | - | - | - | - |\n", [Config]);
row(Config, Runs, Base, Events, Lttng) ->
    Walls = [W || #{wall_us := W} <- Runs],
    Totals = [W + D || #{wall_us := W, drain_us := D} <- Runs],
    Med = median(Walls),
    MedTotal = median(Totals),
    Ratio = case Base of undefined -> "-"; _ -> fmt(Med / Base, 2) end,
    %% A handful of events a round: ns per event would only restate the
    %% noise of copying huge terms (the per-send table says it right).
    PerEvent = case Events of
                   N when is_number(N), N < 100 -> "-";
                   _ -> per_event(Med, Base, Events)
               end,
    PerEventTotal = case Config of
                        _ when PerEvent =:= "-" -> "-";
                        dbg_port -> per_event(MedTotal, Base, Events);
                        dbg_process -> per_event(MedTotal, Base, Events);
                        _ -> "-"
                    end,
    Drain = case Config of
                dbg_port -> fmt(median([D || #{drain_us := D} <- Runs]) / 1000, 1);
                dbg_process -> fmt(median([D || #{drain_us := D} <- Runs]) / 1000, 1);
                _ -> "-"
            end,
    Flags = [" CAPPED" || lists:any(fun(#{capped := C}) -> C end, Runs)]
        ++ [" (event enabled elsewhere)" || lists:any(fun(#{contaminated := C}) -> C end, Runs),
                                            Config =:= probe_off],
    io_lib:format("| ~p~s | ~b | ~s (~s-~s) | ~s | ~s | ~s | ~s | ~s | ~s | ~s | ~s |\n",
                  [Config, Flags, length(Runs), fmt(Med / 1000, 1),
                   fmt(lists:min(Walls) / 1000, 1), fmt(lists:max(Walls) / 1000, 1),
                   Ratio, PerEvent, PerEventTotal, Drain, events_cell(Config, Runs, Lttng),
                   fmt(median([P || #{peak := P} <- Runs]) / ?MB, 0),
                   fmt(median([A || #{at_done := A} <- Runs]) / ?MB, 0),
                   queue_cell(Config, Runs)]).

events_cell(probe_on, _Runs, {Recorded, Discarded, Rounds}) when Rounds > 0 ->
    io_lib:format("~s recorded, ~s discarded",
                  [fmt_int(Recorded div Rounds), fmt_int(Discarded div Rounds)]);
events_cell(_, Runs, _) ->
    case [C || #{count := C} <- Runs, C =/= undefined] of
        [] -> "-";
        Cs -> fmt_int(median(Cs))
    end.

queue_cell(Config, Runs) when Config =:= dbg_process; Config =:= dbg_port ->
    fmt_int(lists:max([Q || #{qmax := Q} <- Runs]));
queue_cell(_, _) ->
    "-".

%% The time of each send (`Sink ! Term', the copy and the tracer's work),
%% per term: the whole round is too noisy to show a millisecond.
huge_md(Runs, _Base) ->
    Terms = [T ++ To || To <- [" to a live process", " to an exited process"],
                        T <- ["3M-element list", "2M-deep nesting", "64 MiB binary"]],
    Base = [send_stats(maps:get(untraced, Runs, []), I) || I <- ?HUGE_SENDS],
    Row = fun(C) ->
                  Cells = [huge_cell(send_stats(maps:get(C, Runs, []), I), lists:nth(I, Base))
                           || I <- ?HUGE_SENDS],
                  io_lib:format("| ~p | ~s |\n", [C, lists:join(" | ", Cells)])
          end,
    ["Time of each send itself (`Pid ! Term`: the copy and the tracer's work; a send to an "
     "exited process copies nothing, so there it is the tracer's work alone), "
     "ms median (min-max), and in brackets the extra over `untraced` "
     "(median; min against min):\n\n",
     "| configuration | ", lists:join(" | ", Terms), " |\n|---|---|---|---|---|---|---|\n",
     [Row(C) || C <- configs_run(Runs)], "\n"].

%% The configurations of a workload's table: the limit only where it ran.
configs_run(Runs) ->
    [C || C <- ?CONFIGS, C =/= limit orelse maps:is_key(limit, Runs)].

send_stats(Runs, I) ->
    case [lists:nth(I, D) || #{detail := D} <- Runs, length(D) >= I] of
        [] -> undefined;
        Ts -> {median(Ts), lists:min(Ts), lists:max(Ts)}
    end.

huge_cell(undefined, _) -> "-";
huge_cell({Med, Min, Max}, Base) ->
    Extra = case Base of
                {BMed, BMin, _} ->
                    io_lib:format(" [~s; ~s]", [fmt_signed((Med - BMed) / 1000, 3),
                                                 fmt_signed((Min - BMin) / 1000, 3)]);
                undefined -> ""
            end,
    io_lib:format("~s (~s-~s)~s", [fmt(Med / 1000, 3), fmt(Min / 1000, 3),
                                    fmt(Max / 1000, 3), Extra]).

fmt_signed(X, D) when X >= 0 -> "+" ++ fmt(X, D);
fmt_signed(X, D) -> fmt(X, D).

huge_extra(Runs, Config) ->
    case {[send_stats(maps:get(untraced, Runs, []), I) || I <- ?HUGE_SENDS],
          [send_stats(maps:get(Config, Runs, []), I) || I <- ?HUGE_SENDS]} of
        {Base, Traced} when not is_atom(hd(Base)) ->
            [case {B, T} of
                 {{BMed, BMin, _}, {TMed, TMin, _}} -> {(TMed - BMed) / 1000, (TMin - BMin) / 1000};
                 _ -> undefined
             end || {B, T} <- lists:zip(Base, Traced)];
        _ -> []
    end.

targets_md(Results) ->
    ByName = maps:from_list([{maps:get(name, W), R} || #{workload := W} = R <- Results]),
    Names = [N || N <- [send, call, spawn], maps:is_key(N, ByName)],
    Off = [begin
               #{runs := Runs} = maps:get(N, ByName),
               {N, ratio(Runs, probe_off, floor_discard), ratio(Runs, probe_off, untraced),
                min_ratio(Runs, probe_off, floor_discard)}
           end || N <- Names],
    On = [begin
              #{runs := Runs} = maps:get(N, ByName),
              Base = median_wall(maps:get(untraced, Runs, [])),
              Ev = events_per_round(Runs),
              {N, added(Runs, probe_on, Base, Ev, wall_us), added(Runs, dbg_process, Base, Ev, wall_us),
               added(Runs, dbg_process, Base, Ev, total), added(Runs, floor_trace, Base, Ev, wall_us),
               min_added(Runs, probe_on, Ev)}
          end || N <- Names],
    Huge = case maps:get(huge, ByName, undefined) of
               undefined -> [];
               #{runs := HRuns} -> huge_extra(HRuns, probe_on)
           end,
    ["## Against the targets\n\n",
     "**Probe off**: dyntrace attached with its events off, against the `floor_discard` tracer "
     "(median wall time ratio; target <= 1.05):\n\n",
     [io_lib:format("- ~p: ~s x floor_discard (~s x untraced): ~s; fastest rounds: ~s x floor_discard\n",
                    [N, fmt_opt(X, 2), fmt_opt(U, 2), verdict(X, 1.05), fmt_opt(M, 2)])
      || {N, X, U, M} <- Off],
     "\n**Probe on**, added ns per event (target: <= 550 ns, half of OTP's C backend's ~1100 ns "
     "measured earlier on this kind of machine; and <= 0.6x the `dbg` process tracer). The dbg "
     "figure is given on the traced processes' wall time alone and with the tracer's drain "
     "(the time until its output is written); the VM's own dispatch (`floor_trace`) for "
     "reference:\n\n",
     [io_lib:format("- ~p: dyntrace ~s ns (~s; fastest rounds: ~s ns); dbg process ~s ns wall, "
                    "~s ns with drain; dyntrace / dbg = ~s wall (~s), ~s with drain (~s); "
                    "floor ~s ns\n",
                    [N, fmt_opt(P, 0), verdict(P, 550), fmt_opt(PM, 0), fmt_opt(D, 0), fmt_opt(DT, 0),
                     fmt_opt(safe_div(P, D), 2), verdict(safe_div(P, D), 0.6),
                     fmt_opt(safe_div(P, DT), 2), verdict(safe_div(P, DT), 0.6), fmt_opt(F, 0)])
      || {N, P, D, DT, F, PM} <- On],
     limit_md(maps:get(send, ByName, undefined)),
     "\n\"Fastest rounds\" compares the minimum wall times instead of the medians: "
     "the least disturbed run of each configuration. \"Paired by round\" takes the ratio "
     "of added time within each round, whose `untraced`, `probe_on` and `limit` runs are close "
     "in time, and gives the median over the rounds.\n\n"
     "The LTTng consumer daemon copies the ring buffers out while the node runs; on 2 cores its "
     "CPU time is taken from the node. Its CPU time per `probe_on` round (start to `lttng stop`, "
     "median; it serves every session on the machine, so an upper bound) against the round's "
     "wall time:\n\n",
     [begin
          #{runs := Runs} = maps:get(N, ByName),
          Rs = maps:get(probe_on, Runs, []),
          case Rs of
              [] -> "";
              _ -> io_lib:format("- ~p: ~s ms consumer CPU, ~s ms wall\n",
                                 [N, fmt_int(median([C || #{consumer_ms := C} <- Rs])),
                                  fmt(median([W || #{wall_us := W} <- Rs]) / 1000, 0)])
          end
      end || N <- Names],
     memory_md(maps:get(send, ByName, undefined)),
     case Huge of
         [_, _, _, _, _, _] ->
             ["\n**Huge messages**, extra ms per traced send with the probe on (target <= 1 ms), "
              "median-based / min-based. The verdict is on the sends to an exited process, "
              "where the time is the tracer's work alone; a live send copies the term, and that "
              "copy varies by several ms from round to round here (see `floor_trace`, which "
              "does no work at all, in the table above):\n\n",
              [case X of
                   {Med, Min} ->
                       Verdict = case string:find(T, "exited") of
                                     nomatch -> "(copy noise)";
                                     _ -> verdict(max(Med, Min), 1.0)
                                 end,
                       io_lib:format("- ~s: ~s / ~s ms: ~s\n",
                                     [T, fmt(Med, 2), fmt(Min, 2), Verdict]);
                   undefined -> io_lib:format("- ~s: -\n", [T])
               end || {T, X} <- lists:zip([T ++ To || To <- [" to a live process", " to an exited process"],
                                                      T <- ["3M-element list", "2M-deep nesting", "64 MiB binary"]],
                                          Huge)]];
         _ -> ""
     end,
     "\n"].

%% dyntrace's added cost per event against the limit tracer's. The
%% verdict is on the medians; the paired figure takes the ratio within
%% each round (its three runs close in time, so a slow spell on the
%% machine moves all three) and gives the median over the rounds.
limit_md(undefined) -> "";
limit_md(#{runs := Runs}) ->
    Base = median_wall(maps:get(untraced, Runs, [])),
    Ev = events_per_round(Runs),
    P = added(Runs, probe_on, Base, Ev, wall_us),
    L = added(Runs, limit, Base, Ev, wall_us),
    Floor = added(Runs, floor_trace, Base, Ev, wall_us),
    Ratio = safe_div(P, L),
    MinRatio = safe_div(min_added(Runs, probe_on, Ev), min_added(Runs, limit, Ev)),
    io_lib:format("\n**Against the limit** (send): dyntrace adds ~s ns per event, the limit "
                  "tracer (the VM's dispatch, ~s ns, plus one tracepoint of the same texts) "
                  "~s ns: ~s x the limit (target <= 1.25: ~s; fastest rounds: ~s x; "
                  "paired by round: ~s x, ~s of ~b rounds at most 1.25~s).\n",
                  [fmt_opt(P, 0), fmt_opt(Floor, 0), fmt_opt(L, 0), fmt_opt(Ratio, 2),
                   verdict(Ratio, 1.25), fmt_opt(MinRatio, 2)]
                  ++ paired_ratio(Runs)).

%% The ratio of added wall time, probe_on against limit, within each round:
%% the median, how many rounds are at most 1.25, the number of rounds, and
%% a note of the rounds left out, where the limit took no longer than
%% untraced (no ratio). Only when all three ran every round (none was cut
%% by its time budget), so that the n-th run of each is the same round's.
paired_ratio(Runs) ->
    ByRound = fun(C) -> [W || #{wall_us := W} <- maps:get(C, Runs, [])] end,
    {Us, Ps, Ls} = {ByRound(untraced), ByRound(probe_on), ByRound(limit)},
    Rounds = case length(Us) =:= length(Ps) andalso length(Ps) =:= length(Ls) of
                 true -> lists:zip3(Us, Ps, Ls);
                 false -> []
             end,
    Ratios = [(Pr - U) / (Lr - U) || {U, Pr, Lr} <- Rounds, Lr > U],
    LeftOut = case length(Rounds) - length(Ratios) of
                  0 -> "";
                  N -> io_lib:format(", ~b left out: the limit no slower than untraced", [N])
              end,
    case Ratios of
        [] -> ["-", "-", length(Rounds), LeftOut];
        _ -> [fmt(median(Ratios), 2), integer_to_list(length([R || R <- Ratios, R =< 1.25])),
              length(Rounds), LeftOut]
    end.

verdict(undefined, _) -> "-";
verdict(X, Limit) when X =< Limit -> "meets";
verdict(_, _) -> "**misses**".

memory_md(undefined) -> "";
memory_md(#{runs := Runs}) ->
    Line = fun(C) ->
                   case maps:get(C, Runs, []) of
                       [] -> "";
                       Rs -> io_lib:format("- ~p: peak ~s MB (max over rounds ~s MB), tracer queue max ~s\n",
                                           [C, fmt(median([P || #{peak := P} <- Rs]) / ?MB, 0),
                                            fmt(lists:max([P || #{peak := P} <- Rs]) / ?MB, 0),
                                            fmt_int(lists:max([Q || #{qmax := Q} <- Rs]))])
                   end
           end,
    ["\n**Memory** in the send workload (`erlang:memory(total)`; target: flat with the probe on "
     "where the dbg process tracer's mailbox grows):\n\n",
     [Line(C) || C <- [untraced, probe_on, dbg_port, dbg_process]]].

ratio(Runs, A, B) ->
    case {median_wall(maps:get(A, Runs, [])), median_wall(maps:get(B, Runs, []))} of
        {X, Y} when is_number(X), is_number(Y), Y > 0 -> X / Y;
        _ -> undefined
    end.

added(Runs, Config, Base, Events, Which) when is_number(Base), is_integer(Events), Events > 0 ->
    case maps:get(Config, Runs, []) of
        [] -> undefined;
        Rs ->
            Med = case Which of
                      wall_us -> median([W || #{wall_us := W} <- Rs]);
                      total -> median([W + D || #{wall_us := W, drain_us := D} <- Rs])
                  end,
            (Med - Base) * 1000 / Events
    end;
added(_, _, _, _, _) ->
    undefined.

min_ratio(Runs, A, B) ->
    case {maps:get(A, Runs, []), maps:get(B, Runs, [])} of
        {[_ | _] = RA, [_ | _] = RB} ->
            lists:min([W || #{wall_us := W} <- RA]) / max(1, lists:min([W || #{wall_us := W} <- RB]));
        _ -> undefined
    end.

min_added(Runs, Config, Events) when is_integer(Events), Events > 0 ->
    case {maps:get(Config, Runs, []), maps:get(untraced, Runs, [])} of
        {[_ | _] = RC, [_ | _] = RU} ->
            (lists:min([W || #{wall_us := W} <- RC]) - lists:min([W || #{wall_us := W} <- RU]))
                * 1000 / Events;
        _ -> undefined
    end;
min_added(_, _, _) ->
    undefined.

safe_div(A, B) when is_number(A), is_number(B), B > 0 -> A / B;
safe_div(_, _) -> undefined.

events_per_round(Runs) ->
    case [C || #{count := C} <- maps:get(floor_trace, Runs, []), is_integer(C)] of
        [] -> undefined;
        %% An even number of rounds gives the mean of the middle two.
        Cs -> round(median(Cs))
    end.

per_event(_Med, undefined, _) -> "-";
per_event(_Med, _Base, undefined) -> "-";
per_event(_Med, _Base, 0) -> "-";
per_event(Med, Base, Events) -> fmt((Med - Base) * 1000 / Events, 0).

median_wall([]) -> undefined;
median_wall(Runs) -> median([W || #{wall_us := W} <- Runs]).

median(L) ->
    S = lists:sort(L),
    N = length(S),
    case N rem 2 of
        1 -> lists:nth(N div 2 + 1, S);
        0 -> (lists:nth(N div 2, S) + lists:nth(N div 2 + 1, S)) / 2
    end.

fmt_opt(undefined, _) -> "-";
fmt_opt(X, D) -> fmt(X, D).

fmt(X, 0) -> integer_to_list(round(X));
fmt(X, D) -> float_to_list(float(X), [{decimals, D}]).

fmt_int(undefined) -> "-";
fmt_int(N) when is_float(N) -> fmt_int(round(N));
fmt_int(N) -> integer_to_list(N).

%%%===================================================================
%%% MACHINE
%%%===================================================================

machine() ->
    Sh = fun(C) -> string:trim(os:cmd(C)) end,
    #{nproc => Sh("nproc"),
      cpu => Sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-"),
      kernel => Sh("uname -srm"),
      otp => erlang:system_info(otp_release) ++ " (erts " ++ erlang:system_info(version) ++ ")",
      lttng => hd(string:split(Sh("lttng --version"), " - ")),
      bt => Sh("babeltrace2 --version | head -1"),
      load => Sh("cut -d' ' -f1-3 /proc/loadavg"),
      sessions => list_to_integer(Sh("lttng list | grep -c '\\[active\\]' || true")),
      date => Sh("date -u '+%Y-%m-%d %H:%M UTC'")}.

%% DYNTRACE_BENCH_ONLY=send,huge runs only those workloads.
selected(Name) ->
    case os:getenv("DYNTRACE_BENCH_ONLY") of
        false -> true;
        Only -> lists:member(atom_to_list(Name), string:lexemes(Only, ", "))
    end.

rounds() ->
    case os:getenv("DYNTRACE_BENCH_ROUNDS") of
        false -> 7;
        R -> list_to_integer(R)
    end.

scale() ->
    case os:getenv("DYNTRACE_BENCH_SCALE") of
        false -> 1.0;
        S -> try list_to_float(S) catch error:badarg -> float(list_to_integer(S)) end
    end.

trace_dir() ->
    Dir = "/tmp/dyntrace-bench",
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Dir.

log(Fmt, Args) ->
    io:format(standard_error, "[bench] " ++ Fmt ++ "~n", Args).
