//! Which rank makes which configuration of an experiment: the
//! configurations, in plan order, cut into rounds. A round holds
//! configurations of one kind (all on the CPU, or all on GPUs) that
//! follow each other in the plan, at most one per rank that may take
//! that kind: a GPU configuration goes to any rank (each on its own GPU),
//! a CPU configuration only to the ranks that may use a host's cores
//! (one per host, so that no timed CPU row shares its cores with another
//! rank's render, or every rank with `--share-cores`). A change of kind
//! starts a new round, so CPU runs never overlap GPU runs of their host.
//!
//! The ranks make a round's configurations, then exchange their rows and
//! how they ended (one collective), so the rounds are the points where
//! every rank meets: a rank that failed or was stopped is known to all
//! after its round, and the rows of a round follow each other in plan
//! order, as one process writes them.

/// One configuration given to a rank: (rank, the configuration's index in
/// plan order).
pub type Assignment = (usize, usize);

/// The rounds of configurations whose kinds are `on_gpu` (in plan order),
/// over `size` ranks, of which `cpu_ranks` (ascending) may make CPU
/// configurations. Each round's assignments are in plan order and in
/// ascending rank order.
pub fn assign(on_gpu: &[bool], size: usize, cpu_ranks: &[usize]) -> Vec<Vec<Assignment>> {
    let all: Vec<usize> = (0..size.max(1)).collect();
    let cpu = if cpu_ranks.is_empty() { &all[..1] } else { cpu_ranks };
    let mut rounds: Vec<Vec<Assignment>> = Vec::new();
    let mut kind = None;
    for (i, &gpu) in on_gpu.iter().enumerate() {
        let takers = if gpu { &all[..] } else { cpu };
        match rounds.last_mut() {
            Some(round) if kind == Some(gpu) && round.len() < takers.len() => round.push((takers[round.len()], i)),
            _ => rounds.push(vec![(takers[0], i)]),
        }
        kind = Some(gpu);
    }
    rounds
}

/// The ranks that may make CPU configurations, given each rank's rank
/// within its host (`local_ranks`, in rank order): the first rank of each
/// host, or every rank when `share_cores`.
pub fn cpu_ranks(local_ranks: &[usize], share_cores: bool) -> Vec<usize> {
    (0..local_ranks.len())
        .filter(|&r| share_cores || local_ranks[r] == 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_configurations_fill_every_rank_and_cpu_ones_only_theirs() {
        // cpu, cpu, gpu ×5, cpu, on 3 ranks of which 0 and 2 take CPU runs.
        let on_gpu = [false, false, true, true, true, true, true, false];
        let rounds = assign(&on_gpu, 3, &[0, 2]);
        assert_eq!(
            rounds,
            [
                vec![(0, 0), (2, 1)],
                vec![(0, 2), (1, 3), (2, 4)],
                vec![(0, 5), (1, 6)],
                vec![(0, 7)],
            ]
        );
        let every: Vec<usize> = rounds.iter().flatten().map(|&(_, i)| i).collect();
        assert_eq!(every, (0..8).collect::<Vec<_>>(), "each once, in plan order");
    }

    #[test]
    fn one_host_makes_its_cpu_runs_one_at_a_time_unless_told_to_share() {
        let locals = [0, 1, 2, 0];
        assert_eq!(cpu_ranks(&locals, false), [0, 3], "the first rank of each host");
        assert_eq!(cpu_ranks(&locals, true), [0, 1, 2, 3]);
        let rounds = assign(&[false, false, false], 3, &cpu_ranks(&[0, 1, 2], false));
        assert_eq!(rounds, [vec![(0, 0)], vec![(0, 1)], vec![(0, 2)]]);
        assert!(assign(&[], 3, &[0]).is_empty());
    }
}
