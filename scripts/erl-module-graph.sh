#!/bin/sh
# Prints the module graph of the Erlang modules (src_erl) from their calls
# and fails on any cycle: scripts/module-graph.sh's sibling for Erlang.
#
#   scripts/erl-module-graph.sh [SRC_DIR]
#
# A module's edges are the other modules of SRC_DIR it calls, read from
# the source (after the preprocessor): `M:F(...)', `fun M:F/A', and a call
# that passes a module and a function name as two literal atoms in a row,
# then a list (`erpc:call(Node, M, F, [...])', `apply(M, F, [...])').
# Not edges, as they are no call from one module's code into another's:
# - a module's calls to itself, `?MODULE:F(...)' included (a loop that
#   moves to new code, a callback it names for gen_server or supervisor);
# - a process started from data: a child spec's `{M, F, Args}', a
#   gen_server's callback module;
# - the calls the runtime makes: `on_load', the erl_tracer callbacks
#   (`enabled/3', `trace/5'), gen_server's and supervisor's callbacks;
# - a NIF: a function whose every clause is `erlang:nif_error(...)' is
#   native code once `erlang:load_nif/2' has run, and calls no Erlang. A
#   call to one is an edge to `M(nif)', below every module, not to `M':
#   the samplers write their events through dyntrace's NIFs without
#   calling up into the public face.
# Each line is `level module -> the modules it calls', level 0 calling
# none and every other one above all it calls, lowest first: calls point
# down. The script fails (exit 1), naming the modules, when a module
# reaches itself.
set -eu
cd "$(dirname "$0")/.."
SRC=${1:-src_erl}
[ -d "$SRC" ] || { echo "$0: no directory $SRC" >&2; exit 2; }
script=$(mktemp)
trap 'rm -f "$script"' EXIT
cat >"$script" <<'EOF'
%%! -noshell
-mode(compile).

main([Src]) ->
    Files = lists:sort(filelib:wildcard(filename:join(Src, "*.erl"))),
    Parsed = [parse(F, Src) || F <- Files],
    Modules = [M || {M, _} <- Parsed],
    Nifs = lists:append([nifs(M, Forms) || {M, Forms} <- Parsed]),
    Graph = maps:from_list([{M, edges(M, Forms, Modules, Nifs)} || {M, Forms} <- Parsed]),
    NifNodes = lists:usort([nif_node(M) || {M, _, _} <- Nifs]),
    Full = maps:merge(maps:from_list([{N, []} || N <- NifNodes]), Graph),
    {Levels, Cycles} = levels(Full),
    io:format("Erlang modules of ~ts (level, module -> what it calls):~n", [Src]),
    Sorted = lists:sort([{maps:get(M, Levels), M} || M <- maps:keys(Full)]),
    [io:format("  ~2w ~s~ts~n", [L, M, case maps:get(M, Full) of
                                          [] -> "";
                                          Ds -> [" -> " | lists:join(" ", Ds)]
                                      end]) || {L, M} <- Sorted],
    case Cycles of
        [] ->
            io:format("~nNo cycle.~n");
        _ ->
            [io:format(standard_error, "erl-module-graph: a cycle: ~ts~n",
                       [lists:join(" -> ", C)]) || C <- Cycles],
            io:format(standard_error, "erl-module-graph: calls must point down: "
                      "fix the modules named above~n", []),
            halt(1)
    end.

parse(File, Src) ->
    {ok, Forms} = epp:parse_file(File, [{includes, [Src]}]),
    [Module] = [M || {attribute, _, module, M} <- Forms],
    {atom_to_list(Module), Forms}.

%% The functions whose every clause only raises erlang:nif_error.
nifs(M, Forms) ->
    [{M, atom_to_list(F), A}
     || {function, _, F, A, Clauses} <- Forms,
        lists:all(fun({clause, _, _, _, [{call, _, {remote, _, {atom, _, erlang},
                                                     {atom, _, nif_error}}, _}]}) -> true;
                     (_) -> false
                  end, Clauses)].

nif_node(M) -> M ++ "(nif)".

edges(Self, Forms, Modules, Nifs) ->
    Calls = lists:append([calls(Body) || {function, _, _, _, Body} <- Forms]),
    lists:usort([target(M, F, A, Nifs) || {M, F, A} <- Calls, M =/= Self,
                                          lists:member(M, Modules)]).

target(M, F, A, Nifs) ->
    IsNif = lists:any(fun({NM, NF, NA}) -> NM =:= M andalso NF =:= F
                                               andalso (A =:= any orelse NA =:= A)
                      end, Nifs),
    case IsNif of
        true -> nif_node(M);
        false -> M
    end.

%% Every {Module, Function, Arity | any} a piece of abstract code calls.
calls({call, _, {remote, _, {atom, _, M}, {atom, _, F}}, Args} = Call) ->
    [{atom_to_list(M), atom_to_list(F), length(Args)} | passed(Args) ++ walk(Call)];
calls({call, _, _, Args} = Call) ->
    passed(Args) ++ walk(Call);
calls({'fun', _, {function, {atom, _, M}, {atom, _, F}, {integer, _, A}}}) ->
    [{atom_to_list(M), atom_to_list(F), A}];
calls(T) ->
    walk(T).

walk(T) when is_tuple(T) -> lists:append([calls(E) || E <- tuple_to_list(T)]);
walk(L) when is_list(L) -> lists:append([calls(E) || E <- L]);
walk(_) -> [].

%% A module and a function passed as two literal atoms in a row, then a
%% list of arguments.
passed([{atom, _, M}, {atom, _, F}, Args | Rest]) when element(1, Args) =:= cons;
                                                       element(1, Args) =:= nil ->
    [{atom_to_list(M), atom_to_list(F), any} | passed([Args | Rest])];
passed([_ | Rest]) ->
    passed(Rest);
passed([]) ->
    [].

%% Levels by depth-first search; a module met again while on the path is
%% a cycle, answered as the path from it.
levels(Graph) ->
    lists:foldl(fun(M, Acc) -> element(2, visit(M, Graph, [], Acc)) end,
                {#{}, []}, lists:sort(maps:keys(Graph))).

visit(M, Graph, Path, {Levels, Cycles} = Acc) ->
    case {maps:find(M, Levels), lists:member(M, Path)} of
        {{ok, L}, _} ->
            {L, Acc};
        {error, true} ->
            Loop = lists:dropwhile(fun(P) -> P =/= M end, lists:reverse(Path)),
            {0, {Levels, Cycles ++ [Loop ++ [M]]}};
        {error, false} ->
            {L, {Levels1, Cycles1}} =
                lists:foldl(fun(D, {Max, A}) ->
                                    {DL, A1} = visit(D, Graph, [M | Path], A),
                                    {max(Max, DL + 1), A1}
                            end, {0, Acc}, maps:get(M, Graph, [])),
            {L, {Levels1#{M => L}, Cycles1}}
    end.
EOF
escript "$script" "$SRC"
