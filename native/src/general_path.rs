//! The general way of a `trace*` call: the tag's route, the tracer state,
//! the event's field extraction (`fields`) into this thread's field
//! buffers. Every event the short path (`short_path`) leaves comes here.

use crate::answers::ok_answer;
use crate::events::Class;
use crate::fields::{self, EventTerms, Malformed};
use crate::{lttng, options, routes, stats};
use rustler::sys::ErlNifTerm;
use rustler::{Env, Term};

/// `trace*(Tag, State, Tracee, TraceTerm, Opts)`: emits the event and
/// answers `ok`. Arguments the runtime never passes answer `None`, which
/// the callback raises as `badarg` (counted), without emitting.
pub fn emit(env: Env, class: Option<Class>, args: &[ErlNifTerm; 5]) -> Option<ErlNifTerm> {
    // SAFETY: the words are the NIF call's own terms, live for it.
    let [tag, state, tracee, term, opts] = args.map(|word| unsafe { Term::new(env, word) });
    let ok = Some(ok_answer());
    let Some(route) = routes::find(class, tag, tracee) else {
        return ok;
    };
    // Sessions may have stopped since the enabled check: skip the work.
    if !lttng::is_enabled(route.event) {
        return ok;
    }
    let mut view = options::StateView::default();
    if !options::state_admits(state, &mut view) {
        return ok;
    }
    let terms = EventTerms {
        env,
        route,
        options: &view.options,
        tracee,
        term,
        opts,
    };
    let emitted = fields::with_field_texts(|texts| {
        texts.clear();
        fields::write_event(route.event, &terms, texts)
    })
    .unwrap_or(Err(Malformed));
    match emitted {
        Ok(()) => ok,
        Err(Malformed) => {
            stats::count_bad_arguments();
            None
        }
    }
}
