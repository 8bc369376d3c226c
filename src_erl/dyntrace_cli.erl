%%% @doc `priv/dyntrace record': records a running node from the
%%% operator's shell, whatever OS user the node runs as, without restarting
%%% it. It joins the node as a hidden node, finds its cookie, loads
%%% dyntrace into it when it is not there, drives the LTTng session with
%%% the caller's session daemon, and asks the node for
%%% `dyntrace:record(What, #{lttng => external})'. See docs/recording.md,
%%% "From the operator's shell".
-module(dyntrace_cli).
-behaviour(gen_event).

%%% PUBLIC (the `priv/dyntrace' command) %%%
-export([main/0]).

%%% PRIVATE EXPORTS (gen_event, a handler of erl_signal_server) %%%
-export([init/1, handle_event/2, handle_call/2]).

-define(USAGE,
        "usage: dyntrace record --node NAME@HOST [--duration TIME] [--cookie COOKIE] "
        "[--dir DIR] [--nif DIR] [--findings] (triage | [--trace EVENTS] [--memory] [--sample] "
        "[--plan TERM])").
%% How long a call into the node may take (loading, checking a plan,
%% stopping a recording that undoes its flags).
-define(CALL_MS, 60000).
-define(DEFAULT_MS, 10000).

-type options() :: #{node := node(),
                     duration := pos_integer(),
                     cookie => string(),
                     dir => string(),
                     nif => string(),
                     findings := boolean(),
                     plan := triage | [dyntrace_record:item()]}.

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc The command's entry point (`erl -s dyntrace_cli main -extra
%% ARGS'): runs, then halts with its exit status: 0, 1 on an error (one
%% line on stderr), 2 on a usage error.
-spec main() -> no_return().
main() ->
    Status = try run(init:get_plain_arguments()) of
                 ok -> 0
             catch
                 throw:{usage, Text} -> complain(Text), usage(standard_error), 2;
                 throw:{error, Text} -> complain(Text), 1;
                 Class:Reason -> complain(io_lib:format("~p: ~0p", [Class, Reason])), 1
             end,
    erlang:halt(Status).

%%%===================================================================
%%% ARGUMENTS
%%%===================================================================

run(["record" | Args]) ->
    record(options(Args, #{findings => false, duration => ?DEFAULT_MS, items => []}));
run([H | _]) when H =:= "-h"; H =:= "--help"; H =:= "help" ->
    usage(standard_io);
run(_) ->
    throw({usage, "dyntrace: the one command is record"}).

-spec options([string()], map()) -> options().
options(["--node", Node | Rest], O) ->
    options(Rest, O#{node => node_name(Node)});
options(["--duration", Time | Rest], O) ->
    options(Rest, O#{duration => duration(Time)});
options(["--cookie", Cookie | Rest], O) when Cookie =/= "" ->
    options(Rest, O#{cookie => Cookie});
options(["--dir", Dir | Rest], O) when Dir =/= "" ->
    options(Rest, O#{dir => filename:absname(Dir)});
options(["--nif", Path | Rest], O) when Path =/= "" ->
    Dir = case filename:basename(Path) of
              "libdyntrace_nif.so" -> filename:dirname(Path);
              _ -> Path
          end,
    options(Rest, O#{nif => filename:absname(Dir)});
options(["--findings" | Rest], O) ->
    options(Rest, O#{findings => true});
options(["--trace", Events | Rest], #{items := Items} = O) ->
    Names = [list_to_atom(E) || E <- string:lexemes(Events, ",")],
    Names =/= [] orelse throw({usage, "--trace: no event"}),
    options(Rest, O#{items => Items ++ [{trace, all, Names}]});
options(["--memory" | Rest], #{items := Items} = O) ->
    options(Rest, O#{items => Items ++ [memory]});
options(["--sample" | Rest], #{items := Items} = O) ->
    options(Rest, O#{items => Items ++ [{sample, all}]});
options(["--plan", Text | Rest], #{items := Items} = O) ->
    options(Rest, O#{items => Items ++ term(Text)});
options(["triage" | Rest], O) ->
    options(Rest, O#{triage => true});
options([Arg | _], _O) ->
    throw({usage, "unexpected " ++ Arg});
options([], O) ->
    is_map_key(node, O) orelse throw({usage, "--node is needed"}),
    Plan = case O of
               #{triage := true, items := []} -> triage;
               #{triage := true} -> throw({usage, "triage or a plan by flags, "
                                                   "not both"});
               #{items := []} -> throw({usage, "no plan: triage, or --trace, "
                                               "--memory, --sample, --plan"});
               #{items := Items} -> Items
           end,
    maps:without([items, triage], O#{plan => Plan}).

node_name(Text) ->
    case string:split(Text, "@") of
        [Name, Host] when Name =/= "", Host =/= "" -> list_to_atom(Text);
        _ -> throw({usage, "--node wants NAME@HOST, not " ++ Text})
    end.

%% `15s', `500ms', `2m', or seconds.
duration(Text) ->
    {N, Unit} = case string:to_integer(Text) of
                    {I, Rest} when is_integer(I), I > 0 -> {I, Rest};
                    _ -> throw({usage, "--duration wants e.g. 15s, not " ++ Text})
                end,
    case Unit of
        "ms" -> N;
        "" -> N * 1000;
        "s" -> N * 1000;
        "m" -> N * 60000;
        _ -> throw({usage, "--duration wants e.g. 15s, not " ++ Text})
    end.

%% A `record/2' plan written as an Erlang list.
term(Text) ->
    case erl_scan:string(Text ++ ".") of
        {ok, Tokens, _} ->
            case erl_parse:parse_term(Tokens) of
                {ok, Items} when is_list(Items), Items =/= [] -> Items;
                _ -> throw({usage, "--plan wants a list of record/2 items, "
                                   "not " ++ Text})
            end;
        _ ->
            throw({usage, "--plan: cannot read " ++ Text})
    end.

%%%===================================================================
%%% THE RECORDING
%%%===================================================================

record(#{node := Node, duration := Ms, plan := Plan} = O) ->
    %% From here SIGTERM is a message: one during the setup ends it before
    %% anything is made, or stops the recording as soon as it runs.
    trap_signals(),
    connect(O),
    load(Node, maps:get(nif, O, none)),
    OsPid = remote(Node, os, getpid, []),
    Dir = maps:get(dir, O, default_dir(Node)),
    Opts = #{duration => Ms, dir => Dir, wait => false, lttng => external},
    Events = remote(Node, dyntrace_record, events, [Plan, Opts]),
    Session = session_name(),
    warn_cost(Node, Plan),
    progress("recording ~s (OS process ~s) for ~b ms into ~s (LTTng session ~s)",
             [Node, OsPid, Ms, Dir, Session]),
    try
        interrupted(),
        make_session(Session, Dir, Events, OsPid),
        case remote(Node, dyntrace, record, [Plan, Opts]) of
            {ok, Id} -> wait_end(Node, Id, Dir);
            {error, Reason} -> fail("~s could not record: ~0p", [Node, Reason])
        end
    after
        _ = dyntrace_record:lttng(["stop", Session]),
        _ = dyntrace_record:lttng(["destroy", Session])
    end,
    Found = maps:get(findings, O) andalso findings(Dir),
    io:put_chars([Dir, "\n"]),
    case Found of
        {error, Text} -> throw({error, Text});
        _ -> ok
    end.

%% The node's estimate of what the plan costs it, when above the budget
%% (dyntrace_triage:cost_line/1), on stderr: the operator's terminal,
%% before the session starts (stdout holds only the result). A node that
%% runs an older dyntrace without the estimate says nothing.
warn_cost(Node, Plan) ->
    try erpc:call(Node, dyntrace_triage, cost_line, [Plan], ?CALL_MS) of
        none -> ok;
        Line -> io:put_chars(standard_error, [Line, "\n"])
    catch
        _:_ -> ok
    end.

%% The session the wrapper named (it destroys it should this VM be
%% killed), else one of this OS process.
session_name() ->
    case os:getenv("DYNTRACE_SESSION") of
        Name when is_list(Name), Name =/= "" -> Name;
        _ -> "dyntrace-cli-" ++ os:getpid()
    end.

%% Sorts by start time (UTC) beside record/2's directories; the OS pid
%% keeps two commands of one second apart.
default_dir(Node) ->
    Tmp = case os:getenv("TMPDIR") of
              T when is_list(T), T =/= [] -> T;
              _ -> "/tmp"
          end,
    {{Y, Mo, D}, {H, Mi, S}} = calendar:universal_time(),
    [Name | _] = string:split(atom_to_list(Node), "@"),
    filename:join(Tmp, io_lib:format("dyntrace-record-~4..0b~2..0b~2..0bT~2..0b~2..0b~2..0bZ-~s-~s",
                                     [Y, Mo, D, H, Mi, S, Name, os:getpid()])).

make_session(Session, Dir, Events, OsPid) ->
    Steps = dyntrace_record:session_steps(Session, ["--output=" ++ Dir], Events, [OsPid]),
    lists:foreach(fun(Args) ->
                          case dyntrace_record:lttng(Args) of
                              {ok, _} -> ok;
                              {error, Text} -> throw({error, one_line(Text)})
                          end
                  end, Steps).

%% Until the recording's worker in the node ends (its duration), or
%% SIGTERM (the wrapper's Ctrl-C) asks to stop it now.
wait_end(Node, Id, Dir) ->
    case remote(Node, dyntrace_ctl_client, recording, [Id]) of
        {ok, Worker} ->
            Ref = erlang:monitor(process, Worker),
            receive
                {'DOWN', Ref, process, _, noconnection} ->
                    fail("lost the connection to ~s while recording (it undoes what it set); "
                         "the trace so far is in ~s", [Node, Dir]);
                {'DOWN', Ref, process, _, _} ->
                    ok;
                {?MODULE, sigterm} ->
                    progress("stopping", []),
                    _ = remote(Node, dyntrace, stop, [Id]),
                    erlang:demonitor(Ref, [flush]),
                    ok
            end;
        {error, _} ->
            ok
    end.

%% The analyser in the priv/ beside this build's ebin/ (where the wrapper
%% is).
findings(Dir) ->
    Ebin = filename:dirname(code:which(?MODULE)),
    Exe = filename:join([filename:dirname(Ebin), "priv", "dyntrace-analyze"]),
    case filelib:is_regular(Exe) of
        false ->
            {error, "--findings: no analyser at " ++ Exe ++ " (build it: "
                    "DYNTRACE_BUILD_ANALYZER=1 rebar3 compile)"};
        true ->
            Port = open_port({spawn_executable, Exe},
                             [{args, ["findings", Dir]}, exit_status, binary]),
            case relay(Port) of
                0 -> ok;
                N -> {error, lists:flatten(io_lib:format("--findings: ~s findings exited with "
                                                         "status ~b", [Exe, N]))}
            end
    end.

relay(Port) ->
    receive
        {Port, {data, Data}} -> io:put_chars(Data), relay(Port);
        {Port, {exit_status, N}} -> N
    end.

%%%===================================================================
%%% REACHING THE NODE
%%%===================================================================

connect(#{node := Node} = O) ->
    [Name, Host] = string:split(atom_to_list(Node), "@"),
    Port = case erl_epmd:names(Host) of
               {ok, Names} ->
                   case lists:keyfind(Name, 1, Names) of
                       {_, P} -> P;
                       false -> fail("no node ~s on ~s (its epmd knows ~s)",
                                     [Name, Host, string:join([N || {N, _} <- Names], ", ")])
                   end;
               {error, _} ->
                   fail("no epmd answers on ~s: is ~s running?", [Host, Node])
           end,
    {Cookie, From} = case O of
                         #{cookie := C} -> {C, "--cookie"};
                         #{} -> dyntrace_cli_cookie:find(Port)
                     end,
    Mode = case lists:member($., Host) of
               true -> longnames;
               false -> shortnames
           end,
    Self = list_to_atom("dyntrace_record_" ++ os:getpid()),
    case net_kernel:start([Self, Mode]) of
        {ok, _} -> ok;
        {error, Reason} -> fail("cannot start Erlang distribution here: ~0p", [Reason])
    end,
    true = erlang:set_cookie(Node, list_to_atom(Cookie)),
    net_kernel:connect_node(Node)
        orelse fail("~s refused the connection: a wrong cookie (taken from ~s)?", [Node, From]),
    ok.

%% dyntrace is ours in the node (runtime_tools has a module of that name)
%% and its NIF loaded; else this build's (its NIF from `--nif', else from
%% the priv/ beside its ebin/), once the node's user can read them.
load(Node, Nif) ->
    case remote(Node, erlang, function_exported, [dyntrace, available, 0]) of
        true -> ok;
        false -> load(Node, filename:dirname(code:which(dyntrace)), Nif)
    end,
    remote(Node, dyntrace, available, [])
        orelse fail("dyntrace is loaded into ~s, but its NIF is not (dyntrace:available() is "
                    "false): its log says why", [Node]).

load(Node, Ebin, Nif) ->
    Priv = case Nif of
               none -> filename:join(filename:dirname(Ebin), "priv");
               Dir -> Dir
           end,
    Files = [filename:join(Ebin, "dyntrace.beam"),
             filename:join(Priv, "libdyntrace_nif.so"),
             filename:join(Priv, "libdyntrace_lttng.so")],
    lists:foreach(fun(File) -> readable(Node, File) end, Files),
    _ = Nif =:= none orelse remote(Node, application, set_env, [dyntrace, nif_dir, Priv]),
    _ = remote(Node, code, add_patha, [Ebin]),
    _ = remote(Node, code, purge, [dyntrace]),
    case remote(Node, code, load_file, [dyntrace]) of
        {module, dyntrace} -> ok;
        {error, Reason} -> fail("~s could not load ~s: ~0p", [Node, hd(Files), Reason])
    end.

%% Opened by the node itself: as its user, with its groups.
readable(Node, File) ->
    case remote(Node, file, open, [File, [read]]) of
        {ok, _} ->
            ok;
        {error, enoent} ->
            fail("~s is missing (build it: rebar3 compile; a NIF elsewhere: --nif DIR)", [File]);
        {error, Reason} ->
            User = string:trim(remote(Node, os, cmd, ["id -un"])),
            fail("~s runs as ~s, who cannot read ~s (~s): put this build (ebin/ and priv/ side "
                 "by side) where ~s can read it, and run its priv/dyntrace",
                 [Node, User, File, file:format_error(Reason), User])
    end.

%% A call into the node; its failures as one line.
remote(Node, M, F, A) ->
    try
        erpc:call(Node, M, F, A, ?CALL_MS)
    catch
        error:{exception, Reason, _} ->
            fail("~s refused ~s:~s: ~0p", [Node, M, F, Reason]);
        error:{erpc, Reason} ->
            fail("~s did not answer ~s:~s (~0p)", [Node, M, F, Reason]);
        exit:{exception, Reason} ->
            fail("~s refused ~s:~s: ~0p", [Node, M, F, Reason])
    end.

%%%===================================================================
%%% SIGNALS
%%% SIGTERM (the wrapper's Ctrl-C too) stops the recording instead of
%%% the VM: the handler replaces the VM's default one.
%%%===================================================================

interrupted() ->
    receive
        {?MODULE, sigterm} -> throw({error, "interrupted before the recording started"})
    after 0 ->
            ok
    end.

trap_signals() ->
    ok = gen_event:swap_handler(erl_signal_server, {erl_signal_handler, []},
                                {?MODULE, self()}),
    ok = os:set_signal(sigterm, handle).

%% @private
-spec init({pid(), term()}) -> {ok, pid()}.
init({Pid, _Old}) ->
    {ok, Pid}.

%% @private
-spec handle_event(term(), pid()) -> {ok, pid()}.
handle_event(sigterm, Pid) ->
    Pid ! {?MODULE, sigterm},
    {ok, Pid};
handle_event(_Signal, Pid) ->
    {ok, Pid}.

%% @private
-spec handle_call(term(), pid()) -> {ok, ok, pid()}.
handle_call(_Request, Pid) ->
    {ok, ok, Pid}.

%%%===================================================================
%%% OUTPUT
%%%===================================================================

usage(Device) ->
    io:put_chars(Device, [?USAGE, "\n"]).

fail(Format, Args) ->
    throw({error, lists:flatten(io_lib:format(Format, Args))}).

one_line(Text) ->
    lists:flatten(string:replace(string:trim(Text), "\n", " ", all)).

complain(Text) ->
    io:put_chars(standard_error, ["dyntrace record: ", one_line(lists:flatten(Text)), "\n"]).

%% On stderr when it is a terminal (the wrapper tells).
progress(Format, Args) ->
    case os:getenv("DYNTRACE_PROGRESS") of
        "1" -> io:format(standard_error, "dyntrace record: " ++ Format ++ "~n", Args);
        _ -> ok
    end.
