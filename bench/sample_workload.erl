%%% The CPU-bound gen_server workload of the sampling benchmark: each
%%% server answers every call by crunching numbers in functions of this
%%% module (so that local call tracing of the module sees every step), and
%%% each client calls its own server in a loop.
-module(sample_workload).
-behaviour(gen_server).

-export([start/1, run/2, stop/1]).
-export([init/1, handle_call/3, handle_cast/2]).

%% @doc Starts `N' servers; their pids.
-spec start(pos_integer()) -> [pid()].
start(N) ->
    [begin {ok, P} = gen_server:start(?MODULE, [], []), P end || _ <- lists:seq(1, N)].

%% @doc One client per server calls it for `Ms' milliseconds; the calls
%% answered in all.
-spec run([pid()], pos_integer()) -> non_neg_integer().
run(Servers, Ms) ->
    Parent = self(),
    Until = erlang:monotonic_time(millisecond) + Ms,
    Clients = [spawn_link(fun() -> Parent ! {self(), client(S, Until, 0)} end) || S <- Servers],
    lists:sum([receive {C, Calls} -> Calls end || C <- Clients]).

%% @doc Stops the servers.
-spec stop([pid()]) -> ok.
stop(Servers) ->
    lists:foreach(fun gen_server:stop/1, Servers).

client(Server, Until, Calls) ->
    case erlang:monotonic_time(millisecond) < Until of
        true ->
            _ = gen_server:call(Server, {work, Calls rem 50}, infinity),
            client(Server, Until, Calls + 1);
        false ->
            Calls
    end.

%% @private
-spec init([]) -> {ok, #{}}.
init([]) ->
    {ok, #{}}.

%% @private
-spec handle_call({work, non_neg_integer()}, gen_server:from(), map()) ->
          {reply, integer(), map()}.
handle_call({work, Seed}, _From, State) ->
    {reply, checksum(expand(Seed, 200)), State}.

%% @private
-spec handle_cast(term(), map()) -> {noreply, map()}.
handle_cast(_Msg, State) ->
    {noreply, State}.

expand(Seed, N) ->
    [mix(Seed, I) || I <- lists:seq(1, N)].

mix(Seed, I) ->
    (Seed * 7919 + I * I) rem 104729.

checksum(List) ->
    lists:foldl(fun(X, Acc) -> (Acc * 31 + X) band 16#ffffff end, 0, List).
