//! `memory`: the memory sampler's events over time (`dyntrace:memory/1`).
//! Per category of `erlang:memory/0` (`memory_sample`) and per allocator
//! instance (`allocator_sample`: carriers' size, blocks' size): first,
//! last, peak and growth per second. Per process (`process_memory`, the
//! top processes of each round and the ones asked for): memory, binary
//! virtual heap and message queue, first to last, worst growth first.
//!
//! A series that grew in every window of its samples is flagged as a leak
//! candidate. Each series keeps at most [`MAX_POINTS`] samples (evenly
//! thinned as the trace goes on), so memory is bounded by the number of
//! series and processes, never by the trace's length.

use clap::Args;

use super::{Analysis, Registered};
use crate::identity::Identity;
use crate::event::{Event, Field, Kind, Slot};
use crate::table::{col, sparkline, Cell, Shown, Summary, Table, Unit};

/// Samples kept per series: enough for the windows and a sparkline.
pub const MAX_POINTS: usize = 64;
/// Processes followed; `process_memory` rows of more are counted.
pub const MAX_PROCESSES: usize = 20_000;
/// Windows a series' span is cut into to call it growing.
pub const DEFAULT_LEAK_WINDOWS: u64 = 4;
/// Rows of each per-process text table.
const TEXT_ROWS: usize = 10;

/// The fields of `memory_sample`, each a series named after it.
const CATEGORIES: [&str; 9] = [
    "total",
    "processes",
    "processes_used",
    "system",
    "atom",
    "atom_used",
    "binary",
    "code",
    "ets",
];

/// A value over time, thinned to at most [`MAX_POINTS`] samples.
#[derive(Debug, Clone, Default)]
pub struct Series {
    first: Option<(i64, u64)>,
    last: (i64, u64),
    peak: u64,
    /// Every `stride`-th sample since the first.
    points: Vec<(i64, u64)>,
    stride: u64,
    seen: u64,
}

impl Series {
    /// Adds a sample at `ts_ns`.
    pub fn push(&mut self, ts_ns: i64, value: u64) {
        self.first.get_or_insert((ts_ns, value));
        self.last = (ts_ns, value);
        self.peak = self.peak.max(value);
        if self.stride == 0 {
            self.stride = 1;
        }
        if self.seen.is_multiple_of(self.stride) {
            if self.points.len() == MAX_POINTS {
                // Every other kept sample goes: the rest stay evenly spaced.
                let mut i = 0;
                self.points.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.stride *= 2;
            }
            if self.seen.is_multiple_of(self.stride) {
                self.points.push((ts_ns, value));
            }
        }
        self.seen += 1;
    }

    fn first_value(&self) -> u64 {
        self.first.map_or(0, |(_, v)| v)
    }

    /// The first sample (time, value), if any.
    pub fn first(&self) -> Option<(i64, u64)> {
        self.first
    }

    /// The last sample (time, value): (0, 0) before any.
    pub fn last(&self) -> (i64, u64) {
        self.last
    }

    /// The highest value sampled.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// Change per second from the first sample to the last (0 over no time).
    pub fn growth_per_s(&self) -> f64 {
        match self.first {
            Some((t0, v0)) if self.last.0 > t0 => {
                (self.last.1 as f64 - v0 as f64) * 1e9 / (self.last.0 - t0) as f64
            }
            _ => 0.0,
        }
    }

    /// Whether the value at the end of each of `windows` (at least two)
    /// equal parts of the series' span is above the one before it, each
    /// part holding a sample.
    pub fn grows_in_every_window(&self, windows: u64) -> bool {
        let Some((t0, v0)) = self.first else {
            return false;
        };
        let span = self.last.0.saturating_sub(t0).max(0) as u64;
        if windows < 2 || span < windows {
            return false;
        }
        let window = span.div_ceil(windows);
        let mut before = v0;
        let mut points = self.points.iter().chain([&self.last]).peekable();
        for w in 1..=windows {
            let end = t0.saturating_add((w * window).min(span) as i64);
            let mut at_end = None;
            while let Some(&&(t, v)) = points.peek() {
                if t > end {
                    break;
                }
                at_end = Some(v);
                points.next();
            }
            match at_end {
                Some(v) if v > before => before = v,
                _ => return false,
            }
        }
        true
    }

    /// The kept samples and the last, in time order.
    pub fn points(&self) -> Vec<(i64, u64)> {
        let mut p = self.points.clone();
        if p.last().is_some_and(|l| l.0 < self.last.0) {
            p.push(self.last);
        }
        p
    }

    /// The kept samples as a sparkline from their lowest to their highest.
    pub fn sparkline(&self) -> String {
        let lo = self.points.iter().map(|&(_, v)| v).min().unwrap_or(0);
        let above: Vec<Option<u64>> = self.points.iter().map(|&(_, v)| Some(v - lo)).collect();
        sparkline(&above)
    }
}

#[derive(Default)]
struct Process {
    node: u32,
    pid: Box<[u8]>,
    name: Box<[u8]>,
    /// As every output writes it, once the run has finished.
    label: Option<String>,
    memory: Series,
    /// Total heap (heap and old heap of the process), in bytes.
    heap: Series,
    bin_vheap: Series,
    queue: Series,
}

/// The `memory` state machine.
pub struct Memory {
    /// (node, series name) in order of first sample.
    series: Vec<((u32, String), Series)>,
    series_index: hashbrown::HashMap<(u32, String), usize, rustc_hash::FxBuildHasher>,
    procs: Vec<Process>,
    proc_index: hashbrown::HashMap<(u32, Box<[u8]>), usize, rustc_hash::FxBuildHasher>,
    procs_dropped: u64,
    /// Each node's name, as the identity layer has it.
    nodes: hashbrown::HashMap<u32, Box<[u8]>, rustc_hash::FxBuildHasher>,
    carriers_created: u64,
    carriers_destroyed: u64,
    leak_windows: u64,
}

/// `memory`'s own options.
#[derive(Args, Clone, Debug)]
#[group(skip)]
pub struct MemoryOptions {
    /// A series that grew in every one of this many equal parts of its
    /// span is flagged as a leak candidate
    #[arg(long, default_value_t = DEFAULT_LEAK_WINDOWS, value_parser = clap::value_parser!(u64).range(2..=1000))]
    pub leak_windows: u64,
}

impl Registered for Memory {
    const NAME: &'static str = "memory";
    const ABOUT: &'static str = "Memory over time from dyntrace:memory/1's samples: per category, \
                                 allocator and process, growth first to last, leak candidates";
    type Options = MemoryOptions;
    fn new(options: MemoryOptions) -> Result<Memory, String> {
        Ok(Memory::with_leak_windows(options.leak_windows))
    }
    /// In `report`, `findings` runs it inside (one pass, its options) and
    /// shows its tables.
    fn for_report(_: MemoryOptions) -> Option<Result<Memory, String>> {
        None
    }
}

impl Default for Memory {
    fn default() -> Memory {
        Memory::with_leak_windows(DEFAULT_LEAK_WINDOWS)
    }
}

/// The unsigned integer field `name` (0 when absent or negative).
pub fn uint(ev: &Event, name: &str) -> u64 {
    match ev.field(name) {
        Some(Field::Int(v)) => v.max(0) as u64,
        _ => 0,
    }
}

impl Memory {
    /// Leak candidates are series that grew in every one of `windows`
    /// equal parts of their span.
    pub fn with_leak_windows(windows: u64) -> Memory {
        Memory {
            series: Vec::new(),
            series_index: Default::default(),
            procs: Vec::new(),
            proc_index: Default::default(),
            procs_dropped: 0,
            nodes: Default::default(),
            carriers_created: 0,
            carriers_destroyed: 0,
            leak_windows: windows,
        }
    }

    fn sample(&mut self, node: u32, name: String, ts_ns: i64, value: u64) {
        let key = (node, name);
        let i = match self.series_index.get(&key) {
            Some(&i) => i,
            None => {
                self.series.push((key.clone(), Series::default()));
                self.series_index.insert(key, self.series.len() - 1);
                self.series.len() - 1
            }
        };
        self.series[i].1.push(ts_ns, value);
    }

    fn process_memory(&mut self, ev: &Event) {
        let pid = ev.str(Slot::Pid);
        let key = (ev.node, Box::<[u8]>::from(pid));
        let i = match self.proc_index.get(&key) {
            Some(&i) => i,
            None if self.procs.len() >= MAX_PROCESSES => {
                self.procs_dropped += 1;
                return;
            }
            None => {
                self.procs.push(Process {
                    node: ev.node,
                    pid: pid.into(),
                    ..Process::default()
                });
                self.proc_index.insert(key, self.procs.len() - 1);
                self.procs.len() - 1
            }
        };
        let p = &mut self.procs[i];
        let name = ev.str(Slot::Name);
        if !name.is_empty() && *name != *p.name {
            p.name = name.into();
        }
        p.memory.push(ev.ts_ns, uint(ev, "memory"));
        p.heap.push(ev.ts_ns, uint(ev, "total_heap"));
        p.bin_vheap.push(ev.ts_ns, uint(ev, "bin_vheap"));
        p.queue.push(ev.ts_ns, uint(ev, "message_queue_len"));
    }

    fn node(&self, node: u32) -> String {
        self.nodes
            .get(&node)
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default()
    }

    /// A series' name as shown: with its node when there are several.
    fn series_name(&self, node: u32, name: &str, several: bool) -> String {
        match several {
            true => match self.node(node) {
                n if n.is_empty() => format!("node {node}: {name}"),
                n => format!("{n}: {name}"),
            },
            false => name.to_string(),
        }
    }

    fn leak_lines(&self, several: bool) -> Vec<String> {
        self.growths()
            .into_iter()
            .filter(|g| g.every_window)
            .map(|g| match g.process {
                None => self.series_name(g.node, g.what, several),
                Some(p) => format!("{} {}", proc_label(p), g.what),
            })
            .map(|l| format!("leak candidate (grew in every window): {l}"))
            .collect()
    }
}

/// A series as `findings` reads it.
pub struct Growth<'a> {
    /// The node (as the analyses number them).
    pub node: u32,
    /// The process, for a process's series (its pid as the analyses see it).
    pub pid: Option<&'a [u8]>,
    /// The category or allocator (`ets`, `binary_alloc[1] carriers`), or
    /// for a process `memory`, `binary heap` or `queue`.
    pub what: &'a str,
    /// Its samples.
    pub series: &'a Series,
    /// Whether it grew in every window (a leak candidate).
    pub every_window: bool,
    process: Option<&'a Process>,
}

impl Memory {
    /// Each process's sampled total heap (bytes): its pid as the analyses
    /// see it, and the series.
    pub fn heaps(&self) -> impl Iterator<Item = (&[u8], &Series)> {
        self.procs.iter().map(|p| (&p.pid[..], &p.heap))
    }

    /// Every series: the categories and allocators, then each process's.
    pub fn growths(&self) -> Vec<Growth<'_>> {
        let w = self.leak_windows;
        let mut v: Vec<Growth> = self
            .series
            .iter()
            .map(|((node, name), s)| Growth {
                node: *node,
                pid: None,
                what: name,
                series: s,
                every_window: s.grows_in_every_window(w),
                process: None,
            })
            .collect();
        for p in &self.procs {
            for (what, s) in [
                ("memory", &p.memory),
                ("binary heap", &p.bin_vheap),
                ("queue", &p.queue),
            ] {
                v.push(Growth {
                    node: p.node,
                    pid: Some(&p.pid),
                    what,
                    series: s,
                    every_window: s.grows_in_every_window(w),
                    process: Some(p),
                });
            }
        }
        v
    }
}

/// A process as every output writes it (its label from the identity
/// layer once the run has finished).
fn proc_label(p: &Process) -> String {
    p.label.clone().unwrap_or_else(|| {
        let pid = String::from_utf8_lossy(crate::identity::split_qualified(&p.pid).0);
        let name = String::from_utf8_lossy(&p.name);
        crate::identity::label_text(&pid, (!name.is_empty()).then_some(&*name), None)
    })
}

/// A process as a [`Unit::Pid`] cell (the pid as the analyses see it):
/// the identity layer puts its node, and its name where the trace names
/// it otherwise.
fn proc_cell(p: &Process) -> Cell {
    let own = (!p.name.is_empty()).then(|| String::from_utf8_lossy(&p.name).into_owned());
    Cell::Proc {
        pid: String::from_utf8_lossy(&p.pid).into_owned(),
        name: own,
        node: None,
    }
}

fn growth_cell(g: f64) -> Cell {
    Cell::Int(g.round() as i64)
}

impl Analysis for Memory {
    fn needs_fields(&self, kind: Kind) -> bool {
        matches!(kind, Kind::MemorySample | Kind::AllocatorSample | Kind::ProcessMemory | Kind::CarrierCreate | Kind::CarrierDestroy | Kind::NodeName)
    }

    fn ignores_other_kinds(&self) -> bool {
        true
    }

    fn finish(&mut self, who: &Identity) {
        for p in self.procs.iter_mut() {
            let own = (!p.name.is_empty()).then(|| String::from_utf8_lossy(&p.name).into_owned());
            p.label = Some(who.label_named(&p.pid, own.as_deref()));
        }
    }

    fn on_event(&mut self, ev: &Event, who: &Identity) {
        match ev.kind() {
            Some(Kind::MemorySample) => {
                for c in CATEGORIES {
                    self.sample(ev.node, c.to_string(), ev.ts_ns, uint(ev, c));
                }
            }
            Some(Kind::AllocatorSample) => {
                let alloc = format!(
                    "{}[{}]",
                    String::from_utf8_lossy(ev.str(Slot::Type)),
                    uint(ev, "instance")
                );
                let carriers = uint(ev, "mbcs_size").saturating_add(uint(ev, "sbcs_size"));
                self.sample(ev.node, format!("{alloc} carriers"), ev.ts_ns, carriers);
                let blocks = uint(ev, "blocks_size");
                self.sample(ev.node, format!("{alloc} blocks"), ev.ts_ns, blocks);
            }
            Some(Kind::ProcessMemory) => self.process_memory(ev),
            Some(Kind::CarrierCreate) => self.carriers_created += 1,
            Some(Kind::CarrierDestroy) => self.carriers_destroyed += 1,
            Some(Kind::NodeName) => {
                if let Some(name) = who.node_name(ev.node) {
                    if self.nodes.get(&ev.node).is_none_or(|n| **n != *name) {
                        self.nodes.insert(ev.node, name.into());
                    }
                }
            }
            _ => {}
        }
    }

    /// Memory over time: `erlang:memory/0`'s categories, and the
    /// processes of the highest peak (when the trace has samples).
    fn report(&self, page: &mut crate::report::Page, _who: &Identity) -> Result<(), String> {
        use crate::report::svg::{lines, Axis, Line};
        if self.series.is_empty() && self.procs.is_empty() {
            return Ok(());
        }
        let several = self.series.iter().any(|((t, _), _)| *t != 0);
        let bytes = Axis {
            label: "bytes",
            log: false,
            format: |v| crate::table::format_bytes(v),
        };
        let line = |name: String, s: &Series, i: usize| Line {
            name,
            points: s
                .points()
                .into_iter()
                .map(|(t, v)| (page.seconds(t), v as f64))
                .collect(),
            dashed: false,
            color: i,
        };
        let mut body = String::new();
        let categories: Vec<Line> = self
            .series
            .iter()
            .filter(|((_, name), _)| CATEGORIES.contains(&name.as_str()) && !name.ends_with("_used"))
            .enumerate()
            .map(|(i, ((trace, name), s))| line(self.series_name(*trace, name, several), s, i))
            .collect();
        if !categories.is_empty() {
            body.push_str("<h3>Per category (erlang:memory/0)</h3>");
            body.push_str(&lines("memory per category", page.time_axis(), bytes, &categories)?);
        }
        let mut procs: Vec<&Process> = self.procs.iter().collect();
        procs.sort_by(|a, b| b.memory.peak.cmp(&a.memory.peak).then(a.pid.cmp(&b.pid)));
        let top: Vec<Line> = procs
            .iter()
            .take(TEXT_ROWS)
            .enumerate()
            .map(|(i, p)| line(proc_label(p), &p.memory, i))
            .collect();
        if !top.is_empty() {
            let _ = std::fmt::Write::write_fmt(
                &mut body,
                format_args!("<h3>The {} processes of the highest peak</h3>", top.len()),
            );
            body.push_str(&lines("process memory", page.time_axis(), bytes, &top)?);
        }
        page.section("memory", "Memory over time", body);
        Ok(())
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let several = self
            .series
            .iter()
            .map(|((t, _), _)| *t)
            .chain(self.procs.iter().map(|p| p.node))
            .any(|t| t != 0);
        let mut tables = Vec::new();

        let mut series = Table::new(
            "memory",
            "Memory per category and allocator (bytes; growth first to last)",
            vec![
                col("series", "series", Unit::Text),
                col("first", "first", Unit::Bytes),
                col("last", "last", Unit::Bytes),
                col("peak", "peak", Unit::Bytes),
                col("growth_per_s", "growth/s", Unit::Bytes),
            ],
        );
        series.shown = Shown::JsonOnly;
        let mut shown = Table::new(
            "memory_text",
            series.title.clone(),
            series
                .columns
                .iter()
                .copied()
                .chain([col("trend", "over time", Unit::Text)])
                .collect(),
        );
        shown.shown = Shown::TextOnly;
        for ((node, name), s) in &self.series {
            let cells = vec![
                Cell::Text(self.series_name(*node, name, several)),
                Cell::Num(s.first_value()),
                Cell::Num(s.last.1),
                Cell::Num(s.peak),
                growth_cell(s.growth_per_s()),
            ];
            let mut with_trend = cells.clone();
            with_trend.push(Cell::Text(s.sparkline()));
            series.push(cells, None);
            shown.push(with_trend, None);
        }
        if self.carriers_created + self.carriers_destroyed > 0 {
            shown.notes.push(format!(
                "carriers seen created {}, destroyed {} (sampled between rounds, not exact)",
                self.carriers_created, self.carriers_destroyed
            ));
        }
        shown.notes.extend(self.leak_lines(several));
        tables.push(series);
        tables.push(shown);

        let mut procs = Table::new(
            "process_memory",
            "Process memory (bytes; growth first to last, worst first)",
            vec![
                col("pid", "pid", Unit::Pid),
                col("first", "first", Unit::Bytes),
                col("last", "last", Unit::Bytes),
                col("growth_per_s", "growth/s", Unit::Bytes),
                col("bin_first", "bin first", Unit::Bytes),
                col("bin_last", "bin last", Unit::Bytes),
                col("queue_first", "queue first", Unit::Count),
                col("queue_last", "queue last", Unit::Count),
            ],
        );
        procs.shown = Shown::JsonOnly;
        let mut order: Vec<&Process> = self.procs.iter().collect();
        order.sort_by(|a, b| {
            b.memory
                .growth_per_s()
                .total_cmp(&a.memory.growth_per_s())
                .then_with(|| a.pid.cmp(&b.pid))
        });
        for p in &order {
            procs.push(
                vec![
                    proc_cell(p),
                    Cell::Num(p.memory.first_value()),
                    Cell::Num(p.memory.last.1),
                    growth_cell(p.memory.growth_per_s()),
                    Cell::Num(p.bin_vheap.first_value()),
                    Cell::Num(p.bin_vheap.last.1),
                    Cell::Num(p.queue.first_value()),
                    Cell::Num(p.queue.last.1),
                ],
                None,
            );
        }
        if self.procs_dropped > 0 {
            procs.notes.push(format!(
                "{} process_memory events of processes beyond the first {MAX_PROCESSES} skipped",
                self.procs_dropped
            ));
        }
        tables.push(procs);
        type Pick = fn(&Process) -> &Series;
        let views: [(&'static str, &str, Unit, Pick); 3] = [
            ("process_memory_text", "memory", Unit::Bytes, |p| &p.memory),
            ("process_binary_text", "binary heap", Unit::Bytes, |p| {
                &p.bin_vheap
            }),
            ("process_queue_text", "message queue", Unit::Count, |p| {
                &p.queue
            }),
        ];
        for (key, what, unit, pick) in views {
            let mut t = Table::new(
                key,
                format!("Process {what} growth (top {TEXT_ROWS}, worst first)"),
                vec![
                    col("process", "process", Unit::Pid),
                    col("first", "first", unit),
                    col("last", "last", unit),
                    col("growth_per_s", "growth/s", unit),
                    col("trend", "over time", Unit::Text),
                ],
            );
            t.shown = Shown::TextOnly;
            let mut order: Vec<&Process> = self.procs.iter().collect();
            order.sort_by(|a, b| {
                pick(b)
                    .growth_per_s()
                    .total_cmp(&pick(a).growth_per_s())
                    .then_with(|| a.pid.cmp(&b.pid))
            });
            for p in order.iter().take(TEXT_ROWS) {
                let s = pick(p);
                t.push(
                    vec![
                        proc_cell(p),
                        Cell::Num(s.first_value()),
                        Cell::Num(s.last.1),
                        growth_cell(s.growth_per_s()),
                        Cell::Text(s.sparkline()),
                    ],
                    None,
                );
            }
            tables.push(t);
        }
        tables
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;

    const S: i64 = 1_000_000_000;

    fn memory_sample(s: &mut Script, ts: i64, ets: i64, binary: i64) {
        let ints: Vec<(&'static str, i64)> = CATEGORIES
            .iter()
            .map(|&c| {
                let v = match c {
                    "ets" => ets,
                    "binary" => binary,
                    _ => 1000,
                };
                (c, v)
            })
            .collect();
        s.named(ts, Kind::MemorySample, &[], &ints);
    }

    fn process(s: &mut Script, ts: i64, pid: &str, name: &str, mem: i64, bin: i64, q: i64) {
        s.named(
            ts,
            Kind::ProcessMemory,
            &[("pid", pid), ("name", name)],
            &[
                ("memory", mem),
                ("total_heap", mem / 2),
                ("bin_vheap", bin),
                ("message_queue_len", q),
            ],
        );
    }

    fn rows<'t>(tables: &'t [Table], key: &str) -> &'t Table {
        tables.iter().find(|t| t.key == key).unwrap()
    }

    #[test]
    fn categories_and_allocators_first_last_peak_growth() {
        let mut s = Script::default();
        for (i, (ets, bin)) in [(100, 50), (200, 900), (300, 60), (400, 70), (500, 80)]
            .into_iter()
            .enumerate()
        {
            memory_sample(&mut s, i as i64 * S, ets, bin);
            s.named(
                i as i64 * S,
                Kind::AllocatorSample,
                &[("type", "binary_alloc")],
                &[
                    ("instance", 1),
                    ("mbc_carriers", 2),
                    ("mbcs_size", 1000 * (i as i64 + 1)),
                    ("sbc_carriers", 0),
                    ("sbcs_size", 24),
                    ("blocks_size", 10),
                ],
            );
        }
        let mut m = Memory::default();
        s.feed(&mut m);
        let tables = m.tables(&Summary::default());
        let t = rows(&tables, "memory");
        let by: std::collections::HashMap<String, &crate::table::Row> = t
            .rows
            .iter()
            .map(|r| match &r.cells[0] {
                Cell::Text(n) => (n.clone(), r),
                _ => unreachable!(),
            })
            .collect();
        let ets = by["ets"];
        assert_eq!(
            ets.cells[1..],
            [
                Cell::Num(100),
                Cell::Num(500),
                Cell::Num(500),
                Cell::Int(100)
            ]
        );
        let binary = by["binary"];
        assert_eq!(
            binary.cells[1..],
            [Cell::Num(50), Cell::Num(80), Cell::Num(900), Cell::Int(8)]
        );
        let carriers = by["binary_alloc[1] carriers"];
        assert_eq!(carriers.cells[1..3], [Cell::Num(1024), Cell::Num(5024)]);
        assert_eq!(by["binary_alloc[1] blocks"].cells[4], Cell::Int(0));
        let notes = &rows(&tables, "memory_text").notes;
        assert!(notes.iter().any(|n| n.ends_with(": ets")), "{notes:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.ends_with("binary_alloc[1] carriers")),
            "{notes:?}"
        );
        // Binary fell after its peak: not a leak candidate.
        assert!(!notes.iter().any(|n| n.ends_with(": binary")), "{notes:?}");
    }

    #[test]
    fn processes_worst_growth_first_with_names() {
        let mut s = Script::default();
        for i in 0..5 {
            let t = i * S;
            process(&mut s, t, "<0.10.0>", "", 1000, 0, 0);
            process(
                &mut s,
                t,
                "<0.11.0>",
                "hoarder",
                2000 + i * 500,
                i * 4000,
                0,
            );
            process(&mut s, t, "<0.12.0>", "", 3000 + i * 100, 0, i * 7);
        }
        let mut m = Memory::default();
        s.feed(&mut m);
        let tables = m.tables(&Summary::default());
        let t = rows(&tables, "process_memory");
        assert_eq!(t.rows.len(), 3);
        let first = &t.rows[0];
        let hoarder = Cell::Proc {
            pid: "<0.11.0>".into(),
            name: Some("hoarder".into()),
            node: None,
        };
        assert_eq!(t.value(first, "pid"), Some(&hoarder));
        assert_eq!(t.value(first, "growth_per_s"), Some(&Cell::Int(500)));
        assert_eq!(t.value(first, "bin_last"), Some(&Cell::Num(16000)));
        let queue = rows(&tables, "process_queue_text");
        let unnamed = Cell::Proc {
            pid: "<0.12.0>".into(),
            name: None,
            node: None,
        };
        assert_eq!(queue.rows[0].cells[0], unnamed);
        assert_eq!(queue.rows[0].cells[2], Cell::Num(28));
        let notes = &rows(&tables, "memory_text").notes;
        assert!(notes
            .iter()
            .any(|n| n.contains("hoarder <0.11.0> binary heap")));
        assert!(notes.iter().any(|n| n.contains("<0.12.0> queue")));
        assert!(!notes.iter().any(|n| n.contains("<0.10.0>")));
    }

    #[test]
    fn nodes_name_series_of_several_traces() {
        let mut s = Script::default();
        s.ev_node(0, "'a@h'", 0, "'a@h'");
        memory_sample(&mut s, 0, 1, 1);
        s.in_trace(1);
        memory_sample(&mut s, S, 1, 1);
        process(&mut s, S, "<0.1.0>", "x", 1, 1, 1);
        let mut m = Memory::default();
        s.feed(&mut m);
        let tables = m.tables(&Summary::default());
        let names: Vec<&Cell> = rows(&tables, "memory")
            .rows
            .iter()
            .map(|r| &r.cells[0])
            .collect();
        assert!(names.contains(&&Cell::Text("a@h: ets".into())));
        assert!(names.contains(&&Cell::Text("node 1: ets".into())));
    }

    #[test]
    fn series_stay_bounded_and_windows_see_the_whole_span() {
        let mut grow = Series::default();
        let mut flat_end = Series::default();
        for i in 0..10_000u64 {
            grow.push(i as i64 * S, i);
            flat_end.push(i as i64 * S, i.min(7_000));
        }
        assert!(grow.points.len() <= MAX_POINTS);
        assert_eq!(grow.points[0], (0, 0));
        assert!(grow.grows_in_every_window(4));
        assert!(grow.grows_in_every_window(10));
        // Flat over the last quarter: not growing in every window.
        assert!(!flat_end.grows_in_every_window(4));
        assert_eq!(grow.growth_per_s(), 1.0);
        assert_eq!(grow.sparkline().chars().next(), Some('▁'));
        assert_eq!(grow.sparkline().chars().last(), Some('█'));
        let mut one = Series::default();
        one.push(5, 5);
        assert!(!one.grows_in_every_window(4));
        assert_eq!(one.growth_per_s(), 0.0);
    }

    #[test]
    fn processes_beyond_the_bound_are_counted() {
        let mut s = Script::default();
        for i in 0..MAX_PROCESSES + 3 {
            process(&mut s, 0, &format!("<0.{i}.0>"), "", 1, 0, 0);
        }
        let mut m = Memory::default();
        s.feed(&mut m);
        let tables = m.tables(&Summary::default());
        let t = rows(&tables, "process_memory");
        assert_eq!(t.rows.len(), MAX_PROCESSES);
        assert!(t.notes[0].starts_with("3 process_memory events"));
    }
}
