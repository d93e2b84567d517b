//! Where a rank's work goes: its share of a render's samples
//! ([`samples`]), and which GPU it renders on: `--devices` where it was given (it then
//! applies within every rank), otherwise the GPU its rank within its host
//! picks (local rank modulo the GPUs the host has), so one rank per GPU
//! covers each host's GPUs once.

use device::integrator::SampleRange;
use renderer::backend::gpu::Gpu;
use renderer::settings::backend::BackendChoice;
use renderer::settings::devices::Devices;

/// The GPU of the rank `local_rank` among its host's ranks, on a host
/// with `present` GPUs.
pub fn pick(local_rank: usize, present: usize) -> Devices {
    Devices::List(vec![local_rank % present.max(1)])
}

/// The devices a rank renders on: `given` (`--devices`) as it is, nothing
/// for a CPU back end or a host whose GPUs cannot be counted (the back
/// end's own choice then says why), otherwise [`pick`].
pub fn devices(given: Option<&Devices>, backend: BackendChoice, local_rank: usize) -> Option<Devices> {
    if given.is_some() {
        return given.cloned();
    }
    match backend {
        BackendChoice::Exactly(kind) if !kind.is_gpu() => None,
        _ => match Gpu::count() {
            Ok(present) if present > 0 => Some(pick(local_rank, present)),
            _ => None,
        },
    }
}

/// The sample indices rank `rank` of `size` renders of `0..spp`: an even
/// share, the larger ones last (`rank·spp/size .. (rank+1)·spp/size`),
/// empty for some ranks when there are more ranks than samples.
pub fn samples(spp: u32, rank: usize, size: usize) -> SampleRange {
    let at = |r: usize| (spp as u64 * r as u64 / size.max(1) as u64) as u32;
    SampleRange {
        begin: at(rank),
        end: at(rank + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ranks_share_the_samples_without_gap_or_overlap() {
        let shares: Vec<(u32, u32)> = (0..3).map(|r| samples(8, r, 3)).map(|s| (s.begin, s.end)).collect();
        assert_eq!(shares, [(0, 2), (2, 5), (5, 8)]);
        assert_eq!(
            samples(1, 0, 2),
            SampleRange { begin: 0, end: 0 },
            "more ranks than samples"
        );
        assert_eq!(samples(1, 1, 2), SampleRange { begin: 0, end: 1 });
    }

    #[test]
    fn local_ranks_take_the_gpus_in_turn() {
        let picked: Vec<Devices> = (0..5).map(|local| pick(local, 2)).collect();
        let expected: Vec<Devices> = [0, 1, 0, 1, 0].into_iter().map(|d| Devices::List(vec![d])).collect();
        assert_eq!(picked, expected);
        assert_eq!(pick(3, 8), Devices::List(vec![3]));
    }

    #[test]
    fn devices_given_apply_within_the_rank_and_cpu_back_ends_take_none() {
        let given = Devices::List(vec![1, 0]);
        assert_eq!(devices(Some(&given), BackendChoice::Auto, 3), Some(given));
        let cpu = BackendChoice::Exactly(renderer::backend::BackendKind::Cpu);
        assert_eq!(devices(None, cpu, 0), None);
    }
}
