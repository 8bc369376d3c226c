/* The limit of what a tracer that writes message_send can cost: an
 * erl_tracer NIF that answers `trace` for send tags while the LTTng event
 * org_erlang_dyntrace:message_send is enabled, and writes that very
 * tracepoint (the same provider and probe as dyntrace's) with constant
 * texts set beforehand to the lengths dyntrace would write. What it adds
 * per event is the VM's dispatch plus one tracepoint: no term is read or
 * formatted. The benchmark reports dyntrace's added cost against it. */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "org_erlang_dyntrace_tp.h"

#include "bench_tracer.h"
#include <string.h>

/* The texts written, NUL-terminated; set by set_texts/3 before tracing. */
#define TEXT_MAX 1100
static char from_text[TEXT_MAX], to_text[TEXT_MAX], message_text[TEXT_MAX];

/* The one relaxed load dyntrace's enabled check does too. */
static int message_send_enabled(void)
{
    return __atomic_load_n(
        &lttng_ust_tracepoint_org_erlang_dyntrace___message_send.state,
        __ATOMIC_RELAXED);
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

/* is_enabled() -> whether this library's message_send tracepoint is on. */
static ERL_NIF_TERM is_enabled(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    (void)argv;
    return enif_make_atom(env, message_send_enabled() ? "true" : "false");
}

static void init_tracer(void)
{
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
    OTHER(call),
    OTHER(receive),
    OTHER(garbage_collection),
    {"set_texts", 3, set_texts, 0},
    {"is_enabled", 0, is_enabled, 0},
};

ERL_NIF_INIT(limit_tracer, funcs, load, NULL, upgrade, NULL)
