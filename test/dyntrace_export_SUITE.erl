%%% `dyntrace-analyze export --timeline' and `profile --speedscope' on a
%%% small workload recorded in a real LTTng session, opened in the real
%%% viewer offline: npm's speedscope app (scripts/setup.sh installs it),
%%% served from disk to Debian's chromium, headless. A registered
%%% gen_server `export_shop' answers ?ROUNDS x ?PRICES_PER_ROUND `price'
%%% calls, traced (messages, scheduling, calls with their returns, GC,
%%% registration) while dyntrace:memory/1 samples memory.
%%%
%%% The timeline must hold exactly what the analyses count: its scheduler
%%% slices `sched''s, its calls per function `calls'', its GCs `gc''s, its
%%% message flows `delivery''s, each flow's two ends bound by one id on the
%%% sender's and the receiver's tracks; every track is named, the server by
%%% its registered name as every table names it, the node by its name. In
%%% speedscope, the profile and the timeline load with nothing on the
%%% console but its own notes, the server's profile is listed by name and
%%% its functions in the sandwich view's table.
%%%
%%% `export --parquet' writes the same recording as Parquet tables, which
%%% DuckDB (PyPI's duckdb in a venv of its own, scripts/setup.sh) reads:
%%% SQL over them must give the analyses' own figures (calls per function,
%%% messages per receiver and kind, GCs per process: exactly; the calls'
%%% percentiles within one bucket of their histograms) and the planted
%%% answers: a registered `export_audit' is sent ?NOTES notes and ?ALERTS
%%% alerts, and collects its garbage once per alert.
-module(dyntrace_export_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([t_timeline_holds_what_the_analyses_count/1,
         t_timeline_names_every_track/1,
         t_each_track_nests/1,
         t_size_guard_asks_for_a_selection/1,
         t_speedscope_draws_the_profile/1,
         t_speedscope_draws_the_timeline/1,
         t_sql_counts_what_the_analyses_count/1,
         t_sql_percentiles_within_a_bucket/1,
         t_sql_answers_the_questions_of_the_docs/1,
         t_parquet_selects_as_every_command/1,
         t_parquet_refuses_a_bad_directory/1]).
-export([price/1]).
-export([init/1, handle_call/3, handle_cast/2]).

-define(ROUNDS, 10).
-define(PRICES_PER_ROUND, 10).
-define(NOTES, 30).
-define(ALERTS, 12).
%% The interpreter with DuckDB (scripts/setup.sh makes its venv).
-define(DUCKDB_PYTHON, "/var/cache/dyntrace/duckdb-venv/bin/python").
-define(TABLES, ["events", "messages", "calls", "slices", "gc", "samples", "memory"]).
-define(EVENTS, [function_call, function_return, function_exception,
                 message_send, message_receive, process_scheduled,
                 process_register, gc_minor_start, gc_minor_end,
                 gc_major_start, gc_major_end, memory_sample,
                 process_memory, node_name, process_name]).

suite() ->
    [{timetrap, {minutes, 4}}].

all() ->
    [t_timeline_holds_what_the_analyses_count,
     t_timeline_names_every_track,
     t_each_track_nests,
     t_size_guard_asks_for_a_selection,
     t_speedscope_draws_the_profile,
     t_speedscope_draws_the_timeline,
     t_sql_counts_what_the_analyses_count,
     t_sql_percentiles_within_a_bucket,
     t_sql_answers_the_questions_of_the_docs,
     t_parquet_selects_as_every_command,
     t_parquet_refuses_a_bad_directory].

%% The workload is recorded once and exported once; each case reads the
%% files.
init_per_suite(Config) ->
    case {os:find_executable("chromium"), speedscope_app(), filelib:is_regular(?DUCKDB_PYTHON)} of
        {false, _, _} ->
            {fail, "chromium is not installed (scripts/setup.sh installs it)"};
        {_, false, _} ->
            {fail, "npm's speedscope is not installed (scripts/setup.sh installs it)"};
        {_, _, false} ->
            {fail, "DuckDB's venv " ++ ?DUCKDB_PYTHON ++ " is missing (scripts/setup.sh makes it)"};
        {Chromium, App, true} ->
            ok = lttng_session:traced_node(),
            %% A distributed node names itself: delivery pairs its messages.
            ok = dyntrace_peers:alive(list_to_atom("dyntrace_export_" ++ os:getpid())),
            S = lttng_session:start_tracked(export_workload, ?EVENTS),
            Server = try workload()
                     after
                         ok = dyntrace:clear(),
                         ok = dyntrace_test_trace:untrace(?MODULE),
                         lttng_session:stop(S)
                     end,
            Exe = analyze_cmd:exe(),
            Out = filename:join(lttng_session:base_dir(), "export_" ++ os:getpid()),
            ok = filelib:ensure_dir(filename:join(Out, "x")),
            Timeline = filename:join(Out, "timeline.json"),
            Profile = filename:join(Out, "profile.speedscope.json"),
            Export = analyze_cmd:json(Exe, ["export", "--json", "--timeline", Timeline, dir(S)]),
            _ = analyze_cmd:json(Exe, ["profile", "--json", "--speedscope", Profile, dir(S)]),
            Parquet = filename:join(Out, "parquet"),
            Tables = analyze_cmd:json(Exe, ["export", "--json", "--parquet", Parquet, dir(S)]),
            [{analyze, Exe}, {chromium, Chromium}, {app, App}, {session, S}, {out, Out},
             {timeline, Timeline}, {profile, Profile}, {server, Server},
             {parquet, Parquet}, {tables, Tables},
             {written, hd(maps:get(<<"export">>, Export))} | Config]
    end.

end_per_suite(Config) ->
    _ = net_kernel:stop(),
    lttng_session:destroy(?config(session, Config)),
    lttng_session:cmd_ok("rm -rf " ++ ?config(out, Config)),
    ok.

%%%===================================================================
%%% Parquet, read by DuckDB
%%%===================================================================

%% Calls per function, messages per receiver and kind, GCs per process:
%% SQL gives the analyses' counts, and the planted ones.
t_sql_counts_what_the_analyses_count(Config) ->
    Tables = ?config(tables, Config),
    Rows = maps:from_list([{T, N} || #{<<"table">> := T, <<"rows">> := N}
                                         <- maps:get(<<"parquet">>, Tables)]),
    [[[Events]], CallRows, KindRows, GcRows, Audit, AuditGcs] =
        sql(Config, ["SELECT count(*) FROM events",
                     "SELECT function, count(*) FROM calls "
                     "WHERE outcome <> 'unfinished' AND NOT recursive GROUP BY function",
                     %% As mailbox counts: what was queued, or, for a
                     %% receiver whose receives are not traced, what was
                     %% sent to it.
                     "SELECT receiver_pid, kind, count(*) FROM messages "
                     "WHERE queued_time IS NOT NULL OR receiver_pid NOT IN "
                     "(SELECT receiver_pid FROM messages WHERE queued_time IS NOT NULL) "
                     "GROUP BY ALL",
                     "SELECT pid, kind, count(*) FROM gc GROUP BY ALL",
                     "SELECT kind, count(*), count(latency_ns) FROM messages "
                     "WHERE receiver_name = 'export_audit' GROUP BY kind",
                     "SELECT kind, count(*) FROM gc WHERE name = 'export_audit' GROUP BY kind"]),
    ?assertEqual(maps:get(<<"events">>, Tables), Events),
    ?assertEqual(Events, maps:get(<<"events">>, Rows)),

    Calls = maps:get(<<"calls">>, analyze(Config, ["calls"])),
    Counted = maps:from_list([{E, N} || #{<<"entry">> := E, <<"count">> := N} <- Calls, N > 0]),
    ?assertEqual(Counted, maps:from_list([{F, N} || [F, N] <- CallRows])),
    ?assertEqual(?ROUNDS * ?PRICES_PER_ROUND,
                 maps:get(<<(atom_to_binary(?MODULE))/binary, ":price/1">>, Counted, missing)),

    Kinds = maps:get(<<"mailbox_kinds">>, analyze(Config, ["mailbox"])),
    ?assertEqual(maps:from_list([{{R, K}, N} || #{<<"receiver">> := R, <<"kind">> := K,
                                                 <<"count">> := N} <- Kinds]),
                 maps:from_list([{{R, K}, N} || [R, K, N] <- KindRows])),
    %% Every planted message queued, each paired with its send.
    ?assertEqual(lists:sort([[<<"note">>, ?NOTES, ?NOTES], [<<"alert">>, ?ALERTS, ?ALERTS],
                             [<<"done">>, 1, 1]]),
                 lists:sort(Audit)),

    Gc = maps:get(<<"gc">>, analyze(Config, ["gc"])),
    ?assertEqual(maps:from_list([{{P, K}, N} || #{<<"pid">> := P, <<"kind">> := K,
                                               <<"count">> := N} <- Gc]),
                 maps:from_list([{{P, K}, N} || [P, K, N] <- GcRows])),
    ?assertEqual(?ALERTS, proplists:get_value(<<"major">>, [{K, N} || [K, N] <- AuditGcs])).

%% Each function's p50, p90 and p99 by SQL (quantile_disc: the value at
%% rank ceil(q * n), as the histograms rank) within one bucket of `calls''
%% (3 significant digits: a bucket is at most 1/1024 of its values).
t_sql_percentiles_within_a_bucket(Config) ->
    [Rows] = sql(Config, ["SELECT function, quantile_disc(duration_ns, 0.5), "
                          "quantile_disc(duration_ns, 0.9), quantile_disc(duration_ns, 0.99) "
                          "FROM calls WHERE outcome <> 'unfinished' AND NOT recursive "
                          "GROUP BY function"]),
    Sql = maps:from_list([{F, Ps} || [F | Ps] <- Rows]),
    Calls = maps:get(<<"calls">>, analyze(Config, ["calls"])),
    Checked = [{E, Q, Hist, Exact}
               || C = #{<<"entry">> := E, <<"count">> := N} <- Calls, N > 0,
                  {Q, Exact} <- lists:zip([<<"p50_ns">>, <<"p90_ns">>, <<"p99_ns">>],
                                          maps:get(E, Sql)),
                  Hist <- [maps:get(Q, C)]],
    ?assert(length(Checked) >= 6, Checked),
    ?assertEqual([], [Bad || Bad = {_, _, Hist, Exact} <- Checked,
                             not (Exact =< Hist andalso Hist - Exact =< Hist div 1024 + 1)]).

%% The questions docs/export.md answers with SQL, which no analysis has:
%% the messages to one process by kind, and each sender's share of them.
t_sql_answers_the_questions_of_the_docs(Config) ->
    ByKind = "SELECT kind, count(*) AS messages FROM messages "
             "WHERE receiver_name = 'export_audit' AND queued_time IS NOT NULL "
             "GROUP BY kind ORDER BY messages DESC",
    Share = "SELECT coalesce(sender_label, '(not traced)') AS sender, count(*) AS messages, "
            "round(100.0 * count(*) / sum(count(*)) OVER (), 1) AS percent "
            "FROM messages WHERE receiver_name = 'export_shop' AND queued_time IS NOT NULL "
            "GROUP BY ALL ORDER BY messages DESC",
    ct:log("~s", [sql_text(Config, [ByKind, Share])]),
    [Kinds, Shares] = sql(Config, [ByKind, Share]),
    ?assertEqual([[<<"note">>, ?NOTES], [<<"alert">>, ?ALERTS], [<<"done">>, 1]], Kinds),
    %% The client's calls, from the one traced process that made them.
    [[Client, Calls, _] | _] = Shares,
    ?assertMatch(<<"<", _/binary>>, Client),
    ?assertEqual(?ROUNDS * ?PRICES_PER_ROUND, Calls).

%% `--name': only the events naming the planted receiver, so its messages
%% (every one paired with its send) and its GCs, and no call.
t_parquet_selects_as_every_command(Config) ->
    Dir = filename:join(?config(out, Config), "parquet_audit"),
    _ = analyze_cmd:json(?config(analyze, Config),
                         ["export", "--json", "--parquet", Dir, "--name", "export_audit",
                          dir(?config(session, Config))]),
    [Messages, Calls, Gcs] =
        sql([{parquet, Dir} | Config],
            ["SELECT receiver_name, count(*), count(latency_ns) FROM messages GROUP BY ALL",
             "SELECT count(*) FROM calls",
             "SELECT name, kind, count(*) FROM gc WHERE kind = 'major' GROUP BY ALL"]),
    Planted = ?NOTES + ?ALERTS + 1,
    ?assertEqual([[<<"export_audit">>, Planted, Planted]], Messages),
    ?assertEqual([[0]], Calls),
    ?assertEqual([[<<"export_audit">>, <<"major">>, ?ALERTS]], Gcs).

%% An OUTDIR that is a file, or that cannot be made: one line, status 1.
t_parquet_refuses_a_bad_directory(Config) ->
    Exe = ?config(analyze, Config),
    Trace = dir(?config(session, Config)),
    File = filename:join(?config(out, Config), "a_file"),
    ok = file:write_file(File, <<"x">>),
    ok = analyze_cmd:bad(Exe, ["export", "--parquet", File, Trace], [File, "not a directory"]),
    Proc = "/proc/dyntrace_parquet",
    ok = analyze_cmd:bad(Exe, ["export", "--parquet", Proc, Trace], [Proc]).

%%%===================================================================
%%% The timeline's figures
%%%===================================================================

%% Slices, calls per function, GCs and messages: the analyses' own counts,
%% and the command's table says the same.
t_timeline_holds_what_the_analyses_count(Config) ->
    Events = events(Config),
    X = [E || E = #{<<"ph">> := <<"X">>} <- Events],
    Cat = fun(C) -> [E || E = #{<<"cat">> := C1} <- X, C1 =:= C] end,
    Written = ?config(written, Config),

    Sched = analyze(Config, ["sched", "--top", "1000"]),
    Slices = lists:sum([N || #{<<"count">> := N} <- maps:get(<<"sched">>, Sched)]),
    ?assert(Slices > ?ROUNDS, Slices),
    ?assertEqual(Slices, length(Cat(<<"scheduled">>))),
    ?assertEqual(Slices, maps:get(<<"slices">>, Written)),

    Calls = maps:get(<<"calls">>, analyze(Config, ["calls"])),
    Drawn = counts([Name || #{<<"name">> := Name} <- Cat(<<"call">>)]),
    Counted = maps:from_list([{E, N} || #{<<"entry">> := E, <<"count">> := N} <- Calls, N > 0]),
    ?assertEqual(Counted, Drawn),
    ?assertEqual(?ROUNDS * ?PRICES_PER_ROUND,
                 maps:get(<<(atom_to_binary(?MODULE))/binary, ":price/1">>, Drawn, missing)),
    ?assertEqual(0, maps:get(<<"calls_unfinished">>, Written)),

    Gc = maps:get(<<"gc">>, analyze(Config, ["gc"])),
    GcCount = lists:sum([N || #{<<"count">> := N} <- Gc]),
    ?assertEqual(GcCount, length(Cat(<<"gc">>))),
    ?assertEqual(GcCount, maps:get(<<"gcs">>, Written)),

    Delivery = maps:get(<<"delivery">>, analyze(Config, ["delivery"])),
    Delivered = lists:sum([N || #{<<"count">> := N} <- Delivery]),
    %% A call and its reply per price, at least.
    ?assert(Delivered >= 2 * ?ROUNDS * ?PRICES_PER_ROUND, Delivered),
    Out = [E || E = #{<<"flow_out">> := true} <- Cat(<<"message">>)],
    In = [E || E = #{<<"flow_in">> := true} <- Cat(<<"message">>)],
    ?assertEqual({Delivered, Delivered}, {length(Out), length(In)}),
    ?assertEqual(Delivered, maps:get(<<"flows">>, Written)),
    %% Each flow: one id, its send on one track and its queued copy on another.
    Ends = fun(Es) -> maps:from_list([{Id, {P, T}} || #{<<"bind_id">> := Id, <<"pid">> := P,
                                                        <<"tid">> := T} <- Es]) end,
    {Sends, Queued} = {Ends(Out), Ends(In)},
    ?assertEqual(lists:sort(maps:keys(Sends)), lists:sort(maps:keys(Queued))),
    ?assertEqual([], [Id || {Id, Track} <- maps:to_list(Sends), Track =:= maps:get(Id, Queued)]),

    Counters = [E || E = #{<<"ph">> := <<"C">>} <- Events],
    ?assertEqual(length(Counters), maps:get(<<"counters">>, Written)),
    ?assertNotEqual([], [C || C = #{<<"name">> := <<"memory">>} <- Counters]),
    ?assertEqual(length(Events) - length(meta(Events)), maps:get(<<"events">>, Written)),
    ?assertEqual(0, maps:get(<<"left_out">>, Written)).

%% Every track an event is on is named; the server's two by the label the
%% tables give it, the node by its name.
t_timeline_names_every_track(Config) ->
    Events = events(Config),
    Meta = meta(Events),
    Threads = maps:from_list([{{P, T}, N} || #{<<"name">> := <<"thread_name">>, <<"pid">> := P,
                                              <<"tid">> := T, <<"args">> := #{<<"name">> := N}} <- Meta]),
    Used = lists:usort([{P, T} || #{<<"ph">> := <<"X">>, <<"pid">> := P, <<"tid">> := T} <- Events]),
    ?assertEqual([], Used -- maps:keys(Threads)),
    Label = label(Config),
    Named = lists:sort([N || N <- maps:values(Threads), binary:match(N, Label) =/= nomatch]),
    ?assertEqual([Label, <<Label/binary, " scheduled">>], Named),
    Nodes = [N || #{<<"name">> := <<"process_name">>, <<"args">> := #{<<"name">> := N}} <- Meta],
    ?assertEqual([atom_to_binary(node())], Nodes).

%% On each track, a complete event that starts inside another ends inside
%% it too: the viewers drop (Perfetto) or misdraw (speedscope) the rest.
t_each_track_nests(Config) ->
    Ns = fun(Us) -> round(Us * 1000) end,
    Tracks = lists:foldl(
               fun(#{<<"ph">> := <<"X">>, <<"pid">> := P, <<"tid">> := T, <<"ts">> := Ts,
                     <<"dur">> := D}, Acc) ->
                       maps:update_with({P, T}, fun(L) -> [{Ns(Ts), -Ns(Ts + D)} | L] end,
                                        [{Ns(Ts), -Ns(Ts + D)}], Acc);
                  (_, Acc) -> Acc
               end, #{}, events(Config)),
    ?assert(map_size(Tracks) >= 3, Tracks),
    Misnested = [{Track, Bad} || {Track, Spans} <- maps:to_list(Tracks),
                                 Bad <- [misnested(lists:sort(Spans), [])], Bad =/= []],
    ?assertEqual([], Misnested).

%% The spans (start, -end; sorted: outer before inner at one start) that
%% end past the innermost span open where they start.
misnested([], _Open) ->
    [];
misnested([{Start, NegEnd} | Rest], Open) ->
    End = -NegEnd,
    Still = lists:dropwhile(fun(E) -> E =< Start end, Open),
    case Still of
        [Outer | _] when End > Outer -> [{Start, End, Outer} | misnested(Rest, Still)];
        _ -> misnested(Rest, [End | Still])
    end.

%% Past --max-events: the file ends there, still whole JSON, and the
%% command fails with one line asking for a selection.
t_size_guard_asks_for_a_selection(Config) ->
    File = filename:join(?config(out, Config), "small.json"),
    {Status, _, Stderr} = analyze_cmd:run(?config(analyze, Config),
                                          ["export", "--timeline", File, "--max-events", "10",
                                           dir(?config(session, Config))]),
    ct:log("~s", [Stderr]),
    ?assertEqual(1, Status),
    [Line] = binary:split(Stderr, <<"\n">>, [global, trim_all]),
    [?assertNotEqual(nomatch, string:find(Line, M), M)
     || M <- ["holds the first 10 events", "--from/--to", "--name", "--max-events"]],
    {ok, Bin} = file:read_file(File),
    {#{<<"traceEvents">> := Events}, _} = json_text:value(Bin),
    ?assertEqual(10, length(Events) - length(meta(Events))).

%%%===================================================================
%%% In speedscope
%%%===================================================================

%% The server's profile is listed by its label, and its functions are in
%% the sandwich view's table.
t_speedscope_draws_the_profile(Config) ->
    Dom = speedscope(Config, ?config(profile, Config)),
    Label = html(label(Config)),
    ?assertNotEqual(nomatch, binary:match(Dom, Label), Label),
    [?assertNotEqual(nomatch, binary:match(Dom, F), F)
     || F <- [<<(atom_to_binary(?MODULE))/binary, ":price/1">>,
              <<(atom_to_binary(?MODULE))/binary, ":handle_call/3">>]].

%% The timeline: each thread a profile, named as the tracks are; the
%% server's calls track and scheduler track listed.
t_speedscope_draws_the_timeline(Config) ->
    Dom = speedscope(Config, ?config(timeline, Config)),
    Label = html(label(Config)),
    Node = atom_to_binary(node()),
    ?assertNotEqual(nomatch, binary:match(Dom, <<Node/binary, " (pid ">>), Dom),
    ?assertNotEqual(nomatch, binary:match(Dom, <<Label/binary, " (tid ">>), Label),
    ?assertNotEqual(nomatch, binary:match(Dom, <<Label/binary, " scheduled (tid ">>), Label).

%%%===================================================================
%%% The workload
%%%===================================================================

%% The server, traced and registered; a client traced too makes ?ROUNDS
%% rounds of quick price calls. Memory is sampled meanwhile.
workload() ->
    ok = dyntrace:announce_nodes(),
    {ok, Server} = gen_server:start(?MODULE, [], []),
    Flags = [send, 'receive', call, running, procs, garbage_collection],
    1 = erlang:trace(Server, true, [{tracer, dyntrace, []} | Flags]),
    true = register(export_shop, Server),
    Spec = [{'_', [], [{return_trace}]}],
    [1 = erlang:trace_pattern({?MODULE, F, A}, Spec, [local])
     || {F, A} <- [{price, 1}, {handle_call, 3}]],
    Audit = spawn(fun audit/0),
    1 = erlang:trace(Audit, true, [{tracer, dyntrace, []}, 'receive', garbage_collection]),
    true = register(export_audit, Audit),
    {ok, _} = dyntrace:memory(#{interval => 50, top => 10}),
    Round = fun(_) ->
                    [I = gen_server:call(export_shop, {price, I})
                     || I <- lists:seq(1, ?PRICES_PER_ROUND)],
                    timer:sleep(20)
            end,
    Planted = fun() ->
                      [export_audit ! {note, I} || I <- lists:seq(1, ?NOTES)],
                      [export_audit ! {alert, I} || I <- lists:seq(1, ?ALERTS)],
                      export_audit ! {done, self()},
                      receive done -> ok end
              end,
    lttng_session:traced(Flags, fun() -> lists:foreach(Round, lists:seq(1, ?ROUNDS)),
                                         Planted()
                                end),
    ok = gen_server:stop(Server),
    Server.

%% The planted receiver: a major GC per alert.
audit() ->
    receive
        {alert, _} ->
            true = erlang:garbage_collect(),
            audit();
        {done, From} ->
            From ! done;
        _ ->
            audit()
    end.

%% @doc A quick request.
-spec price(integer()) -> integer().
price(I) ->
    I.

%% @doc gen_server callback.
-spec init([]) -> {ok, nostate}.
init([]) ->
    {ok, nostate}.

%% @doc gen_server callback: the request.
-spec handle_call(term(), gen_server:from(), nostate) -> {reply, term(), nostate}.
handle_call({price, I}, _From, State) ->
    {reply, ?MODULE:price(I), State}.

%% @doc gen_server callback.
-spec handle_cast(term(), nostate) -> {noreply, nostate}.
handle_cast(_, State) ->
    {noreply, State}.

%%%===================================================================
%%% Helpers
%%%===================================================================

%% The server as the analyses label it: the name the tables give it
%% beside its pid.
label(Config) ->
    Server = ?config(server, Config),
    Sched = analyze(Config, ["sched", "--top", "1000"]),
    Pid = list_to_binary(pid_to_list(Server)),
    [Name] = [N || #{<<"pid">> := P, <<"name">> := N} <- maps:get(<<"sched">>, Sched),
                   P =:= Pid],
    ?assertEqual(<<"export_shop">>, Name),
    <<Name/binary, " ", Pid/binary>>.

analyze(Config, Args) ->
    analyze_cmd:json(?config(analyze, Config), Args ++ ["--json", dir(?config(session, Config))]).

events(Config) ->
    {ok, Bin} = file:read_file(?config(timeline, Config)),
    {#{<<"traceEvents">> := Events, <<"displayTimeUnit">> := <<"ns">>}, Rest} =
        json_text:value(Bin),
    ?assertEqual(<<>>, string:trim(Rest)),
    Events.

meta(Events) ->
    [E || E = #{<<"ph">> := <<"M">>} <- Events].

counts(Names) ->
    lists:foldl(fun(N, Acc) -> maps:update_with(N, fun(C) -> C + 1 end, 1, Acc) end,
                #{}, Names).

%% Text as the DOM writes it.
%% Each query's rows (lists of values), over the Parquet tables as views
%% of their names.
sql(Config, Queries) ->
    Out = duckdb(Config, "print(json.dumps([con.execute(q).fetchall() for q in queries],"
                         " default=str))", Queries),
    {Rows, <<"\n">>} = json_text:value(Out),
    Rows.

%% The queries and their tables as DuckDB prints them.
sql_text(Config, Queries) ->
    duckdb(Config, "for q in queries: print(q); print(con.sql(q))", Queries).

duckdb(Config, Print, Queries) ->
    Program = ["import duckdb, json, sys\n"
               "con = duckdb.connect()\n"
               "for t in sys.argv[2].split(','):\n"
               "    con.execute(f\"CREATE VIEW {t} AS SELECT * FROM "
               "read_parquet('{sys.argv[1]}/{t}.parquet')\")\n"
               "queries = sys.argv[3:]\n", Print, "\n"],
    Args = ["-c", lists:flatten(Program), ?config(parquet, Config),
            lists:flatten(lists:join(",", ?TABLES)) | Queries],
    {Status, Out, Err} = analyze_cmd:run_with(?DUCKDB_PYTHON, Args, default),
    ct:log("~p -> ~p~n~s~s", [Queries, Status, Err, Out]),
    ?assertEqual({0, <<>>}, {Status, Err}),
    Out.

html(Bin) ->
    binary:replace(binary:replace(Bin, <<"<">>, <<"&lt;">>, [global]),
                   <<">">>, <<"&gt;">>, [global]).

%% npm's speedscope app, installed globally by scripts/setup.sh.
speedscope_app() ->
    Root = string:trim(os:cmd("npm root -g 2>/dev/null")),
    Index = filename:join([Root, "speedscope", "dist", "release", "index.html"]),
    filelib:is_regular(Index) andalso Index.

%% The app's DOM with `File' loaded as its `speedscope' command line
%% loads one (a script handing the file over, named in the page's
%% address), in the sandwich view; the page's console must hold nothing
%% but the notes it always writes (no warning, no error).
speedscope(Config, File) ->
    {ok, Bin} = file:read_file(File),
    Script = File ++ ".js",
    ok = file:write_file(Script, ["speedscope.loadFileFromBase64(\"",
                                  filename:basename(File), "\", \"",
                                  base64:encode(Bin), "\");\n"]),
    Url = "file://" ++ ?config(app, Config) ++ "#localProfilePath=" ++ Script ++ "&view=sandwich",
    {0, Dom, Stderr} = headless:chromium(?config(chromium, Config),
                                         ["--virtual-time-budget=10000", "--dump-dom", Url]),
    ct:log("~s: ~b bytes of DOM~n~s", [File, byte_size(Dom), Dom]),
    Console = headless:console(Stderr),
    ct:log("console:~n~s", [lists:join("\n", Console)]),
    %% Chromium logs every console message alike (errors and uncaught
    %% exceptions too, at INFO): all but the app's own notes and the
    %% browser's about its software WebGL and the network fail the case.
    Notes = [<<"\"speedscope v">>, <<"\"Importing as ">>, <<"\"import: ">>,
             <<"\"WebGL initialized.">>, <<"GL Driver Message">>,
             <<"\"Automatic fallback to software WebGL">>, <<"\"Slow network is detected.">>],
    ?assertEqual([], [L || L <- Console, binary:match(L, Notes) =:= nomatch]),
    ?assertNotEqual([], [L || L <- Console, binary:match(L, <<"\"Importing as ">>) =/= nomatch]),
    ?assertEqual(nomatch, binary:match(Dom, <<"Something went wrong">>)),
    Dom.

dir(#{dir := Dir}) ->
    Dir.
