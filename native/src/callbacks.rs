//! The 18 `erl_tracer` callbacks, as raw NIFs.
//!
//! They run on every trace event of every traced process: rustler's
//! `#[nif]` wrapper would allocate an argument vector per call, before the
//! enabled check even looks at the tag. These take the runtime's argument
//! array as it comes and allocate nothing.

use crate::events::Class;
use crate::{enabled, general_path, limits, panics, short_path};
use rustler::codegen_runtime::{ErlNifEnv, ErlNifFunc, ErlNifTerm};
use rustler::{Env, Term};
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs a callback body over the call's `N` argument words. A body that
/// answers `None`, or panics, raises `badarg`: nothing unwinds into the
/// VM, and a panic is counted and the formatter's per-thread state reset
/// (`panics::recover`). The body gets the words, not `Term`s (a
/// `Term` is three words): it makes the terms it reads.
///
/// # Safety
/// `env` and `argv` are what the runtime passed for a function of arity `N`
/// (the table below registers each callback with its arity).
#[inline(always)]
unsafe fn run<const N: usize, F>(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
    body: F,
) -> ErlNifTerm
where
    F: for<'a> FnOnce(Env<'a>, &[ErlNifTerm; N]) -> Option<ErlNifTerm>,
{
    if argc as usize != N {
        // SAFETY: `env` is the call's environment.
        return unsafe { rustler::sys::enif_make_badarg(env) };
    }
    // SAFETY: `argv` holds N terms (checked above), live for this call.
    let args = unsafe { &*argv.cast::<[ErlNifTerm; N]>() };
    let answer = catch_unwind(AssertUnwindSafe(|| {
        let marker = ();
        // SAFETY: `env` is the call's environment, valid for this call.
        let env = unsafe { Env::new(&marker, env) };
        body(env, args)
    }));
    let answer = match answer {
        Ok(answer) => answer,
        Err(_) => {
            panics::recover(env);
            None
        }
    };
    // SAFETY: `env` is the call's environment.
    answer.unwrap_or_else(|| unsafe { rustler::sys::enif_make_badarg(env) })
}

/// The `enabled*` questions `enabled::from_words` leaves, out of line:
/// the common path keeps a small frame.
///
/// # Safety
/// What the runtime passed to an `enabled*/3` callback.
#[inline(never)]
unsafe fn enabled_slow(
    class: Option<Class>,
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    // SAFETY: the caller's promise.
    unsafe {
        run(env, argc, argv, |env, args: &[ErlNifTerm; 3]| {
            // `Term::new` (in the unsafe block above): the call's own terms.
            let [tag, state, tracee] = args.map(|word| Term::new(env, word));
            let answer = enabled::from_terms(class, tag, tracee);
            Some(limits::gate(tag, state, answer).as_c_arg())
        })
    }
}

/// One `enabled*/3` + `trace*/5` pair per trace class, plus the generic
/// pair (`None`: the class follows from the tag and the tracee).
macro_rules! callbacks {
    ($($class:expr => $enabled:ident, $trace:ident;)*) => {
        $(
            unsafe extern "C" fn $enabled(
                env: *mut ErlNifEnv,
                argc: c_int,
                argv: *const ErlNifTerm,
            ) -> ErlNifTerm {
                // Most questions are answered from the words alone.
                if argc == 3 {
                    // SAFETY: argc says `argv` holds 3 terms, live for
                    // this call.
                    let answer = unsafe { enabled::from_words($class, *argv, *argv.add(1)) };
                    if let Some(answer) = answer {
                        return answer;
                    }
                }
                // SAFETY: what the runtime passed.
                unsafe { enabled_slow($class, env, argc, argv) }
            }

            unsafe extern "C" fn $trace(
                env: *mut ErlNifEnv,
                argc: c_int,
                argv: *const ErlNifTerm,
            ) -> ErlNifTerm {
                // SAFETY: registered with arity 5 (`table`).
                unsafe {
                    run(env, argc, argv, |env, args| {
                        short_path::emit(env, $class, args)
                            .or_else(|| general_path::emit(env, $class, args))
                    })
                }
            }
        )*

        /// The callbacks' entries for the library's function table.
        pub fn table() -> Vec<ErlNifFunc> {
            vec![$(
                entry(concat!(stringify!($enabled), "\0"), 3, $enabled),
                entry(concat!(stringify!($trace), "\0"), 5, $trace),
            )*]
        }
    };
}

callbacks! {
    None => enabled, trace;
    Some(Class::Procs) => enabled_procs, trace_procs;
    Some(Class::Ports) => enabled_ports, trace_ports;
    Some(Class::RunningProcs) => enabled_running_procs, trace_running_procs;
    Some(Class::RunningPorts) => enabled_running_ports, trace_running_ports;
    Some(Class::Call) => enabled_call, trace_call;
    Some(Class::Send) => enabled_send, trace_send;
    Some(Class::Receive) => enabled_receive, trace_receive;
    Some(Class::GarbageCollection) => enabled_garbage_collection, trace_garbage_collection;
}

type RawNif = unsafe extern "C" fn(*mut ErlNifEnv, c_int, *const ErlNifTerm) -> ErlNifTerm;

fn entry(name: &'static str, arity: u32, function: RawNif) -> ErlNifFunc {
    ErlNifFunc {
        name: name.as_ptr().cast(),
        arity,
        function,
        flags: 0,
    }
}
