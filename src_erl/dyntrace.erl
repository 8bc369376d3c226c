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
%%% still costs a few hundred ns per event: clear trace flags you do not
%%% need, see the README's "What it costs"); an enabled one is written by LTTng-UST
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
%%% $ lttng enable-event -u org_erlang_dyntrace:process_register
%%% $ lttng start
%%% '''
%%% ```
%%% 3> register(worker, spawn(timer, sleep, [infinity])).
%%% '''
%%% ```
%%% $ lttng stop && lttng view
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
%%% (see {@link trace/3}, {@link calls/2}, {@link clear/0}, {@link status/0}).
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
-export([tracer/0, tracer/1, format_term/2, format_term/3, events/0, enabled_events/0, stats/0]).

%%% THE FRONT DOOR (dyntrace_ctl does the work) %%%
-export([trace/3, calls/2, clear/0, status/0]).

%%% PRIVATE EXPORTS (NIFs used by tracer/1 and dyntrace_ctl) %%%
-export([new_event_budget/1, events_left/1]).

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
-define(MIN_TERM_BYTES, 64).
-define(MAX_TERM_BYTES, 65536).
-define(MAX_REDACT_KEYS, 32).
-define(PAYLOAD_MODES, [full, shape, size, none]).
-define(FIELD_KINDS, [message, reason, name, driver, callback]).

-type max_term_bytes() :: ?MIN_TERM_BYTES..?MAX_TERM_BYTES.
%% A count of events left, shared by every tracee of one tracer state.
-opaque event_budget() :: reference().
-type payload_mode() :: full | shape | size | none.
-type field_kind() :: message | reason | name | driver | callback.
-type options() :: #{max_term_bytes => max_term_bytes(),
                     payload => payload_mode() | #{field_kind() => payload_mode()},
                     redact => [term()],
                     max_events => pos_integer() | event_budget()}.
-type tracer_state() :: [] | options().
-type enabled_result() :: trace | discard.
-type event_name() :: process_spawn | process_link | process_exit
                    | process_register | process_scheduled
                    | port_open | port_exit | port_link | port_scheduled
                    | function_call | function_return | function_exception
                    | message_send | message_receive
                    | gc_minor_start | gc_minor_end
                    | gc_major_start | gc_major_end.
%% `event_name()' lists the events of native/events.table in its order:
%% the NIF's build fails when they differ.
-type field_type() :: string | u32 | u64.
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
-type user_probe_result() :: true | false | error | badarg.

-export_type([options/0, tracer_state/0, event_name/0, event_info/0, payload_mode/0,
              field_kind/0, event_budget/0, max_term_bytes/0, counters/0]).

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
    {tracer, ?MODULE, validate_options(Options)}.

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
    lists:member(Kind, ?FIELD_KINDS) orelse error({badarg, {kind, Kind}}),
    format_field(Term, Kind, validate_options(Options)).

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
%% refused without it).
%% Answers how many functions matched.
-spec calls(dyntrace_ctl:call_spec() | [dyntrace_ctl:call_spec()],
            dyntrace_ctl:calls_opts()) -> dyntrace_ctl:result().
calls(Spec, Opts) ->
    dyntrace_ctl:calls(Spec, Opts).

%% @doc Undoes everything {@link trace/3} and {@link calls/2} set (their
%% flags, their trace patterns, on OTP 27+ their trace sessions), and
%% nothing that another tracer set.
-spec clear() -> ok.
clear() ->
    dyntrace_ctl:clear().

%% @doc What dyntrace traces now (per call: processes, events, flags,
%% patterns, events and milliseconds left), the LTTng events enabled now
%% and the tracer's counters.
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
%%% OTP's dyntrace API
%%% OTP's LTTng build has no user probes: `available/0' is `false' and the
%%% probes answer `error'. This module answers the same, so that code
%%% written for OTP's module behaves the same with this one.
%%%===================================================================

%% @doc Whether DTrace/SystemTap user probes exist: never, with LTTng.
-spec available() -> false.
available() -> false.

%% @doc User probe with one string: `error', as on OTP's LTTng build.
-spec user_trace_s1(iolist()) -> user_probe_result().
user_trace_s1(_Message) -> error.

%% @doc User probe with a tag, four integers and four strings: `error'.
-spec user_trace_i4s4(binary() | undefined, term(), term(), term(), term(),
                      term(), term(), term(), term()) -> user_probe_result().
user_trace_i4s4(_Tag, _I1, _I2, _I3, _I4, _S1, _S2, _S3, _S4) -> error.

%% @doc Numbered user probe: `error'.
-spec user_trace_n(n_probe_label(), binary() | undefined, term(), term(),
                   term(), term(), term(), term(), term(), term()) ->
          user_probe_result().
user_trace_n(_Label, _Tag, _I1, _I2, _I3, _I4, _S1, _S2, _S3, _S4) -> error.

%% @doc User probe with no arguments.
-spec p() -> user_probe_result().
p() -> user_probe([]).
%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg()) -> user_probe_result().
p(A) -> user_probe([A]).
%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg()) -> user_probe_result().
p(A, B) -> user_probe([A, B]).
%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg(), probe_arg()) -> user_probe_result().
p(A, B, C) -> user_probe([A, B, C]).
%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg(), probe_arg(), probe_arg()) -> user_probe_result().
p(A, B, C, D) -> user_probe([A, B, C, D]).
%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg()) ->
          user_probe_result().
p(A, B, C, D, E) -> user_probe([A, B, C, D, E]).
%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
        probe_arg()) -> user_probe_result().
p(A, B, C, D, E, F) -> user_probe([A, B, C, D, E, F]).
%% @doc User probe: up to four integers, then up to four strings.
-spec p(probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
        probe_arg(), probe_arg()) -> user_probe_result().
p(A, B, C, D, E, F, G) -> user_probe([A, B, C, D, E, F, G]).
%% @doc User probe: four integers, then four strings.
-spec p(probe_arg(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
        probe_arg(), probe_arg(), probe_arg()) -> user_probe_result().
p(A, B, C, D, E, F, G, H) -> user_probe([A, B, C, D, E, F, G, H]).

%% @doc Numbered user probe with no arguments.
-spec pn(n_probe_label()) -> user_probe_result().
pn(L) -> user_probe(L, []).
%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg()) -> user_probe_result().
pn(L, A) -> user_probe(L, [A]).
%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg()) -> user_probe_result().
pn(L, A, B) -> user_probe(L, [A, B]).
%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg()) ->
          user_probe_result().
pn(L, A, B, C) -> user_probe(L, [A, B, C]).
%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg(), probe_arg()) ->
          user_probe_result().
pn(L, A, B, C, D) -> user_probe(L, [A, B, C, D]).
%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
         probe_arg()) -> user_probe_result().
pn(L, A, B, C, D, E) -> user_probe(L, [A, B, C, D, E]).
%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
         probe_arg(), probe_arg()) -> user_probe_result().
pn(L, A, B, C, D, E, F) -> user_probe(L, [A, B, C, D, E, F]).
%% @doc Numbered user probe: up to four integers, then up to four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
         probe_arg(), probe_arg(), probe_arg()) -> user_probe_result().
pn(L, A, B, C, D, E, F, G) -> user_probe(L, [A, B, C, D, E, F, G]).
%% @doc Numbered user probe: four integers, then four strings.
-spec pn(n_probe_label(), probe_arg(), probe_arg(), probe_arg(), probe_arg(),
         probe_arg(), probe_arg(), probe_arg(), probe_arg()) ->
          user_probe_result().
pn(L, A, B, C, D, E, F, G, H) -> user_probe(L, [A, B, C, D, E, F, G, H]).

%% @doc Sets this process's dynamic trace tag (OTP's `erlang:dt_put_tag/1').
-spec put_tag(undefined | iodata()) -> binary() | undefined.
put_tag(Data) -> erlang:dt_put_tag(unicode:characters_to_binary(Data)).

%% @doc This process's dynamic trace tag.
-spec get_tag() -> binary() | undefined.
get_tag() -> erlang:dt_get_tag().

%% @doc The tag if set, else the tag spread with the last message received.
-spec get_tag_data() -> binary() | undefined.
get_tag_data() -> erlang:dt_get_tag_data().

%% @doc Makes the tag spread with sent messages, like a sequential trace token.
-spec spread_tag(boolean()) -> true | {non_neg_integer(), binary() | []}.
spread_tag(B) -> erlang:dt_spread_tag(B).

%% @doc Restores a tag state returned by {@link spread_tag/1}.
-spec restore_tag(true | {non_neg_integer(), binary() | []}) -> true.
restore_tag(T) -> erlang:dt_restore_tag(T).

%%%===================================================================
%%% VALIDATION
%%%===================================================================

-spec validate_options(term()) -> tracer_state().
validate_options([]) ->
    [];
validate_options(Options) when is_map(Options) ->
    maps:map(fun validate_option/2, Options);
validate_options(Options) ->
    error({badarg, {options, Options}}).

validate_option(max_term_bytes, N)
  when is_integer(N), N >= ?MIN_TERM_BYTES, N =< ?MAX_TERM_BYTES ->
    N;
validate_option(payload, Mode) when is_atom(Mode) ->
    lists:member(Mode, ?PAYLOAD_MODES) orelse error({badarg, {payload, Mode}}),
    Mode;
validate_option(payload, Modes) when is_map(Modes) ->
    Valid = fun(Kind, Mode) -> lists:member(Kind, ?FIELD_KINDS)
                                   andalso lists:member(Mode, ?PAYLOAD_MODES) end,
    maps:size(maps:filter(Valid, Modes)) =:= maps:size(Modes)
        orelse error({badarg, {payload, Modes}}),
    Modes;
validate_option(redact, Keys) when is_list(Keys) ->
    Length = try length(Keys) catch error:badarg -> -1 end,
    Length >= 0 andalso Length =< ?MAX_REDACT_KEYS
        orelse error({badarg, {redact, Keys}}),
    Keys;
validate_option(max_events, N) when is_integer(N), N > 0, N < 1 bsl 64 ->
    new_event_budget(N);
validate_option(max_events, Budget) when is_reference(Budget) ->
    try events_left(Budget) of
        _ -> Budget
    catch
        error:badarg -> error({badarg, {max_events, Budget}})
    end;
validate_option(Key, Value) ->
    error({badarg, {Key, Value}}).

%% Up to four integers, then up to four strings, as OTP's probes take them.
-spec user_probe([probe_arg()]) -> user_probe_result().
user_probe(Args) ->
    {Ints, Strings} = lists:splitwith(fun erlang:is_integer/1, Args),
    case length(Ints) =< 4 andalso length(Strings) =< 4 of
        true -> error;
        false -> erlang:error(badarg, [Args])
    end.

-spec user_probe(n_probe_label(), [probe_arg()]) -> user_probe_result().
user_probe(Label, Args) when is_integer(Label), Label >= 0, Label =< 1023 ->
    user_probe(Args);
user_probe(Label, Args) ->
    erlang:error(badarg, [Label, Args]).

%%%===================================================================
%%% NIF LOADING
%%%===================================================================

%% The NIF library does not link LTTng-UST: it opens the probe provider
%% library itself (from its load callback) after turning off LTTng-UST's
%% wait of up to 3 s for the session daemon, so that loading never holds
%% the schedulers on a hung daemon. Registration goes on in LTTng-UST's own
%% thread. An operator's own LTTNG_UST_REGISTER_TIMEOUT is kept.
-spec load_nif() -> ok | {error, term()}.
load_nif() ->
    Priv = nif_dir(),
    Library = filename:join(Priv, ?LIBRARY),
    Provider = filename:join(Priv, ?PROVIDER),
    case filelib:is_regular(Provider) andalso erlang:load_nif(Library, list_to_binary(Provider)) of
        ok ->
            ok;
        false ->
            not_loaded(Library, {missing, Provider}, "no probe provider library");
        {error, {Reason, Text}} ->
            not_loaded(Library, Reason, Text)
    end.

not_loaded(Library, Reason, Text) ->
    logger:error("dyntrace: cannot load the NIF library ~ts.so (~p: ~ts).~n"
                 "Build it in the dyntrace source tree with `rebar3 compile` "
                 "(needs cargo and liblttng-ust-dev), or see README.md.",
                 [Library, Reason, Text]),
    {error, {nif_not_loaded, Reason}}.

%% The `priv/' beside the `ebin/' this module came from, where a build or
%% release puts the libraries; else the application's `priv_dir', which
%% the code server guesses from the code path's directory names (another
%% `dyntrace-*' directory earlier on the path would win there).
nif_dir() ->
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
    Candidates = Beside ++ App,
    case [D || D <- Candidates, filelib:is_regular(filename:join(D, ?PROVIDER))] of
        [Found | _] -> Found;
        [] -> hd(Candidates ++ ["priv"])
    end.
