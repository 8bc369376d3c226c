%%% User probes against a real LTTng session: `dyntrace:p/N', `pn/N' and
%%% `user_trace_*' write their events with the caller's pid, its tag, the
%%% integers and strings given (missing ones 0 and ""), answer `true' when
%%% written and `false' when the event is not enabled, and raise `badarg'
%%% on the arguments OTP's documentation rejects.
-module(dyntrace_probes_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([t_p_fields/1, t_pn_fields/1, t_s1_fields/1, t_explicit_tag/1,
         t_long_strings/1, t_not_enabled/1, t_bad_arguments/1]).

-define(PROBES, [user_trace_s1, user_trace_i4s4, user_trace_n]).

suite() ->
    [{timetrap, {minutes, 2}}].

all() ->
    [t_p_fields, t_pn_fields, t_s1_fields, t_explicit_tag, t_long_strings,
     t_not_enabled, t_bad_arguments].

init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    Config.

end_per_suite(_Config) ->
    ok.

%%%===================================================================
%%% Cases
%%%===================================================================

%% p/0..8: integers first, then iolists; the tag set by put_tag/1.
t_p_fields(_Config) ->
    Pid = pid_text(self()),
    Events = record(t_p_fields,
                    fun() ->
                            true = dyntrace:available(),
                            undefined = dyntrace:put_tag(<<"order-42">>),
                            <<"order-42">> = dyntrace:get_tag(),
                            [true = P() || P <- [fun() -> dyntrace:p() end,
                                                 fun() -> dyntrace:p(-7, "one") end,
                                                 fun() -> dyntrace:p(1, 2, 3, 1 bsl 40, <<"a">>,
                                                                     ["b", [$c | <<"d">>]],
                                                                     "e", "f") end,
                                                 fun() -> dyntrace:p("only") end]],
                            <<"order-42">> = dyntrace:put_tag(undefined)
                    end),
    ?assertEqual([{Pid, <<"order-42">>, [0, 0, 0, 0], [<<>>, <<>>, <<>>, <<>>]},
                  {Pid, <<"order-42">>, [-7, 0, 0, 0], [<<"one">>, <<>>, <<>>, <<>>]},
                  {Pid, <<"order-42">>, [1, 2, 3, 1 bsl 40], [<<"a">>, <<"bcd">>, <<"e">>, <<"f">>]},
                  {Pid, <<"order-42">>, [0, 0, 0, 0], [<<"only">>, <<>>, <<>>, <<>>]}],
                 [i4s4(E) || E <- lttng_session:select(user_trace_i4s4, Events)]).

%% pn/1..9: the probe number first; no tag set is "", a tag set is
%% written by the probes of that process only.
t_pn_fields(_Config) ->
    Self = self(),
    Other = spawn_link(fun() ->
                               receive go ->
                                       undefined = dyntrace:put_tag("req-9"),
                                       Self ! {written, dyntrace:pn(1023, 5, "other")}
                               end
                       end),
    Events = record(t_pn_fields,
                    fun() ->
                            true = dyntrace:pn(0),
                            Other ! go,
                            receive {written, true} -> ok end,
                            true = dyntrace:pn(7, 1, 2, 3, 4, "w", "x", "y", "z")
                    end),
    ?assertEqual([{0, pid_text(Self), <<>>, [0, 0, 0, 0], [<<>>, <<>>, <<>>, <<>>]},
                  {1023, pid_text(Other), <<"req-9">>, [5, 0, 0, 0],
                   [<<"other">>, <<>>, <<>>, <<>>]},
                  {7, pid_text(Self), <<>>, [1, 2, 3, 4], [<<"w">>, <<"x">>, <<"y">>, <<"z">>]}],
                 [list_to_tuple([lttng_session:field("probe", E) | tuple_to_list(i4s4(E))])
                  || E <- lttng_session:select(user_trace_n, Events)]).

%% user_trace_s1/1: the caller and the message.
t_s1_fields(_Config) ->
    Events = record(t_s1_fields,
                    fun() -> true = dyntrace:user_trace_s1(["hello ", <<"world">>]) end),
    ?assertEqual([#{<<"pid">> => pid_text(self()), <<"message">> => <<"hello world">>}],
                 [F || #{fields := F} <- lttng_session:select(user_trace_s1, Events)]).

%% user_trace_i4s4/9 and user_trace_n/10 write the tag they are given;
%% `undefined' integers are 0.
t_explicit_tag(_Config) ->
    Events = record(t_explicit_tag,
                    fun() ->
                            true = dyntrace:user_trace_i4s4(<<"t1">>, 1, undefined, 3, 4,
                                                            "a", undefined, "c", "d"),
                            true = dyntrace:user_trace_n(9, undefined, 1, 2, 3, 4,
                                                         "a", "b", "c", "d")
                    end),
    [I4s4] = lttng_session:select(user_trace_i4s4, Events),
    [N] = lttng_session:select(user_trace_n, Events),
    Pid = pid_text(self()),
    ?assertEqual({Pid, <<"t1">>, [1, 0, 3, 4], [<<"a">>, <<>>, <<"c">>, <<"d">>]}, i4s4(I4s4)),
    ?assertEqual({Pid, <<>>, [1, 2, 3, 4], [<<"a">>, <<"b">>, <<"c">>, <<"d">>]}, i4s4(N)),
    ?assertEqual(9, lttng_session:field("probe", N)).

%% A string over 1024 bytes is cut there, on a character boundary, with
%% `...'; a huge deep iolist costs what is written.
t_long_strings(_Config) ->
    Long = lists:duplicate(2000, $x),
    %% 1021 bytes kept: "x" then 510 two-byte characters, then `...'.
    Utf8 = [$x | lists:duplicate(1000, <<"é"/utf8>>)],
    Deep = lists:foldl(fun(_, Acc) -> [Acc] end, [], lists:seq(1, 1000000)),
    Events = record(t_long_strings,
                    fun() -> true = dyntrace:p(Long, Utf8, Deep, [lists:duplicate(100000, "y")]) end),
    [E] = lttng_session:select(user_trace_i4s4, Events),
    {_, _, _, [S1, S2, S3, S4]} = i4s4(E),
    ?assertEqual(iolist_to_binary([lists:duplicate(1021, $x), "..."]), S1),
    ?assertEqual(iolist_to_binary([$x, lists:duplicate(510, <<"é"/utf8>>), "..."]), S2),
    ?assertEqual(<<"...">>, S3),
    ?assertEqual(iolist_to_binary([lists:duplicate(1021, $y), "..."]), S4).

%% No session: every probe answers false and writes nothing; an enabled
%% one answers true.
t_not_enabled(_Config) ->
    ?assertEqual([], [E || E <- dyntrace:enabled_events(), lists:member(E, ?PROBES)]),
    ?assertEqual([false, false, false, false],
                 [dyntrace:p(1, "a"), dyntrace:pn(3, "b"), dyntrace:user_trace_s1("c"),
                  dyntrace:user_trace_n(1, undefined, 1, 2, 3, 4, "a", "b", "c", "d")]),
    S = lttng_session:start_tracked(t_not_enabled, [user_trace_n]),
    try
        ?assertEqual([false, true, false], [dyntrace:p(1), dyntrace:pn(1), dyntrace:user_trace_s1("c")])
    after
        lttng_session:destroy(S)
    end.

%% The arguments OTP's documentation rejects raise badarg where the event
%% is enabled; where it is not, the probe answers false without looking at
%% them (that is its whole cost), but for a probe number outside 0..1023
%% and a message that is no list or binary.
t_bad_arguments(_Config) ->
    Always = [fun() -> dyntrace:pn(1024) end,
              fun() -> dyntrace:pn(-1, "a") end,
              fun() -> dyntrace:pn(one) end,
              fun() -> dyntrace:user_trace_s1(42) end,
              fun() -> dyntrace:user_trace_n(2000, undefined, 1, 2, 3, 4, "a", "b", "c", "d") end],
    Enabled = [fun() -> dyntrace:p(1, 2, 3, 4, 5) end,
               fun() -> dyntrace:p("a", "b", "c", "d", "e") end,
               fun() -> dyntrace:p("a", 1) end,
               fun() -> dyntrace:p(an_atom) end,
               fun() -> dyntrace:p(1 bsl 64) end,
               fun() -> dyntrace:pn(3, "a", 1) end,
               fun() -> dyntrace:user_trace_i4s4(not_a_tag, 1, 2, 3, 4, "a", "b", "c", "d") end,
               fun() -> dyntrace:p(["a", an_atom]) end,
               fun() -> dyntrace:p([256]) end,
               fun() -> dyntrace:pn(1, 1, [$a | b]) end,
               fun() -> dyntrace:user_trace_s1([-1]) end],
    Raised = fun(Funs) -> lists:map(fun dyntrace_test_trace:raised/1, Funs) end,
    ?assertEqual([badarg || _ <- Always], Raised(Always)),
    ?assertEqual([{returned, false} || _ <- Enabled], Raised(Enabled)),
    S = lttng_session:start_tracked(t_bad_arguments, ?PROBES),
    try
        ?assertEqual([badarg || _ <- Always ++ Enabled], Raised(Always ++ Enabled))
    after
        lttng_session:destroy(S)
    end.

%%%===================================================================
%%% Helpers
%%%===================================================================

%% Runs `Fun' with the events of the suite recorded; their events, in order.
record(Case, Fun) ->
    lttng_session:record(Case, ?PROBES, Fun).

%% {pid, tag, [i1..i4], [s1..s4]} of a user_trace_i4s4 or user_trace_n event.
i4s4(E) ->
    F = fun(Name) -> lttng_session:field(Name, E) end,
    {F("pid"), F("tag"), [F(I) || I <- ["i1", "i2", "i3", "i4"]],
     [F(S) || S <- ["s1", "s2", "s3", "s4"]]}.

pid_text(Pid) ->
    list_to_binary(pid_to_list(Pid)).
