%%% @doc LTTng tracing for a stock Erlang/OTP node.
%%%
%%% `dyntrace' is a tracer module (the `erl_tracer' interface) whose callbacks
%%% write LTTng-UST events of provider `org_erlang_dyntrace', the same events,
%%% fields and text that OTP's `--with-dynamic-trace=lttng' build writes. Its
%%% NIF needs no special VM build.
%%%
%%% Why it is safe on a production node: a trace event whose LTTng event is
%%% not enabled costs one load in the enabled check and is discarded by the
%%% runtime before anything is built (the runtime's dispatch to the tracer
%%% still costs something per event: clear trace flags you do not need,
%%% see the README's "What it costs"); an enabled one is written by LTTng-UST
%%% into lock-free per-CPU ring buffers outside the VM's heap, which drop
%%% (and count) events rather than block when they are full. No tracer
%%% process, no mailbox, nothing that grows with the event rate. A term is
%%% written at most `max_term_bytes' long, and its cost is bounded by that
%%% limit, not by the term's size or depth.
%%%
%%% The operator's story:
%%% ```
%%% 1> l(dyntrace).
%%% {module,dyntrace}
%%% 2> erlang:trace(new, true, [procs, {tracer, dyntrace, []}]).
%%% 0
%%% '''
%%% ```
%%% $ lttng create demo
%%% $ lttng enable-event -u -s demo org_erlang_dyntrace:process_register
%%% $ lttng track -u -s demo --vpid=4242     # os:getpid(): this node only
%%% $ lttng start demo
%%% '''
%%% ```
%%% 3> register(worker, spawn(timer, sleep, [infinity])).
%%% '''
%%% ```
%%% $ lttng stop demo && lttng view demo && lttng destroy demo
%%% [..] org_erlang_dyntrace:process_register: { cpu_id = 1 }, { pid = "<0.92.0>", name = "worker", type = "register" }
%%% '''
%%% Events are switched on and off from outside with `lttng enable-event' and
%%% `lttng disable-event': the tracer stays attached (`enabled(trace_status,
%%% ...)' answers `trace') and the next event sees the change.
%%%
%%% The front door does all of the above in one call, and undoes it in one:
%%% ```
%%% 1> dyntrace:trace(worker, [messages], #{duration => 60000}).
%%% {ok,1}
%%% 2> dyntrace:calls({queue, in, fun(_) -> return_trace() end}, #{max_events => 100}).
%%% {ok,1}
%%% 3> dyntrace:status().
%%% 4> dyntrace:clear().
%%% ok
%%% '''
%%% (see {@link trace/3}, {@link calls/2}, {@link clear/0}, {@link status/0}),
%%% and {@link record/2} makes the LTTng session too:
%%% ```
%%% 1> dyntrace:record([{trace, worker, [messages]}], #{duration => 10000}).
%%% {ok,"/tmp/dyntrace-record-20261128T083512Z-4242-1"}
%%% '''
%%%
%%% Options: `{tracer, dyntrace, Options}' where `Options' is `[]' or a map:
%%% - `max_term_bytes => 64..65536' (default 1024): the byte limit of a term
%%%   text;
%%% - `payload => full | shape | size | none' (default `full'): how much of a
%%%   term reaches the trace, for every term field but registered names; or
%%%   per field kind, `#{message => shape, reason => full}' (`message',
%%%   `reason', `name', `driver', `callback'; kinds not named stay `full');
%%% - `redact => [Key, ...]' (at most 32 keys): the value under any of these
%%%   keys, in maps and 2-tuples anywhere in a term, is written `<redacted>'
%%%   and never read;
%%% - `max_events => N': the tracer writes at most `N' events, then answers
%%%   `remove'; {@link tracer/1} turns `N' into the count the tracees share.
%%% README's "Term text" section defines each text; {@link format_term/3}
%%% shows it. Build the map with {@link tracer/1} to have a bad one rejected
%%% when it is written; an invalid state that reaches the callbacks means
%%% the defaults (a map naming `payload' or `redact' means empty texts
%%% instead: it fails closed), and every event written so is counted in
%%% {@link stats/0}.
-module(dyntrace).

%%% PUBLIC %%%
-export([tracer/0, tracer/1, format_term/2, format_term/3, events/0, enabled_events/0, stats/0,
         announce_nodes/0, announce_processes/0]).

%%% PRIVATE EXPORTS %%%
-export([emit_node_name/4, emit_user_trace_s1/2, emit_user_trace/5, user_probe_enabled/1]).

%%% PRIVATE EXPORTS (NIFs: the samplers' and snapshots' event writers) %%%
-export([emit_call_guard/3]).
-export([emit_process_name/2, emit_stack_sample/4, sampler_sleep/1, emit_memory_sample/1,
         emit_allocator_sample/7, emit_process_memory/6, emit_carrier/8]).

%%% THE FRONT DOOR (dyntrace_ctl does the work) %%%
-export([trace/3, calls/2, clear/0, status/0, sample/2, memory/1, record/2, stop/1,
         snapshot/1]).

%%% PRIVATE EXPORTS (NIFs used by tracer/1 and dyntrace_ctl) %%%
-export([new_event_budget/1, events_left/1, option_limits/0]).

%%% erl_tracer CALLBACKS (NIFs) %%%
-export([enabled/3, trace/5,
         enabled_procs/3, trace_procs/5,
         enabled_ports/3, trace_ports/5,
         enabled_running_procs/3, trace_running_procs/5,
         enabled_running_ports/3, trace_running_ports/5,
         enabled_call/3, trace_call/5,
         enabled_send/3, trace_send/5,
         enabled_receive/3, trace_receive/5,
         enabled_garbage_collection/3, trace_garbage_collection/5]).

%%% OTP's dyntrace API, kept so that code calling it keeps working %%%
-export([available/0,
         user_trace_s1/1, user_trace_i4s4/9, user_trace_n/10,
         p/0, p/1, p/2, p/3, p/4, p/5, p/6, p/7, p/8,
         pn/1, pn/2, pn/3, pn/4, pn/5, pn/6, pn/7, pn/8, pn/9,
         put_tag/1, get_tag/0, get_tag_data/0, spread_tag/1, restore_tag/1]).

-on_load(load_nif/0).

-define(LIBRARY, "libdyntrace_nif").
-define(PROVIDER, "libdyntrace_lttng.so").
%% Whether the NIF is loaded, for available/0.
-define(NIF_LOADED, {?MODULE, nif_loaded}).
%% How many times (10 ms apart) check_shadowed/0 waits for on_load to return.
-define(ON_LOAD_WAITS, 1000).

%% The NIF's limits (option_limits/0): 64..65536.
-type max_term_bytes() :: pos_integer().
%% A count of events left, shared by every tracee of one tracer state.
-opaque event_budget() :: reference().
-type payload_mode() :: full | shape | size | none.
-type field_kind() :: message | reason | name | driver | callback.
-type options() :: #{max_term_bytes => max_term_bytes(),
                     payload => payload_mode() | #{field_kind() => payload_mode()},
                     redact => [term()],
                     max_events => pos_integer() | event_budget()}.
-type tracer_state() :: [] | options().
-type option_limits() :: #{max_term_bytes := {pos_integer(), pos_integer(), pos_integer()},
                           payload := [payload_mode()],
                           kinds := [field_kind()],
                           redact := non_neg_integer(),
                           max_events := {pos_integer(), pos_integer()}}.
-type enabled_result() :: trace | discard.
-type event_name() :: process_spawn | process_link | process_exit
                    | process_register | process_scheduled
                    | port_open | port_exit | port_link | port_scheduled
                    | function_call | function_return | function_exception
                    | message_send | message_receive
                    | gc_minor_start | gc_minor_end
                    | gc_major_start | gc_major_end
                    | node_name
                    | user_trace_s1 | user_trace_i4s4 | user_trace_n
                    | process_name | stack_sample | memory_sample
                    | allocator_sample | process_memory
                    | carrier_create | carrier_destroy
                    | call_guard.
%% `event_name()' lists the events of native/events.table in its order:
%% the NIF's build fails when they differ.
-type field_type() :: string | u32 | u64 | i64.
-type trace_class() :: procs | ports | running_procs | running_ports | call
                     | send | 'receive' | garbage_collection.
-type event_info() :: #{name := event_name(),
                        fields := [{atom(), field_type()}],
                        tags := [{trace_class(), atom()}]}.
-type counters() :: #{bad_tracer_state := non_neg_integer(),
                      bad_arguments := non_neg_integer(),
                      panics := non_neg_integer()}.
-type probe_arg() :: integer() | iolist().
-type n_probe_label() :: 0..1023.
-type user_probe_result() :: boolean().
-type probe_int() :: integer() | undefined.
-type probe_string() :: iodata() | undefined.
-type node_name_reason() :: load | enable | nodeup | nodedown | refresh | request.
%% A process's name in `process_name' and `process_memory': its registered
%% name, or its initial call (`{M, F, Arity | Args}', written `M:F/A').
-type process_name() :: atom() | {module(), atom(), arity() | [term()]}.
-type stack_frame() :: {module(), atom(), arity() | [term()], [{atom(), term()}]}.

-export_type([options/0, tracer_state/0, event_name/0, event_info/0, payload_mode/0,
              field_kind/0, event_budget/0, max_term_bytes/0, counters/0, option_limits/0,
              process_name/0, probe_arg/0, n_probe_label/0, user_probe_result/0,
              probe_int/0, probe_string/0]).

%%%===================================================================
%%% PUBLIC
%%%===================================================================

%% @doc The `{tracer, dyntrace, []}' element of `erlang:trace/3' flags.
-spec tracer() -> {tracer, dyntrace, []}.
tracer() ->
    {tracer, ?MODULE, []}.

%% @doc The `{tracer, dyntrace, Options}' element of `erlang:trace/3' flags,
%% checked (`[]' means the defaults): an unknown key or a value out of range
%% raises `error({badarg, {Key, Value}})'. `max_events => N' becomes a new
%% event budget: after `N' events written, the tracer answers `remove' and
%% the runtime drops the flags of every tracee of this state.
-spec tracer(tracer_state()) -> {tracer, dyntrace, tracer_state()}.
tracer(Options) ->
    {tracer, ?MODULE, dyntrace_options:validate(Options)}.

%% @doc The text a `message', `reason' or `name' field gets for `Term' under
%% the byte limit `MaxTermBytes' (64..65536): the VM's `%T' text, cut with
%% `...'. Useful to write the pattern a trace script greps for.
-spec format_term(term(), max_term_bytes()) -> binary().
format_term(_Term, _MaxTermBytes) ->
    erlang:nif_error(nif_not_loaded).

%% @doc The text a field of kind `Kind' gets for `Term' under the tracer
%% options `Options' (checked as {@link tracer/1} checks them; a bad kind
%% raises `error({badarg, {kind, Kind}})'). `message' is the field of
%% message_send and message_receive, `reason' of process_exit and
%% port_exit, `name' of process_register, `driver' of port_open,
%% `callback' port_scheduled's entry. Example:
%% `format_term({login, <<"alice">>}, message, #{payload => shape})'
%% returns `<<"{login,<<_:5/binary>>}">>'.
-spec format_term(term(), field_kind(), tracer_state()) -> binary().
format_term(Term, Kind, Options) ->
    Valid = dyntrace_options:kind(Kind),
    format_field(Term, Valid, dyntrace_options:validate(Options)).

-spec format_field(term(), field_kind(), tracer_state()) -> binary().
format_field(_Term, _Kind, _Options) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Every event of provider `org_erlang_dyntrace', in the provider's
%% order: its name, its fields in order with their LTTng types (`string',
%% `u32', `u64'), and the trace tags that emit it, each with its class, the
%% trace flag that turns the tag on (`{send, send_to_non_existing_process}').
-spec events() -> [event_info()].
events() ->
    erlang:nif_error(nif_not_loaded).

%% @doc The `org_erlang_dyntrace' events enabled in a started LTTng session
%% right now, as this node sees them.
-spec enabled_events() -> [event_name()].
enabled_events() ->
    erlang:nif_error(nif_not_loaded).

%% @doc Counters of what the tracer could not do as asked: events written
%% with the default options (or, for a state naming `payload' or `redact',
%% with every term field `-') because the tracer state was invalid
%% (`bad_tracer_state'), callback calls rejected with `badarg'
%% (`bad_arguments'), and calls that failed inside the NIF (`panics', a bug:
%% each one raised `badarg' and wrote no event). Events LTTng drops are counted by LTTng
%% (`lttng view' and `babeltrace2' report them).
-spec stats() -> counters().
stats() ->
    erlang:nif_error(nif_not_loaded).

%%%===================================================================
%%% THE FRONT DOOR
%%%===================================================================

%% @doc Traces `Procs' (what `erlang:trace/3' takes, registered names, or a
%% list of them) for `Events' (event names or the groups `procs', `ports',
%% `messages', `calls', `gc', `scheduling', `all'), with the trace flags
%% that feed those events. `Opts': `max_term_bytes', `max_events' (the
%% tracer stops after that many events written), `duration' (ms, after which
%% everything this call set is undone), and the tracer's other options
%% (`payload', `redact'). The events are recorded once enabled
%% in an LTTng session. Answers how many processes and ports got the flags.
-spec trace(dyntrace_ctl:procs(), [dyntrace_ctl:event_or_group()],
            dyntrace_ctl:trace_opts()) -> dyntrace_ctl:result().
trace(Procs, Events, Opts) ->
    dyntrace_ctl:trace(Procs, Events, Opts).

%% @doc Traces calls to the functions of `Spec' (`{M, F, Arity | '_' |
%% MatchSpec | fun}' or a list of them) in the processes of `procs' (default
%% `all'). `Opts' as {@link trace/3} plus `return', `exception', `scope'
%% (`global', the default, or `local'), `procs', `force' (a pattern on every
%% module, or on every function of an erts, kernel or stdlib module, is
%% refused without it), `exclude' (`[{M, F, Arity | '_'}]': functions the
%% patterns match that are left out, e.g. one hot helper of a module; they
%% show in {@link status/0}'s patterns with `false').
%% Answers how many functions matched (those excluded not counted).
-spec calls(dyntrace_ctl:call_spec() | [dyntrace_ctl:call_spec()],
            dyntrace_ctl:calls_opts()) -> dyntrace_ctl:result().
calls(Spec, Opts) ->
    dyntrace_ctl:calls(Spec, Opts).

%% @doc Samples the stacks of `Procs' (pids, registered names, or `all',
%% `existing', `new' and the like, as {@link trace/3} takes them, or a list)
%% every `interval' ms (default 1, the finest a timer gives) from a process
%% of dyntrace's own, writing one `stack_sample' event per process and
%% round while that event is enabled in LTTng. `Opts': `interval',
%% `duration', `max_events', `max_term_bytes' (the stack text's limit).
%% Stopped by {@link clear/0}; answers the id {@link status/0} lists it by.
%% See docs/sampling-and-memory.md.
-spec sample(dyntrace_sampler:procs(), dyntrace_sampler:opts()) -> {ok, pos_integer()}.
sample(Procs, Opts) ->
    dyntrace_ctl:sample(Procs, Opts).

%% @doc Samples memory every `interval' ms (default 1000): `memory_sample',
%% `allocator_sample', `process_memory' (the `top' processes by memory,
%% default 20, and those in `procs'), `carrier_create' and
%% `carrier_destroy' (sampled from `instrument:carriers/0', not exact).
%% `Opts': `interval', `duration', `max_events', `top', `procs',
%% `carriers' (false: no instrument:carriers/0 calls). Stopped by
%% {@link clear/0}; answers the id {@link status/0} lists it by.
-spec memory(dyntrace_memory:opts()) -> {ok, pos_integer()}.
memory(Opts) ->
    dyntrace_ctl:memory(Opts).

%% @doc Records this node into an LTTng session of its own, and leaves
%% node and session daemon as they were. `What' is a list of what
%% {@link trace/3}, {@link calls/2}, {@link sample/2} and {@link memory/1}
%% take: `{trace, Procs, Events}', `{calls, Spec}', `{sample, Procs}',
%% `memory', each with its options as a last element if any (`duration'
%% and `max_events' are the recording's). The session (a unique name, the
%% `vpid' context, this node's process only) has exactly the events `What'
%% needs, and `node_name' and `process_name'. `Opts': `duration' (ms,
%% default 10000), `max_events' (one count for the trace and calls parts;
%% each sampler counts its own), `dir' (default: a new directory under the
%% node's temporary directory), `wait' (default `true': answers `{ok, Dir}'
%% once the trace is complete there; `false': `{ok, Handle}' at once, for
%% {@link stop/1}), `mode' (`flight': the session keeps the last seconds in
%% its ring buffers until {@link snapshot/1}; answers `{ok, Handle}'), and
%% the tracer's options for every part. No `lttng' command, no session
%% daemon, a session that cannot be made: `{error, {lttng, Text}}' with the
%% command's message, and nothing is left set. `What' = `triage' records
%% what `dyntrace-analyze findings' needs at a bounded cost (see
%% `dyntrace_triage'; `Opts' may add `focus => #{period, window, count,
%% interval}'). `nodes => [Node, ...]' records those nodes at once into one
%% directory: `{ok, Dir, #{recorded, unreachable, failed}}' (see
%% `dyntrace_nodes'). `findings => true' prints `dyntrace-analyze findings'
%% on the trace once it is complete. A plan that traces every process's
%% messages, scheduling or GC and is expected to cost more than 10% more
%% CPU here says so (and what triage would) before it starts. See
%% docs/recording.md.
-spec record([dyntrace_record:item()] | triage, map()) ->
          {ok, file:filename() | dyntrace_record:handle()}
              | {ok, file:filename(), dyntrace_nodes:answer()} | {error, term()}.
record(What, Opts) ->
    dyntrace_nodes:record(What, Opts).

%% @doc Ends one entry of {@link status/0} now: a recording (stopped and
%% destroyed: its directory), or a call or sampler (undone: `ok').
-spec stop(pos_integer()) -> ok | {ok, file:filename()} | {error, term()}.
stop(Id) ->
    dyntrace_ctl:stop(Id).

%% @doc Writes what a flight recording's ring buffers hold (`lttng snapshot
%% record') into a new directory under its `dir'; answers that directory.
%% The recording goes on.
-spec snapshot(dyntrace_record:handle()) -> {ok, file:filename()} | {error, term()}.
snapshot(Handle) ->
    dyntrace_record:snapshot(Handle).

%% @doc Undoes everything the front door set (flags, trace patterns, on
%% OTP 27+ its trace sessions, samplers), ends the recordings (their
%% sessions stopped and destroyed, their traces kept), and turns off every
%% trace flag the runtime shows with dyntrace as tracer, also after the
%% process that set them is gone. Flags of other tracers stay.
-spec clear() -> ok.
clear() ->
    dyntrace_ctl:clear().

%% @doc What dyntrace traces now (per call: processes, events, flags,
%% patterns, events and milliseconds left), the recordings, the LTTng
%% events enabled now and the tracer's counters.
-spec status() -> dyntrace_ctl:status().
status() ->
    dyntrace_ctl:status().

%%%===================================================================
%%% PRIVATE EXPORTS
%%%===================================================================

%% @doc A new event budget of `N' events (NIF; {@link tracer/1} makes them).
-spec new_event_budget(pos_integer()) -> event_budget().
new_event_budget(_N) ->
    erlang:nif_error(nif_not_loaded).

%% @doc The events an event budget has left (NIF).
-spec events_left(event_budget()) -> non_neg_integer().
events_left(_Budget) ->
    erlang:nif_error(nif_not_loaded).

%% @doc The tracer options and their limits, from the NIF that reads them
%% (so that they are written once): `max_term_bytes' as `{Min, Max,
%% Default}', the `payload' modes, the field `kinds' a payload map may
%% name, the most `redact' keys, `max_events' as `{Min, Max}'.
-spec option_limits() -> option_limits().
option_limits() ->
    erlang:nif_error(nif_not_loaded).


%%%===================================================================
%%% NODE AND PROCESS NAMES (dyntrace_announcer writes them)
%%%===================================================================

%% @doc Writes this node's `node_name' events now (when the event is
%% enabled in a started session): one naming the node itself (channel 0)
%% and one per connected node with the number this node writes first in
%% that node's pids. Also written on its own: when the module loads, when a
%% node connects or disconnects, when the event becomes enabled, and every
%% 10 seconds while it is enabled.
-spec announce_nodes() -> ok.
announce_nodes() ->
    dyntrace_announcer:announce_nodes().

%% @doc Writes one `process_name' event per process (its registered name,
%% else its initial call), when the event is enabled in a started session:
%% names for a trace that saw the processes start or register before it
%% began. At most 100000 processes, read one at a time. Also written when
%% {@link trace/3}, {@link calls/2}, {@link sample/2} or {@link record/2}
%% start (the announcer writes the registered processes' names when the
%% event becomes enabled: a session made later).
-spec announce_processes() -> ok.
announce_processes() ->
    dyntrace_announcer:announce_processes().

%% @doc Writes one `node_name' event (the NIF). Not for users: see
%% {@link announce_nodes/0}.
-spec emit_node_name(node(), non_neg_integer(), node(), node_name_reason()) -> ok.
emit_node_name(_Node, _Channel, _Peer, _Why) ->
    erlang:nif_error(nif_not_loaded).

%%%===================================================================
%%% erl_tracer CALLBACKS
%%% Each enabled_* answers `trace' when the tag's event is enabled in a
%%% started LTTng session, else `discard'; each trace_* writes the event.
%%%===================================================================

%% @doc Generic enabled check; also answers `trace_status' with `trace'.
-spec enabled(erl_tracer:trace_tag() | trace_status, tracer_state(),
              erl_tracer:tracee()) -> enabled_result().
enabled(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).

%% @doc Generic event writer, for tags the class callbacks do not receive.
-spec trace(erl_tracer:trace_tag(), tracer_state(), erl_tracer:tracee(),
            term(), erl_tracer:trace_opts()) -> ok.
trace(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `procs' tags (spawn, exit, link, register...).
-spec enabled_procs(erl_tracer:trace_tag_procs() | trace_status, tracer_state(),
                    erl_tracer:tracee()) -> enabled_result().
enabled_procs(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `process_spawn', `process_link', `process_exit',
%% `process_register'.
-spec trace_procs(erl_tracer:trace_tag_procs(), tracer_state(),
                  erl_tracer:tracee(), term(), erl_tracer:trace_opts()) -> ok.
trace_procs(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `ports' tags (open, closed, link...).
-spec enabled_ports(erl_tracer:trace_tag_ports() | trace_status, tracer_state(),
                    erl_tracer:tracee()) -> enabled_result().
enabled_ports(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `port_open', `port_exit', `port_link'.
-spec trace_ports(erl_tracer:trace_tag_ports(), tracer_state(),
                  erl_tracer:tracee(), term(), erl_tracer:trace_opts()) -> ok.
trace_ports(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `running_procs' tags (in, out...).
-spec enabled_running_procs(erl_tracer:trace_tag_running_procs() | trace_status,
                            tracer_state(), erl_tracer:tracee()) -> enabled_result().
enabled_running_procs(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `process_scheduled'.
-spec trace_running_procs(erl_tracer:trace_tag_running_procs(), tracer_state(),
                          erl_tracer:tracee(), term(), erl_tracer:trace_opts()) -> ok.
trace_running_procs(_Tag, _State, _Tracee, _Term, _Opts) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `running_ports' tags (in, out...).
-spec enabled_running_ports(erl_tracer:trace_tag_running_ports() | trace_status,
                            tracer_state(), erl_tracer:tracee()) -> enabled_result().
enabled_running_ports(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `port_scheduled'.
-spec trace_running_ports(erl_tracer:trace_tag_running_ports(), tracer_state(),
                          erl_tracer:tracee(), term(), erl_tracer:trace_opts()) -> ok.
trace_running_ports(_Tag, _State, _Tracee, _Term, _Opts) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `call' tags (call, return_from, return_to,
%% exception_from).
-spec enabled_call(erl_tracer:trace_tag_call() | trace_status, tracer_state(),
                   erl_tracer:tracee()) -> enabled_result().
enabled_call(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `function_call', `function_return', `function_exception'.
-spec trace_call(erl_tracer:trace_tag_call(), tracer_state(),
                 erl_tracer:tracee(), term(), erl_tracer:trace_opts()) -> ok.
trace_call(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `send' tags.
-spec enabled_send(erl_tracer:trace_tag_send() | trace_status, tracer_state(),
                   erl_tracer:tracee()) -> enabled_result().
enabled_send(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `message_send'.
-spec trace_send(erl_tracer:trace_tag_send(), tracer_state(),
                 erl_tracer:tracee(), term(), erl_tracer:trace_opts()) -> ok.
trace_send(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for the `receive' tag.
-spec enabled_receive(erl_tracer:trace_tag_receive() | trace_status, tracer_state(),
                      erl_tracer:tracee()) -> enabled_result().
enabled_receive(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `message_receive'.
-spec trace_receive(erl_tracer:trace_tag_receive(), tracer_state(),
                    erl_tracer:tracee(), term(), erl_tracer:trace_opts()) -> ok.
trace_receive(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `garbage_collection' tags.
-spec enabled_garbage_collection(erl_tracer:trace_tag_gc() | trace_status,
                                 tracer_state(), erl_tracer:tracee()) ->
          enabled_result().
enabled_garbage_collection(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `gc_minor_start', `gc_minor_end', `gc_major_start',
%% `gc_major_end'.
-spec trace_garbage_collection(erl_tracer:trace_tag_gc(), tracer_state(),
                               erl_tracer:tracee(), term(),
                               erl_tracer:trace_opts()) -> ok.
trace_garbage_collection(_Tag, _State, _Tracee, _Term, _Opts) ->
    erlang:nif_error(nif_not_loaded).

%%%===================================================================
%%% OTP's dyntrace API (dyntrace_user_probes checks and writes)
%%% Each probe answers `true' when written, `false' when its event is not
%%% enabled in LTTng.
%%%===================================================================

%% @doc Whether the user probes exist: `true' when the NIF is loaded (they
%% are LTTng events), `false' when it could not be (loading logged why).
-spec available() -> boolean().
available() -> persistent_term:get(?NIF_LOADED, false).

%% @doc Writes `user_trace_s1': the calling process and `Message'.
-spec user_trace_s1(iolist()) -> user_probe_result().
user_trace_s1(Message) -> dyntrace_user_probes:user_trace_s1(Message).

%% @doc Writes `user_trace_i4s4' with `Tag' as the tag (`undefined' is
%% `""'); each integer may be `undefined' (0), each string `undefined' ("").
-spec user_trace_i4s4(binary() | undefined, probe_int(), probe_int(), probe_int(),
                      probe_int(), probe_string(), probe_string(), probe_string(),
                      probe_string()) -> user_probe_result().
user_trace_i4s4(Tag, I1, I2, I3, I4, S1, S2, S3, S4) ->
    dyntrace_user_probes:user_trace_i4s4(Tag, I1, I2, I3, I4, S1, S2, S3, S4).

%% @doc Writes `user_trace_n': the probe number `Label', then as
%% {@link user_trace_i4s4/9}.
-spec user_trace_n(n_probe_label(), binary() | undefined, probe_int(), probe_int(),
                   probe_int(), probe_int(), probe_string(), probe_string(),
                   probe_string(), probe_string()) -> user_probe_result().
user_trace_n(Label, Tag, I1, I2, I3, I4, S1, S2, S3, S4) ->
    dyntrace_user_probes:user_trace_n(Label, Tag, I1, I2, I3, I4, S1, S2, S3, S4).

%% @doc User probe with no arguments.
-spec p() -> user_probe_result().
p() -> dyntrace_user_probes:probe(undefined, []).

%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg()) -> user_probe_result().
p(A) -> dyntrace_user_probes:probe(undefined, [A]).

%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg()) -> user_probe_result().
p(A, B) -> dyntrace_user_probes:probe(undefined, [A, B]).

%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg(), probe_arg()) -> user_probe_result().
p(A, B, C) -> dyntrace_user_probes:probe(undefined, [A, B, C]).

%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg(), probe_arg(), probe_arg()) -> user_probe_result().
p(A, B, C, D) -> dyntrace_user_probes:probe(undefined, [A, B, C, D]).

%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg(), probe_arg(), probe_arg(),
        probe_arg()) -> user_probe_result().
p(A, B, C, D, E) -> dyntrace_user_probes:probe(undefined, [A, B, C, D, E]).

%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
        probe_arg()) -> user_probe_result().
p(A, B, C, D, E, F) -> dyntrace_user_probes:probe(undefined, [A, B, C, D, E, F]).

%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
        probe_arg()) -> user_probe_result().
p(A, B, C, D, E, F, G) -> dyntrace_user_probes:probe(undefined, [A, B, C, D, E, F, G]).

%% @doc User probe: four integers, then four strings.
-spec p(probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
        probe_arg(), probe_arg()) -> user_probe_result().
p(A, B, C, D, E, F, G, H) -> dyntrace_user_probes:probe(undefined, [A, B, C, D, E, F, G, H]).

%% @doc Numbered user probe with no arguments.
-spec pn(n_probe_label()) -> user_probe_result().
pn(L) -> dyntrace_user_probes:probe(L, []).

%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg()) -> user_probe_result().
pn(L, A) -> dyntrace_user_probes:probe(L, [A]).

%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg()) -> user_probe_result().
pn(L, A, B) -> dyntrace_user_probes:probe(L, [A, B]).

%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg()) -> user_probe_result().
pn(L, A, B, C) -> dyntrace_user_probes:probe(L, [A, B, C]).

%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg(),
         probe_arg()) -> user_probe_result().
pn(L, A, B, C, D) -> dyntrace_user_probes:probe(L, [A, B, C, D]).

%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
         probe_arg()) -> user_probe_result().
pn(L, A, B, C, D, E) -> dyntrace_user_probes:probe(L, [A, B, C, D, E]).

%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
         probe_arg()) -> user_probe_result().
pn(L, A, B, C, D, E, F) -> dyntrace_user_probes:probe(L, [A, B, C, D, E, F]).

%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
         probe_arg(), probe_arg()) -> user_probe_result().
pn(L, A, B, C, D, E, F, G) -> dyntrace_user_probes:probe(L, [A, B, C, D, E, F, G]).

%% @doc Numbered user probe: four integers, then four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
         probe_arg(), probe_arg(), probe_arg()) -> user_probe_result().
pn(L, A, B, C, D, E, F, G, H) -> dyntrace_user_probes:probe(L, [A, B, C, D, E, F, G, H]).

%% @doc Sets this process's dynamic trace tag, which the user probes write
%% as `tag'; the old one. A stock VM (built without dynamic trace) keeps no
%% tag (`erlang:dt_put_tag/1' does nothing there): the tag is kept in the
%% process dictionary too.
-spec put_tag(undefined | iodata()) -> binary() | undefined.
put_tag(Data) -> dyntrace_user_probes:put_tag(Data).

%% @doc This process's dynamic trace tag.
-spec get_tag() -> binary() | undefined.
get_tag() -> dyntrace_user_probes:get_tag().

%% @doc The tag if set, else the tag spread with the last message received
%% (only a VM built with dynamic trace spreads tags).
-spec get_tag_data() -> binary() | undefined.
get_tag_data() -> dyntrace_user_probes:get_tag_data().

%% @doc Makes the tag spread with sent messages, like a sequential trace token.
-spec spread_tag(boolean()) -> true | {non_neg_integer(), binary() | []}.
spread_tag(B) -> erlang:dt_spread_tag(B).

%% @doc Restores a tag state returned by {@link spread_tag/1}.
-spec restore_tag(true | {non_neg_integer(), binary() | []}) -> true.
restore_tag(T) -> erlang:dt_restore_tag(T).

%% @doc Whether the event of a probe is enabled (the NIF):
%% `user_trace_i4s4' for `undefined', `user_trace_n' for a number.
-spec user_probe_enabled(n_probe_label() | undefined) -> boolean().
user_probe_enabled(_Label) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Writes `user_trace_s1' (the NIF). Not for users: see
%% {@link user_trace_s1/1}.
-spec emit_user_trace_s1(pid(), iodata()) -> boolean().
emit_user_trace_s1(_Pid, _Message) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Writes `user_trace_i4s4' or `user_trace_n' (the NIF). Not for
%% users: see {@link p/8} and {@link pn/9}.
-spec emit_user_trace(n_probe_label() | undefined, pid(), binary() | undefined,
                      {integer(), integer(), integer(), integer()},
                      {probe_string(), probe_string(), probe_string(), probe_string()}) ->
          boolean().
emit_user_trace(_Label, _Pid, _Tag, _Ints, _Strings) ->
    erlang:nif_error(nif_not_loaded).

%%%===================================================================
%%% SAMPLED EVENTS (NIFs). Each answers `ok', raises `badarg' on arguments
%%% of the wrong type and writes nothing when its event is not enabled.
%%%===================================================================

%% @doc Writes `call_guard': the function `{M, F, Arity}' whose trace
%% pattern the calls' rate guard removed, and the guard's limit (`Calls'
%% per `Ms' milliseconds). Not for users: written by the guard.
-spec emit_call_guard(mfa(), non_neg_integer(), non_neg_integer()) -> ok.
emit_call_guard(_MFA, _Calls, _Ms) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Writes `process_name': `Pid' and its registered name or initial
%% call. Not for users: written by the processes snapshot.
-spec emit_process_name(pid(), process_name()) -> ok.
emit_process_name(_Pid, _Name) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Writes `stack_sample': `Pid', its `Status' (process_info's status
%% atom) and `Stack' (its `current_stacktrace', innermost first), written
%% `M:F/A;...' within `MaxTermBytes'. Not for users: written by the
%% stack sampler.
-spec emit_stack_sample(pid(), atom(), [stack_frame()], max_term_bytes()) -> ok.
emit_stack_sample(_Pid, _Status, _Stack, _MaxTermBytes) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Sleeps `Microseconds' (0..1,000,000) on a dirty I/O scheduler:
%% the stack sampler's wait below the runtime's 1 ms timer tick. Not for
%% users.
-spec sampler_sleep(0..1000000) -> ok.
sampler_sleep(_Microseconds) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Writes `memory_sample' from `erlang:memory()''s answer (a category
%% not in it is written 0). Not for users: written by the memory sampler.
-spec emit_memory_sample([{atom(), non_neg_integer()}]) -> ok.
emit_memory_sample(_Memory) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Writes `allocator_sample': one allocator instance's carriers, in
%% bytes. Not for users: written by the memory sampler.
-spec emit_allocator_sample(atom(), non_neg_integer(), non_neg_integer(), non_neg_integer(),
                            non_neg_integer(), non_neg_integer(), non_neg_integer()) -> ok.
emit_allocator_sample(_Type, _Instance, _MbcCarriers, _MbcsSize, _SbcCarriers, _SbcsSize,
                      _BlocksSize) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Writes `process_memory': `Pid', its name (`[]' for none) and its
%% memory figures. Not for users: written by the memory sampler.
-spec emit_process_memory(pid(), process_name() | [], non_neg_integer(), non_neg_integer(),
                          non_neg_integer(), non_neg_integer()) -> ok.
emit_process_memory(_Pid, _Name, _Memory, _TotalHeap, _BinVheap, _QueueLen) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Writes `carrier_create' or `carrier_destroy': one carrier of an
%% allocator instance and that instance's carriers. Not for users: written
%% by the memory sampler.
-spec emit_carrier(create | destroy, atom(), non_neg_integer(), non_neg_integer(),
                   non_neg_integer(), non_neg_integer(), non_neg_integer(),
                   non_neg_integer()) -> ok.
emit_carrier(_Which, _Type, _Instance, _Size, _MbcCarriers, _MbcsSize, _SbcCarriers,
             _SbcsSize) ->
    erlang:nif_error(nif_not_loaded).

%%%===================================================================
%%% NIF LOADING
%%%===================================================================

%% The NIF library does not link LTTng-UST: once it is loaded,
%% open_provider/1 opens the probe provider library on a dirty I/O
%% scheduler, where LTTng-UST's wait of up to LTTNG_UST_REGISTER_TIMEOUT ms
%% (3 s unless the operator set it) for the session daemon holds no normal
%% scheduler. That wait is left as it is: LTTng-UST makes the same value
%% the deadline for the daemon's answers to the node's channel and event
%% registrations, and at 0 (10 ms) a daemon slowed by load left a
%% recording's events disabled in the node for good.
%%
%% The module loads even when its NIF cannot (an on_load failure would stop
%% an embedded release's boot): it logs one line that names the fix, and
%% available/0 answers false.
-spec load_nif() -> ok.
load_nif() ->
    Priv = nif_dir(),
    Library = filename:join(Priv, ?LIBRARY),
    Provider = filename:join(Priv, ?PROVIDER),
    %% Maps over 32 keys are written in maps:to_list/1's order; which way
    %% the NIF's map iterator goes differs between releases: it learns it
    %% from this map.
    OrderProbe = maps:from_list([{K, []} || K <- lists:seq(1, 33)]),
    [{First, _} | _] = maps:to_list(OrderProbe),
    %% References as messages carry them, so that the NIF checks its
    %% reading of them against the VM's printer: plain ones and the
    %% aliases gen_server calls reply to.
    Alias = alias(),
    true = unalias(Alias),
    Samples = [make_ref(), Alias],
    LoadInfo = {list_to_binary(Provider), OrderProbe, First, Samples},
    Loaded = case filelib:is_regular(Provider) andalso erlang:load_nif(Library, LoadInfo) of
                 ok ->
                     case open_provider(list_to_binary(Provider)) of
                         true -> dyntrace_announcer:start();
                         false -> {error, no_lttng_ust}
                     end;
                 false ->
                     {error, {missing, Provider}};
                 {error, _} = Error ->
                     Error
             end,
    persistent_term:put(?NIF_LOADED, Loaded =:= ok),
    log_not_loaded(Loaded, Library),
    _ = spawn(fun check_shadowed/0),
    ok.

%% Opens the probe provider library (a dirty I/O NIF): true when it is
%% open, false when LTTng-UST's runtime library cannot be loaded.
-spec open_provider(binary()) -> boolean().
open_provider(_Path) ->
    erlang:nif_error(nif_not_loaded).

%% One line for each way the NIF can be missing, naming the fix.
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

%% runtime_tools ships a module named dyntrace too. The next load of
%% dyntrace (l(dyntrace), a restart in interactive mode) takes the code
%% path's first dyntrace.beam: when that is not this module, say so. Run
%% once the on_load function has returned: before, module_info/1 fails.
check_shadowed() ->
    wait_loaded(?ON_LOAD_WAITS),
    case code:where_is_file(?MODULE_STRING ".beam") of
        non_existing ->
            ok;
        First ->
            Ours = module_info(md5),
            case beam_lib:md5(First) of
                {ok, {?MODULE, Ours}} ->
                    ok;
                _ ->
                    logger:warning("dyntrace: the code path's first dyntrace.beam (~ts) is not "
                                   "this module, and the next load takes it; if it is "
                                   "runtime_tools's, leave it out of the release (relx: "
                                   "{exclude_modules, [{runtime_tools, [dyntrace]}]}; "
                                   "Mix: see docs/releases.md)", [First])
            end
    end.

wait_loaded(0) ->
    exit(normal);
wait_loaded(Tries) ->
    case erlang:module_loaded(?MODULE) of
        true -> ok;
        false -> receive after 10 -> wait_loaded(Tries - 1) end
    end.

%% The application's `nif_dir' when set (`dyntrace record --nif' sets it
%% in a node whose libraries are not beside the code); else the `priv/'
%% beside the `ebin/' this module came from, where a build or release puts
%% the libraries; else the application's `priv_dir', which the code server
%% guesses from the code path's directory names (another `dyntrace-*'
%% directory earlier on the path would win there).
nif_dir() ->
    Set = try application:get_env(dyntrace, nif_dir) of
              {ok, NifDir} when is_list(NifDir) -> [NifDir];
              _ -> []
          catch
              %% No application controller yet (an early boot).
              error:_ -> []
          end,
    Beside = case code:which(?MODULE) of
                 Beam when is_list(Beam) ->
                     [filename:join(filename:dirname(filename:dirname(Beam)), "priv")];
                 _ ->
                     []
             end,
    App = case code:priv_dir(?MODULE) of
              {error, bad_name} -> [];
              Dir -> [Dir]
          end,
    Candidates = Set ++ Beside ++ App,
    case [D || D <- Candidates, filelib:is_regular(filename:join(D, ?PROVIDER))] of
        [Found | _] -> Found;
        [] -> hd(Candidates ++ ["priv"])
    end.
