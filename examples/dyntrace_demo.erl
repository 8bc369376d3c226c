%%% @doc A short traced workload: what `scripts/demo.sh' runs.
%%%
%%% It plays the operator's story on this node: load `dyntrace', create an
%%% LTTng session and enable events in it (the `lttng' commands are printed
%%% as they run), attach the tracer, start recording, run a small bank
%%% (a registered account server, linked clients, a crash, a port, garbage
%%% collections), stop, print what `babeltrace2' reads from the trace, then
%%% what `dyntrace-analyze' makes of it (slow calls, message latency, GC
%%% pauses).
-module(dyntrace_demo).

-export([main/0, account/1, deposit/2, withdraw/2]).

-define(SESSION, "dyntrace-demo").
-define(EVENTS, [process_spawn, process_link, process_exit, process_register,
                 process_scheduled, message_send, message_receive,
                 function_call, function_return, function_exception,
                 port_open, port_exit,
                 gc_minor_start, gc_minor_end, gc_major_start, gc_major_end]).

%% @doc Runs the demo and halts the node (status 0 when events were read).
-spec main() -> no_return().
main() ->
    Dir = "/tmp/" ++ ?SESSION,
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    io:format("1> l(dyntrace).~n{module,dyntrace}~n~n"),
    wait(fun registered_with_daemon/0, "this node to register with the LTTng session daemon"),
    _ = os:cmd("lttng destroy " ++ ?SESSION ++ " 2>/dev/null; rm -rf " ++ Dir),
    sh("lttng create " ++ ?SESSION ++ " --output=" ++ Dir),
    sh("lttng enable-event -u " ++ lists:join(",", [event(E) || E <- ?EVENTS])),
    Bank = spawn(fun() -> bank() end),
    io:format("2> erlang:trace(Bank, true, [procs, running, send, 'receive', call, "
              "garbage_collection, set_on_spawn, {tracer, dyntrace, []}]).~n"
              "3> erlang:trace(new_ports, true, [ports, {tracer, dyntrace, []}]).~n"
              "4> erlang:trace_pattern({dyntrace_demo, '_', '_'}, "
              "[{'_', [], [{exception_trace}]}], [global]).~n~n"),
    erlang:trace(Bank, true, [procs, running, send, 'receive', call, garbage_collection,
                              set_on_spawn, {tracer, dyntrace, []}]),
    erlang:trace(new_ports, true, [ports, {tracer, dyntrace, []}]),
    erlang:trace_pattern({?MODULE, '_', '_'}, [{'_', [], [{exception_trace}]}], [global]),
    sh("lttng start " ++ ?SESSION),
    wait(fun() -> ?EVENTS -- dyntrace:enabled_events() =:= [] end,
         "the events to be enabled in this node"),
    Ref = erlang:monitor(process, Bank),
    Bank ! {run, self()},
    receive {'DOWN', Ref, process, Bank, _} -> ok after 10000 -> error(demo_timeout) end,
    sh("lttng stop " ++ ?SESSION),
    Lines = string:split(os:cmd("babeltrace2 " ++ Dir), "\n", all),
    Events = [L || L <- Lines, string:find(L, "org_erlang_dyntrace:") =/= nomatch],
    io:format("~n$ babeltrace2 ~s~n", [Dir]),
    [io:format("~s~n", [L]) || L <- Events],
    io:format("~n~b events; per event:~n", [length(Events)]),
    [io:format("  ~-20s ~b~n", [E, count(E, Events)]) || E <- ?EVENTS],
    io:format("~nWhat the analyser makes of the trace:~n"),
    Analyze = filename:join(code:priv_dir(dyntrace), "dyntrace-analyze"),
    [sh(Analyze ++ " " ++ Args ++ " " ++ Dir)
     || Args <- ["calls --slower-than 1ms", "latency", "gc"]],
    sh("lttng destroy " ++ ?SESSION),
    halt(case Events of [] -> 1; _ -> 0 end).

%% The workload: a registered account, two linked clients, an overdraft
%% that raises, a port, and enough allocation for garbage collections.
bank() ->
    receive {run, _From} -> ok end,
    Account = spawn_link(?MODULE, account, [100]),
    ?MODULE:deposit(Account, 5),
    register(account, Account),
    Bank = self(),
    Clients = [spawn_link(fun() -> client(Bank, N) end) || N <- [1, 2]],
    [receive {done, C} -> ok end || C <- Clients],
    try ?MODULE:withdraw(Account, 1000) catch error:overdraft -> ok end,
    Port = open_port({spawn, "echo hello"}, [exit_status]),
    receive {Port, {exit_status, 0}} -> ok end,
    _ = lists:foldl(fun(I, Acc) -> [{I, I * I} | Acc] end, [], lists:seq(1, 20000)),
    erlang:garbage_collect(),
    unregister(account),
    unlink(Account),
    exit(Account, closed),
    ok.

client(Bank, N) ->
    ?MODULE:deposit(whereis(account), N * 10),
    Bank ! {done, self()}.

%% @doc The account server: a balance, deposits and withdrawals.
-spec account(integer()) -> no_return().
account(Balance) ->
    receive
        {deposit, From, Amount} ->
            From ! {balance, Balance + Amount},
            ?MODULE:account(Balance + Amount);
        {withdraw, From, Amount} when Amount =< Balance ->
            From ! {balance, Balance - Amount},
            account(Balance - Amount);
        {withdraw, From, _} ->
            From ! overdraft,
            account(Balance)
    end.

%% @doc Deposits `Amount'; the new balance.
-spec deposit(pid(), integer()) -> integer().
deposit(Account, Amount) ->
    Account ! {deposit, self(), Amount},
    receive {balance, B} -> B end.

%% @doc Withdraws `Amount'; the new balance, or `error(overdraft)'.
-spec withdraw(pid(), integer()) -> integer().
withdraw(Account, Amount) ->
    Account ! {withdraw, self(), Amount},
    receive
        {balance, B} -> B;
        overdraft -> error(overdraft)
    end.

event(E) -> "org_erlang_dyntrace:" ++ atom_to_list(E).

count(E, Lines) ->
    Pattern = event(E) ++ ":",
    length([L || L <- Lines, string:find(L, Pattern) =/= nomatch]).

sh(Cmd) ->
    io:format("$ ~s~n~s", [Cmd, os:cmd(Cmd ++ " 2>&1")]).

registered_with_daemon() ->
    string:find(os:cmd("lttng list -u"), "PID: " ++ os:getpid() ++ " ") =/= nomatch.

wait(Fun, What) ->
    wait(Fun, What, 100).

wait(_Fun, What, 0) ->
    io:format("timed out waiting for ~s~n", [What]),
    halt(1);
wait(Fun, What, N) ->
    case Fun() of
        true -> ok;
        false -> timer:sleep(100), wait(Fun, What, N - 1)
    end.
