/*
 * The tracepoints and the few C entry points the Rust NIF needs: a table
 * of pointers to each event's enable state (the hot-path check is one
 * relaxed load of it), one emitter per argument shape, and the loader of
 * the probe provider.
 *
 * The NIF does not link liblttng-ust: its constructor registers with the
 * session daemon and waits up to LTTNG_UST_REGISTER_TIMEOUT ms (3 s by
 * default) for the answer, and a constructor of a library the NIF links
 * would run inside erlang:load_nif/2, holding schedulers, before any code
 * of ours could change that. So the probes live in their own library
 * (org_erlang_dyntrace_provider.c), which dyntrace_load_provider() opens
 * once the wait is turned off; until then every event reads disabled.
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "org_erlang_dyntrace_tp.h"
#include "dyntrace_events.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define DYNTRACE_TP(name) lttng_ust_tracepoint_org_erlang_dyntrace___##name

const int *const dyntrace_event_state[DYNTRACE_EVENT_COUNT] = {
#define DYNTRACE_STATE(name, shape) &DYNTRACE_TP(name).state,
    DYNTRACE_EVENTS(DYNTRACE_STATE)
#undef DYNTRACE_STATE
};

const char *const dyntrace_event_name[DYNTRACE_EVENT_COUNT] = {
#define DYNTRACE_NAME(name, shape) #name,
    DYNTRACE_EVENTS(DYNTRACE_NAME)
#undef DYNTRACE_NAME
};

const unsigned dyntrace_event_count = DYNTRACE_EVENT_COUNT;

/* Each emitter expands a case only for the events of its own shape. */
#define CASE_S3(name)                                                     \
    case DYNTRACE_EV_##name:                                              \
        lttng_ust_tracepoint(org_erlang_dyntrace, name, a, b, c);         \
        break;
#define CASE_S2(name)                                                     \
    case DYNTRACE_EV_##name:                                              \
        lttng_ust_tracepoint(org_erlang_dyntrace, name, a, b);            \
        break;
#define CASE_CALL(name)                                                   \
    case DYNTRACE_EV_##name:                                              \
        lttng_ust_tracepoint(org_erlang_dyntrace, name, pid, entry, depth); \
        break;
#define CASE_GC(name)                                                     \
    case DYNTRACE_EV_##name:                                              \
        lttng_ust_tracepoint(org_erlang_dyntrace, name, pid, size, heap,  \
                             old_heap);                                   \
        break;
#define ONLY_S3_S3(name) CASE_S3(name)
#define ONLY_S3_S2(name)
#define ONLY_S3_CALL(name)
#define ONLY_S3_GC(name)
#define ONLY_S2_S3(name)
#define ONLY_S2_S2(name) CASE_S2(name)
#define ONLY_S2_CALL(name)
#define ONLY_S2_GC(name)
#define ONLY_CALL_S3(name)
#define ONLY_CALL_S2(name)
#define ONLY_CALL_CALL(name) CASE_CALL(name)
#define ONLY_CALL_GC(name)
#define ONLY_GC_S3(name)
#define ONLY_GC_S2(name)
#define ONLY_GC_CALL(name)
#define ONLY_GC_GC(name) CASE_GC(name)

#define EMIT_S3(name, shape) ONLY_S3_##shape(name)
#define EMIT_S2(name, shape) ONLY_S2_##shape(name)
#define EMIT_CALL(name, shape) ONLY_CALL_##shape(name)
#define EMIT_GC(name, shape) ONLY_GC_##shape(name)

void dyntrace_emit_s3(unsigned event, const char *a, const char *b,
                      const char *c)
{
    switch (event) {
        DYNTRACE_EVENTS(EMIT_S3)
    default:
        break;
    }
}

void dyntrace_emit_s2(unsigned event, const char *a, const char *b)
{
    switch (event) {
        DYNTRACE_EVENTS(EMIT_S2)
    default:
        break;
    }
}

void dyntrace_emit_call(unsigned event, const char *pid, const char *entry,
                        unsigned depth)
{
    switch (event) {
        DYNTRACE_EVENTS(EMIT_CALL)
    default:
        break;
    }
}

void dyntrace_emit_gc(unsigned event, const char *pid, unsigned long size,
                      unsigned long heap, unsigned long old_heap)
{
    switch (event) {
        DYNTRACE_EVENTS(EMIT_GC)
    default:
        break;
    }
}

#define REGISTER_TIMEOUT "LTTNG_UST_REGISTER_TIMEOUT"

/*
 * Opens the probe provider library at `path`, with LTTng-UST's wait for
 * the session daemon turned off unless the operator set it. Registration
 * goes on in LTTng-UST's own thread. Returns NULL on success, else the
 * reason (dlerror's text, valid until the next dl call).
 */
const char *dyntrace_load_provider(const char *path)
{
    /* The real C environment: the VM's os:putenv/2 keeps its own copy,
     * which liblttng-ust's getenv(3) does not see. */
    int ours = getenv(REGISTER_TIMEOUT) == NULL;
    if (ours)
        setenv(REGISTER_TIMEOUT, "0", 0);
    /* Never unloaded: LTTng-UST probes must outlive every event. */
    void *provider = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (ours)
        unsetenv(REGISTER_TIMEOUT);
    return provider ? NULL : dlerror();
}
