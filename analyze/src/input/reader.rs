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
use std::ffi::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

#[cfg(feature = "babeltrace2")]
use crate::input::babeltrace::{keep_class, Callbacks, Graph, RawEvent};
use crate::input::damage::{check_stream, parse_index, DamagedStream, StreamCheck};
use crate::input::discovery::{distinct_traces, stream_files};
use crate::input::merge::Merge;
use crate::input::step::{Discarded, Step};
#[cfg(feature = "babeltrace2")]
use crate::input::views::View;
#[cfg(feature = "babeltrace2")]
use crate::model::event::message_shape;
use crate::model::event::{Counted, Event, EventClass, Kind, Wanted};
#[cfg(feature = "babeltrace2")]
use crate::model::event::{Field, MAX_FIELDS};

/// Where events come from: trace directories, or lttng-live URLs.
#[derive(Debug, Clone)]
pub enum Source {
    /// CTF trace directories (each holds a `metadata` file).
    Traces(Vec<PathBuf>),
    /// `net://relayd-host/host/HOSTNAME/SESSION` URLs: one per node of a
    /// cluster, merged by timestamp.
    Live(Vec<String>),
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
                    let cores = decoders();
                    let groups = partition(&checked, builtin_parts(cores, wanted));
                    crate::input::ctf::open(&checked, groups, wanted, cores > 1)
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

    /// The trace `dir` through the built-in reader in `parts` parts, a
    /// single one on the caller's thread unless `thread_of_its_own`: each
    /// arrangement [`Reader::open`] may choose.
    #[cfg(test)]
    pub(crate) fn open_builtin(
        dir: &Path,
        wanted: Wanted,
        parts: usize,
        thread_of_its_own: bool,
    ) -> Result<Reader, String> {
        let checked = vec![(dir.to_path_buf(), check_trace(dir)?.0)];
        let groups = partition(&checked, parts);
        Ok(Reader {
            inner: Inner::Parallel(crate::input::ctf::open(
                &checked,
                groups,
                wanted,
                thread_of_its_own,
            )?),
            #[cfg(feature = "babeltrace2")]
            wanted,
            label: dir.display().to_string(),
            damaged: Vec::new(),
            #[cfg(feature = "babeltrace2")]
            views: Vec::new(),
        })
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
    pub fn step<H>(
        &mut self,
        classes: &mut Vec<EventClass>,
        handler: &mut H,
    ) -> Result<Step, String>
    where
        H: FnMut(&Event) + ?Sized,
    {
        let mut panicked = false;
        // Only a graph on this thread numbers its classes in `classes`.
        let _ = &classes;
        let step = match &mut self.inner {
            #[cfg(feature = "babeltrace2")]
            Inner::Direct(graph) => {
                let mut handler = |ev: &Event| handler(ev);
                let mut sink = Sink {
                    classes: std::mem::take(classes),
                    wanted: self.wanted,
                    handler: &mut handler,
                    panicked: false,
                };
                // SAFETY: `on_class` and `on_event` take a `Sink`, which
                // outlives the run.
                let step = unsafe { graph.run_once(&mut sink as *mut Sink as *mut c_void) };
                *classes = std::mem::take(&mut sink.classes);
                panicked = sink.panicked;
                step
            }
            // As the direct way, a panic stops the read with an error: it
            // unwinds through the merge (Rust all the way), so the events
            // are handed on without a landing pad each.
            Inner::Parallel(merge) => {
                let merged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    merge.step(&mut |ev: &Event| {
                        handler(ev);
                        true
                    })
                }));
                merged.unwrap_or_else(|_| {
                    panicked = true;
                    Ok(Step::End)
                })
            }
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

/// The built-in reader's parts on `cores` cores: one per core when the
/// analyses read no message's fields (functions, scheduling: little work
/// per event beside the decoding), else one core fewer, which the merge's
/// thread (the identity layer and the analyses) has to itself: reading
/// messages costs it about as much per event as decoding costs. On two
/// cores that is a pipeline: one thread decodes and merges every stream
/// into batches, the other runs the analyses over them.
fn builtin_parts(cores: usize, wanted: Wanted) -> usize {
    let messages = wanted.wants(Kind::MessageSend) || wanted.wants(Kind::MessageReceive);
    match messages {
        true => cores.saturating_sub(1).max(1),
        false => cores,
    }
}

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
    // SAFETY: the shim's pointers, as above.
    let reading = unsafe {
        keep_class(
            &mut sink.classes,
            sink.wanted,
            index,
            name,
            n_fields,
            field_names,
        )
    };
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
