//! Reading CTF traces through libbabeltrace2, the reference CTF reader.
//!
//! The graph (sources -> `filter.utils.muxer` -> a simple sink) lives in a
//! small C shim (`c_src/bt_reader.c`): libbabeltrace2's API is a few hundred
//! functions, status enums and reference-counted handles, and the shim is
//! compiled against the installed headers, so the C compiler checks every
//! signature and enum value; Rust sees five functions and two flat structs.
//! The muxer gives the events of all inputs in timestamp order.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};

use crate::event::{Event, EventClass, Field};

#[repr(C)]
struct RawField {
    str_ptr: *const c_char,
    len: u64,
    integer: i64,
    kind: i32,
}

#[repr(C)]
struct RawEvent {
    class_index: u32,
    n_fields: u32,
    ts_ns: i64,
    cpu: i64,
    fields: *const RawField,
    trace: u32,
    vpid: i64,
}

#[repr(C)]
struct RawReader {
    _opaque: [u8; 0],
}

type ClassCb = unsafe extern "C" fn(*mut c_void, u32, *const c_char, u32, *const *const c_char);
type EventCb = unsafe extern "C" fn(*mut c_void, *const RawEvent);

extern "C" {
    fn dt_reader_new() -> *mut RawReader;
    fn dt_reader_open(
        r: *mut RawReader,
        inputs: *const *const c_char,
        n_inputs: u32,
        live: c_int,
        on_class: ClassCb,
        on_event: EventCb,
        ctx: *mut c_void,
    ) -> c_int;
    fn dt_reader_set_context(r: *mut RawReader, ctx: *mut c_void);
    fn dt_reader_run_once(r: *mut RawReader) -> c_int;
    fn dt_reader_error(r: *const RawReader) -> *const c_char;
    fn dt_reader_discarded(r: *const RawReader, unknown: *mut u64) -> u64;
    fn dt_reader_free(r: *mut RawReader);
}

const FIELD_STRING: i32 = 1;
const FIELD_INTEGER: i32 = 2;
const RUN_OK: c_int = 0;
const RUN_AGAIN: c_int = 1;
const RUN_END: c_int = 2;

/// Where events come from: trace directories, or lttng-live URLs.
#[derive(Debug, Clone)]
pub enum Source {
    /// CTF trace directories (each holds a `metadata` file).
    Traces(Vec<PathBuf>),
    /// `net://relayd-host/host/HOSTNAME/SESSION` URLs: one per node of a
    /// cluster, merged by timestamp.
    Live(Vec<String>),
}

/// What one call to [`Reader::step`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Some events were delivered; call again.
    Progress,
    /// Nothing available now (live): call again later.
    Again,
    /// Every input is read to its end.
    End,
}

/// Events lost before they reached the trace, as LTTng reports them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Discarded {
    /// Sum of the counts in discarded-events messages.
    pub events: u64,
    /// Discarded-events messages that carried no count.
    pub reports_without_count: u64,
}

/// Per-reader state the C callbacks write into: the event classes seen so
/// far (indexed as the shim numbers them) and the user's event handler.
struct Sink<'h> {
    classes: Vec<EventClass>,
    handler: &'h mut dyn FnMut(&Event),
    panicked: bool,
}

/// A babeltrace2 graph over one [`Source`].
pub struct Reader {
    raw: *mut RawReader,
    label: String,
}

/// Searches `path` for CTF traces as babeltrace2 does for a directory: every
/// directory below it (or itself) holding a `metadata` file is a trace.
pub fn find_traces(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut found = Vec::new();
    if meta.is_dir() {
        walk(path, &mut found).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if found.is_empty() {
        return Err(format!(
            "{}: no CTF trace found (no `metadata` file)",
            path.display()
        ));
    }
    found.sort();
    for dir in &found {
        check_metadata(&dir.join("metadata"))?;
    }
    Ok(found)
}

/// Magic number opening each packet of packetized CTF metadata.
const METADATA_MAGIC: [u8; 4] = 0x75d1_1d57u32.to_le_bytes();
/// Bytes before a metadata packet's `packet_size` (magic, uuid, checksum,
/// content_size), and the packet header's whole size.
const METADATA_SIZE_AT: usize = 28;
const METADATA_HEADER: usize = 37;

/// Checks that packetized metadata ends at a packet boundary:
/// libbabeltrace2 2.0 loops forever on a truncated last packet.
pub fn check_metadata(path: &Path) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !bytes.starts_with(&METADATA_MAGIC) {
        return Ok(());
    }
    let mut at = 0usize;
    while at < bytes.len() {
        let header = bytes
            .get(at..at + METADATA_HEADER)
            .filter(|h| h.starts_with(&METADATA_MAGIC));
        let size_bits = header.map(|h| {
            let field = [
                h[METADATA_SIZE_AT],
                h[METADATA_SIZE_AT + 1],
                h[METADATA_SIZE_AT + 2],
                h[METADATA_SIZE_AT + 3],
            ];
            u32::from_le_bytes(field) as usize
        });
        match size_bits {
            Some(bits) if bits / 8 >= METADATA_HEADER && at + bits / 8 <= bytes.len() => {
                at += bits / 8
            }
            _ => {
                return Err(format!(
                    "{}: truncated or corrupt metadata packet at byte {at}",
                    path.display()
                ))
            }
        }
    }
    Ok(())
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if dir.join("metadata").is_file() {
        found.push(dir.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        // Symlinked directories are not followed: no cycles.
        if entry.file_type()?.is_dir() {
            walk(&entry.path(), found)?;
        }
    }
    Ok(())
}

impl Reader {
    /// Builds the graph. Fails with a one-line message naming the input.
    pub fn open(source: &Source) -> Result<Reader, String> {
        let (inputs, live, label) = match source {
            Source::Traces(dirs) => (
                dirs.iter()
                    .map(|d| d.to_string_lossy().into_owned())
                    .collect::<Vec<_>>(),
                false,
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            Source::Live(urls) => (urls.clone(), true, urls.join(", ")),
        };
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
        let reader = Reader { raw, label };
        // SAFETY: `raw` is a fresh reader; `ptrs` points at NUL-terminated
        // strings alive for the call (the shim copies them into its params).
        // The context pointer is replaced before each run (see `step`), and
        // no callback runs before the first run.
        let rc = unsafe {
            dt_reader_open(
                raw,
                ptrs.as_ptr(),
                ptrs.len() as u32,
                c_int::from(live),
                on_class,
                on_event,
                std::ptr::null_mut(),
            )
        };
        if rc != 0 {
            return Err(reader.error());
        }
        Ok(reader)
    }

    fn error(&self) -> String {
        // SAFETY: the shim's error buffer is NUL-terminated and lives as long
        // as the reader.
        let msg = unsafe { CStr::from_ptr(dt_reader_error(self.raw)) };
        format!("{}: {}", self.label, msg.to_string_lossy())
    }

    /// Runs the graph once, delivering some events to `handler`.
    pub fn step(
        &mut self,
        classes: &mut Vec<EventClass>,
        handler: &mut dyn FnMut(&Event),
    ) -> Result<Step, String> {
        let mut sink = Sink {
            classes: std::mem::take(classes),
            handler,
            panicked: false,
        };
        // SAFETY: the shim stores the context pointer and only uses it during
        // this call; `sink` outlives it.
        let rc = unsafe {
            dt_reader_set_context(self.raw, &mut sink as *mut Sink as *mut c_void);
            dt_reader_run_once(self.raw)
        };
        *classes = std::mem::take(&mut sink.classes);
        if sink.panicked {
            return Err(format!(
                "{}: internal error while analysing an event",
                self.label
            ));
        }
        match rc {
            RUN_OK => Ok(Step::Progress),
            RUN_AGAIN => Ok(Step::Again),
            RUN_END => Ok(Step::End),
            _ => Err(self.error()),
        }
    }

    /// Discarded events reported so far.
    pub fn discarded(&self) -> Discarded {
        let mut unknown = 0u64;
        // SAFETY: `raw` is valid for the reader's life; `unknown` is writable.
        let events = unsafe { dt_reader_discarded(self.raw, &mut unknown) };
        Discarded {
            events,
            reports_without_count: unknown,
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        // SAFETY: `raw` came from dt_reader_new and is freed once, here.
        unsafe { dt_reader_free(self.raw) }
    }
}

unsafe extern "C" fn on_class(
    ctx: *mut c_void,
    index: u32,
    name: *const c_char,
    n_fields: u32,
    field_names: *const *const c_char,
) {
    // SAFETY: ctx is the `Sink` set by `Reader::step` for this run; the
    // shim passes a NUL-terminated name and `n_fields` valid name pointers.
    let sink = unsafe { &mut *(ctx as *mut Sink) };
    // SAFETY: every pointer given to `text` is a NUL-terminated C string.
    let text = |p: *const c_char| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    let names: Vec<String> = (0..n_fields as usize)
        // SAFETY: index below n_fields, see above.
        .map(|i| text(unsafe { *field_names.add(i) }))
        .collect();
    let class = EventClass::new(&text(name), names);
    let index = index as usize;
    if sink.classes.len() <= index {
        sink.classes.resize_with(index + 1, EventClass::unknown);
    }
    sink.classes[index] = class;
}

unsafe extern "C" fn on_event(ctx: *mut c_void, raw: *const RawEvent) {
    // SAFETY: ctx is the `Sink` of the current run; `raw` and its fields and
    // strings are valid until this function returns.
    let sink = unsafe { &mut *(ctx as *mut Sink) };
    let raw = unsafe { &*raw };
    let Some(class) = sink.classes.get(raw.class_index as usize) else {
        return;
    };
    let mut fields = [Field::Other; crate::event::MAX_FIELDS];
    let n = (raw.n_fields as usize).min(fields.len());
    for (i, slot) in fields.iter_mut().enumerate().take(n) {
        // SAFETY: i < n_fields, the length of the shim's array.
        let f = unsafe { &*raw.fields.add(i) };
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
    let event = Event {
        class,
        ts_ns: raw.ts_ns,
        cpu: raw.cpu,
        trace: raw.trace,
        vpid: raw.vpid,
        node: raw.trace,
        fields: &fields[..n],
    };
    let handler = &mut sink.handler;
    // A panic must not unwind into C: note it and stop at the end of the run.
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(&event))).is_err() {
        sink.panicked = true;
    }
}
