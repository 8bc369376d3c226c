%%% The cost of a user probe (`dyntrace:p/N', `pn/N') per call: with its
%%% event not enabled (the NIF call and the enabled load, after the
%%% argument checks), enabled in a recording session, and a plain remote
%%% call for scale. Writes a Markdown section to the file named.
-module(probes_bench).

-export([main/1]).

-define(CALLS, 1000000).
-define(ROUNDS, 5).

%% @doc Runs the probes and writes the section to `Out'.
-spec main([string()]) -> no_return().
main([Out]) ->
    ok = lttng_session:ensure_daemon(),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    ok = lttng_session:wait_registered(),
    Probes = [{"`dyntrace:available()` (a plain remote call)", fun() -> dyntrace:available() end},
              {"`dyntrace:p(1, 2, \"abc\")`", fun() -> dyntrace:p(1, 2, "abc") end},
              {"`dyntrace:pn(7, 1, 2, \"abc\", <<\"de\">>)`",
               fun() -> dyntrace:pn(7, 1, 2, "abc", <<"de">>) end}],
    Off = [{Name, false, best(Fun)} || {Name, Fun} <- Probes],
    S = lttng_session:create(probes_bench, [user_trace_i4s4, user_trace_n]),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled([user_trace_i4s4, user_trace_n]),
    On = [{Name, true, best(Fun)} || {Name, Fun} <- tl(Probes)],
    Discarded = lttng_session:discarded(S),
    lttng_session:destroy(S),
    Lines = ["## User probes: the cost of a call\n\n",
             io_lib:format("`make bench` (bench/probes_bench.erl): ~b calls in a loop, best of ~b "
                           "rounds, ns per call; on: one session recording the event "
                           "(~b events discarded by LTTng).\n\n", [?CALLS, ?ROUNDS, Discarded]),
             "| call | event enabled | ns/call |\n|---|---|---|\n",
             [io_lib:format("| ~s | ~s | ~.1f |\n", [Name, yes_no(E), Ns])
              || {Name, E, Ns} <- Off ++ On],
             "\n"],
    ok = file:write_file(Out, Lines),
    io:put_chars(Lines),
    halt(0).

yes_no(true) -> "yes";
yes_no(false) -> "no".

best(Fun) ->
    lists:min([round_ns(Fun) || _ <- lists:seq(1, ?ROUNDS)]).

round_ns(Fun) ->
    T0 = erlang:monotonic_time(nanosecond),
    loop(Fun, ?CALLS),
    (erlang:monotonic_time(nanosecond) - T0) / ?CALLS.

loop(_Fun, 0) -> ok;
loop(Fun, N) -> _ = Fun(), loop(Fun, N - 1).
