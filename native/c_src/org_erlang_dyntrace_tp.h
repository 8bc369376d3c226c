/*
 * LTTng-UST tracepoint provider org_erlang_dyntrace: the contract of
 * README.md (Events). Field names, order and types are those of OTP's
 * --with-dynamic-trace=lttng build, so its scripts keep working.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER org_erlang_dyntrace

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./org_erlang_dyntrace_tp.h"

#if !defined(ORG_ERLANG_DYNTRACE_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define ORG_ERLANG_DYNTRACE_TP_H

#include <lttng/tracepoint.h>

/* Three string fields named A, B, C. */
#define DYNTRACE_S3_EVENT(name, A, B, C)                                  \
    LTTNG_UST_TRACEPOINT_EVENT(org_erlang_dyntrace, name,                 \
        LTTNG_UST_TP_ARGS(const char *, a, const char *, b,               \
                          const char *, c),                               \
        LTTNG_UST_TP_FIELDS(lttng_ust_field_string(A, a)                  \
                            lttng_ust_field_string(B, b)                  \
                            lttng_ust_field_string(C, c)))

#define DYNTRACE_S2_EVENT(name, A, B)                                     \
    LTTNG_UST_TRACEPOINT_EVENT(org_erlang_dyntrace, name,                 \
        LTTNG_UST_TP_ARGS(const char *, a, const char *, b),              \
        LTTNG_UST_TP_FIELDS(lttng_ust_field_string(A, a)                  \
                            lttng_ust_field_string(B, b)))

/* pid, entry, depth (unsigned 32-bit, as OTP's `unsigned int`). */
#define DYNTRACE_CALL_EVENT(name)                                         \
    LTTNG_UST_TRACEPOINT_EVENT(org_erlang_dyntrace, name,                 \
        LTTNG_UST_TP_ARGS(const char *, pid, const char *, entry,         \
                          unsigned int, depth),                           \
        LTTNG_UST_TP_FIELDS(lttng_ust_field_string(pid, pid)              \
                            lttng_ust_field_string(entry, entry)          \
                            lttng_ust_field_integer(unsigned int, depth,  \
                                                    depth)))

/* pid, then need or reclaimed (SIZE), heap, old_heap: C unsigned long. */
#define DYNTRACE_GC_EVENT(name, SIZE)                                     \
    LTTNG_UST_TRACEPOINT_EVENT(org_erlang_dyntrace, name,                 \
        LTTNG_UST_TP_ARGS(const char *, pid, unsigned long, size,         \
                          unsigned long, heap, unsigned long, old_heap),  \
        LTTNG_UST_TP_FIELDS(lttng_ust_field_string(pid, pid)              \
                            lttng_ust_field_integer(unsigned long, SIZE,  \
                                                    size)                 \
                            lttng_ust_field_integer(unsigned long, heap,  \
                                                    heap)                 \
                            lttng_ust_field_integer(unsigned long,        \
                                                    old_heap, old_heap)))

DYNTRACE_S3_EVENT(process_spawn, pid, parent, entry)
DYNTRACE_S3_EVENT(process_link, from, to, type)
DYNTRACE_S2_EVENT(process_exit, pid, reason)
DYNTRACE_S3_EVENT(process_register, pid, name, type)
DYNTRACE_S3_EVENT(process_scheduled, pid, entry, type)
DYNTRACE_S3_EVENT(port_open, pid, driver, port)
DYNTRACE_S2_EVENT(port_exit, port, reason)
DYNTRACE_S3_EVENT(port_link, from, to, type)
DYNTRACE_S3_EVENT(port_scheduled, pid, entry, type)
DYNTRACE_CALL_EVENT(function_call)
DYNTRACE_CALL_EVENT(function_return)
DYNTRACE_S3_EVENT(function_exception, pid, entry, class)
DYNTRACE_S3_EVENT(message_send, from, to, message)
DYNTRACE_S2_EVENT(message_receive, to, message)
DYNTRACE_GC_EVENT(gc_minor_start, need)
DYNTRACE_GC_EVENT(gc_minor_end, reclaimed)
DYNTRACE_GC_EVENT(gc_major_start, need)
DYNTRACE_GC_EVENT(gc_major_end, reclaimed)

#endif /* ORG_ERLANG_DYNTRACE_TP_H */

#include <lttng/tracepoint-event.h>
