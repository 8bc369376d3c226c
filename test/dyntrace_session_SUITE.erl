%%% Trace sessions (OTP 27+): dyntrace as the tracer of `trace' sessions,
%%% several at once and beside a plain `erlang:trace/3' tracer. Each session
%%% hands the tracer its own state, so the same send traced by two sessions
%%% is two LTTng events, each written with its session's limits; destroying
%%% a session stops its events and only its events. Every case reads the
%%% real trace back with babeltrace2. Skipped before OTP 27.
-module(dyntrace_session_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([t_session_tracer/1,
         t_two_sessions/1,
         t_destroy_session/1,
         t_session_beside_erlang_trace/1]).

-import(dyntrace_test_mod, [actor/0, run/2]).

%% Longer than 64 bytes as text, shorter than the default 1024.
-define(MEDIUM, {medium, lists:seq(1, 100)}).

suite() ->
    [{timetrap, {minutes, 2}}].

all() ->
    [t_session_tracer,
     t_two_sessions,
     t_destroy_session,
     t_session_beside_erlang_trace].

init_per_suite(Config) ->
    case list_to_integer(erlang:system_info(otp_release)) of
        Release when Release >= 27 ->
            ok = lttng_session:traced_node(),
            {module, dyntrace_test_mod} = code:ensure_loaded(dyntrace_test_mod),
            Config;
        Release ->
            {skip, io_lib:format("trace sessions need OTP 27 or later; this is OTP ~b",
                                 [Release])}
    end.

end_per_suite(_Config) ->
    ok.

%%%===================================================================
%%% Cases
%%%===================================================================

%% A session whose tracer is dyntrace writes the LTTng events of what it
%% traces: a message send and a call, with the session's own process and
%% function settings.
t_session_tracer(_Config) ->
    S = start_lttng(t_session_tracer, [message_send, function_call]),
    Session = trace:session_create(dyntrace_ct_session, {dyntrace, []}, []),
    A = actor(),
    1 = trace:process(Session, A, true, [send, call]),
    1 = trace:function(Session, {dyntrace_test_mod, work, 1}, true, [local]),
    run(A, fun() -> self() ! {hello, session}, dyntrace_test_mod:work(2) end),
    true = trace:session_destroy(Session),
    Events = read(S, A),
    ?assertEqual([<<"{hello,session}">>], sent_to_self(A, Events)),
    ?assertEqual([#{<<"pid">> => text(A), <<"entry">> => <<"dyntrace_test_mod:work/1">>,
                    <<"depth">> => 0}],
                 [F || #{fields := F} <- lttng_session:select(function_call, Events)]).

%% Two sessions trace the same process with different tracer states: the
%% one send is written twice, in full by the default session and cut at 64
%% bytes by the other.
t_two_sessions(_Config) ->
    S = start_lttng(t_two_sessions, [message_send]),
    {Full, Short, A} = two_sessions_tracing_sends(),
    ok = run(A, fun() -> self() ! ?MEDIUM, ok end),
    destroy([Full, Short]),
    Sent = sent_to_self(A, read(S, A)),
    Text = iolist_to_binary(io_lib:format("~w", [?MEDIUM])),
    ?assert(byte_size(Text) > 64),
    Cut = dyntrace:format_term(?MEDIUM, 64),
    ?assert(byte_size(Cut) =< 64),
    ?assertEqual(lists:sort([Text, Cut]), lists:sort(Sent)).

%% Destroying a session stops its events at once and leaves the other
%% session's alone; with both gone, nothing more is written.
t_destroy_session(_Config) ->
    S = start_lttng(t_destroy_session, [message_send]),
    {Full, Short, A} = two_sessions_tracing_sends(),
    ok = run(A, fun() -> self() ! {both, lists:seq(1, 40)}, ok end),
    true = trace:session_destroy(Short),
    ok = run(A, fun() -> self() ! {full_only, lists:seq(1, 40)}, ok end),
    true = trace:session_destroy(Full),
    ok = run(A, fun() -> self() ! {none, lists:seq(1, 40)}, ok end),
    Sent = sent_to_self(A, read(S, A)),
    Both = {both, lists:seq(1, 40)},
    FullOnly = {full_only, lists:seq(1, 40)},
    ?assertEqual(lists:sort([dyntrace:format_term(Both, 1024), dyntrace:format_term(Both, 64),
                             dyntrace:format_term(FullOnly, 1024)]),
                 lists:sort(Sent)).

%% A session and a tracer set with erlang:trace/3 (the node's default
%% session) trace the same process side by side, each with its state;
%% turning the plain one off leaves the session's events.
t_session_beside_erlang_trace(_Config) ->
    S = start_lttng(t_session_beside_erlang_trace, [message_send]),
    Session = trace:session_create(dyntrace_ct_session, {dyntrace, []}, []),
    A = actor(),
    1 = trace:process(Session, A, true, [send]),
    1 = erlang:trace(A, true, [send, dyntrace:tracer(#{max_term_bytes => 64})]),
    ok = run(A, fun() -> self() ! ?MEDIUM, ok end),
    1 = erlang:trace(A, false, [send]),
    ok = run(A, fun() -> self() ! {session_only, 1}, ok end),
    ?assertEqual({tracer, {dyntrace, []}}, trace:info(Session, A, tracer)),
    true = trace:session_destroy(Session),
    Sent = sent_to_self(A, read(S, A)),
    ?assertEqual(lists:sort([dyntrace:format_term(?MEDIUM, 1024),
                             dyntrace:format_term(?MEDIUM, 64),
                             <<"{session_only,1}">>]),
                 lists:sort(Sent)).

%%%===================================================================
%%% Helpers
%%%===================================================================

%% An LTTng session of its own with `Events' enabled and started, once this
%% node's enabled checks see them.
start_lttng(Case, Events) ->
    S = lttng_session:create(Case, Events),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled(Events),
    S.

%% Two trace sessions, one with the default tracer state and one cutting
%% terms at 64 bytes, both tracing the sends of a new actor.
two_sessions_tracing_sends() ->
    Full = trace:session_create(dyntrace_ct_full, {dyntrace, []}, []),
    Short = trace:session_create(dyntrace_ct_short, {dyntrace, #{max_term_bytes => 64}}, []),
    A = actor(),
    1 = trace:process(Full, A, true, [send]),
    1 = trace:process(Short, A, true, [send]),
    {Full, Short, A}.

%% Destroys the trace sessions; the handles stay referenced until here, as
%% a collected handle would end its session early.
destroy(Sessions) ->
    [true = trace:session_destroy(Session) || Session <- Sessions],
    ok.

%% The events of the LTTng session that concern `Pid'.
read(S, Pid) ->
    Events = lttng_session:stop_and_read(S),
    lttng_session:destroy(S),
    Text = text(Pid),
    Mine = [E || #{fields := F} = E <- Events, lists:member(Text, maps:values(F))],
    ct:log("~b events, ~b of ~s:~n~p", [length(Events), length(Mine), Text, Mine]),
    Mine.

%% The messages `Pid' sent to itself (its replies to the suite left out).
sent_to_self(Pid, Events) ->
    Text = text(Pid),
    [Message || #{fields := #{<<"from">> := From, <<"to">> := To, <<"message">> := Message}}
                    <- lttng_session:select(message_send, Events),
                From =:= Text, To =:= Text].

text(Pid) ->
    list_to_binary(pid_to_list(Pid)).
