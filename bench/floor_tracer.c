/* The cheapest possible erl_tracer module: every enabled_* answers one
 * constant and every trace_* returns ok without writing anything. The
 * benchmark attaches it next to dyntrace to show what the VM's tracer
 * dispatch costs by itself (answer `trace`), and what a switched-off
 * tracer costs at the least (answer `discard`, the probe-off floor). */
#include "bench_tracer.h"

/* Per-thread call counts, each on its own cache line so that schedulers
 * never share one; read only when the workload has finished. */
#define SLOTS 256
static struct {
    unsigned long n;
    char pad[64 - sizeof(unsigned long)];
} counts[SLOTS];
static int next_slot;
static __thread int my_slot __attribute__((tls_model("initial-exec"))) = -1;

static ERL_NIF_TERM answer;

static ERL_NIF_TERM enabled(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)env;
    (void)argc;
    /* trace_status keeps the tracer attached in both modes. */
    if (answer == atom_discard && argv[0] == atom_trace_status)
        return atom_trace;
    return answer;
}

static ERL_NIF_TERM trace(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)env;
    (void)argc;
    (void)argv;
    if (my_slot < 0)
        my_slot = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED) % SLOTS;
    counts[my_slot].n++;
    return atom_ok;
}

/* set_answer(trace | discard) */
static ERL_NIF_TERM set_answer(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    if (argv[0] != atom_trace && argv[0] != atom_discard)
        return enif_make_badarg(env);
    answer = argv[0];
    return atom_ok;
}

/* take_count() -> the trace_* calls since the last take_count(). */
static ERL_NIF_TERM take_count(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    unsigned long total = 0;
    (void)argc;
    (void)argv;
    for (int i = 0; i < SLOTS; i++) {
        total += counts[i].n;
        counts[i].n = 0;
    }
    return enif_make_ulong(env, total);
}

static void init_tracer(ErlNifEnv *env)
{
    (void)env;
    answer = atom_trace;
}

#define CLASS(c) {"enabled_" #c, 3, enabled, 0}, {"trace_" #c, 5, trace, 0}

static ErlNifFunc funcs[] = {
    {"enabled", 3, enabled, 0},
    {"trace", 5, trace, 0},
    CLASS(procs),
    CLASS(ports),
    CLASS(running_procs),
    CLASS(running_ports),
    CLASS(call),
    CLASS(send),
    CLASS(receive),
    CLASS(garbage_collection),
    {"set_answer", 1, set_answer, 0},
    {"take_count", 0, take_count, 0},
};

ERL_NIF_INIT(floor_tracer, funcs, load, NULL, upgrade, NULL)
