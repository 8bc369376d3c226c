//! Thin wrappers over the enif calls that read terms, on the raw terms
//! and environment of the NIF call being served: what the layouts read in
//! place fall back on, and what no layout here covers.

use rustler::sys::{ErlNifBinary, ErlNifEnv, ErlNifTerm};
use std::ffi::c_int;
use std::mem::MaybeUninit;

// `enif_term_type` values (erl_nif.h); declared here as a plain int so that
// a value this code does not know is not undefined behaviour.
pub const TYPE_ATOM: c_int = 1;
pub const TYPE_BITSTRING: c_int = 2;
pub const TYPE_FLOAT: c_int = 3;
pub const TYPE_FUN: c_int = 4;
pub const TYPE_INTEGER: c_int = 5;
pub const TYPE_LIST: c_int = 6;
pub const TYPE_MAP: c_int = 7;
pub const TYPE_PID: c_int = 8;
pub const TYPE_PORT: c_int = 9;
pub const TYPE_REFERENCE: c_int = 10;
pub const TYPE_TUPLE: c_int = 11;

extern "C" {
    #[link_name = "enif_term_type"]
    fn enif_term_type(env: *mut ErlNifEnv, term: ErlNifTerm) -> c_int;
}

/// The type of a term, one of the `TYPE_*` values (or one this code does
/// not know).
#[inline]
pub fn term_type(env: *mut ErlNifEnv, term: ErlNifTerm) -> c_int {
    // SAFETY: `term` is a term of `env`.
    unsafe { enif_term_type(env, term) }
}

/// The head and tail of a list cell; `None` for anything else.
#[inline]
pub fn list_cell(env: *mut ErlNifEnv, list: ErlNifTerm) -> Option<(ErlNifTerm, ErlNifTerm)> {
    let (mut head, mut tail) = (ErlNifTerm::default(), ErlNifTerm::default());
    // SAFETY: out-pointers to locals; `list` is a term of `env`.
    let found = unsafe { rustler::sys::enif_get_list_cell(env, list, &mut head, &mut tail) };
    (found != 0).then_some((head, tail))
}

#[inline]
pub fn is_empty_list(env: *mut ErlNifEnv, term: ErlNifTerm) -> bool {
    // SAFETY: a term of `env`.
    unsafe { rustler::sys::enif_is_empty_list(env, term) != 0 }
}

/// The elements of a tuple, in place; `None` for anything else.
///
/// # Safety
/// The slice must not be used after the NIF call that owns `env` returns:
/// the tuple lives as long as that call's terms.
#[inline]
pub unsafe fn tuple_elements<'a>(
    env: *mut ErlNifEnv,
    term: ErlNifTerm,
) -> Option<&'a [ErlNifTerm]> {
    let mut arity: c_int = 0;
    let mut elems: *const ErlNifTerm = std::ptr::null();
    // SAFETY: out-pointers to locals; `term` is a term of `env`.
    if unsafe { rustler::sys::enif_get_tuple(env, term, &mut arity, &mut elems) } == 0 {
        return None;
    }
    if arity == 0 {
        return Some(&[]);
    }
    // SAFETY: on success `elems` points at `arity` terms of the tuple,
    // which outlive the slice (the caller's promise).
    Some(unsafe { std::slice::from_raw_parts(elems, arity as usize) })
}

/// The bytes of a binary, as `enif_inspect_binary` gives them; `None` for
/// anything else (a bitstring that is not whole bytes too).
///
/// # Safety
/// The slice must not be used after the NIF call that owns `env` returns:
/// the binary lives as long as that call's terms.
#[inline]
pub unsafe fn inspect_binary<'a>(env: *mut ErlNifEnv, term: ErlNifTerm) -> Option<&'a [u8]> {
    let mut bin = MaybeUninit::<ErlNifBinary>::uninit();
    // SAFETY: `bin` is an out-pointer to a local; `term` is a term of `env`.
    if unsafe { rustler::sys::enif_inspect_binary(env, term, bin.as_mut_ptr()) } == 0 {
        return None;
    }
    // SAFETY: the call succeeded, so the VM filled `bin`.
    let bin = unsafe { bin.assume_init() };
    if bin.size == 0 {
        return Some(&[]);
    }
    // SAFETY: `data` points at `size` readable bytes, which outlive the
    // slice (the caller's promise).
    Some(unsafe { std::slice::from_raw_parts(bin.data, bin.size) })
}

/// The VM printer's text of `term` (`enif_snprintf("%T")`), as much as
/// `buf` holds less its NUL: what a layout learned at load is checked
/// against.
pub fn printed(term: ErlNifTerm, buf: &mut [u8]) -> &[u8] {
    // SAFETY: reads the runtime's function table, set before any NIF runs;
    // `buf` has `buf.len()` writable bytes, the format takes one term.
    unsafe {
        let print = rustler::sys::get_enif_snprintf();
        print(
            buf.as_mut_ptr().cast::<std::ffi::c_char>(),
            buf.len(),
            c"%T".as_ptr(),
            term,
        );
    }
    let len = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    &buf[..len]
}
