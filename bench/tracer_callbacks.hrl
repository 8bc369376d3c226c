%% The 18 erl_tracer callbacks of a benchmark tracer module, each a NIF of
%% the module's C library (which says what each answers). Included by
%% floor_tracer and limit_tracer.
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
    erlang:load_nif(filename:join(Dir, atom_to_list(?MODULE)), 0).

-define(NIF, erlang:nif_error(nif_not_loaded)).

%% @doc erl_tracer callback (NIF).
-spec enabled(atom(), term(), term()) -> trace | discard.
enabled(_, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec trace(atom(), term(), term(), term(), map()) -> ok.
trace(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec enabled_procs(atom(), term(), term()) -> trace | discard.
enabled_procs(_, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec trace_procs(atom(), term(), term(), term(), map()) -> ok.
trace_procs(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec enabled_ports(atom(), term(), term()) -> trace | discard.
enabled_ports(_, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec trace_ports(atom(), term(), term(), term(), map()) -> ok.
trace_ports(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec enabled_running_procs(atom(), term(), term()) -> trace | discard.
enabled_running_procs(_, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec trace_running_procs(atom(), term(), term(), term(), map()) -> ok.
trace_running_procs(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec enabled_running_ports(atom(), term(), term()) -> trace | discard.
enabled_running_ports(_, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec trace_running_ports(atom(), term(), term(), term(), map()) -> ok.
trace_running_ports(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec enabled_call(atom(), term(), term()) -> trace | discard.
enabled_call(_, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec trace_call(atom(), term(), term(), term(), map()) -> ok.
trace_call(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec enabled_send(atom(), term(), term()) -> trace | discard.
enabled_send(_, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec trace_send(atom(), term(), term(), term(), map()) -> ok.
trace_send(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec enabled_receive(atom(), term(), term()) -> trace | discard.
enabled_receive(_, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec trace_receive(atom(), term(), term(), term(), map()) -> ok.
trace_receive(_, _, _, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec enabled_garbage_collection(atom(), term(), term()) -> trace | discard.
enabled_garbage_collection(_, _, _) -> ?NIF.
%% @doc erl_tracer callback (NIF).
-spec trace_garbage_collection(atom(), term(), term(), term(), map()) -> ok.
trace_garbage_collection(_, _, _, _, _) -> ?NIF.
