%% The records of the front door's entries: dyntrace_plans makes plans,
%% dyntrace_runtime sets and undoes them, dyntrace_ctl keeps the entries.

-type procs_spec() :: all | processes | ports | existing | existing_processes
                    | existing_ports | new | new_processes | new_ports.
-type millisecs() :: pos_integer().
-type mfa_pattern() :: {module() | '_', atom(), arity() | '_'}.
-type kind() :: trace | calls | sample | memory | found.

%% What one call set: enough to undo exactly that.
-record(plan, {kind :: trace | calls | found,
               procs = [] :: [pid() | port() | procs_spec()],
               events = [] :: [dyntrace:event_name()],
               flags = [] :: [atom()],
               patterns = [] :: [{mfa_pattern(), ets:match_spec() | true | false,
                                  [local | global]}],
               tracer_state = [] :: dyntrace:tracer_state(),
               duration = infinity :: millisecs() | infinity,
               %% calls: the rate guard asked for, and once set, its state.
               max_rate :: dyntrace_guard:rate() | undefined,
               guard :: dyntrace_guard:guard() | undefined}).

%% One entry of status(): a call (its plan), a sampler (its sampler plan),
%% a recording (its own plan), or what the runtime showed traced by dyntrace
%% that no entry accounted for (`found').
-record(trace, {id :: pos_integer(),
                kind :: kind() | recording,
                plan :: #plan{} | dyntrace_sampler:plan() | map(),
                %% OTP 27+: the call's trace session; `legacy' before;
                %% `{sampler, Pid, Counters}'; `{recording, Pid}'.
                session :: term(),
                deadline = infinity :: integer() | infinity,
                %% The recording this is a part of.
                owner :: pos_integer() | undefined}).
