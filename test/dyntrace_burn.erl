%%% CPU work for the profile suite's planted functions, in a module of its
%%% own so that tracing the suite's module does not trace its loop: an
%%% arithmetic loop on small integers, which allocates nothing (no garbage
%%% collection to weigh one function more than its instructions).
-module(dyntrace_burn).

-export([spin/1]).

%% @doc Runs `N' rounds of the loop; a small integer.
-spec spin(non_neg_integer()) -> non_neg_integer().
spin(N) ->
    spin(N, 0).

spin(0, Acc) ->
    Acc;
spin(N, Acc) ->
    spin(N - 1, (Acc * 31 + N) band 16#ffffff).
