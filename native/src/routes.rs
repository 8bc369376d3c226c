//! Trace tag atoms, resolved once at load, and the per-event lookup.

use crate::events::{Class, Route, ROUTES};
use crate::term_word;
use once_cell::sync::OnceCell;
use rustler::{Atom, Env, Term};

/// Slots per class: a power of two, more than any class has tags (at most
/// eight today), so a probe always ends at the tag or at an empty slot;
/// `init` fails the load if a class ever has too many.
const SLOTS: usize = 16;

#[derive(Clone, Copy)]
struct Slot {
    /// The tag atom's term word; atom words are the same in every
    /// environment, so plain words compare exactly.
    word: usize,
    route: Option<&'static Route>,
}

/// For each class, its tags in an open-addressed table.
struct RouteTable {
    by_class: [[Slot; SLOTS]; Class::COUNT],
}

static TABLE: OnceCell<RouteTable> = OnceCell::new();

/// The first slot to look at for a term word: a multiplicative hash, so
/// that nothing depends on how the VM numbers its atoms.
fn home(word: usize) -> usize {
    (word as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize >> (usize::BITS - SLOTS.ilog2())
}

/// Creates the tag atoms and the table. Called from the NIF's load and
/// upgrade, which fail if it does.
pub fn init(env: Env) -> Result<(), String> {
    TABLE.get_or_try_init(|| build(env)).map(|_| ())
}

fn build(env: Env) -> Result<RouteTable, String> {
    let empty = Slot {
        word: 0,
        route: None,
    };
    let mut by_class = [[empty; SLOTS]; Class::COUNT];
    for route in ROUTES {
        let atom = Atom::from_str(env, route.tag)
            .map_err(|_| format!("cannot make the tag atom {}", route.tag))?;
        let word = term_word(atom.as_c_arg());
        let slots = &mut by_class[route.class as usize];
        // A lookup stops at an empty slot: one must always stay empty.
        let used = slots.iter().filter(|slot| slot.route.is_some()).count();
        if used + 1 >= SLOTS {
            return Err(format!(
                "class {} has more tags than its {} route slots can hold",
                route.class.flag(),
                SLOTS - 1
            ));
        }
        let mut i = home(word);
        while slots[i].route.is_some() {
            i = (i + 1) % SLOTS;
        }
        slots[i] = Slot {
            word,
            route: Some(route),
        };
    }
    Ok(RouteTable { by_class })
}

/// The row for `tag` in `class`, if that tag becomes an event.
#[inline]
pub fn lookup(class: Class, tag: Term) -> Option<&'static Route> {
    let slots = &TABLE.get()?.by_class[class as usize];
    let word = term_word(tag.as_c_arg());
    let mut i = home(word);
    loop {
        let slot = slots[i];
        if slot.word == word || slot.route.is_none() {
            return slot.route;
        }
        i = (i + 1) % SLOTS;
    }
}

/// The row for `tag` when the runtime calls the generic `enabled/3` or
/// `trace/5`: tags shared by processes and ports (`link`, `in`, ...) go to
/// the class that matches the tracee.
pub fn lookup_any(tag: Term, tracee: Term) -> Option<&'static Route> {
    let tracee_is_port = tracee.is_port();
    let mut found = None;
    for class in Class::ALL {
        let Some(route) = lookup(class, tag) else {
            continue;
        };
        if is_port_class(route.class) == tracee_is_port {
            return Some(route);
        }
        found.get_or_insert(route);
    }
    found
}

fn is_port_class(class: Class) -> bool {
    matches!(class, Class::Ports | Class::RunningPorts)
}
