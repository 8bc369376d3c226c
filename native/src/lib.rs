//! `dyntrace`: an `erl_tracer` module that writes LTTng-UST events.
//!
//! The library entry and the utility NIFs live here; the 18 tracer
//! callbacks are raw NIFs in `callbacks`, their logic in `tracer`. The
//! event table is `events` (generated from `native/events.table`), each
//! event's field extraction `fields`, the tag lookup `routes`, the term
//! printer `format` (pid texts cached in `ident_cache`), the C provider's
//! interface `lttng`.

#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

mod binary_bytes;
mod callbacks;
mod enif;
mod events;
mod fields;
mod format;
mod ident_cache;
mod limits;
mod lttng;
#[cfg(test)]
mod no_vm;
mod options;
mod routes;
mod sample_events;
mod short_path;
mod small_map;
mod stats;
mod text_cache;
mod tracer;

use events::EventId;
use rustler::codegen_runtime::{ErlNifEntry, ErlNifEnv, ErlNifFunc, ErlNifTerm};
use rustler::types::binary::NewBinary;
use rustler::{Atom, Binary, Encoder, Env, NifResult, Term};
use std::ffi::{c_int, c_void, CString};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The machine word of a term: what the VM compares for immediates.
#[inline]
pub(crate) fn term_word(term: ErlNifTerm) -> usize {
    // SAFETY: ErlNifTerm is a repr(transparent) wrapper of the term word.
    unsafe { std::mem::transmute::<ErlNifTerm, usize>(term) }
}

/// Whether a term is a local pid, by its tag (`_TAG_IMMED1_PID`, the same
/// in every ERTS release): no VM call.
#[inline]
pub(crate) fn is_local_pid(term: ErlNifTerm) -> bool {
    term_word(term) & 0xF == 0x3
}

/// Whether a term is an atom, by its tag (`_TAG_IMMED2_ATOM`, the same
/// in every ERTS release): no VM call.
#[inline]
pub(crate) fn is_atom_word(term: ErlNifTerm) -> bool {
    term_word(term) & 0x3F == 0x0B
}

/// The value of a small integer, by its tag (`_TAG_IMMED1_SMALL`, the
/// same in every ERTS release); `None` for anything else, bignums too.
#[inline]
pub(crate) fn small_int(term: ErlNifTerm) -> Option<i64> {
    let word = term_word(term);
    (word & 0xF == 0xF).then_some((word as i64) >> 4)
}

/// The term a word is: the inverse of `term_word`, for words taken from
/// terms.
#[inline]
pub(crate) fn term_of_word(word: usize) -> ErlNifTerm {
    // SAFETY: ErlNifTerm is a repr(transparent) wrapper of the term word.
    unsafe { std::mem::transmute::<usize, ErlNifTerm>(word) }
}

/// Whether a term is an immediate (atom, small integer, local pid or
/// port, `[]`): its primary tag, the same in every ERTS release. A map,
/// a tuple or a list cell never is.
#[inline]
pub(crate) fn is_immediate(term: ErlNifTerm) -> bool {
    term_word(term) & 0b11 == 0b11
}

/// The primary tag of a boxed term's word (`TAG_PRIMARY_BOXED`, the same
/// in every ERTS release): the word less this is the address of the
/// object, whose first word is a header.
pub(crate) const BOXED: usize = 0b10;

/// The address of a boxed term's object, if `word` is a boxed term's.
#[inline]
pub(crate) fn boxed(word: usize) -> Option<*const usize> {
    (word & 0b11 == BOXED).then(|| object(word))
}

/// The address of the object of `word`, known to be a boxed term's.
#[inline]
pub(crate) fn object(word: usize) -> *const usize {
    (word - BOXED) as *const usize
}

/// The word of `[]`, learned at load (it differs between releases); 0,
/// which is no term, before.
static NIL_WORD: AtomicUsize = AtomicUsize::new(0);

/// Whether a term is `[]`, by its word: no VM call.
#[inline]
pub(crate) fn is_nil(term: ErlNifTerm) -> bool {
    term_word(term) == NIL_WORD.load(Ordering::Relaxed)
}

/// After a panic caught at the NIF boundary, still inside the same NIF
/// call: counts it (`dyntrace:stats()`, `panics`) and resets the
/// formatter's per-thread state, whose map iterators belong to this call.
/// Out of line: the callbacks' common path keeps its registers.
#[cold]
#[inline(never)]
pub(crate) fn recover_from_panic(env: *mut ErlNifEnv) {
    stats::count_panic();
    format::reset_after_panic(env);
}

/// The text a `message`/`reason` field would hold for `term` under the
/// byte limit `max_term_bytes`.
#[rustler::nif]
fn format_term<'a>(
    env: Env<'a>,
    term: Term<'a>,
    max_term_bytes: Term<'a>,
) -> NifResult<Binary<'a>> {
    let max = options::valid_max_term_bytes(max_term_bytes).ok_or(rustler::Error::BadArg)?;
    formatted(env, |text| format::format_term_bounded(term, max, text))
}

/// The text a field of kind `kind` gets for `term` under the tracer
/// options `options` (`dyntrace:format_term/3` checks both first).
#[rustler::nif]
fn format_field<'a>(
    env: Env<'a>,
    term: Term<'a>,
    kind: Term<'a>,
    options: Term<'a>,
) -> NifResult<Binary<'a>> {
    let kind = options::kind_of(kind).ok_or(rustler::Error::BadArg)?;
    let options = options::parse_options(options).ok_or(rustler::Error::BadArg)?;
    formatted(env, |text| format::format_field(term, &options, kind, text))
}

/// The binary `write` writes; a panic in it is `badarg` (and counted).
fn formatted<'a>(env: Env<'a>, write: impl FnOnce(&mut Vec<u8>)) -> NifResult<Binary<'a>> {
    let mut text = Vec::new();
    let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| write(&mut text)));
    if written.is_err() {
        recover_from_panic(env.as_c_arg());
        return Err(rustler::Error::BadArg);
    }
    let mut bin = NewBinary::new(env, text.len());
    bin.as_mut_slice().copy_from_slice(&text);
    Ok(bin.into())
}

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

rustler::atoms! {
    ok,
}

/// Writes one `node_name` event: this node's name, a channel number (the
/// first number of the pids this node writes for `peer`; 0 for itself),
/// `peer`'s name and why it is written, all atoms but the channel.
#[rustler::nif]
fn emit_node_name(node: Term, channel: u64, peer: Term, why: Term) -> NifResult<Atom> {
    if !(node.is_atom() && peer.is_atom() && why.is_atom()) {
        return Err(rustler::Error::BadArg);
    }
    if !lttng::is_enabled(EventId::NodeName) {
        return Ok(ok());
    }
    let (mut node_text, mut peer_text, mut why_text) = (Vec::new(), Vec::new(), Vec::new());
    format::format_atom(node, &mut node_text);
    format::format_atom(peer, &mut peer_text);
    why_text.extend_from_slice(why.atom_to_string()?.as_bytes());
    events::emit::node_name(
        lttng::Text::terminate(&mut node_text),
        channel,
        lttng::Text::terminate(&mut peer_text),
        lttng::Text::terminate(&mut why_text),
    );
    Ok(ok())
}

/// The byte limit of each text of a user probe: the tracer's default
/// `max_term_bytes`.
const PROBE_TEXT_BYTES: usize = 1024;

/// The text of a user probe's string: an iolist or `undefined` (`""`).
fn probe_text(term: Term, out: &mut Vec<u8>) -> NifResult<()> {
    if term.is_atom() {
        return if term.atom_to_string()? == "undefined" {
            Ok(())
        } else {
            Err(rustler::Error::BadArg)
        };
    }
    if format::format_iolist_bounded(term, PROBE_TEXT_BYTES, out) {
        Ok(())
    } else {
        Err(rustler::Error::BadArg)
    }
}

/// Whether the user probe event of `probe` is enabled: `user_trace_i4s4`
/// for `undefined`, `user_trace_n` for a number. The first thing a probe
/// does, so that one not enabled costs this call and a load.
#[rustler::nif]
fn user_probe_enabled(probe: Term) -> bool {
    lttng::is_enabled(if probe.is_atom() {
        EventId::UserTraceI4s4
    } else {
        EventId::UserTraceN
    })
}

/// Writes `user_trace_s1` for `pid` (the caller); false when the event is
/// not enabled. `dyntrace:user_trace_s1/1` checks the arguments' shape.
#[rustler::nif]
fn emit_user_trace_s1(pid: Term, message: Term) -> NifResult<bool> {
    if !lttng::is_enabled(EventId::UserTraceS1) {
        return Ok(false);
    }
    let (mut pid_text, mut message_text) = (Vec::new(), Vec::new());
    format::format_identifier(pid, &mut pid_text);
    probe_text(message, &mut message_text)?;
    events::emit::user_trace_s1(
        lttng::Text::terminate(&mut pid_text),
        lttng::Text::terminate(&mut message_text),
    );
    Ok(true)
}

/// Writes `user_trace_i4s4` (`probe` is `undefined`) or `user_trace_n`
/// (`probe` is 0..1023): the caller's pid, its tag (a binary or
/// `undefined`), four integers and four strings (iolists or `undefined`);
/// false when the event is not enabled. `dyntrace:user_probe/3` fills the
/// missing ones in.
#[rustler::nif]
fn emit_user_trace<'a>(
    probe: Term<'a>,
    pid: Term<'a>,
    tag: Term<'a>,
    ints: (i64, i64, i64, i64),
    strings: (Term<'a>, Term<'a>, Term<'a>, Term<'a>),
) -> NifResult<bool> {
    let numbered = if probe.is_atom() {
        None
    } else {
        Some(
            probe
                .decode::<u32>()
                .ok()
                .filter(|n| *n <= 1023)
                .ok_or(rustler::Error::BadArg)?,
        )
    };
    let event = numbered.map_or(EventId::UserTraceI4s4, |_| EventId::UserTraceN);
    if !lttng::is_enabled(event) {
        return Ok(false);
    }
    let mut texts: [Vec<u8>; 6] = Default::default();
    format::format_identifier(pid, &mut texts[0]);
    let (s1, s2, s3, s4) = strings;
    for (term, text) in [tag, s1, s2, s3, s4].into_iter().zip(&mut texts[1..]) {
        probe_text(term, text)?;
    }
    let [pid, tag, s1, s2, s3, s4] = texts.each_mut().map(lttng::Text::terminate);
    let (i1, i2, i3, i4) = ints;
    match numbered {
        None => events::emit::user_trace_i4s4(pid, tag, i1, i2, i3, i4, s1, s2, s3, s4),
        Some(n) => events::emit::user_trace_n(n, pid, tag, i1, i2, i3, i4, s1, s2, s3, s4),
    }
    Ok(true)
}

/// The anomaly counters, as a map.
#[rustler::nif]
fn stats(env: Env) -> NifResult<Term> {
    let mut map = rustler::types::map::map_new(env);
    for (name, count) in stats::snapshot() {
        map = map.map_put(Atom::from_str(env, name)?, count.encode(env))?;
    }
    Ok(map)
}

// ---------------------------------------------------------------------------
// Library entry. rustler's `init!` leaves the `upgrade` callback unset, and
// then a second `l(dyntrace)` fails ("upgrade not supported"); ours sets it.

/// What the load callback answers when the probe provider (and so
/// LTTng-UST's runtime library it links) cannot be opened; `dyntrace.erl`
/// reads it from `erlang:load_nif/2`'s error ("... unsuccessful (2).").
const PROVIDER_NOT_OPENED: c_int = 2;
/// Any other load failure, already explained on stderr.
const LOAD_FAILED: c_int = 1;

/// Load and upgrade: the load info is the path of the probe provider
/// library, which the module passes from its `priv/` directory.
fn on_load(env: Env, load_info: Term) -> Result<(), c_int> {
    if let Err(why) = lttng::check_provider() {
        eprintln!("dyntrace: tracepoint provider mismatch: {why}");
        return Err(LOAD_FAILED);
    }
    if let Err(why) = routes::init(env) {
        eprintln!("dyntrace: {why}");
        return Err(LOAD_FAILED);
    }
    if !limits::init(env) {
        eprintln!("dyntrace: cannot open the event budget resource type");
        return Err(LOAD_FAILED);
    }
    NIL_WORD.store(
        term_word(Term::list_new_empty(env).as_c_arg()),
        Ordering::Relaxed,
    );
    tracer::init(env);
    short_path::init(env);
    options::init();
    if !small_map::init(env) {
        eprintln!("dyntrace: maps are not laid out as expected; reading them through enif");
    }
    if !binary_bytes::init(env.as_c_arg()) {
        eprintln!("dyntrace: binaries are not laid out as expected; reading them through enif");
    }
    // `{ProviderPath, HashMap, FirstKeyOfItsToList}`: the map tells which
    // way this release's iterator goes (format's big-map order).
    let Ok((path, map, first)) = load_info.decode::<(Term, Term, Term)>() else {
        eprintln!("dyntrace: the load info must be {{ProviderPath, Map, Key}}");
        return Err(LOAD_FAILED);
    };
    format::learn_hash_map_order(env.as_c_arg(), map.as_c_arg(), first.as_c_arg());
    let Some(path) = path
        .decode_as_binary()
        .ok()
        .and_then(|bin| CString::new(bin.as_slice()).ok())
    else {
        eprintln!("dyntrace: the provider library's path must be a binary");
        return Err(LOAD_FAILED);
    };
    // Silent here: the module logs the one line that says what to install.
    lttng::load_provider(&path).map_err(|_| PROVIDER_NOT_OPENED)
}

fn guarded_load(env: *mut ErlNifEnv, load_info: ErlNifTerm) -> c_int {
    std::panic::catch_unwind(|| {
        // SAFETY: `env` and `load_info` are what the runtime passed us.
        let env = unsafe { Env::new_init_env(&env, env) };
        // SAFETY: `load_info` is a term of that environment.
        let load_info = unsafe { Term::new(env, load_info) };
        on_load(env, load_info)
    })
    .map_or(LOAD_FAILED, |loaded| loaded.err().unwrap_or(0))
}

extern "C" fn nif_load(env: *mut ErlNifEnv, _priv: *mut *mut c_void, info: ErlNifTerm) -> c_int {
    guarded_load(env, info)
}

extern "C" fn nif_upgrade(
    env: *mut ErlNifEnv,
    _priv: *mut *mut c_void,
    _old_priv: *mut *mut c_void,
    info: ErlNifTerm,
) -> c_int {
    guarded_load(env, info)
}

struct Entry(ErlNifEntry);
// SAFETY: built once, then only read by the runtime.
unsafe impl Sync for Entry {}
// SAFETY: as above: nothing writes it after it is built.
unsafe impl Send for Entry {}

static ENTRY: once_cell::sync::OnceCell<Entry> = once_cell::sync::OnceCell::new();

/// The symbol the runtime looks up in a NIF library.
///
/// # Safety
/// Called by the Erlang runtime only.
#[no_mangle]
pub unsafe extern "C" fn nif_init() -> *const ErlNifEntry {
    // SAFETY: the runtime calls nif_init once per load, before any NIF.
    unsafe { rustler::codegen_runtime::internal_write_symbols() };
    let entry = ENTRY.get_or_init(|| {
        let mut funcs: Vec<ErlNifFunc> =
            rustler::codegen_runtime::inventory::iter::<rustler::Nif>()
                .map(rustler::Nif::get_def)
                .collect();
        funcs.extend(callbacks::table());
        let funcs: &'static [ErlNifFunc] = Box::leak(funcs.into_boxed_slice());
        let mut entry = ErlNifEntry::new(c"dyntrace", funcs, nif_load);
        entry.upgrade = Some(nif_upgrade);
        Entry(entry)
    });
    &entry.0
}
