%% Test-only: the VM's own `%T' text of a term, through the C NIF in
%% format_oracle.c, which dyntrace_format_SUITE builds into its priv dir.
%% It is the reference our formatter is compared with; never shipped.
-module(format_oracle).
-export([build/1, text/1, text_prec/2]).

%% Compiles format_oracle.c into Dir and loads it.
build(Dir) ->
    Src = filename:join(filename:dirname(code:which(?MODULE)), "format_oracle.c"),
    Include = filename:join([code:root_dir(), "erts-" ++ erlang:system_info(version), "include"]),
    Lib = filename:join(Dir, "format_oracle"),
    Cmd = io_lib:format("cc -shared -fPIC -O2 -I'~s' -o '~s.so' '~s' 2>&1 && echo built",
                        [Include, Lib, source(Src)]),
    case lists:suffix("built\n", os:cmd(lists:flatten(Cmd))) of
        true -> erlang:load_nif(Lib, 0);
        false -> {error, {cc_failed, lists:flatten(Cmd), os:cmd(lists:flatten(Cmd))}}
    end.

%% rebar3 copies test/ into _build; the .c file sits next to the .erl
%% source, which may not be next to the .beam.
source(Default) ->
    case filelib:is_regular(Default) of
        true -> Default;
        false ->
            Src = proplists:get_value(source, ?MODULE:module_info(compile)),
            filename:join(filename:dirname(Src), "format_oracle.c")
    end.

%% The `%T' text of Term, in full.
text(_Term) -> erlang:nif_error(not_loaded).

%% The `%.*T' text of Term, as the VM cuts it at precision Prec.
text_prec(_Term, _Prec) -> erlang:nif_error(not_loaded).
