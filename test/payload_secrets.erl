%%% Terms that carry a secret, for the payload tests: the secret is a
%%% binary of printable ASCII and an integer, found in a text in any of the
%%% forms `full' writes them.
-module(payload_secrets).

-export([keyed/2, bare/2, shown/3]).

%% @doc The secret only under the key `password' (maps, proplists, a
%% 2-tuple), in a record, a list and 50 levels deep.
-spec keyed(binary(), integer()) -> tuple().
keyed(Bin, Int) ->
    Deep = lists:foldl(fun(_, Acc) -> {wrap, [Acc]} end, #{password => Bin},
                       lists:seq(1, 50)),
    {session, alice, #{password => Bin, user => bob},
     [{password, binary_to_list(Bin)}, {password, Int}], {password, #{nested => Bin}}, Deep}.

%% @doc The secret as plain values: binaries, strings, integers, map values
%% and keys, in a record, lists and 50 levels deep.
-spec bare(binary(), integer()) -> tuple().
bare(Bin, Int) ->
    Deep = lists:foldl(fun(_, Acc) -> [Acc] end, {Bin, Int}, lists:seq(1, 50)),
    {user, Bin, binary_to_list(Bin), Int, -Int, #{token => Bin, Bin => x, n => Int},
     [Bin, [binary_to_list(Bin)]], <<0, Bin/binary>>, Deep}.

%% @doc Whether `Text' shows the secret: the binary's characters, its bytes
%% as `full' writes a binary that is not text, or the integer.
-spec shown(binary(), binary(), integer()) -> boolean().
shown(Text, Bin, Int) ->
    Forms = [Bin, integer_to_binary(Int),
             iolist_to_binary(lists:join(",", [integer_to_list(B) || <<B>> <= Bin]))],
    binary:match(Text, Forms) =/= nomatch.
