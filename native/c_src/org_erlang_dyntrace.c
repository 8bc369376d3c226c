/*
 * The tracepoints and the few C entry points the Rust NIF needs: a table
 * of pointers to each event's enable state (the hot-path check is one
 * relaxed load of it), one emitter per event, and the loader of the probe
 * provider.
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

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define DYNTRACE_TP(name) lttng_ust_tracepoint_org_erlang_dyntrace___##name

/* The enable-state and name tables and one emitter per event, generated
 * from native/events.table: an emitter's parameters are its event's
 * fields, so Rust cannot pass an event the arguments of another. */
#include "dyntrace_emitters.h"

#define REGISTER_TIMEOUT "LTTNG_UST_REGISTER_TIMEOUT"

/*
 * Opens the probe provider library at `path`, with LTTng-UST's wait for
 * the session daemon turned off unless the operator set it. Registration
 * goes on in LTTng-UST's own thread. Returns NULL on success, else the
 * reason (dlerror's text, valid until the next dl call).
 *
 * setenv(3) runs here while the VM's other threads run, which is safe as
 * far as it can be made so:
 * - ERTS never writes the C environment after start-up (os:putenv/2 and
 *   the ports it spawns use its own copy), and this function writes it at
 *   most once per process: the variable stays set (to 0), so a reload
 *   finds it and writes nothing. It is never unset, because unsetenv
 *   shifts the entries of the array other threads may be reading.
 * - Other threads only read it (getenv, as libc's localtime does for TZ).
 *   glibc's setenv copies an environment it did not allocate into a new
 *   array and leaves the old one in place, so a concurrent reader sees
 *   the old array or the new one, both valid.
 * - The remaining window: if another library grew the environment with
 *   setenv before, glibc reallocates that array, and a getenv on another
 *   thread at that very instant could read the freed one. Once per
 *   process, at load; the alternative is LTTng-UST's 3 s wait on a
 *   scheduler whenever the session daemon is slow.
 */
const char *dyntrace_load_provider(const char *path)
{
    /* The real C environment: the VM's os:putenv/2 keeps its own copy,
     * which liblttng-ust's getenv(3) does not see. */
    if (getenv(REGISTER_TIMEOUT) == NULL)
        setenv(REGISTER_TIMEOUT, "0", 0);
    /* Never unloaded: LTTng-UST probes must outlive every event. */
    void *provider = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    return provider ? NULL : dlerror();
}
