//! Raw term access shared by the term formatter and the field extraction:
//! thin wrappers over the enif calls, on the raw terms and environment of
//! the NIF call being served.

use rustler::sys::{ErlNifEnv, ErlNifTerm};
use std::ffi::c_int;

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
