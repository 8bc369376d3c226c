%%% @doc Test helper: Debian's chromium, headless, as the browser suites run
%%% it (as root, on a closed network: no sandbox, no background
%%% connections, software WebGL), a fresh profile each time, and the
%%% console messages it logs.
-module(headless).

-export([chromium/2, console/1]).

%% @doc Runs `Chromium' with `Args' for a minute at most: `{Status, Stdout,
%% Stderr}' (what it logs, console messages included).
-spec chromium(string(), [iodata()]) -> {non_neg_integer(), binary(), binary()}.
chromium(Chromium, Args) ->
    Base = os:getenv("DYNTRACE_TRACE_DIR", "/tmp/dyntrace-test-traces"),
    Profile = filename:join(Base, io_lib:format("chromium_~s_~b",
                                                [os:getpid(), erlang:unique_integer([positive])])),
    Err = Profile ++ ".stderr",
    ok = filelib:ensure_dir(Err),
    Flags = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader",
             "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync",
             "--user-data-dir=" ++ Profile, "--enable-logging=stderr", "--v=0"],
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", "exec timeout 60 \"$0\" \"$@\" 2>" ++ Err, Chromium
                              | Flags ++ [lists:flatten(A) || A <- Args]]},
                      exit_status, binary, hide]),
    {Status, Out} = analyze_cmd:collect(Port),
    {ok, Stderr} = file:read_file(Err),
    lttng_session:cmd_ok("rm -rf '" ++ Profile ++ "' '" ++ Err ++ "'"),
    {Status, Out, Stderr}.

%% @doc The page's console messages in chromium's log: every CONSOLE line
%% (chromium logs errors, warnings and uncaught exceptions alike, at INFO)
%% but those of its own pages (on a loaded machine its new-tab components
%% report a "slow network" from chrome://resources).
-spec console(binary()) -> [binary()].
console(Stderr) ->
    [L || L <- binary:split(Stderr, <<"\n">>, [global]),
          binary:match(L, <<":CONSOLE">>) =/= nomatch,
          binary:match(L, <<"source: chrome://">>) =:= nomatch].
