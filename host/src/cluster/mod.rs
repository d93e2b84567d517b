//! One render over the ranks of an MPI launch (`mpirun -n N wavepath
//! render …`, built with `--features mpi`): the samples of one image split
//! across processes on one or several hosts. (An experiment over the ranks
//! is not built yet; under a launcher every other command refuses to run.)
//!
//! - [`launch`]: whether an MPI launcher started this process, and joining
//!   its job ([`Cluster`]);
//! - [`layout`]: which GPU a rank renders on (its rank within its host);
//! - [`wire`]: the collectives the rest is built on (texts gathered to
//!   rank 0 or to every rank, sums of integers at rank 0);
//! - [`failure`]: every rank's outcome, agreed, and who failed;
//! - [`film`]: a render's films added up exactly at rank 0;
//! - [`render`]: `render` over the ranks.
//!
//! Only rank 0 writes images, CSV files and reports; the other ranks print
//! nothing but errors.

pub mod failure;
pub mod film;
pub mod launch;
pub mod layout;
pub mod render;
pub mod wire;

pub use launch::Cluster;
