//! `dyntrace:format_term/2,3`: the text a term field would hold, as a
//! binary, without writing an event.

use crate::{format, options, panics};
use rustler::types::binary::NewBinary;
use rustler::{Binary, Env, NifResult, Term};

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
    formatted(env, |text| format::write_field(term, &options, kind, text))
}

/// The binary `write` writes; a panic in it is `badarg` (and counted).
fn formatted<'a>(env: Env<'a>, write: impl FnOnce(&mut Vec<u8>)) -> NifResult<Binary<'a>> {
    let mut text = Vec::new();
    let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| write(&mut text)));
    if written.is_err() {
        panics::recover(env.as_c_arg());
        return Err(rustler::Error::BadArg);
    }
    let mut bin = NewBinary::new(env, text.len());
    bin.as_mut_slice().copy_from_slice(&text);
    Ok(bin.into())
}
