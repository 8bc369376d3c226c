%%% @doc The checkout hunt of the README and docs/profile.md, recorded
%%% for real: the service of examples/checkout_demo.erl under the same
%%% load, traced (messages, scheduling, registrations, the module's calls
%%% with their returns) into `Dir/hunt', sampled (`{sample, [checkout],
%%% ...}': the `checkout' server every millisecond) into
%%% `Dir/hunt-sampled', and recorded with `triage' (where the README's hunt
%%% starts) into `Dir/hunt-triage', each by one dyntrace:record/2 call.
%%% scripts/profile-hunt.sh runs it with a session daemon of its own and
%%% prints what dyntrace-analyze makes of the traces.
-module(profile_hunt).

-export([main/1]).

-define(CLIENTS, 20).
-define(CHECKOUTS, 50).

%% @doc `main([Dir])': records both traces under `Dir' with
%% dyntrace:record/2, as an operator would in the node's shell; prints the
%% checkout server's pid of each.
-spec main([string()]) -> no_return().
main([Dir]) ->
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    %% Traced from before the servers start, so that they register in it.
    record(filename:join(Dir, "hunt"),
           [{trace, new_processes, [messages, scheduling, procs]},
            {calls, {checkout_demo, '_', '_'}, #{scope => local, return => true}}]),
    [ok = gen_server:stop(S) || S <- [checkout, inventory]],
    ok = checkout_demo:start(),
    record(filename:join(Dir, "hunt-sampled"),
           [{sample, [checkout], #{interval => 1}}]),
    record(filename:join(Dir, "hunt-triage"), triage),
    halt(0).

%% Records the load into `Dir': one record/2 call for `What', the servers
%% started if they are not, the load, then dyntrace:stop/1, which undoes
%% what the recording set and answers the trace's directory.
record(Dir, What) ->
    {ok, Handle} = dyntrace:record(What, #{wait => false, duration => 600000, dir => Dir}),
    whereis(checkout) =:= undefined andalso checkout_demo:start(),
    ok = checkout_demo:load(?CLIENTS, ?CHECKOUTS),
    io:format("~s: checkout is ~p~n", [Dir, whereis(checkout)]),
    {ok, _} = dyntrace:stop(Handle),
    ok.
