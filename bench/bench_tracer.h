/* What the benchmark's C tracer modules share: the atoms they answer
 * with, made at load, and the load and upgrade callbacks. Each tracer
 * defines init_tracer(env), called at every load. */
#ifndef BENCH_TRACER_H
#define BENCH_TRACER_H

#include <erl_nif.h>

static ERL_NIF_TERM atom_trace, atom_discard, atom_ok, atom_trace_status;

static void init_tracer(ErlNifEnv *env);

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info)
{
    (void)priv;
    (void)info;
    atom_trace = enif_make_atom(env, "trace");
    atom_discard = enif_make_atom(env, "discard");
    atom_ok = enif_make_atom(env, "ok");
    atom_trace_status = enif_make_atom(env, "trace_status");
    init_tracer(env);
    return 0;
}

static int upgrade(ErlNifEnv *env, void **priv, void **old, ERL_NIF_TERM info)
{
    (void)old;
    return load(env, priv, info);
}

#endif
