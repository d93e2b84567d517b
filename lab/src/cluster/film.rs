//! A render's films added up exactly at rank 0: the fixed-point channels
//! ([`FixedRgb`], 64-bit integers) and the counters (samples, rays, NaN
//! samples) are summed by one MPI reduction, so the image of N ranks
//! equals one process's bit for bit, as a split over GPUs does
//! ([`renderer::render::split`]). Each rank's part comes along as a
//! [`DeviceShare`], for the summary and its load imbalance.

use super::Cluster;
use super::wire::{gather_text, sum_at_root};
use anyhow::{Context, anyhow};
use device::film::FixedRgb;
use renderer::backend::RenderOutput;
use renderer::render::split::{DeviceShare, SplitOutput};
use std::time::Duration;

/// Adds every rank's `own` render up at rank 0: its film, samples, rays
/// and NaN samples summed, its wall time the slowest rank's, and one
/// share per rank. `None` at the other ranks. Every rank's film must
/// have the same size (see [`super::failure::agree`]).
pub fn reduce(cluster: &Cluster, own: SplitOutput) -> anyhow::Result<Option<SplitOutput>> {
    let out = own.output;
    let mut values: Vec<u64> = out.film.iter().flat_map(|p| [p.r, p.g, p.b]).collect();
    values.extend([out.spp as u64, out.rays, out.invalid_samples]);
    let share = DeviceShare {
        device: format!("{} ({})", cluster.name(), out.device),
        chunks: own.shares.iter().map(|s| s.chunks).sum::<u32>().max(1),
        spp: out.spp,
        rays: out.rays,
        busy: out.elapsed,
        times: None,
    };
    let sums = sum_at_root(&cluster.world, &values);
    let shares = gather_text(&cluster.world, &encode(&share))?;
    let (Some(sums), Some(shares)) = (sums, shares) else {
        return Ok(None);
    };
    let shares = shares.iter().map(|s| decode(s)).collect::<anyhow::Result<Vec<_>>>()?;
    let (film, counters) = sums.split_at(sums.len() - 3);
    Ok(Some(SplitOutput {
        output: RenderOutput {
            film: film
                .chunks_exact(3)
                .map(|c| FixedRgb {
                    r: c[0],
                    g: c[1],
                    b: c[2],
                })
                .collect(),
            spp: u32::try_from(counters[0]).context("internal: the ranks rendered more than 2^32 samples")?,
            rays: counters[1],
            invalid_samples: counters[2],
            elapsed: shares.iter().map(|s| s.busy).max().unwrap_or_default(),
            device: format!("{} MPI ranks", cluster.size),
            gpu: None,
        },
        shares,
        merge: Duration::ZERO,
    }))
}

/// One rank's share as a line of text: chunks, samples, rays, busy
/// nanoseconds and the device, tab-separated.
fn encode(s: &DeviceShare) -> String {
    format!(
        "{}\t{}\t{}\t{}\t{}",
        s.chunks,
        s.spp,
        s.rays,
        s.busy.as_nanos(),
        s.device
    )
}

/// The share [`encode`] wrote.
fn decode(text: &str) -> anyhow::Result<DeviceShare> {
    let bad = || anyhow!("internal: a rank's share arrived garbled: {text:?}");
    let mut f = text.splitn(5, '\t');
    let mut next = || f.next().ok_or_else(bad);
    Ok(DeviceShare {
        chunks: next()?.parse().map_err(|_| bad())?,
        spp: next()?.parse().map_err(|_| bad())?,
        rays: next()?.parse().map_err(|_| bad())?,
        busy: Duration::from_nanos(next()?.parse().map_err(|_| bad())?),
        device: next()?.to_string(),
        times: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_survives_the_trip_to_rank_0() {
        let share = DeviceShare {
            device: "rank 2 on h\t(cpu)".into(),
            chunks: 3,
            spp: 17,
            rays: 1 << 40,
            busy: Duration::from_nanos(1_234_567_891),
            times: None,
        };
        assert_eq!(decode(&encode(&share)).unwrap(), share);
        assert!(decode("3\t17").is_err());
    }
}
