%%% @doc `dyntrace:record(triage, Opts)': what `dyntrace-analyze findings'
%%% needs from a busy node, at a bounded cost. For every process only the
%%% rare events (spawn, exit, names) and the memory sampler's figures; every
%%% `period' ms the controller here singles out a few processes (most
%%% reductions, longest queue, largest heap) and traces their messages,
%%% scheduling and GCs, with stack samples, for one short window bracketed
%%% by `dyntrace_focus' marks. What a triage trace holds, how to read its
%%% windows and why it is safe on a production node: docs/recording.md.
-module(dyntrace_triage).

%%% PUBLIC (through dyntrace_record) %%%
-export([items/1, plan/2, events/1]).

%%% PUBLIC (through dyntrace_nodes) %%%
-export([warn_cost/1, cost_line/1]).

%%% PRIVATE EXPORTS (dyntrace_sampler's loop) %%%
-export([sampler_init/1, sampler_tick/2]).

-type opts() :: #{interval => pos_integer(),
                  period => pos_integer(),
                  window => pos_integer(),
                  count => pos_integer()}.
-export_type([opts/0]).

%% The numbers: see docs/recording.md ("What triage records and costs")
%% and BENCHMARKS.md for how they were chosen.
-define(PERIOD_MS, 2000).
-define(WINDOW_MS, 150).
-define(COUNT, 3).
-define(SAMPLE_MS, 20).
-define(MAX_COUNT, 64).
-define(MEMORY_MS, 1000).
-define(MEMORY_TOP, 20).
%% A sweep of every process for the memory sampler's top after its first
%% (the top found are read every round): its largest fixed cost.
-define(MEMORY_SWEEP_MS, 5000).
%% Processes one look reads at most.
-define(SCAN_PER_LOOK, 10000).
%% What every process is traced with, and what the singled-out ones are.
-define(EVERY_PROCESS, [process_spawn, process_exit, process_register]).
-define(FOCUS, [messages, scheduling, gc]).
-define(MARK, "dyntrace_focus").
%% What issue 41 accepts: at most 10% more CPU per request.
-define(BUDGET, 0.10).
%% What one event written costs the node, roughly (bench/triage_bench.erl:
%% full tracing on the project's workload; a RabbitMQ broker measured
%% 0.2-0.5 us).
-define(NS_PER_EVENT, 400).
%% How long the estimate watches the node.
-define(WATCH_MS, 200).
%% A node that uses less CPU than this (ns per s: 5% of a core) counts as
%% using this much.
-define(IDLE_NS, 5.0e7).
-define(BROAD, [all, processes, existing, existing_processes, new, new_processes]).

-record(focus, {shared :: map(),
                max_term_bytes :: dyntrace:max_term_bytes(),
                period_ms :: pos_integer(),
                window_ms :: pos_integer(),
                interval_ms :: pos_integer(),
                count :: pos_integer(),
                events :: [dyntrace:event_name()],
                %% When the next look is due (monotonic ms: the sampler's
                %% rounds may be skipped on a loaded node, so time is read,
                %% not rounds counted).
                next_look = 0 :: integer(),
                %% When the open window's next stack samples are due
                %% (monotonic ms).
                next_stacks = 0 :: integer(),
                %% What the last look read of each process: reductions
                %% and queue length.
                last = #{} :: #{pid() => {non_neg_integer(), non_neg_integer()}},
                cursor = [] :: [pid()],
                %% The last window's processes: last in line at the next
                %% look, so that the looks single out more suspects.
                recent = [] :: [pid()],
                %% The open window: its dyntrace_ctl entry, processes and
                %% when it ends (monotonic ms).
                window = none :: none | {pos_integer(), [pid()], integer()}}).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc The parts of a triage recording, and the recording's own options
%% (`Opts' without `focus', which go to the focus controller).
-spec items(map()) -> {[dyntrace_record:item()], map()}.
items(Opts) when is_map(Opts) ->
    Focus = maps:get(focus, Opts, #{}),
    {[{trace, processes, ?EVERY_PROCESS},
      %% No allocator_sample: findings reads none, and reading every
      %% allocator was a fifth of the sampler's round.
      {memory, #{interval => ?MEMORY_MS, top => ?MEMORY_TOP, carriers => false,
                 allocators => false, sweep => ?MEMORY_SWEEP_MS}},
      {focus, Focus}],
     maps:remove(focus, Opts)};
items(Opts) ->
    error({badarg, {options, Opts}}).

%% @doc Checks the focus controller's options (`interval', `period',
%% `window', `count') in the caller and turns them into a sampler plan
%% whose windows share the recording's tracer options `Shared'.
-spec plan(opts(), map()) -> dyntrace_sampler:plan().
plan(Opts, Shared) ->
    #{max_term_bytes := {_, _, DefaultMax}} = dyntrace:option_limits(),
    O = dyntrace_sampler:validate_opts(Opts, #{interval => ?SAMPLE_MS, period => ?PERIOD_MS,
                                               window => ?WINDOW_MS, count => ?COUNT},
                                       [period, window, count]),
    #{interval := Interval, period := Period, window := Window, count := Count} = O,
    [pos_integer(K, V) || {K, V} <- [{period, Period}, {window, Window}, {count, Count}]],
    Count =< ?MAX_COUNT orelse error({badarg, {count, Count}}),
    Window < Period orelse error({badarg, {window, Window}}),
    Interval =< Window orelse error({badarg, {interval, Interval}}),
    #{kind => focus,
      module => ?MODULE,
      %% On time when the processes it watches keep every scheduler busy.
      priority => high,
      args => #focus{shared = Shared,
                     max_term_bytes = maps:get(max_term_bytes, Shared, DefaultMax),
                     period_ms = Period,
                     window_ms = Window,
                     interval_ms = Interval,
                     count = Count,
                     events = focus_events(Shared)},
      procs => [],
      interval => Interval,
      duration => maps:get(duration, O, infinity),
      max_events => maps:get(max_events, O, infinity)}.

%% @doc The LTTng events a focus controller (a plan's `args') writes.
-spec events(#focus{}) -> [dyntrace:event_name()].
events(#focus{events = Events}) ->
    lists:usort([stack_sample, user_trace_s1 | Events]).

pos_integer(_K, V) when is_integer(V), V > 0, V =< 16#ffffffff -> ok;
pos_integer(K, V) -> error({badarg, {K, V}}).

focus_events(Shared) ->
    dyntrace_plans:events(dyntrace_plans:trace(self(), ?FOCUS, #{}, Shared)).

%%%===================================================================
%%% THE EXPECTED COST
%%%===================================================================

%% @doc Before a recording starts: when `What' would cost this node more
%% than the budget (10% more CPU), prints what it is expected to cost and
%% what triage would. The estimate watches the node for 200 ms: context
%% switches (one schedule in, one out, and about one message sent and one
%% received each) and garbage collections, at about 400 ns per event
%% written, against the CPU the node uses now (/proc/self/stat).
-spec warn_cost([dyntrace_record:item()] | triage) -> ok.
warn_cost(What) ->
    case cost_line(What) of
        none -> ok;
        Line -> io:format("~ts~n", [Line])
    end.

%% @doc The line warn_cost/1 prints, or `none' when `What' is expected to
%% cost this node no more than the budget (or cannot be estimated): the
%% outside command (dyntrace_cli) asks the node for it and prints it on
%% the operator's terminal before the session starts.
-spec cost_line([dyntrace_record:item()] | triage) -> none | string().
cost_line(What) ->
    try cost(What) of
        {Text, Cost} when Cost > ?BUDGET -> lists:flatten(Text);
        _ -> none
    catch
        _:_ -> none
    end.

cost(triage) ->
    {Rate, Busy} = watch(),
    Triage = focus_share() * Rate(focus_events(#{})) / Busy,
    {io_lib:format("dyntrace: triage: about +~b% CPU here (its focus windows; this node uses "
                   "~.2f cores now)", [round(100 * Triage), Busy / 1.0e9]), Triage};
cost(What) when is_list(What) ->
    case lists:usort(lists:append([broad(Item) || Item <- What])) of
        [] ->
            none;
        Events ->
            {Rate, Busy} = watch(),
            Full = Rate(Events) / Busy,
            Triage = focus_share() * Rate(focus_events(#{})) / Busy,
            {io_lib:format("dyntrace: tracing ~s of all ~b processes: about +~b% CPU here "
                           "(~b events/s at about ~b ns each; this node uses ~.2f cores now); "
                           "triage: about +~b%",
                           [lists:join(", ", [atom_to_list(E) || E <- Events]),
                            erlang:system_info(process_count), round(100 * Full),
                            round(Rate(Events) / ?NS_PER_EVENT),
                            ?NS_PER_EVENT, Busy / 1.0e9, round(100 * Triage)]), Full}
    end.

%% The frequent events an item writes for every process.
broad({trace, Procs, Events}) ->
    broad({trace, Procs, Events, #{}});
broad({trace, Procs, Events, _Opts}) ->
    Wide = lists:any(fun(P) -> lists:member(P, ?BROAD) end,
                     case is_list(Procs) of
                         true -> Procs;
                         false -> [Procs]
                     end),
    Frequent = focus_events(#{}),
    [E || Wide, E <- dyntrace_plans:events(dyntrace_plans:trace(all, Events, #{}, #{})),
          lists:member(E, Frequent)];
broad(_) ->
    [].

%% The share of the time a process singled out is traced, with the
%% defaults, if it made every event: a window closes at the first stack
%% tick at or after its end, so it lasts whole intervals (160 ms of 2000).
focus_share() ->
    ?SAMPLE_MS * ceil(?WINDOW_MS / ?SAMPLE_MS) / ?PERIOD_MS.

%% A rate per event name (events written per second if every process were
%% traced), and the CPU the node uses, in ns per s.
watch() ->
    {Switches0, _} = erlang:statistics(context_switches),
    {Gcs0, _, _} = erlang:statistics(garbage_collection),
    Cpu0 = cpu_ns(),
    T0 = erlang:monotonic_time(nanosecond),
    timer:sleep(?WATCH_MS),
    {Switches1, _} = erlang:statistics(context_switches),
    {Gcs1, _, _} = erlang:statistics(garbage_collection),
    Seconds = (erlang:monotonic_time(nanosecond) - T0) / 1.0e9,
    %% Against an idle node every cost is large, and none matters.
    Busy = max(?IDLE_NS, (cpu_ns() - Cpu0) / Seconds),
    Switches = (Switches1 - Switches0) / Seconds,
    Gcs = (Gcs1 - Gcs0) / Seconds,
    PerEvent = fun(process_scheduled) -> 2 * Switches;
                  (message_send) -> Switches;
                  (message_receive) -> Switches;
                  (gc_minor_start) -> Gcs;
                  (gc_minor_end) -> Gcs;
                  (_) -> 0
               end,
    {fun(Events) -> lists:sum([PerEvent(E) || E <- Events]) * ?NS_PER_EVENT end, Busy}.

%% This OS process's user and system CPU time, in ns.
cpu_ns() ->
    {ok, Stat} = file:read_file("/proc/self/stat"),
    [_, After] = string:split(Stat, ") ", trailing),
    Fields = string:lexemes(After, " "),
    Ticks = binary_to_integer(lists:nth(12, Fields)) + binary_to_integer(lists:nth(13, Fields)),
    Ticks * 1.0e9 / clock_ticks().

clock_ticks() ->
    try list_to_integer(string:trim(os:cmd("getconf CLK_TCK"))) of
        N when N > 0 -> N;
        _ -> 100
    catch
        error:badarg -> 100
    end.

%%%===================================================================
%%% THE CONTROLLER
%%% A tick at each thing due, and none between: a look every `period'
%%% (which opens a window), stack samples of the window's processes every
%%% `interval' while it is open, and its end. Outside a window the
%%% controller sleeps until the next look (on an idle node a tick every
%%% 20 ms cost about 4 ms of CPU a second).
%%%===================================================================

%% @private
-spec sampler_init(#focus{}) -> #focus{}.
sampler_init(#focus{window_ms = Window} = F) ->
    %% The reductions and queues now: the first look, a window's length
    %% after the start, compares with them.
    {_, Last} = read(F),
    F#focus{last = Last, next_look = now_ms() + Window}.

%% @private
-spec sampler_tick(#focus{}, dyntrace_sampler:counters()) -> {ok, #focus{}, integer()} | stop.
sampler_tick(#focus{events = Events, next_look = Due, period_ms = Period} = F, C) ->
    Now = now_ms(),
    F1 = case F#focus.window of
             {_Id, _Pids, End} when Now >= End -> close(F);
             {_Id, Pids, _End} when Now >= F#focus.next_stacks ->
                 stacks(Pids, F, C),
                 F#focus{next_stacks = after_now(F#focus.next_stacks, F#focus.interval_ms, Now)};
             _ -> F
         end,
    F3 = case Now >= Due of
             true ->
                 %% The next look a period after this one was due (after
                 %% now, should looks have been missed).
                 F2 = F1#focus{next_look = after_now(Due, Period, Now)},
                 case F2#focus.window =:= none
                     andalso Events -- dyntrace:enabled_events() =:= [] of
                     true -> look(F2);
                     false -> F2
                 end;
             false ->
                 F1
         end,
    {ok, F3, next_due(F3)}.

%% The first of `Due' + n * `Step' after `Now'.
after_now(Due, Step, Now) ->
    Due + Step * (1 + (Now - Due) div Step).

%% When the next tick is due: the open window's next stack samples (the
%% first at or after its end closes it: a window lasts whole intervals,
%% as when the controller ticked every interval), else the next look.
next_due(#focus{window = {_Id, _Pids, _End}, next_stacks = Stacks, next_look = Look}) ->
    min(Stacks, Look);
next_due(#focus{next_look = Look}) ->
    Look.

now_ms() ->
    erlang:monotonic_time(millisecond).

%% Reads the processes, singles some out and opens a window on them.
look(#focus{last = Last, count = Count, cursor = Cursor0} = F) ->
    {{Rows, Cursor}, Seen} = read(F),
    F1 = F#focus{cursor = Cursor,
                 last = case {Cursor0, Cursor} of
                            %% The whole node in this look: what it read is all
                            %% there is (the processes gone are not in it).
                            {[], []} -> Seen;
                            %% A sweep ended: forget the processes gone.
                            {_, []} -> maps:merge(maps:with(erlang:processes(), Last), Seen);
                            _ -> maps:merge(Last, Seen)
                        end},
    %% A process first seen has no reductions "since the last look".
    Scored = [{P, R - R0, Q, Q - Q0, H}
              || {P, R, Q, H} <- Rows, {R0, Q0} <- [maps:get(P, Last, {R, Q})]],
    ByReductions = ranked([{D, P} || {P, D, _, _, _} <- Scored, D > 0]),
    %% A growing queue before a longer one that does not grow.
    ByQueue = ranked([{{G > 0, Q}, P} || {P, _, Q, G, _} <- Scored, Q > 0]),
    ByHeap = ranked([{H, P} || {P, _, _, _, H} <- Scored]),
    Recent = F#focus.recent,
    %% Each line's first `Count' after the recent ones are put last: they
    %% lie among its first `Count' + length(Recent), and no more are picked.
    Lists = [begin
                 {Again, New} = lists:partition(fun(P) -> lists:member(P, Recent) end,
                                                lists:sublist(L, Count + length(Recent))),
                 lists:sublist(New ++ Again, Count)
             end || L <- [ByReductions, ByQueue, ByHeap]],
    case pick(Lists, Count, []) of
        [] -> F1;
        Pids -> open(Pids, maps:from_list([{P, lists:keyfind(P, 1, Scored)} || P <- Pids]), F1)
    end.

%% The processes, highest key first.
ranked(Keyed) ->
    [P || {_, P} <- lists:reverse(lists:sort(Keyed))].

%% The next batch of processes (dyntrace's own left out): their
%% reductions, queue length and heap, and what the sweep reads next.
read(#focus{cursor = Cursor0}) ->
    {Batch, Cursor} = batch(Cursor0),
    Own = own(),
    Rows = [{P, R, Q, H} || P <- Batch, not lists:member(P, Own),
                            [{reductions, R}, {message_queue_len, Q}, {total_heap_size, H}]
                                <- [erlang:process_info(P, [reductions, message_queue_len,
                                                            total_heap_size])]],
    {{Rows, Cursor}, maps:from_list([{P, {R, Q}} || {P, R, Q, _} <- Rows])}.

%% Up to `Count' processes, the head of each list by turns.
pick(_Lists, 0, Acc) ->
    lists:reverse(Acc);
pick(Lists, Count, Acc) ->
    case [L || L <- [[P || P <- L0, not lists:member(P, Acc)] || L0 <- Lists], L =/= []] of
        [] -> lists:reverse(Acc);
        [[P | _] = First | Rest] -> pick(Rest ++ [First], Count - 1, [P | Acc])
    end.

batch([]) ->
    batch(erlang:processes());
batch(Pids) when length(Pids) =< ?SCAN_PER_LOOK ->
    {Pids, []};
batch(Pids) ->
    lists:split(?SCAN_PER_LOOK, Pids).

%% dyntrace's own processes: its supervisor and what that links (the
%% front door, the announcer, samplers, recordings), and this one.
own() ->
    case whereis(dyntrace_sup) of
        undefined ->
            [self()];
        Sup ->
            case erlang:process_info(Sup, links) of
                {links, Links} -> [self(), Sup | [P || P <- Links, is_pid(P)]];
                undefined -> [self()]
            end
    end.

open(Pids, Scores, #focus{shared = Shared, window_ms = Ms} = F) ->
    %% The marks before the flags and after them: every event of the
    %% window lies between its marks.
    _ = [mark(P, io_lib:format(" start reductions=~b queue=~b queue_growth=~b heap_words=~b",
                               [D, Q, G, H]))
         || P <- Pids, {_, D, Q, G, H} <- [maps:get(P, Scores)]],
    %% The window's own duration outlives the controller, should it die.
    Plan = dyntrace_plans:trace(Pids, ?FOCUS, #{duration => 2 * Ms + 1000}, Shared),
    case dyntrace_ctl_client:focus(Plan) of
        {ok, Id} ->
            _ = [count_mark(P, " count_from") || P <- Pids],
            Now = now_ms(),
            F#focus{window = {Id, Pids, Now + Ms}, next_stacks = Now + F#focus.interval_ms};
        {error, _} ->
            %% A process that ended since the look: the next look.
            _ = [mark(P, " end") || P <- Pids],
            F
    end.

close(#focus{window = {Id, Pids, _}} = F) ->
    _ = [count_mark(P, " count_to") || P <- Pids],
    _ = dyntrace_ctl_client:stop(Id),
    _ = [mark(P, " end") || P <- Pids],
    F#focus{window = none, recent = Pids}.

%% While the window's flags are set: the process's exact queue length and
%% reductions, so that the messages it took out in the window (those
%% queued between the two marks less the queue's growth) and the
%% reductions it spent on them are known (a receive spends one reduction
%% on each message it skips: a receive that scans its queue spends about
%% the queue's length per message).
count_mark(P, What) ->
    case erlang:process_info(P, [message_queue_len, reductions]) of
        [{message_queue_len, Q}, {reductions, R}] ->
            mark(P, io_lib:format("~s queue=~b reductions=~b", [What, Q, R]));
        undefined ->
            ok
    end.

mark(P, Text) ->
    try dyntrace:emit_user_trace_s1(P, [?MARK, Text])
    catch error:badarg -> ok
    end.

stacks(Pids, #focus{max_term_bytes = Max}, C) ->
    _ = [case erlang:process_info(P, [current_stacktrace, status]) of
             [{current_stacktrace, Stack}, {status, Status}] ->
                 dyntrace_sampler:take(C)
                     andalso dyntrace:emit_stack_sample(P, Status, Stack, Max);
             undefined ->
                 ok
         end || P <- Pids],
    ok.
