#!/usr/bin/env escript
%% Cost of dyntrace:format_term/2 at the default budget: a typical message,
%% and huge terms next to a term of the same shape that just fills the
%% budget. Prints a Markdown section for BENCHMARKS.md. Run from the repo
%% top after `rebar3 compile`:
%%     escript bench/format_bench.escript
%% or, for the leaf table alone:
%%     escript bench/format_bench.escript leaves
%% (DYNTRACE_EBIN=DIR loads the modules from DIR instead, e.g. the build
%% scripts/otp-newest.sh makes, to run under another release.)
-mode(compile).

-define(BUDGET, 1024).
-define(ROUNDS, 11).
%% The leaf table's rounds: many short ones, so that each kind's fastest
%% is one the machine's other jobs left alone.
-define(LEAF_ROUNDS, 51).

main(["leaves"]) ->
    load(),
    leaves();
main(_) ->
    load(),
    Message = {request, self(), make_ref(), {get, <<"user:1234">>, [{timeout, 5000}]}, "hi"},
    Shapes =
        [{"3,000,000-element list", 3000000, fun(N) -> lists:seq(1, N) end},
         {"2,000,000-deep nesting", 2000000, fun(N) -> nest(N) end},
         {"64 MiB binary", 64 * 1024 * 1024, fun(N) -> binary:copy(<<7>>, N) end},
         {"3,000,000-character string", 3000000, fun(N) -> lists:duplicate(N, $a) end},
         {"1,000,000-key map", 1000000,
          fun(N) -> maps:from_list([{K, K} || K <- lists:seq(1, N)]) end},
         %% Integers of 2^4096 and more are cut before, not converted; the
         %% largest written integer is compared with one filling the budget.
         {"2^1,000,000", 1000000, fun(N) -> 1 bsl N end, 3400},
         {"2^4096 - 1 (largest written)", 4096, fun(N) -> (1 bsl N) - 1 end, 3400}],
    io:format("## Term formatter~n~n"),
    io:format("`escript bench/format_bench.escript` (after `rebar3 compile`): ns per "
              "`dyntrace:format_term(Term, ~w)` call, median of ~w rounds [min-max]. "
              "Each huge term is compared with the term of the same shape whose text "
              "just fills the ~w-byte budget (rounds interleaved). OTP ~s, ~w schedulers.~n~n",
              [?BUDGET, ?ROUNDS, ?BUDGET, erlang:system_info(otp_release),
               erlang:system_info(schedulers)]),
    io:format("| term | text bytes | time per call | same shape, just filling the budget "
              "| its time | ratio |~n"),
    io:format("|---|---:|---:|---|---:|---:|~n"),
    io:format("| ~w-byte message | ~w | ~s | | | |~n",
              [text_size(Message), text_size(Message), timing(Message, 200000)]),
    [case Shape of
         {Name, Huge, Make} -> row(Name, Huge, Make, fill(Make, 1, Huge));
         {Name, Huge, Make, FillN} -> row(Name, Huge, Make, FillN)
     end || Shape <- Shapes],
    leaves(),
    ok.

%% Lists of 20,000 equal leaves of every kind (and of different floats) at
%% the largest budget: the cost per byte of text should not depend on the
%% leaf's kind (the target: every kind within 3x per text byte of the
%% fastest; the atoms' rows show how far a text's length alone moves it).
%% The kinds' rounds are interleaved, so that a busy machine weighs on all
%% alike.
leaves() ->
    Big = binary:copy(<<"abcdefgh">>, 64),
    Port = hd(erlang:ports()),
    Y = erlang:phash2(self()),
    Leaves = [{"`1000` (small integer)", 1000},
              {"`2^100` (bignum)", 1 bsl 100},
              {"`-(2^200)` (bignum)", -(1 bsl 200)},
              {"`1.5` (float)", 1.5},
              %% No float's text is kept, but one value repeated takes
              %% the same branches every time: different floats of the
              %% same text length (1.000037e+00 up to 1.740000e+00).
              {"20,000 different floats (`1.000037e+00` ...)",
               {list, [1.0 + I * 0.000037 || I <- lists:seq(1, 20000)]}},
              %% One kind at four lengths: a kept text's element costs
              %% about the same at every length, its cost per byte does not.
              {"`a` (atom)", a},
              {"`ok` (atom)", ok},
              {"`'hello world'` (quoted atom)", 'hello world'},
              {"a 40-letter atom", list_to_atom(lists:duplicate(40, $a))},
              {"a pid", self()},
              {"a port", Port},
              {"a reference", make_ref()},
              {"`<<\"abc\">>` (heap binary)", <<"abc">>},
              %% Both releases copy a part this short into a heap binary.
              {"`<<\"cdef\">>` (`binary:part` of a larger one)", binary:part(Big, 2, 4)},
              {"`<<1:3>>` (bits, not whole bytes)", <<1:3>>},
              {"`<<\"ab\",1:3>>` (bits, not whole bytes)", <<"ab", 1:3>>},
              {"`<<\"cdef\",1:3>>` at bit offset 5 (sub-bitstring)",
               element(2, split_bits(<<1:5, "cdef", 1:3>>, 5))},
              {"`fun lists:reverse/1`", fun lists:reverse/1},
              {"`fun() -> ok end` (local fun)", fun() -> ok end},
              {"a local fun with a free variable", fun() -> Y end},
              {"`[]`", []}],
    Budget = 65536,
    %% Each list is kept as a persistent term: copied once, its cells in
    %% order, and never moved again. On the process heap a garbage
    %% collection copies the lists breadth first, their cells interleaved
    %% (a cell every few cache lines), and walking one then waits on memory
    %% at every element: the short texts, whose whole lists are written,
    %% measured the heap's layout more than their own cost.
    Lists = [{Name, kept({?MODULE, Name}, case Leaf of
                                              {list, List} -> List;
                                              _ -> lists:duplicate(20000, Leaf)
                                          end)} || {Name, Leaf} <- Leaves],
    Sizes = [byte_size(dyntrace:format_term(List, Budget)) || {_, List} <- Lists],
    Rounds = [[round_ns(List, Budget, 20) || {_, List} <- Lists]
              || _ <- lists:seq(1, ?LEAF_ROUNDS)],
    Timings = [stats([lists:nth(I, Round) || Round <- Rounds])
               || I <- lists:seq(1, length(Lists))],
    %% Per byte from each kind's fastest round: on a shared machine the
    %% medians carry the other jobs' load, the minimums much less.
    Rows = [{Name, Bytes, Timing, Min / Bytes}
            || {{Name, _}, Bytes, {_, Min, _} = Timing} <- lists:zip3(Lists, Sizes, Timings)],
    %% An element's bytes: its text and its separator (most lists' texts
    %% are cut at the budget, before their last element).
    Elements = [element_bytes(List, Budget) || {_, List} <- Lists],
    Fastest = lists:min([PerByte || {_, _, _, PerByte} <- Rows]),
    [{_, _, _, Integer} | _] = Rows,
    io:format("~nLists of 20,000 equal leaves: time per `format_term(List, ~w)` call, "
              "median of ~w rounds of 20 calls [min-max] (the kinds' rounds interleaved); "
              "the fastest round per byte of text written, and that against the fastest "
              "kind's (target: 3x at most) and the small integer's; the fastest round per "
              "element (text bytes and time per leaf, its separator included). OTP ~s.~n~n",
              [Budget, ?LEAF_ROUNDS, erlang:system_info(otp_release)]),
    io:format("| leaf | text bytes | time per call | per text byte (min) "
              "| against the fastest | against the small integer | per element (min) |~n"),
    io:format("|---|---:|---:|---:|---:|---:|---:|~n"),
    [io:format("| ~s | ~w | ~s | ~.2f ns | ~.1fx | ~.1fx | ~w bytes, ~.1f ns |~n",
               [Name, Bytes, format_timing(Timing), PerByte, PerByte / Fastest,
                PerByte / Integer, N, PerByte * N])
     || {{Name, Bytes, Timing, PerByte}, N} <- lists:zip(Rows, Elements)],
    ok.

kept(Key, Term) ->
    persistent_term:put(Key, Term),
    persistent_term:get(Key).

element_bytes([Leaf, Next | _], Budget) ->
    byte_size(dyntrace:format_term([Leaf, Next], Budget))
        - byte_size(dyntrace:format_term([Next], Budget)).

split_bits(Bits, N) ->
    <<A:N/bitstring, B/bitstring>> = Bits,
    {A, B}.

row(Name, HugeN, Make, FillN) ->
    Huge = Make(HugeN),
    Fill = Make(FillN),
    {HugeTime, FillTime} = paired_ns(Huge, Fill, 2000),
    {HugeMed, _, _} = HugeTime,
    {FillMed, _, _} = FillTime,
    io:format("| ~s | ~w | ~s | N = ~w (~w bytes) | ~s | ~.2fx |~n",
              [Name, text_size(Huge), format_timing(HugeTime), FillN, text_size(Fill),
               format_timing(FillTime), HugeMed / FillMed]).

%% The largest N in [Lo, Hi] whose term's whole text fits in the budget.
fill(_Make, Lo, Hi) when Lo >= Hi -> Lo;
fill(Make, Lo, Hi) ->
    Mid = (Lo + Hi + 1) div 2,
    case byte_size(dyntrace:format_term(Make(Mid), 65536)) =< ?BUDGET of
        true -> fill(Make, Mid, Hi);
        false -> fill(Make, Lo, Mid - 1)
    end.

nest(N) -> lists:foldl(fun(_, Acc) -> [Acc] end, [], lists:seq(1, N)).

text_size(Term) -> byte_size(dyntrace:format_term(Term, ?BUDGET)).

timing(Term, Calls) -> format_timing(per_call_ns(Term, Calls)).

load() ->
    Top = filename:dirname(filename:dirname(filename:absname(escript:script_name()))),
    Ebin = case os:getenv("DYNTRACE_EBIN") of
               false -> filename:join(Top, "_build/default/lib/dyntrace/ebin");
               Dir -> Dir
           end,
    true = code:add_patha(Ebin),
    {module, dyntrace} = code:ensure_loaded(dyntrace).

format_timing({Med, Min, Max}) -> io_lib:format("~s [~s-~s]", [ns(Med), ns(Min), ns(Max)]).

ns(N) when N >= 1000000 -> io_lib:format("~.2f ms", [N / 1000000]);
ns(N) when N >= 10000 -> io_lib:format("~.1f us", [N / 1000]);
ns(N) -> io_lib:format("~w ns", [round(N)]).

%% Both terms' timings, their rounds interleaved so that a busy machine
%% weighs on both alike.
paired_ns(A, B, Calls) ->
    _ = {dyntrace:format_term(A, ?BUDGET), dyntrace:format_term(B, ?BUDGET)},
    Pairs = [{round_ns(A, Calls), round_ns(B, Calls)} || _ <- lists:seq(1, ?ROUNDS)],
    {stats([X || {X, _} <- Pairs]), stats([Y || {_, Y} <- Pairs])}.

stats(Rounds) ->
    Sorted = lists:sort(Rounds),
    {lists:nth((length(Sorted) + 1) div 2, Sorted), hd(Sorted), lists:last(Sorted)}.

%% Median, min and max over rounds of the mean ns per call.
per_call_ns(Term, Calls) ->
    per_call_ns(Term, ?BUDGET, Calls).

per_call_ns(Term, Budget, Calls) ->
    _ = dyntrace:format_term(Term, Budget),
    stats([round_ns(Term, Budget, Calls) || _ <- lists:seq(1, ?ROUNDS)]).

round_ns(Term, Calls) ->
    round_ns(Term, ?BUDGET, Calls).

round_ns(Term, Budget, Calls) ->
    T0 = erlang:monotonic_time(nanosecond),
    loop(Term, Budget, Calls),
    (erlang:monotonic_time(nanosecond) - T0) / Calls.

loop(_Term, _Budget, 0) -> ok;
loop(Term, Budget, N) ->
    _ = dyntrace:format_term(Term, Budget),
    loop(Term, Budget, N - 1).
