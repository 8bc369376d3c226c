//! The tracer state: `[]` or a map of options, read on every event into
//! one small `StateView` (no allocation; `[]` costs one check).

use crate::format::{
    FieldKind, Payload, Redact, TermOptions, DEFAULT_MAX_TERM_BYTES, MAX_MAX_TERM_BYTES,
    MIN_MAX_TERM_BYTES,
};
use crate::vm::map::{self, SmallMap};
use crate::vm::{is_immediate, is_nil, term_of_word, term_word};
use crate::{limits, stats};
use rustler::{Atom, Encoder, Env, NifResult, Term};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

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
    kinds,
}

/// The options `format_term/3` was given, already checked by
/// `dyntrace:format_term/3`: `None` if they are not valid after all.
pub fn parse_options<'a>(state: Term<'a>) -> Option<TermOptions<'a>> {
    if state.is_empty_list() {
        return Some(TermOptions::default());
    }
    let mut view = StateView::default();
    read_map(state, &mut view)?.valid.then_some(view.options)
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
/// Written into `view`, which starts as the defaults. Inlined: every
/// event reads it, and a call's frame costs more than the read of a
/// small state.
#[inline(always)]
pub fn read_state<'a>(state: Term<'a>, view: &mut StateView<'a>) {
    if is_nil(state.as_c_arg()) {
        return;
    }
    // A map is never an immediate.
    let read = (!is_immediate(state.as_c_arg()))
        .then(|| read_map(state, view))
        .flatten();
    let Some(read) = read else {
        stats::count_bad_tracer_state();
        return;
    };
    if !read.valid {
        stats::count_bad_tracer_state();
        view.options = if read.hides {
            TermOptions::hiding_all()
        } else {
            TermOptions::default()
        };
    }
}

/// Reads the tracer state of an event about to be written into `view`:
/// whether its budget lets it be written (one unit taken).
#[inline(always)]
pub fn state_admits<'a>(state: Term<'a>, view: &mut StateView<'a>) -> bool {
    read_state(state, view);
    limits::take(view.budget)
}

/// What reading a map state found: valid when every key is one of ours
/// with a valid value; `hides` when it names an option that hides.
struct Verdict {
    valid: bool,
    hides: bool,
}

impl Verdict {
    /// Before any key is read.
    const START: Verdict = Verdict {
        valid: true,
        hides: false,
    };
}

/// The state's keys, in the order a large map is searched.
#[derive(Clone, Copy)]
enum Key {
    Payload,
    Redact,
    MaxTermBytes,
    MaxEvents,
}

impl Key {
    const ALL: [Key; 4] = [Key::Payload, Key::Redact, Key::MaxTermBytes, Key::MaxEvents];

    fn atom(self) -> Atom {
        match self {
            Key::Payload => payload(),
            Key::Redact => redact(),
            Key::MaxTermBytes => max_term_bytes(),
            Key::MaxEvents => limits::max_events(),
        }
    }

    /// The key a word is, if it is one of the state's.
    #[inline]
    fn of_word(word: usize) -> Option<Key> {
        Key::ALL.into_iter().find(|key| key.word() == word)
    }

    #[inline]
    fn word(self) -> usize {
        KEY_WORDS[self as usize].load(Ordering::Relaxed)
    }
}

/// Whether a small map state names `max_events`: the one option that
/// changes an `enabled*` answer (`limits::gate`).
#[inline]
pub fn names_budget(state: &SmallMap) -> bool {
    state.get_word(Key::MaxEvents.word()).is_some()
}

/// The words of the state's keys (in `Key`'s order) and of the payload
/// modes (in `MODES`' order), learned at load: the state is read on every
/// event, and an atom of `rustler::atoms!` is a lock check away.
static KEY_WORDS: [AtomicUsize; Key::ALL.len()] = [const { AtomicUsize::new(0) }; Key::ALL.len()];
static MODE_WORDS: [AtomicUsize; MODES.len()] = [const { AtomicUsize::new(0) }; MODES.len()];
const MODES: [Payload; 4] = [Payload::None, Payload::Shape, Payload::Size, Payload::Full];

/// Learns the words `read_state` compares with. Called from the NIF's load.
pub fn init() {
    for key in Key::ALL {
        KEY_WORDS[key as usize].store(term_word(key.atom().as_c_arg()), Ordering::Relaxed);
    }
    for (mode, word) in MODES.into_iter().zip(&MODE_WORDS) {
        word.store(term_word(mode_atom(mode).as_c_arg()), Ordering::Relaxed);
    }
}

fn mode_atom(mode: Payload) -> Atom {
    match mode {
        Payload::None => none(),
        Payload::Shape => shape(),
        Payload::Size => size(),
        Payload::Full => full(),
    }
}

/// Reads a map state into `view`, in place since it runs on every event.
/// A small map's keys are walked once, in place; a large one (more keys
/// than a state has, so never valid) is searched for the state's keys.
/// `None` if `state` is no map.
#[inline(always)]
fn read_map<'a>(state: Term<'a>, view: &mut StateView<'a>) -> Option<Verdict> {
    let Some(small) = map::view(state) else {
        return read_large_map(state, view);
    };
    let mut read = Verdict::START;
    for (key, value) in small.entries() {
        // SAFETY: a value of the map, a term of the same call.
        let value = unsafe { Term::new(state.get_env(), term_of_word(value)) };
        match Key::of_word(key) {
            Some(Key::Payload) => read_key(Key::Payload, value, view, &mut read),
            Some(key) => read_other_key(key, value, view, &mut read),
            None => read.valid = false,
        }
    }
    Some(read)
}

/// `read_key` for the keys other than `payload`, out of line: the
/// events' short paths stay short for a state that sets only `payload`.
#[inline(never)]
fn read_other_key<'a>(key: Key, value: Term<'a>, view: &mut StateView<'a>, read: &mut Verdict) {
    read_key(key, value, view, read);
}

/// `read_map` of a map that is not small, out of line.
#[inline(never)]
fn read_large_map<'a>(state: Term<'a>, view: &mut StateView<'a>) -> Option<Verdict> {
    let mut read = Verdict::START;
    let size = map::size(state)?;
    let mut found = 0;
    for key in Key::ALL {
        if let Some(value) = map::value(state, key.atom().to_term(state.get_env())) {
            read_key(key, value, view, &mut read);
            found += 1;
        }
    }
    read.valid &= found == size;
    Some(read)
}

/// Reads one option of a state into `view`.
#[inline(always)]
fn read_key<'a>(key: Key, value: Term<'a>, view: &mut StateView<'a>, read: &mut Verdict) {
    let valid = match key {
        Key::Payload => {
            read.hides = true;
            payloads(value).map(|modes| view.options.payload = modes)
        }
        Key::Redact => {
            read.hides = true;
            Redact::from_list(value).map(|keys| view.options.redact = keys)
        }
        Key::MaxTermBytes => {
            valid_max_term_bytes(value).map(|max| view.options.max_term_bytes = max)
        }
        Key::MaxEvents => limits::budget(value).map(|budget| view.budget = Some(budget)),
    };
    read.valid &= valid.is_some();
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
#[inline(always)]
fn payloads(value: Term) -> Option<[Payload; FieldKind::COUNT]> {
    if let Some(mode) = payload_mode(value) {
        let mut modes = [mode; FieldKind::COUNT];
        modes[FieldKind::Name as usize] = Payload::Full;
        return Some(modes);
    }
    payloads_per_kind(value)
}

/// `#{Kind => Mode}`: out of line, the common `payload => Mode` keeps
/// the state's reading short.
#[inline(never)]
fn payloads_per_kind(value: Term) -> Option<[Payload; FieldKind::COUNT]> {
    let size = map::size(value)?;
    let mut modes = [Payload::Full; FieldKind::COUNT];
    let mut found = 0;
    for kind in FieldKind::ALL {
        if found == size {
            break;
        }
        if let Some(mode) = map::get(value, kind_atom(kind)) {
            modes[kind as usize] = payload_mode(mode)?;
            found += 1;
        }
    }
    (found == size).then_some(modes)
}

/// Atoms are compared as words: no decoding on the per-event path.
#[inline(always)]
fn payload_mode(value: Term) -> Option<Payload> {
    let word = term_word(value.as_c_arg());
    MODES
        .into_iter()
        .zip(&MODE_WORDS)
        .find(|(_, mode)| mode.load(Ordering::Relaxed) == word)
        .map(|(mode, _)| mode)
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

/// The options a tracer state takes and their limits, as the callbacks
/// read them: `#{max_term_bytes => {Min, Max, Default}, payload => Modes,
/// kinds => Kinds, redact => MaxKeys, max_events => {1, Max}}`.
/// `dyntrace:tracer/1` checks a state against this, so that the limits are
/// written once, here.
#[rustler::nif]
fn option_limits(env: Env) -> NifResult<Term> {
    let modes = [full(), shape(), size(), none()];
    let kind_atoms = FieldKind::ALL.map(kind_atom);
    Term::map_from_arrays(
        env,
        &[
            max_term_bytes().encode(env),
            payload().encode(env),
            kinds().encode(env),
            redact().encode(env),
            limits::max_events().encode(env),
        ],
        &[
            (
                MIN_MAX_TERM_BYTES,
                MAX_MAX_TERM_BYTES,
                DEFAULT_MAX_TERM_BYTES,
            )
                .encode(env),
            modes.as_slice().encode(env),
            kind_atoms.as_slice().encode(env),
            Redact::MAX_KEYS.encode(env),
            (1u64, u64::MAX).encode(env),
        ],
    )
}
