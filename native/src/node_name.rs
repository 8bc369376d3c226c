//! `dyntrace:announce_nodes/0`'s writer: the `node_name` event.

use crate::events::EventId;
use crate::format;
use crate::lttng::{self, emit, Text};
use rustler::{Atom, NifResult, Term};

rustler::atoms! {
    ok,
}

/// Writes one `node_name` event: this node's name, a channel number (the
/// first number of the pids this node writes for `peer`; 0 for itself),
/// `peer`'s name and why it is written, all atoms but the channel.
#[rustler::nif]
fn emit_node_name(node: Term, channel: u64, peer: Term, why: Term) -> NifResult<Atom> {
    if !(node.is_atom() && peer.is_atom() && why.is_atom()) {
        return Err(rustler::Error::BadArg);
    }
    if !lttng::is_enabled(EventId::NodeName) {
        return Ok(ok());
    }
    let (mut node_text, mut peer_text, mut why_text) = (Vec::new(), Vec::new(), Vec::new());
    format::format_atom(node, &mut node_text);
    format::format_atom(peer, &mut peer_text);
    why_text.extend_from_slice(why.atom_to_string()?.as_bytes());
    emit::node_name(
        Text::terminate(&mut node_text),
        channel,
        Text::terminate(&mut peer_text),
        Text::terminate(&mut why_text),
    );
    Ok(ok())
}
