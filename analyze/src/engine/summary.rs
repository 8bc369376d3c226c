//! What every output says about the input besides the tables: events
//! read and discarded, the time span, damaged streams, notices.

use crate::engine::names::NamedLater;
use crate::input::damage::DamagedStream;
use crate::model::table::format_ns;
use crate::model::time::format_utc;

/// What every output says about the input besides the tables.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// `org_erlang_dyntrace` events analysed (inside the window and filter).
    pub events: u64,
    /// Events LTTng discarded (sum of the trace's discarded-events counts).
    pub discarded: u64,
    /// Discarded-events reports that gave no count.
    pub discarded_reports_without_count: u64,
    /// Timestamp of the first event read (ns from origin).
    pub first_ns: i64,
    /// Timestamp of the last event read.
    pub last_ns: i64,
    /// Streams whose recorded packets could not all be read.
    pub damaged: Vec<DamagedStream>,
    /// Streams holding the events of several nodes that cannot be told
    /// apart (no `vpid` context): the names of each one's nodes.
    pub mixed_nodes: Vec<Vec<String>>,
    /// Call aliases forgotten before their reply (too many outstanding).
    pub aliases_evicted: u64,
    /// The selection, when it matched nothing.
    pub empty_selection: Option<String>,
    /// The names of the nodes the trace names (`node_name`), in order.
    pub nodes: Vec<String>,
    /// Events read per event name (in the contract's order), of those
    /// present.
    pub event_counts: Vec<(&'static str, u64)>,
    /// Processes selected by `--name` whose earliest naming event comes
    /// after their first event (they are selected from their first).
    pub named_later: Vec<NamedLater>,
}

impl Summary {
    /// Lines every output adds under the summary line: the clock's +0, the
    /// nodes that cannot be told apart, a selection that matched nothing.
    pub fn notices(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.events > 0 {
            lines.push(format!(
                "+0 = {} (the first event of the selection; times are relative to it)",
                format_utc(self.first_ns)
            ));
        }
        for nodes in &self.mixed_nodes {
            lines.push(format!(
                "warning: one stream holds the events of nodes {}, which cannot be told apart \
                 (same pids merged): record with LTTng's vpid context \
                 (lttng add-context -u -t vpid -s SESSION, before lttng start)",
                nodes.join(", ")
            ));
        }
        for n in &self.named_later {
            lines.push(format!(
                "{} {} is named by the trace only at +{}: selected from its first event at +{}",
                n.name,
                n.pid,
                format_ns((n.named_ns - self.first_ns).max(0) as u64),
                format_ns((n.first_ns - self.first_ns).max(0) as u64),
            ));
        }
        if let Some(sel) = &self.empty_selection {
            lines.push(format!("nothing matched the selection {sel}"));
        }
        lines
    }
}
