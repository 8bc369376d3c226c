%%% @doc `dyntrace:record/2' with `nodes' (several nodes at once into one
%%% directory: those on this host share one LTTng session, the others
%%% record on their host and their traces are copied here over
%%% distribution) and `findings' (the analyser's findings printed at the
%%% end). See docs/recording.md, "Several nodes at once".
-module(dyntrace_nodes).

%%% PUBLIC (through dyntrace) %%%
-export([record/2]).

%%% PRIVATE EXPORTS (called on the other nodes) %%%
-export([host/0, files/1, chunk/3, remove/1]).

-type answer() :: #{recorded := [node()],
                    unreachable := [node()],
                    failed := [{node(), term()}]}.
-export_type([answer/0]).

%% How long a node may take to answer beyond the recording's duration.
-define(SLACK_MS, 120000).
-define(CHUNK_BYTES, 4 * 1024 * 1024).
-define(ASK_MS, 10000).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc See {@link dyntrace:record/2}: `Opts' with `nodes' answers
%% `{ok, Dir, answer()}' (at least one node recorded) or
%% `{error, {nodes, answer()}}'; with `findings => true' the findings are
%% printed once the trace is complete.
-spec record(dyntrace_record:item() | [dyntrace_record:item()] | triage, map()) ->
          {ok, file:filename()} | {ok, file:filename(), answer()}
              | {ok, dyntrace_record:handle()} | {error, term()}.
record(What, Opts) when is_map(Opts) ->
    Findings = maps:get(findings, Opts, false),
    is_boolean(Findings) orelse error({badarg, {findings, Findings}}),
    Waits = maps:get(wait, Opts, true) =:= true andalso maps:get(mode, Opts, normal) =:= normal,
    (Waits orelse not Findings) orelse error({badarg, {findings, Findings}}),
    Rest = maps:without([findings, nodes], Opts),
    Result = case maps:find(nodes, Opts) of
                 error ->
                     %% With lttng => external the caller (the outside
                     %% command) prints it, on its operator's terminal.
                     _ = maps:get(lttng, Rest, internal) =:= external
                         orelse dyntrace_triage:warn_cost(What),
                     dyntrace_record:record(What, Rest);
                 {ok, Nodes} -> nodes(What, valid_nodes(Nodes), Waits, Rest)
             end,
    _ = Findings andalso print_findings(Result),
    Result;
record(_What, Opts) ->
    error({badarg, {options, Opts}}).

valid_nodes(Nodes) ->
    (is_list(Nodes) andalso Nodes =/= [] andalso dyntrace_lib:is_proper_list(Nodes)
     andalso lists:all(fun is_atom/1, Nodes))
        orelse error({badarg, {nodes, Nodes}}),
    lists:usort(Nodes).

%%%===================================================================
%%% SEVERAL NODES
%%%===================================================================

nodes(_What, Nodes, false, _Opts) ->
    error({badarg, {nodes, Nodes}});
nodes(What, Nodes, true, Opts) ->
    Dir = case maps:get(dir, Opts, undefined) of
              undefined -> filename:join(dyntrace_record:temp_dir(), dyntrace_record:new_name());
              D -> filename:absname(D)
          end,
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Here = host(),
    Timeout = case maps:get(duration, Opts, 10000) of
                  Ms when is_integer(Ms) -> Ms + ?SLACK_MS;
                  _ -> infinity
              end,
    Places = pmap(fun(Node) -> place(Node, Here) end, Nodes),
    Local = [{Node, OsPid} || {Node, {here, OsPid}} <- Places],
    Shared = filename:join(Dir, dir_name(Here)),
    Session = share(What, Opts, Shared, [OsPid || {_, OsPid} <- Local]),
    Answers = try
                  pmap(fun({Node, Place}) -> one(Node, Place, Session, What, Opts, Shared, Dir,
                                                 Timeout)
                       end, Places)
              after
                  end_share(Session)
              end,
    Answer = #{recorded => [N || {N, ok} <- Answers],
               unreachable => [N || {N, unreachable} <- Answers],
               failed => [{N, R} || {N, {failed, R}} <- Answers]},
    case Answer of
        #{recorded := []} -> {error, {nodes, Answer}};
        _ -> {ok, Dir, Answer}
    end.

%% `{Node, F(Node)}' for each, all at once.
pmap(F, Items) ->
    Self = self(),
    Workers = [{spawn_monitor(fun() -> Self ! {self(), F(Item)} end), Item} || Item <- Items],
    [receive
         {Pid, A} -> erlang:demonitor(Ref, [flush]), {key(Item), A};
         {'DOWN', Ref, process, Pid, Reason} -> {key(Item), {failed, {crashed, Reason}}}
     end || {{Pid, Ref}, Item} <- Workers].

key({Node, _Place}) -> Node;
key(Node) -> Node.

%% Where a node is: on this host (`{here, OsPid}'), on another, or not
%% to be recorded.
place(Node, Here) ->
    case ask(Node, ?MODULE, host, [], ?ASK_MS) of
        {badrpc, nodedown} ->
            unreachable;
        {badrpc, {'EXIT', {undef, _}}} ->
            {failed, dyntrace_not_loaded};
        {badrpc, Reason} ->
            {failed, Reason};
        Here ->
            case ask(Node, os, getpid, [], ?ASK_MS) of
                OsPid when is_list(OsPid) -> {here, OsPid};
                {badrpc, Reason} -> {failed, Reason}
            end;
        _Elsewhere ->
            elsewhere
    end.

%% The nodes on this host share one LTTng session, which this node makes
%% (into `Dir/HOST') and which tracks each of their OS processes; each
%% node then runs its part with `lttng => external'. `none' when no node
%% is here; `{error, Text}' when the session cannot be made (each node
%% here is then named as failed).
share(_What, _Opts, _Into, []) ->
    none;
share(What, Opts, Into, OsPids) ->
    Name = "dyntrace-nodes-" ++ os:getpid() ++ "-"
        ++ integer_to_list(erlang:unique_integer([positive])),
    try dyntrace_record:events(What, Opts) of
        Events -> make_session(Name, dyntrace_record:session_steps(Name, ["--output=" ++ Into],
                                                                   Events, OsPids))
    catch
        error:Reason -> {error, Reason}
    end.

make_session(Name, []) ->
    {session, Name};
make_session(Name, [Args | Steps]) ->
    case dyntrace_record:lttng(Args) of
        {ok, _} ->
            make_session(Name, Steps);
        {error, Text} ->
            _ = end_share({session, Name}),
            {error, {lttng, Text}}
    end.

%% Stops the shared session (which writes the rest of its trace out) and
%% destroys it.
end_share({session, Name}) ->
    _ = dyntrace_record:lttng(["stop", Name]),
    _ = dyntrace_record:lttng(["destroy", Name]),
    ok;
end_share(_) ->
    ok.

%% One node's recording: a node here into the shared session, one
%% elsewhere on its host, its trace gathered into `Dir/NODE'.
one(_Node, {here, _}, {error, Reason}, _What, _Opts, _Shared, _Dir, _Timeout) ->
    {failed, Reason};
one(Node, {here, _}, {session, _}, What, Opts, Shared, _Dir, Timeout) ->
    recorded(ask(Node, dyntrace_record, record,
                 [What, Opts#{dir => Shared, lttng => external}], Timeout));
one(Node, elsewhere, _Session, What, Opts, _Shared, Dir, Timeout) ->
    case ask(Node, dyntrace_record, record, [What, maps:remove(dir, Opts)], Timeout) of
        {ok, There} when is_list(There) -> gather(Node, There, filename:join(Dir, dir_name(Node)));
        Other -> recorded(Other)
    end;
one(_Node, Place, _Session, _What, _Opts, _Shared, _Dir, _Timeout) ->
    Place.

ask(Node, M, F, A, _Timeout) when Node =:= node() ->
    try apply(M, F, A)
    catch Class:Reason -> {badrpc, {'EXIT', {Class, Reason}}}
    end;
ask(Node, M, F, A, Timeout) ->
    rpc:call(Node, M, F, A, Timeout).

recorded({ok, _Dir}) -> ok;
recorded({error, Reason}) -> {failed, Reason};
recorded({badrpc, nodedown}) -> unreachable;
recorded({badrpc, Reason}) -> {failed, Reason}.

%% A trace recorded on another host, copied here file by file, in chunks.
gather(Node, There, Into) ->
    case ask(Node, ?MODULE, files, [There], ?ASK_MS) of
        Files when is_list(Files) ->
            case copy(Node, There, Into, Files) of
                ok ->
                    _ = ask(Node, ?MODULE, remove, [There], ?ASK_MS),
                    ok;
                {error, Reason} ->
                    {failed, {gather, There, Reason}}
            end;
        Other ->
            {failed, {gather, There, Other}}
    end.

copy(_Node, _There, _Into, []) ->
    ok;
copy(Node, There, Into, [File | Files]) ->
    Target = filename:join(Into, File),
    ok = filelib:ensure_dir(Target),
    {ok, Out} = file:open(Target, [write, raw, binary]),
    try copy_file(Node, filename:join(There, File), Out, 0) of
        ok -> copy(Node, There, Into, Files);
        Error -> Error
    after
        file:close(Out)
    end.

copy_file(Node, Path, Out, Offset) ->
    case ask(Node, ?MODULE, chunk, [Path, Offset, ?CHUNK_BYTES], ?ASK_MS) of
        {ok, Data} ->
            ok = file:write(Out, Data),
            copy_file(Node, Path, Out, Offset + byte_size(Data));
        eof ->
            ok;
        {error, _} = Error ->
            Error;
        {badrpc, Reason} ->
            {error, Reason}
    end.

%% A node's (or a host's) name as a directory name.
dir_name(Node) when is_atom(Node) ->
    dir_name(atom_to_list(Node));
dir_name(Name) ->
    [case C of
         $/ -> $_;
         _ -> C
     end || C <- Name].

%%%===================================================================
%%% ON THE OTHER NODES
%%%===================================================================

%% @doc This node's host as `nodes' compares them: the application
%% environment's `host' (for containers that share a host name but not a
%% file system or session daemon), else `net_adm:localhost()'.
-spec host() -> string().
host() ->
    case application:get_env(dyntrace, host) of
        {ok, Host} when is_list(Host) -> Host;
        _ -> net_adm:localhost()
    end.

%% @doc The regular files under `Dir', as paths relative to it.
-spec files(file:filename()) -> [file:filename()] | {error, term()}.
files(Dir) ->
    case filelib:is_dir(Dir) of
        true ->
            Prefix = length(filename:split(Dir)),
            filelib:fold_files(Dir, "", true,
                               fun(F, Acc) ->
                                       [filename:join(lists:nthtail(Prefix, filename:split(F))) | Acc]
                               end, []);
        false ->
            {error, {not_a_directory, Dir}}
    end.

%% @doc At most `Size' bytes of `File' from `Offset'.
-spec chunk(file:filename(), non_neg_integer(), pos_integer()) ->
          {ok, binary()} | eof | {error, term()}.
chunk(File, Offset, Size) ->
    case file:open(File, [read, raw, binary]) of
        {ok, F} ->
            try file:pread(F, Offset, Size)
            after file:close(F)
            end;
        Error ->
            Error
    end.

%% @doc Removes a trace gathered elsewhere.
-spec remove(file:filename()) -> ok | {error, term()}.
remove(Dir) ->
    file:del_dir_r(Dir).

%%%===================================================================
%%% FINDINGS
%%%===================================================================

print_findings({ok, Dir}) ->
    print_findings(Dir);
print_findings({ok, Dir, _Answer}) ->
    print_findings(Dir);
print_findings({error, _}) ->
    ok;
print_findings(Dir) when is_list(Dir) ->
    case analyser() of
        false ->
            io:format("dyntrace: findings: no dyntrace-analyze found (in dyntrace's priv "
                      "directory or on PATH; build it with DYNTRACE_BUILD_ANALYZER=1 rebar3 compile)~n");
        Exe ->
            {Status, Text} = run(Exe, ["findings", Dir]),
            case Status of
                0 -> io:format("~ts", [Text]);
                _ -> case string:find(Text, "unrecognized subcommand") of
                         nomatch ->
                             io:format("dyntrace: findings: ~ts findings ~ts failed (exit ~b):~n~ts",
                                       [Exe, Dir, Status, Text]);
                         _ ->
                             io:format("dyntrace: findings: ~ts has no findings command "
                                       "(a newer build has it)~n", [Exe])
                     end
            end
    end.

analyser() ->
    Beside = case code:which(dyntrace) of
                 Beam when is_list(Beam) ->
                     [filename:join([filename:dirname(filename:dirname(Beam)), "priv",
                                     "dyntrace-analyze"])];
                 _ ->
                     []
             end,
    App = case code:priv_dir(dyntrace) of
              {error, bad_name} -> [];
              Priv -> [filename:join(Priv, "dyntrace-analyze")]
          end,
    case [E || E <- Beside ++ App, filelib:is_regular(E)] of
        [Exe | _] -> Exe;
        [] -> os:find_executable("dyntrace-analyze")
    end.

run(Exe, Args) ->
    Port = open_port({spawn_executable, Exe},
                     [{args, Args}, exit_status, stderr_to_stdout, binary, hide]),
    collect(Port, []).

collect(Port, Acc) ->
    receive
        {Port, {data, Data}} -> collect(Port, [Data | Acc]);
        {Port, {exit_status, Status}} -> {Status, lists:reverse(Acc)}
    end.
