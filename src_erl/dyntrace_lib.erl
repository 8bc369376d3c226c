%%% @doc Helpers the other dyntrace modules share: the bottom of the
%%% module graph, calling no other dyntrace module.
-module(dyntrace_lib).

-export([is_proper_list/1, process_name/1, process_name/2]).

%% @doc Whether `List' is a proper list (strict checks call this before
%% walking a list a user passed).
-spec is_proper_list(term()) -> boolean().
is_proper_list(List) when is_list(List) ->
    try length(List) of
        _ -> true
    catch
        error:badarg -> false
    end;
is_proper_list(_) ->
    false.

%% @doc A process's name as `process_name' and `process_memory' write it:
%% its registered name, else its initial call; `[]' when it has ended.
-spec process_name(pid()) -> dyntrace:process_name() | [].
process_name(P) ->
    case erlang:process_info(P, registered_name) of
        {registered_name, Name} -> process_name(P, Name);
        [] -> process_name(P, []);
        undefined -> []
    end.

%% @doc As {@link process_name/1}, with `Registered' the registered name
%% (`[]' for none) read already: else the initial call (proc_lib's own
%% record of it for a proc_lib process). Never "": babeltrace2 2.0 reads an
%% empty string field as the previous event's value of that field.
-spec process_name(pid(), atom() | []) -> dyntrace:process_name() | [].
process_name(_P, Registered) when Registered =/= [] ->
    Registered;
process_name(P, []) ->
    try erlang:process_info(P, {dictionary, '$initial_call'}) of
        {_, {M, F, A}} when is_atom(M), is_atom(F), is_integer(A) -> {M, F, A};
        _ -> spawned_as(P)
    catch
        %% Before OTP 26 that item does not exist.
        error:badarg -> spawned_as(P)
    end.

spawned_as(P) ->
    case erlang:process_info(P, initial_call) of
        {initial_call, {proc_lib, init_p, 5}} ->
            case erlang:process_info(P, dictionary) of
                {dictionary, Dict} ->
                    case lists:keyfind('$initial_call', 1, Dict) of
                        {_, {M, F, A}} when is_atom(M), is_atom(F), is_integer(A) -> {M, F, A};
                        _ -> {proc_lib, init_p, 5}
                    end;
                undefined ->
                    []
            end;
        {initial_call, MFA} ->
            MFA;
        undefined ->
            []
    end.
