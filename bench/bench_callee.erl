%%% @doc The module the call-heavy workload traces: one small function that
%%% returns, or throws on every 64th argument so that exception trace has
%%% something to report.
-module(bench_callee).

-export([step/1]).

%% @doc `I + 1', or a throw when `I' is a multiple of 64.
-spec step(integer()) -> integer().
step(I) when I band 63 =:= 0 -> throw({multiple_of_64, I});
step(I) -> I + 1.
