%%% @doc `dyntrace:record(triage, Opts)': what `dyntrace-analyze findings'
%%% needs from a busy node, at a bounded cost. Tracing every process's
%%% every message and schedule costs a loaded node more CPU than an
%%% operator accepts (each event is cheap; there are simply many), so
%%% triage records
%%% - for every process, only what is rare: `process_spawn',
%%%   `process_exit', `process_register', and the `process_name' and
%%%   `node_name' snapshots;
%%% - the memory sampler (`dyntrace_memory'): the node's categories every
%%%   second, and `process_memory' (memory, heap, binaries, message queue
%%%   length) of the top processes by memory and by queue length;
%%% - focus windows: every `period' ms (default 2000) the controller
%%%   here reads each process's reductions, queue length and heap, singles
%%%   out `count' of them (default 4: by turns, the most reductions since
%%%   the last look, the longest queue, growing first, and the largest
%%%   heap) and traces only those, for `window' ms (default 400), with
%%%   `message_send', `message_receive', `process_scheduled' and the GC
%%%   events, and samples their stacks every `interval' ms (default 20).
%%%
%%% So in a triage trace, message, scheduling, GC and stack events exist
%%% only for the processes singled out and only inside their windows. Each
%%% window is bracketed, per process, by two `user_trace_s1' events whose
%%% pid is the process: `dyntrace_focus start ...' (with why it was
%%% chosen: `reductions=R queue=Q heap_words=H') and `dyntrace_focus end';
%%% rates from the traced events must be taken over those windows, not
%%% over the whole trace. A window the recording's end cuts short has no
%%% `end' row: it ends with the trace.
%%%
%%% Why it is safe on a production node:
%%% - a look reads at most 10000 processes (one `process_info/2' each,
%%%   three small items, no message copied); a larger node is swept over
%%%   several looks;
%%% - nothing is read while the focus events are not enabled in a started
%%%   session;
%%% - windows are entries of `dyntrace_ctl' owned by the recording, with a
%%%   duration of their own: the recording's end, `stop/1' or `clear/0'
%%%   undoes them like any other part, and a controller that dies leaves
%%%   nothing set past its window's duration.
%%%
%%% ```
%%% 1> dyntrace:record(triage, #{duration => 30000}).
%%% {ok,"/tmp/dyntrace-record-20261128T083512Z-4242-1"}
%%% '''
%%% ```
%%% $ dyntrace-analyze findings /tmp/dyntrace-record-20261128T083512Z-4242-1
%%% '''
-module(dyntrace_triage).

%%% PUBLIC (through dyntrace_record) %%%
-export([items/1, plan/2, events/1]).

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
-define(WINDOW_MS, 400).
-define(COUNT, 4).
-define(SAMPLE_MS, 20).
-define(MAX_COUNT, 64).
-define(MEMORY_MS, 1000).
-define(MEMORY_TOP, 20).
%% Processes one look reads at most.
-define(SCAN_PER_LOOK, 10000).
%% What every process is traced with, and what the singled-out ones are.
-define(EVERY_PROCESS, [process_spawn, process_exit, process_register]).
-define(FOCUS, [messages, scheduling, gc]).
-define(MARK, "dyntrace_focus").

-record(focus, {shared :: map(),
                max_term_bytes :: dyntrace:max_term_bytes(),
                period_ticks :: pos_integer(),
                window_ticks :: pos_integer(),
                window_ms :: pos_integer(),
                count :: pos_integer(),
                events :: [dyntrace:event_name()],
                tick = 0 :: non_neg_integer(),
                %% What the last look read of each process: reductions
                %% and queue length.
                last = #{} :: #{pid() => {non_neg_integer(), non_neg_integer()}},
                cursor = [] :: [pid()],
                %% The open window: its dyntrace_ctl entry, processes and
                %% the tick it ends at.
                window = none :: none | {pos_integer(), [pid()], non_neg_integer()}}).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc The parts of a triage recording, and the recording's own options
%% (`Opts' without `focus', which go to the focus controller).
-spec items(map()) -> {[dyntrace_record:item()], map()}.
items(Opts) when is_map(Opts) ->
    Focus = maps:get(focus, Opts, #{}),
    {[{trace, processes, ?EVERY_PROCESS},
      {memory, #{interval => ?MEMORY_MS, top => ?MEMORY_TOP, carriers => false}},
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
                     period_ticks = max(1, Period div Interval),
                     window_ticks = max(1, Window div Interval),
                     window_ms = Window,
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
    dyntrace_ctl:plan_events(dyntrace_ctl:trace_plan(self(), ?FOCUS, #{}, Shared)).

%%%===================================================================
%%% THE CONTROLLER
%%% One tick every `interval': a look every `period_ticks' (which opens a
%%% window), stack samples of the window's processes at every tick while
%%% it is open, and its end.
%%%===================================================================

%% @private
-spec sampler_init(#focus{}) -> #focus{}.
sampler_init(F) ->
    F.

%% @private
-spec sampler_tick(#focus{}, dyntrace_sampler:counters()) -> {ok, #focus{}} | stop.
sampler_tick(#focus{tick = Tick, events = Events} = F, C) ->
    F1 = case F#focus.window of
             {_Id, _Pids, End} when Tick >= End -> close(F);
             {_Id, Pids, _End} -> stacks(Pids, F, C), F;
             none -> F
         end,
    F2 = case Tick rem F#focus.period_ticks =:= 0
             andalso Events -- dyntrace:enabled_events() =:= [] of
             true -> look(F1);
             false -> F1
         end,
    {ok, F2#focus{tick = Tick + 1}}.

%% Reads the processes, singles some out and opens a window on them.
look(#focus{last = Last, count = Count} = F) ->
    {Batch, Cursor} = batch(F#focus.cursor),
    Own = own(),
    Rows = [{P, R, Q, H} || P <- Batch, not lists:member(P, Own),
                            [{reductions, R}, {message_queue_len, Q}, {total_heap_size, H}]
                                <- [erlang:process_info(P, [reductions, message_queue_len,
                                                            total_heap_size])]],
    Seen = maps:from_list([{P, {R, Q}} || {P, R, Q, _} <- Rows]),
    F1 = F#focus{cursor = Cursor,
                 last = maps:merge(case Cursor of
                                       %% A sweep ended: forget the processes gone.
                                       [] -> maps:with(erlang:processes(), Last);
                                       _ -> Last
                                   end, Seen)},
    %% A process first seen has no reductions "since the last look".
    Scored = [{P, R - element(1, maps:get(P, Last, {R, Q})), Q,
               Q - element(2, maps:get(P, Last, {R, Q})), H}
              || {P, R, Q, H} <- Rows],
    ByReductions = ranked([{D, P} || {P, D, _, _, _} <- Scored, D > 0]),
    %% A growing queue before a longer one that does not grow.
    ByQueue = ranked([{{G > 0, Q}, P} || {P, _, Q, G, _} <- Scored, Q > 0]),
    ByHeap = ranked([{H, P} || {P, _, _, _, H} <- Scored]),
    case pick([ByReductions, ByQueue, ByHeap], Count, []) of
        [] -> F1;
        Pids -> open(Pids, maps:from_list([{P, S} || {P, _, _, _, _} = S <- Scored]), F1)
    end.

%% The processes, highest key first.
ranked(Keyed) ->
    [P || {_, P} <- lists:reverse(lists:sort(Keyed))].

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

open(Pids, Scores, #focus{shared = Shared, window_ms = Ms, tick = Tick,
                          window_ticks = Ticks} = F) ->
    %% The marks before the flags and after them: every event of the
    %% window lies between its marks.
    _ = [mark(P, io_lib:format(" start reductions=~b queue=~b queue_growth=~b heap_words=~b",
                               [D, Q, G, H]))
         || P <- Pids, {_, D, Q, G, H} <- [maps:get(P, Scores)]],
    %% The window's own duration outlives the controller, should it die.
    Plan = dyntrace_ctl:trace_plan(Pids, ?FOCUS, #{duration => 2 * Ms + 1000}, Shared),
    case dyntrace_ctl:focus(Plan) of
        {ok, Id} ->
            F#focus{window = {Id, Pids, Tick + Ticks}};
        {error, _} ->
            %% A process that ended since the look: the next look.
            _ = [mark(P, " end") || P <- Pids],
            F
    end.

close(#focus{window = {Id, Pids, _}} = F) ->
    _ = dyntrace_ctl:stop(Id),
    _ = [mark(P, " end") || P <- Pids],
    F#focus{window = none}.

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
