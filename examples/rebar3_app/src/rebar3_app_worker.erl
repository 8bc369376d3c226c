%%% @doc The example's worker: a registered server that answers pings,
%%% something to trace (`dyntrace:trace(rebar3_app_worker, [messages], ...)').
-module(rebar3_app_worker).
-behaviour(gen_server).
-export([start_link/0, ping/1, init/1, handle_call/3, handle_cast/2]).

%% @doc Starts the worker, registered as `rebar3_app_worker'.
-spec start_link() -> {ok, pid()}.
start_link() ->
    gen_server:start_link({local, ?MODULE}, ?MODULE, [], []).

%% @doc Sends `{ping, Word}' and returns the answer, `{pong, Word}'.
-spec ping(atom()) -> {pong, atom()}.
ping(Word) ->
    gen_server:call(?MODULE, {ping, Word}).

%% @doc No state.
-spec init([]) -> {ok, []}.
init([]) ->
    {ok, []}.

%% @doc Answers a ping.
-spec handle_call({ping, atom()}, gen_server:from(), []) -> {reply, {pong, atom()}, []}.
handle_call({ping, Word}, _From, State) ->
    {reply, {pong, Word}, State}.

%% @doc Nothing is cast.
-spec handle_cast(term(), []) -> {noreply, []}.
handle_cast(_Message, State) ->
    {noreply, State}.
