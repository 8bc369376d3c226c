%%% @doc OTP's user probes (`dyntrace:p/0..8', `pn/1..9', `user_trace_*',
%%% the tags): their arguments checked and padded as OTP's probes take
%%% them, then written by the NIF. `dyntrace' exports them; see
%%% docs/reference.md.
-module(dyntrace_user_probes).

-export([user_trace_s1/1, user_trace_i4s4/9, user_trace_n/10, probe/2,
         put_tag/1, get_tag/0, get_tag_data/0]).

%% Where put_tag/1 keeps the process's tag (a stock VM keeps none).
-define(TAG_KEY, '$dyntrace_tag').

%% @doc See {@link dyntrace:user_trace_s1/1}.
-spec user_trace_s1(iolist()) -> dyntrace:user_probe_result().
user_trace_s1(Message) when is_list(Message); is_binary(Message) ->
    dyntrace:emit_user_trace_s1(self(), Message);
user_trace_s1(Message) ->
    erlang:error(badarg, [Message]).

%% @doc See {@link dyntrace:user_trace_i4s4/9}.
-spec user_trace_i4s4(binary() | undefined, dyntrace:probe_int(), dyntrace:probe_int(),
                      dyntrace:probe_int(), dyntrace:probe_int(), dyntrace:probe_string(),
                      dyntrace:probe_string(), dyntrace:probe_string(),
                      dyntrace:probe_string()) -> dyntrace:user_probe_result().
user_trace_i4s4(Tag, I1, I2, I3, I4, S1, S2, S3, S4) ->
    dyntrace:user_probe_enabled(undefined)
        andalso user_trace(undefined, Tag, [I1, I2, I3, I4], [S1, S2, S3, S4]).

%% @doc See {@link dyntrace:user_trace_n/10}.
-spec user_trace_n(term(), binary() | undefined, dyntrace:probe_int(), dyntrace:probe_int(),
                   dyntrace:probe_int(), dyntrace:probe_int(), dyntrace:probe_string(),
                   dyntrace:probe_string(), dyntrace:probe_string(),
                   dyntrace:probe_string()) -> dyntrace:user_probe_result().
user_trace_n(Label, Tag, I1, I2, I3, I4, S1, S2, S3, S4)
  when is_integer(Label), Label >= 0, Label =< 1023 ->
    dyntrace:user_probe_enabled(Label)
        andalso user_trace(Label, Tag, [I1, I2, I3, I4], [S1, S2, S3, S4]);
user_trace_n(Label, Tag, I1, I2, I3, I4, S1, S2, S3, S4) ->
    erlang:error(badarg, [Label, Tag, I1, I2, I3, I4, S1, S2, S3, S4]).

%% @doc The probes `p' (`Label' `undefined') and `pn': up to four
%% integers, then up to four strings. The arguments are checked only when
%% the probe's event is enabled, as OTP's probes do, but for the label.
-spec probe(dyntrace:n_probe_label() | undefined, [dyntrace:probe_arg()]) ->
          dyntrace:user_probe_result().
probe(Label, Args) when Label =:= undefined;
                        is_integer(Label), Label >= 0, Label =< 1023 ->
    dyntrace:user_probe_enabled(Label) andalso probe_checked(Label, Args);
probe(Label, Args) ->
    erlang:error(badarg, [Label, Args]).

%% @doc See {@link dyntrace:put_tag/1}.
-spec put_tag(undefined | iodata()) -> binary() | undefined.
put_tag(Data) ->
    Tag = case Data of
              undefined -> undefined;
              _ -> unicode:characters_to_binary(Data)
          end,
    is_binary(Tag) orelse Tag =:= undefined orelse erlang:error(badarg, [Data]),
    VmOld = erlang:dt_put_tag(Tag),
    case put(?TAG_KEY, Tag) of
        undefined -> VmOld;
        Old -> Old
    end.

%% @doc See {@link dyntrace:get_tag/0}.
-spec get_tag() -> binary() | undefined.
get_tag() ->
    kept_or(fun erlang:dt_get_tag/0).

%% @doc See {@link dyntrace:get_tag_data/0}.
-spec get_tag_data() -> binary() | undefined.
get_tag_data() ->
    kept_or(fun erlang:dt_get_tag_data/0).

%% The tag put_tag/1 kept, else what the VM answers.
kept_or(Vm) ->
    case get(?TAG_KEY) of
        undefined -> Vm();
        Tag -> Tag
    end.

probe_checked(Label, Args) ->
    {Ints, Strings} = lists:splitwith(fun erlang:is_integer/1, Args),
    case length(Ints) =< 4 andalso length(Strings) =< 4 of
        true -> user_trace(Label, get_tag_data(), Ints, Strings);
        false -> erlang:error(badarg, [Label, Args])
    end.

%% Checks the shape (64-bit integers or `undefined', then iolists or
%% `undefined'), pads to four of each and writes the event.
user_trace(Label, Tag, Ints, Strings) ->
    Valid = (Tag =:= undefined orelse is_binary(Tag))
        andalso lists:all(fun is_probe_int/1, Ints)
        andalso lists:all(fun is_probe_string/1, Strings),
    Valid orelse erlang:error(badarg, [Label, Tag, Ints, Strings]),
    [I1, I2, I3, I4] = [int_or_zero(I) || I <- pad(Ints)],
    [S1, S2, S3, S4] = pad(Strings),
    dyntrace:emit_user_trace(Label, self(), Tag, {I1, I2, I3, I4}, {S1, S2, S3, S4}).

is_probe_int(I) -> I =:= undefined orelse (is_integer(I) andalso I >= -(1 bsl 63)
                                           andalso I < 1 bsl 63).

is_probe_string(S) -> S =:= undefined orelse is_list(S) orelse is_binary(S).

int_or_zero(undefined) -> 0;
int_or_zero(I) -> I.

pad(List) -> List ++ lists:duplicate(4 - length(List), undefined).
