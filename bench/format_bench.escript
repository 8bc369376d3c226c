#!/usr/bin/env escript
%% Cost of dyntrace:format_term/2: a typical message, and huge terms at the
%% default budget next to a term that just fills it. Prints a Markdown
%% section for BENCHMARKS.md. Run from the repo top after `rebar3 compile`:
%%     escript bench/format_bench.escript
-mode(compile).

-define(BUDGET, 1024).
-define(ROUNDS, 7).

main(_) ->
    Top = filename:dirname(filename:dirname(filename:absname(escript:script_name()))),
    true = code:add_patha(filename:join(Top, "_build/default/lib/dyntrace/ebin")),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    Message = {request, self(), make_ref(), {get, <<"user:1234">>, [{timeout, 5000}, verbose]},
               "a short string", 3.25},
    Fill = lists:seq(1, 300),
    Huge = [{"3,000,000-element list", lists:seq(1, 3000000)},
            {"2,000,000-deep nesting", lists:foldl(fun(_, A) -> [A] end, [], lists:seq(1, 2000000))},
            {"64 MiB binary", binary:copy(<<7>>, 64 * 1024 * 1024)},
            {"1,000,000-key map", maps:from_list([{K, K} || K <- lists:seq(1, 1000000)])}],
    MsgNs = per_call_ns(Message, 200000),
    FillNs = per_call_ns(Fill, 20000),
    io:format("## Term formatter~n~n"),
    io:format("`escript bench/format_bench.escript` (after `rebar3 compile`); "
              "median of ~w rounds, [min-max]; budget ~w bytes.~n~n", [?ROUNDS, ?BUDGET]),
    io:format("| term | text bytes | time per call | vs. budget-filling term |~n"),
    io:format("|---|---:|---:|---:|~n"),
    row(io_lib:format("~w-byte message", [byte_size(dyntrace:format_term(Message, ?BUDGET))]),
        Message, MsgNs, FillNs),
    row("budget-filling list (`lists:seq(1, 300)`)", Fill, FillNs, FillNs),
    [row(Name, Term, per_call_ns(Term, 2000), FillNs) || {Name, Term} <- Huge],
    ok.

row(Name, Term, {Med, Min, Max}, {FillMed, _, _}) ->
    io:format("| ~s | ~w | ~s [~s-~s] | ~.2fx |~n",
              [Name, byte_size(dyntrace:format_term(Term, ?BUDGET)), ns(Med), ns(Min), ns(Max),
               Med / FillMed]).

ns(N) when N >= 1000000 -> io_lib:format("~.2f ms", [N / 1000000]);
ns(N) when N >= 1000 -> io_lib:format("~.2f us", [N / 1000]);
ns(N) -> io_lib:format("~w ns", [round(N)]).

%% Median, min and max over rounds of the mean ns per call.
per_call_ns(Term, Calls) ->
    _ = dyntrace:format_term(Term, ?BUDGET),
    Rounds = lists:sort([round_ns(Term, Calls) || _ <- lists:seq(1, ?ROUNDS)]),
    {lists:nth((?ROUNDS + 1) div 2, Rounds), hd(Rounds), lists:last(Rounds)}.

round_ns(Term, Calls) ->
    T0 = erlang:monotonic_time(nanosecond),
    loop(Term, Calls),
    (erlang:monotonic_time(nanosecond) - T0) / Calls.

loop(_Term, 0) -> ok;
loop(Term, N) ->
    _ = dyntrace:format_term(Term, ?BUDGET),
    loop(Term, N - 1).
