%%% @doc The checkout hunt of docs/profile.md, recorded for real: the
%%% service of examples/checkout_demo.erl under the same load, traced
%%% (messages, scheduling, registrations, the module's calls with their
%%% returns) into `Dir/hunt', then sampled with dyntrace:sample/2 (the
%%% `checkout' server every millisecond) into `Dir/hunt-sampled'.
%%% scripts/profile-hunt.sh runs it with a session daemon of its own and
%%% prints what dyntrace-analyze makes of both traces.
-module(profile_hunt).

-export([main/1]).

-define(CLIENTS, 20).
-define(CHECKOUTS, 50).

%% @doc `main([Dir])': records both traces under `Dir'; prints the
%% checkout server's pid of each.
-spec main([string()]) -> no_return().
main([Dir]) ->
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    ok = lttng_session:wait_registered(),
    record(filename:join(Dir, "hunt"),
           fun() ->
                   {ok, _} = dyntrace:trace(new_processes, [messages, scheduling, procs], #{}),
                   {ok, _} = dyntrace:calls({checkout_demo, '_', '_'},
                                            #{scope => local, return => true}),
                   ok = checkout_demo:start()
           end),
    [ok = gen_server:stop(S) || S <- [checkout, inventory]],
    record(filename:join(Dir, "hunt-sampled"),
           fun() ->
                   ok = checkout_demo:start(),
                   {ok, _} = dyntrace:sample([checkout], #{interval => 1})
           end),
    halt(0).

%% Records the load into `Dir' with `Setup' run first (after the session
%% started), and everything dyntrace set cleared after.
record(Dir, Setup) ->
    Name = filename:basename(Dir) ++ "_" ++ os:getpid(),
    sh(["lttng create ", Name, " --output=", Dir]),
    sh(["lttng enable-event -u -s ", Name, " 'org_erlang_dyntrace:*'"]),
    sh(["lttng start ", Name]),
    ok = lttng_session:wait_enabled([function_call, message_send, stack_sample]),
    Setup(),
    ok = checkout_demo:load(?CLIENTS, ?CHECKOUTS),
    io:format("~s: checkout is ~p~n", [Dir, whereis(checkout)]),
    ok = dyntrace:clear(),
    sh(["lttng stop ", Name]),
    sh(["lttng destroy ", Name]).

sh(Cmd) ->
    _ = lttng_session:cmd_ok(Cmd),
    ok.
