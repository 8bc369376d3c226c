%%% @doc Test helper: runs `dyntrace-analyze' (its path in a suite's
%%% Config under `analyze') and reads what it says, for the suites that
%%% check its answers; and runs a workload in a freshly traced process.
-module(analyze_cli).

-include_lib("stdlib/include/assert.hrl").

-export([run/2, json/2, bad/3, collect/2, traced/2]).

%% @doc Runs the analyser: exit status, stdout and stderr apart.
-spec run(list(), [string()]) -> {non_neg_integer(), binary(), binary()}.
run(Config, Args) ->
    Err = filename:join(os:getenv("DYNTRACE_TRACE_DIR", "/tmp/dyntrace-test-traces"),
                        "analyze_stderr_" ++ os:getpid()),
    ok = filelib:ensure_dir(Err),
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", "exec \"$0\" \"$@\" 2>" ++ Err,
                              proplists:get_value(analyze, Config) | Args]},
                      exit_status, binary, hide]),
    {Status, Out} = collect(Port, []),
    {ok, Stderr} = file:read_file(Err),
    ok = file:delete(Err),
    {Status, Out, Stderr}.

%% @doc Runs the analyser with `--json' among `Args': it must succeed
%% silently on stderr; its JSON.
-spec json(list(), [string()]) -> term().
json(Config, Args) ->
    {Status, Out, Stderr} = run(Config, Args),
    ct:log("~p -> ~p~n~s~s", [Args, Status, Stderr, Out]),
    ?assertEqual({0, <<>>}, {Status, Stderr}),
    {Json, <<"\n">>} = json_text:value(Out),
    Json.

%% @doc Bad input: one line on stderr naming each of `Mentions', nothing
%% on stdout, exit status 1, no panic.
-spec bad(list(), [string()], [string()]) -> ok.
bad(Config, Args, Mentions) ->
    {Status, Stdout, Stderr} = run(Config, Args),
    ct:log("~p -> ~p~nstdout: ~s~nstderr: ~s", [Args, Status, Stdout, Stderr]),
    ?assertEqual(1, Status),
    ?assertEqual(<<>>, Stdout),
    [Line] = binary:split(Stderr, <<"\n">>, [global, trim_all]),
    [?assertNotEqual(nomatch, string:find(Line, M), {M, Line}) || M <- Mentions],
    ?assertEqual(nomatch, string:find(Line, "panicked")),
    ok.

%% @doc A port's output until it exits: its status and output.
-spec collect(port(), [binary()]) -> {non_neg_integer(), binary()}.
collect(Port, Acc) ->
    receive
        {Port, {data, D}} -> collect(Port, [D | Acc]);
        {Port, {exit_status, S}} -> {S, iolist_to_binary(lists:reverse(Acc))}
    after 120000 -> error({analyze_timeout, Port})
    end.

%% @doc Runs `Fun' in a fresh process traced with `Flags' (dyntrace as the
%% tracer); its result and pid.
-spec traced([atom()], fun(() -> term())) -> {term(), pid()}.
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
