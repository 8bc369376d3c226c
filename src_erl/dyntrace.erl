%%% @doc LTTng tracing for a stock Erlang/OTP node: a tracer module (the
%%% `erl_tracer' interface) whose callbacks, NIFs, write the LTTng-UST
%%% events of provider `org_erlang_dyntrace' that OTP's
%%% `--with-dynamic-trace=lttng' build writes. An event not enabled in
%%% LTTng is discarded after one load; an enabled one goes into LTTng's
%%% lock-free per-CPU ring buffers, outside the VM's heap.
%%% ```
%%% 1> erlang:trace(new, true, [procs, {tracer, dyntrace, []}]).
%%% $ lttng create demo && lttng enable-event -u org_erlang_dyntrace:process_register
%%% $ lttng start demo
%%% 2> register(worker, spawn(timer, sleep, [infinity])).
%%% $ lttng stop demo && lttng view demo
%%% 3> dyntrace:record([{trace, worker, [messages]}], #{duration => 10000}).
%%% {ok,"/tmp/dyntrace-record-20261128T083512Z-4242-1"}
%%% '''
%%% This module is the public face: the names users call (the front door
%%% delegates to `dyntrace_ctl', OTP's probes to `dyntrace_user_probes'),
%%% the NIF stubs and their loading. The contract (options, events and
%%% their text, the front door) is docs/reference.md.
-module(dyntrace).

%%% PUBLIC %%%
-export([tracer/0, tracer/1, format_term/2, format_term/3, events/0, enabled_events/0, stats/0,
         announce_nodes/0, announce_processes/0]).

%%% PRIVATE EXPORTS (NIFs the other modules call: event budgets, option
%%% limits, the announcer's, probes', guard's and samplers' event writers) %%%
-export([new_event_budget/1, events_left/1, option_limits/0,
         emit_node_name/4, emit_user_trace_s1/2, emit_user_trace/5, user_probe_enabled/1,
         emit_call_guard/3, emit_process_name/2, emit_stack_sample/4, sampler_sleep/1,
         emit_memory_sample/1, emit_allocator_sample/7, emit_process_memory/6, emit_carrier/8]).

%%% THE FRONT DOOR (dyntrace_ctl does the work) %%%
-export([trace/3, calls/2, clear/0, status/0, sample/2, memory/1, record/2, stop/1,
         snapshot/1]).

%%% erl_tracer CALLBACKS (NIFs) %%%
-export([enabled/3, trace/5, enabled_procs/3, trace_procs/5, enabled_ports/3, trace_ports/5,
         enabled_running_procs/3, trace_running_procs/5,
         enabled_running_ports/3, trace_running_ports/5, enabled_call/3, trace_call/5,
         enabled_send/3, trace_send/5, enabled_receive/3, trace_receive/5,
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
-type tracee() :: erl_tracer:tracee().
-type topts() :: erl_tracer:trace_opts().
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
%% checked: a bad option raises `error({badarg, {Key, Value}})'.
-spec tracer(tracer_state()) -> {tracer, dyntrace, tracer_state()}.
tracer(Options) ->
    {tracer, ?MODULE, dyntrace_options:validate(Options)}.

%% @doc The text a `message', `reason' or `name' field gets for `Term' under
%% the byte limit `MaxTermBytes' (64..65536): the VM's `%T' text, cut with
%% `...'. Useful to write the pattern a trace script greps for.
-spec format_term(term(), max_term_bytes()) -> binary().
format_term(_Term, _MaxTermBytes) -> erlang:nif_error(nif_not_loaded).

%% @doc The text a field of kind `Kind' (`message', `reason', `name',
%% `driver', `callback') gets for `Term' under the tracer options
%% `Options', checked as {@link tracer/1} checks them.
-spec format_term(term(), field_kind(), tracer_state()) -> binary().
format_term(Term, Kind, Options) ->
    Valid = dyntrace_options:kind(Kind),
    format_field(Term, Valid, dyntrace_options:validate(Options)).

-spec format_field(term(), field_kind(), tracer_state()) -> binary().
format_field(_Term, _Kind, _Options) -> erlang:nif_error(nif_not_loaded).

%% @doc Every event of provider `org_erlang_dyntrace', in the provider's
%% order: its name, its fields in order with their LTTng types (`string',
%% `u32', `u64'), and the trace tags that emit it, each with its class, the
%% trace flag that turns the tag on (`{send, send_to_non_existing_process}').
-spec events() -> [event_info()].
events() -> erlang:nif_error(nif_not_loaded).

%% @doc The `org_erlang_dyntrace' events enabled in a started LTTng session
%% right now, as this node sees them.
-spec enabled_events() -> [event_name()].
enabled_events() -> erlang:nif_error(nif_not_loaded).

%% @doc Counters of what the tracer could not do as asked: events written
%% with the defaults because the tracer state was invalid
%% (`bad_tracer_state'), callback calls rejected with `badarg'
%% (`bad_arguments'), calls that failed inside the NIF (`panics', a bug).
%% LTTng counts the events it drops.
-spec stats() -> counters().
stats() -> erlang:nif_error(nif_not_loaded).

%%%===================================================================
%%% THE FRONT DOOR
%%%===================================================================

%% @doc Traces `Procs' (processes, ports, names or specs such as `all') for
%% `Events' (event names or groups) with the flags that feed them, within
%% the limits of `Opts': how many got the flags. See docs/reference.md.
-spec trace(dyntrace_ctl:procs(), [dyntrace_ctl:event_or_group()],
            dyntrace_ctl:trace_opts()) -> dyntrace_ctl:result().
trace(Procs, Events, Opts) ->
    dyntrace_ctl:trace(Procs, Events, Opts).

%% @doc Traces calls to the functions of `Spec' (`{M, F, Arity | '_' |
%% MatchSpec | fun}' or a list), with the options of {@link trace/3} and
%% more: how many functions matched. See docs/reference.md.
-spec calls(dyntrace_ctl:call_spec() | [dyntrace_ctl:call_spec()],
            dyntrace_ctl:calls_opts()) -> dyntrace_ctl:result().
calls(Spec, Opts) ->
    dyntrace_ctl:calls(Spec, Opts).

%% @doc Samples the stacks of `Procs' (as {@link trace/3} takes them) every
%% `interval' ms (default 1) from a process of dyntrace's own: one
%% `stack_sample' event per process and round. `Opts': `interval',
%% `duration', `max_events', `max_term_bytes'. Answers the id
%% {@link status/0} lists it by. See docs/sampling-and-memory.md.
-spec sample(dyntrace_sampler:procs(), dyntrace_sampler:opts()) -> {ok, pos_integer()}.
sample(Procs, Opts) ->
    dyntrace_ctl:sample(Procs, Opts).

%% @doc Samples memory every `interval' ms (default 1000): the events
%% `memory_sample', `allocator_sample', `process_memory' (the `top'
%% processes, default 20), `carrier_create' and `carrier_destroy'. `Opts':
%% `interval', `duration', `max_events', `top', `procs', `carriers'.
%% Answers the id {@link status/0} lists it by.
-spec memory(dyntrace_memory:opts()) -> {ok, pos_integer()}.
memory(Opts) ->
    dyntrace_ctl:memory(Opts).

%% @doc Records this node into an LTTng session of its own, and leaves
%% node and session daemon as they were. `What' is a list of what
%% {@link trace/3}, {@link calls/2}, {@link sample/2} and {@link memory/1}
%% take (`{trace, Procs, Events}', `{calls, Spec}', `{sample, Procs}',
%% `memory', each with its options as a last element if any), or
%% `triage'. `Opts': `duration' (ms, default 10000), `max_events', `dir',
%% `wait', `mode', `nodes', `findings' and the tracer's options. Answers
%% the trace's directory, or a handle for {@link stop/1} and
%% {@link snapshot/1}. See docs/reference.md and docs/recording.md.
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

%% @doc Writes what a flight recording's ring buffers hold into a new
%% directory under its `dir'; the recording goes on.
-spec snapshot(dyntrace_record:handle()) -> {ok, file:filename()} | {error, term()}.
snapshot(Handle) ->
    dyntrace_record:snapshot(Handle).

%% @doc Undoes everything the front door set, ends the recordings, and
%% turns off every flag the runtime shows with dyntrace as tracer.
-spec clear() -> ok.
clear() ->
    dyntrace_ctl:clear().

%% @doc What dyntrace traces now, the recordings, the LTTng events enabled
%% and the tracer's counters.
-spec status() -> dyntrace_ctl:status().
status() ->
    dyntrace_ctl:status().

%%%===================================================================
%%% PRIVATE EXPORTS
%%%===================================================================

%% @doc A new event budget of `N' events (NIF; {@link tracer/1} makes them).
-spec new_event_budget(pos_integer()) -> event_budget().
new_event_budget(_N) -> erlang:nif_error(nif_not_loaded).

%% @doc The events an event budget has left (NIF).
-spec events_left(event_budget()) -> non_neg_integer().
events_left(_Budget) -> erlang:nif_error(nif_not_loaded).

%% @doc The tracer options' limits, from the NIF that reads them (so that
%% they are written once).
-spec option_limits() -> option_limits().
option_limits() -> erlang:nif_error(nif_not_loaded).

%%%===================================================================
%%% NODE AND PROCESS NAMES (dyntrace_announcer writes them)
%%%===================================================================

%% @doc Writes this node's `node_name' events now, when the event is
%% enabled: itself (channel 0) and each connected node.
-spec announce_nodes() -> ok.
announce_nodes() ->
    dyntrace_announcer:announce_nodes().

%% @doc Writes one `process_name' event per process (at most 100000), when
%% the event is enabled: names for a trace that began after they started.
-spec announce_processes() -> ok.
announce_processes() ->
    dyntrace_announcer:announce_processes().

%% @doc Writes one `node_name' event (the NIF). Not for users: see
%% {@link announce_nodes/0}.
-spec emit_node_name(node(), non_neg_integer(), node(), node_name_reason()) -> ok.
emit_node_name(_Node, _Channel, _Peer, _Why) -> erlang:nif_error(nif_not_loaded).

%%%===================================================================
%%% erl_tracer CALLBACKS
%%% Each enabled_* answers `trace' when the tag's event is enabled in a
%%% started LTTng session, else `discard'; each trace_* writes the event.
%%%===================================================================

%% @doc Generic enabled check; also answers `trace_status' with `trace'.
-spec enabled(erl_tracer:trace_tag() | trace_status, tracer_state(),
              tracee()) -> enabled_result().
enabled(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).

%% @doc Generic event writer, for tags the class callbacks do not receive.
-spec trace(erl_tracer:trace_tag(), tracer_state(), tracee(), term(), topts()) -> ok.
trace(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `procs' tags (spawn, exit, link, register...).
-spec enabled_procs(erl_tracer:trace_tag_procs() | trace_status, tracer_state(),
                    tracee()) -> enabled_result().
enabled_procs(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).
%% @doc Writes `process_spawn', `process_link', `process_exit',
%% `process_register'.
-spec trace_procs(erl_tracer:trace_tag_procs(), tracer_state(), tracee(), term(), topts()) -> ok.
trace_procs(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `ports' tags (open, closed, link...).
-spec enabled_ports(erl_tracer:trace_tag_ports() | trace_status, tracer_state(),
                    tracee()) -> enabled_result().
enabled_ports(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).
%% @doc Writes `port_open', `port_exit', `port_link'.
-spec trace_ports(erl_tracer:trace_tag_ports(), tracer_state(), tracee(), term(), topts()) -> ok.
trace_ports(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `running_procs' tags (in, out...).
-spec enabled_running_procs(erl_tracer:trace_tag_running_procs() | trace_status,
                            tracer_state(), tracee()) -> enabled_result().
enabled_running_procs(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).
%% @doc Writes `process_scheduled'.
-spec trace_running_procs(erl_tracer:trace_tag_running_procs(), tracer_state(),
                          tracee(), term(), topts()) -> ok.
trace_running_procs(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `running_ports' tags (in, out...).
-spec enabled_running_ports(erl_tracer:trace_tag_running_ports() | trace_status,
                            tracer_state(), tracee()) -> enabled_result().
enabled_running_ports(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).
%% @doc Writes `port_scheduled'.
-spec trace_running_ports(erl_tracer:trace_tag_running_ports(), tracer_state(),
                          tracee(), term(), topts()) -> ok.
trace_running_ports(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `call' tags (call, return_from, return_to,
%% exception_from).
-spec enabled_call(erl_tracer:trace_tag_call() | trace_status, tracer_state(),
                   tracee()) -> enabled_result().
enabled_call(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).
%% @doc Writes `function_call', `function_return', `function_exception'.
-spec trace_call(erl_tracer:trace_tag_call(), tracer_state(), tracee(), term(), topts()) -> ok.
trace_call(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `send' tags.
-spec enabled_send(erl_tracer:trace_tag_send() | trace_status, tracer_state(),
                   tracee()) -> enabled_result().
enabled_send(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).
%% @doc Writes `message_send'.
-spec trace_send(erl_tracer:trace_tag_send(), tracer_state(), tracee(), term(), topts()) -> ok.
trace_send(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for the `receive' tag.
-spec enabled_receive(erl_tracer:trace_tag_receive() | trace_status, tracer_state(),
                      tracee()) -> enabled_result().
enabled_receive(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).
%% @doc Writes `message_receive'.
-spec trace_receive(erl_tracer:trace_tag_receive(), tracer_state(),
                    tracee(), term(), topts()) -> ok.
trace_receive(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

%% @doc Enabled check for `garbage_collection' tags.
-spec enabled_garbage_collection(erl_tracer:trace_tag_gc() | trace_status,
                                 tracer_state(), tracee()) ->
          enabled_result().
enabled_garbage_collection(_Tag, _State, _Tracee) -> erlang:nif_error(nif_not_loaded).
%% @doc Writes `gc_minor_start', `gc_minor_end', `gc_major_start',
%% `gc_major_end'.
-spec trace_garbage_collection(erl_tracer:trace_tag_gc(), tracer_state(),
                               tracee(), term(),
                               topts()) -> ok.
trace_garbage_collection(_Tag, _State, _Tracee, _Term, _Opts) -> erlang:nif_error(nif_not_loaded).

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
user_probe_enabled(_Label) -> erlang:nif_error(nif_not_loaded).

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
emit_user_trace(_Label, _Pid, _Tag, _Ints, _Strings) -> erlang:nif_error(nif_not_loaded).

%%%===================================================================
%%% SAMPLED EVENTS (NIFs), not for users: the guard, the announcer and the
%%% samplers write them. Each answers `ok', raises `badarg' on arguments of
%%% the wrong type and writes nothing when its event is not enabled.
%%%===================================================================

%% @doc Writes `call_guard': the function whose trace pattern the rate
%% guard removed, and the guard's limit (`Calls' per `Ms' milliseconds).
-spec emit_call_guard(mfa(), non_neg_integer(), non_neg_integer()) -> ok.
emit_call_guard(_MFA, _Calls, _Ms) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `process_name': `Pid' and its registered name or initial call.
-spec emit_process_name(pid(), process_name()) -> ok.
emit_process_name(_Pid, _Name) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `stack_sample': `Pid', its `Status' and `Stack' (innermost
%% first), written `M:F/A;...' within `MaxTermBytes'.
-spec emit_stack_sample(pid(), atom(), [stack_frame()], max_term_bytes()) -> ok.
emit_stack_sample(_Pid, _Status, _Stack, _MaxTermBytes) -> erlang:nif_error(nif_not_loaded).

%% @doc Sleeps `Microseconds' on a dirty I/O scheduler: the stack
%% sampler's wait below the runtime's 1 ms timer tick.
-spec sampler_sleep(0..1000000) -> ok.
sampler_sleep(_Microseconds) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `memory_sample' from `erlang:memory()''s answer.
-spec emit_memory_sample([{atom(), non_neg_integer()}]) -> ok.
emit_memory_sample(_Memory) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes `allocator_sample': one allocator instance's carriers.
-spec emit_allocator_sample(atom(), non_neg_integer(), non_neg_integer(), non_neg_integer(),
                            non_neg_integer(), non_neg_integer(), non_neg_integer()) -> ok.
emit_allocator_sample(_Type, _Instance, _MbcCarriers, _MbcsSize, _SbcCarriers, _SbcsSize,
                      _BlocksSize) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Writes `process_memory': `Pid', its name and its memory figures.
-spec emit_process_memory(pid(), process_name() | [], non_neg_integer(), non_neg_integer(),
                          non_neg_integer(), non_neg_integer()) -> ok.
emit_process_memory(_Pid, _Name, _Memory, _TotalHeap, _BinVheap, _QueueLen) ->
    erlang:nif_error(nif_not_loaded).

%% @doc Writes `carrier_create' or `carrier_destroy': one carrier of an
%% allocator instance and that instance's carriers.
-spec emit_carrier(create | destroy, atom(), non_neg_integer(), non_neg_integer(),
                   non_neg_integer(), non_neg_integer(), non_neg_integer(),
                   non_neg_integer()) -> ok.
emit_carrier(_Which, _Type, _Instance, _Size, _MbcCarriers, _MbcsSize, _SbcCarriers,
             _SbcsSize) ->
    erlang:nif_error(nif_not_loaded).

%%%===================================================================
%%% NIF LOADING
%%%===================================================================

%% open_provider/1 opens LTTng-UST's probe provider on a dirty I/O
%% scheduler: LTTng-UST's wait for the session daemon (3 s unless
%% LTTNG_UST_REGISTER_TIMEOUT says otherwise; at 0 a slow daemon left a
%% recording's events disabled for good) holds no normal scheduler. The
%% module loads even when its NIF cannot (an on_load failure would stop an
%% embedded release's boot): one line logged names the fix.
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
                         true -> start_announcer();
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
open_provider(_Path) -> erlang:nif_error(nif_not_loaded).

%% The announcer, when its module is there (a dyntrace.beam copied without
%% the rest of its ebin/ loads without one).
start_announcer() ->
    case code:ensure_loaded(dyntrace_announcer) of
        {module, _} -> dyntrace_announcer:start();
        {error, _} -> ok
    end.

wait_loaded(0) ->
    exit(normal);
wait_loaded(Tries) ->
    case erlang:module_loaded(?MODULE) of
        true -> ok;
        false -> receive after 10 -> wait_loaded(Tries - 1) end
    end.

%% The application's `nif_dir' when set (`dyntrace record --nif' sets it);
%% else the `priv/' beside the `ebin/' this module came from; else the
%% application's `priv_dir' (the code server's guess from the path's names).
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
