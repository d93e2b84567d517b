//! The `wavepath` binary: parse the command line, run, print the error chain.

use anyhow::{Context, anyhow};
use clap::Parser;
use device::kernels::all_entry_points;
use std::process::ExitCode;
use wavepath::bench;
use wavepath::cli::{Cli, Command, concrete_backend};
use wavepath::experiment::{self, runner, runner::RunOptions};
use wavepath::scene::meshgen::DisplacedSphere;
use wavepath::{atomic_file, backend::gpu::Gpu, interrupt, ptx, raycast, report, verify};

/// Writes to stdout, returning write errors (a closed pipe) instead of
/// panicking as `print!` does.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        write!(stdout, $($arg)*).and_then(|_| stdout.flush())?
    }};
}

/// `out!` with a newline.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, $($arg)*).and_then(|_| stdout.flush())?
    }};
}

/// The command line as typed, for manifests.
fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        // A reader that stops early (`| head`) is not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("wavepath: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    interrupt::install()?;
    match cli.command {
        Command::Render(args) => {
            let mut request = args.to_request().map_err(|e| anyhow!(e))?;
            request.stop = Some(interrupt::graceful(
                "stopping after the samples in flight; the image of the finished samples will be written",
            ));
            let summary = wavepath::render::run(&request)?;
            outln!("{}", summary.line());
            if let Some(profile) = &summary.output.gpu {
                out!("{}", profile.table());
            }
            if interrupt::requested() {
                eprintln!(
                    "wavepath: stopped by Ctrl-C after {} of {} samples per pixel; {} holds them",
                    summary.output.spp,
                    summary.spp,
                    summary.image.display()
                );
                return Ok(ExitCode::from(interrupt::EXIT_STATUS));
            }
        }
        Command::Verify(args) => {
            let backend = concrete_backend(args.backend).map_err(|e| anyhow!(e))?;
            let options = args.launch.options().map_err(|e| anyhow!(e))?;
            let report = verify::verify(&args.scene.scene, &args.scene.overrides(), backend, options)?;
            outln!("{}", report.describe());
            if !report.passed() {
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Bench(args) => {
            let plan = args.plan().map_err(|e| anyhow!(e))?;
            for path in [&args.csv, &args.launch_log].into_iter().flatten() {
                atomic_file::check(path, &[&plan.scene])?;
            }
            let config = plan.config(&command_line());
            let options = RunOptions {
                command: command_line(),
                keep_profiles: true,
                require_gpu: true,
                progress: false,
                ..RunOptions::default()
            };
            let result = runner::run(&config, &options)?;
            if result.failed() {
                for s in &result.manifest.study {
                    eprintln!("wavepath: {}: {}", plan.scene.display(), s.film_check);
                }
                return Ok(ExitCode::FAILURE);
            }
            out!("{}", bench::summary(&result));
            if let Some(path) = &args.csv {
                report::write_csv(path, &result.rows)
                    .with_context(|| format!("{}: writing the bench CSV", path.display()))?;
            }
            if let Some(path) = &args.launch_log {
                bench::write_best_launches(&result, path)?;
            }
        }
        Command::Experiment(args) => {
            let config = experiment::config::load(&args.config)?;
            if args.dry_run {
                out!("{}", runner::dry_run(&config, args.only.as_deref())?);
                return Ok(ExitCode::SUCCESS);
            }
            let dir = args.out_dir();
            let stop = interrupt::graceful("stopping after the render in flight; every finished row is kept");
            let options = RunOptions {
                out: Some(dir.clone()),
                only: args.only.clone(),
                resume: args.resume,
                allow_mixed: args.allow_mixed,
                progress: !args.quiet,
                command: command_line(),
                stop: Some(stop),
                ..RunOptions::default()
            };
            let outcome = runner::run(&config, &options)?;
            for s in &outcome.manifest.study {
                outln!(
                    "study {}: {} rows, {}; films {}",
                    s.name,
                    s.rows,
                    s.status,
                    s.film_check
                );
            }
            if let Some(o) = &outcome.manifest.overhead {
                outln!(
                    "runner overhead per GPU row: median {:.2}%, at most {:.2}% of the render call ({} rows)",
                    100.0 * o.median_fraction,
                    100.0 * o.max_fraction,
                    o.gpu_rows
                );
            }
            outln!(
                "wrote {}/runs.csv, kernels.csv and manifest.toml; `wavepath report {}` makes the tables and figures",
                dir.display(),
                dir.display()
            );
            if outcome.failed() {
                return Ok(ExitCode::FAILURE);
            }
            if outcome.interrupted() {
                eprintln!("wavepath: stopped by Ctrl-C; every finished row is kept; --resume continues");
                return Ok(ExitCode::from(interrupt::EXIT_STATUS));
            }
        }
        Command::Report(args) => {
            let written = experiment::report::write_report(&args.dir)?;
            outln!("wrote {}", written.markdown.display());
            for f in &written.figures {
                outln!("wrote {}", f.display());
            }
        }
        Command::GpuInfo => {
            for (arch, text) in ptx::PTX_MODULES {
                outln!("embedded PTX: sm_{arch} ({} bytes)", text.len());
            }
            let gpu = Gpu::open(0)?;
            outln!("GPU: {}", gpu.info().describe());
            for (name, threads) in all_entry_points().flat_map(|n| [64, 128, 256].map(|t| (n, t))) {
                let f = gpu.function(name)?;
                let k = gpu.kernel_info(name, &f, threads)?;
                let test_only = if device::kernels::fault::ENTRY_POINTS.contains(&name) {
                    " (test only: traps on purpose)"
                } else {
                    ""
                };
                outln!(
                    "{}{test_only}: {} registers, {} B local, {} threads/block -> {} blocks/SM, occupancy {:.0}%",
                    k.name,
                    k.registers,
                    k.local_bytes,
                    threads,
                    k.blocks_per_multiprocessor,
                    100.0 * k.occupancy
                );
            }
        }
        Command::Raycast(args) => {
            let gpu = Gpu::open(0).context("raycast times the GPU kernel; it needs a GPU")?;
            let overrides = args.scene.overrides();
            let scene = wavepath::render::load_scene(&args.scene.scene, &overrides)?;
            if let Some(path) = &args.csv {
                atomic_file::check(path, &scene.files)?;
            }
            wavepath::memory::check_available(
                &format!("{} rays", args.count),
                raycast::host_bytes(args.count),
                "cast fewer rays (--count)",
            )?;
            let (params, _) = wavepath::render::params_for(&scene, &overrides, device::scene::RenderView::Radiance);
            let rays = raycast::make_rays(&scene, &params, args.rays, args.count as usize);
            let rows = raycast::gpu_rows(&gpu, &scene, args.rays, &rays, &args.blocks, args.repeat)?;
            for r in &rows {
                outln!(
                    "{} {} {:?} rays, block {}: {:.3} ms, {:.3} G rays/s ({} regs, {} B local, occupancy {:.0}%)",
                    r.scene,
                    r.accel,
                    r.rays,
                    r.block,
                    r.kernel_ms,
                    r.rays_per_s / 1e9,
                    r.registers,
                    r.local_bytes,
                    100.0 * r.occupancy
                );
            }
            if let Some(path) = &args.csv {
                report::write_csv(path, &rows)
                    .with_context(|| format!("{}: writing the raycast CSV", path.display()))?;
            }
        }
        Command::GenMesh(args) => {
            if !(0.0..0.5).contains(&args.amplitude) {
                anyhow::bail!("--amplitude must be in [0, 0.5), got {}", args.amplitude);
            }
            atomic_file::check::<&std::path::Path>(&args.out, &[])?;
            let start = std::time::Instant::now();
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
        }
    }
    Ok(ExitCode::SUCCESS)
}
