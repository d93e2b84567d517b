//! `wavepath compare-seeds`: two renderers' linear images of one scene,
//! each rendered with two seeds, compared against the noise the seeds
//! show.
//!
//! For the whole image and for regions of smallpt's
//! Cornell box (fractions of the image, top-left origin), both means (the
//! channels' average), B's difference from A in percent and in standard
//! errors of that difference, and the noise-normalised RMS error: the RMS
//! of the per-pixel difference of the means over the RMS that the
//! sampling noise alone predicts, estimated from each renderer's two
//! seeds. About 1 when the images differ only by noise.
//!
//! The row "without the light" leaves out the pixels whose mean is above 1
//! in either image (the light and its edge, where smallpt's tent filter
//! over sub-pixels and a box filter differ by far more than noise). A
//! figure with nothing to divide by (a mean of 0, no noise, no pixels) is
//! n/a.

use crate::io::image::{self as image_io, FloatImage};
use anyhow::bail;
use std::path::Path;

/// The regions of `cornell_smallpt` at any size: (name, x0, y0, x1, y1),
/// fractions of the image from the top left.
pub const CORNELL_REGIONS: [(&str, f64, f64, f64, f64); 6] = [
    ("left wall", 0.02, 0.20, 0.15, 0.60),
    ("right wall", 0.85, 0.20, 0.98, 0.60),
    ("back wall", 0.35, 0.25, 0.60, 0.50),
    ("ceiling", 0.30, 0.00, 0.70, 0.07),
    ("floor", 0.35, 0.86, 0.55, 0.98),
    ("caustic", 0.64, 0.90, 0.76, 0.97),
];

/// One renderer's two seeds' images, as channels (RGB interleaved, rows
/// from the top).
struct SeedPair {
    /// The first seed's channels.
    first: Vec<f64>,
    /// The second seed's channels.
    second: Vec<f64>,
}

impl SeedPair {
    /// The mean of both seeds at channel `i`.
    fn mean(&self, i: usize) -> f64 {
        (self.first[i] + self.second[i]) / 2.0
    }

    /// The variance of that mean at channel `i`, from the seeds' spread.
    fn variance(&self, i: usize) -> f64 {
        (self.first[i] - self.second[i]).powi(2) / 4.0
    }
}

/// The image `path` as linear channels, refused unless it holds linear
/// radiance (PFM or OpenEXR).
fn read_linear(path: &Path) -> anyhow::Result<FloatImage> {
    let image = image_io::read(path)?;
    if !image.linear {
        bail!(
            "{}: holds 8-bit display values; expected linear radiance ({})",
            path.display(),
            image_io::extension_list(image_io::OutputFormat::is_linear)
        );
    }
    Ok(image)
}

/// The comparison's table (a header line, then one line a region) of
/// renderer A's seeds `a` against renderer B's seeds `b`, four images of
/// one size.
pub fn compare_seeds(a: [&Path; 2], b: [&Path; 2]) -> anyhow::Result<String> {
    let paths = [a[0], a[1], b[0], b[1]];
    let images = paths.map(read_linear);
    let mut read = Vec::new();
    for image in images {
        read.push(image?);
    }
    let (width, height) = (read[0].width, read[0].height);
    for (path, image) in paths.iter().zip(&read).skip(1) {
        if (image.width, image.height) != (width, height) {
            bail!(
                "{} is {}x{} and {} {width}x{height}; expected four images of one size",
                path.display(),
                image.width,
                image.height,
                paths[0].display()
            );
        }
    }
    let channels = |i: usize| -> Vec<f64> { read[i].pixels.iter().flatten().map(|&v| f64::from(v)).collect() };
    let a = SeedPair {
        first: channels(0),
        second: channels(1),
    };
    let b = SeedPair {
        first: channels(2),
        second: channels(3),
    };
    let count = a.first.len();
    let bright = |pixel: usize| (0..3).any(|c| a.mean(3 * pixel + c).max(b.mean(3 * pixel + c)) > 1.0);
    let dark: Vec<usize> = (0..count).filter(|i| !bright(i / 3)).collect();
    let mut rows = vec![
        ("whole image", region(width, height, (0.0, 0.0, 1.0, 1.0))),
        ("without the light", dark),
    ];
    for (name, x0, y0, x1, y1) in CORNELL_REGIONS {
        rows.push((name, region(width, height, (x0, y0, x1, y1))));
    }
    let mut table = format!(
        "{:<17} {:>7} {:>9} {:>9} {:>8} {:>7} {:>7}\n",
        "region", "pixels", "A mean", "B mean", "B - A", "in SE", "NN-RMS"
    );
    for (name, channels) in rows {
        table += &figures(name, &channels, &a, &b);
        table.push('\n');
    }
    Ok(table)
}

/// The channel indices of a rectangle (x0, y0, x1, y1) given as fractions
/// of a `width` × `height` image; at least one pixel wide and high.
fn region(width: u32, height: u32, (x0, y0, x1, y1): (f64, f64, f64, f64)) -> Vec<usize> {
    let span = |from: f64, to: f64, side: u32| {
        let start = (from * side as f64) as usize;
        start..(start + 1).max((to * side as f64) as usize)
    };
    let xs = span(x0, x1, width);
    let mut out = Vec::new();
    for y in span(y0, y1, height) {
        for x in xs.clone() {
            out.extend((0..3).map(|c| 3 * (y * width as usize + x) + c));
        }
    }
    out
}

/// One row of the table: the region `name` over the channels `idx`.
fn figures(name: &str, idx: &[usize], a: &SeedPair, b: &SeedPair) -> String {
    let n = idx.len();
    if n == 0 {
        return format!("{name:<17} {:>7} (no pixels)", 0);
    }
    let (mut sum_a, mut sum_b, mut var_a, mut var_b, mut diff) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &i in idx {
        sum_a += a.mean(i);
        sum_b += b.mean(i);
        var_a += a.variance(i);
        var_b += b.variance(i);
    }
    for &i in idx {
        diff += (a.mean(i) - b.mean(i)).powi(2);
    }
    let (mean_a, mean_b) = (sum_a / n as f64, sum_b / n as f64);
    let noise = var_a + var_b;
    let se = noise.sqrt() / n as f64;
    let change = if mean_a != 0.0 {
        format!("{:+.2}%", 100.0 * (mean_b / mean_a - 1.0))
    } else {
        "n/a".into()
    };
    let in_se = if se != 0.0 {
        format!("{:+.2}", (mean_b - mean_a) / se)
    } else {
        "n/a".into()
    };
    let normalised = if noise > 0.0 {
        format!("{:.3}", (diff / noise).sqrt())
    } else {
        "n/a".into()
    };
    format!(
        "{name:<17} {:>7} {mean_a:>9.5} {mean_b:>9.5} {change:>8} {in_se:>7} {normalised:>7}",
        n / 3
    )
}
