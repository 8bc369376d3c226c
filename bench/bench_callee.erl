%%% @doc The module the call-heavy workload traces: one small function that
%%% returns, or throws on every 64th argument so that exception trace has
%%% something to report; and one that always returns, for the call events'
%%% cost against the limit tracer.
-module(bench_callee).

-export([step/1, same/1]).

%% @doc `I + 1', or a throw when `I' is a multiple of 64.
-spec step(integer()) -> integer().
step(I) when I band 63 =:= 0 -> throw({multiple_of_64, I});
step(I) -> I + 1.

%% @doc `X' itself.
-spec same(term()) -> term().
same(X) -> X.
