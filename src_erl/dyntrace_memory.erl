%%% @doc Memory over time (`dyntrace:memory/1'): a sampler of dyntrace's
%%% own writes, every `interval' ms (default 1000),
%%% - `memory_sample': the categories of `erlang:memory/0' (bytes);
%%% - `allocator_sample': per allocator type and instance, from
%%%   `erlang:system_info({allocator, Type})', the multi-block and
%%%   single-block carriers (count, bytes) and the blocks' bytes;
%%% - `process_memory': the `top' processes by memory (default 20) and
%%%   those named in `procs': memory, total heap, binary virtual heap
%%%   (bytes) and message queue length;
%%% - `carrier_create' / `carrier_destroy': the carriers that appeared or
%%%   went between two rounds' `instrument:carriers/0' answers, per
%%%   allocator type by size. Sampled, not exact: a carrier created and
%%%   destroyed between two rounds is never seen, carriers are told apart
%%%   by type and size only, and `instance' is 0 (the answer does not say
%%%   which instance owns a carrier).
%%%
%%% Why it is safe on a production node:
%%% - an event not enabled in a started LTTng session is not read at all;
%%% - the process scan reads one process at a time
%%%   (`process_info(P, memory)', as recon's `proc_count' does) keeping
%%%   only the `top' largest so far: never one answer about every process;
%%% - the rounds keep their schedule and are counted as `trace/3''s
%%%   limits are (`duration', `max_events'); `status()' shows the sampler's
%%%   own time per round.
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
-export([plan/1]).

%%% PRIVATE EXPORTS (dyntrace_sampler's loop) %%%
-export([sampler_init/1, sampler_tick/2]).

-type opts() :: #{interval => pos_integer(),
                  duration => pos_integer(),
                  max_events => pos_integer(),
                  top => non_neg_integer(),
                  procs => [pid() | atom()],
                  carriers => boolean()}.
-export_type([opts/0]).

-define(DEFAULT_INTERVAL_MS, 1000).
-define(DEFAULT_TOP, 20).
-define(MAX_TOP, 1000).
-define(CARRIER_EVENTS, [carrier_create, carrier_destroy]).

-record(memory, {top :: non_neg_integer(),
                 procs :: [pid() | atom()],
                 carriers :: boolean(),
                 %% The last instrument:carriers/0 answer: per type, the
                 %% number of carriers of each size.
                 seen = undefined :: undefined | #{atom() => #{non_neg_integer() => pos_integer()}}}).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc Checks `memory/1''s options in the caller's process and turns them
%% into a sampler plan; a bad one raises `error({badarg, {What, Value}})'.
-spec plan(opts()) -> dyntrace_sampler:plan().
plan(Opts) ->
    O = dyntrace_sampler:validate_opts(Opts, #{interval => ?DEFAULT_INTERVAL_MS,
                                               top => ?DEFAULT_TOP, procs => [],
                                               carriers => true},
                                       [top, procs, carriers]),
    Top = maps:get(top, O),
    (is_integer(Top) andalso Top >= 0 andalso Top =< ?MAX_TOP)
        orelse error({badarg, {top, Top}}),
    Carriers = maps:get(carriers, O),
    is_boolean(Carriers) orelse error({badarg, {carriers, Carriers}}),
    Procs = validate_procs(maps:get(procs, O)),
    #{kind => memory,
      module => ?MODULE,
      args => #memory{top = Top, procs = Procs, carriers = Carriers},
      procs => Procs,
      interval => maps:get(interval, O),
      duration => maps:get(duration, O, infinity),
      max_events => maps:get(max_events, O, infinity)}.

%% Named processes: pids, or registered names looked up at every round
%% (a restarted server is followed).
validate_procs(Procs) when is_list(Procs) ->
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
        Carriers = M#memory.carriers andalso lists:any(On, ?CARRIER_EVENTS),
        Allocators = case On(allocator_sample) orelse Carriers of
                         true -> allocators();
                         false -> []
                     end,
        On(allocator_sample) andalso write_allocators(C, Allocators),
        On(process_memory) andalso write_processes(C, M),
        {ok, case Carriers of
                 true -> carriers(C, M, Allocators);
                 false -> M#memory{seen = undefined}
             end}
    catch
        throw:budget_spent -> stop
    end.

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

write_processes(C, #memory{top = Top, procs = Named}) ->
    Wanted = lists:usort(top(Top) ++ [P || N <- Named,
                                           P <- [dyntrace_sampler:resolve(N)],
                                           P =/= undefined]),
    Words = erlang:system_info(wordsize),
    _ = [write(C, fun() -> write_process(P, Info, Words) end)
         || P <- Wanted,
            Info <- [erlang:process_info(P, [memory, total_heap_size, garbage_collection_info,
                                             message_queue_len, registered_name])],
            Info =/= undefined],
    true.

write_process(P, Info, Words) ->
    [{memory, Memory}, {total_heap_size, Heap}, {garbage_collection_info, GC},
     {message_queue_len, Queue}, {registered_name, Name}] = Info,
    BinWords = proplists:get_value(bin_vheap_size, GC, 0)
        + proplists:get_value(bin_old_vheap_size, GC, 0),
    dyntrace:emit_process_memory(P, Name, Memory, Heap * Words, BinWords * Words, Queue).

%% The `Top' processes using the most memory, read one by one: a set of at
%% most `Top' entries and its smallest figure.
top(0) ->
    [];
top(Top) ->
    {_, _, Set} = lists:foldl(fun(P, Acc) -> consider(P, Acc, Top) end,
                              {0, 0, gb_sets:new()}, erlang:processes()),
    [P || {_, P} <- gb_sets:to_list(Set)].

consider(P, {Count, Least, Set} = Acc, Top) ->
    case erlang:process_info(P, memory) of
        {memory, Bytes} when Count < Top ->
            {Count + 1, min_of(Count, Least, Bytes), gb_sets:add({Bytes, P}, Set)};
        {memory, Bytes} when Bytes > Least ->
            {_, Rest} = gb_sets:take_smallest(Set),
            New = gb_sets:add({Bytes, P}, Rest),
            {Smallest, _} = gb_sets:smallest(New),
            {Count, Smallest, New};
        _ ->
            Acc
    end.

min_of(0, _Least, Bytes) -> Bytes;
min_of(_, Least, Bytes) -> min(Least, Bytes).
