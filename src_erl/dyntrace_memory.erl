%%% @doc Memory over time (`dyntrace:memory/1'): a sampler of dyntrace's
%%% own writes `memory_sample', `allocator_sample' (unless `allocators =>
%%% false', as triage's), `process_memory' (the `top' processes by memory
%%% and by queue length, and those in `procs') and `carrier_create' /
%%% `carrier_destroy' every `interval' ms, reading nothing for an event not
%%% enabled and at most 500 processes a round. The events, what is sampled
%%% rather than exact, and why it is safe on a production node:
%%% docs/sampling-and-memory.md and docs/reference.md.
-module(dyntrace_memory).

%%% PUBLIC (through dyntrace_ctl) %%%
-export([plan/1, events/1]).

%%% PRIVATE EXPORTS (dyntrace_sampler's loop) %%%
-export([sampler_init/1, sampler_tick/2]).

-type opts() :: #{interval => pos_integer(),
                  duration => pos_integer(),
                  max_events => pos_integer(),
                  top => non_neg_integer(),
                  procs => [pid() | atom()],
                  carriers => false | pos_integer(),
                  allocators => boolean(),
                  sweep => pos_integer()}.
-export_type([opts/0]).

-define(DEFAULT_INTERVAL_MS, 1000).
-define(DEFAULT_TOP, 20).
%% instrument:carriers/0 reads every carrier's blocks: at most this often.
-define(DEFAULT_CARRIERS_MS, 10000).
-define(MAX_TOP, 1000).
-define(CARRIER_EVENTS, [carrier_create, carrier_destroy]).
%% Processes a round's sweep reads; the sweep goes on in the next round.
-define(SCAN_PER_ROUND, 500).

-record(memory, {top :: non_neg_integer(),
                 procs :: [pid() | atom()],
                 carriers :: false | pos_integer(),
                 %% Whether `allocator_sample' is written.
                 allocators = true :: boolean(),
                 %% Rounds a sweep after the first is spread over (`sweep'
                 %% ms), the processes the current sweep reads a round,
                 %% and whether a whole sweep has ended.
                 sweep_rounds = 1 :: pos_integer(),
                 per_round = ?SCAN_PER_ROUND :: pos_integer(),
                 swept = false :: boolean(),
                 %% Monotonic ms of the next read (the clock may be negative).
                 carriers_due = undefined :: integer() | undefined,
                 %% The last instrument:carriers/0 answer: per type, the
                 %% number of carriers of each size.
                 seen = undefined :: undefined | #{atom() => #{non_neg_integer() => pos_integer()}},
                 %% The processes the sweep has still to read, the largest
                 %% it found so far (memory with binaries; queue), and the
                 %% largest the last whole sweep found.
                 cursor = [] :: [pid()],
                 by_size = top_new() :: {non_neg_integer(), gb_sets:set()},
                 by_queue = top_new() :: {non_neg_integer(), gb_sets:set()},
                 known = [] :: [pid()]}).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc Checks `memory/1''s options in the caller's process and turns them
%% into a sampler plan; a bad one raises `error({badarg, {What, Value}})'.
-spec plan(opts()) -> dyntrace_sampler:plan().
plan(Opts) ->
    O = dyntrace_sampler:validate_opts(Opts, #{interval => ?DEFAULT_INTERVAL_MS,
                                               top => ?DEFAULT_TOP, procs => [],
                                               carriers => ?DEFAULT_CARRIERS_MS,
                                               allocators => true},
                                       [top, procs, carriers, allocators, sweep]),
    Top = maps:get(top, O),
    (is_integer(Top) andalso Top >= 0 andalso Top =< ?MAX_TOP)
        orelse error({badarg, {top, Top}}),
    Carriers = maps:get(carriers, O),
    (Carriers =:= false orelse (is_integer(Carriers) andalso Carriers > 0))
        orelse error({badarg, {carriers, Carriers}}),
    Allocators = maps:get(allocators, O),
    is_boolean(Allocators) orelse error({badarg, {allocators, Allocators}}),
    Procs = validate_procs(maps:get(procs, O)),
    Interval = maps:get(interval, O),
    Sweep = maps:get(sweep, O, Interval),
    (is_integer(Sweep) andalso Sweep > 0) orelse error({badarg, {sweep, Sweep}}),
    #{kind => memory,
      module => ?MODULE,
      priority => normal,
      args => #memory{top = Top, procs = Procs, carriers = Carriers, allocators = Allocators,
                      sweep_rounds = max(1, ceil(Sweep / Interval))},
      procs => Procs,
      interval => Interval,
      duration => maps:get(duration, O, infinity),
      max_events => maps:get(max_events, O, infinity)}.

%% @doc The LTTng events a memory sampler of these arguments (a plan's
%% `args') writes.
-spec events(#memory{}) -> [dyntrace:event_name()].
events(#memory{carriers = Carriers, allocators = Allocators}) ->
    [memory_sample, process_memory]
        ++ [allocator_sample || Allocators]
        ++ [E || Carriers =/= false, E <- ?CARRIER_EVENTS].

%% Named processes: pids, or registered names looked up at every round
%% (a restarted server is followed).
validate_procs(Procs) when is_list(Procs) ->
    dyntrace_lib:is_proper_list(Procs) orelse error({badarg, {procs, Procs}}),
    [case P of
         _ when is_pid(P), node(P) =:= node() -> P;
         _ when is_atom(P) -> P;
         _ -> error({badarg, {procs, P}})
     end || P <- Procs];
validate_procs(Procs) ->
    error({badarg, {procs, Procs}}).

%%%===================================================================
%%% ONE ROUND
%%%===================================================================

%% @private
-spec sampler_init(#memory{}) -> #memory{}.
sampler_init(M) ->
    M.

%% @private
-spec sampler_tick(#memory{}, dyntrace_sampler:counters()) -> {ok, #memory{}} | stop.
sampler_tick(M, C) ->
    Enabled = dyntrace:enabled_events(),
    On = fun(Event) -> lists:member(Event, Enabled) end,
    try
        On(memory_sample) andalso write(C, fun() -> dyntrace:emit_memory_sample(erlang:memory()) end),
        Now = erlang:monotonic_time(millisecond),
        Carriers = M#memory.carriers =/= false andalso lists:any(On, ?CARRIER_EVENTS)
            andalso due(Now, M#memory.carriers_due),
        %% Read only for what is written: `allocators => false' saves
        %% erlang:system_info({allocator, Type}) of every type each round.
        Write = M#memory.allocators andalso On(allocator_sample),
        Allocators = case Write orelse Carriers of
                         true -> allocators();
                         false -> []
                     end,
        Write andalso write_allocators(C, Allocators),
        M1 = case On(process_memory) of
                 true -> write_processes(C, M);
                 false -> M
             end,
        {ok, case Carriers of
                 true ->
                     Due = Now + M#memory.carriers,
                     carriers(C, M1#memory{carriers_due = Due}, Allocators);
                 false when M#memory.carriers =/= false,
                            M#memory.carriers_due =/= undefined,
                            Now < M#memory.carriers_due ->
                     M1;
                 false ->
                     M1#memory{seen = undefined}
             end}
    catch
        throw:budget_spent -> stop
    end.

due(_Now, undefined) -> true;
due(Now, Due) -> Now >= Due.

%% Writes one event, or ends the round when `max_events' are written.
write(C, Emit) ->
    dyntrace_sampler:take(C) orelse throw(budget_spent),
    ok = Emit().

%%%===================================================================
%%% ALLOCATORS
%%%===================================================================

%% Per type, per instance: {MbcCarriers, MbcsSize, SbcCarriers, SbcsSize, BlocksSize}.
allocators() ->
    [{Type, [{N, figures(Props)} || {instance, N, Props} <- Instances]}
     || Type <- erlang:system_info(alloc_util_allocators),
        Instances <- [erlang:system_info({allocator, Type})], is_list(Instances)].

figures(Props) ->
    Mbcs = proplists:get_value(mbcs, Props, []),
    Sbcs = proplists:get_value(sbcs, Props, []),
    {current(carriers, Mbcs), current(carriers_size, Mbcs),
     current(carriers, Sbcs), current(carriers_size, Sbcs),
     blocks_size(Mbcs) + blocks_size(Sbcs)}.

current(Key, Figures) ->
    case lists:keyfind(Key, 1, Figures) of
        false -> 0;
        Tuple -> element(2, Tuple)
    end.

%% OTP 23 and later: blocks per allocation type; before, one size.
blocks_size(Figures) ->
    case lists:keyfind(blocks, 1, Figures) of
        {blocks, PerType} when is_list(PerType) ->
            lists:sum([current(size, Info) || {_, Info} <- PerType]);
        _ ->
            current(blocks_size, Figures)
    end.

write_allocators(C, Allocators) ->
    _ = [write(C, fun() ->
                          dyntrace:emit_allocator_sample(Type, N, MC, MS, SC, SS, B)
                  end)
         || {Type, Instances} <- Allocators, {N, {MC, MS, SC, SS, B}} <- Instances],
    true.

%% The carriers that appeared or went since the last round, by type and size.
carriers(C, M, Allocators) ->
    case carrier_sizes() of
        undefined ->
            M#memory{seen = undefined};
        Now when M#memory.seen =:= undefined ->
            M#memory{seen = Now};
        Now ->
            Before = M#memory.seen,
            Totals = maps:from_list([{Type, sum(Instances)} || {Type, Instances} <- Allocators]),
            _ = [write(C, fun() ->
                                  {MC, MS, SC, SS, _} = maps:get(Type, Totals, {0, 0, 0, 0, 0}),
                                  dyntrace:emit_carrier(How, Type, 0, Size, MC, MS, SC, SS)
                          end)
                 || Type <- lists:usort(maps:keys(Before) ++ maps:keys(Now)),
                    {How, Size} <- changes(maps:get(Type, Before, #{}), maps:get(Type, Now, #{}))],
            M#memory{seen = Now}
    end.

carrier_sizes() ->
    try instrument:carriers() of
        {ok, {_, Carriers}} ->
            lists:foldl(fun(Carrier, Acc) ->
                                Type = element(1, Carrier),
                                Size = element(3, Carrier),
                                Sizes = maps:get(Type, Acc, #{}),
                                Acc#{Type => Sizes#{Size => maps:get(Size, Sizes, 0) + 1}}
                        end, #{}, Carriers);
        _ ->
            undefined
    catch
        error:_ -> undefined
    end.

%% One `create' per carrier of a size more numerous now, one `destroy' per
%% carrier of a size less numerous.
changes(Before, Now) ->
    [{How, Size}
     || Size <- lists:usort(maps:keys(Before) ++ maps:keys(Now)),
        {How, Count} <- [{create, maps:get(Size, Now, 0) - maps:get(Size, Before, 0)},
                         {destroy, maps:get(Size, Before, 0) - maps:get(Size, Now, 0)}],
        _ <- lists:seq(1, max(0, Count))].

sum(Instances) ->
    lists:foldl(fun({_, {A, B, C, D, E}}, {A0, B0, C0, D0, E0}) ->
                        {A0 + A, B0 + B, C0 + C, D0 + D, E0 + E}
                end, {0, 0, 0, 0, 0}, Instances).

%%%===================================================================
%%% PROCESSES
%%%===================================================================

write_processes(C, #memory{top = Top, procs = Named} = M0) ->
    M = scan(M0),
    Found = lists:usort(M#memory.known ++ top_pids(M#memory.by_size)
                        ++ top_pids(M#memory.by_queue)),
    Asked = [P || N <- Named, P <- [dyntrace_sampler:resolve(N)], P =/= undefined],
    Words = erlang:system_info(wordsize),
    Read = [{P, figures(Info, Words)}
            || P <- lists:usort(Found ++ Asked),
               Info <- [erlang:process_info(P, [memory, total_heap_size, garbage_collection_info,
                                                message_queue_len, registered_name])],
               Info =/= undefined],
    Chosen = lists:usort(best(Top, fun({_, {Mem, _, Bin, _, _}}) -> Mem + Bin end, Read)
                         ++ best(Top, fun({_, {_, _, _, Queue, _}}) -> Queue end, Read)
                         ++ Asked),
    _ = [write(C, fun() ->
                          dyntrace:emit_process_memory(P, dyntrace_lib:process_name(P, Name),
                                                       Mem, Heap, Bin, Queue)
                  end)
         || {P, {Mem, Heap, Bin, Queue, Name}} <- Read, lists:member(P, Chosen)],
    M.

%% {Memory, TotalHeap, BinVheap (bytes), QueueLen, Name}.
figures(Info, Words) ->
    [{memory, Memory}, {total_heap_size, Heap}, {garbage_collection_info, GC},
     {message_queue_len, Queue}, {registered_name, Name}] = Info,
    {Memory, Heap * Words, bin_vheap(GC) * Words, Queue, Name}.

%% The binary virtual heap, young and old (words).
bin_vheap(GC) ->
    proplists:get_value(bin_vheap_size, GC, 0) + proplists:get_value(bin_old_vheap_size, GC, 0).

%% The `Top' pids of `Read' by `Score' (a score of 0 is not a reason).
best(Top, Score, Read) ->
    Scored = lists:reverse(lists:sort([{Score(R), P} || {P, _} = R <- Read])),
    [P || {S, P} <- lists:sublist(Scored, Top), S > 0].

%% Reads at most `per_round' processes, one at a time, from where the
%% last round stopped: a sweep over every process may take several rounds
%% on a large node. At the end of a sweep its largest processes (memory
%% with binaries, and queue) become the ones every round reads until the
%% next sweep ends. The first sweep reads up to 500 a round, so that the
%% largest are known from the first rounds; the next ones are spread over
%% `sweep_rounds' rounds (`sweep' ms), at most 500 a round: triage's
%% sampler sweeps a node every 5 s, a fifth of the reads.
scan(#memory{top = 0} = M) ->
    M;
scan(#memory{cursor = [], swept = Swept, sweep_rounds = Rounds} = M) ->
    Procs = erlang:processes(),
    PerRound = case Swept of
                   false -> ?SCAN_PER_ROUND;
                   true -> max(1, min(?SCAN_PER_ROUND, ceil(length(Procs) / Rounds)))
               end,
    sweep(M#memory{cursor = Procs, per_round = PerRound}, PerRound,
          erlang:system_info(wordsize));
scan(#memory{per_round = PerRound} = M) ->
    sweep(M, PerRound, erlang:system_info(wordsize)).

sweep(#memory{cursor = [], by_size = Size, by_queue = Queue} = M, _Left, _Words) ->
    M#memory{known = top_pids(Size) ++ top_pids(Queue), by_size = top_new(),
             by_queue = top_new(), swept = true};
sweep(M, 0, _Words) ->
    M;
sweep(#memory{cursor = [P | Rest], top = Top, by_size = Size, by_queue = Queue} = M, Left,
      Words) ->
    Next = M#memory{cursor = Rest},
    case erlang:process_info(P, [memory, message_queue_len, garbage_collection_info]) of
        [{memory, Mem}, {message_queue_len, Len}, {garbage_collection_info, GC}] ->
            sweep(Next#memory{by_size = top_add(Mem + bin_vheap(GC) * Words, P, Size, Top),
                              by_queue = top_add(Len, P, Queue, Top)},
                  Left - 1, Words);
        undefined ->
            sweep(Next, Left - 1, Words)
    end.

%% The largest `Top' scores seen: a set of at most `Top' entries and the
%% count; the smallest is dropped when a larger one comes.
top_new() ->
    {0, gb_sets:new()}.

top_add(0, _P, T, _Top) ->
    T;
top_add(Score, P, {Count, Set}, Top) when Count < Top ->
    {Count + 1, gb_sets:add({Score, P}, Set)};
top_add(Score, P, {Count, Set} = T, _Top) ->
    case gb_sets:smallest(Set) of
        {Least, _} when Score > Least ->
            {_, Rest} = gb_sets:take_smallest(Set),
            {Count, gb_sets:add({Score, P}, Rest)};
        _ ->
            T
    end.

top_pids({_, Set}) ->
    [P || {_, P} <- gb_sets:to_list(Set)].
