//! Whether an MPI launcher started this process, and joining its job.
//!
//! A binary built with `--features mpi` initialises MPI only when a
//! launcher's variables are set ([`launched`]) and the job has more than
//! one rank; a plain `wavepath render` behaves as without the feature.

use anyhow::anyhow;
use mpi::Threading;
use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};

/// Variables that MPI launchers set in every process they start: Open
/// MPI's `mpirun`, the PMI of MPICH's Hydra (and Intel MPI, and Slurm's
/// `srun --mpi=pmi2`), and PMIx (Open MPI 5, `srun --mpi=pmix`).
pub const LAUNCHER_VARIABLES: [&str; 4] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"];

/// True when the environment holds one of [`LAUNCHER_VARIABLES`].
pub fn launched() -> bool {
    LAUNCHER_VARIABLES.iter().any(|v| std::env::var_os(v).is_some())
}

/// This process's place in an MPI job of several ranks. MPI is finalised
/// when it is dropped.
pub struct Cluster {
    /// Every rank of the job.
    pub world: SimpleCommunicator,
    /// This process's rank in `world`.
    pub rank: usize,
    /// The number of ranks.
    pub size: usize,
    /// This process's rank among the ranks on its host.
    pub local_rank: usize,
    /// The host's name, as MPI reports it.
    pub host: String,
    /// Finalises MPI on drop, after the communicators above.
    _universe: Universe,
}

impl Cluster {
    /// Joins the MPI job when an MPI launcher started this process and the
    /// job has several ranks; `None` otherwise (MPI is then finalised
    /// again, or never initialised).
    pub fn join() -> anyhow::Result<Option<Cluster>> {
        if !launched() {
            return Ok(None);
        }
        // Only the main thread calls MPI; the render threads never do.
        let (universe, _) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| anyhow!("internal: MPI was initialised twice"))?;
        let world = universe.world();
        if world.size() < 2 {
            return Ok(None);
        }
        let local_rank = world.split_shared(world.rank()).rank() as usize;
        Ok(Some(Cluster {
            rank: world.rank() as usize,
            size: world.size() as usize,
            local_rank,
            host: mpi::environment::processor_name().unwrap_or_else(|_| "an unnamed host".into()),
            world,
            _universe: universe,
        }))
    }

    /// True on rank 0, which writes the outputs.
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// "rank R on HOST", for reports and errors.
    pub fn name(&self) -> String {
        format!("rank {} on {}", self.rank, self.host)
    }
}
