//! Reading CTF traces: finding them, checking their streams against
//! LTTng's indexes, and decoding them with the built-in reader
//! ([`crate::input::ctf`], the default) or libbabeltrace2, the reference CTF
//! reader (`--reader babeltrace2`, lttng-live, and a trace the built-in
//! reader cannot read; only in a build with the `babeltrace2` feature).
//!
//! The libbabeltrace2 graph (sources -> a sink with a port per stream, merging them by
//! timestamp; live: sources -> `filter.utils.muxer` -> a simple sink) lives
//! in a small C shim (`c_src/bt_reader.c`): libbabeltrace2's API is a few
//! hundred functions, status enums and reference-counted handles, and the
//! shim is compiled against the installed headers, so the C compiler checks
//! every signature and enum value; Rust sees five functions and two flat
//! structs. The events of all inputs come in timestamp order; those of a
//! class whose fields nobody reads come with their time only.

#[cfg(feature = "babeltrace2")]
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

use crate::input::damage::{check_stream, parse_index, DamagedStream, StreamCheck};
use crate::input::merge::Merge;
use crate::model::event::{Counted, Event, EventClass, Wanted};
#[cfg(feature = "babeltrace2")]
use crate::model::event::{Field, MAX_FIELDS};
#[cfg(feature = "babeltrace2")]
use crate::model::message::message_shape;

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

#[cfg(feature = "babeltrace2")]
/// Per-reader state the C callbacks write into: the event classes seen so
/// far (indexed as the shim numbers them) and the user's event handler.
struct Sink<'h> {
    classes: Vec<EventClass>,
    wanted: Wanted,
    handler: &'h mut dyn FnMut(&Event),
    panicked: bool,
}

/// The events of one [`Source`], in timestamp order.
pub struct Reader {
    inner: Inner,
    /// The classes a graph reads fields of (the built-in reader's parts
    /// know their own).
    #[cfg(feature = "babeltrace2")]
    wanted: Wanted,
    label: String,
    damaged: Vec<DamagedStream>,
    /// Temporary trace directories given to libbabeltrace2 in place of
    /// damaged traces, with the directory each stands for.
    #[cfg(feature = "babeltrace2")]
    views: Vec<View>,
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
    found.dedup();
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

/// The text of a trace's metadata (TSDL), from its packets when packetized.
pub fn metadata_text(path: &Path) -> Result<String, String> {
    check_metadata(path)?;
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !bytes.starts_with(&METADATA_MAGIC) {
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    let mut text = Vec::new();
    let mut at = 0usize;
    while at + METADATA_HEADER <= bytes.len() {
        let word = |i: usize| {
            let f = [bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]];
            u32::from_le_bytes(f) as usize / 8
        };
        let (content, size) = (word(at + METADATA_SIZE_AT - 4), word(at + METADATA_SIZE_AT));
        let end = (at + content).min(bytes.len());
        text.extend_from_slice(bytes.get(at + METADATA_HEADER..end).unwrap_or_default());
        at += size.max(METADATA_HEADER);
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
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

/// The same trace directories once each: a trace named twice, or both
/// through a parent and itself, is read once (first naming kept).
pub fn distinct_traces(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    dirs.iter()
        .filter(|d| seen.insert(std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf())))
        .cloned()
        .collect()
}

/// A trace's stream files, as libbabeltrace2's `ctf.fs` takes them: every
/// regular file beside `metadata` not starting with a dot.
pub fn stream_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = entry.file_name();
        let is_file = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file());
        if is_file && name != "metadata" && !name.to_string_lossy().starts_with('.') {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

/// Every stream of a trace checked against its index (`index/NAME.idx`,
/// when there is one that parses), and the streams an index names whose
/// file is gone.
fn check_trace(dir: &Path) -> Result<(Vec<StreamCheck>, Vec<DamagedStream>), String> {
    let index_of = |name: &std::ffi::OsStr| {
        let mut idx = dir.join("index").join(name);
        idx.as_mut_os_string().push(".idx");
        std::fs::read(&idx).ok().and_then(|b| parse_index(&b).ok())
    };
    let mut checks = Vec::new();
    for path in stream_files(dir)? {
        let index = path.file_name().and_then(index_of);
        let check = check_stream(&path, index.as_deref())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        checks.push(check);
    }
    let mut missing = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir.join("index")) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(stream) = name
                .to_string_lossy()
                .strip_suffix(".idx")
                .map(String::from)
            else {
                continue;
            };
            let path = dir.join(&stream);
            if path.exists() {
                continue;
            }
            if let Some(idx) = std::fs::read(entry.path())
                .ok()
                .and_then(|b| parse_index(&b).ok())
            {
                missing.push(DamagedStream::missing(&path, &idx));
            }
        }
    }
    missing.sort_by(|a, b| a.stream.cmp(&b.stream));
    Ok((checks, missing))
}

#[cfg(feature = "babeltrace2")]
/// A temporary trace directory: the metadata and the chosen streams
/// (links to whole files, copies of just the readable packets of the
/// others), removed when dropped. While it lives, its run holds an
/// exclusive lock on `DIR.lock` beside it: runs in other PID namespaces
/// share the temporary directory and their process ids, so the lock, not
/// the pid in the name, tells a live view from a killed run's.
struct View {
    dir: PathBuf,
    original: PathBuf,
    lock: Option<std::fs::File>,
}

#[cfg(feature = "babeltrace2")]
impl Drop for View {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        if self.lock.take().is_some() {
            let _ = std::fs::remove_file(lock_path(&self.dir));
        }
    }
}

#[cfg(feature = "babeltrace2")]
/// Views are named `dyntrace-analyze-PID-NANOS-N` in the temporary directory.
const VIEW_PREFIX: &str = "dyntrace-analyze-";

#[cfg(feature = "babeltrace2")]
fn lock_path(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

#[cfg(feature = "babeltrace2")]
/// Removes the views of runs that were killed before they could: those
/// whose lock no process holds. A view without a lock file is being made
/// (the lock comes first) or was left by an older build: it is removed
/// once it is an hour old.
fn remove_stale_views() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with(VIEW_PREFIX) || name.ends_with(".lock") {
            continue;
        }
        let dir = entry.path();
        let stale = match std::fs::File::open(lock_path(&dir)) {
            Ok(file) => file.try_lock().is_ok(),
            Err(_) => entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 3600),
        };
        if stale {
            let _ = std::fs::remove_dir_all(&dir);
            let _ = std::fs::remove_file(lock_path(&dir));
        }
    }
}

#[cfg(feature = "babeltrace2")]
/// A new, locked view directory of a name no other run has.
fn new_view_dir() -> Result<(PathBuf, std::fs::File), String> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    loop {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n == 0 {
            remove_stale_views();
        }
        let dir =
            std::env::temp_dir().join(format!("{VIEW_PREFIX}{}-{nanos}-{n}", std::process::id()));
        let fail = |e: std::io::Error| format!("{}: {e}", dir.display());
        // The lock file is created first and only by us (create_new), so
        // a name another run took is passed over, never reused.
        let lock = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock_path(&dir))
        {
            Ok(lock) => lock,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(fail(e)),
        };
        lock.lock().map_err(fail)?;
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok((dir, lock)),
            Err(e) => {
                let _ = std::fs::remove_file(lock_path(&dir));
                if e.kind() != std::io::ErrorKind::AlreadyExists {
                    return Err(fail(e));
                }
            }
        }
    }
}

#[cfg(feature = "babeltrace2")]
impl View {
    fn new(original: &Path, streams: &[&StreamCheck]) -> Result<View, String> {
        let (dir, lock) = new_view_dir()?;
        let fail = |e: std::io::Error| format!("{}: {e}", dir.display());
        let view = View {
            dir: dir.clone(),
            original: original.to_path_buf(),
            lock: Some(lock),
        };
        let absolute =
            std::fs::canonicalize(original).map_err(|e| format!("{}: {e}", original.display()))?;
        std::os::unix::fs::symlink(absolute.join("metadata"), dir.join("metadata"))
            .map_err(fail)?;
        for check in streams {
            let Some(name) = check.path.file_name() else {
                continue;
            };
            if check.whole_file() {
                std::os::unix::fs::symlink(absolute.join(name), dir.join(name)).map_err(fail)?;
            } else if !check.packets.is_empty() {
                copy_packets(&check.path, &check.packets, &dir.join(name))
                    .map_err(|e| format!("{}: {e}", check.path.display()))?;
            }
        }
        Ok(view)
    }

    /// Names the user's trace in place of the view in a message.
    fn unmap(&self, text: &str) -> String {
        text.replace(
            &*self.dir.to_string_lossy(),
            &self.original.to_string_lossy(),
        )
    }
}

#[cfg(feature = "babeltrace2")]
/// Writes the byte ranges `packets` of `from` one after the other into `to`.
fn copy_packets(from: &Path, packets: &[(u64, u64)], to: &Path) -> std::io::Result<()> {
    use std::io::{Read, Seek};
    let mut src = std::fs::File::open(from)?;
    let mut dst = std::fs::File::create(to)?;
    for &(offset, size) in packets {
        src.seek(std::io::SeekFrom::Start(offset))?;
        std::io::copy(&mut (&mut src).take(size), &mut dst)?;
    }
    Ok(())
}

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
const DIRECT: Callbacks = Callbacks {
    on_class,
    on_event,
    on_trace: on_trace_ignored,
};

/// How the events are read: one graph run on the caller's thread, or
/// several decoders over parts of the streams (libbabeltrace2 graphs or
/// the built-in reader's), each on a thread of its own, merged by
/// timestamp.
enum Inner {
    #[cfg(feature = "babeltrace2")]
    Direct(Graph),
    Parallel(Merge),
}

/// Which decoder reads trace files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Decoder {
    /// The built-in CTF 1.8 reader (traces it cannot read go to
    /// libbabeltrace2 when the build has it).
    Builtin,
    /// libbabeltrace2, the reference CTF reader.
    Babeltrace2,
}

static DECODER: AtomicU8 = AtomicU8::new(0);

/// Chooses the decoder of trace files for the readers opened after.
pub fn use_decoder(decoder: Decoder) {
    DECODER.store(decoder as u8, Ordering::Relaxed);
}

fn decoder() -> Decoder {
    match DECODER.load(Ordering::Relaxed) {
        0 => Decoder::Builtin,
        _ => Decoder::Babeltrace2,
    }
}

impl Reader {
    /// Builds the graph (or graphs), handing on the fields of the events
    /// `wanted` names (the others with their time only). Fails with a
    /// one-line message naming the input.
    pub fn open(source: &Source, wanted: Wanted) -> Result<Reader, String> {
        Reader::open_with(source, wanted, decoder())
    }

    /// As [`Reader::open`], trace files decoded by `chosen`.
    pub fn open_with(source: &Source, wanted: Wanted, chosen: Decoder) -> Result<Reader, String> {
        match source {
            // Live: every event is handed on (the run reorders them).
            #[cfg(feature = "babeltrace2")]
            Source::Live(urls) => Ok(Reader {
                inner: Inner::Direct(Graph::open(urls, true, &DIRECT)?),
                wanted: wanted.without_counting(),
                label: urls.join(", "),
                damaged: Vec::new(),
                views: Vec::new(),
            }),
            #[cfg(not(feature = "babeltrace2"))]
            Source::Live(urls) => Err(format!(
                "{}: reading lttng-live needs libbabeltrace2 (this build has none)",
                urls.join(", ")
            )),
            Source::Traces(dirs) => {
                let dirs = distinct_traces(dirs);
                let label = dirs
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut checked = Vec::new();
                let mut damaged = Vec::new();
                for dir in dirs {
                    let (checks, missing) = check_trace(&dir)?;
                    damaged.extend(checks.iter().filter_map(DamagedStream::of));
                    damaged.extend(missing);
                    checked.push((dir, checks));
                }
                let builtin = || {
                    let groups = partition(&checked, decoders());
                    crate::input::ctf::open(&checked, groups, wanted)
                };
                let fallback = match chosen {
                    Decoder::Builtin => match builtin() {
                        Ok(merge) => {
                            return Ok(Reader {
                                inner: Inner::Parallel(merge),
                                #[cfg(feature = "babeltrace2")]
                                wanted,
                                label,
                                damaged,
                                #[cfg(feature = "babeltrace2")]
                                views: Vec::new(),
                            })
                        }
                        Err(e) => e,
                    },
                    Decoder::Babeltrace2 => String::new(),
                };
                Reader::open_babeltrace2(checked, damaged, label, wanted, fallback)
            }
        }
    }

    /// The trace files through libbabeltrace2; `why` is the built-in
    /// reader's reason not to read them (empty when not asked to).
    #[cfg(feature = "babeltrace2")]
    fn open_babeltrace2(
        checked: Vec<(PathBuf, Vec<StreamCheck>)>,
        damaged: Vec<DamagedStream>,
        label: String,
        wanted: Wanted,
        why: String,
    ) -> Result<Reader, String> {
        if !why.is_empty() {
            eprintln!("dyntrace-analyze: {why}; reading it with libbabeltrace2");
        }
        // Parts need views of their streams: without a place for
        // them, one graph reads every trace.
        let (mut inputs, views) = match parts(&checked, decoders()) {
            Ok(split) => split,
            Err(_) => parts(&checked, 1)?,
        };
        let renamed: Vec<(PathBuf, PathBuf)> = views
            .iter()
            .map(|v| (v.dir.clone(), v.original.clone()))
            .collect();
        let opened = if inputs.len() <= 1 {
            let inputs = inputs.pop().unwrap_or_default();
            Graph::open(&inputs, false, &DIRECT).map(Inner::Direct)
        } else {
            Merge::open(&inputs, renamed, wanted).map(Inner::Parallel)
        };
        let inner = opened.map_err(|e| message(&label, &views, &e))?;
        Ok(Reader {
            inner,
            wanted,
            label,
            damaged,
            views,
        })
    }

    #[cfg(not(feature = "babeltrace2"))]
    fn open_babeltrace2(
        _checked: Vec<(PathBuf, Vec<StreamCheck>)>,
        _damaged: Vec<DamagedStream>,
        label: String,
        _wanted: Wanted,
        why: String,
    ) -> Result<Reader, String> {
        if why.is_empty() {
            return Err(format!(
                "{label}: --reader babeltrace2 needs libbabeltrace2 (this build has none)"
            ));
        }
        Err(why)
    }

    #[cfg(feature = "babeltrace2")]
    fn message(&self, error: &str) -> String {
        message(&self.label, &self.views, error)
    }

    #[cfg(not(feature = "babeltrace2"))]
    fn message(&self, error: &str) -> String {
        format!("{}: {error}", self.label)
    }

    /// Streams whose recorded packets cannot all be read (their readable
    /// packets are read).
    pub fn damaged(&self) -> &[DamagedStream] {
        &self.damaged
    }

    /// Reads on, delivering some events to `handler`.
    #[cfg_attr(not(feature = "babeltrace2"), allow(clippy::ptr_arg))]
    pub fn step(
        &mut self,
        classes: &mut Vec<EventClass>,
        handler: &mut dyn FnMut(&Event),
    ) -> Result<Step, String> {
        let mut panicked = false;
        // Only a graph on this thread numbers its classes in `classes`.
        let _ = &classes;
        let step = match &mut self.inner {
            #[cfg(feature = "babeltrace2")]
            Inner::Direct(graph) => {
                let mut sink = Sink {
                    classes: std::mem::take(classes),
                    wanted: self.wanted,
                    handler,
                    panicked: false,
                };
                // SAFETY: `on_class` and `on_event` take a `Sink`, which
                // outlives the run.
                let step = unsafe { graph.run_once(&mut sink as *mut Sink as *mut c_void) };
                *classes = std::mem::take(&mut sink.classes);
                panicked = sink.panicked;
                step
            }
            Inner::Parallel(merge) => merge.step(&mut |ev| {
                // As the direct way: a panic stops the read with an error.
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(ev))).is_err() {
                    panicked = true;
                }
                !panicked
            }),
        };
        if panicked {
            return Err(format!(
                "{}: internal error while analysing an event",
                self.label
            ));
        }
        step.map_err(|e| self.message(&e))
    }

    /// Events counted rather than handed on (see [`Wanted`]), once the
    /// read ended; `classes` are those [`Reader::step`] filled.
    pub fn counted(&self, classes: &[EventClass]) -> Counted {
        let mut counted = Counted::default();
        match &self.inner {
            #[cfg(feature = "babeltrace2")]
            Inner::Direct(graph) => {
                let (counts, first, last) = graph.counted();
                counted.add(classes, &counts, first, last);
            }
            Inner::Parallel(merge) => merge.counted(&mut counted),
        }
        let _ = classes;
        counted
    }

    /// Discarded events reported so far.
    pub fn discarded(&self) -> Discarded {
        match &self.inner {
            #[cfg(feature = "babeltrace2")]
            Inner::Direct(graph) => graph.discarded(),
            Inner::Parallel(merge) => merge.discarded(),
        }
    }
}

/// An error of the shim as the user reads it: naming the input, and the
/// user's trace directories rather than the views standing in for them.
#[cfg(feature = "babeltrace2")]
fn message(label: &str, views: &[View], error: &str) -> String {
    let text = format!("{label}: {error}");
    views.iter().fold(text, |t, v| v.unmap(&t))
}

#[cfg(feature = "babeltrace2")]
/// The trace directories each graph reads (each trace itself where the
/// graph reads all its streams and they are whole, else a view), and the
/// views.
fn parts(
    checked: &[(PathBuf, Vec<StreamCheck>)],
    n: usize,
) -> Result<(Vec<Vec<String>>, Vec<View>), String> {
    let mut views = Vec::new();
    let mut inputs = Vec::new();
    for group in partition(checked, n) {
        let mut dirs = Vec::new();
        for (trace, streams) in group {
            let (dir, all) = &checked[trace];
            if streams.len() == all.len() && all.iter().all(StreamCheck::whole_file) {
                dirs.push(dir.to_string_lossy().into_owned());
            } else {
                let view = View::new(dir, &streams)?;
                dirs.push(view.dir.to_string_lossy().into_owned());
                views.push(view);
            }
        }
        inputs.push(dirs);
    }
    Ok((inputs, views))
}

/// Decoding graphs to run at once: one per core this process may use, up
/// to [`MAX_DECODERS`].
fn decoders() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_DECODERS))
}

/// Beyond a few decoding threads the merge, on one thread, is the limit.
const MAX_DECODERS: usize = 4;

/// Splits the readable streams of the traces into at most `n` groups of
/// about equal bytes; each group is, per trace, the streams it reads.
#[allow(clippy::type_complexity)]
pub(crate) fn partition(
    checked: &[(PathBuf, Vec<StreamCheck>)],
    n: usize,
) -> Vec<Vec<(usize, Vec<&StreamCheck>)>> {
    let mut streams: Vec<(usize, &StreamCheck)> = checked
        .iter()
        .enumerate()
        .flat_map(|(t, (_, checks))| checks.iter().map(move |c| (t, c)))
        .collect();
    let readable = streams
        .iter()
        .filter(|(_, c)| !c.packets.is_empty())
        .count();
    let n = n.clamp(1, readable.max(1));
    if n == 1 {
        // One graph over every trace as it is (or its view).
        return vec![checked
            .iter()
            .enumerate()
            .map(|(t, (_, checks))| (t, checks.iter().collect()))
            .collect()];
    }
    streams.retain(|(_, c)| !c.packets.is_empty());
    streams.sort_by_key(|(_, c)| std::cmp::Reverse(c.readable_bytes()));
    let mut groups: Vec<(u64, Vec<(usize, &StreamCheck)>)> = vec![(0, Vec::new()); n];
    for (t, c) in streams {
        let lightest = groups.iter_mut().min_by_key(|g| g.0).expect("n >= 1");
        lightest.0 += c.readable_bytes();
        lightest.1.push((t, c));
    }
    groups
        .into_iter()
        .map(|(_, mut members)| {
            members.sort_by(|a, b| (a.0, &a.1.path).cmp(&(b.0, &b.1.path)));
            let mut per_trace: Vec<(usize, Vec<&StreamCheck>)> = Vec::new();
            for (t, c) in members {
                match per_trace.last_mut() {
                    Some((last, list)) if *last == t => list.push(c),
                    _ => per_trace.push((t, vec![c])),
                }
            }
            per_trace
        })
        .collect()
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
unsafe extern "C" fn on_class(
    ctx: *mut c_void,
    index: u32,
    name: *const c_char,
    n_fields: u32,
    field_names: *const *const c_char,
) -> c_int {
    // SAFETY: ctx is the `Sink` set by `Reader::step` for this run; the
    // shim passes a NUL-terminated name and `n_fields` valid name pointers.
    let sink = unsafe { &mut *(ctx as *mut Sink) };
    let class = unsafe { class_of(name, n_fields, field_names) };
    let index = index as usize;
    if sink.classes.len() <= index {
        sink.classes.resize_with(index + 1, EventClass::unknown);
    }
    let reading = sink.wanted.reading(&class);
    sink.classes[index] = class;
    reading as c_int
}

#[cfg(feature = "babeltrace2")]
unsafe extern "C" fn on_event(ctx: *mut c_void, raw: *const RawEvent) {
    // SAFETY: ctx is the `Sink` of the current run; `raw` and its fields and
    // strings are valid until this function returns.
    let sink = unsafe { &mut *(ctx as *mut Sink) };
    let raw = unsafe { &*raw };
    let Some(class) = sink.classes.get(raw.class_index as usize) else {
        return;
    };
    let mut fields = [Field::Other; MAX_FIELDS];
    // SAFETY: `raw` is the shim's event of this callback.
    let n = unsafe { raw.fields(&mut fields) };
    let event = Event {
        class,
        ts_ns: raw.ts_ns,
        cpu: raw.cpu,
        trace: raw.trace,
        vpid: raw.vpid,
        node: raw.trace,
        fields: &fields[..n],
        shape: message_shape(class, &fields[..n]),
    };
    let handler = &mut sink.handler;
    // A panic must not unwind into C: note it and stop at the end of the run.
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(&event))).is_err() {
        sink.panicked = true;
    }
}

#[cfg(feature = "babeltrace2")]
unsafe extern "C" fn on_trace_ignored(_ctx: *mut c_void, _index: u32, _stream: *const c_char) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str, packets: &[(u64, u64)]) -> StreamCheck {
        StreamCheck {
            path: PathBuf::from(path),
            packets: packets.to_vec(),
            recorded_packets: packets.len() as u64,
            recorded_bytes: packets.iter().map(|p| p.1).sum(),
            file_bytes: packets.iter().map(|p| p.1).sum(),
        }
    }

    #[test]
    fn streams_split_into_parts_of_about_equal_bytes() {
        let checked = vec![
            (
                PathBuf::from("a"),
                vec![
                    check("a/c_0", &[(0, 400)]),
                    check("a/c_1", &[(0, 100)]),
                    check("a/c_2", &[]),
                ],
            ),
            (
                PathBuf::from("b"),
                vec![check("b/c_0", &[(0, 300)]), check("b/c_1", &[(0, 200)])],
            ),
        ];
        let names = |group: &Vec<(usize, Vec<&StreamCheck>)>| -> Vec<String> {
            group
                .iter()
                .flat_map(|(_, s)| s.iter().map(|c| c.path.display().to_string()))
                .collect()
        };
        let parts = partition(&checked, 2);
        assert_eq!(parts.len(), 2);
        assert_eq!(names(&parts[0]), vec!["a/c_0", "a/c_1"]);
        assert_eq!(names(&parts[1]), vec!["b/c_0", "b/c_1"]);
        // One part: every stream of every trace, the empty one included.
        let one = partition(&checked, 1);
        assert_eq!(one.len(), 1);
        assert_eq!(names(&one[0]).len(), 5);
        // Never more parts than streams with something to read.
        assert_eq!(partition(&checked, 8).len(), 4);
    }

    #[test]
    fn a_trace_named_twice_is_read_once() {
        let dir = std::env::temp_dir().join(format!("dyntrace-distinct-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("ust")).unwrap();
        let dirs = vec![dir.join("ust"), dir.join("ust/."), dir.join("ust/../ust")];
        assert_eq!(distinct_traces(&dirs), vec![dir.join("ust")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
