/*
 * The probe provider of org_erlang_dyntrace: the probes LTTng-UST calls
 * when an event is enabled. Built as its own shared library, linked with
 * liblttng-ust, and opened by the NIF (see org_erlang_dyntrace.c).
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "org_erlang_dyntrace_tp.h"
