//! `dyntrace:events/0` and `dyntrace:enabled_events/0`: the event table,
//! and the events a started session records now.

use crate::events::{self, EventId};
use crate::lttng;
use rustler::{Atom, Encoder, Env, NifResult, Term};

/// The events enabled in a started LTTng session right now.
#[rustler::nif]
fn enabled_events(env: Env) -> Vec<Atom> {
    EventId::ALL
        .iter()
        .filter(|event| lttng::is_enabled(**event))
        .filter_map(|event| Atom::from_str(env, event.name()).ok())
        .collect()
}

/// The event table, in order: one map per event, `#{name => Event,
/// fields => [{Name, Type}], tags => [{Class, Tag}]}`.
#[rustler::nif]
fn events(env: Env) -> NifResult<Vec<Term>> {
    let atom = |text: &str| Atom::from_str(env, text);
    let (name, fields, tags) = (atom("name")?, atom("fields")?, atom("tags")?);
    EventId::ALL
        .iter()
        .map(|&event| {
            let field_list = event
                .fields()
                .iter()
                .map(|field| Ok((atom(field.name)?, atom(field.kind.name())?)))
                .collect::<NifResult<Vec<_>>>()?;
            let tag_list = events::ROUTES
                .iter()
                .filter(|route| route.event == event)
                .map(|route| Ok((atom(route.class.flag())?, atom(route.tag)?)))
                .collect::<NifResult<Vec<_>>>()?;
            Term::map_from_arrays(
                env,
                &[name, fields, tags],
                &[
                    atom(event.name())?.encode(env),
                    field_list.encode(env),
                    tag_list.encode(env),
                ],
            )
        })
        .collect()
}
