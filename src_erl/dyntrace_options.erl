%%% @doc The tracer's options checked against the NIF's own limits
%%% (`dyntrace:option_limits/0'), once, where they are passed: what
%%% `dyntrace:tracer/1' and the front door put in a tracer state. The
%%% options are listed in docs/reference.md.
-module(dyntrace_options).

-export([validate/1, kind/1]).

%% @doc `Options' as a tracer state (`[]' means the defaults); an unknown
%% key or a value out of range raises `error({badarg, {Key, Value}})'.
%% `max_events => N' becomes a new event budget.
-spec validate(term()) -> dyntrace:tracer_state().
validate([]) ->
    [];
validate(Options) when is_map(Options) ->
    Limits = dyntrace:option_limits(),
    maps:map(fun(Key, Value) -> validate(Key, Value, Limits) end, Options);
validate(Options) ->
    error({badarg, {options, Options}}).

%% @doc `Kind' when it is a field kind the payload options name, else
%% raises `error({badarg, {kind, Kind}})'.
-spec kind(term()) -> dyntrace:field_kind().
kind(Kind) ->
    #{kinds := Kinds} = dyntrace:option_limits(),
    lists:member(Kind, Kinds) orelse error({badarg, {kind, Kind}}),
    Kind.

validate(max_term_bytes, N, #{max_term_bytes := {Min, Max, _}})
  when is_integer(N), N >= Min, N =< Max ->
    N;
validate(payload, Mode, #{payload := Modes}) when is_atom(Mode) ->
    lists:member(Mode, Modes) orelse error({badarg, {payload, Mode}}),
    Mode;
validate(payload, PerKind, #{payload := Modes, kinds := Kinds}) when is_map(PerKind) ->
    Valid = fun(Kind, Mode) -> lists:member(Kind, Kinds) andalso lists:member(Mode, Modes) end,
    maps:size(maps:filter(Valid, PerKind)) =:= maps:size(PerKind)
        orelse error({badarg, {payload, PerKind}}),
    PerKind;
validate(redact, Keys, #{redact := MaxKeys}) when is_list(Keys) ->
    Length = try length(Keys) catch error:badarg -> -1 end,
    Length >= 0 andalso Length =< MaxKeys
        orelse error({badarg, {redact, Keys}}),
    Keys;
validate(max_events, N, #{max_events := {Min, Max}})
  when is_integer(N), N >= Min, N =< Max ->
    dyntrace:new_event_budget(N);
validate(max_events, Budget, _Limits) when is_reference(Budget) ->
    try dyntrace:events_left(Budget) of
        _ -> Budget
    catch
        error:badarg -> error({badarg, {max_events, Budget}})
    end;
validate(Key, Value, _Limits) ->
    error({badarg, {Key, Value}}).
