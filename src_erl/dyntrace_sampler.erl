%%% @doc Sampled stacks (`dyntrace:sample/2'): a process of dyntrace's own
%%% writes one `stack_sample' event per target every `interval' ms, at a
%%% random instant of each interval; and the timed loop that the memory
%%% sampler and triage's controller share (rounds on their own schedule,
%%% late rounds skipped and counted, bounded work per round). The contract
%%% and why it is safe on a production node: docs/reference.md,
%%% docs/sampling-and-memory.md and docs/profile.md.
-module(dyntrace_sampler).

%%% PUBLIC (through dyntrace_ctl) %%%
-export([plan/2, counters/1, start_link/2, describe/1]).

%%% PRIVATE EXPORTS %%%
-export([init/2, sampler_init/1, sampler_tick/2]).
%%% For the samplers (dyntrace_memory) %%%
-export([take/1, ended/2, validate_opts/3, resolve/1]).

-type procs_spec() :: all | processes | existing | existing_processes
                    | new | new_processes.
-type target() :: pid() | atom() | procs_spec().
-type procs() :: target() | [target()].
-type millisecs() :: pos_integer().
-type opts() :: #{interval => millisecs(),
                  duration => millisecs(),
                  max_events => pos_integer(),
                  max_term_bytes => dyntrace:max_term_bytes()}.
%% What dyntrace_ctl keeps of a sampler: validated, ready to start.
-type plan() :: #{kind := sample | memory | focus,
                  module := module(),
                  priority := normal | high,
                  args := term(),
                  procs := [pid() | procs_spec()],
                  interval := millisecs(),
                  duration := millisecs() | infinity,
                  max_events := pos_integer() | infinity,
                  jitter => boolean()}.
%% The counters a sampler shares with dyntrace_ctl (an atomics array).
-opaque counters() :: atomics:atomics_ref().
-export_type([procs/0, opts/0, plan/0, counters/0]).

%% Processes read per round, at most.
-define(MAX_PER_ROUND, 1000).
-define(DEFAULT_INTERVAL_MS, 1).
%% The counters' slots.
-define(LEFT, 1).
-define(LIMITED, 2).
-define(ENDED, 3).
-define(ROUNDS, 4).
-define(SKIPPED, 5).
-define(BUSY_US, 6).
-define(MAX_US, 7).
-define(SLOTS, 7).

-record(loop, {module :: module(),
               state :: term(),
               counters :: counters(),
               interval_us :: pos_integer(),
               %% The end of the round's interval (monotonic microseconds).
               due :: integer(),
               %% Random instants, or rounds on the timer's grid.
               jitter :: boolean(),
               %% When the round is taken: `due', or with `jitter' a
               %% random instant of the round's interval.
               at :: integer()}).

%% What a stack sampler reads.
-record(stacks, {source :: {pids, [pid()]} | all | {new, #{pid() => []}},
                 pending = [] :: [pid()],
                 max_term_bytes :: dyntrace:max_term_bytes()}).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc Checks `sample/2''s arguments in the caller's process and turns them
%% into a plan; a bad one raises `error({badarg, {What, Value}})'.
-spec plan(procs(), opts()) -> plan().
plan(Procs, Opts) ->
    #{max_term_bytes := {_, _, DefaultMaxTermBytes}} = dyntrace:option_limits(),
    O = validate_opts(Opts, #{interval => ?DEFAULT_INTERVAL_MS,
                              max_term_bytes => DefaultMaxTermBytes}, []),
    Targets = validate_procs(Procs),
    #{kind => sample,
      module => ?MODULE,
      %% On time even when the targets keep every scheduler busy: a
      %% sampler that waits for a free scheduler samples late and seldom.
      priority => high,
      args => {Targets, maps:get(max_term_bytes, O)},
      procs => Targets,
      interval => maps:get(interval, O),
      duration => maps:get(duration, O, infinity),
      max_events => maps:get(max_events, O, infinity),
      %% Each round at a random instant of its interval: a stack read on
      %% the timer's 1 ms grid sees work that follows the same grid (timers,
      %% periodic requests) at the same points of it every time, and
      %% charges its time to the wrong functions (docs/profile.md).
      jitter => true}.

%% @doc The counters of a sampler of `Plan', which {@link describe/1}
%% reads: made by its starter, so that they outlive the sampler.
-spec counters(plan()) -> counters().
counters(#{max_events := Max}) ->
    Counters = atomics:new(?SLOTS, [{signed, true}]),
    case Max of
        infinity -> ok;
        N ->
            atomics:put(Counters, ?LEFT, N),
            atomics:put(Counters, ?LIMITED, 1)
    end,
    Counters.

%% @doc Starts the sampler a plan describes, linked to the caller (dyntrace's
%% supervisor). Answers once it is ready: `new' means after this call.
-spec start_link(plan(), counters()) -> {ok, pid()}.
start_link(Plan, Counters) ->
    proc_lib:start_link(?MODULE, init, [Plan, Counters]).

%% @doc What `status()' lists of a sampler beside its id and plan: events
%% left, targets that ended, rounds done and skipped (late), and its own
%% time per round (microseconds, mean and max).
-spec describe(counters()) -> #{atom() => non_neg_integer() | infinity}.
describe(C) ->
    Rounds = atomics:get(C, ?ROUNDS),
    #{events_left => case atomics:get(C, ?LIMITED) of
                         1 -> max(0, atomics:get(C, ?LEFT));
                         _ -> infinity
                     end,
      targets_ended => atomics:get(C, ?ENDED),
      rounds => Rounds,
      rounds_skipped => atomics:get(C, ?SKIPPED),
      round_us_mean => atomics:get(C, ?BUSY_US) div max(1, Rounds),
      round_us_max => atomics:get(C, ?MAX_US)}.

%%%===================================================================
%%% THE LOOP
%%% One round every interval, due at start + n * interval (monotonic
%%% time): a late round does not shift the ones after it. A module's
%%% `sampler_tick/2' answers `{ok, State}' for the next round on that
%%% grid, or `{ok, State, DueMs}' for a round at a time of its choosing.
%%%===================================================================

%% @private
-spec init(plan(), counters()) -> no_return().
init(#{module := Module, args := Args, interval := Ms, priority := Priority} = Plan, Counters) ->
    _ = process_flag(priority, Priority),
    State = Module:sampler_init(Args),
    proc_lib:init_ack({ok, self()}),
    Now = erlang:monotonic_time(microsecond),
    L = #loop{module = Module, state = State, counters = Counters,
              interval_us = Ms * 1000, jitter = maps:get(jitter, Plan, false)},
    loop(at(L, Now + Ms * 1000)).

%% The round that ends at `Due'.
at(#loop{jitter = false} = L, Due) ->
    L#loop{due = Due, at = Due};
at(#loop{jitter = true, interval_us = Interval} = L, Due) ->
    L#loop{due = Due, at = Due - Interval + rand:uniform(Interval) - 1}.

%% Stopped by its supervisor's exit signal (it traps none).
loop(#loop{jitter = false, at = At} = L) ->
    Wait = max(0, (At - erlang:monotonic_time(microsecond) + 999) div 1000),
    receive
    after Wait ->
            tick(L)
    end;
loop(#loop{jitter = true, at = At} = L) ->
    %% The timer fires on a 1 ms tick, at the latest one tick after its
    %% time: it is set to fire before `At', and the rest (under 2 ms) is
    %% slept on a dirty I/O scheduler, which keeps no scheduler busy.
    Wait = max(0, (At - erlang:monotonic_time(microsecond)) div 1000 - 1),
    receive
    after Wait ->
            Rest = At - erlang:monotonic_time(microsecond),
            _ = Rest > 0 andalso dyntrace:sampler_sleep(min(Rest, 1000000)),
            tick(L)
    end.

tick(#loop{module = Module, state = State, counters = C, interval_us = Interval,
            due = Due} = L) ->
    Start = erlang:monotonic_time(microsecond),
    Result = Module:sampler_tick(State, C),
    End = erlang:monotonic_time(microsecond),
    Busy = End - Start,
    atomics:add(C, ?ROUNDS, 1),
    atomics:add(C, ?BUSY_US, Busy),
    Busy > atomics:get(C, ?MAX_US) andalso atomics:put(C, ?MAX_US, Busy),
    %% The rounds of the grid this one overran are counted as skipped.
    Late = max(0, (End - Due) div Interval),
    atomics:add(C, ?SKIPPED, Late),
    case Result of
        {ok, NewState} ->
            %% The next round due after now, on the grid.
            loop(at(L#loop{state = NewState}, Due + (Late + 1) * Interval));
        {ok, NewState, NextMs} ->
            %% The module says when its next round is due (monotonic ms;
            %% now if that has passed): taken then, off the grid and at no
            %% random instant. Triage's controller sleeps so from one
            %% thing due to the next instead of waking every interval.
            Next = NextMs * 1000,
            loop(L#loop{state = NewState, due = Next, at = Next});
        stop ->
            exit(normal)
    end.

%% @doc Takes one event from the budget: `false' once `max_events' were
%% written.
-spec take(counters()) -> boolean().
take(C) ->
    atomics:get(C, ?LIMITED) =/= 1 orelse atomics:sub_get(C, ?LEFT, 1) >= 0.

%% @doc Counts `N' targets that ended.
-spec ended(counters(), non_neg_integer()) -> ok.
ended(C, N) ->
    atomics:add(C, ?ENDED, N).

%%%===================================================================
%%% STACK SAMPLES
%%%===================================================================

%% @private
-spec sampler_init({[pid() | procs_spec()], dyntrace:max_term_bytes()}) -> #stacks{}.
sampler_init({Targets, MaxTermBytes}) ->
    Source = case [T || T <- Targets, is_atom(T)] of
                 [] -> {pids, Targets};
                 Specs ->
                     case lists:any(fun(S) -> not lists:member(S, [new, new_processes]) end,
                                    Specs) of
                         true -> all;
                         false -> {new, maps:from_keys(erlang:processes(), [])}
                     end
             end,
    #stacks{source = Source, max_term_bytes = MaxTermBytes}.

%% @private
-spec sampler_tick(#stacks{}, counters()) -> {ok, #stacks{}} | stop.
sampler_tick(#stacks{source = {pids, []}}, _C) ->
    stop;
sampler_tick(S, C) ->
    case lists:member(stack_sample, dyntrace:enabled_events()) of
        true -> sample(S, C);
        false -> {ok, S}
    end.

sample(#stacks{pending = [], source = Source} = S, C) ->
    case pids_of(Source) of
        [] -> {ok, S};
        Pids -> sample(S#stacks{pending = Pids}, C)
    end;
sample(#stacks{pending = Pending, max_term_bytes = Max, source = Source} = S, C) ->
    {Batch, Rest} = split(?MAX_PER_ROUND, Pending),
    case read(Batch, Max, C, []) of
        stop ->
            stop;
        [] ->
            {ok, S#stacks{pending = Rest}};
        Ended ->
            ended(C, length(Ended)),
            {ok, S#stacks{pending = Rest, source = without(Source, Ended)}}
    end.

%% Writes one sample per process; answers those that ended.
read([], _Max, _C, Ended) ->
    Ended;
read([P | Ps], Max, C, Ended) ->
    case erlang:process_info(P, [current_stacktrace, status]) of
        undefined ->
            read(Ps, Max, C, [P | Ended]);
        [{current_stacktrace, Stack}, {status, Status}] ->
            case take(C) of
                true ->
                    ok = dyntrace:emit_stack_sample(P, Status, Stack, Max),
                    read(Ps, Max, C, Ended);
                false ->
                    stop
            end
    end.

pids_of({pids, Pids}) -> Pids;
pids_of(all) -> erlang:processes() -- [self()];
pids_of({new, Old}) -> [P || P <- erlang:processes(), not is_map_key(P, Old), P =/= self()].

without({pids, Pids}, Ended) -> {pids, Pids -- Ended};
without(Source, _Ended) -> Source.

split(N, List) when length(List) =< N -> {List, []};
split(N, List) -> lists:split(N, List).

%%%===================================================================
%%% VALIDATION
%%% Everything is checked here, in the caller's process; a bad argument
%%% raises `error({badarg, {What, Value}})', as dyntrace_ctl does.
%%%===================================================================

%% @doc `Opts' over `Defaults': the keys every sampler takes (`interval',
%% `duration', `max_events', `max_term_bytes') and the sampler's own
%% `Extra' keys, whose values the caller checks.
-spec validate_opts(term(), map(), [atom()]) -> map().
validate_opts(Opts, Defaults, Extra) when is_map(Opts) ->
    maps:fold(fun(Key, Value, Acc) ->
                      case lists:member(Key, Extra) of
                          true -> Acc#{Key => Value};
                          false -> Acc#{Key => validate_opt(Key, Value)}
                      end
              end, Defaults, Opts);
validate_opts(Opts, _Defaults, _Extra) ->
    error({badarg, {options, Opts}}).

validate_opt(interval, Ms) when is_integer(Ms), Ms > 0, Ms =< 16#ffffffff -> Ms;
validate_opt(duration, Ms) when is_integer(Ms), Ms > 0, Ms =< 16#ffffffff -> Ms;
validate_opt(max_events, N) when is_integer(N), N > 0, N < 1 bsl 63 -> N;
validate_opt(max_term_bytes, N) ->
    %% The tracer's own check.
    #{max_term_bytes := Valid} = dyntrace_options:validate(#{max_term_bytes => N}),
    Valid;
validate_opt(Key, Value) ->
    error({badarg, {Key, Value}}).

validate_procs([]) ->
    error({badarg, {procs, []}});
validate_procs(List) when is_list(List) ->
    dyntrace_lib:is_proper_list(List) orelse error({badarg, {procs, List}}),
    lists:usort([validate_target(P) || P <- List]);
validate_procs(One) ->
    [validate_target(One)].

validate_target(Spec) when Spec =:= all; Spec =:= processes; Spec =:= existing;
                           Spec =:= existing_processes; Spec =:= new;
                           Spec =:= new_processes ->
    Spec;
validate_target(Target) ->
    case resolve(Target) of
        undefined -> error({badarg, {procs, Target}});
        Pid -> Pid
    end.

%% @doc A local pid, or the pid a registered name stands for now;
%% `undefined' for anything else (a port has no stack).
-spec resolve(term()) -> pid() | undefined.
resolve(P) when is_pid(P), node(P) =:= node() -> P;
resolve(Name) when is_atom(Name) ->
    case whereis(Name) of
        Pid when is_pid(Pid) -> Pid;
        _ -> undefined
    end;
resolve(_) -> undefined.
