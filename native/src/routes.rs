//! Trace tag atoms, resolved once at load, and the per-event lookup.

use crate::events::{Class, Route, ROUTES};
use once_cell::sync::OnceCell;
use rustler::sys::ErlNifTerm as ERL_NIF_TERM;
use rustler::{Atom, Env, Term};

/// For each class, its tags' atom terms and their rows. Atom terms are
/// the same in every environment, so plain term words compare exactly.
struct RouteTable {
    by_class: [Vec<(ERL_NIF_TERM, &'static Route)>; Class::COUNT],
}

static TABLE: OnceCell<RouteTable> = OnceCell::new();

/// Creates the tag atoms. Called from the NIF's load and upgrade.
pub fn init(env: Env) {
    TABLE.get_or_init(|| {
        let mut by_class: [Vec<(ERL_NIF_TERM, &'static Route)>; Class::COUNT] = Default::default();
        for route in ROUTES {
            let atom = Atom::from_str(env, route.tag)
                .map(|a| a.as_c_arg())
                .unwrap_or_default();
            by_class[route.class as usize].push((atom, route));
        }
        RouteTable { by_class }
    });
}

/// The row for `tag` in `class`, if that tag becomes an event.
#[inline]
pub fn lookup(class: Class, tag: Term) -> Option<&'static Route> {
    let tag = tag.as_c_arg();
    TABLE.get()?.by_class[class as usize]
        .iter()
        .find(|(atom, _)| *atom == tag)
        .map(|(_, route)| *route)
}

/// The row for `tag` when the runtime calls the generic `enabled/3` or
/// `trace/5`: tags shared by processes and ports (`link`, `in`, ...) go to
/// the class that matches the tracee.
pub fn lookup_any(tag: Term, tracee: Term) -> Option<&'static Route> {
    let tag_word = tag.as_c_arg();
    let tracee_is_port = tracee.is_port();
    let mut found = None;
    for (atom, route) in TABLE.get()?.by_class.iter().flatten() {
        if *atom == tag_word {
            if is_port_class(route.class) == tracee_is_port {
                return Some(route);
            }
            found.get_or_insert(*route);
        }
    }
    found
}

fn is_port_class(class: Class) -> bool {
    matches!(class, Class::Ports | Class::RunningPorts)
}
