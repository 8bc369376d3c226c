%%% Damaged traces: `dyntrace-analyze' compares every stream with LTTng's
%%% index (`index/STREAM.idx'), reads what is whole and says, per stream,
%%% what it could not read. Each case records a real trace of gen_server
%%% calls in small packets, damages a copy of it the way disks and copies
%%% do, and checks the report and that the results are exactly those of
%%% the intact packets, as babeltrace2 reads them from a copy cut at a
%%% packet boundary (a valid CTF trace).
-module(dyntrace_damage_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([t_complete/1,
         t_cut_at_packet_boundary/1,
         t_cut_mid_packet/1,
         t_garbage_over_packet/1,
         t_overlapping_paths/1]).
-export([init/1, handle_call/3, handle_cast/2]).

-define(CALLS, 300).
-define(INDEX_MAGIC, 16#C1F1DCC1).

suite() ->
    [{timetrap, {minutes, 3}}].

all() ->
    [t_complete,
     t_cut_at_packet_boundary,
     t_cut_mid_packet,
     t_garbage_over_packet,
     t_overlapping_paths].

%% One trace for every case, recorded once: ?CALLS gen_server calls by a
%% traced client, in 8 KiB packets.
init_per_suite(Config) ->
    ok = lttng_session:traced_node(),
    Exe = analyze_cmd:exe(),
    Events = [message_send, message_receive],
    S = lttng_session:create(t_damage, Events, #{subbuf_size => 8192, num_subbuf => 16}),
    ok = lttng_session:start(S),
    ok = lttng_session:wait_enabled(Events),
    Server = calls(),
    lttng_session:stop(S),
    [{analyze, Exe}, {session, S}, {server, Server} | Config].

end_per_suite(Config) ->
    lttng_session:destroy(?config(session, Config)).

%% @doc gen_server callback: no state.
init([]) ->
    {ok, nostate}.

%% @doc gen_server callback: `{get, N}' answers `N'.
handle_call({get, N}, _From, State) ->
    {reply, N, State}.

%% @doc gen_server callback: casts are ignored.
handle_cast(_Msg, State) ->
    {noreply, State}.

calls() ->
    {ok, Server} = gen_server:start(?MODULE, [], []),
    Flags = [send, 'receive', {tracer, dyntrace, []}],
    1 = erlang:trace(Server, true, Flags),
    Parent = self(),
    Client = spawn(fun() ->
                           receive go -> ok end,
                           [call(Server, I) || I <- lists:seq(1, ?CALLS)],
                           Parent ! {self(), done}
                   end),
    1 = erlang:trace(Client, true, Flags),
    Client ! go,
    receive {Client, done} -> ok after 60000 -> error(workload_timeout) end,
    ok = gen_server:stop(Server),
    pid_to_list(Server).

%% A pause now and then lets LTTng's consumer keep up with the small
%% buffers on a loaded machine: no event discarded.
call(Server, I) ->
    I = gen_server:call(Server, {get, I}),
    _ = I rem 20 =:= 0 andalso timer:sleep(2),
    ok.

%%%===================================================================
%%% Cases
%%%===================================================================

%% An intact trace is reported complete, and every call is counted.
t_complete(Config) ->
    Dir = dir(Config),
    Out = analyze_ok(Config, ["genserver", "--json", Dir]),
    ?assertEqual({true, []}, {maps:get(<<"complete">>, Out), maps:get(<<"damaged">>, Out)}),
    ?assertEqual(0, maps:get(<<"discarded">>, Out)),
    ?assertEqual({?CALLS, 0}, server_calls(Config, Out)),
    {0, Text, <<>>} = analyze(Config, ["genserver", Dir]),
    ?assertEqual(nomatch, string:find(Text, "damaged")).

%% The stream with the most packets loses its last packets at a packet
%% boundary (a copy stopped short): exit 0, the stream reported with the
%% bytes and packets its index recorded, and the results are those of the
%% intact packets.
t_cut_at_packet_boundary(Config) ->
    {Copy, Stream, Packets} = copy(Config, "boundary"),
    Keep = length(Packets) div 2,
    {Offset, _} = lists:nth(Keep + 1, Packets),
    truncate(Stream, Offset),
    Expected = counts(read(Copy)),
    Out = analyze_ok(Config, ["rates", "--json", Copy]),
    ?assertEqual(Expected, rates(Out)),
    ?assert(maps:get(<<"events">>, Out) < length(read(dir(Config)))),
    assert_damaged(Out, Stream, Offset, Keep, Packets),
    {0, Text, <<>>} = analyze(Config, ["rates", Copy]),
    Line = io_lib:format("damaged stream ~s: ~b of ~b bytes readable (~b of ~b packets): "
                         "results are incomplete",
                         [Stream, Offset, recorded(Packets), Keep, length(Packets)]),
    ?assertNotEqual(nomatch, string:find(Text, lists:flatten(Line)), Text),
    remove(Copy).

%% Cut in the middle of a packet: babeltrace2 refuses the whole trace; the
%% analyser reads every whole packet (exactly what a cut at the packet's
%% start leaves) and reports the rest.
t_cut_mid_packet(Config) ->
    {Copy, Stream, Packets} = copy(Config, "mid"),
    Keep = length(Packets) - 1,
    {Offset, Size} = lists:nth(Keep + 1, Packets),
    truncate(Stream, Offset + Size div 2),
    {Status, _} = lttng_session:cmd("babeltrace2 " ++ Copy ++ " -o dummy"),
    ?assertNotEqual(0, Status),
    Out = analyze_ok(Config, ["rates", "--json", Copy]),
    assert_damaged(Out, Stream, Offset, Keep, Packets),
    truncate(Stream, Offset),
    ?assertEqual(counts(read(Copy)), rates(Out)),
    remove(Copy).

%% Garbage over the last packet's header and sizes (its events would be
%% read short or not at all): that packet is reported and left out, the
%% others read.
t_garbage_over_packet(Config) ->
    {Copy, Stream, Packets} = copy(Config, "garbage"),
    Keep = length(Packets) - 1,
    {Offset, _} = lists:nth(Keep + 1, Packets),
    {ok, F} = file:open(Stream, [read, write, binary]),
    ok = file:pwrite(F, Offset + 24, binary:copy(<<16#5A>>, 40)),
    ok = file:close(F),
    Out = analyze_ok(Config, ["rates", "--json", Copy]),
    assert_damaged(Out, Stream, Offset, Keep, Packets),
    truncate(Stream, Offset),
    ?assertEqual(counts(read(Copy)), rates(Out)),
    remove(Copy).

%% A trace, its own subdirectory and the trace again: read once, every
%% gen_server request counted once.
t_overlapping_paths(Config) ->
    Dir = dir(Config),
    Once = analyze_ok(Config, ["genserver", "--json", Dir]),
    Out = analyze_ok(Config, ["genserver", "--json", Dir, filename:join(Dir, "ust"), Dir ++ "/"]),
    ?assertEqual({?CALLS, 0}, server_calls(Config, Out)),
    ?assertEqual(maps:get(<<"events">>, Once), maps:get(<<"events">>, Out)),
    ?assertEqual(true, maps:get(<<"complete">>, Out)).

%%%===================================================================
%%% Helpers
%%%===================================================================

dir(Config) ->
    maps:get(dir, ?config(session, Config)).

%% A copy of the trace, its stream with the most packets (at least 3) and
%% that stream's packets as the index records them: [{Offset, Size}].
copy(Config, Name) ->
    Copy = scratch("damage_" ++ Name),
    lttng_session:cmd_ok("rm -rf " ++ Copy ++ " && cp -r " ++ dir(Config) ++ " " ++ Copy),
    Indexed = [{length(P), filename:join(filename:dirname(filename:dirname(I)),
                                         filename:basename(I, ".idx")), P}
               || I <- filelib:wildcard(filename:join(Copy, "**/index/*.idx")),
                  P <- [index(I)]],
    {N, Stream, Packets} = lists:max(Indexed),
    ?assert(N >= 3, Indexed),
    {Copy, Stream, Packets}.

%% LTTng's index, read here on its own: a header (magic, version, entry
%% size), then big-endian entries starting with offset and packet size in
%% bits.
index(File) ->
    {ok, <<?INDEX_MAGIC:32, 1:32, _Minor:32, Len:32, Entries/binary>>} = file:read_file(File),
    [{Offset, Bits div 8} || <<Offset:64, Bits:64, _:(Len - 16)/binary>> <= Entries].

%% A path of its own under the tests' trace directory: suites run in PID
%% namespaces of their own share it, so the OS pid alone may repeat.
scratch(Name) ->
    Unique = io_lib:format("~s_~s_~b_~b", [Name, os:getpid(), erlang:system_time(),
                                           erlang:unique_integer([positive])]),
    filename:join(os:getenv("DYNTRACE_TRACE_DIR", "/tmp/dyntrace-test-traces"), lists:flatten(Unique)).

recorded(Packets) ->
    lists:sum([S || {_, S} <- Packets]).

assert_damaged(Out, Stream, Readable, Keep, Packets) ->
    ?assertEqual(false, maps:get(<<"complete">>, Out)),
    ?assertEqual([#{<<"stream">> => list_to_binary(Stream),
                    <<"readable_bytes">> => Readable,
                    <<"recorded_bytes">> => recorded(Packets),
                    <<"readable_packets">> => Keep,
                    <<"recorded_packets">> => length(Packets)}],
                 maps:get(<<"damaged">>, Out)).

truncate(File, Size) ->
    {ok, F} = file:open(File, [read, write]),
    {ok, _} = file:position(F, Size),
    ok = file:truncate(F),
    ok = file:close(F).

remove(Dir) ->
    lttng_session:cmd_ok("rm -rf " ++ Dir).

read(Dir) ->
    lttng_session:read(#{dir => Dir}).

%% Events per name, as babeltrace2 reads them.
counts(Events) ->
    lists:sort(maps:to_list(lists:foldl(fun(#{name := N}, Acc) ->
                                                maps:update_with(atom_to_binary(N), fun(C) -> C + 1 end, 1, Acc)
                                        end, #{}, Events))).

%% Events per name, as `rates --json' counts them (per second: summed).
rates(Out) ->
    lists:sort(maps:to_list(lists:foldl(fun(R, Acc) ->
                                                maps:update_with(maps:get(<<"event">>, R),
                                                                 fun(C) -> C + maps:get(<<"count">>, R) end,
                                                                 maps:get(<<"count">>, R), Acc)
                                        end, #{}, maps:get(<<"rates">>, Out)))).

%% The server's calls: count and unmatched, over its rows.
server_calls(Config, Out) ->
    Server = list_to_binary(?config(server, Config)),
    Rows = [R || R <- maps:get(<<"genserver">>, Out), maps:get(<<"server">>, R) =:= Server],
    {lists:sum([maps:get(<<"count">>, R) || R <- Rows]),
     lists:sum([maps:get(<<"unmatched">>, R) || R <- Rows])}.

analyze(Config, Args) ->
    analyze_cmd:run(?config(analyze, Config), Args).

analyze_ok(Config, Args) ->
    analyze_cmd:json(?config(analyze, Config), Args).
