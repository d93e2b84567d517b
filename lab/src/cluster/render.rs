//! `render` over the ranks of an MPI job: rank `r` of `N` renders the
//! sample indices `r·spp/N .. (r+1)·spp/N` of the whole image (on its GPU,
//! [`super::layout`], or the CPU) in one render, as one process renders
//! (split in chunks only over several `--devices`); the ranks agree that
//! all succeeded ([`super::failure`]), their films are added up at rank 0
//! ([`super::film`]), and rank 0 writes the image.
//!
//! A stop request (Ctrl-C, which the launcher passes on to every rank) is
//! seen by each rank as one process sees it: every rank keeps the samples it
//! finished, a prefix of its own range, and rank 0 writes their image. Its
//! sample count is the sum over the ranks; every pixel holds the same
//! samples, so it is a correct image of that many samples, but not the
//! image of a one-process render asked for that many (whose samples
//! would be `0..n`).

use super::Cluster;
use super::failure::agree;
use super::film;
use super::layout;
use renderer::render::{self, RenderRequest, RenderSummary, UnwrittenRender};

/// Renders `request` over the ranks of `cluster`: its summary at rank 0
/// (the image written), `None` at the others.
pub fn run(cluster: &Cluster, request: &RenderRequest) -> anyhow::Result<Option<RenderSummary>> {
    let mut request = request.clone();
    request.devices = layout::devices(request.devices.as_ref(), request.backend, cluster.local_rank);
    request.progress &= cluster.is_root();
    let made = if request.launch_log.is_some() {
        Err(anyhow::anyhow!(
            "--launch-log records the launches of one GPU in one process; render without mpirun to log them"
        ))
    } else {
        render::make(&request, |spp| layout::samples(spp, cluster.rank, cluster.size))
    };
    let made = agree(cluster, made, |m| {
        format!("a {}x{} image of {} spp", m.params.width, m.params.height, m.spp)
    })?;
    let Some(merged) = film::reduce(cluster, made.split)? else {
        return Ok(None);
    };
    if let Some(n) = &made.note {
        eprintln!("wavepath: {n}");
    }
    render::write(&request, UnwrittenRender { split: merged, ..made }).map(Some)
}
