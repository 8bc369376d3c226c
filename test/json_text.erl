%%% @doc Test helper: a small JSON reader for `dyntrace-analyze --json'
%%% output (OTP 25 has no json module): objects as maps with binary keys,
%%% strings as binaries, numbers as integers or floats.
-module(json_text).

-export([value/1]).

%% @doc The first JSON value of `Bin' and the bytes after it.
-spec value(binary()) -> {term(), binary()}.
value(<<C, Rest/binary>>) when C =:= $\s; C =:= $\n; C =:= $\t; C =:= $\r ->
    value(Rest);
value(<<"{", Rest/binary>>) -> object(skip_ws(Rest), #{});
value(<<"[", Rest/binary>>) -> array(skip_ws(Rest), []);
value(<<"\"", Rest/binary>>) -> string(Rest, <<>>);
value(<<"true", Rest/binary>>) -> {true, Rest};
value(<<"false", Rest/binary>>) -> {false, Rest};
value(<<"null", Rest/binary>>) -> {null, Rest};
value(Bin) ->
    {match, [Num]} = re:run(Bin, "^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?", [{capture, first, binary}]),
    <<Num:(byte_size(Num))/binary, Rest/binary>> = Bin,
    Value = try binary_to_integer(Num) catch error:badarg -> binary_to_float(Num) end,
    {Value, Rest}.

object(<<"}", Rest/binary>>, Acc) -> {Acc, Rest};
object(Bin, Acc) ->
    {Key, <<":", AfterColon/binary>>} = value(Bin),
    {Value, After} = value(AfterColon),
    case skip_ws(After) of
        <<",", Next/binary>> -> object(skip_ws(Next), Acc#{Key => Value});
        <<"}", Next/binary>> -> {Acc#{Key => Value}, Next}
    end.

array(<<"]", Rest/binary>>, Acc) -> {lists:reverse(Acc), Rest};
array(Bin, Acc) ->
    {Value, After} = value(Bin),
    case skip_ws(After) of
        <<",", Next/binary>> -> array(skip_ws(Next), [Value | Acc]);
        <<"]", Next/binary>> -> {lists:reverse([Value | Acc]), Next}
    end.

string(<<"\"", Rest/binary>>, Acc) -> {Acc, Rest};
string(<<"\\u", Hex:4/binary, Rest/binary>>, Acc) ->
    string(Rest, <<Acc/binary, (unicode:characters_to_binary([binary_to_integer(Hex, 16)]))/binary>>);
string(<<"\\", C, Rest/binary>>, Acc) ->
    Char = case C of $n -> $\n; $t -> $\t; $r -> $\r; $b -> $\b; $f -> $\f; _ -> C end,
    string(Rest, <<Acc/binary, Char>>);
string(<<C, Rest/binary>>, Acc) ->
    string(Rest, <<Acc/binary, C>>).

skip_ws(<<C, Rest/binary>>) when C =:= $\s; C =:= $\n; C =:= $\t; C =:= $\r -> skip_ws(Rest);
skip_ws(Bin) -> Bin.
