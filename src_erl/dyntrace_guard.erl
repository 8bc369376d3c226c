%%% @doc The calls' rate guard (`max_rate => {Calls, Ms}' of
%%% `dyntrace:calls/2', set by default in `dyntrace:record/2'): its state
%%% and decisions. `dyntrace_ctl' sets and reads the `call_count' patterns
%%% every `Ms div 10' ms; a function called more than its share loses its
%%% trace pattern, and one `call_guard' event names it. Only `scope =>
%%% local' patterns are guarded: docs/reference.md (`calls/2') says why.
-module(dyntrace_guard).

-export([validate/1, new/2, interval/1, poll/2, functions/1, removed/1, rate/1]).

-export_type([guard/0, rate/0]).

%% `Calls' calls per `Ms' milliseconds.
-type rate() :: {pos_integer(), pos_integer()}.
-opaque guard() :: #{calls := pos_integer(),
                     ms := pos_integer(),
                     counts := #{mfa() => non_neg_integer()},
                     removed := [mfa()]}.

%% Slices of `Ms' looked at, and the shortest slice.
-define(SLICES, 10).
-define(MIN_SLICE_MS, 10).

%% @doc A checked `max_rate' option; `error({badarg, {max_rate, Value}})'
%% otherwise.
-spec validate(term()) -> rate().
validate({Calls, Ms} = Rate) when is_integer(Calls), Calls > 0, is_integer(Ms), Ms > 0,
                                  Ms =< 16#ffffffff ->
    Rate;
validate(Other) ->
    error({badarg, {max_rate, Other}}).

%% @doc A guard of `Rate' over `Functions' (none called yet).
-spec new(rate(), [mfa()]) -> guard().
new({Calls, Ms}, Functions) ->
    #{calls => Calls, ms => Ms, counts => maps:from_list([{F, 0} || F <- Functions]),
      removed => []}.

%% @doc How often (ms) the counts are looked at.
-spec interval(guard()) -> pos_integer().
interval(#{ms := Ms}) ->
    max(?MIN_SLICE_MS, Ms div ?SLICES).

%% @doc Looks at the counts (`Count(MFA)': the call count now, or
%% `undefined' when it cannot be read): the guard after, and the functions
%% called faster than the rate since the last look, to remove now.
-spec poll(guard(), fun((mfa()) -> non_neg_integer() | undefined)) -> {guard(), [mfa()]}.
poll(#{counts := Counts, removed := Removed} = G, Count) ->
    {Calls, Ms} = rate(G),
    Allowed = max(1, Calls * interval(G) div Ms),
    {Next, Over} = maps:fold(
                     fun(MFA, Last, {Acc, Out}) ->
                             case Count(MFA) of
                                 undefined -> {Acc#{MFA => Last}, Out};
                                 N when N - Last > Allowed -> {Acc, [MFA | Out]};
                                 N -> {Acc#{MFA => N}, Out}
                             end
                     end, {#{}, []}, Counts),
    Sorted = lists:sort(Over),
    {G#{counts := Next, removed := Removed ++ Sorted}, Sorted}.

%% @doc The functions still guarded.
-spec functions(guard()) -> [mfa()].
functions(#{counts := Counts}) ->
    lists:sort(maps:keys(Counts)).

%% @doc The functions whose pattern the guard removed, in order.
-spec removed(guard()) -> [mfa()].
removed(#{removed := Removed}) ->
    Removed.

%% @doc The guard's rate.
-spec rate(guard()) -> rate().
rate(#{calls := Calls, ms := Ms}) ->
    {Calls, Ms}.
