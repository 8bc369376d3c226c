%% The term formatter: `dyntrace:format_term/2' writes what the VM's `%T'
%% writes (the text a trace script greps for), cut within the byte limit;
%% `dyntrace:format_term/3' writes each payload mode's text (`shape',
%% `size', `none', redacted keys) as README's "Term text" defines it,
%% checked against a model of that definition written here.
%%
%% The reference is the VM itself: format_oracle, a test-only NIF that
%% returns `enif_snprintf("%T")' of a term. The two deliberate differences
%% (README, "Term text") are applied to its text: UTF-8 for the Latin-1 characters of
%% printable strings, and maps over 32 keys written flat.
-module(dyntrace_format_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, init_per_suite/1, end_per_suite/1]).
-export([t_leaves/1, t_containers/1, t_strings/1, t_atoms/1, t_numbers/1,
         t_identifiers/1, t_binaries/1, t_binary_forms/1, t_leaf_lists/1, t_cut_utf8/1,
         t_bits_in_place/1, t_bignums_in_place/1, t_ports_and_funs_in_place/1,
         t_local_funs_of_reloaded_modules/1,
         t_huge_terms/1, t_beyond_scan_bound/1, t_payload_texts/1, t_payload_huge_terms/1,
         prop_matches_vm/1, prop_unicode_atoms/1, prop_big_maps/1,
         prop_payload_model/1, prop_payload_cut/1, prop_secrets_hidden/1]).

%% PropEr's macros, spelled out: only its runtime is installed here.
-define(FORALL(X, Gen, Prop), proper:forall(Gen, fun(X) -> Prop end)).
-define(LET(X, Gen, Expr), proper_types:bind(Gen, fun(X) -> Expr end, false)).
-define(SIZED(S, Gen), proper_types:sized(fun(S) -> Gen end)).
-define(LAZY(Gen), proper_types:lazy(fun() -> Gen end)).
-define(WHENFAIL(Action, Prop), proper:whenfail(fun() -> Action end, fun() -> Prop end)).

-define(BIG, 65536).
-define(PROPERTY_CASES, 20000).

all() ->
    [t_leaves, t_containers, t_strings, t_atoms, t_numbers, t_identifiers,
     t_binaries, t_binary_forms, t_leaf_lists, t_cut_utf8,
     t_bits_in_place, t_bignums_in_place, t_ports_and_funs_in_place,
     t_local_funs_of_reloaded_modules,
     t_huge_terms, t_beyond_scan_bound,
     t_payload_texts, t_payload_huge_terms,
     prop_matches_vm, prop_unicode_atoms, prop_big_maps,
     prop_payload_model, prop_payload_cut, prop_secrets_hidden].

init_per_suite(Config) ->
    ok = format_oracle:build(proplists:get_value(priv_dir, Config)),
    {module, dyntrace} = code:ensure_loaded(dyntrace),
    Config.

end_per_suite(_Config) ->
    ok.

%%% UNIT CASES %%%

t_leaves(_Config) ->
    same_as_vm([[], {}, #{}, <<>>, "", a, 0, -1, 1.5]),
    <<"[]">> = fmt([]),
    <<"{}">> = fmt({}),
    <<"#{}">> = fmt(#{}),
    <<"<<>>">> = fmt(<<>>),
    <<"[]">> = fmt(""),
    <<"1.500000e+00">> = fmt(1.5).

t_containers(_Config) ->
    <<"{acc,[1,2,3]}">> = fmt({acc, [1, 2, 3]}),
    <<"[1|2]">> = fmt([1 | 2]),
    <<"[a,98,99]">> = fmt([a | "bc"]),
    <<"[97|98]">> = fmt([$a | $b]),
    <<"[1,2|<<>>]">> = fmt([1, 2 | <<>>]),
    <<"#{a=>1,\"b\"=>[]}">> = fmt(#{a => 1, "b" => []}),
    <<"[[],{[]},{{}}]">> = fmt([[], {[]}, {{}}]),
    same_as_vm([{acc, [1, 2, 3]}, [1 | 2], [a | "bc"], [[[[]]]], {{{a}}},
                #{{k} => [#{}], [1] => <<1>>}, [#{a => [1 | 2]} | {x}]]).

t_strings(_Config) ->
    %% Quote escaped, backslash raw, newline as \n, tab and CR raw.
    <<"\"a\\\"b\\c\\nd\te\"">> = fmt("a\"b\\c\nd\te"),
    <<"\"a\rb\"">> = fmt("a\rb"),
    %% Not printable: a form feed, a control in 128..159, a char > 255.
    <<"[97,12]">> = fmt([$a, $\f]),
    <<"[128]">> = fmt([128]),
    <<"[97,256]">> = fmt([$a, 256]),
    <<"[97,-1]">> = fmt([$a, -1]),
    %% Latin-1 160..255: printable, written UTF-8 (the VM writes raw bytes).
    <<"\"é ÿ\""/utf8>> = fmt([233, 32, 255]),
    <<"\"", 194, 160, "\"">> = fmt([160]),
    same_as_vm(["a\"b\\c\nd\te", "a\rb", [$a, $\f], [128], "x'y", [$a, 0], "\t"]).

t_atoms(_Config) ->
    <<"'Quoted Atom'">> = fmt('Quoted Atom'),
    <<"'-t_call/1-fun-1-'">> = fmt('-t_call/1-fun-1-'),
    <<"''">> = fmt(''),
    <<"'/bin/sh -s unix:cmd'">> = fmt('/bin/sh -s unix:cmd'),
    <<"and">> = fmt('and'),
    <<"'a@b'">> = fmt('a@b'),
    <<"aB_9">> = fmt(aB_9),
    <<"'don\\'t'">> = fmt('don\'t'),
    <<"'a\\tb'">> = fmt('a\tb'),
    <<"'a\\001'">> = fmt('a\x{1}'),
    <<"'a\\200b'">> = fmt('a\x{80}b'),
    <<"étÉ"/utf8>> = fmt('étÉ'),
    <<"'Ét'"/utf8>> = fmt('Ét'),
    <<"'a×'"/utf8>> = fmt('a×'),
    <<"'α'"/utf8>> = fmt('α'),
    same_as_vm(['Quoted Atom', '-t_call/1-fun-1-', '', 'and', 'a@b', 'don\'t', 'a\\b',
                'a\tb', 'a\x{1}', 'a\x{7f}', 'a\x{80}b', 'étÉ', 'Ét', 'a×', 'aª', 'ß',
                'α', 'aα', '日本', 'A', '_a', '9a', 'a9', 'ÿ÷', 'a\nb\fc\rd\be\vf']).

t_numbers(_Config) ->
    <<"-42">> = fmt(-42),
    <<"18446744073709551616">> = fmt(1 bsl 64),
    <<"-9223372036854775808">> = fmt(-(1 bsl 63)),
    Huge = 1 bsl 3000,
    Text = integer_to_binary(Huge),
    Text = fmt(Huge),
    <<"-", Text/binary>> = fmt(-Huge),
    <<"-0.000000e+00">> = fmt(-0.0),
    <<"1.000000e+300">> = fmt(1.0e300),
    <<"4.940656e-324">> = fmt(5.0e-324),
    same_as_vm([0, 1 bsl 59, 1 bsl 60, -(1 bsl 60), 1 bsl 63, 1 bsl 64, -(1 bsl 64),
                12345678901234567890123, Huge, -Huge, 0.0, -0.0, 1.0e300,
                -1.0e-300, 5.0e-324, 0.1, 123456789.0, 9.9999995, 9.9999996e99,
                1.7976931348623157e308, 2.2250738585072014e-308]),
    %% Halfway cases round to even, as the VM's printf does.
    <<"1.234568e+06">> = fmt(1234567.5),
    <<"1.234568e+06">> = fmt(1234568.5),
    <<"1.234568e+07">> = fmt(12345675.0),
    <<"1.234568e+07">> = fmt(12345685.0),
    same_as_vm([float(N) + 0.5 || N <- lists:seq(1000000, 1000100)]
               ++ [float(N * 5) || N <- lists:seq(2000000, 2000200)]),
    %% Floats between 10^-16 and 2^64 are written by integer scaling:
    %% around both ends, ties and near-ties at every exponent, and the
    %% largest subnormal next to the smallest normal float.
    same_as_vm([X * math:pow(10, E) || X <- [1.0, -1.5, 9.9999995, 1.2345675, 9.999999],
                                       E <- lists:seq(-18, 21)]
               ++ [float(1 bsl 64), float((1 bsl 64) - 2048), -float(1 bsl 63),
                   2.2250738585072009e-308, 2.2250738585072014e-308]
               ++ [float(N) * 0.5 || N <- lists:seq(19999991, 20000009)]),
    %% Floats from random bit patterns, every exponent.
    _ = rand:seed(exsss, 20261122),
    same_as_vm([F || _ <- lists:seq(1, 20000),
                     <<F/float>> <- [<<(rand:uniform(1 bsl 64) - 1):64>>]]).

t_identifiers(_Config) ->
    Port = hd(erlang:ports()),
    RemotePid = remote_pid(),
    RemotePort = remote_port(),
    RemoteRef = remote_ref(),
    same_as_vm([self(), Port, make_ref(), RemotePid, RemotePort, RemoteRef,
                fun lists:reverse/1, fun() -> ok end, fun(X) -> X end,
                fun 'Quoted Atom':'b c'/0, fun 'ét':f/1,
                {self(), [RemotePid | Port], #{RemoteRef => RemotePort}}]),
    <<"fun lists:reverse/1">> = fmt(fun lists:reverse/1),
    %% References are written from their numbers: many of them, plain
    %% ones, aliases (alias/0, a monitor's), one kept in a magic binary
    %% (the VM writes it), and the pids beside them, alone and in terms.
    Aliases = [alias() || _ <- lists:seq(1, 200)],
    Monitors = [monitor(process, self(), [{alias, demonitor}]) || _ <- lists:seq(1, 200)],
    Magic = ets:new(format_suite_magic, []),
    Refs = [make_ref() || _ <- lists:seq(1, 2000)] ++ Aliases ++ Monitors ++ [Magic],
    same_as_vm(Refs ++ [{'$gen_call', {self(), [alias | R]}, {get, k}} || R <- Refs]
               ++ [{[alias | R], {ok, 42}} || R <- Refs]),
    _ = [unalias(A) || A <- Aliases],
    _ = [demonitor(M) || M <- Monitors],
    ets:delete(Magic),
    {match, _} = re:run(fmt(RemotePid), "^<[1-9][0-9]*\\.42\\.7>$"),
    {match, _} = re:run(fmt(RemotePort), "^#Port<[1-9][0-9]*\\.42>$").

t_binaries(_Config) ->
    <<"<<\"abc\">>">> = fmt(<<"abc">>),
    <<"<<1,2,3>>">> = fmt(<<1, 2, 3>>),
    <<"<<97,1:5>>">> = fmt(<<97, 1:5>>),
    <<"<<1:1>>">> = fmt(<<1:1>>),
    <<"<<\"a\\\"b\\\">>">> = fmt(<<"a\"b\\">>),
    <<"<<233>>">> = fmt(<<233>>),
    <<_:3, Unaligned/bitstring>> = <<0:3, "hello">>,
    <<"<<\"hello\">>">> = fmt(Unaligned),
    same_as_vm([<<"abc">>, <<1, 2, 3>>, <<97, 1:5>>, <<1:1>>, <<"a\"b\\">>, <<"a\n">>,
                <<127>>, <<126>>, <<32>>, Unaligned, <<0:3>>, <<255, 7:3>>]),
    %% Up to 16 bytes a printable binary is checked and written from a
    %% register: every length around it, with a byte that is no text, and
    %% after a string that brings the smallest budget's end to every byte
    %% of its text.
    Shorts = [B || N <- lists:seq(1, 18),
                   B <- [binary:part(<<"0123456789abcdefghij">>, 0, N),
                         <<(binary:copy(<<"x">>, N - 1))/binary, 0>>,
                         <<(binary:copy(<<"y">>, N - 1))/binary, $">>]],
    same_as_vm(Shorts),
    [begin
         Padded = {lists:duplicate(N, $p), B},
         Full = fmt(Padded),
         case byte_size(Full) =< 64 of
             true -> Full = fmt(Padded, 64);
             false -> ok = cut_of(fmt(Padded, 64), Full, 64)
         end
     end || B <- Shorts, N <- lists:seq(30, 60)],
    ok.

%% Every form a binary takes in the VM: on the heap (up to 64 bytes) and
%% off it, sub-binaries at byte and bit offsets, one still open for
%% appending, a literal, one that came in a message. The NIF reads the
%% plain forms in place and asks the VM for the rest: the text is the VM's
%% either way, and `shape' gives each one's size.
t_binary_forms(_Config) ->
    Large = binary:copy(<<"0123456789">>, 10),
    <<_:8, Sub:40/binary, _/binary>> = Large,
    <<_:3, Unaligned/bitstring>> = Large,
    Appended = lists:foldl(fun(C, Acc) -> <<Acc/binary, C>> end, <<>>,
                           lists:seq($a, $z) ++ lists:seq($A, $Z) ++ lists:seq($0, $9)),
    self() ! {copy, Large},
    Received = receive {copy, Copy} -> Copy end,
    Literal = <<"a literal of more than sixty-four bytes, which the loader keeps off the heap">>,
    Binaries = [<<>>, <<"x">>, binary:copy(<<"x">>, 64), binary:copy(<<"x">>, 65), Large, Sub,
                binary:part(Large, 10, 80), Appended, Received, Literal, term_to_binary(Large)],
    same_as_vm(Binaries ++ [Unaligned, [Sub | Large], {Appended, Literal}]),
    [begin
         Shape = iolist_to_binary(["<<_:", integer_to_list(byte_size(B)), "/binary>>"]),
         {B, Shape} = {B, mode(B, shape)}
     end || B <- Binaries],
    <<"<<_/bitstring>>">> = mode(Unaligned, shape).

%% Long lists of leaves the VM's printer writes (bits that are not whole
%% bytes, funs, identifiers): the text, and its cut at every budget, is the
%% VM's. Each leaf is written into room that is not zeroed, and only its
%% own text is kept.
t_leaf_lists(_Config) ->
    [begin
         List = lists:duplicate(20000, Leaf),
         Expected = expected(List),
         [true = check_cut(Expected, fmt(List, Max), Max) || Max <- [64, 1000, 1024, ?BIG]]
     end || Leaf <- [<<1:3>>, <<255, 7:3>>, fun lists:reverse/1, fun() -> ok end,
                     make_ref(), self(), 1000]].

%% Bitstrings that are not whole bytes, read in place (heap bitstrings,
%% sub-bitstrings of heap and off-heap binaries): every bit offset, every
%% size up to 9 bytes and some of thousands, bytes of every value; alone,
%% in containers, and cut at budgets that end inside them.
t_bits_in_place(_Config) ->
    _ = rand:seed(exsss, 20261128),
    Bytes = fun(N) -> rand:bytes(N) end,
    Sized = [<<Bin/bitstring, Tail:Bits>>
             || Size <- lists:seq(0, 9) ++ [63, 64, 65, 100, 4000],
                Bits <- lists:seq(1, 7),
                Bin <- [Bytes(Size), binary:copy(<<255>>, Size), binary:copy(<<0>>, Size)],
                Tail <- [0, rand:uniform(1 bsl Bits) - 1, (1 bsl Bits) - 1]],
    Offset = [Rest || Bits <- Sized, Offset <- lists:seq(1, 7),
                      <<_:Offset, Rest/bitstring>> <- [<<0:Offset, Bits/bitstring>>]],
    %% Sub-bitstrings of an off-heap binary, at bit offsets into it.
    Large = Bytes(300),
    Parts = [Part || Start <- lists:seq(0, 40), Len <- [1, 7, 9, 15, 17, 100, 2000],
                     <<_:Start, Part:Len/bitstring, _/bitstring>> <- [Large]],
    self() ! {copy, Offset},
    Received = receive {copy, Copy} -> Copy end,
    All = Sized ++ Offset ++ Parts ++ Received,
    same_as_vm(All),
    Some = [B || B <- All, bit_size(B) < 200],
    same_as_vm([lists:sublist(Some, 500), list_to_tuple(lists:sublist(Parts, 30)),
                #{bits => hd(Parts), 1 => lists:sublist(Offset, 20)}]),
    [true = check_cut(expected(All), fmt(All, Max), Max) || Max <- [?BIG, 1000]],
    [true = check_cut(expected(B), fmt(B, Max), Max)
     || B <- lists:sublist(Parts, 50), Max <- [64, 65, 66, 67, 100, 201]],
    <<"<<_/bitstring>>">> = mode(<<1:3>>, shape),
    <<"<<_/bitstring>>">> = mode(lists:last(Offset), shape).

%% Bignums, written from their digit words up to 2^4096 - 1: around
%% every power of two from 2^59, both signs, and random digits.
t_bignums_in_place(_Config) ->
    _ = rand:seed(exsss, 20261129),
    Around = [Sign * ((1 bsl K) + D) || K <- lists:seq(59, 4095), D <- [-1, 0, 1],
                                        Sign <- [1, -1], (1 bsl K) + D < 1 bsl 4096],
    Random = [Sign * binary:decode_unsigned(rand:bytes(rand:uniform(512)))
              || _ <- lists:seq(1, 2000), Sign <- [1, -1]],
    Tens = [Sign * (P + D) || K <- lists:seq(18, 1233), P <- [pow10(K)], D <- [-1, 0, 1],
                              Sign <- [1, -1]],
    same_as_vm(Around ++ Random ++ Tens),
    same_as_vm([lists:sublist(Around, 50), list_to_tuple(lists:sublist(Random, 20)),
                #{(1 bsl 100) => -(1 bsl 200)}]),
    [true = check_cut(expected(Around), fmt(Around, Max), Max) || Max <- [?BIG, 1000]],
    Largest = (1 bsl 4096) - 1,
    true = check_cut(expected(Largest), fmt(Largest, 100), 100),
    %% 2^4096 and beyond are cut before the number, not converted.
    <<"[1,...">> = fmt([1, 1 bsl 4096, 2], 100),
    <<"<bigint>">> = mode(1 bsl 100, shape),
    <<"<int:20>">> = mode(1 bsl 64 - 1, shape).

pow10(K) -> pow10(K, 1).
pow10(0, Acc) -> Acc;
pow10(K, Acc) -> pow10(K - 1, Acc * 10).

%% Local ports and external funs, whose texts the walk keeps by their
%% word and their export entry: many ports, open and closed, and funs of
%% every arity, of quoted and unloaded modules.
t_ports_and_funs_in_place(_Config) ->
    Ports = [open_port({spawn, "cat"}, []) || _ <- lists:seq(1, 20)],
    Closed = lists:sublist(Ports, 5),
    _ = [port_close(P) || P <- Closed],
    Funs = [fun erlang:self/0, fun lists:reverse/1, fun lists:reverse/2, fun lists:map/2,
            fun 'Quoted Atom':'b c'/0, fun erlang:'+'/2, fun no_such_module:f/255,
            fun no_such_module:'don\'t'/3, fun 'a@b':'A'/1, fun ok:'and'/0],
    Terms = Ports ++ erlang:ports() ++ Funs,
    same_as_vm(Terms),
    same_as_vm([Terms, list_to_tuple(Terms), lists:duplicate(100, hd(Funs))]),
    same_as_vm([fun 'ét':'été'/1]),
    [true = check_cut(expected(T), fmt(T, Max), Max)
     || T <- [lists:duplicate(300, fun lists:reverse/1), lists:duplicate(300, hd(Ports))],
        Max <- lists:seq(64, 90)],
    <<"<fun>">> = mode(fun lists:map/2, shape),
    _ = [port_close(P) || P <- Ports -- Closed],
    ok.

%% Local funs are written from their fun entry's fields: a module loaded
%% again and again, its old code purged each time (freeing the entries of
%% its funs no term holds any more, whose memory a new entry may take),
%% gives funs of new numbers, each written as the VM writes it, alone and
%% many in a list; a fun held across a reload and purge still is.
t_local_funs_of_reloaded_modules(_Config) ->
    Mod = dyntrace_format_reloaded,
    {Held, HeldLiteral} = reload_fun(Mod, 0),
    Texts = [begin
                 {F, Literal} = reload_fun(Mod, N),
                 same_as_vm([F, Literal, Held, HeldLiteral, lists:duplicate(50, F),
                             lists:duplicate(50, Literal), [Held, F, HeldLiteral, Literal]]),
                 fmt(F)
             end || N <- lists:seq(1, 30)],
    %% Each version's code differs, so its fun's text does.
    30 = length(lists:usort(Texts)),
    same_as_vm([Held, HeldLiteral]),
    _ = code:purge(Mod),
    true = code:delete(Mod),
    _ = code:purge(Mod),
    ok.

%% Loads version `N' of `Mod' (the old code purged, the funs of versions
%% before the last dropped) and answers a fun of it with a free variable
%% and one without, in a constant term (a literal on OTP 25).
reload_fun(Mod, N) ->
    Forms = [{attribute, 1, module, Mod},
             {attribute, 2, export, [{f, 1}]},
             {function, 3, f, 1,
              [{clause, 3, [{var, 3, 'X'}], [],
                [{tuple, 3,
                  [{'fun', 3, {clauses, [{clause, 3, [], [],
                                          [{tuple, 3, [{integer, 3, N}, {var, 3, 'X'}]}]}]}},
                   {'fun', 3, {clauses, [{clause, 3, [], [], [{integer, 3, N}]}]}}]}]}]}],
    {ok, Mod, Beam} = compile:forms(Forms, []),
    _ = code:purge(Mod),
    {module, Mod} = code:load_binary(Mod, "reloaded.erl", Beam),
    true = erlang:garbage_collect(),
    Mod:f(N).

%% A budget that ends inside a multi-byte character cuts before it.
t_cut_utf8(_Config) ->
    String = lists:duplicate(100, 233),
    [begin
         Text = fmt(String, Max),
         true = byte_size(Text) =< Max,
         ok = utf8_cut_of(Text, expected(String))
     end || Max <- lists:seq(64, 80)],
    <<"\"", _/binary>> = fmt(String, 64),
    Atom = list_to_atom(lists:duplicate(100, $é)),
    [begin
         Text = fmt(Atom, Max),
         true = byte_size(Text) =< Max,
         ok = utf8_cut_of(Text, format_oracle:text(Atom))
     end || Max <- lists:seq(64, 80)],
    %% 63 bytes of text then a 2-byte character: the cut drops all of it.
    Odd = [$a | lists:duplicate(100, 233)],
    <<"\"a", Rest/binary>> = fmt(Odd, 64),
    61 = byte_size(Rest),
    <<_:58/binary, "...">> = Rest.

%% Terms far over the budget cost about what the budget costs, and give a
%% cut text within it (timings are in bench/format_bench.escript).
t_huge_terms(_Config) ->
    List = lists:seq(1, 3000000),
    ok = cut_of(fmt(List), expected(lists:sublist(List, 1000))),
    Deep = lists:foldl(fun(_, Acc) -> [Acc] end, [], lists:seq(1, 2000000)),
    Brackets = binary:copy(<<"[">>, 1021),
    <<Brackets:1021/binary, "...">> = fmt(Deep),
    DeepTuple = lists:foldl(fun(_, Acc) -> {Acc} end, {}, lists:seq(1, 2000000)),
    Braces = binary:copy(<<"{">>, 1021),
    <<Braces:1021/binary, "...">> = fmt(DeepTuple),
    Bin = binary:copy(<<0>>, 64 * 1024 * 1024),
    ok = cut_of(fmt(Bin), expected(binary:part(Bin, 0, 1000))),
    Text = binary:copy(<<"a">>, 64 * 1024 * 1024),
    ok = cut_of(fmt(Text), expected(binary:part(Text, 0, 2000))),
    Map = maps:from_list([{K, K} || K <- lists:seq(1, 1000000)]),
    <<"#{", _/binary>> = MapText = fmt(Map),
    1024 = byte_size(MapText),
    %% Maps left half-written: their iterators are released.
    DeepMap = lists:foldl(fun(K, Acc) -> #{K => Acc} end, #{}, lists:seq(1, 100000)),
    <<"#{100000=>#{99999=>", _/binary>> = DeepMapText = fmt(DeepMap),
    true = byte_size(DeepMapText) =< 1024,
    [<<"[#{", _/binary>> = fmt([Map, DeepMap]) || _ <- lists:seq(1, 1000)],
    %% Big maps inside big maps, their iterators live at once.
    Inner = maps:from_list([{K, K} || K <- lists:seq(1, 33)]),
    Outer = maps:from_list([{{k, K}, Inner} || K <- lists:seq(1, 33)]),
    OuterText = fmt(Outer, ?BIG),
    {match, Arrows} = re:run(OuterText, "=>", [global]),
    true = length(Arrows) =:= 33 + 33 * 33,
    Nested = lists:foldl(fun(D, Acc) -> maps:from_list([{{D, K}, Acc} || K <- lists:seq(1, 40)]) end,
                         Inner, lists:seq(1, 3)),
    [?BIG = byte_size(fmt(Nested, ?BIG)) || _ <- lists:seq(1, 20)],
    %% The largest budget, as deep as it goes.
    MaxBrackets = binary:copy(<<"[">>, 65533),
    <<MaxBrackets:65533/binary, "...">> = fmt(Deep, 65536),
    LongString = lists:duplicate(3000000, $a),
    ok = cut_of(fmt(LongString), expected(lists:sublist(LongString, 1100))),
    %% An integer of 2^4096 or more is not converted (quadratic cost): the
    %% text is cut just before it, whatever the budget.
    <<"{ok,...">> = fmt({ok, 1 bsl 1000000}),
    <<"...">> = fmt(-(1 bsl 100000), 64),
    <<"[1,...">> = fmt([1, 1 bsl 4096], ?BIG),
    <<"[1,...">> = fmt([1, -(1 bsl 4096)], ?BIG),
    Below = (1 bsl 4096) - 1,
    BelowText = integer_to_binary(Below),
    BelowText = fmt(Below, ?BIG),
    <<"-", BelowText/binary>> = fmt(-Below, ?BIG),
    %% Smaller ones are written up to the cut.
    ok = cut_of(fmt(1 bsl 300, 64), integer_to_binary(1 bsl 300), 64),
    ok = cut_of(fmt(Below), BelowText).

%% Lists and binaries are scanned for printability up to the budget + 1
%% elements only (documented deviation, for terms beyond the bounds).
t_beyond_scan_bound(_Config) ->
    NotString = lists:duplicate(1025, $a) ++ [0],
    <<"\"aaa", _/binary>> = Cut = fmt(NotString),
    1024 = byte_size(Cut),
    <<"[97,97,", _/binary>> = format_oracle:text(NotString),
    NotText = <<(binary:copy(<<"a">>, 1025))/binary, 0>>,
    <<"<<\"aaa", _/binary>> = fmt(NotText),
    %% Within the bound, the VM's choice.
    Short = lists:duplicate(1024, $a) ++ [0],
    ok = cut_of(fmt(Short), format_oracle:text(Short)),
    ShortBin = <<(binary:copy(<<"a">>, 1024))/binary, 0>>,
    ok = cut_of(fmt(ShortBin), format_oracle:text(ShortBin)).

%% Each mode's exact text, per field kind.
t_payload_texts(_Config) ->
    Login = {login, <<"alice">>, #{password => <<"hunter2">>, tries => 3}},
    <<"{login,<<\"alice\">>,#{password=><<\"hunter2\">>,tries=>3}}">> = mode(Login, full),
    <<"{login,<<_:5/binary>>,#{password=><<_:7/binary>>,tries=><int:1>}}">> = mode(Login, shape),
    <<"55">> = mode(Login, size),
    <<"-">> = mode(Login, none),
    Redact = #{redact => [password]},
    <<"{login,<<\"alice\">>,#{password=><redacted>,tries=>3}}">> = fmt3(Login, Redact),
    <<"{login,<<_:5/binary>>,#{password=><redacted>,tries=><int:1>}}">> =
        fmt3(Login, Redact#{payload => shape}),
    <<"52">> = fmt3(Login, Redact#{payload => size}),
    %% Proplists: any 2-tuple whose first element is the key, at any depth.
    <<"[{user,\"bob\"},{password,<redacted>}]">> =
        fmt3([{user, "bob"}, {password, "pw"}], Redact),
    <<"{a,[{b,{password,<redacted>}}]}">> = fmt3({a, [{b, {password, 1}}]}, Redact),
    %% Keys of any type, matched exactly (=:=): 1 is not 1.0.
    Keys = #{redact => [<<"token">>, 1, {k}]},
    <<"#{1=><redacted>,{k}=><redacted>,<<\"token\">>=><redacted>}">> =
        fmt3(#{<<"token">> => x, 1 => y, {k} => z}, Keys),
    <<"{1.000000e+00,y}">> = fmt3({1.0, y}, Keys),
    <<"{password,a,b}">> = fmt3({password, a, b}, Redact),
    %% Every leaf type in shape; atoms and identifiers stay.
    Leaves = [-42, 0, 18446744073709551615, -9223372036854775808, 1 bsl 64,
              -(1 bsl 63) - 1, 1.5, "héllo", "", [1, 2 | 3], <<>>, <<1:3>>,
              fun lists:map/2, self(), 'Quoted', [a | "bc"]],
    Self = list_to_binary(pid_to_list(self())),
    Expected = iolist_to_binary(
                 ["[<int:2>,<int:1>,<int:20>,<int:19>,<bigint>,<bigint>,<float>,",
                  "<string:5>,[],[<int:1>,<int:1>|<int:1>],<<_:0/binary>>,",
                  "<<_/bitstring>>,<fun>,", Self, ",'Quoted',[a,<int:2>,<int:2>]]"]),
    Expected = mode(Leaves, shape),
    %% `payload => Mode' leaves registered names alone; a map sets kinds.
    Atom = 'my name',
    <<"'my name'">> = fmt3(Atom, name, #{payload => none}),
    <<"-">> = fmt3(Atom, driver, #{payload => none}),
    <<"-">> = fmt3(Atom, callback, #{payload => none}),
    <<"-">> = fmt3(Atom, name, #{payload => #{name => none}}),
    PerKind = #{payload => #{message => shape, reason => size}},
    <<"{<int:2>}">> = fmt3({42}, message, PerKind),
    <<"4">> = fmt3({42}, reason, PerKind),
    <<"{42}">> = fmt3({42}, driver, PerKind),
    %% Checked as tracer/1 checks them.
    ?assertError({badarg, {kind, pid}}, fmt3(x, pid, #{})),
    [?assertError({badarg, {Key, Value}}, fmt3(x, #{Key => Value}))
     || {Key, Value} <- [{payload, fast}, {payload, #{message => fast}},
                         {payload, #{pid => none}}, {payload, "full"},
                         {redact, password}, {redact, [a | b]},
                         {redact, lists:seq(1, 33)}, {max_term_bytes, 63}]],
    <<"<<_:3/binary>>">> = fmt3(<<"abc">>, #{redact => lists:seq(1, 32), payload => shape}).

%% Shape and size of huge and deep terms: bounded like full, cut within
%% the budget; strings counted up to a bound.
t_payload_huge_terms(_Config) ->
    Deep = lists:foldl(fun(_, Acc) -> [Acc] end, [], lists:seq(1, 2000000)),
    Brackets = binary:copy(<<"[">>, 1021),
    <<Brackets:1021/binary, "...">> = mode(Deep, shape),
    <<">1024">> = mode(Deep, size),
    <<"<string:>1025>">> = mode(lists:duplicate(3000000, $a), shape),
    <<"<string:1025>">> = mode(lists:duplicate(1025, $a), shape),
    <<"[<int:2>,<int:2>,", _/binary>> = mode(lists:duplicate(1024, $a) ++ [0], shape),
    %% Printable as far as the bound: a string, as in full.
    <<"<string:>1025>">> = mode(lists:duplicate(1025, $a) ++ [0], shape),
    <<"<<_:67108864/binary>>">> = mode(binary:copy(<<"x">>, 64 * 1024 * 1024), shape),
    <<"{ok,<bigint>}">> = mode({ok, 1 bsl 1000000}, shape),
    <<">1024">> = mode({ok, 1 bsl 1000000}, size),
    <<"13">> = mode(1.0e300, size),
    %% Strings share one scan allowance of twice the budget per text.
    Strings = lists:duplicate(300, lists:duplicate(3000, $a)),
    <<"[<string:>201>,<string:>200>,<string:>1>,", _/binary>> =
        fmt3(Strings, #{payload => shape, max_term_bytes => 200}),
    Map = maps:from_list([{K, <<K:64>>} || K <- lists:seq(1, 1000000)]),
    <<"#{<int:", _/binary>> = MapText = mode(Map, shape),
    nomatch = binary:match(MapText, <<"<<0,">>),
    true = byte_size(MapText) =< 1024.

%%% PROPERTIES %%%

%% Random nested terms of every type: the full text is the VM's (after
%% the UTF-8 difference), a cut text is its prefix within the budget.
%% PropEr draws a seed and a budget; the term is built from the seed with
%% `rand' (much faster than PropEr's own generators, and a failing seed
%% rebuilds its term: `random_term(Seed)').
prop_matches_vm(_Config) ->
    Prop = ?FORALL({Seed, Max}, {seed_g(), proper_types:choose(64, 2048)},
                   begin
                       Term = random_term(Seed),
                       ?WHENFAIL(ct:pal("seed ~w: random_term(~w)", [Seed, Seed]),
                                 check_term(Term, Max))
                   end),
    quickcheck(Prop, ?PROPERTY_CASES, [noshrink]).

%% Atoms of any characters, which the VM writes in UTF-8 itself.
prop_unicode_atoms(_Config) ->
    Char = proper_types:oneof([proper_types:choose(0, 255), proper_types:choose(256, 2100),
                               proper_types:choose(16#3040, 16#30FF),
                               proper_types:choose(16#1F600, 16#1F64F)]),
    Atom = ?LET(Chars, proper_types:list(Char), list_to_atom(lists:sublist(Chars, 255))),
    Prop = ?FORALL({A, Max}, {Atom, proper_types:choose(64, 300)},
                   begin
                       Term = {A, [A, A]},
                       Expected = format_oracle:text(Term),
                       ?WHENFAIL(ct:pal("atom ~w (~w), budget ~w", [A, atom_to_list(A), Max]),
                                 fmt(Term, ?BIG) =:= Expected
                                 andalso check_cut(Expected, fmt(Term, Max), Max))
                   end),
    quickcheck(Prop, 2000).

%% Maps over 32 keys: written flat, `#{K=>V,...}', each pair as the VM
%% writes K and V, in the order maps:to_list/1 returns.
prop_big_maps(_Config) ->
    Gen = ?LET({N, Values}, {proper_types:choose(33, 150),
                             proper_types:vector(150, leaf_g())},
               maps:from_list(lists:zip(lists:seq(1, N), lists:sublist(Values, N)))),
    Prop = ?FORALL(Map, Gen,
                   begin
                       Text = fmt(Map, ?BIG),
                       ?WHENFAIL(ct:pal("map ~w~ngot ~s", [Map, Text]),
                                 flat_map_text(Map, Text))
                   end),
    quickcheck(Prop, 300).

%% Random terms, redacting some of their own subterms: each mode's text is
%% the model's (README's definitions, written recursively below).
prop_payload_model(_Config) ->
    Prop = ?FORALL({Seed, Picks}, {seed_g(), proper_types:list(proper_types:choose(0, 999))},
                   begin
                       Term = random_term(Seed),
                       Keys = pick_keys(Term, Picks),
                       Options = #{redact => Keys, max_term_bytes => ?BIG},
                       Full = model(Term, full, Keys, ?BIG),
                       Got = [fmt3(Term, Options#{payload => M}) || M <- [full, shape, size, none]],
                       Want = [Full, model(Term, shape, Keys, ?BIG),
                               integer_to_binary(byte_size(Full)), <<"-">>],
                       ?WHENFAIL(ct:pal("seed ~w, keys ~w~ngot  ~p~nwant ~p",
                                        [Seed, Keys, Got, Want]),
                                 Got =:= Want)
                   end),
    quickcheck(Prop, 5000, [noshrink]).

%% Under any budget: full and shape are the model's text or a prefix of it
%% ending in `...', within the budget and valid UTF-8; size says `>Max'
%% exactly when the full text is longer than the budget.
prop_payload_cut(_Config) ->
    Prop = ?FORALL({Seed, Max, Picks}, {seed_g(), proper_types:choose(64, 400),
                                        proper_types:list(proper_types:choose(0, 999))},
                   begin
                       Term = random_term(Seed),
                       Keys = pick_keys(Term, Picks),
                       Options = #{redact => Keys, max_term_bytes => Max},
                       Full = model(Term, full, Keys, ?BIG),
                       Size = case byte_size(Full) > Max of
                                  true -> <<">", (integer_to_binary(Max))/binary>>;
                                  false -> integer_to_binary(byte_size(Full))
                              end,
                       Shape = model(Term, shape, Keys, Max),
                       [FullText, ShapeText, SizeText] =
                           [fmt3(Term, Options#{payload => M}) || M <- [full, shape, size]],
                       ?WHENFAIL(ct:pal("seed ~w, max ~w, keys ~w~n~p",
                                        [Seed, Max, Keys, [FullText, ShapeText, SizeText]]),
                                 check_cut(Full, FullText, Max)
                                 andalso check_cut(Shape, ShapeText, Max)
                                 andalso SizeText =:= Size)
                   end),
    quickcheck(Prop, 3000, [noshrink]).

%% A secret in binaries, strings, integers and map values, in records,
%% lists and deep terms, among random terms: no mode but full shows it,
%% and full shows none of it when it is only under redacted keys.
prop_secrets_hidden(_Config) ->
    Secret = ?LET({Chars, Int}, {proper_types:vector(12, proper_types:choose($A, $Z)),
                                 proper_types:choose(1 bsl 50, 1 bsl 60)},
                  {list_to_binary(Chars), Int}),
    Prop = ?FORALL({Seed, {Bin, Int}}, {seed_g(), Secret},
                   begin
                       Keyed = payload_secrets:keyed(Bin, Int),
                       Bare = {random_term(Seed), payload_secrets:bare(Bin, Int), Keyed,
                               random_term(Seed + 1)},
                       Texts = [fmt3(Bare, #{payload => M, max_term_bytes => ?BIG}) || M <- [shape, size, none]]
                           ++ [fmt3({random_term(Seed), Keyed}, #{redact => [password], max_term_bytes => ?BIG})],
                       Shown = [T || T <- Texts, payload_secrets:shown(T, Bin, Int)],
                       ?WHENFAIL(ct:pal("seed ~w, secret ~s ~w: ~p", [Seed, Bin, Int, Shown]),
                                 Shown =:= []
                                 andalso payload_secrets:shown(fmt3(Bare, #{max_term_bytes => ?BIG}), Bin, Int))
                   end),
    quickcheck(Prop, 2000, [noshrink]).

quickcheck(Prop, Cases) ->
    quickcheck(Prop, Cases, []).

quickcheck(Prop, Cases, Opts) ->
    Result = proper:quickcheck(Prop, [{numtests, Cases}, quiet, long_result | Opts]),
    ct:pal("~w cases: ~p", [Cases, Result]),
    true = Result.

check_term(Term, Max) ->
    Expected = expected(Term),
    Full = fmt(Term, ?BIG),
    Cut = fmt(Term, Max),
    ?WHENFAIL(ct:pal("term ~w~nbudget ~w~nexpected ~w~nfull ~w~ncut ~w",
                     [Term, Max, Expected, Full, Cut]),
              check_cut(Expected, Full, ?BIG) andalso check_cut(Expected, Cut, Max)).

%% Text is Expected if that fits in Max, else a prefix of it ending in
%% `...', within Max, valid UTF-8, cut at most one character early.
check_cut(Expected, Text, Max) when byte_size(Expected) =< Max ->
    Text =:= Expected;
check_cut(Expected, Text, Max) ->
    Size = byte_size(Text),
    Size =< Max andalso utf8_cut_of(Text, Expected) =:= ok
        andalso Size >= Max - 3.

%%% RANDOM TERMS (from a seed) %%%

%% 48 uniform bits (PropEr's wide integer ranges stay near its size).
seed_g() ->
    Part = proper_types:choose(0, 65535),
    ?LET({A, B, C}, {Part, Part, Part}, (A bsl 32) bor (B bsl 16) bor C).

%% A nested term of every type, depth 1 to 5, up to 6 children each. Uses
%% the process's `rand' state, which PropEr uses too: put back after.
random_term(Seed) ->
    Saved = rand:export_seed(),
    _ = rand:seed(exsss, Seed),
    Term = r_term(rand:uniform(5)),
    _ = Saved =/= undefined andalso rand:seed(Saved),
    Term.

r_term(0) ->
    r_leaf();
r_term(Depth) ->
    Sub = fun() -> r_term(Depth - 1) end,
    case rand:uniform(9) of
        N when N =< 3 -> r_leaf();
        N when N =< 5 -> r_list(Sub);
        6 -> list_to_tuple(r_list(Sub));
        7 -> maps:from_list(r_list(fun() -> {Sub(), Sub()} end));
        8 -> [Sub() | r_list(Sub)] ++ improper(r_leaf());
        9 -> [r_leaf() | r_leaf()]
    end.

improper(Tail) when is_list(Tail) -> {Tail};
improper(Tail) -> Tail.

r_list(Gen) ->
    [Gen() || _ <- lists:seq(1, rand:uniform(7) - 1)].

r_leaf() ->
    case rand:uniform(17) of
        1 -> r_atom();
        2 -> rand:uniform(2001) - 1001;
        3 -> (rand:uniform(1 bsl 62) - (1 bsl 61)) * rand:uniform(64);
        4 -> r_sign() * ((1 bsl (58 + rand:uniform(640))) + rand:uniform(1 bsl 60));
        5 -> r_float();
        6 -> r_string();
        7 -> r_chars(fun() -> rand:uniform(301) - 1 end);
        8 -> list_to_binary(r_chars(fun() -> rand:uniform(256) - 1 end));
        9 -> list_to_binary([$x | r_chars(fun() -> 31 + rand:uniform(95) end)]);
        10 -> <<(list_to_binary(r_chars(fun() -> rand:uniform(256) - 1 end)))/binary,
                (rand:uniform(128)):(rand:uniform(7))>>;
        11 -> unaligned(list_to_binary(r_chars(fun() -> 31 + rand:uniform(95) end)));
        12 -> r_pick([self(), hd(erlang:ports()), make_ref(), remote_pid(), remote_port(),
                      remote_ref()]);
        13 -> r_pick([fun lists:reverse/1, fun() -> ok end, fun(X) -> {X} end,
                      fun 'Quoted Atom':'b c'/0, fun lists:map/2, fun erlang:self/0,
                      fun no_such_module:f/255]);
        14 -> r_pick([[], {}, #{}, <<>>, "", [[]], {{}}]);
        15 -> r_chars(fun() -> r_pick([$a, $\n, $\t, $\r, $", $\\, 233, 160, 255, 0, 12, 127, 128, 256]) end);
        16 -> lists:duplicate(rand:uniform(60), $a) ++ r_pick(["", [0], "b", [300]]);
        17 -> r_bits()
    end.

%% A bitstring that is not whole bytes, at any bit offset of its parent,
%% on the heap or off it.
r_bits() ->
    Offset = rand:uniform(8) - 1,
    Bits = rand:uniform(7),
    Bytes = rand:bytes(r_pick([0, 1, rand:uniform(70), 64 + rand:uniform(200)])),
    <<_:Offset, Rest/bitstring>> = <<0:Offset, Bytes/binary, (rand:uniform(256)):Bits>>,
    Rest.

r_atom() ->
    case rand:uniform(3) of
        1 -> r_pick(['Quoted Atom', '-t_call/1-fun-1-', '', 'and', 'a@b', ok, 'don\'t',
                     'a\\b', 'A', '_', 'a\tb', 'a\x{7f}', aB_9, 'a\x{1}']);
        2 -> list_to_atom(r_chars(fun() -> $a + rand:uniform(26) - 1 end));
        3 -> list_to_atom(r_chars(fun() -> rand:uniform(128) - 1 end))
    end.

r_float() ->
    case rand:uniform(3) of
        1 -> r_pick([0.0, -0.0, 1.0e300, -1.0e-300, 5.0e-324, 0.1, 1.5, 123456789.0,
                     1.7976931348623157e308]);
        2 -> (rand:uniform() - 0.5) * 1.0e6;
        3 -> r_sign() * rand:uniform() * math:pow(10, rand:uniform(600) - 300)
    end.

%% Printable Latin-1, with the characters that need care.
r_string() ->
    [$s | r_chars(fun() ->
                          case rand:uniform(4) of
                              1 -> 159 + rand:uniform(97);
                              2 -> r_pick([$\n, $\t, $\r, $", $\\, $']);
                              _ -> 31 + rand:uniform(95)
                          end
                  end)].

r_chars(Gen) ->
    [Gen() || _ <- lists:seq(1, rand:uniform(40) - 1)].

r_pick(List) ->
    lists:nth(rand:uniform(length(List)), List).

r_sign() ->
    r_pick([1, -1]).

unaligned(Bin) ->
    Offset = rand:uniform(7),
    <<_:Offset, Rest/bitstring>> = <<0:Offset, Bin/binary>>,
    Rest.

%%% GENERATORS %%%

leaf_g() ->
    proper_types:oneof(
      [atom_g(), proper_types:integer(), bignum_g(), float_g(), string_g(),
       proper_types:list(proper_types:choose(0, 300)), proper_types:binary(),
       printable_binary_g(), bitstring_g(), unaligned_g(), unaligned_bits_g(), identifier_g(),
       proper_types:elements([[], {}, #{}, <<>>, "", fun lists:reverse/1,
                              fun() -> ok end, fun(X) -> {X} end])]).

%% ASCII atoms only: the rest of the oracle's text is then Latin-1, and
%% converts to UTF-8 as a whole (prop_unicode_atoms covers the others).
atom_g() ->
    proper_types:oneof(
      [proper_types:elements(['Quoted Atom', '-t_call/1-fun-1-', '', 'and', 'a@b', ok,
                              'don\'t', 'a\\b', 'A', '_', 'a\tb', 'a\x{7f}']),
       ?LET(Chars, proper_types:list(proper_types:choose($a, $z)), list_to_atom(Chars)),
       ?LET(Chars, proper_types:list(proper_types:choose(0, 127)), list_to_atom(Chars))]).

bignum_g() ->
    ?LET({Sign, Bits, Low}, {proper_types:elements([1, -1]), proper_types:choose(59, 700),
                             proper_types:non_neg_integer()},
         Sign * ((1 bsl Bits) + Low)).

float_g() ->
    proper_types:oneof([proper_types:float(),
                        proper_types:elements([0.0, -0.0, 1.0e300, -1.0e-300, 5.0e-324,
                                               0.1, 1.5, 123456789.0])]).

string_g() ->
    Char = proper_types:oneof([proper_types:choose(32, 126), proper_types:choose(160, 255),
                               proper_types:elements([$\n, $\t, $\r, $", $\\, $'])]),
    proper_types:non_empty(proper_types:list(Char)).

printable_binary_g() ->
    ?LET(Chars, proper_types:non_empty(proper_types:list(proper_types:choose(32, 126))),
         list_to_binary(Chars)).

bitstring_g() ->
    ?LET({Bin, Bits, Value}, {proper_types:binary(), proper_types:choose(1, 7),
                              proper_types:non_neg_integer()},
         <<Bin/binary, Value:Bits>>).

%% A bitstring that is not whole bytes, at a bit offset of its parent,
%% small or not.
unaligned_bits_g() ->
    ?LET({Bin, Copies, Offset, Bits, Value},
         {proper_types:binary(), proper_types:choose(1, 40), proper_types:choose(0, 7),
          proper_types:choose(1, 7), proper_types:non_neg_integer()},
         begin
             Whole = binary:copy(Bin, Copies),
             <<_:Offset, Rest/bitstring>> = <<0:Offset, Whole/binary, Value:Bits>>,
             Rest
         end).

%% A binary that does not start on a byte boundary of its parent.
unaligned_g() ->
    ?LET({Bin, Offset}, {proper_types:binary(), proper_types:choose(1, 7)},
         begin
             <<_:Offset, Rest/bitstring>> = <<0:Offset, Bin/binary>>,
             Rest
         end).

identifier_g() ->
    proper_types:elements([self(), hd(erlang:ports()), make_ref(), remote_pid(),
                           remote_port(), remote_ref()]).

%%% PAYLOAD MODEL %%%

%% The text README defines for `Term' in mode `full' or `shape', the values
%% under `Keys' redacted; `Max' sets shape's string scans (up to Max + 1
%% elements per list, 2 * Max in all).
model(Term, Mode, Keys, Max) ->
    {Text, _Left} = m(Term, Mode, Keys, Max, 2 * Max),
    iolist_to_binary(Text).

%% {Text, Left}: Left is what remains of the scan allowance.
m([], _Mode, _Keys, _Max, Left) ->
    {"[]", Left};
m([_ | _] = List, full, Keys, Max, Left) ->
    case printable(List) of
        true -> {fmt(List, ?BIG), Left};
        false -> m_list(List, full, Keys, Max, Left)
    end;
m([H | _] = List, shape, Keys, Max, Left) ->
    case is_char(H) andalso string_shape(List, min(Max + 1, Left + 1), 0) of
        {string, Text, Seen} -> {Text, max(Left - Seen, 0)};
        {not_string, Seen} -> m_list(List, shape, Keys, Max, max(Left - Seen, 0));
        false -> m_list(List, shape, Keys, Max, Left)
    end;
m(Tuple, Mode, Keys, Max, Left) when is_tuple(Tuple) ->
    case Tuple of
        {K, _} ->
            case redacted(K, Keys) of
                true ->
                    {KText, Left1} = m(K, Mode, Keys, Max, Left),
                    {["{", KText, ",<redacted>}"], Left1};
                false ->
                    m_seq(tuple_to_list(Tuple), Mode, Keys, Max, Left, "{", "}")
            end;
        _ ->
            m_seq(tuple_to_list(Tuple), Mode, Keys, Max, Left, "{", "}")
    end;
m(Map, Mode, Keys, Max, Left) when is_map(Map) ->
    Pair = fun({K, V}, L0) ->
                   {KText, L1} = m(K, Mode, Keys, Max, L0),
                   case redacted(K, Keys) of
                       true ->
                           {[KText, "=><redacted>"], L1};
                       false ->
                           {VText, L2} = m(V, Mode, Keys, Max, L1),
                           {[KText, "=>", VText], L2}
                   end
           end,
    {Pairs, Left1} = lists:mapfoldl(Pair, Left, maps:to_list(Map)),
    {["#{", lists:join(",", Pairs), "}"], Left1};
m(Leaf, full, _Keys, _Max, Left) ->
    {fmt(Leaf, ?BIG), Left};
m(Leaf, shape, _Keys, _Max, Left) ->
    {leaf_shape(Leaf), Left}.

m_list(List, Mode, Keys, Max, Left) ->
    {Elems, Tail} = split_tail(List, []),
    case Tail of
        [] ->
            m_seq(Elems, Mode, Keys, Max, Left, "[", "]");
        _ ->
            {Texts, Left1} = lists:mapfoldl(fun(E, L) -> m(E, Mode, Keys, Max, L) end,
                                            Left, Elems),
            {TailText, Left2} = m(Tail, Mode, Keys, Max, Left1),
            {["[", lists:join(",", Texts), "|", TailText, "]"], Left2}
    end.

m_seq(Elems, Mode, Keys, Max, Left, Open, Close) ->
    {Texts, Left1} = lists:mapfoldl(fun(E, L) -> m(E, Mode, Keys, Max, L) end, Left, Elems),
    {[Open, lists:join(",", Texts), Close], Left1}.

split_tail([H | T], Acc) -> split_tail(T, [H | Acc]);
split_tail(Tail, Acc) -> {lists:reverse(Acc), Tail}.

%% A list whose first element is a character, looked at up to Limit
%% elements: `<string:N>', `<string:>N>' (goes on past N), or not a string.
string_shape([], _Limit, Seen) when Seen > 0 ->
    {string, ["<string:", integer_to_list(Seen), ">"], Seen};
string_shape(_Rest, Limit, Seen) when Seen >= Limit ->
    {string, ["<string:>", integer_to_list(Seen), ">"], Seen};
string_shape([C | Rest], Limit, Seen) ->
    case is_char(C) of
        true -> string_shape(Rest, Limit, Seen + 1);
        false -> {not_string, Seen}
    end;
string_shape(_Improper, _Limit, Seen) ->
    {not_string, Seen}.

printable(List) ->
    case split_tail(List, []) of
        {[_ | _] = Elems, []} -> lists:all(fun is_char/1, Elems);
        _ -> false
    end.

is_char(C) ->
    is_integer(C) andalso ((C >= 32 andalso C =< 126) orelse (C >= 160 andalso C =< 255)
                           orelse C =:= $\n orelse C =:= $\t orelse C =:= $\r).

leaf_shape(I) when is_integer(I), I >= -(1 bsl 63), I < 1 bsl 64 ->
    ["<int:", integer_to_list(length(integer_to_list(abs(I)))), ">"];
leaf_shape(I) when is_integer(I) -> "<bigint>";
leaf_shape(F) when is_float(F) -> "<float>";
leaf_shape(B) when is_binary(B) -> ["<<_:", integer_to_list(byte_size(B)), "/binary>>"];
leaf_shape(B) when is_bitstring(B) -> "<<_/bitstring>>";
leaf_shape(F) when is_function(F) -> "<fun>";
leaf_shape(Other) -> fmt(Other, ?BIG).

redacted(Key, Keys) ->
    lists:any(fun(K) -> K =:= Key end, Keys).

%% Up to four of the term's own subterms, so that some keys match.
pick_keys(Term, Picks) ->
    Subterms = subterms(Term),
    [lists:nth(1 + P rem length(Subterms), Subterms) || P <- lists:sublist(Picks, 4)].

subterms(Term) ->
    [Term | lists:flatmap(fun subterms/1, children(Term))].

mode(Term, Mode) ->
    fmt3(Term, #{payload => Mode}).

fmt3(Term, Options) ->
    fmt3(Term, message, Options).

fmt3(Term, Kind, Options) ->
    dyntrace:format_term(Term, Kind, Options).

%%% HELPERS %%%

fmt(Term) -> dyntrace:format_term(Term, 1024).

fmt(Term, Max) -> dyntrace:format_term(Term, Max).

%% The VM's text with the UTF-8 difference applied: in terms whose atoms
%% are ASCII, the only bytes over 127 are Latin-1 characters of strings.
expected(Term) ->
    unicode:characters_to_binary(format_oracle:text(Term), latin1, utf8).

same_as_vm(Terms) ->
    [case {fmt(T, ?BIG), expected_any(T)} of
         {Same, Same} -> ok;
         {Got, Want} -> ct:fail({differs, T, {got, Got}, {vm, Want}})
     end || T <- Terms],
    ok.

%% For hand-picked terms: convert only when the term has no non-ASCII atom.
expected_any(Term) ->
    case has_unicode_atom(Term) of
        true -> format_oracle:text(Term);
        false -> expected(Term)
    end.

has_unicode_atom(A) when is_atom(A) -> lists:any(fun(C) -> C > 127 end, atom_to_list(A));
has_unicode_atom(F) when is_function(F) ->
    {module, M} = erlang:fun_info(F, module),
    {name, N} = erlang:fun_info(F, name),
    has_unicode_atom(M) orelse has_unicode_atom(N);
has_unicode_atom(T) -> lists:any(fun has_unicode_atom/1, children(T)).

children([H | T]) -> [H, T];
children(T) when is_tuple(T) -> tuple_to_list(T);
children(M) when is_map(M) -> maps:keys(M) ++ maps:values(M);
children(_) -> [].

%% Text ends in `...', what precedes is a prefix of Full, valid UTF-8.
utf8_cut_of(Text, Full) ->
    Size = byte_size(Text) - 3,
    case Text of
        <<Prefix:Size/binary, "...">> ->
            case {binary:longest_common_prefix([Prefix, Full]),
                  unicode:characters_to_binary(Text)} of
                {Size, Text} -> ok;
                Other -> {not_a_utf8_prefix, Other}
            end;
        _ ->
            {no_ellipsis, Text}
    end.

cut_of(Text, Full) ->
    cut_of(Text, Full, 1024).

cut_of(Text, Full, Max) ->
    true = byte_size(Text) =< Max andalso byte_size(Text) >= Max - 3,
    ok = utf8_cut_of(Text, Full).

%% `#{K=>V,...}', K and V as the VM writes them, the pairs in the order
%% maps:to_list/1 returns.
flat_map_text(Map, Text) ->
    Pairs = [[expected(K), "=>", expected(V)] || {K, V} <- maps:to_list(Map)],
    Text =:= iolist_to_binary(["#{", lists:join(",", Pairs), "}"]).

%% Terms from another node, made from their external format.
remote_pid() ->
    binary_to_term(<<131, 88, 100, 10:16, "other@host", 42:32, 7:32, 1:32>>).

remote_port() ->
    binary_to_term(<<131, 89, 100, 10:16, "other@host", 42:32, 1:32>>).

remote_ref() ->
    binary_to_term(<<131, 90, 3:16, 100, 10:16, "other@host", 1:32, 1:32, 2:32, 3:32>>).
