//! One process's open calls, matched from `function_call` to its
//! `function_return` / `function_exception`: the machinery `calls` and
//! `profile` share.
//!
//! Under a `return_trace` match spec the VM writes one `return_from` per
//! call (the match spec keeps a frame even for a tail call), and under
//! `exception_trace` one `exception_from` per frame an exception passes.
//! A return names its function and closes the newest open call of it;
//! newer frames left open above it (functions traced without
//! `return_trace`) are closed there as unmatched, never guessed. A return
//! naming no open call is counted, never guessed either.
//!
//! Direct recursion is one frame with a depth: a function recursing 30,000
//! deep costs one frame, and its returns pair with its calls in order. The
//! stack is an explicit vector (never recursion on the trace's depth),
//! bounded by [`MAX_STACK`] frames: past it the oldest frame is dropped and
//! handed back to be counted.
//!
//! `return_to` events also arrive as `function_return` (OTP writes the
//! same event for `return_from` and `return_to`) and cannot be told apart
//! by their fields; only when the processes were traced with `return_to`
//! (the caller says so) is the return right after a matched return taken as
//! the `return_to` it is, and skipped.

use rustc_hash::FxHashMap;

/// Open frames kept per process before the oldest is dropped.
pub const MAX_STACK: usize = 4096;

/// One open call (or a directly recursive run of calls) of a function.
#[derive(Debug, Clone)]
pub struct Frame<T> {
    /// The function (an id the analysis interned).
    pub entry: u32,
    /// When the outermost call of the run started (ns).
    pub start_ns: i64,
    /// Calls of `entry` nested directly in this frame, the first included.
    pub depth: u32,
    /// No other frame of the same function is open below this one: its
    /// time is not already inside an outer call of the same function.
    pub outer: bool,
    /// What the analysis keeps per frame.
    pub data: T,
}

/// What a `function_call` did to the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// A new frame on top.
    Frame,
    /// The function called itself directly: the top frame's depth grew.
    Recursed,
}

/// What a return or exception matched.
#[derive(Debug)]
pub enum Popped<T> {
    /// The call's frame, closed.
    Closed(Frame<T>),
    /// A directly recursive call returned; its run's frame stays open.
    Nested,
    /// No open call of the function: counted, never guessed.
    NoCall,
    /// A `return_to` event (processes traced with `return_to`): skipped.
    ReturnTo,
}

/// A process's open calls.
#[derive(Debug)]
pub struct CallStack<T> {
    frames: Vec<Frame<T>>,
    open: FxHashMap<u32, u32>,
    after_return: bool,
}

impl<T> Default for CallStack<T> {
    fn default() -> Self {
        CallStack {
            frames: Vec::new(),
            open: FxHashMap::default(),
            after_return: false,
        }
    }
}

impl<T> CallStack<T> {
    /// The open frames, outermost first.
    pub fn frames(&self) -> &[Frame<T>] {
        &self.frames
    }

    /// The innermost open frame.
    pub fn top_mut(&mut self) -> Option<&mut Frame<T>> {
        self.frames.last_mut()
    }

    /// A call of `entry` at `ts_ns`. `data` makes a new frame's data from
    /// the frames below it; a frame dropped to keep the bound goes to
    /// `dropped`.
    pub fn call(
        &mut self,
        entry: u32,
        ts_ns: i64,
        data: impl FnOnce(&[Frame<T>]) -> T,
        dropped: impl FnOnce(Frame<T>),
    ) -> Pushed {
        self.after_return = false;
        if let Some(top) = self.frames.last_mut() {
            if top.entry == entry {
                top.depth = top.depth.saturating_add(1);
                return Pushed::Recursed;
            }
        }
        if self.frames.len() >= MAX_STACK {
            let oldest = self.frames.remove(0);
            self.forget(oldest.entry);
            dropped(oldest);
        }
        let data = data(&self.frames);
        let open = self.open.entry(entry).or_insert(0);
        let outer = *open == 0;
        *open += 1;
        self.frames.push(Frame {
            entry,
            start_ns: ts_ns,
            depth: 1,
            outer,
            data,
        });
        Pushed::Frame
    }

    /// A `function_return` (`exception` false) or `function_exception` of
    /// `entry`; `return_to` says the process was traced with `return_to`.
    /// Frames left open above the matched one go to `unmatched`.
    pub fn ret(
        &mut self,
        entry: u32,
        exception: bool,
        return_to: bool,
        mut unmatched: impl FnMut(Frame<T>),
    ) -> Popped<T> {
        let found = self.frames.iter().rposition(|f| f.entry == entry);
        if return_to && !exception && self.after_return {
            // Back in the named caller: frames above it will not return.
            self.after_return = false;
            if let Some(k) = found {
                self.close_above(k, &mut unmatched);
            }
            return Popped::ReturnTo;
        }
        let Some(k) = found else {
            self.after_return = false;
            return Popped::NoCall;
        };
        self.after_return = true;
        self.close_above(k, &mut unmatched);
        let top = self.frames.last_mut().expect("the matched frame is open");
        if top.depth > 1 {
            top.depth -= 1;
            return Popped::Nested;
        }
        let frame = self.frames.pop().expect("the matched frame is open");
        self.forget(frame.entry);
        Popped::Closed(frame)
    }

    /// Every open frame, innermost first (the process ended, or the trace).
    pub fn drain(&mut self) -> impl Iterator<Item = Frame<T>> + '_ {
        self.open.clear();
        self.after_return = false;
        self.frames.drain(..).rev()
    }

    fn close_above(&mut self, k: usize, unmatched: &mut impl FnMut(Frame<T>)) {
        while self.frames.len() > k + 1 {
            let f = self.frames.pop().expect("frames above k");
            self.forget(f.entry);
            unmatched(f);
        }
    }

    fn forget(&mut self, entry: u32) {
        if let Some(n) = self.open.get_mut(&entry) {
            *n -= 1;
            if *n == 0 {
                self.open.remove(&entry);
            }
        }
    }
}

/// Function texts interned to small ids (bounded by code locations).
#[derive(Default)]
pub struct Functions {
    ids: FxHashMap<Box<[u8]>, u32>,
    names: Vec<Box<[u8]>>,
}

impl Functions {
    /// The id of `name`, made the first time.
    pub fn id(&mut self, name: &[u8]) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    /// The text of `id`.
    pub fn name(&self, id: u32) -> &[u8] {
        &self.names[id as usize]
    }

    /// How many functions are known.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// No function yet.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed(p: Popped<()>) -> Frame<()> {
        match p {
            Popped::Closed(f) => f,
            other => panic!("not closed: {other:?}"),
        }
    }

    #[test]
    fn deep_direct_recursion_is_one_frame_paired_in_order() {
        let mut s: CallStack<()> = CallStack::default();
        for i in 0..30_000 {
            s.call(7, i, |_| (), |_| panic!("nothing dropped"));
        }
        assert_eq!(s.frames().len(), 1);
        for _ in 1..30_000 {
            assert!(matches!(
                s.ret(7, false, false, |_| panic!()),
                Popped::Nested
            ));
        }
        let f = closed(s.ret(7, false, false, |_| panic!()));
        assert_eq!((f.start_ns, f.depth, f.outer), (0, 1, true));
        assert!(matches!(s.ret(7, false, false, |_| ()), Popped::NoCall));
    }

    #[test]
    fn indirect_recursion_marks_inner_frames() {
        let mut s: CallStack<()> = CallStack::default();
        s.call(1, 0, |_| (), |_| ());
        s.call(2, 1, |_| (), |_| ());
        s.call(1, 2, |_| (), |_| ());
        assert!(!closed(s.ret(1, false, false, |_| ())).outer);
        closed(s.ret(2, false, false, |_| ()));
        assert!(closed(s.ret(1, false, false, |_| ())).outer);
    }

    #[test]
    fn return_to_is_skipped_only_when_told() {
        let mut s: CallStack<()> = CallStack::default();
        s.call(1, 0, |_| (), |_| ());
        s.call(2, 1, |_| (), |_| ());
        closed(s.ret(2, false, true, |_| ()));
        assert!(matches!(s.ret(1, false, true, |_| ()), Popped::ReturnTo));
        closed(s.ret(1, false, true, |_| ()));
        let mut s: CallStack<()> = CallStack::default();
        s.call(1, 0, |_| (), |_| ());
        s.call(2, 1, |_| (), |_| ());
        closed(s.ret(2, false, false, |_| ()));
        closed(s.ret(1, false, false, |_| ()));
    }

    #[test]
    fn the_oldest_frame_is_dropped_past_the_bound() {
        let mut s: CallStack<()> = CallStack::default();
        let mut dropped = 0;
        for i in 0..(MAX_STACK as i64 + 3) {
            s.call((i % 2) as u32, i, |_| (), |_| dropped += 1);
        }
        assert_eq!((s.frames().len(), dropped), (MAX_STACK, 3));
    }
}
