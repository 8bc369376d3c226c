%%% A real service, as production runs it: Debian's RabbitMQ broker, started
%%% as its own user `rabbitmq' (with a private node name, base directory and
%%% ports), dyntrace loaded into it as docs/recording.md says, a pika
%%% publisher and consumer at work, and `priv/dyntrace record' run from
%%% this (root) node while they work. It checks what an operator would
%%% notice: the trace names RabbitMQ's registered processes and a queue
%%% process; the analyses run on it; every message published was consumed;
%%% the broker still answers `rabbitmqctl status'; nothing is left set in
%%% the broker and no LTTng session is left. The command's other promises
%%% are checked on a plain node of another user (`nobody'): each wrong
%%% setup's one-line error, loading dyntrace into a node that lacks it,
%%% Ctrl-C, and the command's VM killed.
%%%
%%% Installs nothing: scripts/setup.sh installs rabbitmq-server and
%%% python3-pika; the suite is skipped, saying so, without them.
-module(dyntrace_rabbitmq_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, groups/0, init_per_suite/1, end_per_suite/1,
         init_per_group/2, end_per_group/2, end_per_testcase/2]).
-export([t_errors/1, t_load_and_interrupt/1, t_nif/1, t_killed/1, t_cost/1, t_rabbitmq/1,
         bench_broker_cpu/1]).

-define(RABBIT_BIN, "/usr/lib/rabbitmq/bin/").
-define(PYTHON, "/usr/bin/python3").
-define(DEBIAN_OTP, "/usr/lib/erlang").
-define(AMQP_PORT, "5680").
-define(DIST_PORT, "25680").
-define(COOKIE, "dyntrace_rmq_suite").

suite() ->
    [{timetrap, {minutes, 5}}].

all() ->
    [{group, plain}, {group, rabbitmq}].

groups() ->
    [{plain, [], [t_errors, t_load_and_interrupt, t_nif, t_killed, t_cost]},
     {rabbitmq, [], [t_rabbitmq]},
     %% A benchmark, not a test (make bench-rabbitmq): not in all().
     {bench, [], [bench_broker_cpu]}].

%% A build the node's users can read (a clone may sit under a home that
%% they cannot enter): ebin/ and priv/ side by side, as an operator
%% installs it.
init_per_suite(Config) ->
    ok = lttng_session:ensure_daemon(),
    ok = dyntrace_peers:alive(list_to_atom("dyntrace_ct_rmq_" ++ os:getpid())),
    Top = string:trim(os:cmd("mktemp -d /tmp/dyntrace-rmq-suite.XXXXXX")),
    Build = filename:join(Top, "dyntrace"),
    Lib = code:lib_dir(dyntrace),
    "" = os:cmd(io_lib:format("chmod 755 ~s && mkdir -p ~s && cp -rL ~s/ebin ~s/priv ~s && "
                              "chmod -R a+rX ~s", [Top, Build, Lib, Lib, Build, Build])),
    [{top, Top}, {build, Build} | Config].

end_per_suite(Config) ->
    _ = os:cmd("rm -rf " ++ ?config(top, Config)),
    ok.

%% Debian's broker runs on Debian's OTP, and loads a build made by it
%% (under scripts/otp-newest.sh, another OTP made this build).
init_per_group(bench, Config) ->
    %% No busy waiting: a scheduler that spins while idle counts as CPU.
    init_per_group(rabbitmq, [{broker_args, "+sbwt none +sbwtdcpu none +sbwtdio none"}
                              | Config]);
init_per_group(rabbitmq, Config) ->
    Missing = [P || P <- [?RABBIT_BIN ++ "rabbitmq-server", ?PYTHON], not filelib:is_file(P)]
        ++ [pika || element(1, lttng_session:cmd(?PYTHON ++ " -c 'import pika'")) =/= 0],
    case {Missing, code:root_dir()} of
        {[], ?DEBIAN_OTP} ->
            start_broker(Config);
        {[], Root} ->
            {skip, "Debian's RabbitMQ runs on Debian's OTP (" ?DEBIAN_OTP "), this run's is "
                   ++ Root};
        _ ->
            {skip, io_lib:format("~p missing: scripts/setup.sh installs rabbitmq-server and "
                                 "python3-pika", [Missing])}
    end;
init_per_group(plain, Config) ->
    Config.

end_per_group(Broker, Config) when Broker =:= rabbitmq; Broker =:= bench ->
    stop_broker(Config);
end_per_group(plain, _Config) ->
    ok.

end_per_testcase(Case, Config) ->
    _ = [peer:stop(P) || {peer, P} <- [lists:keyfind(peer, 1, Config)]],
    lttng_session:destroy_left(Case).

%%%===================================================================
%%% The command's errors (no RabbitMQ)
%%%===================================================================

%% Each wrong setup: one line on stderr naming the cause, nothing on
%% stdout, exit status 1 (2 for a usage error), no session left.
t_errors(Config) ->
    Host = host(),
    {Node, Peer} = nobody_node(Config, t_errors),
    W = wrapper(Config),
    Unknown = "nosuch@" ++ Host,
    bad(W, ["--node", Unknown, "--trace", "procs"],
        1, ["no node nosuch on " ++ Host]),
    bad(W, ["--node", atom_to_list(Node), "--cookie", "wrong", "--trace", "procs"],
        1, [atom_to_list(Node) ++ " refused the connection: a wrong cookie"]),
    bad(W, ["--node", atom_to_list(Node)], 2, ["no plan"]),
    bad(W, ["--node", atom_to_list(Node), "--cookie", ?COOKIE, "--duration", "soon",
                 "--trace", "procs"], 2, ["--duration wants e.g. 15s, not soon"]),
    %% A build the node's user cannot read: nothing is loaded.
    Hidden = filename:join(?config(top, Config), "hidden"),
    "" = os:cmd(io_lib:format("mkdir -m 700 ~s && cp -r ~s ~s", [Hidden, ?config(build, Config),
                                                                Hidden])),
    Beam = filename:join([Hidden, "dyntrace", "ebin", "dyntrace.beam"]),
    bad(filename:join([Hidden, "dyntrace", "priv", "dyntrace"]),
        ["--node", atom_to_list(Node), "--trace", "procs"],
        1, [atom_to_list(Node) ++ " runs as nobody, who cannot read " ++ Beam]),
    ?assertEqual(false, rpc(Node, erlang, function_exported, [dyntrace, available, 0])),
    %% A plan the node refuses.
    ok = loaded(Config, Node),
    bad(W, ["--node", atom_to_list(Node), "--plan", "[{trace, all, [nonsense]}]"],
        1, ["refused dyntrace_record:events", "nonsense"]),
    no_session_left(),
    peer:stop(Peer).

%% Into a node of another user that lacks dyntrace, found by its
%% `-setcookie' (no --cookie): the command loads this build, records until
%% Ctrl-C (SIGINT to the command), and leaves nothing set.
t_load_and_interrupt(Config) ->
    {Node, Peer} = nobody_node(Config, t_load_and_interrupt),
    Port = command(wrapper(Config),
                   ["--node", atom_to_list(Node), "--duration", "5m",
                    "--plan", "[{trace, all, [messages, procs]}]"]),
    {os_pid, Wrapper} = erlang:port_info(Port, os_pid),
    wait_recording(Node),
    ?assert(rpc(Node, dyntrace, available, [])),
    %% A hidden node: in nobody's nodes().
    [Cli] = [C || C <- rpc(Node, erlang, nodes, [hidden]),
                  lists:prefix("dyntrace_record_", atom_to_list(C))],
    ?assertNot(lists:member(Cli, rpc(Node, erlang, nodes, []))),
    Interrupted = erlang:monotonic_time(millisecond),
    "" = os:cmd("kill -INT " ++ integer_to_list(Wrapper)),
    {0, Out, Err} = finish(Port),
    %% Well before the 5 minutes.
    ?assert(erlang:monotonic_time(millisecond) - Interrupted < 60000),
    ?assertEqual(<<>>, Err),
    Dir = last_line(Out),
    Names = process_names(Dir),
    ?assert(lists:member(<<"code_server">>, Names), Names),
    ?assertMatch(#{traces := [], recordings := []}, rpc(Node, dyntrace, status, [])),
    no_session_left(),
    peer:stop(Peer).

%% A build whose NIF libraries sit apart from its code: without `--nif'
%% the command says they are missing; with it, the node loads them from
%% there.
t_nif(Config) ->
    {Node, Peer} = nobody_node(Config, t_nif),
    N = atom_to_list(Node),
    Build = ?config(build, Config),
    Split = filename:join(?config(top, Config), "split"),
    Nifs = filename:join(?config(top, Config), "nifs"),
    "" = os:cmd(io_lib:format("mkdir -p ~s/priv ~s && cp -r ~s/ebin ~s && cp ~s/priv/dyntrace ~s/priv && "
                              "cp ~s/priv/*.so ~s && chmod -R a+rX ~s ~s",
                              [Split, Nifs, Build, Split, Build, Split, Build, Nifs, Split, Nifs])),
    Wrapper = filename:join([Split, "priv", "dyntrace"]),
    bad(Wrapper, ["--node", N, "--trace", "procs"],
        1, [Split ++ "/priv/libdyntrace_nif.so is missing", "--nif DIR"]),
    %% This build has no analyser: --findings says so after the directory.
    {1, Out, Err} = finish(command(Wrapper, ["--node", N, "--nif", Nifs, "--duration", "1s",
                                             "--trace", "procs", "--findings"])),
    _ = last_line(Out),
    ?assertEqual(<<"dyntrace record: --findings: no analyser at ", (list_to_binary(Split))/binary,
                   "/priv/dyntrace-analyze (build it: DYNTRACE_BUILD_ANALYZER=1 rebar3 compile)\n">>,
                 Err),
    ?assert(rpc(Node, dyntrace, available, [])),
    ?assertEqual({ok, Nifs}, rpc(Node, application, get_env, [dyntrace, nif_dir])),
    ?assertMatch(#{traces := [], recordings := []}, rpc(Node, dyntrace, status, [])),
    no_session_left(),
    peer:stop(Peer).

%% The command's VM killed while it records: the node's side ends on the
%% dropped connection, and the wrapper destroys the session.
t_killed(Config) ->
    {Node, Peer} = nobody_node(Config, t_killed),
    ok = loaded(Config, Node),
    Port = command(wrapper(Config),
                   ["--node", atom_to_list(Node), "--duration", "5m",
                    "--plan", "[{trace, all, [procs]}]"]),
    {os_pid, Wrapper} = erlang:port_info(Port, os_pid),
    wait_recording(Node),
    "" = os:cmd("pkill -KILL -P " ++ integer_to_list(Wrapper)),
    {Status, _Out, _Err} = finish(Port),
    ?assert(Status > 128, Status),
    lttng_session:wait_until(fun() -> recordings(Node) =:= [] end, 500),
    ?assertMatch(#{traces := [], recordings := []}, rpc(Node, dyntrace, status, [])),
    no_session_left(),
    peer:stop(Peer).

%% A plan that traces every process's messages and scheduling, on a node
%% busy passing messages: before the session starts, the command prints
%% the node's estimate of what it costs there and what triage would, on
%% stderr (the terminal), and stdout still holds only the directory.
t_cost(Config) ->
    {Node, Peer} = nobody_node(Config, t_cost),
    ok = loaded(Config, Node),
    Busy = ping_pong(Node),
    {0, Out, Err} = finish(command(wrapper(Config),
                                   ["--node", atom_to_list(Node), "--duration", "1s",
                                    "--plan", "[{trace, all, [messages, scheduling]}]"])),
    exit(Busy, kill),
    _ = last_line(Out),
    ?assertEqual(1, length(binary:split(Out, <<"\n">>, [global, trim_all])), Out),
    [Line] = [L || L <- binary:split(Err, <<"\n">>, [global, trim_all]),
                   binary:match(L, <<"dyntrace: tracing ">>) =/= nomatch],
    ?assertMatch({match, _}, re:run(Line, "^dyntrace: tracing [a-z_, ]+ of all [0-9]+ processes: about "
                                    "\\+[0-9]+% CPU here .*; triage: about \\+[0-9]+%$"),
                 Line),
    ?assertMatch(#{traces := [], recordings := []}, rpc(Node, dyntrace, status, [])),
    no_session_left(),
    peer:stop(Peer).

%% Two processes of `Node' sending each other a message back and forth
%% as fast as they can (code the node evaluates: it lacks this suite's).
ping_pong(Node) ->
    {ok, Tokens, _} =
        erl_scan:string("spawn(fun() -> "
                        "  Echo = spawn_link(fun E() -> receive {F, M} -> F ! M, E() end end), "
                        "  (fun L() -> Echo ! {self(), x}, receive x -> L() end end)() "
                        "end)."),
    {ok, Exprs} = erl_parse:parse_exprs(Tokens),
    {value, Pid, _} = rpc(Node, erl_eval, exprs, [Exprs, []]),
    Pid.

%%%===================================================================
%%% RabbitMQ
%%%===================================================================

t_rabbitmq(Config) ->
    Node = ?config(rabbit, Config),
    Build = ?config(build, Config),
    %% As docs/recording.md says.
    Ebin = filename:join(Build, "ebin"),
    ?assertEqual("true\n", rabbitmqctl(Config, ["eval", "code:add_patha(\"" ++ Ebin ++ "\"), "
                                                "c:l(dyntrace), dyntrace:available()."])),
    %% record/2 inside the broker: its user's lttng reaches no daemon (only
    %% root's runs), and the answer says what to do instead.
    {error, {lttng, Text}} = rpc(Node, dyntrace, record, [[{trace, all, [procs]}], #{}]),
    [?assertNotEqual(nomatch, string:find(Text, T), {T, Text})
     || T <- ["No session daemon is available", "this node runs as rabbitmq",
              "priv/dyntrace record --node " ++ atom_to_list(Node)]],
    Load = open_port({spawn_executable, ?PYTHON},
                     [{args, [filename:join(?config(data_dir, Config), "pika_load.py"),
                              ?AMQP_PORT, "14"]}, exit_status, binary]),
    %% The queue and both connections exist before the recording starts.
    lttng_session:wait_until(fun() -> queues(Node) =/= [] end, 500),
    {Plan, Findings} = plan(),
    Triage = Plan =:= ["triage"],
    Port = command(wrapper(Config), ["--node", atom_to_list(Node), "--duration", "5s"]
                   ++ ["--findings" || Findings] ++ Plan),
    {Status, Out, Err} = finish(Port),
    ct:log("exit ~b~nstdout:~n~s~nstderr:~n~s", [Status, Out, Err]),
    ?assertEqual({0, <<>>}, {Status, Err}),
    Dir = last_line(Out),
    %% Every message published was consumed.
    {0, Counts} = collect(Load, []),
    {#{<<"published">> := Published, <<"consumed">> := Consumed}, _} = json_text:value(Counts),
    ct:log("published ~b, consumed ~b", [Published, Consumed]),
    ?assert(Published > 0),
    ?assertEqual(Published, Consumed),
    %% RabbitMQ's processes by name: registered ones, and the queue and
    %% the channels by their initial calls (RabbitMQ 3.10's classic queue
    %% starts as rabbit_prequeue).
    Names = process_names(Dir),
    [?assert(lists:member(N, Names), {N, Names})
     || N <- [<<"rabbit_event">>, <<"rabbit_prequeue:init/1">>, <<"rabbit_channel:init/1">>]],
    %% genserver runs, loses nothing, and names every server it shows (with
    %% every message traced, it shows some; triage traces a few processes
    %% in short windows, and 5 s may hold no call).
    #{<<"discarded">> := 0, <<"genserver">> := Servers} =
        analyze_cmd:json(analyze_cmd:exe(), ["genserver", "--json", Dir]),
    ?assert(Triage orelse Servers =/= []),
    [?assertNotEqual(<<>>, maps:get(<<"name">>, S, <<>>), S) || S <- Servers],
    %% The node still serves, and nothing is left.
    _ = rabbitmqctl(Config, ["status"]),
    ?assertMatch(#{traces := [], recordings := []}, rpc(Node, dyntrace, status, [])),
    no_session_left().

%% Issue 41's measure: the broker's CPU per message published (its OS
%% process's utime + stime from /proc/PID/stat, over the publishing), with
%% a pika publisher and consumer, untraced, under `triage' and under full
%% tracing, both recorded with the outside command, in rotating rounds
%% side by side in one run. Each round runs the broker untraced twice
%% (`untraced' and `again'), so that each round gives its own ratios
%% against the mean of its two untraced runs, and the two untraced runs'
%% ratio shows what the machine alone varies. Writes the table to
%% $DYNTRACE_BENCH_DIR/rabbitmq.md (make bench-rabbitmq). No assertion on
%% the figures: every message published must be consumed.
bench_broker_cpu(Config) ->
    ct:timetrap({minutes, 45}),
    Start = start_line(),
    Node = ?config(rabbit, Config),
    Ebin = filename:join(?config(build, Config), "ebin"),
    "true\n" = rabbitmqctl(Config, ["eval", "code:add_patha(\"" ++ Ebin ++ "\"), "
                                    "c:l(dyntrace), dyntrace:available()."]),
    OsPid = rpc(Node, os, getpid, []),
    Seconds = list_to_integer(os:getenv("DYNTRACE_BENCH_SECONDS", "10")),
    Rounds = list_to_integer(os:getenv("DYNTRACE_BENCH_ROUNDS", "9")),
    Modes = [untraced, triage, again, full],
    %% A warm-up: the queue exists, the broker's code is loaded and its
    %% processes' heaps have grown to what the load needs.
    _ = publish(Config, 20, rate()),
    Runs = [[{Mode, broker_run(Config, Node, OsPid, Mode, Seconds)}
             || Mode <- lists:nthtail(Round rem 4, Modes) ++ lists:sublist(Modes, Round rem 4)]
            || Round <- lists:seq(0, Rounds - 1)],
    ct:log("runs ~p", [Runs]),
    Table = broker_table(Start, Runs, Seconds),
    ct:pal("~s", [Table]),
    Out = filename:join(os:getenv("DYNTRACE_BENCH_DIR", "/tmp"), "rabbitmq.md"),
    ok = filelib:ensure_dir(Out),
    ok = file:write_file(Out, Table),
    _ = rabbitmqctl(Config, ["status"]),
    ?assertMatch(#{traces := [], recordings := []}, rpc(Node, dyntrace, status, [])),
    no_session_left().

%% One run: `{Published, CpuMicroseconds}' over the publishing.
broker_run(Config, Node, OsPid, Mode, Seconds) ->
    Plan = case Mode of
               untraced -> none;
               again -> none;
               triage -> ["triage"];
               %% Another plan in its place, to find what costs:
               %% DYNTRACE_BENCH_FULL='[{trace, all, [procs]}]'.
               full -> ["--plan", full_plan()]
           end,
    Command = case Plan of
                  none -> none;
                  _ -> Port = command(wrapper(Config), ["--node", atom_to_list(Node),
                                                        "--duration", "10m" | Plan]),
                       wait_recording(Node),
                       Port
              end,
    Before = cpu_ticks(OsPid),
    #{<<"published">> := Published, <<"consumed">> := Consumed} = publish(Config, Seconds, rate()),
    Ticks = cpu_ticks(OsPid) - Before,
    ?assertEqual(Published, Consumed),
    case Command of
        none ->
            ok;
        _ ->
            %% SIGTERM, not SIGINT: a shell that started this run in
            %% the background had it ignore SIGINT, and the wrapper
            %% could not trap it (the recording then ran its 10 minutes).
            {os_pid, Wrapper} = erlang:port_info(Command, os_pid),
            "" = os:cmd("kill -TERM " ++ integer_to_list(Wrapper)),
            {0, Out, _} = finish(Command),
            Dir = last_line(Out),
            ct:log("~s: ~s", [Mode, lttng_session:cmd_ok(["du -sh ", Dir])]),
            "" = os:cmd("rm -rf " ++ Dir)
    end,
    {Published, Ticks * 1000000 div clock_ticks()}.

%% The publishing rate: the same work every run, below what the broker
%% can take on a loaded 2-core machine (at the most it can take, the rate
%% and with it the CPU per message follows whatever else runs).
rate() ->
    os:getenv("DYNTRACE_BENCH_RATE", "1000").

full_plan() ->
    os:getenv("DYNTRACE_BENCH_FULL", "[{trace, all, [messages, scheduling, procs, gc]}]").

%% The pika publisher and consumer for `Seconds' at `Rate' messages a
%% second at most: their counts.
publish(Config, Seconds, Rate) ->
    Load = open_port({spawn_executable, ?PYTHON},
                     [{args, [filename:join(?config(data_dir, Config), "pika_load.py"),
                              ?AMQP_PORT, integer_to_list(Seconds), Rate]},
                      exit_status, binary]),
    {0, Counts} = collect(Load, []),
    {Map, _} = json_text:value(Counts),
    Map.

cpu_ticks(OsPid) ->
    {ok, Stat} = file:read_file("/proc/" ++ OsPid ++ "/stat"),
    %% The fields after the command's closing parenthesis: utime and
    %% stime are the 14th and 15th of the whole line.
    [_, Rest] = string:split(Stat, ") ", trailing),
    Fields = string:lexemes(Rest, " "),
    binary_to_integer(lists:nth(12, Fields)) + binary_to_integer(lists:nth(13, Fields)).

clock_ticks() ->
    list_to_integer(string:trim(os:cmd("getconf CLK_TCK"))).

%% The date and load when the run starts, for its table.
start_line() ->
    {{Y, Mo, D}, {H, Mi, _}} = calendar:universal_time(),
    Load = string:trim(os:cmd("cut -d' ' -f1-3 /proc/loadavg")),
    io_lib:format("Run ~4..0b-~2..0b-~2..0b ~2..0b:~2..0b UTC, `nproc` = ~s, load average at "
                  "the start ~s", [Y, Mo, D, H, Mi, string:trim(os:cmd("nproc")), Load]).

%% Per mode: the median of its runs' CPU per message [min-max]; per
%% round, each mode against the mean of the round's two untraced runs,
%% and the median of those ratios with its interval (bench_stats).
broker_table(Start, Rounds, Seconds) ->
    Runs = lists:append(Rounds),
    PerMessage = fun(Mode) -> lists:sort([Us / max(P, 1) || {M, {P, Us}} <- Runs, M =:= Mode]) end,
    Median = fun bench_stats:median/1,
    Ratios = fun(Mode) ->
                     [begin
                          Per = maps:from_list([{M, Us / max(P, 1)} || {M, {P, Us}} <- Round]),
                          #{untraced := U, again := A} = Per,
                          case Mode of
                              again -> A / U;
                              _ -> maps:get(Mode, Per) / ((U + A) / 2)
                          end
                      end || Round <- Rounds]
             end,
    Rows = [begin
                L = PerMessage(Mode),
                Published = [P || {M, {P, _}} <- Runs, M =:= Mode],
                io_lib:format("| ~s | ~b | ~.1f us [~.1f-~.1f] | ~s |~n",
                              [Label, Median(lists:sort(Published)) div Seconds, Median(L),
                               hd(L), lists:last(L),
                               case Mode of
                                   untraced -> "1.00x";
                                   _ -> bench_stats:interval_text(Ratios(Mode))
                               end])
            end || {Mode, Label} <- [{untraced, "untraced"},
                                     {again, "untraced again (against the first)"},
                                     {triage, "`triage` (`priv/dyntrace record ... triage`)"},
                                     {full, "full: `--plan '" ++ full_plan() ++ "'`"}]],
    Each = [io_lib:format("~.2fx/~.2fx/~.2fx", [T, F, A])
            || {T, F, A} <- lists:zip3(Ratios(triage), Ratios(full), Ratios(again))],
    Load = string:trim(os:cmd("cut -d' ' -f1-3 /proc/loadavg")),
    {M, _, _, _} = bench_stats:interval(Ratios(triage)),
    lists:flatten(
      [Start, ", at the end ", Load, ". ",
       "Debian's RabbitMQ (", rabbit_version(), ") on OTP ", erlang:system_info(otp_release),
       " as the user `rabbitmq`, schedulers without busy waiting (`+sbwt none`); a pika publisher "
       "(with confirms, at most ", rate(), " messages/s) and consumer on one queue, after 20 s "
       "of warm-up, ", integer_to_list(Seconds), " s per run, ",
       integer_to_list(length(Rounds)), " rounds of the four (untraced, triage, untraced again, "
       "full) in rotating order. CPU: the broker's OS "
       "process, utime + stime from /proc/PID/stat, over the publishing, per message published. "
       "Triage and full are recorded by the outside command, as root. CPU per message: the "
       "median of the runs [min-max]. Against untraced: per round, the run against the mean of "
       "the round's two untraced runs (untraced again: against the round's first), the median "
       "of the rounds' ratios and its distribution-free interval (test/bench_stats.erl).\n\n",
       "| run | messages/s | broker CPU per message | vs. untraced, per round |\n",
       "|---|---:|---:|---:|\n", Rows,
       "\nEach round's triage/full/untraced again: ", lists:join(", ", Each), ".\n",
       io_lib:format("\nTarget: triage at most 1.10x untraced CPU per message: ~s.\n",
                     [case M =< 1.10 of
                          true -> "yes";
                          false -> "no"
                      end])]).

rabbit_version() ->
    case lttng_session:cmd("dpkg-query -W -f '${Version}' rabbitmq-server") of
        {0, V} -> V;
        _ -> "?"
    end.

%% `triage' once record(triage, _) exists (its own branch), else an
%% explicit plan; `--findings' once the analyser has it.
plan() ->
    Triage = try dyntrace_record:events(triage) of
                 _ -> true
             catch
                 error:_ -> false
             end,
    {Status, _} = lttng_session:cmd(analyze_cmd:exe() ++ " help findings"),
    {case Triage of
         true -> ["triage"];
         false -> ["--plan", "[{trace, all, [messages, procs]}, memory]"]
     end, Status =:= 0}.

queues(Node) ->
    [P || P <- rpc(Node, erlang, processes, []),
          {M, _, _} <- [rpc(Node, proc_lib, translate_initial_call, [P])],
          M =:= rabbit_prequeue orelse M =:= rabbit_amqqueue_process].

%%%===================================================================
%%% The broker
%%%===================================================================

start_broker(Config) ->
    Top = ?config(top, Config),
    Base = filename:join(Top, "broker"),
    Node = list_to_atom("dyntrace_rmq@" ++ host()),
    "" = os:cmd(io_lib:format("mkdir -m 700 ~s && echo '[].' > ~s/enabled_plugins && "
                              "chown -R rabbitmq:rabbitmq ~s", [Base, Base, Base])),
    Env = [{"HOME", Base},
           {"LTTNG_HOME", Base},
           {"RABBITMQ_NODENAME", atom_to_list(Node)},
           {"RABBITMQ_BASE", Base},
           {"RABBITMQ_MNESIA_BASE", Base ++ "/mnesia"},
           {"RABBITMQ_LOG_BASE", Base ++ "/log"},
           {"RABBITMQ_CONFIG_FILE", Base ++ "/rabbitmq"},
           {"RABBITMQ_ADVANCED_CONFIG_FILE", Base ++ "/advanced.config"},
           {"RABBITMQ_CONF_ENV_FILE", Base ++ "/rabbitmq-env.conf"},
           {"RABBITMQ_ENABLED_PLUGINS_FILE", Base ++ "/enabled_plugins"},
           {"RABBITMQ_PID_FILE", Base ++ "/pid"},
           {"RABBITMQ_NODE_PORT", ?AMQP_PORT},
           {"RABBITMQ_DIST_PORT", ?DIST_PORT}]
        ++ [{"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", Args} || {broker_args, Args} <- Config],
    Config1 = [{rabbit, Node}, {rabbit_base, Base}, {rabbit_env, Env} | Config],
    _ = open_port({spawn_executable, "/bin/sh"},
                  [{args, ["-c", "cd \"$1\" && exec runuser -u rabbitmq -- env " ++ env(Env)
                           ++ " " ++ ?RABBIT_BIN ++ "rabbitmq-server >startup.log 2>&1",
                           "sh", Base]}]),
    _ = rabbitmqctl(Config1, ["wait", Base ++ "/pid", "--timeout", "180"]),
    {ok, Cookie} = file:read_file(filename:join(Base, ".erlang.cookie")),
    true = erlang:set_cookie(Node, binary_to_atom(string:trim(Cookie))),
    Config1.

stop_broker(Config) ->
    _ = rabbitmqctl(Config, ["stop"]),
    ok.

%% `rabbitmqctl Args' as the broker's user: its output (it must succeed).
rabbitmqctl(Config, Args) ->
    Base = ?config(rabbit_base, Config),
    Quoted = [[$', A, $', $\s] || A <- Args],
    lttng_session:cmd_ok(["cd ", Base, " && runuser -u rabbitmq -- env ",
                          env(?config(rabbit_env, Config)), " ", ?RABBIT_BIN, "rabbitmqctl -q -n ",
                          atom_to_list(?config(rabbit, Config)), " ", Quoted]).

env(Env) ->
    lists:flatten(lists:join(" ", [K ++ "='" ++ V ++ "'" || {K, V} <- Env])).

%%%===================================================================
%%% Helpers
%%%===================================================================

host() ->
    [_, Host] = string:split(atom_to_list(node()), "@"),
    Host.

%% A node of the OS user `nobody', without dyntrace on its code path, its
%% cookie on its command line.
nobody_node(_Config, Case) ->
    Name = peer:random_name(Case),
    Node = list_to_atom(Name ++ "@" ++ host()),
    true = erlang:set_cookie(Node, list_to_atom(?COOKIE)),
    Erl = os:find_executable("erl"),
    {ok, Peer, Node} = peer:start(#{name => Name, connection => standard_io,
                                    exec => {"/bin/sh",
                                             ["-c", "cd /tmp && exec runuser -u nobody -- env "
                                              "HOME=/tmp " ++ Erl ++ " \"$@\"", "sh"]},
                                    args => ["-setcookie", ?COOKIE]}),
    pong = net_adm:ping(Node),
    "nobody" = string:trim(rpc(Node, os, cmd, ["id -un"])),
    {Node, Peer}.

%% dyntrace loaded into `Node' as docs/recording.md says.
loaded(Config, Node) ->
    true = rpc(Node, code, add_patha, [filename:join(?config(build, Config), "ebin")]),
    {module, dyntrace} = rpc(Node, c, l, [dyntrace]),
    true = rpc(Node, dyntrace, available, []),
    ok.

rpc(Node, M, F, A) ->
    erpc:call(Node, M, F, A, 60000).

recordings(Node) ->
    maps:get(recordings, rpc(Node, dyntrace, status, [])).

%% Until the command's recording runs in `Node' (without loading any
%% dyntrace module into it: the command does).
wait_recording(Node) ->
    lttng_session:wait_until(fun() ->
                                     rpc(Node, erlang, function_exported,
                                         [dyntrace_record, record, 2])
                                         andalso recordings(Node) =/= []
                             end, 600).

wrapper(Config) ->
    filename:join([?config(build, Config), "priv", "dyntrace"]).

%% `Wrapper record --dir DIR Args' (DIR a new one), stderr apart.
command(Wrapper, Args) ->
    Err = filename:join(os:getenv("DYNTRACE_TRACE_DIR", "/tmp"),
                        "cli_stderr_" ++ integer_to_list(erlang:unique_integer([positive]))),
    ok = filelib:ensure_dir(Err),
    Dir = filename:join(os:getenv("DYNTRACE_TRACE_DIR", "/tmp"),
                        "cli_trace_" ++ integer_to_list(erlang:unique_integer([positive]))),
    ct:log("~s record ~p", [Wrapper, Args]),
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", "exec \"$0\" \"$@\" 2>" ++ Err, Wrapper, "record",
                              "--dir", Dir | Args]}, exit_status, binary]),
    put({stderr, Port}, Err),
    Port.

finish(Port) ->
    {Status, Out} = collect(Port, []),
    Err = get({stderr, Port}),
    {ok, Stderr} = file:read_file(Err),
    ok = file:delete(Err),
    ct:log("exit ~b~nstdout:~n~s~nstderr:~n~s", [Status, Out, Stderr]),
    {Status, Out, Stderr}.

collect(Port, Acc) ->
    receive
        {Port, {data, Data}} -> collect(Port, [Data | Acc]);
        {Port, {exit_status, Status}} -> {Status, iolist_to_binary(lists:reverse(Acc))}
    end.

%% A wrong setup: exactly one line on stderr naming each of `Mentions'
%% (a usage error adds the usage line), nothing on stdout.
bad(Wrapper, Args, Status, Mentions) ->
    {Got, Out, Err} = finish(command(Wrapper, Args)),
    ?assertEqual({Status, <<>>}, {Got, Out}),
    [Line | Usage] = binary:split(Err, <<"\n">>, [global, trim_all]),
    ?assertEqual(Status =:= 2, Usage =/= [], Err),
    [?assertNotEqual(nomatch, string:find(Line, M), {M, Line}) || M <- Mentions],
    ok.

last_line(Out) ->
    Lines = binary:split(Out, <<"\n">>, [global, trim_all]),
    Dir = binary_to_list(lists:last(Lines)),
    ?assert(filelib:is_dir(Dir), Dir),
    Dir.

%% The names the trace's process_name events give.
process_names(Dir) ->
    Out = lttng_session:cmd_ok(["babeltrace2 ", Dir, " | grep ':process_name:'"]),
    [iolist_to_binary(N) || L <- string:lexemes(Out, "\n"),
                            {match, [N]} <- [re:run(L, "name = \"([^\"]*)\"",
                                                    [{capture, all_but_first, list}])]].

no_session_left() ->
    {_, Out} = lttng_session:cmd("lttng list"),
    ?assertNotEqual(nomatch, string:find(Out, "no available recording session"), Out).
