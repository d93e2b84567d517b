//! `wavepath compare`: an image's error against a reference, and FLIP's
//! heat map.

use super::outln;
use crate::cli::CompareArgs;
use renderer::io::atomic_file::{self, Output};
use renderer::io::image;
use renderer::render::compare::{REL_MSE_EPSILON, compare_files};
use std::process::ExitCode;

/// Prints the metrics and writes the heat map if asked for.
pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let outputs: Vec<Output> = args.heatmap.iter().map(|p| Output::new(p, "the heat map")).collect();
    atomic_file::check_outputs(&outputs, &[&args.test, &args.reference])?;
    if let Some(path) = &args.heatmap
        && !image::format_for(path)?.is_display()
    {
        anyhow::bail!(
            "{}: a heat map is an 8-bit image: name a {} file",
            path.display(),
            image::extension_list(image::OutputFormat::is_display)
        );
    }
    let c = compare_files(&args.test, &args.reference)?;
    let m = c.metrics;
    outln!("{} against {}:", args.test.display(), args.reference.display());
    outln!("  RMSE      {:.6e}", m.rmse);
    outln!("  relMSE    {:.6e}  (ε = {REL_MSE_EPSILON})", m.rel_mse);
    outln!("  MAE       {:.6e}", m.mae);
    outln!("  FLIP      {:.6}  (LDR-FLIP mean, the images as displayed)", m.flip);
    if let Some(path) = &args.heatmap {
        image::write_image(path, &c.heatmap)?;
        outln!("heat map: {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
