/*
 * The tracepoints and the few C entry points the Rust NIF needs: a table
 * of pointers to each event's enable state (the hot-path check is one
 * relaxed load of it), one emitter per event, and the loader of the probe
 * provider.
 *
 * The NIF does not link liblttng-ust: its constructor registers with the
 * session daemon and waits up to LTTNG_UST_REGISTER_TIMEOUT ms (3 s by
 * default) for the answer, and a constructor of a library the NIF links
 * would run inside erlang:load_nif/2, on a normal scheduler. So the probes
 * live in their own library (org_erlang_dyntrace_provider.c), which
 * dyntrace_load_provider() opens from a dirty I/O scheduler once the NIF is
 * loaded; until then every event reads disabled.
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "org_erlang_dyntrace_tp.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define DYNTRACE_TP(name) lttng_ust_tracepoint_org_erlang_dyntrace___##name

/* The enable-state and name tables and one emitter per event, generated
 * from native/events.table: an emitter's parameters are its event's
 * fields, so Rust cannot pass an event the arguments of another. */
#include "dyntrace_emitters.h"

/*
 * Opens the probe provider library at `path`. Returns NULL on success,
 * else the reason (dlerror's text, valid until the next dl call).
 *
 * LTTNG_UST_REGISTER_TIMEOUT is left as the operator set it (3000 ms when
 * unset). It is not only the constructor's wait: LTTng-UST also makes it
 * the deadline for the session daemon's every answer on the notify socket
 * (channel and event registrations, at `lttng start`), raised to 10 ms at
 * the least. Set to 0, a daemon that paused 10 ms under load made this
 * process drop the channel or an event of the session for good, while it
 * stayed registered: "not enabled after 10000 ms" from record/2. So the
 * constructor's wait is kept, and the caller (a dirty I/O NIF) keeps it
 * off the normal schedulers instead.
 */
const char *dyntrace_load_provider(const char *path)
{
    /* Never unloaded: LTTng-UST probes must outlive every event. */
    void *provider = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    return provider ? NULL : dlerror();
}
