%%% @doc The example's supervisor: one worker.
-module(rebar3_app_sup).
-behaviour(supervisor).
-export([start_link/0, init/1]).

%% @doc Starts the supervisor, registered.
-spec start_link() -> {ok, pid()}.
start_link() ->
    supervisor:start_link({local, ?MODULE}, ?MODULE, []).

%% @doc One permanent worker.
-spec init([]) -> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init([]) ->
    {ok, {#{strategy => one_for_one},
          [#{id => rebar3_app_worker, start => {rebar3_app_worker, start_link, []}}]}}.
