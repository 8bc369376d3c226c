%%% @doc A `mix release' step that makes room for our `dyntrace' module:
%%% `runtime_tools' ships a `dyntrace' of its own, and `mix release'
%%% refuses two modules of one name ("Duplicated modules"). In `mix.exs':
%%% ```
%%% releases: [my_app: [steps: [&:dyntrace_release.without_otp_dyntrace/1, :assemble]]]
%%% '''
%%% docs/releases.md says why and what was checked.
-module(dyntrace_release).

-include_lib("kernel/include/file.hrl").

-export([without_otp_dyntrace/1]).

%% The directory, under the Mix build path, that holds the copy.
-define(COPY, "runtime_tools_without_dyntrace").

%% @doc The release (Mix's `%Mix.Release{}') with `runtime_tools' taken
%% from a copy that lacks `dyntrace': its `ebin/' without `dyntrace.beam',
%% its `.app' file without `dyntrace' in `modules', its `priv/'. A release
%% without `runtime_tools' is answered as it is.
-spec without_otp_dyntrace(Release) -> Release when Release :: #{applications := map(), _ => _}.
without_otp_dyntrace(#{applications := #{runtime_tools := Props} = Apps} = Release) ->
    Source = proplists:get_value(path, Props),
    Copy = filename:join('Elixir.Mix.Project':build_path(), ?COPY),
    ok = copy_without_dyntrace(Source, Copy),
    Path = case is_binary(Source) of
               true -> unicode:characters_to_binary(Copy);
               false -> Copy
           end,
    Props1 = [{path, Path} | proplists:delete(path, Props)],
    Release#{applications := Apps#{runtime_tools := Props1}};
without_otp_dyntrace(Release) ->
    Release.

copy_without_dyntrace(Source, Copy) ->
    ok = remove_tree(Copy),
    Ebin = filename:join(Source, "ebin"),
    ok = filelib:ensure_path(filename:join(Copy, "ebin")),
    {ok, Files} = file:list_dir(Ebin),
    [{ok, _} = file:copy(filename:join(Ebin, F), filename:join([Copy, "ebin", F]))
     || F <- Files, F =/= "dyntrace.beam", F =/= "runtime_tools.app"],
    {ok, [{application, runtime_tools, Spec}]} =
        file:consult(filename:join(Ebin, "runtime_tools.app")),
    Modules = proplists:get_value(modules, Spec, []) -- [dyntrace],
    Spec1 = [{modules, Modules} | proplists:delete(modules, Spec)],
    ok = file:write_file(filename:join([Copy, "ebin", "runtime_tools.app"]),
                         io_lib:format("~p.~n", [{application, runtime_tools, Spec1}])),
    copy_tree(filename:join(Source, "priv"), filename:join(Copy, "priv")).

copy_tree(From, To) ->
    case filelib:is_dir(From) of
        true ->
            ok = filelib:ensure_path(To),
            {ok, Names} = file:list_dir(From),
            lists:foreach(fun(N) -> ok = copy_tree(filename:join(From, N),
                                                   filename:join(To, N)) end, Names);
        false ->
            case filelib:is_regular(From) of
                true ->
                    {ok, _} = file:copy(From, To),
                    {ok, #file_info{mode = Mode}} = file:read_file_info(From),
                    file:change_mode(To, Mode);
                false ->
                    ok
            end
    end.

remove_tree(Dir) ->
    case file:del_dir_r(Dir) of
        ok -> ok;
        {error, enoent} -> ok
    end.
