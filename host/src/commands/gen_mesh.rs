//! `wavepath gen-mesh`: a subdivided, displaced icosphere as OBJ.

use super::outln;
use crate::cli::GenMeshArgs;
use crate::io::atomic_file;
use crate::scene::meshgen::DisplacedSphere;
use std::process::ExitCode;
use std::time::Instant;

/// Generates the mesh and writes it atomically.
pub fn run(args: &GenMeshArgs) -> anyhow::Result<ExitCode> {
    if !(0.0..0.5).contains(&args.amplitude) {
        anyhow::bail!("--amplitude must be in [0, 0.5), got {}", args.amplitude);
    }
    atomic_file::check::<&std::path::Path>(&args.out, &[])?;
    let start = Instant::now();
    let sphere = DisplacedSphere {
        subdivisions: args.subdivisions,
        amplitude: args.amplitude,
    };
    let mesh = sphere.mesh();
    let header = format!(
        "wavepath gen-mesh --subdivisions {} --amplitude {}\n{} vertices, {} triangles",
        args.subdivisions,
        args.amplitude,
        mesh.positions.len(),
        mesh.faces.len()
    );
    atomic_file::write(&args.out, mesh.to_obj(&header).as_bytes())?;
    outln!(
        "{}: {} vertices, {} triangles in {:.2} s",
        args.out.display(),
        mesh.positions.len(),
        mesh.faces.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
