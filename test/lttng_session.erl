%%% @doc Test helper: real LTTng sessions and the events babeltrace2 reads
%%% back from them.
%%%
%%% ```
%%% S = lttng_session:create(t_send, [message_send]),   % session + events
%%% lttng_session:start(S),
%%% ... work ...
%%% Events = lttng_session:stop_and_read(S),            % [event()]
%%% lttng_session:destroy(S).
%%% '''
%%% An event is `#{name := atom(), ts := integer() (ns), cpu_id := integer(),
%%% host := binary(), fields := #{binary() => binary() | integer()}}', field
%%% strings decoded from babeltrace2's escaping back to the bytes in the
%%% trace; `host' is the recording host's name.
-module(lttng_session).

-export([traced_node/0, ensure_daemon/0, wait_registered/0,
         create/2, create/3, enable/2, track_self/1, start/1, start_tracked/2, record/3, wait_enabled/1, traced/2, stop/1,
         destroy/1, destroy_left/1, delete_traces/1,
         read/1, read_all/1, stop_and_read/1, discarded/1, recorded/1,
         select/2, field/2, cmd/1, cmd_ok/1, parse_line/1, wait_until/2, base_dir/0]).

-define(PROVIDER, "org_erlang_dyntrace").

-type session() :: #{name := string(), dir := string()}.
-type event() :: #{name := atom(), ts := integer(), cpu_id := integer(),
                   host := binary(), fields := #{binary() => binary() | integer()}}.
-export_type([session/0, event/0]).

%% @doc Starts a root session daemon when `lttng list' cannot reach one.
-spec ensure_daemon() -> ok.
ensure_daemon() ->
    case cmd("lttng list") of
        {0, _} -> ok;
        {_, _} ->
            {0, _} = cmd("lttng-sessiond --daemonize"),
            wait_until(fun() -> element(1, cmd("lttng list")) =:= 0 end, 50),
            ok
    end.

%% @doc Readies this node for a suite: a session daemon answers, our
%% `dyntrace' is loaded (not OTP's runtime_tools module of that name, which
%% has no tracer: ours must come first in the code path), and the daemon
%% has it registered.
-spec traced_node() -> ok.
traced_node() ->
    ok = ensure_daemon(),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    nomatch = string:find(code:which(dyntrace), "runtime_tools"),
    wait_registered().

%% @doc Waits until this node shows in `lttng list -u' with our events, so
%% that a session started now reaches it (registration with the daemon
%% goes on in LTTng-UST's thread after the module loads).
-spec wait_registered() -> ok.
wait_registered() ->
    Pid = os:getpid(),
    wait_until(fun() ->
                       {_, Out} = cmd("lttng list -u"),
                       string:find(Out, "PID: " ++ Pid ++ " ") =/= nomatch
                           andalso string:find(Out, ?PROVIDER ":") =/= nomatch
               end, 100).

%% @doc A new session named after `Name' (made unique), writing into a fresh
%% directory, with `Events' (event names without the provider) enabled.
-spec create(atom() | string(), [atom()]) -> session().
create(Name, Events) ->
    create(Name, Events, #{}).

%% @doc As {@link create/2}; `Opts' may set a channel's `subbuf_size'
%% (bytes, a power of two) and `num_subbuf' for small-buffer tests, or a
%% `url' (`net://RELAY') to stream the trace to an lttng-relayd instead of
%% writing it to the session's directory, with `live => true' for a live
%% session (readable while it records).
-spec create(atom() | string(), [atom()], map()) -> session().
create(Name, Events, Opts) ->
    Unique = lists:flatten(io_lib:format("~s_~s_~p",
                                         [Name, os:getpid(),
                                          erlang:unique_integer([positive])])),
    Dir = filename:join(base_dir(), Unique),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Output = case maps:get(url, Opts, undefined) of
                 undefined -> " --output=" ++ Dir;
                 Url -> " --set-url=" ++ Url
             end ++ case maps:get(live, Opts, false) of
                        true -> " --live";
                        false -> ""
                    end,
    cmd_ok("lttng create " ++ Unique ++ Output),
    S = #{name => Unique, dir => Dir, channel => channel(Unique, Opts)},
    enable(S, Events),
    S.

channel(Session, Opts) when not is_map_key(subbuf_size, Opts),
                            not is_map_key(num_subbuf, Opts) ->
    _ = Session,
    undefined;
channel(Session, Opts) ->
    Sub = maps:get(subbuf_size, Opts, 4096),
    Num = maps:get(num_subbuf, Opts, 2),
    cmd_ok(io_lib:format("lttng enable-channel -u -s ~s --discard "
                         "--subbuf-size=~b --num-subbuf=~b small",
                         [Session, Sub, Num])),
    "small".

%% @doc Enables more events in a session.
-spec enable(session(), [atom()]) -> ok.
enable(_S, []) ->
    ok;
enable(#{name := N} = S, Events) ->
    List = lists:join(",", [?PROVIDER ":" ++ atom_to_list(E) || E <- Events]),
    Channel = case maps:get(channel, S, undefined) of
                  undefined -> "";
                  C -> " -c " ++ C
              end,
    cmd_ok("lttng enable-event -u -s " ++ N ++ Channel ++ " " ++ List),
    ok.

%% @doc Records only this node's events in the session: user-space
%% sessions otherwise take events from every registered process.
-spec track_self(session()) -> ok.
track_self(#{name := N}) ->
    cmd_ok("lttng track -u -s " ++ N ++ " --vpid=" ++ os:getpid()),
    ok.

%% @doc Starts recording. LTTng-UST enables the events in this node a few
%% milliseconds later: see {@link wait_enabled/1}.
-spec start(session()) -> ok.
start(#{name := N}) ->
    cmd_ok("lttng start " ++ N),
    ok.

%% @doc Waits until this node's enabled checks see all of `Events'.
-spec wait_enabled([atom()]) -> ok.
wait_enabled(Events) ->
    try
        wait_until(fun() -> Events -- dyntrace:enabled_events() =:= [] end, 100)
    catch
        error:timeout ->
            %% What the daemon saw, for a failure that only a loaded
            %% machine shows.
            error({not_enabled, Events -- dyntrace:enabled_events(),
                   {sessions, os:cmd("lttng list 2>&1")},
                   {apps, os:cmd("lttng list -u 2>&1 | grep -E 'PID|org_erlang' | head -5")},
                   {daemons, os:cmd("ps -eo pid,stat,args | grep -E 'lttng-(sessiond|consumerd)' | grep -v grep")}})
    end.

%% @doc Runs `Fun' in a fresh process traced by dyntrace with `Flags';
%% `Fun''s result and the process.
-spec traced([atom()], fun(() -> Result)) -> {Result, pid()}.
traced(Flags, Fun) ->
    Parent = self(),
    Ref = make_ref(),
    Pid = spawn(fun() ->
                        receive go -> ok end,
                        Parent ! {Ref, Fun()}
                end),
    1 = erlang:trace(Pid, true, [{tracer, dyntrace, []} | Flags]),
    Pid ! go,
    receive {Ref, Result} -> {Result, Pid}
    after 60000 -> error(workload_timeout)
    end.

%% @doc Stops recording; the trace is complete on disk when it returns.
-spec stop(session()) -> ok.
stop(#{name := N}) ->
    cmd_ok("lttng stop " ++ N),
    ok.

%% @doc Destroys the session and deletes its trace.
-spec destroy(session()) -> ok.
destroy(#{name := N, dir := Dir}) ->
    _ = cmd("lttng destroy " ++ N),
    _ = cmd("rm -rf '" ++ Dir ++ "'"),
    ok.

%% @doc A session of this node's events only, `Events' enabled, recording,
%% and the events seen enabled here.
-spec start_tracked(atom() | string(), [atom()]) -> session().
start_tracked(Name, Events) ->
    S = create(Name, Events),
    ok = track_self(S),
    ok = start(S),
    ok = wait_enabled(Events),
    S.

%% @doc Runs `Fun' with `Events' of this node recorded in a session of its
%% own; the events written, in order. The session is gone afterwards.
-spec record(atom() | string(), [atom()], fun(() -> term())) -> [event()].
record(Name, Events, Fun) ->
    S = start_tracked(Name, Events),
    try
        Fun(),
        stop_and_read(S)
    after
        destroy(S)
    end.

%% @doc Destroys the sessions this node created under `Name' that are
%% still there (a failed case's): the next case must not find their events
%% enabled. The traces stay for reading.
-spec destroy_left(atom() | string()) -> ok.
destroy_left(Name) when is_atom(Name) ->
    destroy_left(atom_to_list(Name));
destroy_left(Name) ->
    Prefix = Name ++ "_" ++ os:getpid() ++ "_",
    {_, Out} = cmd("lttng list"),
    _ = [cmd("lttng destroy " ++ Session)
         || {match, [Session]} <- [re:run(L, "^\\s*[0-9]+\\) (\\S+) ", [{capture, all_but_first, list}])
                                   || L <- string:split(Out, "\n", all)],
            lists:prefix(Prefix, Session)],
    ok.

%% @doc Deletes every trace of the sessions created under `Name', an
%% earlier run's included: a session's unique name can come again in a
%% later run (the OS pid repeats across PID namespaces, unique integers
%% across nodes), and its trace must not be read as part of the new one.
-spec delete_traces(atom() | string()) -> ok.
delete_traces(Name) when is_atom(Name) ->
    delete_traces(atom_to_list(Name));
delete_traces(Name) ->
    _ = cmd_ok("rm -rf " ++ filename:join(base_dir(), Name ++ "_*")),
    ok.

%% @doc Stops the session and reads back its org_erlang_dyntrace events.
-spec stop_and_read(session()) -> [event()].
stop_and_read(S) ->
    stop(S),
    read(S).

%% @doc The org_erlang_dyntrace events in the session's trace, in timestamp
%% order.
-spec read(session()) -> [event()].
read(S) ->
    [E || #{name := _} = E <- read_all(S)].

%% @doc Every line babeltrace2 prints for the trace, parsed where it is an
%% org_erlang_dyntrace event, `{other, Line}' otherwise.
-spec read_all(session()) -> [event() | {other, binary()}].
read_all(#{dir := Dir}) ->
    case filelib:is_dir(Dir) andalso filelib:wildcard(filename:join(Dir, "**/metadata")) of
        [_ | _] ->
            {_, Out} = cmd_raw("babeltrace2 --clock-seconds --no-delta '" ++ Dir
                               ++ "' 2>/dev/null"),
            [parse_line(L) || L <- binary:split(Out, <<"\n">>, [global, trim_all])];
        _ ->
            []
    end.

%% @doc The number of events LTTng discarded in the session, from the
%% session daemon's channel statistics (`lttng list SESSION'; the session
%% must still exist). LTTng 2.13 has been seen to report it with a spurious
%% top bit (2^63 + N) for small per-UID buffers, and babeltrace2's
%% per-packet counts wrap when a session is stopped and started again, so
%% this reads the statistic and clears that bit.
-spec discarded(session()) -> non_neg_integer().
discarded(#{name := Name}) ->
    Out = cmd_ok("lttng list " ++ Name),
    case re:run(Out, "Discarded events: ([0-9]+)", [global, {capture, all_but_first, list}]) of
        {match, Counts} -> lists:sum([list_to_integer(C) band ((1 bsl 63) - 1) || [C] <- Counts]);
        nomatch -> 0
    end.

%% @doc The number of events in the session's trace, counted by
%% babeltrace2's counter sink (no parsing here).
-spec recorded(session()) -> non_neg_integer().
recorded(#{dir := Dir}) ->
    {_, Out} = cmd("babeltrace2 '" ++ Dir ++ "' -c sink.utils.counter -p step=+0"),
    case re:run(Out, "^\\s*([0-9]+)\\s+event messages\\s*$",
                [multiline, caseless, {capture, all_but_first, list}]) of
        {match, [N]} -> list_to_integer(N);
        nomatch -> 0
    end.

%% @doc The events of one name.
-spec select(atom(), [event()]) -> [event()].
select(Name, Events) ->
    [E || #{name := N} = E <- Events, N =:= Name].

%% @doc One field of an event.
-spec field(binary() | string(), event()) -> binary() | integer().
field(Key, #{fields := Fields}) when is_list(Key) ->
    maps:get(list_to_binary(Key), Fields);
field(Key, #{fields := Fields}) ->
    maps:get(Key, Fields).

%% @doc Runs a shell command: `{ExitStatus, Output}', output as bytes.
-spec cmd(iodata()) -> {integer() | timeout, string()}.
cmd(Cmd) ->
    {Status, Out} = cmd_raw(lists:flatten(Cmd) ++ " 2>&1"),
    {Status, binary_to_list(Out)}.

cmd_raw(Cmd) ->
    Port = open_port({spawn, "sh -c '" ++ escape_quote(lists:flatten(Cmd)) ++ "'"},
                     [exit_status, stream, binary, hide]),
    collect(Port, []).

%% @doc Runs a shell command that must succeed; its output.
-spec cmd_ok(iodata()) -> string().
cmd_ok(Cmd) ->
    case cmd(Cmd) of
        {0, Out} -> Out;
        {Status, Out} -> error({command_failed, lists:flatten(Cmd), Status, Out})
    end.

%%%===================================================================
%%% babeltrace2 text
%%%===================================================================

%% @doc Parses one babeltrace2 line (`--clock-seconds --no-delta').
-spec parse_line(binary()) -> event() | {other, binary()}.
parse_line(<<"[", Rest/binary>> = Line) ->
    try
        [Ts, Rest1] = binary:split(Rest, <<"] ">>),
        [Host, Rest2] = binary:split(Rest1, <<" ">>),
        <<?PROVIDER ":", Rest3/binary>> = Rest2,
        [Name, Rest4] = binary:split(Rest3, <<": ">>),
        Fields = parse_groups(Rest4, #{}),
        #{name => binary_to_atom(Name),
          ts => parse_ts(Ts),
          cpu_id => maps:get(<<"cpu_id">>, Fields, -1),
          host => Host,
          fields => maps:remove(<<"cpu_id">>, Fields)}
    catch
        _:_ -> {other, Line}
    end;
parse_line(Line) ->
    {other, Line}.

parse_ts(Ts) ->
    [S, Ns] = binary:split(Ts, <<".">>),
    binary_to_integer(S) * 1000000000 + binary_to_integer(Ns).

%% `{ k = v, ... }, { ... }' groups, merged.
parse_groups(<<>>, Acc) -> Acc;
parse_groups(<<", ", Rest/binary>>, Acc) -> parse_groups(Rest, Acc);
parse_groups(<<"{ ", Rest/binary>>, Acc) ->
    {Acc1, Rest1} = parse_fields(Rest, Acc),
    parse_groups(Rest1, Acc1).

parse_fields(<<"}", Rest/binary>>, Acc) -> {Acc, Rest};
parse_fields(<<", ", Rest/binary>>, Acc) -> parse_fields(Rest, Acc);
parse_fields(Bin, Acc) ->
    [Key, Rest] = binary:split(Bin, <<" = ">>),
    {Value, Rest1} = parse_value(Rest),
    parse_fields(skip_space(Rest1), Acc#{Key => Value}).

skip_space(<<" ", Rest/binary>>) -> Rest;
skip_space(Bin) -> Bin.

parse_value(<<"\"", Rest/binary>>) -> parse_string(Rest, <<>>);
parse_value(Bin) ->
    {match, [Digits]} = re:run(Bin, "^-?[0-9]+", [{capture, first, binary}]),
    <<_:(byte_size(Digits))/binary, Rest/binary>> = Bin,
    {binary_to_integer(Digits), Rest}.

%% babeltrace2 writes strings with C escapes.
parse_string(<<"\"", Rest/binary>>, Acc) -> {Acc, Rest};
parse_string(<<"\\x", H1, H2, Rest/binary>>, Acc) ->
    parse_string(Rest, <<Acc/binary, (binary_to_integer(<<H1, H2>>, 16))>>);
parse_string(<<"\\", C, Rest/binary>>, Acc) ->
    parse_string(Rest, <<Acc/binary, (unescape(C))>>);
parse_string(<<C, Rest/binary>>, Acc) ->
    parse_string(Rest, <<Acc/binary, C>>).

unescape($n) -> $\n;
unescape($t) -> $\t;
unescape($r) -> $\r;
unescape($a) -> 7;
unescape($b) -> $\b;
unescape($f) -> $\f;
unescape($v) -> $\v;
unescape($e) -> 27;
unescape($0) -> 0;
unescape(C) -> C.

%%%===================================================================
%%% helpers
%%%===================================================================

%% @doc Where the tests write their traces and files: `DYNTRACE_TRACE_DIR'
%% (scripts/isolated.sh sets one per run), else a fixed directory.
-spec base_dir() -> string().
base_dir() ->
    case os:getenv("DYNTRACE_TRACE_DIR") of
        false -> "/tmp/dyntrace-test-traces";
        Dir -> Dir
    end.

collect(Port, Acc) ->
    receive
        {Port, {data, D}} -> collect(Port, [D | Acc]);
        {Port, {exit_status, S}} ->
            {S, iolist_to_binary(lists:reverse(Acc))}
    after 120000 ->
            try port_close(Port) catch error:badarg -> ok end,
            {timeout, iolist_to_binary(lists:reverse(Acc))}
    end.

escape_quote(S) ->
    lists:flatmap(fun($') -> "'\\''"; (C) -> [C] end, S).

%% @doc Calls `Fun' every 100 ms until it answers `true', at most `N' more
%% times; then raises `timeout'.
-spec wait_until(fun(() -> boolean()), non_neg_integer()) -> ok.
wait_until(Fun, 0) ->
    case Fun() of
        true -> ok;
        false -> error(timeout)
    end;
wait_until(Fun, N) ->
    case Fun() of
        true -> ok;
        false ->
            timer:sleep(100),
            wait_until(Fun, N - 1)
    end.
