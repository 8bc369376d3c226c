//! The C tracepoint provider, seen from Rust: enable states and emitters
//! (`emit::<event>`, generated from `native/events.table`), and the text
//! of a string field as C reads it.

use crate::events::EventId;
use std::ffi::{c_char, c_int, c_uint, CStr};
use std::sync::atomic::{AtomicI32, Ordering};

const EVENT_COUNT: usize = EventId::ALL.len();

extern "C" {
    static dyntrace_event_state: [*const c_int; EVENT_COUNT];
    /// As many names as `dyntrace_event_count` says: read that first.
    static dyntrace_event_name: [*const c_char; 0];
    static dyntrace_event_count: c_uint;
    fn dyntrace_load_provider(path: *const c_char) -> *const c_char;
}

/// Whether `event` is enabled in at least one started LTTng session: one
/// relaxed load of the tracepoint's state, which LTTng-UST flips when a
/// session daemon enables the event.
#[inline]
pub fn is_enabled(event: EventId) -> bool {
    // SAFETY: the table holds EVENT_COUNT pointers to the `state` ints of
    // the tracepoints defined in org_erlang_dyntrace.c, which live as long
    // as the library; LTTng-UST writes them with a plain shared store.
    unsafe {
        let state = dyntrace_event_state[event as usize] as *mut i32;
        AtomicI32::from_ptr(state).load(Ordering::Relaxed) != 0
    }
}

/// Checks that the C side lists the same events in the same order as
/// `EventId`, so that an id means the same event on both sides. Both come
/// from the event table in one build; this catches a stale C library.
pub fn check_provider() -> Result<(), String> {
    // SAFETY: a constant of the C side, defined next to the tables.
    let count = unsafe { dyntrace_event_count } as usize;
    if count != EVENT_COUNT {
        return Err(format!(
            "provider has {count} events, NIF expects {EVENT_COUNT}"
        ));
    }
    // SAFETY: the C array holds `count` string pointers, and count is
    // EVENT_COUNT (checked above); it is constant for the library's life.
    let names = unsafe {
        std::slice::from_raw_parts(
            std::ptr::addr_of!(dyntrace_event_name).cast::<*const c_char>(),
            count,
        )
    };
    for (event, &name) in EventId::ALL.iter().zip(names) {
        // SAFETY: each entry is a string literal of the C side.
        let c_name = unsafe { CStr::from_ptr(name) };
        if c_name.to_bytes() != event.name().as_bytes() {
            return Err(format!(
                "event {} is {:?} in the provider",
                event.name(),
                c_name
            ));
        }
    }
    Ok(())
}

/// A field's text, NUL-terminated for the C side: a field buffer ended
/// with NUL, so no scan is needed, or a text kept with its NUL (a
/// constant, a cached pid's). (The texts hold no NUL of their own; if one
/// did, C would read the field up to it.)
#[derive(Clone, Copy)]
pub struct Text<'a>(&'a [u8]);

impl<'a> Text<'a> {
    pub fn terminate(buf: &'a mut Vec<u8>) -> Self {
        buf.push(0);
        Text(buf)
    }

    /// A text that ends in its NUL already. One that does not is a bug:
    /// it is cut to nothing, rather than read past its end.
    #[inline]
    pub const fn ended(text: &'a [u8]) -> Self {
        match text {
            [.., 0] => Text(text),
            _ => Text(b"\0"),
        }
    }

    /// A text kept with its NUL by a cache that writes the NUL with the
    /// text (`text_cache`): checked in debug builds only.
    #[inline(always)]
    pub fn kept(text: &'a [u8]) -> Self {
        debug_assert_eq!(text.last(), Some(&0));
        Text(text)
    }

    /// The text's first byte, for C.
    pub fn as_ptr(self) -> *const c_char {
        self.0.as_ptr().cast()
    }
}

include!(concat!(env!("OUT_DIR"), "/event_emitters.rs"));

/// Opens the probe provider library (`libdyntrace_lttng.so`), which starts
/// LTTng-UST in this process without waiting on the session daemon. Until
/// it is open, every event reads disabled. Opening it again is harmless.
pub fn load_provider(path: &CStr) -> Result<(), String> {
    // SAFETY: a NUL-terminated path; the answer is NULL or dlerror's text.
    let why = unsafe { dyntrace_load_provider(path.as_ptr()) };
    if why.is_null() {
        Ok(())
    } else {
        // SAFETY: dlerror's NUL-terminated message, read before any other
        // dl call on this thread.
        Err(unsafe { CStr::from_ptr(why) }
            .to_string_lossy()
            .into_owned())
    }
}
