//! What the event loop feeds: the interface every analysis implements.

use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::event::{Event, Kind};
use crate::model::table::Table;

/// A streaming analysis.
pub trait Analysis {
    /// Feeds one event (already inside the time window and selection, and
    /// in timestamp order: live sources are reordered by the run loop).
    /// `who` is what the trace said so far about names, nodes and aliases,
    /// this event included.
    fn on_event(&mut self, ev: &Event, who: &Identity);
    /// Whether the analysis reads the fields of `kind`'s events. Events of
    /// a kind no analysis reads the fields of still reach every analysis,
    /// with their time and no fields (what `rates` needs), and the reader
    /// spends nothing on their fields: an analysis of a few kinds reads a
    /// trace of many at a little more than the decoding's cost.
    fn needs_fields(&self, _kind: Kind) -> bool {
        true
    }
    /// Whether the analysis does nothing with the events of the kinds it
    /// does not read the fields of. When every analysis of a run says so
    /// (and nothing else needs every event: no `--window`, `--from`/`--to`,
    /// process selection or live source), the reader only counts those
    /// events rather than handing them on.
    fn ignores_other_kinds(&self) -> bool {
        false
    }
    /// Whether it reads messages' kinds (`mailbox`'s): a pipeline's
    /// decoding thread then finds them beside the messages' shapes.
    fn reads_message_kinds(&self) -> bool {
        false
    }
    /// Whether it reads a call's slot ([`Identity::call`]) up to the
    /// reply's receive: the identity layer then keeps each call until
    /// then, not only while its alias is outstanding.
    fn keeps_calls(&self) -> bool {
        false
    }
    /// The input has ended: handle anything held back.
    fn finish(&mut self, _who: &Identity) {}
    /// `--window`: whether the analysis starts its statistics again for
    /// each window itself ([`Analysis::next_window`]), carrying over what is
    /// pending (open calls, sends awaiting their receive), so that what
    /// spans a boundary counts in the window where it ends. Otherwise each
    /// window gets a fresh analysis, and what spans a boundary is lost.
    fn carries_over(&self) -> bool {
        false
    }
    /// `--window`: a new window starts; forget the statistics, keep what
    /// is pending.
    fn next_window(&mut self) {}
    /// The results so far.
    fn tables(&self, summary: &Summary) -> Vec<Table>;
}

/// Builds a fresh set of analyses (once, and once per `--window`).
/// `A` is the analyses' boxed type: `dyn Analysis`, or a trait above it
/// that the caller asks more of once the run has ended.
pub type Make<'a, A> = &'a dyn Fn() -> Result<Vec<Box<A>>, String>;
