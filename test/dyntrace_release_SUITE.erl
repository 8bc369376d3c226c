%%% What a node gets from `dyntrace' when the host lacks what it needs, as a
%%% release's node may: the module loads, the node runs, `available()' is
%%% false, and the node's log has one line that names the fix. Each case
%%% starts a node of its own and reads what its logger wrote to a file.
%%%
%%% The NIF library does not link LTTng-UST: its load callback opens the
%%% probe provider library, which does. A host without LTTng-UST's runtime
%%% library is made real here by hiding liblttng-ust* from the dynamic
%%% loader in a private mount namespace (without_lttng_ust.sh, run by root).
-module(dyntrace_release_SUITE).

-include_lib("stdlib/include/assert.hrl").
-include_lib("common_test/include/ct.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([t_without_lttng_ust/1, t_with_lttng_ust/1, t_without_nif_library/1,
         t_shadowed_by_runtime_tools/1]).

suite() ->
    [{timetrap, {minutes, 2}}].

all() ->
    [t_without_lttng_ust, t_with_lttng_ust, t_without_nif_library, t_shadowed_by_runtime_tools].

init_per_suite(Config) ->
    case os:cmd("id -u") of
        "0\n" -> Config;
        _ -> {skip, "hiding a library needs a mount namespace: run as root"}
    end.

end_per_suite(_Config) ->
    ok.

%%%===================================================================
%%% Cases
%%%===================================================================

%% No liblttng-ust.so.1 for the dynamic loader: the module loads, the node
%% answers, available() is false, and one log line says what to install.
t_without_lttng_ust(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "without_lttng_ust"),
    %% Beside this file (?FILE is absolute: rebar3 and otp-newest.sh
    %% compile the suite so), not in data_dir, which otp-newest.sh's build
    %% directory lacks.
    Hide = filename:join([filename:dirname(?FILE), "dyntrace_release_SUITE_data",
                          "without_lttng_ust.sh"]),
    Unshare = os:find_executable("unshare"),
    Exec = {Unshare, ["--mount", "--propagation", "private", Hide, Dir, erl()]},
    with_node(Config, Exec, [ebin(dyntrace)],
              fun(Peer, Log) ->
                      %% The library is really gone for this node.
                      Found = lttng_ust_library(),
                      ?assertNotEqual("", Found),
                      ?assertEqual(false, peer:call(Peer, filelib, is_file, [Found])),
                      loaded_without_nif(Peer, Log,
                                         "^dyntrace: tracing is off: LTTng-UST's runtime library "
                                         "\\(liblttng-ust\\.so\\.1\\) cannot be loaded; install it "
                                         "\\(Debian/Ubuntu: apt-get install liblttng-ust1")
              end).

%% The same node with the library where it belongs: the NIF loads, and
%% nothing is logged (what the case above sees is the library's absence).
t_with_lttng_ust(Config) ->
    with_node(Config, {erl(), []}, [ebin(dyntrace)],
              fun(Peer, Log) ->
                      ?assertEqual({module, dyntrace}, peer:call(Peer, code, ensure_loaded, [dyntrace])),
                      ?assertEqual(true, peer:call(Peer, dyntrace, available, [])),
                      ?assertEqual([], dyntrace_lines(Peer, Log)),
                      ?assertEqual(0, reports(Log))
              end).

%% The module's beam alone, no priv/ beside it and no dyntrace application
%% on the code path: the module loads, available() is false, one log line
%% says how to build the NIF.
t_without_nif_library(Config) ->
    Ebin = filename:join(?config(priv_dir, Config), "beam_alone"),
    ok = filelib:ensure_dir(filename:join(Ebin, "x")),
    {ok, _} = file:copy(code:which(dyntrace), filename:join(Ebin, "dyntrace.beam")),
    with_node(Config, {erl(), []}, [Ebin],
              fun(Peer, Log) ->
                      loaded_without_nif(Peer, Log,
                                         "^dyntrace: tracing is off: no NIF library "
                                         "\\(.*/libdyntrace_lttng\\.so is missing\\); build "
                                         "dyntrace with cargo and liblttng-ust-dev installed")
              end).

%% Ours loaded by its file name while runtime_tools's dyntrace.beam comes
%% first on the code path (ours appended to it): ours runs, with its NIF,
%% and one warning names the file the next load would take and the fix.
t_shadowed_by_runtime_tools(Config) ->
    Otp = filename:join(code:lib_dir(runtime_tools), "ebin/dyntrace.beam"),
    ?assert(filelib:is_regular(Otp)),
    Ours = filename:rootname(code:which(dyntrace)),
    with_node(Config, {erl(), ["-pz", ebin(dyntrace)]}, [],
              fun(Peer, Log) ->
                      ?assertEqual(Otp, peer:call(Peer, code, where_is_file, ["dyntrace.beam"])),
                      ?assertEqual({module, dyntrace}, peer:call(Peer, code, load_abs, [Ours])),
                      ?assertEqual(true, peer:call(Peer, dyntrace, available, [])),
                      Warning = "dyntrace: the code path's first dyntrace.beam (" ++ Otp
                          ++ ") is not this module, and the next load takes it; if it is "
                          "runtime_tools's, leave it out of the release (relx: {exclude_modules, "
                          "[{runtime_tools, [dyntrace]}]}; Mix: see docs/releases.md)",
                      ?assertEqual([Warning], wait_lines(Peer, Log, 1)),
                      ?assertEqual(1, reports(Log))
              end).

%%%===================================================================
%%% Helpers
%%%===================================================================

%% Loading dyntrace on the node succeeds without its NIF: available() is
%% false, the node answers, and its log holds one report, a line matching
%% Pattern.
loaded_without_nif(Peer, Log, Pattern) ->
    ?assertEqual({module, dyntrace}, peer:call(Peer, code, ensure_loaded, [dyntrace])),
    ?assertEqual(false, peer:call(Peer, dyntrace, available, [])),
    ?assertEqual(6, peer:call(Peer, lists, sum, [[1, 2, 3]])),
    [Line] = dyntrace_lines(Peer, Log),
    ?assertMatch({match, _}, re:run(Line, Pattern)),
    ?assertEqual(1, reports(Log)).

%% Runs Fun(Peer, LogFile) against a node started by Exec, whose code path
%% starts with Paths and whose logger writes to LogFile only.
with_node(Config, Exec, Paths, Fun) ->
    Log = filename:join(?config(priv_dir, Config),
                        "node-" ++ integer_to_list(erlang:unique_integer([positive])) ++ ".log"),
    Handler = lists:flatten(io_lib:format("[{handler,default,logger_std_h,"
                                          "#{config=>#{file=>~p}}}]", [Log])),
    {ok, Peer, _Node} = peer:start(#{exec => Exec, connection => standard_io,
                                     args => lists:append([["-pa", P] || P <- Paths])
                                             ++ ["-kernel", "logger", Handler],
                                     wait_boot => 60000}),
    try
        Fun(Peer, Log)
    after
        peer:stop(Peer)
    end.

%% The lines of the log that dyntrace wrote, once the handler has written
%% everything out.
dyntrace_lines(Peer, Log) ->
    ok = peer:call(Peer, logger_std_h, filesync, [default]),
    {ok, Text} = file:read_file(Log),
    [L || L <- string:split(unicode:characters_to_list(Text), "\n", all),
          string:find(L, "dyntrace") =/= nomatch].

%% The dyntrace lines of the log once there are Count (written by a
%% process of their own, the warning comes a little after the load).
wait_lines(Peer, Log, Count) ->
    wait_lines(Peer, Log, Count, 100).

wait_lines(Peer, Log, Count, Tries) ->
    case dyntrace_lines(Peer, Log) of
        Lines when length(Lines) >= Count; Tries =:= 0 ->
            Lines;
        _ ->
            timer:sleep(50),
            wait_lines(Peer, Log, Count, Tries - 1)
    end.

%% How many reports (of any level) the log holds.
reports(Log) ->
    {ok, Text} = file:read_file(Log),
    length(binary:matches(Text, <<" REPORT====">>)).

%% Where the dynamic loader finds liblttng-ust.so.1 on this host.
lttng_ust_library() ->
    Cache = os:cmd("ldconfig -p"),
    case re:run(Cache, "liblttng-ust\\.so\\.1 .*=> (\\S+)", [{capture, all_but_first, list}]) of
        {match, [Path]} -> Path;
        nomatch -> ""
    end.

erl() ->
    filename:join([code:root_dir(), "bin", "erl"]).

ebin(Module) ->
    filename:dirname(code:which(Module)).
