%%% The benchmarks' figures for a ratio measured in rounds: each round
%%% runs every configuration once, side by side, so that each round gives
%%% one ratio (traced / untraced of the same minute), and the rounds' median
%%% ratio comes with a distribution-free confidence interval: the order
%%% statistics `k' and `n + 1 - k' of the `n' ratios, with `k' the largest
%%% for which the chance that the true median lies outside them, every
%%% ratio above or below it independently with a chance of one half, is at
%%% most 5% (a binomial tail on each side). Fewer than 6 rounds cannot give
%%% a 95% interval: the widest, the smallest to the largest, is given with
%%% its own confidence.
-module(bench_stats).

-export([median/1, interval/1, interval_text/1]).

%% @doc The median of a non-empty list (the lower one of an even count).
-spec median([number()]) -> number().
median(List) ->
    lists:nth((length(List) + 1) div 2, lists:sort(List)).

%% @doc `{Median, Low, High, Confidence}' of the rounds' ratios.
-spec interval([number()]) -> {number(), number(), number(), float()}.
interval(Ratios) ->
    Sorted = lists:sort(Ratios),
    N = length(Sorted),
    K = rank(N, 1),
    Outside = 2 * tail(N, K - 1),
    {median(Sorted), lists:nth(K, Sorted), lists:nth(N + 1 - K, Sorted), 1 - Outside}.

%% @doc "1.08x (95% interval 1.02-1.13x, 9 rounds)".
-spec interval_text([number()]) -> string().
interval_text(Ratios) ->
    {M, Lo, Hi, C} = interval(Ratios),
    lists:flatten(io_lib:format("~.2fx (~b% interval ~.2f-~.2fx, ~b rounds)",
                                [M, floor(100 * C), Lo, Hi, length(Ratios)])).

%% The largest rank K (at most the median's) whose two-sided tail is at
%% most 5%, or 1 when none is.
rank(N, K) ->
    case K + 1 =< (N + 1) div 2 andalso 2 * tail(N, K) =< 0.05 of
        true -> rank(N, K + 1);
        false -> K
    end.

%% P(X =< J) for X ~ Binomial(N, 1/2).
tail(_N, J) when J < 0 ->
    0.0;
tail(N, J) ->
    lists:sum([choose(N, I) || I <- lists:seq(0, J)]) / math:pow(2, N).

choose(N, K) ->
    lists:foldl(fun(I, Acc) -> Acc * (N - K + I) div I end, 1, lists:seq(1, K)).
