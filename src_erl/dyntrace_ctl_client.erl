%%% @doc The requests `dyntrace_ctl', the front door's process, answers:
%%% one function each, which waits for a process being restarted. A module
%%% below the processes that `dyntrace_ctl' starts and calls (recordings,
%%% triage's controller), which ask it to set and undo their parts: their
%%% calls point down. See docs/architecture.md.
-module(dyntrace_ctl_client).

-export([start/1, start_sampler/1, stop/1, clear/0, status/0,
         record_start/1, record_parts/2, undo_parts/1, focus/1, recording/1]).

-define(SERVER, dyntrace_ctl).
%% How often a caller looks again for a dyntrace_ctl being restarted.
-define(RESTART_TRIES, 50).

%% @doc Sets a trace or calls plan: how many tracees or functions it matched.
-spec start(dyntrace_plans:plan()) -> {ok, non_neg_integer()} | {error, term()}.
start(Plan) ->
    call({start, Plan}).

%% @doc Starts a sampler: its id.
-spec start_sampler(dyntrace_sampler:plan()) -> {ok, pos_integer()} | {error, term()}.
start_sampler(SPlan) ->
    call({start_sampler, SPlan}).

%% @doc Ends entry `Id': a recording's worker (for the caller to stop), or
%% `ok' once a call or sampler is undone.
-spec stop(pos_integer()) -> ok | {recording, pid()} | {error, term()}.
stop(Id) ->
    call({stop, Id}).

%% @doc Undoes every entry but the recordings, and ends those: their workers.
-spec clear() -> {ok, [pid()]}.
clear() ->
    call(clear).

%% @doc The entries (as `dyntrace:status/0' lists them) and the recordings.
-spec status() -> {[map()], [map()]}.
status() ->
    call(status).

%% @doc Registers a recording (its worker is started under dyntrace's
%% supervisor with `Plan'): its id and worker.
-spec record_start(map()) -> {ok, pos_integer(), pid()} | {error, term()}.
record_start(Plan) ->
    call({record_start, Plan}).

%% @doc Sets the parts of recording `Id' (trace and calls plans, sampler
%% plans), all or none: the samplers' pids.
-spec record_parts(pos_integer(), [dyntrace_plans:plan() | dyntrace_sampler:plan()]) ->
          {ok, [pid()]} | {error, term()}.
record_parts(Id, Parts) ->
    call({record_parts, Id, Parts}).

%% @doc Undoes what the parts of recording `Id' set.
-spec undo_parts(pos_integer()) -> ok.
undo_parts(Id) ->
    call({undo_parts, Id}).

%% @doc Sets a focus window of triage's controller (the calling sampler):
%% a trace plan owned by the controller's recording, ended by its
%% duration, {@link stop/1} or the recording's end. Its id.
-spec focus(dyntrace_plans:plan()) -> {ok, pos_integer()} | {error, term()}.
focus(Plan) ->
    call({focus, self(), Plan}).

%% @doc The worker of recording `Id', if it runs.
-spec recording(pos_integer()) -> {ok, pid()} | {error, term()}.
recording(Id) ->
    call({recording, Id}).

%% Calls the owner; one that is being restarted is waited for, one that
%% ends during the call is an error, not an exit in the caller.
call(Request) ->
    call(Request, ?RESTART_TRIES).

call(Request, Tries) ->
    _ = dyntrace_sup:ensure_started(),
    case whereis(?SERVER) of
        undefined when Tries > 0 ->
            timer:sleep(20),
            call(Request, Tries - 1);
        undefined ->
            error({dyntrace_ctl, not_running});
        Pid ->
            try
                gen_server:call(Pid, Request, infinity)
            catch
                %% Not delivered: it ended before; its restart is asked.
                exit:{noproc, {gen_server, call, _}} when Tries > 0 ->
                    call(Request, Tries - 1);
                %% It ended during the call: asked again where that is
                %% harmless; otherwise what the call set, if anything, is
                %% in the table, and the restart lists it.
                exit:{_, {gen_server, call, _}} when Tries > 0, Request =:= status;
                                                     Tries > 0, Request =:= clear ->
                    call(Request, Tries - 1);
                exit:{Reason, {gen_server, call, _}} ->
                    {error, {dyntrace_ctl, Reason}}
            end
    end.
