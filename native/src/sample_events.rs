//! The writers of the events that samplers and snapshots write, not the
//! runtime's trace callbacks: `process_name`, `stack_sample`,
//! `memory_sample`, `allocator_sample`, `process_memory` and
//! `carrier_create`/`carrier_destroy`. Each is a NIF of module `dyntrace`
//! that answers `ok`, raises `badarg` on arguments of the wrong type and
//! writes nothing when its event is not enabled. Pids, atoms and
//! `M:F/A` are written as the 18 events write them.

use crate::events::EventId;
use crate::fields::{location, location_of, Location};
use crate::format::{format_atom, format_identifier, format_joined_bounded};
use crate::lttng::{self, emit, Text};
use crate::options::valid_max_term_bytes;
use crate::vm::term;
use rustler::{Atom, Env, NifResult, Term};

rustler::atoms! {
    ok,
    create,
    destroy,
    total,
    processes,
    processes_used,
    system,
    atom,
    atom_used,
    binary,
    code,
    ets,
}

/// `erlang:memory()` has nine items; a longer list is not its answer, and
/// reading it would cost without bound.
const MAX_MEMORY_ITEMS: usize = 64;

/// The text of a pid, exactly; `badarg` for anything else.
fn pid_text(pid: Term) -> NifResult<Vec<u8>> {
    if !pid.is_pid() {
        return Err(rustler::Error::BadArg);
    }
    let mut text = Vec::new();
    format_identifier(pid, &mut text);
    Ok(text)
}

/// The text of an atom, as the 18 events write atoms; `badarg` for
/// anything else.
fn atom_text(term: Term) -> NifResult<Vec<u8>> {
    if !term.is_atom() {
        return Err(rustler::Error::BadArg);
    }
    let mut text = Vec::new();
    format_atom(term, &mut text);
    Ok(text)
}

/// A process's name: an atom (its registered name), `{M, F, A}` (its
/// initial call, written `M:F/A`, `A` an arity or an argument list) or,
/// where `none_allowed`, `[]` (no name, written ""); `badarg` for anything
/// else.
fn name_text<'a>(env: Env<'a>, name: Term<'a>, none_allowed: bool) -> NifResult<Vec<u8>> {
    if name.is_atom() {
        return atom_text(name);
    }
    if none_allowed && name.is_empty_list() {
        return Ok(Vec::new());
    }
    let location = location(env, name).ok_or(rustler::Error::BadArg)?;
    let mut text = Vec::new();
    location.write_with(format_atom, &mut text);
    Ok(text)
}

/// Writes `process_name`: `Pid`, and `Name` an atom or `{M, F, A}`.
#[rustler::nif]
fn emit_process_name<'a>(env: Env<'a>, pid: Term<'a>, name: Term<'a>) -> NifResult<Atom> {
    let mut pid = pid_text(pid)?;
    let mut name = name_text(env, name, false)?;
    if lttng::is_enabled(EventId::ProcessName) {
        emit::process_name(Text::terminate(&mut pid), Text::terminate(&mut name));
    }
    Ok(ok())
}

/// Writes `call_guard`: `{M, F, Arity}`, the function whose trace pattern
/// the rate guard removed, and the guard's limit (`Calls` per `Ms`).
#[rustler::nif]
fn emit_call_guard<'a>(env: Env<'a>, mfa: Term<'a>, calls: u64, ms: u64) -> NifResult<Atom> {
    if mfa.is_atom() {
        return Err(rustler::Error::BadArg);
    }
    let mut entry = name_text(env, mfa, false)?;
    if lttng::is_enabled(EventId::CallGuard) {
        emit::call_guard(Text::terminate(&mut entry), calls, ms);
    }
    Ok(ok())
}

/// Writes `stack_sample`: `Pid`, `Status` (an atom) and `Stack` as
/// `process_info(Pid, current_stacktrace)` gives it, innermost frame
/// first, written `M:F/A;M:F/A...` within `MaxTermBytes` (64..65536).
/// Frames are read only as far as the text goes: those past a cut, or
/// all of them when the event is not enabled, are not checked.
#[rustler::nif]
fn emit_stack_sample<'a>(
    env: Env<'a>,
    pid: Term<'a>,
    status: Term<'a>,
    stack: Term<'a>,
    max_term_bytes: Term<'a>,
) -> NifResult<Atom> {
    let mut pid = pid_text(pid)?;
    let mut status = atom_text(status)?;
    let max = valid_max_term_bytes(max_term_bytes).ok_or(rustler::Error::BadArg)?;
    if !stack.is_list() {
        return Err(rustler::Error::BadArg);
    }
    if !lttng::is_enabled(EventId::StackSample) {
        return Ok(ok());
    }
    let mut frames = stack;
    let mut text = Vec::new();
    format_joined_bounded(max, b";", &mut text, |out| {
        let Ok((frame, rest)) = frames.list_get_cell() else {
            return if frames.is_empty_list() {
                Ok(false)
            } else {
                Err(rustler::Error::BadArg)
            };
        };
        frames = rest;
        let frame = frame_location(env, frame).ok_or(rustler::Error::BadArg)?;
        frame.write_with(format_atom, out);
        Ok(true)
    })?;
    emit::stack_sample(
        Text::terminate(&mut pid),
        Text::terminate(&mut status),
        Text::terminate(&mut text),
    );
    Ok(ok())
}

/// The longest `sampler_sleep/1` takes, in microseconds.
const MAX_SLEEP_US: u64 = 1_000_000;

/// Sleeps `Microseconds` (0..1,000,000) on a dirty I/O scheduler and
/// answers `ok`: the stack sampler's wait below the runtime's 1 ms timer
/// tick, so that its samples fall at random instants, not on the timer
/// grid that timer-driven work also follows (docs/profile.md).
#[rustler::nif(schedule = "DirtyIo")]
fn sampler_sleep(microseconds: Term) -> NifResult<Atom> {
    let us: u64 = microseconds.decode()?;
    if us > MAX_SLEEP_US {
        return Err(rustler::Error::BadArg);
    }
    std::thread::sleep(std::time::Duration::from_micros(us));
    Ok(ok())
}

/// A stack frame, `{M, F, Arity | Args, Location}`, as a code location.
fn frame_location<'a>(env: Env<'a>, frame: Term<'a>) -> Option<Location<'a>> {
    // SAFETY: the slice lives no longer than this call's terms.
    let elems = unsafe { term::tuple(env.as_c_arg(), frame.as_c_arg()) }?;
    let [m, f, a, _] = elems else {
        return None;
    };
    location_of(env, *m, *f, *a)
}

/// Writes `memory_sample` from the list `erlang:memory()` answers: each
/// category's bytes, 0 for one not in the list; keys it does not write
/// are skipped.
#[rustler::nif]
fn emit_memory_sample(memory: Term) -> NifResult<Atom> {
    let keys = [
        total(),
        processes(),
        processes_used(),
        system(),
        atom(),
        atom_used(),
        binary(),
        code(),
        ets(),
    ];
    let mut values = [0u64; 9];
    let mut list = memory;
    for _ in 0..=MAX_MEMORY_ITEMS {
        let Ok((item, rest)) = list.list_get_cell() else {
            break;
        };
        let (key, value) = item.decode::<(Atom, u64)>()?;
        if let Some(at) = keys.iter().position(|k| *k == key) {
            values[at] = value;
        }
        list = rest;
    }
    if !list.is_empty_list() {
        return Err(rustler::Error::BadArg);
    }
    if lttng::is_enabled(EventId::MemorySample) {
        let [total, processes, processes_used, system, atom, atom_used, binary, code, ets] = values;
        emit::memory_sample(
            total,
            processes,
            processes_used,
            system,
            atom,
            atom_used,
            binary,
            code,
            ets,
        );
    }
    Ok(ok())
}

/// Writes `allocator_sample`: an allocator type (an atom), its instance
/// and its carriers' figures in bytes.
#[allow(clippy::too_many_arguments)]
#[rustler::nif]
fn emit_allocator_sample(
    kind: Term,
    instance: u32,
    mbc_carriers: u64,
    mbcs_size: u64,
    sbc_carriers: u64,
    sbcs_size: u64,
    blocks_size: u64,
) -> NifResult<Atom> {
    let mut kind = atom_text(kind)?;
    if lttng::is_enabled(EventId::AllocatorSample) {
        emit::allocator_sample(
            Text::terminate(&mut kind),
            instance,
            mbc_carriers,
            mbcs_size,
            sbc_carriers,
            sbcs_size,
            blocks_size,
        );
    }
    Ok(ok())
}

/// Writes `process_memory`: `Pid`, its name (an atom, `{M, F, A}` or `[]`
/// for none) and its memory figures.
#[rustler::nif]
fn emit_process_memory<'a>(
    env: Env<'a>,
    pid: Term<'a>,
    name: Term<'a>,
    memory: u64,
    total_heap: u64,
    bin_vheap: u64,
    message_queue_len: u64,
) -> NifResult<Atom> {
    let mut pid = pid_text(pid)?;
    let mut name = name_text(env, name, true)?;
    if lttng::is_enabled(EventId::ProcessMemory) {
        emit::process_memory(
            Text::terminate(&mut pid),
            Text::terminate(&mut name),
            memory,
            total_heap,
            bin_vheap,
            message_queue_len,
        );
    }
    Ok(ok())
}

/// The emitter of `carrier_create` or `carrier_destroy`, whose fields are
/// the same.
type CarrierEmitter = fn(Text, u32, u64, u64, u64, u64, u64);

/// Writes `carrier_create` (`create`) or `carrier_destroy` (`destroy`):
/// the allocator type (an atom), its instance, the carrier's size and the
/// instance's carrier figures.
#[allow(clippy::too_many_arguments)]
#[rustler::nif]
fn emit_carrier(
    which: Term,
    kind: Term,
    instance: u32,
    size: u64,
    mbc_carriers: u64,
    mbcs_size: u64,
    sbc_carriers: u64,
    sbcs_size: u64,
) -> NifResult<Atom> {
    let (event, write): (EventId, CarrierEmitter) = if create() == which {
        (EventId::CarrierCreate, emit::carrier_create)
    } else if destroy() == which {
        (EventId::CarrierDestroy, emit::carrier_destroy)
    } else {
        return Err(rustler::Error::BadArg);
    };
    let mut kind = atom_text(kind)?;
    if lttng::is_enabled(event) {
        write(
            Text::terminate(&mut kind),
            instance,
            size,
            mbc_carriers,
            mbcs_size,
            sbc_carriers,
            sbcs_size,
        );
    }
    Ok(ok())
}
