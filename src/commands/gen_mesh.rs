//! `wavepath gen-mesh`: a subdivided, displaced icosphere as OBJ. A first
//! Ctrl-C or SIGTERM stops it within milliseconds with nothing written,
//! during the file's write as before it; the file appears whole or not at
//! all.

use super::outln;
use crate::cli::GenMeshArgs;
use renderer::io::atomic_file::{self, Output, Written};
use renderer::scene::meshgen::DisplacedSphere;
use renderer::system::interrupt;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Generates the mesh and writes it atomically.
pub fn run(args: &GenMeshArgs) -> anyhow::Result<ExitCode> {
    if !(0.0..0.5).contains(&args.amplitude) {
        anyhow::bail!("--amplitude must be in [0, 0.5), got {}", args.amplitude);
    }
    atomic_file::check_outputs::<&Path>(&[Output::new(&args.out, "the mesh")], &[])?;
    let stop = interrupt::graceful("stopping; no mesh file is written unless it is already whole");
    let stopped = || stop.load(Ordering::SeqCst);
    let start = Instant::now();
    let sphere = DisplacedSphere {
        subdivisions: args.subdivisions,
        amplitude: args.amplitude,
    };
    let Some(mesh) = sphere.mesh_unless(&stopped) else {
        return Ok(nothing_written(&args.out));
    };
    let header = format!(
        "wavepath gen-mesh --subdivisions {} --amplitude {}\n{} vertices, {} triangles",
        args.subdivisions,
        args.amplitude,
        mesh.positions.len(),
        mesh.faces.len()
    );
    let Some(text) = mesh.to_obj_unless(&header, &stopped) else {
        return Ok(nothing_written(&args.out));
    };
    if atomic_file::write_unless(&args.out, text.as_bytes(), &stopped)? == Written::Abandoned {
        return Ok(nothing_written(&args.out));
    }
    outln!(
        "{}: {} vertices, {} triangles in {:.2} s",
        args.out.display(),
        mesh.positions.len(),
        mesh.faces.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Says that a signal stopped the command before `out` was written.
fn nothing_written(out: &Path) -> ExitCode {
    eprintln!(
        "wavepath: gen-mesh stopped by a signal; {} was not written",
        out.display()
    );
    ExitCode::from(interrupt::exit_status())
}
