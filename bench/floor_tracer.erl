%%% @doc The benchmark's floor: an `erl_tracer' module whose NIF answers one
%%% constant from every `enabled*' callback and does nothing in `trace*'.
%%% Timing a workload traced by it measures the VM's own tracer dispatch;
%%% with `set_answer(discard)' it is the cheapest switched-off tracer.
-module(floor_tracer).

-export([set_answer/1, take_count/0]).
-include("tracer_callbacks.hrl").

%% @doc What every `enabled*' callback answers from now on (`trace_status'
%% is always answered `trace', so the tracer stays attached).
-spec set_answer(trace | discard) -> ok.
set_answer(_Answer) -> ?NIF.

%% @doc The number of `trace*' calls since the previous call, all threads.
-spec take_count() -> non_neg_integer().
take_count() -> ?NIF.
