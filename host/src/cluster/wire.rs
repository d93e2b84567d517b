//! The collectives the MPI code is built on: texts gathered to rank 0 or
//! to every rank, and sums of unsigned integers at rank 0. Every rank of
//! the job must call each of them, in the same order.

use mpi::Count;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::traits::{Communicator, CommunicatorCollectives, Root};

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
    String::from_utf8(bytes).map_err(|e| anyhow::anyhow!("internal: a text from rank 0 is not UTF-8 ({e})"))
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
                .map_err(|e| anyhow::anyhow!("internal: the text of rank {rank} arrived cut ({e})"))?,
        );
        at = end;
    }
    Ok(texts)
}
