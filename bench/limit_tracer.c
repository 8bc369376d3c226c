/* The limit of what a tracer that writes message_send, function_call and
 * function_return can cost: an erl_tracer NIF that answers `trace` for
 * send tags while the LTTng event org_erlang_dyntrace:message_send is
 * enabled (call tags: while function_call or function_return is), and
 * writes that very tracepoint (the same provider and probes as dyntrace's)
 * with constant texts set beforehand to those dyntrace would write. What
 * it adds per event is the VM's dispatch plus one tracepoint: no term is
 * read or formatted. The benchmark reports dyntrace's added cost against
 * it. */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "org_erlang_dyntrace_tp.h"

#include "bench_tracer.h"
#include <string.h>

/* The texts written, NUL-terminated; set by set_texts/3 and
 * set_call_texts/2 before tracing. */
#define TEXT_MAX 1100
static char from_text[TEXT_MAX], to_text[TEXT_MAX], message_text[TEXT_MAX];
static char pid_text[TEXT_MAX], entry_text[TEXT_MAX];

static ERL_NIF_TERM atom_call, atom_return_from;

/* The one relaxed load dyntrace's enabled check does too. */
#define EVENT_ENABLED(event)                                                    \
    __atomic_load_n(&lttng_ust_tracepoint_org_erlang_dyntrace___##event.state, \
                    __ATOMIC_RELAXED)

static int message_send_enabled(void)
{
    return EVENT_ENABLED(message_send);
}

static ERL_NIF_TERM limit_enabled_send(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)env;
    (void)argc;
    if (argv[0] == atom_trace_status || message_send_enabled())
        return atom_trace;
    return atom_discard;
}

/* Other classes: only trace_status keeps the tracer attached. */
static ERL_NIF_TERM limit_enabled_other(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)env;
    (void)argc;
    return argv[0] == atom_trace_status ? atom_trace : atom_discard;
}

static ERL_NIF_TERM limit_trace_send(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)env;
    (void)argc;
    (void)argv;
    lttng_ust_tracepoint(org_erlang_dyntrace, message_send, from_text, to_text,
                         message_text);
    return atom_ok;
}

static ERL_NIF_TERM limit_trace_other(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)env;
    (void)argc;
    (void)argv;
    return atom_ok;
}

/* Call tags: `call` while function_call is enabled, `return_from` while
 * function_return is. */
static ERL_NIF_TERM limit_enabled_call(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)env;
    (void)argc;
    if (argv[0] == atom_trace_status || (argv[0] == atom_call && EVENT_ENABLED(function_call))
        || (argv[0] == atom_return_from && EVENT_ENABLED(function_return)))
        return atom_trace;
    return atom_discard;
}

/* Depth 0, as dyntrace writes it: the runtime passes no call depth. */
static ERL_NIF_TERM limit_trace_call(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)env;
    (void)argc;
    if (argv[0] == atom_call)
        lttng_ust_tracepoint(org_erlang_dyntrace, function_call, pid_text, entry_text, 0);
    else if (argv[0] == atom_return_from)
        lttng_ust_tracepoint(org_erlang_dyntrace, function_return, pid_text, entry_text, 0);
    return atom_ok;
}

static int copy_text(ErlNifEnv *env, ERL_NIF_TERM term, char *to)
{
    ErlNifBinary bin;
    if (!enif_inspect_iolist_as_binary(env, term, &bin) || bin.size >= TEXT_MAX)
        return 0;
    memcpy(to, bin.data, bin.size);
    to[bin.size] = 0;
    return 1;
}

/* set_texts(From, To, Message): the fields every event will carry. */
static ERL_NIF_TERM set_texts(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    if (!copy_text(env, argv[0], from_text) || !copy_text(env, argv[1], to_text)
        || !copy_text(env, argv[2], message_text))
        return enif_make_badarg(env);
    return atom_ok;
}

/* set_call_texts(Pid, Entry): the fields every call event will carry. */
static ERL_NIF_TERM set_call_texts(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    if (!copy_text(env, argv[0], pid_text) || !copy_text(env, argv[1], entry_text))
        return enif_make_badarg(env);
    return atom_ok;
}

/* is_enabled() -> whether this library's message_send tracepoint is on. */
static ERL_NIF_TERM is_enabled(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    (void)argv;
    return enif_make_atom(env, message_send_enabled() ? "true" : "false");
}

static void init_tracer(ErlNifEnv *env)
{
    atom_call = enif_make_atom(env, "call");
    atom_return_from = enif_make_atom(env, "return_from");
}

/* Named apart from the VM's own functions (the VM has a trace_send), so
 * that a profile tells them apart. */
#define OTHER(c) {"enabled_" #c, 3, limit_enabled_other, 0}, {"trace_" #c, 5, limit_trace_other, 0}

static ErlNifFunc funcs[] = {
    {"enabled", 3, limit_enabled_other, 0},
    {"trace", 5, limit_trace_other, 0},
    {"enabled_send", 3, limit_enabled_send, 0},
    {"trace_send", 5, limit_trace_send, 0},
    OTHER(procs),
    OTHER(ports),
    OTHER(running_procs),
    OTHER(running_ports),
    {"enabled_call", 3, limit_enabled_call, 0},
    {"trace_call", 5, limit_trace_call, 0},
    OTHER(receive),
    OTHER(garbage_collection),
    {"set_texts", 3, set_texts, 0},
    {"set_call_texts", 2, set_call_texts, 0},
    {"is_enabled", 0, is_enabled, 0},
};

ERL_NIF_INIT(limit_tracer, funcs, load, NULL, upgrade, NULL)
