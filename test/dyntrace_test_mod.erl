%%% @doc Workload for dyntrace_lttng_SUITE: functions whose calls, returns,
%%% exceptions and garbage collections the suite traces, and a small actor
%%% that runs what the suite asks it to, so that the traced process is one
%%% the suite owns.
-module(dyntrace_test_mod).

-export([work/1, outer/1, fail/1, unmute/0, mute/0,
         a_function_whose_code_location_is_longer_than_the_smallest_byte_limit/0,
         grow_and_collect/1, hot_run/2, hot_remote_run/2, remote_step/2, remote_helper/1,
         actor/0, run/2, stop/1, stop/2, wait/1]).

%% @doc A traced function: `{acc, [1..N]}'.
work(N) ->
    {acc, lists:seq(1, N)}.

%% @doc Calls `work/1' not in tail position, so that the return goes back
%% here (`return_to').
outer(N) ->
    Result = work(N),
    {outer, Result}.

%% @doc Raises an exception of `Class'.
fail(error) -> erlang:error({failed, error});
fail(throw) -> erlang:throw({failed, throw});
fail(exit) -> erlang:exit({failed, exit}).

%% @doc `Steps' calls of `step/2', each calling the hot helper `helper/1'
%% `Helpers' times (a module with one hot function); `{steps, Steps}'.
hot_run(Steps, Helpers) ->
    _ = [step(I, Helpers) || I <- lists:seq(1, Steps)],
    {steps, Steps}.

step(I, Helpers) ->
    lists:foreach(fun helper/1, lists:seq(1, Helpers)),
    I.

helper(N) ->
    N + 1.

%% @doc `hot_run/2' through the export: `Steps' calls of `remote_step/2',
%% each calling `remote_helper/1' `Helpers' times, every call global.
hot_remote_run(Steps, Helpers) ->
    _ = [?MODULE:remote_step(I, Helpers) || I <- lists:seq(1, Steps)],
    {steps, Steps}.

%% @doc One step of `hot_remote_run/2'.
remote_step(I, Helpers) ->
    _ = [?MODULE:remote_helper(N) || N <- lists:seq(1, Helpers)],
    I.

%% @doc The hot function of `hot_remote_run/2'.
remote_helper(N) ->
    N + 1.

%% @doc A code location longer than 64 bytes, which is never cut.
a_function_whose_code_location_is_longer_than_the_smallest_byte_limit() ->
    ok.

%% @doc Match-spec hook of the silent case: its pattern says `{silent,false}'.
unmute() -> ok.

%% @doc Match-spec hook of the silent case: its pattern says `{silent,true}'.
mute() -> ok.

%% @doc Grows the heap with `Rounds' of garbage and collects it: minor
%% collections on the way, a major one at the end.
grow_and_collect(Rounds) ->
    Kept = grow(Rounds, []),
    true = erlang:garbage_collect(),
    length(Kept).

grow(0, Acc) ->
    Acc;
grow(N, Acc) ->
    _Garbage = lists:reverse(lists:seq(1, 1000)),
    grow(N - 1, [N | Acc]).

%% @doc A process that runs the funs it is sent (see {@link run/2}).
actor() ->
    spawn(fun actor_loop/0).

%% @doc Runs `Fun' in `Actor' and returns what it returned.
run(Actor, Fun) ->
    Ref = make_ref(),
    Actor ! {run, self(), Ref, Fun},
    receive
        {Ref, Result} -> Result
    after 20000 ->
            error({actor_timeout, Actor})
    end.

%% @doc Ends `Actor' with `Reason' and waits until it is gone.
stop(Actor, Reason) ->
    Mref = monitor(process, Actor),
    Actor ! {stop, Reason},
    receive
        {'DOWN', Mref, process, Actor, _} -> ok
    after 20000 ->
            error({actor_timeout, Actor})
    end.

%% @doc Ends `Actor' normally.
stop(Actor) ->
    stop(Actor, normal).

%% @doc Waits for `go', then ends with `Reason'.
wait(Reason) ->
    receive
        go -> exit(Reason)
    end.

actor_loop() ->
    receive
        {run, From, Ref, Fun} ->
            From ! {Ref, Fun()},
            actor_loop();
        {stop, normal} ->
            ok;
        {stop, Reason} ->
            exit(Reason)
    end.
