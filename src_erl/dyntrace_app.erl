%%% @doc The `dyntrace' application: `application:ensure_all_started(dyntrace)'
%%% (or a release that lists `dyntrace') starts `dyntrace_sup', which owns
%%% `dyntrace_ctl', the announcer of the node's names, and every sampler and
%%% recording. The application is optional: `l(dyntrace)' in a bare shell
%%% and the front door work without it (the first call starts the same
%%% supervisor), and when it was started that way the application adopts it.
%%%
%%% Stopping the application undoes what the front door set (flags,
%%% patterns, samplers, recordings) before its processes end; a tracer set
%%% by hand with `erlang:trace/3' stays, as the runtime holds it.
-module(dyntrace_app).
-behaviour(application).

-export([start/2, prep_stop/1, stop/1]).

%% @doc Starts the supervisor, or adopts the one the front door started.
-spec start(application:start_type(), term()) -> {ok, pid()}.
start(_Type, _Args) ->
    {ok, dyntrace_sup:ensure_started()}.

%% @doc Stops the supervisor while the application still runs: the
%% supervisor may not be the application master's own child (adopted), so
%% it is stopped here rather than left to the master's exit signal.
-spec prep_stop(State) -> State.
prep_stop(State) ->
    ok = dyntrace_sup:stop(),
    State.

%% @doc Nothing left to do: {@link prep_stop/1} stopped the processes.
-spec stop(term()) -> ok.
stop(_State) ->
    ok.
