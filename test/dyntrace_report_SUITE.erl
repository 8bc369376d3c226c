%%% `dyntrace-analyze report' on a planted workload recorded in a real
%%% LTTng session, the page loaded in a real browser (Debian's chromium,
%%% headless). A registered gen_server `report_shop' answers many quick
%%% `price' calls and one `checkout' that takes ?CHECKOUT_MS, all traced
%%% (messages, scheduling, calls with their returns, GC, process
%%% registration) while dyntrace:memory/1 samples memory. The page must be
%%% one self-contained file under 5 MB whose size the command prints; in
%%% the browser it must show every section, the flame graph drawn, the
%%% planted checkout among the slow calls and the server by its name, sort
%%% a table when a heading is clicked, log nothing on the console, and make
%%% a screenshot that is not blank.
-module(dyntrace_report_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([t_page_is_one_small_file/1,
         t_browser_shows_every_section/1,
         t_click_sorts_a_table/1,
         t_screenshot_is_not_blank/1,
         t_top_limits_the_rows/1]).
-export([price/1, checkout/1]).
-export([init/1, handle_call/3, handle_cast/2]).

-define(CHECKOUT_MS, 150).
-define(ROUNDS, 30).
-define(PRICES_PER_ROUND, 10).
-define(EVENTS, [function_call, function_return, function_exception,
                 message_send, message_receive, process_scheduled,
                 process_register, gc_minor_start, gc_minor_end,
                 gc_major_start, gc_major_end, memory_sample,
                 allocator_sample, process_memory]).
%% The sections every page has, by anchor (the memory one since the
%% trace has memory samples).
-define(SECTIONS, ["findings", "summary", "tables", "distributions", "trends", "slow-calls",
                   "rates", "flame", "memory"]).
-define(WIDTH, 1280).
-define(HEIGHT, 2000).

suite() ->
    [{timetrap, {minutes, 4}}].

all() ->
    [t_page_is_one_small_file,
     t_browser_shows_every_section,
     t_click_sorts_a_table,
     t_screenshot_is_not_blank,
     t_top_limits_the_rows].

%% The workload is recorded once; each case reads its report.
init_per_suite(Config) ->
    case os:find_executable("chromium") of
        false ->
            {fail, "chromium is not installed (scripts/setup.sh installs it)"};
        Chromium ->
            ok = lttng_session:traced_node(),
            S = lttng_session:start_tracked(report_workload, ?EVENTS),
            Server = try workload()
                     after
                         ok = dyntrace:clear(),
                         ok = dyntrace_test_trace:untrace(?MODULE),
                         lttng_session:stop(S)
                     end,
            Exe = analyze_cmd:exe(),
            Out = filename:join(lttng_session:base_dir(), "report_" ++ os:getpid()),
            {Status, Stdout, Stderr} = analyze_cmd:run(Exe, ["report", Out, dir(S)]),
            ct:log("report -> ~p~n~s~s", [Status, Stdout, Stderr]),
            0 = Status,
            [{analyze, Exe}, {chromium, Chromium}, {session, S}, {out, Out},
             {stderr, Stderr}, {server, Server} | Config]
    end.

end_per_suite(Config) ->
    lttng_session:destroy(?config(session, Config)),
    lttng_session:cmd_ok("rm -rf " ++ ?config(out, Config)),
    ok.

%%%===================================================================
%%% Cases
%%%===================================================================

%% One file, nothing it would fetch, its size printed and under 5 MB.
t_page_is_one_small_file(Config) ->
    Out = ?config(out, Config),
    ?assertEqual(["index.html"], lists:sort(filelib:wildcard("*", Out))),
    Page = page(Config),
    Size = byte_size(Page),
    ?assert(Size < 5 * 1024 * 1024, Size),
    %% "wrote DIR/index.html (N KiB)"
    {match, [Said]} = re:run(?config(stderr, Config), "index.html \\(([0-9.]+) KiB\\)",
                             [{capture, all_but_first, list}]),
    ?assert(abs(number(Said) * 1024 - Size) =< 0.01 * Size, {Said, Size}),
    %% A policy that lets it fetch nothing, and no reference that would
    %% (the flame graph's url(#background) is inside it).
    ?assertNotEqual(nomatch, string:find(Page, "default-src 'none'")),
    [?assertEqual(nomatch, re:run(Page, Ref, [caseless]), Ref)
     || Ref <- ["<link", "<img", "src=\"http", "href=\"http", "url\\((?!#)"]],
    %% Tables in the order of the text output: the calls by total time,
    %% the planted handle_call/3 (whose total holds the checkout) first.
    ?assertEqual(<<"dyntrace_report_SUITE:handle_call/3">>, hd(column(Page, <<"calls">>, 1))).

%% The browser's page: every section, the flame graph drawn (its frame
%% counts the frames its SVG holds), the planted checkout among the slow
%% calls, the server by its name, distributions and trends, and nothing
%% on the console.
t_browser_shows_every_section(Config) ->
    {Dom, Stderr} = dump_dom(Config, ""),
    [?assertNotEqual(nomatch, string:find(Dom, "<section id=\"" ++ Id ++ "\">"), Id)
     || Id <- ?SECTIONS],
    {match, [Frames]} = re:run(Dom, "<iframe class=\"flame\"[^>]* data-frames=\"([0-9]+)\"",
                               [{capture, all_but_first, list}]),
    ?assert(list_to_integer(Frames) >= 3, Frames),
    ?assertNotEqual(nomatch, string:find(Dom, "dyntrace_report_SUITE:checkout/1 (")),
    %% The slow calls: the checkout is one of them, about as long as planted.
    {match, Titles} = re:run(Dom, "<circle class=\"slow-call\"[^>]*><title>([^<]*)</title>",
                             [global, {capture, all_but_first, binary}]),
    [Checkout] = [T || [T] <- Titles, binary:match(T, <<"dyntrace_report_SUITE:checkout/1 ">>) =/= nomatch],
    {match, [Ms]} = re:run(Checkout, " took ([0-9.]+) ms", [{capture, all_but_first, list}]),
    ?assert(number(Ms) >= ?CHECKOUT_MS andalso number(Ms) < 2 * ?CHECKOUT_MS, Ms),
    %% gen_server calls: the server by its registered name, a request of
    %% each kind, and their distributions.
    Servers = column(Dom, <<"genserver">>, 1),
    ?assertNotEqual([], Servers),
    [?assertMatch({match, _}, re:run(S, "^<b>report_shop</b> <span class=\"pid\">&lt;"), S)
     || S <- Servers],
    ?assertEqual([<<"checkout">>, <<"price">>], lists:usort(column(Dom, <<"genserver">>, 2))),
    [?assertNotEqual(nomatch, string:find(Dom, "<div class=\"dist\" data-table=\"" ++ T ++ "\">"), T)
     || T <- ["genserver", "calls", "latency"]],
    ?assertNotEqual(nomatch, string:find(Dom, "<div class=\"trend\" data-table=\"calls\">")),
    no_console(Stderr).

%% ?sort=TABLE.COLUMN clicks that column's heading once the page has
%% loaded: the calls, first by total time (handle_call/3, checkout/1,
%% price/1), come by count, the most first (handle_call/3 once more than
%% price/1); a second click (.asc) reverses them: the one checkout first.
t_click_sorts_a_table(Config) ->
    Default = column(page(Config), <<"calls">>, 1),
    {Dom, Stderr} = dump_dom(Config, "?sort=calls.count"),
    ?assertNotEqual(nomatch, string:find(Dom, "<th data-key=\"count\" data-type=\"num\" title=\"sort by count\" aria-sort=\"descending\">")),
    Counts = [binary_to_integer(C) || C <- column(Dom, <<"calls">>, 2)],
    ?assertEqual(lists:reverse(lists:sort(Counts)), Counts),
    Sorted = column(Dom, <<"calls">>, 1),
    ?assertEqual([<<"dyntrace_report_SUITE:handle_call/3">>, <<"dyntrace_report_SUITE:checkout/1">>,
                  <<"dyntrace_report_SUITE:price/1">>], Default),
    ?assertEqual([<<"dyntrace_report_SUITE:handle_call/3">>, <<"dyntrace_report_SUITE:price/1">>,
                  <<"dyntrace_report_SUITE:checkout/1">>], Sorted),
    ?assertEqual([1, ?ROUNDS * ?PRICES_PER_ROUND, ?ROUNDS * ?PRICES_PER_ROUND + 1], lists:reverse(Counts)),
    {Asc, Stderr2} = dump_dom(Config, "?sort=calls.count.asc"),
    ?assertEqual(lists:reverse(Counts), [binary_to_integer(C) || C <- column(Asc, <<"calls">>, 2)]),
    ?assertEqual(lists:reverse(Sorted), column(Asc, <<"calls">>, 1)),
    no_console(Stderr),
    no_console(Stderr2).

%% The screenshot: a PNG of the window's size whose pixels are not all
%% alike.
t_screenshot_is_not_blank(Config) ->
    Png = filename:join(?config(out, Config), "shot.png"),
    {0, _, Stderr} = chromium(Config, ["--screenshot=" ++ Png,
                                       io_lib:format("--window-size=~b,~b", [?WIDTH, ?HEIGHT]),
                                       url(Config, "")]),
    {ok, Bin} = file:read_file(Png),
    ok = file:delete(Png),
    <<137, "PNG", 13, 10, 26, 10, _:32, "IHDR", W:32, H:32, _/binary>> = Bin,
    ?assertEqual({?WIDTH, ?HEIGHT}, {W, H}),
    Pixels = zlib:uncompress(iolist_to_binary(idat(Bin))),
    %% The page's first rows (the summary and the first tables).
    Top = binary:part(Pixels, 0, min(byte_size(Pixels), 1 bsl 20)),
    Distinct = length(lists:usort(binary_to_list(Top))),
    ct:log("~b bytes of PNG, ~b distinct bytes in the first rows", [byte_size(Bin), Distinct]),
    ?assert(Distinct > 32, Distinct),
    no_console(Stderr).

%% --top N: each table shows its first N rows and says how many more.
t_top_limits_the_rows(Config) ->
    Out = ?config(out, Config) ++ "_top",
    S = ?config(session, Config),
    {0, _, _} = analyze_cmd:run(?config(analyze, Config), ["report", "--top", "2", Out, dir(S)]),
    {ok, Page} = file:read_file(filename:join(Out, "index.html")),
    lttng_session:cmd_ok("rm -rf " ++ Out),
    Json = analyze_cmd:json(?config(analyze, Config), ["calls", "--json", dir(S)]),
    Rows = length(maps:get(<<"calls">>, Json)),
    ?assert(Rows > 2, Rows),
    ?assertEqual(2, length(column(Page, <<"calls">>, 1))),
    More = io_lib:format("~b more rows not shown (--top 2;", [Rows - 2]),
    ?assertNotEqual(nomatch, string:find(Page, More)).

%%%===================================================================
%%% The workload
%%%===================================================================

%% The server, traced and registered; a client traced too makes ?ROUNDS
%% rounds of quick price calls, and the one checkout half-way. Memory is
%% sampled meanwhile.
workload() ->
    {ok, Server} = gen_server:start(?MODULE, [], []),
    Flags = [send, 'receive', call, running, procs, garbage_collection],
    1 = erlang:trace(Server, true, [{tracer, dyntrace, []} | Flags]),
    true = register(report_shop, Server),
    Spec = [{'_', [], [{return_trace}]}],
    [1 = erlang:trace_pattern({?MODULE, F, A}, Spec, [local])
     || {F, A} <- [{price, 1}, {checkout, 1}, {handle_call, 3}]],
    {ok, _} = dyntrace:memory(#{interval => 100, top => 10}),
    Round = fun(R) ->
                    [I = gen_server:call(report_shop, {price, I}) || I <- lists:seq(1, ?PRICES_PER_ROUND)],
                    [ok = gen_server:call(report_shop, {checkout, ?CHECKOUT_MS}) || R =:= ?ROUNDS div 2],
                    timer:sleep(20)
            end,
    lttng_session:traced(Flags, fun() -> lists:foreach(Round, lists:seq(1, ?ROUNDS)) end),
    ok = gen_server:stop(Server),
    Server.

%% @doc A quick request.
-spec price(integer()) -> integer().
price(I) ->
    I.

%% @doc The planted slow request.
-spec checkout(non_neg_integer()) -> ok.
checkout(Ms) ->
    timer:sleep(Ms).

%% @doc gen_server callback.
-spec init([]) -> {ok, nostate}.
init([]) ->
    {ok, nostate}.

%% @doc gen_server callback: the two requests.
-spec handle_call(term(), gen_server:from(), nostate) -> {reply, term(), nostate}.
handle_call({price, I}, _From, State) ->
    {reply, ?MODULE:price(I), State};
handle_call({checkout, Ms}, _From, State) ->
    {reply, ?MODULE:checkout(Ms), State}.

%% @doc gen_server callback.
-spec handle_cast(term(), nostate) -> {noreply, nostate}.
handle_cast(_, State) ->
    {noreply, State}.

%%%===================================================================
%%% The browser
%%%===================================================================

%% Runs chromium headless with `Args': `{Status, Stdout, Stderr}'.
chromium(Config, Args) ->
    headless:chromium(?config(chromium, Config), Args).

%% The page's DOM once loaded (its script run), with `Query'.
dump_dom(Config, Query) ->
    {0, Dom, Stderr} = chromium(Config, ["--dump-dom", url(Config, Query)]),
    ct:log("~s: ~b bytes of DOM", [Query, byte_size(Dom)]),
    ?assertNotEqual(nomatch, string:find(Dom, "</html>")),
    {Dom, Stderr}.

url(Config, Query) ->
    "file://" ++ filename:join(?config(out, Config), "index.html") ++ Query.

%% The page logs nothing on the console.
no_console(Stderr) ->
    ?assertEqual([], headless:console(Stderr)).

page(Config) ->
    {ok, Page} = file:read_file(filename:join(?config(out, Config), "index.html")),
    Page.

%% The `N'th cell of each body row of the table of `Key', in order.
column(Html, Key, N) ->
    Start = <<"<table class=\"sortable\" data-key=\"", Key/binary, "\">">>,
    {At, _} = binary:match(Html, Start),
    Rest = binary:part(Html, At, byte_size(Html) - At),
    {End, _} = binary:match(Rest, <<"</table>">>),
    Table = binary:part(Rest, 0, End),
    [_, Body] = binary:split(Table, <<"<tbody>">>),
    Rows = [R || R <- binary:split(Body, <<"<tr>">>, [global]), R =/= <<>>],
    [cell(R, N) || R <- Rows].

cell(Row, N) ->
    Cells = tl(binary:split(Row, <<"<td">>, [global])),
    [_, Inner] = binary:split(lists:nth(N, Cells), <<">">>),
    [Text | _] = binary:split(Inner, <<"</td>">>),
    Text.

%% The PNG's image data chunks.
idat(<<137, "PNG", 13, 10, 26, 10, Chunks/binary>>) ->
    idat_chunks(Chunks).

idat_chunks(<<Len:32, Type:4/binary, Data:Len/binary, _Crc:32, Rest/binary>>) ->
    case Type of
        <<"IDAT">> -> [Data | idat_chunks(Rest)];
        <<"IEND">> -> [];
        _ -> idat_chunks(Rest)
    end.

%% "131" or "1.50": a number as the page writes it.
number(Text) ->
    case string:to_float(Text) of
        {F, _} when is_float(F) -> F;
        _ -> float(list_to_integer(Text))
    end.

dir(#{dir := Dir}) ->
    Dir.
