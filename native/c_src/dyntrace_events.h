/*
 * The 18 events of provider org_erlang_dyntrace, in the order of
 * EventId in native/src/events.rs (checked by name when the NIF loads).
 * The second column is the event's argument shape, which picks the
 * emitter in org_erlang_dyntrace.c:
 *   S3   three strings          S2  two strings
 *   CALL string, string, depth  GC  string and three unsigned longs
 */
#ifndef DYNTRACE_EVENTS_H
#define DYNTRACE_EVENTS_H

#define DYNTRACE_EVENTS(X)            \
    X(process_spawn, S3)              \
    X(process_link, S3)               \
    X(process_exit, S2)               \
    X(process_register, S3)           \
    X(process_scheduled, S3)          \
    X(port_open, S3)                  \
    X(port_exit, S2)                  \
    X(port_link, S3)                  \
    X(port_scheduled, S3)             \
    X(function_call, CALL)            \
    X(function_return, CALL)          \
    X(function_exception, S3)         \
    X(message_send, S3)               \
    X(message_receive, S2)            \
    X(gc_minor_start, GC)             \
    X(gc_minor_end, GC)               \
    X(gc_major_start, GC)             \
    X(gc_major_end, GC)

enum dyntrace_event {
#define DYNTRACE_ENUM(name, shape) DYNTRACE_EV_##name,
    DYNTRACE_EVENTS(DYNTRACE_ENUM)
#undef DYNTRACE_ENUM
    DYNTRACE_EVENT_COUNT
};

#endif
