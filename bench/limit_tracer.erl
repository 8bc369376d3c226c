%%% @doc The benchmark's limit for a tracer that writes `message_send',
%%% `function_call' and `function_return': an `erl_tracer' module whose NIF
%%% (`bench/limit_tracer.c') answers `trace' for send (call) tags while
%%% that LTTng event is enabled and writes the same tracepoint dyntrace
%%% writes, with constant texts, those dyntrace writes (`set_texts/3',
%%% `set_call_texts/2'). Its added cost per event is the VM's dispatch plus one
%%% tracepoint; dyntrace's added cost is reported against it.
-module(limit_tracer).

-export([set_texts/3, set_call_texts/2, is_enabled/0]).
-include("tracer_callbacks.hrl").

%% @doc The `from', `to' and `message' texts of every event written from
%% now on (each under 1100 bytes).
-spec set_texts(iodata(), iodata(), iodata()) -> ok.
set_texts(_From, _To, _Message) -> ?NIF.

%% @doc The `pid' and `entry' texts of every `function_call' and
%% `function_return' written from now on (depth 0, as dyntrace writes it).
-spec set_call_texts(iodata(), iodata()) -> ok.
set_call_texts(_Pid, _Entry) -> ?NIF.

%% @doc Whether this library's `message_send' tracepoint is enabled.
-spec is_enabled() -> boolean().
is_enabled() -> ?NIF.
