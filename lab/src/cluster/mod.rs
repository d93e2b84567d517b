//! Work over the ranks of an MPI launch (built with `--features mpi`):
//! one render (`mpirun -n N wavepath render …`), the samples of one image
//! split across processes on one or several hosts; and one experiment
//! (`mpirun -n N wavepath experiment …`), its configurations split across
//! them. Under a launcher every other command refuses to run.
//!
//! - [`launch`]: whether an MPI launcher started this process, and joining
//!   its job ([`Cluster`]);
//! - [`layout`]: which GPU a rank renders on (its rank within its host);
//! - [`wire`]: the messages the rest is built on (texts gathered to rank
//!   0 or to every rank, sums of integers at rank 0, texts sent from rank
//!   to rank);
//! - [`failure`]: every rank's outcome, agreed, and who failed;
//! - [`film`]: a render's films added up exactly at rank 0;
//! - [`render`]: `render` over the ranks;
//! - [`dispatch`]: which rank makes which configuration of an experiment,
//!   handed out by rank 0 as the ranks ask;
//! - [`experiment`]: `experiment` over the ranks, rank 0 writing the rows.
//!
//! Only rank 0 writes images, CSV files and reports; the other ranks print
//! nothing but errors.

pub mod dispatch;
pub mod experiment;
pub mod failure;
pub mod film;
pub mod launch;
pub mod layout;
pub mod render;
pub mod wire;

pub use launch::Cluster;
