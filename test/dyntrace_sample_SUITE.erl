%%% `dyntrace:sample/2' as an operator uses it: the stacks of chosen
%%% processes, sampled by dyntrace's own process, recorded in a real LTTng
%%% session and read back with babeltrace2. A process spinning in a known
%%% function is sampled there, running; one blocked in `receive' is sampled
%%% waiting; `status()', `clear()', `duration' and `max_events' behave as
%%% for `trace/3'; bad arguments raise badarg.
-module(dyntrace_sample_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1,
         init_per_testcase/2, end_per_testcase/2]).
-export([t_running_in_known_function/1,
         t_waiting_in_receive/1,
         t_status_and_clear/1,
         t_duration/1,
         t_max_events/1,
         t_ended_target_dropped/1,
         t_all_processes/1,
         t_stack_cut_at_max_term_bytes/1,
         t_nothing_read_while_disabled/1,
         t_bad_arguments/1]).
%% The sampled workload.
-export([spin/1, crunch/1, block/0, deep/1, deeper/1]).

suite() ->
    [{timetrap, {minutes, 2}}].

all() ->
    [t_running_in_known_function,
     t_waiting_in_receive,
     t_status_and_clear,
     t_duration,
     t_max_events,
     t_ended_target_dropped,
     t_all_processes,
     t_stack_cut_at_max_term_bytes,
     t_nothing_read_while_disabled,
     t_bad_arguments].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    Config.

end_per_suite(_Config) ->
    ok.

init_per_testcase(Case, Config) ->
    ok = lttng_session:delete_traces(Case),
    Config.

end_per_testcase(Case, _Config) ->
    ok = dyntrace:clear(),
    lttng_session:destroy_left(Case).

%%%===================================================================
%%% Cases
%%%===================================================================

%% A process that only ever spins in spin/1 and crunch/1 is sampled with
%% one of them in every stack, running or runnable.
t_running_in_known_function(_Config) ->
    S = lttng_session:start_tracked(t_running_in_known_function, [stack_sample]),
    Spinner = spawn(?MODULE, spin, [0]),
    {ok, _} = dyntrace:sample(Spinner, #{interval => 1, max_events => 100}),
    wait_stopped(),
    Samples = samples(S, Spinner),
    exit(Spinner, kill),
    ?assertEqual(100, length(Samples)),
    [begin
         ?assert(lists:member(Status, [<<"running">>, <<"runnable">>]), Status),
         ?assertNotEqual(nomatch, string:find(Stack, "dyntrace_sample_SUITE:spin/1"), Stack)
     end || {Status, Stack} <- Samples],
    lttng_session:destroy(S).

%% A process blocked in receive is sampled waiting, in block/0.
t_waiting_in_receive(_Config) ->
    S = lttng_session:start_tracked(t_waiting_in_receive, [stack_sample]),
    Blocked = spawn(?MODULE, block, []),
    {ok, _} = dyntrace:sample([Blocked], #{interval => 2, max_events => 20}),
    wait_stopped(),
    Samples = samples(S, Blocked),
    exit(Blocked, kill),
    ?assertEqual(20, length(Samples)),
    [begin
         ?assertEqual(<<"waiting">>, Status),
         [Innermost | _] = string:split(Stack, ";"),
         ?assertEqual(<<"dyntrace_sample_SUITE:block/0">>, Innermost)
     end || {Status, Stack} <- Samples],
    lttng_session:destroy(S).

%% status() lists the sampler with its targets; clear() stops it: its
%% process is gone.
t_status_and_clear(_Config) ->
    S = lttng_session:start_tracked(t_status_and_clear, [stack_sample]),
    Blocked = spawn(?MODULE, block, []),
    register(sampled_block, Blocked),
    {ok, Id} = dyntrace:sample(sampled_block, #{interval => 5}),
    lttng_session:wait_until(fun() -> rounds(Id) >= 3 end, 100),
    [#{id := Id, kind := sample, procs := [Blocked], events_left := infinity,
       ms_left := infinity, targets_ended := 0}] = traces(),
    ?assertMatch([_], samplers()),
    ok = dyntrace:clear(),
    ?assertEqual([], traces()),
    ?assertEqual([], samplers()),
    ?assert(length(samples(S, Blocked)) >= 3),
    exit(Blocked, kill),
    lttng_session:destroy(S).

%% `duration' stops the sampler by itself.
t_duration(_Config) ->
    S = lttng_session:start_tracked(t_duration, [stack_sample]),
    Blocked = spawn(?MODULE, block, []),
    {ok, Id} = dyntrace:sample(Blocked, #{interval => 2, duration => 300}),
    [#{id := Id, ms_left := Left}] = traces(),
    ?assert(Left =< 300 andalso Left > 0),
    wait_stopped(),
    ?assertEqual([], samplers()),
    ?assertNotEqual([], samples(S, Blocked)),
    exit(Blocked, kill),
    lttng_session:destroy(S).

%% `max_events' counts samples over all targets: exactly that many are
%% written, status() counts them down, and the sampler ends.
t_max_events(_Config) ->
    S = lttng_session:start_tracked(t_max_events, [stack_sample]),
    Targets = [spawn(?MODULE, block, []) || _ <- lists:seq(1, 3)],
    {ok, Id} = dyntrace:sample(Targets, #{interval => 10, max_events => 31}),
    [#{id := Id, events_left := Left}] = traces(),
    ?assert(Left =< 31),
    wait_stopped(),
    All = lttng_session:select(stack_sample, lttng_session:stop_and_read(S)),
    ?assertEqual(31, length(All)),
    [exit(T, kill) || T <- Targets],
    lttng_session:destroy(S).

%% A target that ends is dropped and counted; the sampler goes on with
%% the others, and stops when the last one ends.
t_ended_target_dropped(_Config) ->
    S = lttng_session:start_tracked(t_ended_target_dropped, [stack_sample]),
    [A, B] = [spawn(?MODULE, block, []) || _ <- [a, b]],
    {ok, Id} = dyntrace:sample([A, B], #{interval => 2}),
    exit(A, kill),
    lttng_session:wait_until(fun() ->
                                     [#{id := Id, targets_ended := N}] = traces(),
                                     N =:= 1
                             end, 100),
    Rounds = rounds(Id),
    lttng_session:wait_until(fun() -> rounds(Id) > Rounds + 5 end, 100),
    ?assertMatch([_], samplers()),
    exit(B, kill),
    wait_stopped(),
    ?assertNotEqual([], samples(S, B)),
    lttng_session:destroy(S).

%% `all' samples every process but the sampler itself, and `new' only
%% those spawned after the call.
t_all_processes(_Config) ->
    S = lttng_session:start_tracked(t_all_processes, [stack_sample]),
    Old = spawn(?MODULE, block, []),
    {ok, _} = dyntrace:sample(all, #{interval => 5, max_events => 5 * length(processes())}),
    [Sampler] = samplers(),
    {ok, _} = dyntrace:sample(new, #{interval => 5, max_events => 20}),
    New = spawn(?MODULE, block, []),
    wait_stopped(),
    Pids = [lttng_session:field("pid", E)
            || E <- lttng_session:select(stack_sample, lttng_session:stop_and_read(S))],
    Count = fun(P) -> length([X || X <- Pids, X =:= list_to_binary(pid_to_list(P))]) end,
    %% At most five rounds of `all' (its budget), none of `new'.
    ?assert(Count(Old) >= 3 andalso Count(Old) =< 5, Count(Old)),
    ?assert(Count(self()) >= 3),
    ?assertEqual(0, Count(Sampler)),
    %% Most of `new''s twenty samples are of the one process spawned since.
    ?assert(Count(New) >= 10, Count(New)),
    ?assert(length(lists:usort(Pids)) > 20),
    [exit(P, kill) || P <- [Old, New]],
    lttng_session:destroy(S).

%% A stack deeper than max_term_bytes is cut and ends in `...'.
t_stack_cut_at_max_term_bytes(_Config) ->
    S = lttng_session:start_tracked(t_stack_cut_at_max_term_bytes, [stack_sample]),
    Deep = spawn(?MODULE, deep, [200]),
    {ok, _} = dyntrace:sample(Deep, #{interval => 2, max_events => 5, max_term_bytes => 64}),
    wait_stopped(),
    Samples = samples(S, Deep),
    exit(Deep, kill),
    ?assertEqual(5, length(Samples)),
    [begin
         ?assert(byte_size(Stack) =< 64, Stack),
         ?assertEqual(<<"...">>, binary:part(Stack, byte_size(Stack), -3))
     end || {_, Stack} <- Samples],
    lttng_session:destroy(S).

%% While stack_sample is not enabled nothing is written or counted: the
%% budget is untouched.
t_nothing_read_while_disabled(_Config) ->
    lttng_session:wait_until(
      fun() -> not lists:member(stack_sample, dyntrace:enabled_events()) end, 100),
    Blocked = spawn(?MODULE, block, []),
    {ok, Id} = dyntrace:sample(Blocked, #{interval => 1, max_events => 5}),
    lttng_session:wait_until(fun() -> rounds(Id) >= 20 end, 100),
    [#{id := Id, events_left := 5}] = traces(),
    exit(Blocked, kill).

%% Bad arguments raise badarg in the caller, and nothing is started.
t_bad_arguments(_Config) ->
    Self = self(),
    [?assertError({badarg, _}, dyntrace:sample(Procs, Opts))
     || {Procs, Opts} <- [{Self, #{interval => 0}},
                          {Self, #{interval => 1.5}},
                          {Self, #{duration => -1}},
                          {Self, #{max_events => 0}},
                          {Self, #{max_term_bytes => 10}},
                          {Self, #{payload => none}},
                          {Self, [{interval, 5}]},
                          {no_such_process, #{}},
                          {[], #{}},
                          {hd(erlang:ports()), #{}},
                          {"<0.1.0>", #{}}]],
    ?assertEqual([], traces()),
    ?assertEqual([], samplers()).

%%%===================================================================
%%% The workload
%%%===================================================================

%% @doc Spins forever in this function and crunch/1.
spin(N) ->
    _ = crunch(N),
    spin(N + 1).

%% @doc Some arithmetic (never a BIF that could be sampled alone).
crunch(N) ->
    lists:foldl(fun(X, Acc) -> (Acc * 31 + X) rem 1000003 end, N, lists:seq(1, 200)).

%% @doc Blocks in receive until killed.
block() ->
    receive never_sent -> ok end.

%% @doc Blocks `N' calls deep, alternating with deeper/1 (a stack trace
%% shows a function calling itself once).
deep(0) ->
    block();
deep(N) ->
    {deeper(N - 1)}.

%% @doc See deep/1.
deeper(0) ->
    block();
deeper(N) ->
    {deep(N - 1)}.

%%%===================================================================
%%% Helpers
%%%===================================================================

%% {Status, Stack} of each sample of `Pid', in order (the session stops).
samples(S, Pid) ->
    Text = list_to_binary(pid_to_list(Pid)),
    [{lttng_session:field("status", E), lttng_session:field("stack", E)}
     || E <- lttng_session:select(stack_sample, lttng_session:stop_and_read(S)),
        lttng_session:field("pid", E) =:= Text].

traces() ->
    maps:get(traces, dyntrace:status()).

rounds(Id) ->
    case [T || #{id := I} = T <- traces(), I =:= Id] of
        [#{rounds := R}] -> R;
        [] -> 0
    end.

%% Samplers' processes alive now.
samplers() ->
    [P || P <- erlang:processes(),
          case proc_lib:initial_call(P) of
              {dyntrace_sampler, init, [_, _]} -> true;
              _ -> false
          end].

wait_stopped() ->
    lttng_session:wait_until(fun() -> traces() =:= [] andalso samplers() =:= [] end, 200).
