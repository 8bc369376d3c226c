//! What a reader hands on besides events: how far a step got, and the
//! events LTTng reports it discarded.

/// What one call to [`Reader::step`](crate::input::reader::Reader::step) found.
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
