%%% @doc Test helper: what the runtime shows traced, as a user would check
%%% it. Before OTP 27 that is `erlang:trace_info/2'; on OTP 27+ it is
%%% `trace:info/3' over every session that has the process, port or
%%% function (dyntrace's, dbg's, any other tool's), with the runtime's
%%% default session (`erlang:trace/3', `erlang:trace_pattern/3') asked
%%% through `erlang:trace_info/2'.
-module(dyntrace_test_trace).

-export([flags/1, traced/1, trace_info/2, sessions_available/0, untrace/1, raised/1]).

%% @doc The trace flags of a process or port (or of `new_processes',
%% `new_ports'), in every session that has some.
-spec flags(pid() | port() | atom()) -> [atom()].
flags(Tracee) ->
    lists:usort(lists:append([F || {flags, F} <- trace_info(Tracee, flags)])).

%% @doc How a function is traced: `local' or `global', `false' when in no
%% session (`undefined' when there is no such function).
-spec traced(mfa()) -> false | local | global | undefined.
traced(MFA) ->
    case lists:usort([T || {traced, T} <- trace_info(MFA, traced), T =/= false]) of
        [] -> false;
        [How] -> How
    end.

%% @doc What `erlang:trace_info/2' answers for `Item' and `What', once per
%% session that has `Item' and once for the default session; `undefined'
%% entries for an item that does not exist.
-spec trace_info(pid() | port() | atom() | mfa(), atom()) -> [term()].
trace_info(Item, What) ->
    case sessions_available() of
        false ->
            [erlang:trace_info(Item, What)];
        true ->
            Sessions = case trace:session_info(Item) of
                           undefined -> [];
                           List -> List
                       end,
            %% The default session is listed as `{legacy, default}', which
            %% trace:info/3 refuses: erlang:trace_info/2 answers for it.
            [erlang:trace_info(Item, What)
             | [trace:info(S, Item, What) || S <- Sessions, S =/= {legacy, default}]]
    end.

%% @doc Whether this runtime has trace sessions (OTP 27+).
-spec sessions_available() -> boolean().
sessions_available() ->
    code:ensure_loaded(trace) =:= {module, trace}
        andalso erlang:function_exported(trace, session_create, 3).

%% @doc Turns off every process's and port's trace flags and the local
%% trace patterns on `Module''s functions: what a case that traced by
%% hand leaves for the next.
-spec untrace(module()) -> ok.
untrace(Module) ->
    _ = erlang:trace(all, false, [all]),
    _ = erlang:trace_pattern({Module, '_', '_'}, false, [local]),
    ok.

%% @doc What calling `Fun' did: `{returned, Value}', or the reason of the
%% error it raised (`badarg' for most bad input).
-spec raised(fun(() -> term())) -> {returned, term()} | term().
raised(Fun) ->
    try Fun() of
        Value -> {returned, Value}
    catch
        error:Reason -> Reason
    end.
