//! The tracer state: `[]` or a map of options, read on every event into
//! one small `StateView` (no allocation; `[]` costs one check).

use crate::format::{FieldKind, Payload, Redact, TermOptions};
use crate::small_map::{self, SmallMap};
use crate::{limits, stats};
use rustler::sys::ErlNifTerm;
use rustler::{Atom, Term};
use std::sync::atomic::AtomicU64;

pub const DEFAULT_MAX_TERM_BYTES: usize = 1024;
pub const MIN_MAX_TERM_BYTES: usize = 64;
pub const MAX_MAX_TERM_BYTES: usize = 65536;

rustler::atoms! {
    max_term_bytes,
    payload,
    redact,
    full,
    shape,
    size,
    none,
    message,
    reason,
    name,
    driver,
    callback,
}

/// The options `format_term/3` was given, already checked by
/// `dyntrace:format_term/3`: `None` if they are not valid after all.
pub fn parse_options<'a>(state: Term<'a>) -> Option<TermOptions<'a>> {
    if state.is_empty_list() {
        return Some(TermOptions::default());
    }
    let read = read_map(Keys::of(state)?);
    read.valid.then_some(read.options)
}

/// What one event reads of the tracer state: the options of its term
/// fields and the event budget (`max_events`), if any.
#[derive(Default)]
pub struct StateView<'a> {
    pub options: TermOptions<'a>,
    pub budget: Option<&'a AtomicU64>,
}

/// Reads the state of one event, in one pass over the map. A state we
/// cannot read is counted (`dyntrace:stats()`) and means the defaults,
/// except that a map that names `payload` or `redact` fails closed: every
/// term text is then written `-` (names included), since those options
/// hide things. A valid budget counts even in a state that is not.
#[inline]
pub fn read_state<'a>(state: Term<'a>) -> StateView<'a> {
    if crate::is_nil(state.as_c_arg()) {
        return StateView::default();
    }
    // A map is never an immediate.
    let keys = (!crate::is_immediate(state.as_c_arg()))
        .then(|| Keys::of(state))
        .flatten();
    let Some(keys) = keys else {
        stats::count_bad_tracer_state();
        return StateView::default();
    };
    let read = read_map(keys);
    let options = if read.valid {
        read.options
    } else {
        stats::count_bad_tracer_state();
        if read.hides {
            TermOptions::hiding_all()
        } else {
            TermOptions::default()
        }
    };
    StateView {
        options,
        budget: read.budget,
    }
}

/// A map state as read: valid when every key is one of ours with a valid
/// value; `hides` when it names an option that hides.
struct MapState<'a> {
    options: TermOptions<'a>,
    budget: Option<&'a AtomicU64>,
    valid: bool,
    hides: bool,
}

/// The keys of a map of `size` keys, looked up one by one until all are
/// found: a missing key costs a lookup too, so none is looked for then.
/// A small map is read in place (`small_map`), a large one through enif.
struct Keys<'a> {
    map: Term<'a>,
    small: Option<SmallMap<'a>>,
    size: usize,
    found: usize,
}

impl<'a> Keys<'a> {
    /// The keys of `map`; `None` if it is no map.
    #[inline]
    fn of(map: Term<'a>) -> Option<Self> {
        let small = small_map::view(map);
        let size = match small {
            Some(small) => small.len(),
            None => map_size(map)?,
        };
        Some(Keys {
            map,
            small,
            size,
            found: 0,
        })
    }

    fn get(&mut self, key: Atom) -> Option<Term<'a>> {
        if self.found == self.size {
            return None;
        }
        let value = match self.small {
            Some(small) => small.get(self.map.get_env(), key),
            None => map_value(self.map, key.to_term(self.map.get_env())),
        }?;
        self.found += 1;
        Some(value)
    }
}

/// Reads a map state: each key looked up once, the most common first.
fn read_map<'a>(mut keys: Keys<'a>) -> MapState<'a> {
    let mut read = MapState {
        options: TermOptions::default(),
        budget: None,
        valid: true,
        hides: false,
    };
    if let Some(value) = keys.get(payload()) {
        read.hides = true;
        match payloads(value) {
            Some(modes) => read.options.payload = modes,
            None => read.valid = false,
        }
    }
    if let Some(value) = keys.get(redact()) {
        read.hides = true;
        match Redact::from_list(value) {
            Some(keys) => read.options.redact = keys,
            None => read.valid = false,
        }
    }
    if let Some(value) = keys.get(max_term_bytes()) {
        match valid_max_term_bytes(value) {
            Some(max) => read.options.max_term_bytes = max,
            None => read.valid = false,
        }
    }
    if let Some(value) = keys.get(limits::max_events()) {
        match limits::budget(value) {
            Some(budget) => read.budget = Some(budget),
            None => read.valid = false,
        }
    }
    // A key that is none of ours makes the whole map invalid.
    read.valid &= keys.found == keys.size;
    read
}

/// The value under the atom `key` in `map`: in place for a small map,
/// else through enif.
#[inline]
pub fn map_get<'a>(map: Term<'a>, key: Atom) -> Option<Term<'a>> {
    match small_map::view(map) {
        Some(small) => small.get(map.get_env(), key),
        None => map_value(map, key.to_term(map.get_env())),
    }
}

/// The value under `key` in `map`, straight from the enif call.
#[inline]
pub fn map_value<'a>(map: Term<'a>, key: Term<'a>) -> Option<Term<'a>> {
    let env = map.get_env();
    let mut value = ErlNifTerm::default();
    // SAFETY: valid terms of `env`; `value` is an out-pointer to a local.
    let found = unsafe {
        rustler::sys::enif_get_map_value(env.as_c_arg(), map.as_c_arg(), key.as_c_arg(), &mut value)
    };
    // SAFETY: on success `value` is a term of `env`.
    (found != 0).then(|| unsafe { Term::new(env, value) })
}

/// The number of keys of a map.
#[inline]
fn map_size(map: Term) -> Option<usize> {
    let mut size = 0;
    // SAFETY: a valid term; `size` is an out-pointer to a local.
    let is_map = unsafe {
        rustler::sys::enif_get_map_size(map.get_env().as_c_arg(), map.as_c_arg(), &mut size)
    };
    (is_map != 0).then_some(size)
}

/// A byte limit given as a term, if it is an integer in 64..=65536.
pub fn valid_max_term_bytes(value: Term) -> Option<usize> {
    value
        .decode::<usize>()
        .ok()
        .filter(|n| (MIN_MAX_TERM_BYTES..=MAX_MAX_TERM_BYTES).contains(n))
}

/// `payload => Mode` (every kind but `name`) or `#{Kind => Mode}` (kinds
/// not named stay `full`).
fn payloads(value: Term) -> Option<[Payload; FieldKind::COUNT]> {
    if let Some(mode) = payload_mode(value) {
        let mut modes = [mode; FieldKind::COUNT];
        modes[FieldKind::Name as usize] = Payload::Full;
        return Some(modes);
    }
    let size = map_size(value)?;
    let mut modes = [Payload::Full; FieldKind::COUNT];
    let mut found = 0;
    for kind in FieldKind::ALL {
        if found == size {
            break;
        }
        if let Some(mode) = map_get(value, kind_atom(kind)) {
            modes[kind as usize] = payload_mode(mode)?;
            found += 1;
        }
    }
    (found == size).then_some(modes)
}

/// Atoms are compared as words: no decoding on the per-event path.
fn payload_mode(value: Term) -> Option<Payload> {
    if none() == value {
        Some(Payload::None)
    } else if shape() == value {
        Some(Payload::Shape)
    } else if size() == value {
        Some(Payload::Size)
    } else if full() == value {
        Some(Payload::Full)
    } else {
        None
    }
}

/// The atom that names a field kind in options.
pub fn kind_atom(kind: FieldKind) -> Atom {
    match kind {
        FieldKind::Message => message(),
        FieldKind::Reason => reason(),
        FieldKind::Name => name(),
        FieldKind::Driver => driver(),
        FieldKind::Callback => callback(),
    }
}

/// The field kind an atom names.
pub fn kind_of(term: Term) -> Option<FieldKind> {
    FieldKind::ALL
        .into_iter()
        .find(|kind| kind_atom(*kind) == term)
}
