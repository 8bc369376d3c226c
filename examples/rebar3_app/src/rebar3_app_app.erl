%%% @doc The example's application: starts its supervisor.
-module(rebar3_app_app).
-behaviour(application).
-export([start/2, stop/1]).

%% @doc Starts the supervisor.
-spec start(application:start_type(), term()) -> {ok, pid()}.
start(_Type, _Args) ->
    rebar3_app_sup:start_link().

%% @doc Nothing to clean up.
-spec stop(term()) -> ok.
stop(_State) ->
    ok.
