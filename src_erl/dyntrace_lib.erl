%%% @doc Helpers the other dyntrace modules share: the bottom of the
%%% module graph, calling no other dyntrace module.
-module(dyntrace_lib).

-export([is_proper_list/1]).

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
