%%% @doc What trace flags cost while no LTTng session records: the time of
%%% a `gen_server:call/2' round trip untraced, with dyntrace's flags on both
%%% processes and nothing enabled in LTTng, and after `dyntrace:clear()'.
%%% The VM dispatches every event to the tracer before the tracer can say
%%% `discard': that dispatch is the cost of a flag left on.
%%%
%%% ```
%%% erlc -o _build/demo examples/idle_flag_cost.erl
%%% erl -noshell -pa _build/default/lib/dyntrace/ebin -pa _build/demo -s idle_flag_cost main
%%% '''
-module(idle_flag_cost).
-behaviour(gen_server).

-export([main/0]).
-export([init/1, handle_call/3, handle_cast/2]).

-define(CALLS, 100000).
-define(ROUNDS, 9).

%% @doc Prints the ns per round trip of each setting, then halts.
-spec main() -> no_return().
main() ->
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    {ok, Server} = gen_server:start(?MODULE, [], []),
    _ = run_ns(Server),
    Settings = [{"messages", fun() -> dyntrace:trace([self(), Server], [messages], #{}) end},
                {"calls to handle_call/3",
                 fun() -> dyntrace:calls({?MODULE, handle_call, 3}, #{procs => Server}) end},
                {"all events", fun() -> dyntrace:trace([self(), Server], [all], #{}) end}],
    io:format("gen_server:call/2 round trip, best of ~b runs of ~b calls each, untraced\n"
              "and with the flags of (no LTTng session recording):~n",
              [?ROUNDS, ?CALLS]),
    [begin
         %% Untraced and traced runs alternate, so that both see the same
         %% machine load; the best of each is kept.
         Pairs = [begin
                      Untraced = run_ns(Server),
                      {ok, _} = Set(),
                      Traced = run_ns(Server),
                      ok = dyntrace:clear(),
                      {Untraced, Traced}
                  end || _ <- lists:seq(1, ?ROUNDS)],
         {U, T} = {lists:min([U || {U, _} <- Pairs]), lists:min([T || {_, T} <- Pairs])},
         io:format("  ~-24s ~6b ns -> ~6b ns (~.2fx)~n", [Name, U, T, T / U])
     end || {Name, Set} <- Settings],
    halt(0).

run_ns(Server) ->
    {Us, ok} = timer:tc(fun() -> calls(Server, ?CALLS) end),
    Us * 1000 div ?CALLS.

calls(_Server, 0) ->
    ok;
calls(Server, N) ->
    {pong, N} = gen_server:call(Server, {ping, N}),
    calls(Server, N - 1).

%% @private
-spec init([]) -> {ok, no_state}.
init([]) ->
    {ok, no_state}.

%% @private
-spec handle_call({ping, integer()}, gen_server:from(), no_state) ->
          {reply, {pong, integer()}, no_state}.
handle_call({ping, N}, _From, State) ->
    {reply, {pong, N}, State}.

%% @private
-spec handle_cast(term(), no_state) -> {noreply, no_state}.
handle_cast(_Msg, State) ->
    {noreply, State}.
