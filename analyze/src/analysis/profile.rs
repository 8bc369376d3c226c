//! `profile`: where a process's time goes, function by function.
//!
//! Traced: a call tree per process from `function_call` /
//! `function_return` / `function_exception`, matched by
//! [`super::callstack`]. The time between two events of a process is the
//! self time of its innermost open call, on-CPU or off-CPU by the
//! process's last `process_scheduled` (in / out) when scheduling is traced.
//! Sampled: `stack_sample` events, one count per sample at its innermost
//! frame, split running / waiting by the sampled status.
//!
//! Direct recursion is one tree node, and the funs a list comprehension or
//! `fun` compiles to (`'-compact/1-lc$^0/1-0-'/1`) count as the function
//! that holds them unless `keep_funs`. Memory is bounded by code locations:
//! function texts are interned, and the tree is a table of nodes keyed by
//! (parent, function) with a cap; what does not fit is counted and charged
//! to the deepest node that did.

use std::fmt::Write as _;
use std::path::PathBuf;

use rustc_hash::FxHashMap;

use super::callstack::{CallStack, Frame, Functions, Popped};
use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::{entry, ByText};
use crate::model::table::{col, Cell, Column, Table, Unit};

/// Tree nodes kept (all processes) before new paths are charged to their
/// deepest known node.
pub const MAX_NODES: usize = 200_000;

/// What a process's tree root stands for in folded stacks.
const ROOT: u32 = u32::MAX;

/// `profile`'s options.
#[derive(Clone, Debug, Default)]
pub struct ProfileOptions {
    /// Functions shown per process
    pub top: usize,
    /// Keep list comprehensions and funs apart from their function
    pub keep_funs: bool,
    /// The processes were traced with the return_to flag
    pub return_to: bool,
    /// Samples: charge each to its innermost frame in MODULE (repeatable),
    /// as a traced profile of MODULE would
    pub module: Vec<String>,
    /// Write collapsed stacks (proc;M:F/A;... weight) to FILE
    pub folded: Option<PathBuf>,
    /// Write an interactive flame graph (SVG) to FILE
    pub flame: Option<PathBuf>,
    /// Write speedscope's file format (one profile per process) to FILE
    pub speedscope: Option<PathBuf>,
}

#[derive(Default, Clone, Copy)]
struct Times {
    calls: u64,
    inclusive: u64,
    self_ns: u64,
    oncpu: u64,
    offcpu: u64,
    open: u64,
    unmatched: u64,
    samples: u64,
    running: u64,
    sampled_in: u64,
}

struct Node {
    parent: u32,
    function: u32,
    times: Times,
}

struct Process {
    root: u32,
    stack: CallStack<u32>,
    last_ns: Option<i64>,
    running: Option<bool>,
    functions: FxHashMap<u32, Times>,
    samples: u64,
}

/// The `profile` state machine.
pub struct Profile {
    pub(crate) options: ProfileOptions,
    functions: Functions,
    folded_ids: FxHashMap<u32, u32>,
    procs: ByText<Process>,
    nodes: Vec<Node>,
    children: FxHashMap<(u32, u32), u32>,
    over_cap: u64,
    outside_modules: u64,
    scheduling: bool,
    pub(crate) traced: bool,
    sampled: bool,
    last_ns: i64,
}

/// The enclosing function of a fun's or comprehension's compiled name
/// (`m:'-compact/1-lc$^0/1-0-'/1` is `m:compact/1`), or `None`.
fn enclosing(text: &[u8]) -> Option<Vec<u8>> {
    let colon = text.iter().position(|&b| b == b':')?;
    let (module, rest) = (&text[..colon], &text[colon + 1..]);
    let inner = rest.strip_prefix(b"'-")?;
    let slash = inner.iter().position(|&b| b == b'/')?;
    let digits = inner[slash + 1..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 || inner.get(slash + 1 + digits) != Some(&b'-') {
        return None;
    }
    let mut out = module.to_vec();
    out.push(b':');
    out.extend_from_slice(&inner[..slash + 1 + digits]);
    Some(out)
}

impl Profile {
    /// A profile with `options`.
    pub fn new(options: ProfileOptions) -> Profile {
        Profile {
            options,
            functions: Functions::default(),
            folded_ids: FxHashMap::default(),
            procs: ByText::default(),
            nodes: Vec::new(),
            children: FxHashMap::default(),
            over_cap: 0,
            outside_modules: 0,
            scheduling: false,
            traced: false,
            sampled: false,
            last_ns: 0,
        }
    }

    /// The function id of a code location's text, funs folded.
    fn function(&mut self, text: &[u8]) -> u32 {
        let raw = self.functions.id(text);
        if self.options.keep_funs {
            return raw;
        }
        if let Some(&id) = self.folded_ids.get(&raw) {
            return id;
        }
        let id = match enclosing(text) {
            Some(outer) => self.functions.id(&outer),
            None => raw,
        };
        self.folded_ids.insert(raw, id);
        id
    }

    fn node(nodes: &mut Vec<Node>, parent: u32, function: u32) -> u32 {
        let id = nodes.len() as u32;
        nodes.push(Node {
            parent,
            function,
            times: Times::default(),
        });
        id
    }

    /// The child of `parent` for `function`, made if the cap allows (else
    /// `parent`, counted).
    fn child(&mut self, parent: u32, function: u32) -> u32 {
        if let Some(&id) = self.children.get(&(parent, function)) {
            return id;
        }
        if self.nodes.len() >= MAX_NODES {
            self.over_cap += 1;
            return parent;
        }
        let id = Self::node(&mut self.nodes, parent, function);
        self.children.insert((parent, function), id);
        id
    }

    fn process(&mut self, pid: &[u8]) -> &mut Process {
        let nodes = &mut self.nodes;
        entry(&mut self.procs, pid, || Process {
            root: Self::node(nodes, ROOT, ROOT),
            stack: CallStack::default(),
            last_ns: None,
            running: None,
            functions: FxHashMap::default(),
            samples: 0,
        })
    }

    /// Charges the time since the process's last event to its innermost
    /// open call.
    fn advance(&mut self, pid: &[u8], ts: i64) {
        self.last_ns = self.last_ns.max(ts);
        let p = self.process(pid);
        let since = p.last_ns.replace(ts).unwrap_or(ts);
        let dt = ts.saturating_sub(since).max(0) as u64;
        let Some(top) = p.stack.frames().last() else {
            return;
        };
        let (node, function, running) = (top.data, top.entry, p.running);
        let charge = |t: &mut Times| {
            t.self_ns += dt;
            match running {
                Some(true) => t.oncpu += dt,
                Some(false) => t.offcpu += dt,
                None => {}
            }
        };
        charge(p.functions.entry(function).or_default());
        charge(&mut self.nodes[node as usize].times);
    }

    /// A frame ends at `ts` (returned, left open above a return, or open at
    /// the end); `how` counts it.
    fn close(&mut self, pid: &[u8], f: &Frame<u32>, ts: i64, how: fn(&mut Times, u64)) {
        let ns = ts.saturating_sub(f.start_ns).max(0) as u64;
        let node = &mut self.nodes[f.data as usize].times;
        node.inclusive += ns;
        how(node, u64::from(f.depth));
        let p = self.process(pid);
        let t = p.functions.entry(f.entry).or_default();
        if f.outer {
            t.inclusive += ns;
        }
        how(t, u64::from(f.depth));
    }

    fn call(&mut self, ev: &Event) {
        self.traced = true;
        let pid = ev.str(Slot::Pid);
        self.advance(pid, ev.ts_ns);
        let function = self.function(ev.str(Slot::Entry));
        let p = self.process(pid);
        let parent = p.stack.frames().last().map_or(p.root, |f| f.data);
        let node = match p.stack.frames().last() {
            Some(top) if top.entry == function => top.data,
            _ => self.child(parent, function),
        };
        let p = self.process(pid);
        let mut dropped = None;
        p.stack
            .call(function, ev.ts_ns, |_| node, |f| dropped = Some(f));
        p.functions.entry(function).or_default().calls += 1;
        self.nodes[node as usize].times.calls += 1;
        if let Some(f) = dropped {
            self.close(pid, &f, ev.ts_ns, |t, n| t.unmatched += n);
        }
    }

    fn ret(&mut self, ev: &Event, exception: bool) {
        let pid = ev.str(Slot::Pid);
        self.advance(pid, ev.ts_ns);
        let function = self.function(ev.str(Slot::Entry));
        let return_to = self.options.return_to;
        let mut above = Vec::new();
        let popped = self
            .process(pid)
            .stack
            .ret(function, exception, return_to, |f| above.push(f));
        for f in &above {
            self.close(pid, f, ev.ts_ns, |t, n| t.unmatched += n);
        }
        match popped {
            Popped::Closed(f) => self.close(pid, &f, ev.ts_ns, |_, _| {}),
            Popped::NoCall => {
                let p = self.process(pid);
                p.functions.entry(function).or_default().unmatched += 1;
            }
            Popped::Nested | Popped::ReturnTo => {}
        }
    }

    /// Closes every open call of `pid` at `ts`, counted `open`.
    fn close_open(&mut self, pid: &[u8], ts: i64) {
        self.advance(pid, ts);
        let frames: Vec<Frame<u32>> = self.process(pid).stack.drain().collect();
        for f in &frames {
            self.close(pid, f, ts, |t, n| t.open += n);
        }
    }

    fn scheduled(&mut self, ev: &Event) {
        self.scheduling = true;
        let pid = ev.str(Slot::Pid);
        self.advance(pid, ev.ts_ns);
        let running = match ev.str(Slot::Type) {
            b"in" | b"in_exiting" => true,
            b"out" | b"out_exiting" | b"out_exited" => false,
            _ => return,
        };
        self.process(pid).running = Some(running);
    }

    fn sample(&mut self, ev: &Event) {
        self.sampled = true;
        let pid = ev.str(Slot::Pid);
        let running = ev.str(Slot::Status) == b"running";
        let mut path: Vec<u32> = Vec::new();
        for frame in ev.str(Slot::Stack).rsplit(|&b| b == b';') {
            if frame.is_empty() {
                continue;
            }
            let f = self.function(frame);
            if path.last() != Some(&f) {
                path.push(f);
            }
        }
        if !self.options.module.is_empty() {
            let Some(k) = path.iter().rposition(|&f| self.in_modules(f)) else {
                self.outside_modules += 1;
                return;
            };
            path.truncate(k + 1);
        }
        let mut node = self.process(pid).root;
        for &f in &path {
            node = self.child(node, f);
        }
        let count = |t: &mut Times| {
            t.samples += 1;
            t.running += u64::from(running);
        };
        count(&mut self.nodes[node as usize].times);
        let p = self.process(pid);
        p.samples += 1;
        if let Some(&leaf) = path.last() {
            count(p.functions.entry(leaf).or_default());
        }
        for (i, &f) in path.iter().enumerate() {
            if !path[..i].contains(&f) {
                p.functions.entry(f).or_default().sampled_in += 1;
            }
        }
    }

    fn in_modules(&self, f: u32) -> bool {
        let name = self.functions.name(f);
        let module = name.split(|&b| b == b':').next().unwrap_or(name);
        self.options.module.iter().any(|m| m.as_bytes() == module)
    }

    /// The processes, the busiest first.
    fn ordered(&self, weight: impl Fn(&Process) -> u64) -> Vec<(&[u8], &Process)> {
        let mut procs: Vec<(&[u8], &Process)> = self
            .procs
            .iter()
            .map(|(k, p)| (&k[..], p))
            .filter(|(_, p)| weight(p) > 0)
            .collect();
        procs.sort_by(|a, b| weight(b.1).cmp(&weight(a.1)).then(a.0.cmp(b.0)));
        procs
    }

    /// The collapsed stacks flame graph tools read (`proc;M:F/A;... n`,
    /// the process as every output labels it, `name <pid>`): self time in
    /// microseconds when calls were traced, else sample counts.
    pub fn folded(&self, who: &Identity) -> String {
        let mut roots: FxHashMap<u32, String> = FxHashMap::default();
        for (pid, p) in self.ordered(|_| 1) {
            roots.insert(p.root, who.label(pid).replace(';', ","));
        }
        let mut lines = Vec::new();
        let mut path = Vec::new();
        for (id, node) in self.nodes.iter().enumerate() {
            let weight = match self.traced {
                true => node.times.self_ns / 1000,
                false => node.times.samples,
            };
            if weight == 0 || node.function == ROOT {
                continue;
            }
            path.clear();
            let mut at = id as u32;
            while self.nodes[at as usize].function != ROOT {
                path.push(self.nodes[at as usize].function);
                at = self.nodes[at as usize].parent;
            }
            let Some(root) = roots.get(&at) else { continue };
            let mut line = root.clone();
            for &f in path.iter().rev() {
                line.push(';');
                line.push_str(&String::from_utf8_lossy(self.functions.name(f)).replace(';', ","));
            }
            let _ = write!(line, " {weight}");
            lines.push(line);
        }
        lines.sort();
        lines.join("\n") + if lines.is_empty() { "" } else { "\n" }
    }

    /// What the folded weights count, for a flame graph's legend.
    pub fn count_name(&self) -> &'static str {
        match self.traced {
            true => "us",
            false => "samples",
        }
    }

    fn traced_table(&self) -> Table {
        let mut columns: Vec<Column> = vec![
            col("pid", "pid", Unit::Pid),
            col("function", "function", Unit::Text),
            col("calls", "calls", Unit::Count),
            col("inclusive_ns", "inclusive", Unit::Ns),
            col("self_ns", "self", Unit::Ns),
            col("share", "self %", Unit::Percent),
        ];
        if self.scheduling {
            columns.push(col("oncpu_ns", "on-CPU", Unit::Ns));
            columns.push(col("offcpu_ns", "off-CPU", Unit::Ns));
        }
        columns.push(col("open", "open", Unit::Count));
        columns.push(col("unmatched", "unmatched", Unit::Count));
        let mut t = Table::new(
            "profile",
            format!(
                "Functions by self time per process (top {} each)",
                self.options.top
            ),
            columns,
        );
        let total = |p: &Process| p.functions.values().map(|t| t.self_ns).sum::<u64>();
        let mut unmatched = 0;
        for (pid, p) in self.ordered(|p| total(p).max(p.functions.values().map(|t| t.calls).sum()))
        {
            let all = total(p);
            let mut rows: Vec<(&u32, &Times)> = p
                .functions
                .iter()
                .filter(|(_, t)| t.calls > 0 || t.unmatched > 0)
                .collect();
            unmatched += rows.iter().map(|(_, t)| t.unmatched).sum::<u64>();
            rows.sort_by(|a, b| b.1.self_ns.cmp(&a.1.self_ns).then(a.0.cmp(b.0)));
            for (&f, times) in rows.into_iter().take(self.options.top) {
                let share = match all {
                    0 => 0.0,
                    _ => 100.0 * times.self_ns as f64 / all as f64,
                };
                let mut cells = vec![
                    Cell::bytes(pid),
                    Cell::bytes(self.functions.name(f)),
                    Cell::Num(times.calls),
                    Cell::Num(times.inclusive),
                    Cell::Num(times.self_ns),
                    Cell::Float(share),
                ];
                if self.scheduling {
                    cells.push(Cell::Num(times.oncpu));
                    cells.push(Cell::Num(times.offcpu));
                }
                cells.push(Cell::Num(times.open));
                cells.push(Cell::Num(times.unmatched));
                t.push(cells, None);
            }
        }
        if !self.scheduling {
            t.notes.push(
                "no process_scheduled events: self time is not split into on-CPU and off-CPU \
                 (trace running with the calls to have it)"
                    .into(),
            );
        }
        if unmatched > 0 {
            t.notes.push(format!(
                "{unmatched} unmatched: returns without their call, or calls closed by an outer \
                 return (traced without return_trace); counted, not guessed"
            ));
        }
        t
    }

    fn sampled_table(&self) -> Table {
        let mut t = Table::new(
            "profile_samples",
            format!(
                "Functions by samples on top of the stack per process (top {} each)",
                self.options.top
            ),
            vec![
                col("pid", "pid", Unit::Pid),
                col("function", "function", Unit::Text),
                col("samples", "samples", Unit::Count),
                col("share", "share", Unit::Percent),
                col("share_low", "95% from", Unit::Percent),
                col("share_high", "to", Unit::Percent),
                col("running", "running", Unit::Count),
                col("waiting", "waiting", Unit::Count),
                col("in_stack", "in stack", Unit::Count),
            ],
        );
        for (pid, p) in self.ordered(|p| p.samples) {
            let mut rows: Vec<(&u32, &Times)> = p
                .functions
                .iter()
                .filter(|(_, t)| t.sampled_in > 0)
                .collect();
            rows.sort_by(|a, b| {
                (b.1.samples, b.1.sampled_in)
                    .cmp(&(a.1.samples, a.1.sampled_in))
                    .then(a.0.cmp(b.0))
            });
            for (&f, times) in rows.into_iter().take(self.options.top) {
                let (low, high) = wilson(times.samples, p.samples);
                t.push(
                    vec![
                        Cell::bytes(pid),
                        Cell::bytes(self.functions.name(f)),
                        Cell::Num(times.samples),
                        Cell::Float(100.0 * times.samples as f64 / p.samples as f64),
                        Cell::Float(100.0 * low),
                        Cell::Float(100.0 * high),
                        Cell::Num(times.running),
                        Cell::Num(times.samples - times.running),
                        Cell::Num(times.sampled_in),
                    ],
                    None,
                );
            }
        }
        t.notes.push(
            "95% from / to: the share's 95% confidence interval (Wilson score) from the \
             process's sample count, for samples taken independently of what the process runs; \
             a narrower interval takes more samples (docs/profile.md)"
                .into(),
        );
        t.notes.push(
            "the interval counts chance only: a running process is read when it next handles its \
             signals, and work that timers start was read up to 6 points off its share on a \
             loaded machine (docs/profile.md says when to trust a sampled share)"
                .into(),
        );
        t.notes.push(
            "running: sampled with status running; waiting: any other status (runnable, waiting, \
             garbage_collecting, ...)"
                .into(),
        );
        if self.outside_modules > 0 {
            t.notes.push(format!(
                "{} samples with no frame in {} left out",
                self.outside_modules,
                self.options.module.join(", ")
            ));
        }
        t
    }
}

impl Analysis for Profile {
    fn needs_fields(&self, kind: Kind) -> bool {
        matches!(
            kind,
            Kind::FunctionCall
                | Kind::FunctionReturn
                | Kind::FunctionException
                | Kind::ProcessExit
                | Kind::ProcessScheduled
                | Kind::StackSample
        )
    }

    fn ignores_other_kinds(&self) -> bool {
        true
    }

    fn on_event(&mut self, ev: &Event, _who: &Identity) {
        match ev.kind() {
            Some(Kind::FunctionCall) => self.call(ev),
            Some(Kind::FunctionReturn) => self.ret(ev, false),
            Some(Kind::FunctionException) => self.ret(ev, true),
            Some(Kind::ProcessScheduled) => self.scheduled(ev),
            Some(Kind::StackSample) => self.sample(ev),
            Some(Kind::ProcessExit) => self.close_open(ev.str(Slot::Pid), ev.ts_ns),
            _ => {}
        }
    }

    fn finish(&mut self, _who: &Identity) {
        let pids: Vec<Box<[u8]>> = self
            .procs
            .iter()
            .filter(|(_, p)| !p.stack.frames().is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        for pid in pids {
            self.close_open(&pid, self.last_ns);
        }
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let mut tables = Vec::new();
        if self.traced || !self.sampled {
            tables.push(self.traced_table());
        }
        if self.sampled {
            tables.push(self.sampled_table());
        }
        if self.over_cap > 0 {
            if let Some(t) = tables.last_mut() {
                t.notes.push(format!(
                    "{} call paths past the tree's {MAX_NODES} nodes charged to their deepest kept node",
                    self.over_cap
                ));
            }
        }
        tables
    }
}

/// The normal quantile of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The 95% Wilson score interval of a share seen `k` times in `n`
/// samples, as fractions: it stays within 0..1 and is not empty at 0 or
/// `n` samples, where the normal approximation fails.
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;

    /// The profile of `script`, its first table named as the run loop
    /// names it, and who is who.
    fn profile(script: &Script, keep_funs: bool) -> (Profile, Table, Identity) {
        let mut p = Profile::new(ProfileOptions {
            top: 10,
            keep_funs,
            ..ProfileOptions::default()
        });
        let who = script.feed(&mut p);
        p.finish(&who);
        let mut tables = p.tables(&Summary::default());
        who.annotate(&mut tables);
        (p, tables.remove(0), who)
    }

    fn proc(pid: &str, name: Option<&str>) -> Cell {
        Cell::Proc {
            pid: pid.into(),
            name: name.map(String::from),
            node: None,
        }
    }

    fn num(t: &Table, function: &str, key: &str) -> u64 {
        let row = t
            .rows
            .iter()
            .find(|r| t.value(r, "function") == Some(&Cell::Text(function.into())))
            .unwrap_or_else(|| panic!("no row for {function}"));
        match t.value(row, key) {
            Some(Cell::Num(n)) => *n,
            other => panic!("{function} {key}: {other:?}"),
        }
    }

    #[test]
    fn self_time_splits_on_and_off_cpu() {
        let us = 1000;
        let mut s = Script::default();
        s.ev(0, Kind::ProcessRegister, &["<0.1.0>", "srv", "register"]);
        s.sched(0, "<0.1.0>", "in")
            .call(0, "<0.1.0>", "m:handle/1")
            .call(10 * us, "<0.1.0>", "m:work/1")
            .ret(70 * us, "<0.1.0>", "m:work/1");
        s.sched(80 * us, "<0.1.0>", "out")
            .sched(180 * us, "<0.1.0>", "in")
            .ret(200 * us, "<0.1.0>", "m:handle/1");
        let (p, t, who) = profile(&s, false);
        assert_eq!(num(&t, "m:work/1", "self_ns"), 60 * us as u64);
        assert_eq!(num(&t, "m:work/1", "oncpu_ns"), 60 * us as u64);
        assert_eq!(num(&t, "m:handle/1", "inclusive_ns"), 200 * us as u64);
        assert_eq!(num(&t, "m:handle/1", "self_ns"), 140 * us as u64);
        assert_eq!(num(&t, "m:handle/1", "offcpu_ns"), 100 * us as u64);
        assert_eq!(
            t.value(&t.rows[0], "pid"),
            Some(&proc("<0.1.0>", Some("srv")))
        );
        assert_eq!(
            p.folded(&who),
            "srv <0.1.0>;m:handle/1 140\nsrv <0.1.0>;m:handle/1;m:work/1 60\n"
        );
    }

    #[test]
    fn recursion_and_funs_fold_into_their_function() {
        let mut s = Script::default();
        s.call(0, "<0.1.0>", "m:compact/1")
            .call(1000, "<0.1.0>", "m:'-compact/1-lc$^0/1-0-'/1")
            .call(2000, "<0.1.0>", "m:'-compact/1-lc$^0/1-0-'/1")
            .ret(3000, "<0.1.0>", "m:'-compact/1-lc$^0/1-0-'/1")
            .ret(4000, "<0.1.0>", "m:'-compact/1-lc$^0/1-0-'/1")
            .ret(5000, "<0.1.0>", "m:compact/1");
        let (p, t, who) = profile(&s, false);
        assert_eq!(t.rows.len(), 1);
        assert_eq!(num(&t, "m:compact/1", "calls"), 3);
        assert_eq!(num(&t, "m:compact/1", "self_ns"), 5000);
        assert_eq!(num(&t, "m:compact/1", "inclusive_ns"), 5000);
        assert_eq!(p.folded(&who), "<0.1.0>;m:compact/1 5\n");
        assert!(t.notes[0].starts_with("no process_scheduled"));
        let (_, t, _) = profile(&s, true);
        assert_eq!(num(&t, "m:'-compact/1-lc$^0/1-0-'/1", "calls"), 2);
        assert_eq!(num(&t, "m:'-compact/1-lc$^0/1-0-'/1", "self_ns"), 3000);
    }

    #[test]
    fn open_calls_and_returns_without_calls_are_counted() {
        let mut s = Script::default();
        s.ret(0, "<0.1.0>", "m:before/0")
            .call(10, "<0.1.0>", "m:loop/0")
            .call(20, "<0.1.0>", "m:deep/1");
        for i in 0..29_999 {
            s.call(30 + i, "<0.1.0>", "m:deep/1");
        }
        for i in 0..30_000 {
            s.ret(40_000 + i, "<0.1.0>", "m:deep/1");
        }
        s.call(80_000, "<0.1.0>", "m:stuck/0");
        s.call(90_000, "<0.2.0>", "m:other/0")
            .exception(90_100, "<0.2.0>", "m:other/0");
        let (_, t, _) = profile(&s, false);
        assert_eq!(num(&t, "m:before/0", "unmatched"), 1);
        assert_eq!(num(&t, "m:deep/1", "calls"), 30_000);
        assert_eq!(num(&t, "m:deep/1", "unmatched"), 0);
        assert_eq!(num(&t, "m:deep/1", "open"), 0);
        assert_eq!(num(&t, "m:deep/1", "inclusive_ns"), 69_999 - 20);
        assert_eq!(num(&t, "m:loop/0", "open"), 1);
        assert_eq!(num(&t, "m:stuck/0", "open"), 1);
        assert_eq!(num(&t, "m:stuck/0", "inclusive_ns"), 10_100);
        assert_eq!(num(&t, "m:other/0", "self_ns"), 100);
    }

    #[test]
    fn samples_count_at_the_innermost_frame() {
        let mut s = Script::default();
        for i in 0..7 {
            s.sample(
                i,
                "<0.1.0>",
                "running",
                "m:burn/1;m:burn/1;m:handle/1;gen:loop/3",
            );
        }
        for i in 0..2 {
            s.sample(
                10 + i,
                "<0.1.0>",
                "runnable",
                "m:light/1;m:handle/1;gen:loop/3",
            );
        }
        s.sample(20, "<0.1.0>", "waiting", "gen:loop/3");
        s.ev(21, Kind::ProcessName, &["<0.1.0>", "checkout"]);
        let (p, t, who) = profile(&s, false);
        assert_eq!(t.key, "profile_samples");
        assert_eq!(num(&t, "m:burn/1", "samples"), 7);
        assert_eq!(num(&t, "m:burn/1", "running"), 7);
        assert_eq!(num(&t, "m:light/1", "waiting"), 2);
        assert_eq!(num(&t, "m:handle/1", "in_stack"), 9);
        assert_eq!(t.value(&t.rows[0], "share"), Some(&Cell::Float(70.0)));
        let Some(&Cell::Float(low)) = t.value(&t.rows[0], "share_low") else {
            panic!("no share_low")
        };
        let Some(&Cell::Float(high)) = t.value(&t.rows[0], "share_high") else {
            panic!("no share_high")
        };
        assert!(
            (low - 39.68).abs() < 0.01 && (high - 89.22).abs() < 0.01,
            "{low} {high}"
        );
        assert_eq!(
            p.folded(&who),
            "checkout <0.1.0>;gen:loop/3 1\ncheckout <0.1.0>;gen:loop/3;m:handle/1;m:burn/1 7\n\
             checkout <0.1.0>;gen:loop/3;m:handle/1;m:light/1 2\n"
        );
        let mut p = Profile::new(ProfileOptions {
            top: 10,
            module: vec!["gen".into()],
            ..ProfileOptions::default()
        });
        s.sample(30, "<0.1.0>", "running", "lists:seq/2");
        s.feed(&mut p);
        let t = p.tables(&Summary::default()).remove(0);
        assert_eq!(num(&t, "gen:loop/3", "samples"), 10);
        assert!(t.notes[3].starts_with("1 samples with no frame in gen"));
    }

    /// Processes that share a name (workers of one initial call) keep
    /// their rows and flame graph roots apart: each shows its pid beside
    /// the name.
    #[test]
    fn processes_of_one_name_stay_apart() {
        let mut s = Script::default();
        s.snapshot(0, "<0.7.0>", "pool:worker/1")
            .snapshot(0, "<0.8.0>", "pool:worker/1");
        for (i, pid) in ["<0.7.0>", "<0.8.0>"].into_iter().enumerate() {
            let t = 10_000 * (i as i64 + 1);
            s.call(t, pid, "pool:work/1")
                .ret(t + 5_000 + 1_000 * i as i64, pid, "pool:work/1");
        }
        let (p, t, who) = profile(&s, false);
        let pids: Vec<&Cell> = t.rows.iter().filter_map(|r| t.value(r, "pid")).collect();
        assert_eq!(
            pids,
            [
                &proc("<0.8.0>", Some("pool:worker/1")),
                &proc("<0.7.0>", Some("pool:worker/1"))
            ]
        );
        assert_eq!(
            crate::model::table::text_of(pids[0], Unit::Pid, 0),
            "pool:worker/1 <0.8.0>"
        );
        assert_eq!(
            p.folded(&who),
            "pool:worker/1 <0.7.0>;pool:work/1 5\npool:worker/1 <0.8.0>;pool:work/1 6\n"
        );
    }

    /// Wilson intervals against values computed by hand: 7 in 10 is
    /// 39.68%..89.22%, 0 in 20 still has a width, 700 in 1000 narrows to
    /// 67.09%..72.76%.
    #[test]
    fn wilson_intervals() {
        let close = |(l, h): (f64, f64), (el, eh): (f64, f64)| {
            assert!((l - el).abs() < 1e-4 && (h - eh).abs() < 1e-4, "{l} {h}");
        };
        close(wilson(7, 10), (0.39677, 0.89222));
        close(wilson(0, 20), (0.0, 0.16113));
        close(wilson(20, 20), (0.83887, 1.0));
        close(wilson(700, 1000), (0.67088, 0.72759));
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }

    #[test]
    fn funs_name_their_enclosing_function() {
        assert_eq!(
            enclosing(b"m:'-compact/1-lc$^0/1-0-'/1").as_deref(),
            Some(&b"m:compact/1"[..])
        );
        assert_eq!(
            enclosing(b"m:'-run/2-fun-3-'/0").as_deref(),
            Some(&b"m:run/2"[..])
        );
        assert_eq!(enclosing(b"m:run/2"), None);
        assert_eq!(enclosing(b"m:'-odd'/0"), None);
    }
}
