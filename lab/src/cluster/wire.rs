//! The messages the MPI code is built on: texts gathered to rank 0 or to
//! every rank, and sums of unsigned integers at rank 0 (collectives, which
//! every rank of the job must call, in the same order); texts sent from one
//! rank to another; and the one way a structured message becomes such a
//! text ([`Message`], a TOML table).
//!
//! A rank that waits for a text from another polls for it, sleeping in
//! between ([`wait_text`]), rather than in a blocking receive, which MPI
//! implementations make spin on a core: a rank waiting for its next
//! configuration must leave its host's cores to the rank timing a CPU
//! render there.

use anyhow::anyhow;
use mpi::Count;
use mpi::Tag;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::traits::{Communicator, CommunicatorCollectives, Root};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::time::Duration;

/// A structured message between ranks, sent as a TOML table.
pub trait Message: Serialize + DeserializeOwned {
    /// What the message is, for the error when one arrives garbled.
    const WHAT: &'static str;

    /// As text. Every message is a table of strings, integers, booleans,
    /// unit enums and lists of tables of them, all of which TOML writes,
    /// so this fails only on a message type that breaks that rule (which
    /// the unit tests would catch).
    fn encode(&self) -> String {
        toml::to_string(self).expect("a message of plain fields writes as TOML")
    }

    /// The message [`Message::encode`] wrote.
    fn decode(text: &str) -> anyhow::Result<Self> {
        toml::from_str(text).map_err(|e| anyhow!("internal: {} arrived garbled: {e}", Self::WHAT))
    }
}

/// How long a waiting rank sleeps between two looks for a message: short
/// against a configuration's renders (tens of milliseconds and more).
pub const POLL: Duration = Duration::from_millis(1);

/// Sends `text` to rank `to`, tagged `tag`.
pub fn send_text(world: &impl Communicator, to: usize, tag: Tag, text: &str) {
    world.process_at_rank(to as i32).send_with_tag(text.as_bytes(), tag);
}

/// A text tagged `tag` from any rank, with its sender, if one has arrived
/// (the text is an error if it is not UTF-8; its sender is known anyway).
pub fn try_receive_text(world: &impl Communicator, tag: Tag) -> Option<(usize, anyhow::Result<String>)> {
    let (bytes, status) = world
        .any_process()
        .immediate_matched_probe_with_tag(tag)?
        .matched_receive_vec::<u8>();
    let from = status.source_rank() as usize;
    let text = String::from_utf8(bytes).map_err(|e| anyhow!("internal: a text from rank {from} is not UTF-8 ({e})"));
    Some((from, text))
}

/// Waits for the text tagged `tag` from rank `from`, looking every
/// [`POLL`].
pub fn wait_text(world: &impl Communicator, from: usize, tag: Tag) -> anyhow::Result<String> {
    let source = world.process_at_rank(from as i32);
    loop {
        if let Some(matched) = source.immediate_matched_probe_with_tag(tag) {
            let (bytes, _) = matched.matched_receive_vec::<u8>();
            return String::from_utf8(bytes)
                .map_err(|e| anyhow!("internal: a text from rank {from} is not UTF-8 ({e})"));
        }
        std::thread::sleep(POLL);
    }
}

/// Every rank's `text`, in rank order, at every rank.
pub fn all_gather_text(world: &impl Communicator, text: &str) -> anyhow::Result<Vec<String>> {
    let mut counts = vec![0 as Count; world.size() as usize];
    world.all_gather_into(&length(text), &mut counts[..]);
    let mut bytes = vec![0u8; total(&counts)];
    let displs = displacements(&counts);
    let mut parts = PartitionMut::new(&mut bytes[..], &counts[..], &displs[..]);
    world.all_gather_varcount_into(text.as_bytes(), &mut parts);
    split(&bytes, &counts)
}

/// Every rank's `text`, in rank order, at rank 0; `None` at the others.
pub fn gather_text(world: &impl Communicator, text: &str) -> anyhow::Result<Option<Vec<String>>> {
    let root = world.process_at_rank(0);
    if world.rank() != 0 {
        root.gather_into(&length(text));
        root.gather_varcount_into(text.as_bytes());
        return Ok(None);
    }
    let mut counts = vec![0 as Count; world.size() as usize];
    root.gather_into_root(&length(text), &mut counts[..]);
    let mut bytes = vec![0u8; total(&counts)];
    let displs = displacements(&counts);
    let mut parts = PartitionMut::new(&mut bytes[..], &counts[..], &displs[..]);
    root.gather_varcount_into_root(text.as_bytes(), &mut parts);
    split(&bytes, &counts).map(Some)
}

/// Rank 0's `text` (the others pass anything), at every rank.
pub fn broadcast_text(world: &impl Communicator, text: &str) -> anyhow::Result<String> {
    let root = world.process_at_rank(0);
    let mut len = length(text);
    root.broadcast_into(&mut len);
    let mut bytes = if world.rank() == 0 {
        text.as_bytes().to_vec()
    } else {
        vec![0u8; len.max(0) as usize]
    };
    root.broadcast_into(&mut bytes[..]);
    String::from_utf8(bytes).map_err(|e| anyhow!("internal: a text from rank 0 is not UTF-8 ({e})"))
}

/// The element-wise sum of every rank's `values` (of one length on every
/// rank), at rank 0; `None` at the others. Integer addition: exact, in
/// any order.
pub fn sum_at_root(world: &impl Communicator, values: &[u64]) -> Option<Vec<u64>> {
    let root = world.process_at_rank(0);
    if world.rank() != 0 {
        root.reduce_into(values, SystemOperation::sum());
        return None;
    }
    let mut sums = vec![0u64; values.len()];
    root.reduce_into_root(values, &mut sums[..], SystemOperation::sum());
    Some(sums)
}

/// A text's length as MPI counts it. Texts here are rows and reports,
/// far below MPI's limit of 2 GiB per message; a longer one is clamped
/// and then fails to decode, rather than leaving a rank out of the
/// collective.
fn length(text: &str) -> Count {
    Count::try_from(text.len()).unwrap_or(Count::MAX)
}

/// The total of `counts`.
fn total(counts: &[Count]) -> usize {
    counts.iter().map(|&c| c.max(0) as usize).sum()
}

/// Where each rank's part starts.
fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0 as Count, |at, &c| {
            let start = *at;
            *at = at.saturating_add(c);
            Some(start)
        })
        .collect()
}

/// The gathered bytes cut into each rank's text.
fn split(bytes: &[u8], counts: &[Count]) -> anyhow::Result<Vec<String>> {
    let mut texts = Vec::with_capacity(counts.len());
    let mut at = 0;
    for (rank, &c) in counts.iter().enumerate() {
        let end = at + c.max(0) as usize;
        let part = bytes.get(at..end).unwrap_or_default();
        texts.push(
            String::from_utf8(part.to_vec())
                .map_err(|e| anyhow!("internal: the text of rank {rank} arrived cut ({e})"))?,
        );
        at = end;
    }
    Ok(texts)
}
