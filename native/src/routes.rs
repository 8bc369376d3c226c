//! Trace tag atoms, resolved once at load, and the per-event lookup.

use crate::events::{Class, Route, ROUTES};
use crate::lttng;
use crate::vm::term_word;
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
    let mut by_class = [EMPTY_CLASS; Class::COUNT];
    for route in ROUTES {
        let atom = Atom::from_str(env, route.tag)
            .map_err(|_| format!("cannot make the tag atom {}", route.tag))?;
        insert(
            &mut by_class[route.class as usize],
            term_word(atom.as_c_arg()),
            route,
        )
        .map_err(|TableFull| {
            format!(
                "class {} has more tags than its {} route slots can hold",
                route.class.flag(),
                SLOTS - 1
            )
        })?;
    }
    Ok(RouteTable { by_class })
}

const EMPTY_CLASS: [Slot; SLOTS] = [Slot {
    word: 0,
    route: None,
}; SLOTS];

/// A class's slots would have no empty one left.
#[derive(Debug, PartialEq)]
struct TableFull;

/// Puts `route` in the first free slot from `word`'s home, keeping one
/// slot empty: a probe stops at an empty slot.
fn insert(slots: &mut [Slot; SLOTS], word: usize, route: &'static Route) -> Result<(), TableFull> {
    let used = slots.iter().filter(|slot| slot.route.is_some()).count();
    if used + 1 >= SLOTS {
        return Err(TableFull);
    }
    let mut i = home(word);
    while slots[i].route.is_some() {
        i = (i + 1) % SLOTS;
    }
    slots[i] = Slot {
        word,
        route: Some(route),
    };
    Ok(())
}

/// The row for `tag` in `class`, if that tag becomes an event.
#[inline]
pub fn lookup(class: Class, tag: Term) -> Option<&'static Route> {
    lookup_word(class, term_word(tag.as_c_arg()))
}

/// `lookup` by the tag's word.
#[inline]
pub fn lookup_word(class: Class, tag: usize) -> Option<&'static Route> {
    let slots = &TABLE.get()?.by_class[class as usize];
    probe(slots, tag)
}

/// The route stored under `word`: from its home slot on, until the word
/// or an empty slot.
#[inline]
fn probe(slots: &[Slot; SLOTS], word: usize) -> Option<&'static Route> {
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

/// The row for `tag` of a class's callback (`Some(class)`) or of the
/// generic one (`None`).
#[inline]
pub fn find(class: Option<Class>, tag: Term, tracee: Term) -> Option<&'static Route> {
    match class {
        Some(class) => lookup(class, tag),
        None => lookup_any(tag, tracee),
    }
}

/// Whether a tag's route leads to an event a started session records.
#[inline]
pub fn recorded(route: Option<&Route>) -> bool {
    route.is_some_and(|route| lttng::is_enabled(route.event))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventId;

    /// Words as the VM makes atom words (index << 6 | 0b1011), spread so
    /// that several share a home slot.
    fn words() -> Vec<usize> {
        (1..=400usize).map(|i| (i << 6) | 0b1011).collect()
    }

    #[test]
    fn finds_every_stored_word_and_nothing_else() {
        let all = words();
        let (stored, absent) = all.split_at(SLOTS - 1);
        let mut slots = EMPTY_CLASS;
        for (word, route) in stored.iter().zip(ROUTES) {
            insert(&mut slots, *word, route).unwrap();
        }
        for (word, route) in stored.iter().zip(ROUTES) {
            assert!(std::ptr::eq(probe(&slots, *word).unwrap(), route));
        }
        for word in absent {
            assert!(probe(&slots, *word).is_none());
        }
    }

    #[test]
    fn colliding_words_each_find_their_own_route() {
        let all = words();
        let home_of_first = home(all[0]);
        let colliding: Vec<usize> = all
            .into_iter()
            .filter(|w| home(*w) == home_of_first)
            .take(3)
            .collect();
        assert_eq!(
            colliding.len(),
            3,
            "the test needs three words of one home slot"
        );
        let mut slots = EMPTY_CLASS;
        for (word, route) in colliding.iter().zip(ROUTES) {
            insert(&mut slots, *word, route).unwrap();
        }
        let found: Vec<EventId> = colliding
            .iter()
            .map(|w| probe(&slots, *w).unwrap().event)
            .collect();
        let expected: Vec<EventId> = ROUTES.iter().take(3).map(|r| r.event).collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn a_full_class_is_refused_before_the_last_empty_slot() {
        let mut slots = EMPTY_CLASS;
        for word in words().into_iter().take(SLOTS - 1) {
            insert(&mut slots, word, &ROUTES[0]).unwrap();
        }
        assert_eq!(
            insert(&mut slots, words()[SLOTS], &ROUTES[0]),
            Err(TableFull)
        );
    }

    #[test]
    fn every_class_of_the_table_fits() {
        for class in Class::ALL {
            let tags = ROUTES.iter().filter(|r| r.class == class).count();
            assert!(tags < SLOTS, "{} has {tags} tags", class.flag());
        }
    }
}
