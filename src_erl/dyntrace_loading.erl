%%% @doc Where dyntrace's NIF libraries are, and what its loading logs
%%% when they cannot be loaded or when another dyntrace.beam shadows this
%%% one: `dyntrace''s on_load function's helpers. See docs/reference.md,
%%% "Loading and the LTTng session daemon".
-module(dyntrace_loading).

-export([nif_dir/0, log_not_loaded/2, check_shadowed/1]).

-define(PROVIDER, "libdyntrace_lttng.so").

%% @doc The application's `nif_dir' when set (`dyntrace record --nif' sets it
%% in a node whose libraries are not beside the code); else the `priv/'
%% beside the `ebin/' dyntrace's module came from, where a build or release puts
%% the libraries; else the application's `priv_dir', which the code server
%% guesses from the code path's directory names (another `dyntrace-*'
%% directory earlier on the path would win there).
-spec nif_dir() -> file:filename().
nif_dir() ->
    Set = try application:get_env(dyntrace, nif_dir) of
              {ok, NifDir} when is_list(NifDir) -> [NifDir];
              _ -> []
          catch
              %% No application controller yet (an early boot).
              error:_ -> []
          end,
    Beside = case code:which(dyntrace) of
                 Beam when is_list(Beam) ->
                     [filename:join(filename:dirname(filename:dirname(Beam)), "priv")];
                 _ ->
                     []
             end,
    App = case code:priv_dir(dyntrace) of
              {error, bad_name} -> [];
              Dir -> [Dir]
          end,
    Candidates = Set ++ Beside ++ App,
    case [D || D <- Candidates, filelib:is_regular(filename:join(D, ?PROVIDER))] of
        [Found | _] -> Found;
        [] -> hd(Candidates ++ ["priv"])
    end.

%% @doc Logs one line for each way the NIF can be missing, naming the fix.
-spec log_not_loaded(ok | {error, term()}, file:filename()) -> ok.
log_not_loaded(ok, _Library) ->
    ok;
log_not_loaded({error, no_lttng_ust}, _Library) ->
    logger:error("dyntrace: tracing is off: LTTng-UST's runtime library (liblttng-ust.so.1) "
                 "cannot be loaded; install it (Debian/Ubuntu: apt-get install liblttng-ust1; "
                 "Fedora: dnf install lttng-ust) and run l(dyntrace) again");
log_not_loaded({error, {missing, Provider}}, _Library) ->
    logger:error("dyntrace: tracing is off: no NIF library (~ts is missing); build dyntrace "
                 "with cargo and liblttng-ust-dev installed (rebar3 compile) and keep its "
                 "priv/ beside its ebin/", [Provider]);
log_not_loaded({error, {Reason, Text}}, Library) ->
    logger:error("dyntrace: tracing is off: cannot load the NIF library ~ts.so (~p: ~ts); "
                 "rebuild dyntrace (rebar3 compile, with cargo and liblttng-ust-dev)",
                 [Library, Reason, Text]).

%% @doc runtime_tools ships a module named dyntrace too. The next load of
%% dyntrace (l(dyntrace), a restart in interactive mode) takes the code
%% path's first dyntrace.beam: when that is not the loaded one (its MD5
%% `Ours'), say so.
-spec check_shadowed(binary()) -> ok.
check_shadowed(Ours) ->
    case code:where_is_file("dyntrace.beam") of
        non_existing ->
            ok;
        First ->
            case beam_lib:md5(First) of
                {ok, {dyntrace, Ours}} ->
                    ok;
                _ ->
                    logger:warning("dyntrace: the code path's first dyntrace.beam (~ts) is not "
                                   "this module, and the next load takes it; if it is "
                                   "runtime_tools's, leave it out of the release (relx: "
                                   "{exclude_modules, [{runtime_tools, [dyntrace]}]}; "
                                   "Mix: see docs/releases.md)", [First])
            end
    end.
