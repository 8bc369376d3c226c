%%% @doc The benchmark's floor: an `erl_tracer' module whose NIF answers one
%%% constant from every `enabled*' callback and does nothing in `trace*'.
%%% Timing a workload traced by it measures the VM's own tracer dispatch;
%%% with `set_answer(discard)' it is the cheapest switched-off tracer.
-module(floor_tracer).

-export([set_answer/1, take_count/0]).
-export([enabled/3, trace/5,
         enabled_procs/3, trace_procs/5,
         enabled_ports/3, trace_ports/5,
         enabled_running_procs/3, trace_running_procs/5,
         enabled_running_ports/3, trace_running_ports/5,
         enabled_call/3, trace_call/5,
         enabled_send/3, trace_send/5,
         enabled_receive/3, trace_receive/5,
         enabled_garbage_collection/3, trace_garbage_collection/5]).

-on_load(init/0).

init() ->
    Dir = filename:dirname(code:which(?MODULE)),
    erlang:load_nif(filename:join(Dir, "floor_tracer"), 0).

-define(NIF, erlang:nif_error(nif_not_loaded)).

%% @doc What every `enabled*' callback answers from now on (`trace_status'
%% is always answered `trace', so the tracer stays attached).
-spec set_answer(trace | discard) -> ok.
set_answer(_Answer) -> ?NIF.

%% @doc The number of `trace*' calls since the previous call, all threads.
-spec take_count() -> non_neg_integer().
take_count() -> ?NIF.

%% @doc erl_tracer callback: the constant answer.
-spec enabled(atom(), term(), term()) -> trace | discard.
enabled(_, _, _) -> ?NIF.
%% @doc erl_tracer callback: counts the call, writes nothing.
-spec trace(atom(), term(), term(), term(), map()) -> ok.
trace(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link enabled/3}.
-spec enabled_procs(atom(), term(), term()) -> trace | discard.
enabled_procs(_, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link trace/5}.
-spec trace_procs(atom(), term(), term(), term(), map()) -> ok.
trace_procs(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link enabled/3}.
-spec enabled_ports(atom(), term(), term()) -> trace | discard.
enabled_ports(_, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link trace/5}.
-spec trace_ports(atom(), term(), term(), term(), map()) -> ok.
trace_ports(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link enabled/3}.
-spec enabled_running_procs(atom(), term(), term()) -> trace | discard.
enabled_running_procs(_, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link trace/5}.
-spec trace_running_procs(atom(), term(), term(), term(), map()) -> ok.
trace_running_procs(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link enabled/3}.
-spec enabled_running_ports(atom(), term(), term()) -> trace | discard.
enabled_running_ports(_, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link trace/5}.
-spec trace_running_ports(atom(), term(), term(), term(), map()) -> ok.
trace_running_ports(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link enabled/3}.
-spec enabled_call(atom(), term(), term()) -> trace | discard.
enabled_call(_, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link trace/5}.
-spec trace_call(atom(), term(), term(), term(), map()) -> ok.
trace_call(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link enabled/3}.
-spec enabled_send(atom(), term(), term()) -> trace | discard.
enabled_send(_, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link trace/5}.
-spec trace_send(atom(), term(), term(), term(), map()) -> ok.
trace_send(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link enabled/3}.
-spec enabled_receive(atom(), term(), term()) -> trace | discard.
enabled_receive(_, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link trace/5}.
-spec trace_receive(atom(), term(), term(), term(), map()) -> ok.
trace_receive(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link enabled/3}.
-spec enabled_garbage_collection(atom(), term(), term()) -> trace | discard.
enabled_garbage_collection(_, _, _) -> ?NIF.
%% @doc erl_tracer callback, as {@link trace/5}.
-spec trace_garbage_collection(atom(), term(), term(), term(), map()) -> ok.
trace_garbage_collection(_, _, _, _, _) -> ?NIF.
