/*
 * The tracepoint provider and the few C entry points the Rust NIF needs:
 * a table of pointers to each event's enable state (the hot-path check
 * is one relaxed load of it) and one emitter per argument shape.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "org_erlang_dyntrace_tp.h"
#include "dyntrace_events.h"

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
