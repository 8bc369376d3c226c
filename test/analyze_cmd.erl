%%% Runs `dyntrace-analyze' from a test: exit status, stdout and stderr
%%% apart, JSON parsed. Every run over trace files is made twice, with the
%%% built-in CTF reader (the default) and with `--reader babeltrace2'
%%% (libbabeltrace2, the reference): a run that succeeds must print the
%%% same bytes on stdout and stderr under both, and one that fails must
%%% fail under both. So every suite's real traces, damaged ones included,
%%% check the built-in reader against libbabeltrace2.
-module(analyze_cmd).

-include_lib("stdlib/include/assert.hrl").

-export([exe/0, run/2, run_with/3, json/2, bad/3, collect/1]).

%% @doc The analyser built into the application's priv directory.
-spec exe() -> string().
exe() ->
    Exe = filename:join(code:priv_dir(dyntrace), "dyntrace-analyze"),
    true = filelib:is_regular(Exe),
    Exe.

%% @doc Runs the analyser `Exe' with `Args': `{Status, Stdout, Stderr}'
%% (with the built-in reader, checked against libbabeltrace2's run).
-spec run(string(), [string()]) -> {non_neg_integer(), binary(), binary()}.
run(Exe, Args) ->
    Result = run_with(Exe, Args, default),
    case reads_files(Args) of
        true -> same_under_babeltrace2(Args, Result, run_with(Exe, Args, babeltrace2));
        false -> ok
    end,
    Result.

%% Whether a run reads trace files with the default reader: not live
%% (lttng-live is libbabeltrace2's alone), not a reader chosen already.
reads_files(Args) ->
    not lists:member("--reader", Args)
        andalso not lists:any(fun(A) -> lists:prefix("net://", A) end, Args)
        andalso not lists:member("--help", Args).

same_under_babeltrace2(Args, {0, _, _} = Builtin, Reference) ->
    ?assertEqual(Reference, Builtin, {both_readers, Args});
same_under_babeltrace2(Args, {Status, _, _}, {RefStatus, _, RefErr}) ->
    ?assertNotEqual(0, RefStatus, {both_readers_fail, Args, Status, RefErr}).

%% @doc Runs the analyser `Exe' with `Args' and the reader `Reader'
%% (`default', or `babeltrace2' for `--reader babeltrace2'), once:
%% `{Status, Stdout, Stderr}'.
-spec run_with(string(), [string()], default | babeltrace2) ->
          {non_neg_integer(), binary(), binary()}.
run_with(Exe, Args0, Reader) ->
    Args = case Reader of
               default -> Args0;
               babeltrace2 -> Args0 ++ ["--reader", "babeltrace2"]
           end,
    %% Named apart per run: suites in other PID namespaces (scripts/isolated.sh)
    %% have the same OS pid and share this directory.
    Err = filename:join(os:getenv("DYNTRACE_TRACE_DIR", "/tmp/dyntrace-test-traces"),
                        io_lib:format("analyze_stderr_~s_~b",
                                      [os:getpid(), rand:uniform(1 bsl 48)])),
    ok = filelib:ensure_dir(Err),
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", "exec \"$0\" \"$@\" 2>" ++ Err, Exe | Args]},
                      exit_status, binary, hide]),
    {Status, Out} = collect(Port),
    {ok, Stderr} = file:read_file(Err),
    ok = file:delete(Err),
    {Status, Out, Stderr}.

%% @doc Runs the analyser with `Args' (which include `--json'); it must
%% succeed silently on stderr. Its JSON, decoded; it names its schema
%% version (docs/json.md).
-spec json(string(), [string()]) -> map().
json(Exe, Args) ->
    {Status, Out, Stderr} = run(Exe, Args),
    ct:log("~p -> ~p~n~s~s", [Args, Status, Stderr, Out]),
    ?assertEqual({0, <<>>}, {Status, Stderr}),
    {Json, <<"\n">>} = json_text:value(Out),
    ?assertMatch(<<"dyntrace-analyze/", _/binary>>, maps:get(<<"schema">>, Json)),
    Json.

%% @doc Bad input: the analyser `Exe' run with `Args' prints one line on
%% stderr naming each of `Mentions', nothing on stdout, and exits with
%% status 1, without a panic.
-spec bad(string(), [string()], [string()]) -> ok.
bad(Exe, Args, Mentions) ->
    {Status, Stdout, Stderr} = run(Exe, Args),
    ct:log("~p -> ~p~nstdout: ~s~nstderr: ~s", [Args, Status, Stdout, Stderr]),
    ?assertEqual(1, Status),
    ?assertEqual(<<>>, Stdout),
    [Line] = binary:split(Stderr, <<"\n">>, [global, trim_all]),
    [?assertNotEqual(nomatch, string:find(Line, M), {M, Line}) || M <- Mentions],
    ?assertEqual(nomatch, string:find(Line, "panicked")),
    ok.

%% @doc What a port running the analyser prints until it exits: `{Status,
%% Output}'.
-spec collect(port()) -> {non_neg_integer(), binary()}.
collect(Port) ->
    collect(Port, []).

collect(Port, Acc) ->
    receive
        {Port, {data, D}} -> collect(Port, [D | Acc]);
        {Port, {exit_status, S}} -> {S, iolist_to_binary(lists:reverse(Acc))}
    after 120000 -> error({analyze_timeout, Port})
    end.
