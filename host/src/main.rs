//! The `wavepath` binary: parse the command line, run, print the error chain.

use anyhow::{Context, anyhow};
use clap::Parser;
use std::process::ExitCode;
use wavepath::bench::{self, BenchPlan};
use wavepath::cli::{Cli, Command, concrete_backend};
use wavepath::{backend::gpu::Gpu, ptx, report, verify};

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("wavepath: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Render(args) => {
            let request = args.to_request().map_err(|e| anyhow!(e))?;
            let summary = wavepath::render::run(&request)?;
            println!("{}", summary.line());
            if let Some(profile) = &summary.output.gpu {
                print!("{}", profile.table());
            }
        }
        Command::Verify(args) => {
            let backend = concrete_backend(args.backend).map_err(|e| anyhow!(e))?;
            let options = args.launch.options().map_err(|e| anyhow!(e))?;
            let report =
                verify::verify(&args.scene.scene, &args.scene.overrides(), backend, options)?;
            println!("{}", report.describe());
            if !report.passed() {
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Bench(args) => {
            let plan = BenchPlan {
                scene: args.scene.scene.clone(),
                overrides: args.scene.overrides(),
                backend: concrete_backend(args.backend).map_err(|e| anyhow!(e))?,
                blocks: args.blocks.clone(),
                samples_per_launch: args.samples_per_launch.clone(),
                tile: args.tile,
                repeat: args.repeat,
                warmup: args.warmup,
                threads: args.threads,
            };
            let rows = bench::run(&plan, |r| {
                eprintln!(
                    "{} {} spl {} rep {}: {:.3} ms",
                    r.backend, r.block, r.samples_per_launch, r.repetition, r.wall_ms
                )
            })?;
            print!("{}", bench::summary(&rows));
            if let Some(path) = &args.csv {
                report::write_csv(path, &rows)
                    .with_context(|| format!("{}: writing the bench CSV", path.display()))?;
            }
        }
        Command::GpuInfo => {
            for (arch, text) in ptx::PTX_MODULES {
                println!("embedded PTX: sm_{arch} ({} bytes)", text.len());
            }
            let gpu = Gpu::open(0)?;
            println!("GPU: {}", gpu.info().describe());
            let f = gpu.function(device::launch::MEGAKERNEL)?;
            for threads in [64, 128, 256, 512] {
                let k = gpu.kernel_info(device::launch::MEGAKERNEL, &f, threads)?;
                println!(
                    "{}: {} registers, {} B local, {} threads/block -> {} blocks/SM, occupancy {:.0}%",
                    k.name,
                    k.registers,
                    k.local_bytes,
                    threads,
                    k.blocks_per_multiprocessor,
                    100.0 * k.occupancy
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
