//! The libbabeltrace2 graph through a small C shim (`c_src/bt_reader.c`):
//! libbabeltrace2's API is a few hundred functions, status enums and
//! reference-counted handles, and the shim is compiled against the
//! installed headers, so the C compiler checks every signature and enum
//! value; Rust sees a few functions and two flat structs.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

use crate::input::step::{Discarded, Step};
use crate::model::event::{EventClass, Field, Reading, Wanted, MAX_FIELDS};

#[cfg(feature = "babeltrace2")]
#[repr(C)]
struct RawField {
    str_ptr: *const c_char,
    len: u64,
    integer: i64,
    kind: i32,
}

#[cfg(feature = "babeltrace2")]
#[repr(C)]
pub(crate) struct RawEvent {
    pub(crate) class_index: u32,
    n_fields: u32,
    pub(crate) ts_ns: i64,
    pub(crate) cpu: i64,
    fields: *const RawField,
    pub(crate) trace: u32,
    pub(crate) vpid: i64,
}

#[cfg(feature = "babeltrace2")]
impl RawEvent {
    /// The payload fields, into `out`; how many.
    ///
    /// # Safety
    /// `self` is the shim's event of the current callback: its field array
    /// and strings are valid until the callback returns, and so are the
    /// borrowed `Field`s.
    pub(crate) unsafe fn fields<'a>(&'a self, out: &mut [Field<'a>; MAX_FIELDS]) -> usize {
        let n = (self.n_fields as usize).min(out.len());
        for (i, slot) in out.iter_mut().enumerate().take(n) {
            // SAFETY: i < n_fields, the length of the shim's array.
            let f = unsafe { &*self.fields.add(i) };
            *slot = match f.kind {
                FIELD_STRING if !f.str_ptr.is_null() => {
                    // SAFETY: the shim gives the string's pointer and byte length.
                    Field::Str(unsafe {
                        std::slice::from_raw_parts(f.str_ptr as *const u8, f.len as usize)
                    })
                }
                FIELD_INTEGER => Field::Int(f.integer),
                _ => Field::Other,
            };
        }
        n
    }
}

#[cfg(feature = "babeltrace2")]
#[repr(C)]
struct RawReader {
    _opaque: [u8; 0],
}

#[cfg(feature = "babeltrace2")]
pub(crate) type ClassCb =
    unsafe extern "C" fn(*mut c_void, u32, *const c_char, u32, *const *const c_char) -> c_int;
#[cfg(feature = "babeltrace2")]
pub(crate) type EventCb = unsafe extern "C" fn(*mut c_void, *const RawEvent);
#[cfg(feature = "babeltrace2")]
pub(crate) type TraceCb = unsafe extern "C" fn(*mut c_void, u32, *const c_char);

#[cfg(feature = "babeltrace2")]
extern "C" {
    fn dt_reader_new() -> *mut RawReader;
    fn dt_reader_open(
        r: *mut RawReader,
        inputs: *const *const c_char,
        n_inputs: u32,
        live: c_int,
        on_class: ClassCb,
        on_event: EventCb,
        on_trace: TraceCb,
        ctx: *mut c_void,
    ) -> c_int;
    fn dt_reader_set_context(r: *mut RawReader, ctx: *mut c_void);
    fn dt_reader_run_once(r: *mut RawReader) -> c_int;
    fn dt_reader_error(r: *const RawReader) -> *const c_char;
    fn dt_reader_discarded(r: *const RawReader, unknown: *mut u64) -> u64;
    fn dt_reader_counted(
        r: *const RawReader,
        counts: *mut u64,
        n: u32,
        first: *mut i64,
        last: *mut i64,
    ) -> u32;
    fn dt_reader_free(r: *mut RawReader);
}

#[cfg(feature = "babeltrace2")]
const FIELD_STRING: i32 = 1;
#[cfg(feature = "babeltrace2")]
const FIELD_INTEGER: i32 = 2;
#[cfg(feature = "babeltrace2")]
const RUN_OK: c_int = 0;
#[cfg(feature = "babeltrace2")]
const RUN_AGAIN: c_int = 1;
#[cfg(feature = "babeltrace2")]
const RUN_END: c_int = 2;

#[cfg(feature = "babeltrace2")]
/// One libbabeltrace2 graph built by the shim, freed when dropped.
pub(crate) struct Graph {
    raw: *mut RawReader,
}

#[cfg(feature = "babeltrace2")]
// SAFETY: a graph is built and freed on the thread that opens the reader;
// in between it is run by one thread at a time (the one owning it), and
// it shares no mutable objects with another graph (each finds its own
// plugin objects).
unsafe impl Send for Graph {}

#[cfg(feature = "babeltrace2")]
/// The callbacks a graph delivers to: `ctx` is the context set for a run.
pub(crate) struct Callbacks {
    pub(crate) on_class: ClassCb,
    pub(crate) on_event: EventCb,
    pub(crate) on_trace: TraceCb,
}

#[cfg(feature = "babeltrace2")]
impl Graph {
    /// Builds a graph over `inputs` (trace directories, or live URLs).
    pub(crate) fn open(
        inputs: &[String],
        live: bool,
        callbacks: &Callbacks,
    ) -> Result<Graph, String> {
        let c_inputs = inputs
            .iter()
            .map(|s| CString::new(s.as_str()).map_err(|_| format!("{s}: path holds a NUL byte")))
            .collect::<Result<Vec<_>, _>>()?;
        let ptrs: Vec<*const c_char> = c_inputs.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: dt_reader_new allocates a zeroed reader or returns NULL.
        let raw = unsafe { dt_reader_new() };
        if raw.is_null() {
            return Err("out of memory".into());
        }
        let graph = Graph { raw };
        // SAFETY: `raw` is a fresh reader; `ptrs` points at NUL-terminated
        // strings alive for the call (the shim copies them into its params).
        // The context pointer is replaced before each run (see `run_once`),
        // and no callback runs before the first run.
        let rc = unsafe {
            dt_reader_open(
                raw,
                ptrs.as_ptr(),
                ptrs.len() as u32,
                c_int::from(live),
                callbacks.on_class,
                callbacks.on_event,
                callbacks.on_trace,
                std::ptr::null_mut(),
            )
        };
        if rc != 0 {
            return Err(graph.error());
        }
        Ok(graph)
    }

    /// The shim's last error.
    pub(crate) fn error(&self) -> String {
        // SAFETY: the shim's error buffer is NUL-terminated and lives as long
        // as the reader.
        unsafe { CStr::from_ptr(dt_reader_error(self.raw)) }
            .to_string_lossy()
            .into_owned()
    }

    /// Runs the graph once; its callbacks get `ctx`.
    ///
    /// # Safety
    /// `ctx` must be what this graph's callbacks expect, valid for the call.
    pub(crate) unsafe fn run_once(&mut self, ctx: *mut c_void) -> Result<Step, String> {
        // SAFETY: the shim stores the context pointer and only uses it
        // during this call; the caller vouches for it.
        let rc = unsafe {
            dt_reader_set_context(self.raw, ctx);
            dt_reader_run_once(self.raw)
        };
        match rc {
            RUN_OK => Ok(Step::Progress),
            RUN_AGAIN => Ok(Step::Again),
            RUN_END => Ok(Step::End),
            _ => Err(self.error()),
        }
    }

    /// Discarded events reported so far.
    pub(crate) fn discarded(&self) -> Discarded {
        let mut unknown = 0u64;
        // SAFETY: `raw` is valid for the graph's life; `unknown` is writable.
        let events = unsafe { dt_reader_discarded(self.raw, &mut unknown) };
        Discarded {
            events,
            reports_without_count: unknown,
        }
    }

    /// Events of counted classes not handed on: per class index, and the
    /// first and last one's time.
    pub(crate) fn counted(&self) -> (Vec<u64>, i64, i64) {
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        let mut counts = vec![0u64; MAX_CLASSES];
        // SAFETY: `raw` is valid for the graph's life; `counts` holds
        // MAX_CLASSES writable slots, the pointers are writable.
        let n = unsafe {
            dt_reader_counted(
                self.raw,
                counts.as_mut_ptr(),
                MAX_CLASSES as u32,
                &mut first,
                &mut last,
            )
        };
        counts.truncate(n as usize);
        (counts, first, last)
    }
}

#[cfg(feature = "babeltrace2")]
/// Classes a graph numbers at most (the shim's `CLASS_SLOTS / 2`).
const MAX_CLASSES: usize = 2048;

#[cfg(feature = "babeltrace2")]
impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: `raw` came from dt_reader_new and is freed once, here.
        unsafe { dt_reader_free(self.raw) }
    }
}

#[cfg(feature = "babeltrace2")]
/// An event class as the shim describes it.
///
/// # Safety
/// `name` is a NUL-terminated string and `field_names` holds `n_fields`
/// of them.
pub(crate) unsafe fn class_of(
    name: *const c_char,
    n_fields: u32,
    field_names: *const *const c_char,
) -> EventClass {
    // SAFETY: every pointer given to `text` is a NUL-terminated C string.
    let text = |p: *const c_char| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    let names: Vec<String> = (0..n_fields as usize)
        // SAFETY: index below n_fields, see above.
        .map(|i| text(unsafe { *field_names.add(i) }))
        .collect();
    EventClass::new(&text(name), names)
}

#[cfg(feature = "babeltrace2")]
/// What a class callback does: the class the shim describes kept at its
/// `index` in `classes`, and what the reader does with its events.
///
/// # Safety
/// As [`class_of`].
pub(crate) unsafe fn keep_class(
    classes: &mut Vec<EventClass>,
    wanted: Wanted,
    index: u32,
    name: *const c_char,
    n_fields: u32,
    field_names: *const *const c_char,
) -> Reading {
    // SAFETY: the caller's pointers, as `class_of` asks.
    let class = unsafe { class_of(name, n_fields, field_names) };
    let index = index as usize;
    if classes.len() <= index {
        classes.resize_with(index + 1, EventClass::unknown);
    }
    let reading = wanted.reading(&class);
    classes[index] = class;
    reading
}
