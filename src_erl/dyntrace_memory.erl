%%% @doc Memory over time (`dyntrace:memory/1'): a sampler of dyntrace's
%%% own writes, every `interval' ms (default 1000),
%%% - `memory_sample': the categories of `erlang:memory/0' (bytes);
%%% - `allocator_sample': per allocator type and instance, from
%%%   `erlang:system_info({allocator, Type})', the multi-block and
%%%   single-block carriers (count, bytes) and the blocks' bytes (unless
%%%   `allocators => false': triage's sampler, whose `findings' reads no
%%%   allocator, saves those reads);
%%% - `process_memory': name (registered, else the initial call `M:F/A',
%%%   proc_lib's record of it for a proc_lib process: on OTP 25 read from
%%%   its dictionary), memory, total heap, binary virtual heap (bytes) and
%%%   message queue length of the `top' processes (default 20) by memory
%%%   with their binaries, the `top' by queue length, and those named in
%%%   `procs';
%%% - `carrier_create' / `carrier_destroy': the carriers that appeared or
%%%   went between two `instrument:carriers/0' answers (read at most every
%%%   `carriers' ms, default 10000; `false': never), per allocator type by
%%%   size. Sampled, not exact: a carrier created and destroyed between two
%%%   reads is never seen, carriers are told apart by type and size only,
%%%   and `instance' is 0 (the answer does not say which instance owns a
%%%   carrier).
%%%
%%% Why it is safe on a production node:
%%% - an event not enabled in a started LTTng session is not read at all;
%%% - processes are read one at a time, as recon's `proc_count' does,
%%%   never in one answer about every process; a round reads at most 500
%%%   and the sweep goes on in the next round, so on a large node a sweep
%%%   over every process takes several rounds, and the largest processes
%%%   the last sweep found are read again at every round;
%%% - the rounds keep their schedule and are limited as `trace/3''s
%%%   calls are (`duration', `max_events'); `status()' shows the sampler's
%%%   time per round.
%%%
%%% ```
%%% 1> dyntrace:memory(#{interval => 1000, top => 10, procs => [my_cache]}).
%%% {ok,2}
%%% '''
%%% ```
%%% $ dyntrace-analyze memory ~/lttng-traces/leak-*
%%% '''
-module(dyntrace_memory).

%%% PUBLIC (through dyntrace_ctl) %%%
-export([plan/1, events/1, name/1]).

%%% PRIVATE EXPORTS (dyntrace_sampler's loop) %%%
-export([sampler_init/1, sampler_tick/2]).

-type opts() :: #{interval => pos_integer(),
                  duration => pos_integer(),
                  max_events => pos_integer(),
                  top => non_neg_integer(),
                  procs => [pid() | atom()],
                  carriers => false | pos_integer(),
                  allocators => boolean()}.
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
                                       [top, procs, carriers, allocators]),
    Top = maps:get(top, O),
    (is_integer(Top) andalso Top >= 0 andalso Top =< ?MAX_TOP)
        orelse error({badarg, {top, Top}}),
    Carriers = maps:get(carriers, O),
    (Carriers =:= false orelse (is_integer(Carriers) andalso Carriers > 0))
        orelse error({badarg, {carriers, Carriers}}),
    Allocators = maps:get(allocators, O),
    is_boolean(Allocators) orelse error({badarg, {allocators, Allocators}}),
    Procs = validate_procs(maps:get(procs, O)),
    #{kind => memory,
      module => ?MODULE,
      priority => normal,
      args => #memory{top = Top, procs = Procs, carriers = Carriers, allocators = Allocators},
      procs => Procs,
      interval => maps:get(interval, O),
      duration => maps:get(duration, O, infinity),
      max_events => maps:get(max_events, O, infinity)}.

%% @doc The LTTng events a memory sampler of these arguments (a plan's
%% `args') writes.
-spec events(#memory{}) -> [dyntrace:event_name()].
events(#memory{carriers = Carriers, allocators = Allocators}) ->
    [memory_sample, process_memory]
        ++ [allocator_sample || Allocators]
        ++ [E || Carriers =/= false, E <- ?CARRIER_EVENTS].

%% @doc A process's name as `process_name' and `process_memory' write it:
%% its registered name, else its initial call; `[]' when it has ended.
-spec name(pid()) -> dyntrace:process_name() | [].
name(P) ->
    case erlang:process_info(P, registered_name) of
        {registered_name, Name} -> name(P, Name);
        [] -> name(P, []);
        undefined -> []
    end.

%% Named processes: pids, or registered names looked up at every round
%% (a restarted server is followed).
validate_procs(Procs) when is_list(Procs) ->
    dyntrace_ctl:is_proper_list(Procs) orelse error({badarg, {procs, Procs}}),
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
    M = scan(M0, ?SCAN_PER_ROUND),
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
                          dyntrace:emit_process_memory(P, name(P, Name), Mem, Heap, Bin, Queue)
                  end)
         || {P, {Mem, Heap, Bin, Queue, Name}} <- Read, lists:member(P, Chosen)],
    M.

%% The registered name, else the initial call (proc_lib's own record of
%% it for a proc_lib process), as process_name events name processes.
%% Never "": babeltrace2 2.0 reads an empty string field as the previous
%% event's value of that field.
name(_P, Registered) when Registered =/= [] ->
    Registered;
name(P, []) ->
    try erlang:process_info(P, {dictionary, '$initial_call'}) of
        {_, {M, F, A}} when is_atom(M), is_atom(F), is_integer(A) -> {M, F, A};
        _ -> spawned_as(P)
    catch
        %% Before OTP 26 that item does not exist.
        error:badarg -> spawned_as(P)
    end.

spawned_as(P) ->
    case erlang:process_info(P, initial_call) of
        {initial_call, {proc_lib, init_p, 5}} ->
            case erlang:process_info(P, dictionary) of
                {dictionary, Dict} ->
                    case lists:keyfind('$initial_call', 1, Dict) of
                        {_, {M, F, A}} when is_atom(M), is_atom(F), is_integer(A) -> {M, F, A};
                        _ -> {proc_lib, init_p, 5}
                    end;
                undefined ->
                    []
            end;
        {initial_call, MFA} ->
            MFA;
        undefined ->
            []
    end.

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

%% Reads at most `Left' processes, one at a time, from where the last
%% round stopped: a sweep over every process may take several rounds on a
%% large node. At the end of a sweep its largest processes (memory with
%% binaries, and queue) become the ones every round reads until the next
%% sweep ends.
scan(#memory{top = 0} = M, _Left) ->
    M;
scan(#memory{cursor = []} = M, Left) ->
    sweep(M#memory{cursor = erlang:processes()}, Left);
scan(M, Left) ->
    sweep(M, Left).

sweep(#memory{cursor = [], by_size = Size, by_queue = Queue} = M, _Left) ->
    M#memory{known = top_pids(Size) ++ top_pids(Queue), by_size = top_new(),
             by_queue = top_new()};
sweep(M, 0) ->
    M;
sweep(#memory{cursor = [P | Rest], top = Top, by_size = Size, by_queue = Queue} = M, Left) ->
    Next = M#memory{cursor = Rest},
    case erlang:process_info(P, [memory, message_queue_len, garbage_collection_info]) of
        [{memory, Mem}, {message_queue_len, Len}, {garbage_collection_info, GC}] ->
            Words = erlang:system_info(wordsize),
            sweep(Next#memory{by_size = top_add(Mem + bin_vheap(GC) * Words, P, Size, Top),
                              by_queue = top_add(Len, P, Queue, Top)},
                  Left - 1);
        undefined ->
            sweep(Next, Left - 1)
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
