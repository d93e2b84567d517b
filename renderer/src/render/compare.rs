//! `wavepath compare`: how far a test image is from a reference. Pixel
//! metrics over every channel (RMSE, relative MSE, MAE) and the perceptual
//! FLIP metric (Andersson et al. 2020, through the `nv-flip` crate's
//! binding of NVIDIA's implementation), with FLIP's error map as a heat map;
//! and two films compared as they leave a render: by hash, bit for bit
//! ([`film_hash`]), and by relative MSE ([`film_rel_mse`]), the fast
//! arithmetic's check against the CPU.

use crate::io::image::{self as image_io, FloatImage, ImageHeader, OutputFormat};
use crate::settings::arithmetic::FAST_NOISE_FRACTION;
use crate::system::fingerprint::fingerprint;
use anyhow::bail;
use device::film::FixedRgb;
use device::scene::RenderParams;
use image::RgbImage;
use std::path::Path;

/// The ε of relative MSE (Rousselle et al. 2011): keeps dark pixels of
/// the reference from dominating.
pub const REL_MSE_EPSILON: f64 = 0.01;

/// The display gamma with which linear radiance is shown to FLIP, which
/// compares images as displayed (values clamped to [0, 1]).
pub const DISPLAY_GAMMA: f32 = 2.2;

/// The error of a test image against a reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metrics {
    /// Root mean squared error over every channel of every pixel.
    pub rmse: f64,
    /// Mean of (test − reference)² / (reference² + ε) over every channel.
    pub rel_mse: f64,
    /// Mean absolute error over every channel.
    pub mae: f64,
    /// Mean FLIP error over the pixels (0: identical as seen; 1: most
    /// different), at FLIP's default viewing distance.
    pub flip: f64,
}

/// The comparison of two images: the metrics and FLIP's per-pixel errors.
pub struct Comparison {
    /// The metrics.
    pub metrics: Metrics,
    /// FLIP's error map, as a magma heat map.
    pub heatmap: RgbImage,
}

/// Reads both files and compares `test` against `reference`. Both must
/// have the same size and both be linear radiance or both display values,
/// which their headers say before either is decoded.
pub fn compare_files(test: &Path, reference: &Path) -> anyhow::Result<Comparison> {
    let (a, b) = (image_io::read_header(test)?, image_io::read_header(reference)?);
    if (a.width, a.height) != (b.width, b.height) {
        bail!(
            "{} is {}x{} but the reference {} is {}x{}: compare images of one size",
            test.display(),
            a.width,
            a.height,
            reference.display(),
            b.width,
            b.height
        );
    }
    if a.linear != b.linear {
        let kind = |i: &ImageHeader| {
            if i.linear {
                "linear radiance"
            } else {
                "8-bit display values"
            }
        };
        bail!(
            "{} holds {} but {} holds {}: compare like with like (write both as {}, or both as {})",
            test.display(),
            kind(&a),
            reference.display(),
            kind(&b),
            image_io::extension_list(OutputFormat::is_linear),
            image_io::extension_list(OutputFormat::is_display)
        );
    }
    Ok(compare(&image_io::read(test)?, &image_io::read(reference)?))
}

/// Compares two images of one size.
pub fn compare(test: &FloatImage, reference: &FloatImage) -> Comparison {
    let channels = (test.pixels.len() * 3).max(1) as f64;
    let (mut squared, mut relative, mut absolute) = (0.0, 0.0, 0.0);
    for (t, r) in test.pixels.iter().flatten().zip(reference.pixels.iter().flatten()) {
        let (t, r) = (f64::from(*t), f64::from(*r));
        let d = t - r;
        squared += d * d;
        relative += relative_squared(t, r);
        absolute += d.abs();
    }
    let (flip, heatmap) = flip(test, reference);
    Comparison {
        metrics: Metrics {
            rmse: (squared / channels).sqrt(),
            rel_mse: relative / channels,
            mae: absolute / channels,
            flip,
        },
        heatmap,
    }
}

/// A film's fingerprint: FNV-1a over its 64-bit words (equal films, equal
/// hashes).
pub fn film_hash(film: &[FixedRgb]) -> String {
    fingerprint(film.iter().flat_map(|p| [p.r, p.g, p.b]))
}

/// How a fast-arithmetic film compares with the CPU's exact film of the
/// same samples, and with the Monte Carlo noise: the exact film of the
/// next seed against the exact one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FastAgreement {
    /// Relative MSE of the fast film against the exact one.
    pub rel_mse: f64,
    /// Relative MSE of the exact film of the next seed against the exact one.
    pub noise_rel_mse: f64,
    /// Pixels whose fast and exact sums differ.
    pub differing_pixels: usize,
}

impl FastAgreement {
    /// The settings of the exact render the noise is measured with: those
    /// of `params`, at the next seed.
    pub fn noise_params(params: RenderParams) -> RenderParams {
        RenderParams {
            seed: params.seed.wrapping_add(1),
            ..params
        }
    }

    /// Compares `fast` with `exact`, and `next_seed` (the exact film of the
    /// next seed) with `exact`, every film a sum of `spp` samples per pixel.
    pub fn measure(fast: &[FixedRgb], exact: &[FixedRgb], next_seed: &[FixedRgb], spp: u32) -> Self {
        FastAgreement {
            rel_mse: film_rel_mse(fast, exact, spp),
            noise_rel_mse: film_rel_mse(next_seed, exact, spp),
            differing_pixels: fast.iter().zip(exact).filter(|(a, b)| a != b).count(),
        }
    }

    /// The fast film's distance as a fraction of the noise's.
    pub fn noise_fraction(&self) -> f64 {
        if self.rel_mse == 0.0 {
            0.0
        } else {
            self.rel_mse / self.noise_rel_mse
        }
    }

    /// True within [`FAST_NOISE_FRACTION`] of the noise.
    pub fn within_bound(&self) -> bool {
        self.noise_fraction() <= FAST_NOISE_FRACTION
    }

    /// One line for a summary or a refusal.
    pub fn describe(&self) -> String {
        format!(
            "relative MSE {:.3e} against the CPU's exact image, where the next seed's exact image is {:.3e} from \
             it: {:.3} of the noise (bound {FAST_NOISE_FRACTION}); {} pixels differ",
            self.rel_mse,
            self.noise_rel_mse,
            self.noise_fraction(),
            self.differing_pixels
        )
    }
}

/// One channel's term of the relative MSE: (t − r)² / (r² + ε).
fn relative_squared(t: f64, r: f64) -> f64 {
    (t - r) * (t - r) / (r * r + REL_MSE_EPSILON)
}

/// The relative MSE of film `test` against film `reference` (the same
/// pixels, each a fixed-point sum of `spp` samples), over every channel of
/// the pixels' means: how a fast-arithmetic image is held to the exact one.
pub fn film_rel_mse(test: &[FixedRgb], reference: &[FixedRgb], spp: u32) -> f64 {
    let channels = (test.len() * 3).max(1) as f64;
    let sum: f64 = test
        .iter()
        .zip(reference)
        .map(|(t, r)| {
            let (t, r) = (t.mean(spp), r.mean(spp));
            [(t.r, r.r), (t.g, r.g), (t.b, r.b)]
                .into_iter()
                .map(|(t, r)| relative_squared(f64::from(t), f64::from(r)))
                .sum::<f64>()
        })
        .sum();
    sum / channels
}

/// FLIP's mean error and its error map as a magma heat map.
fn flip(test: &FloatImage, reference: &FloatImage) -> (f64, RgbImage) {
    let (w, h) = (test.width, test.height);
    let error = nv_flip::flip(
        nv_flip::FlipImageRgb8::with_data(w, h, &displayed(reference)),
        nv_flip::FlipImageRgb8::with_data(w, h, &displayed(test)),
        nv_flip::DEFAULT_PIXELS_PER_DEGREE,
    );
    let mean = nv_flip::FlipPool::from_image(&error).mean();
    let colours = error.apply_color_lut(&nv_flip::magma_lut()).to_vec();
    let heatmap = RgbImage::from_raw(w, h, colours).unwrap_or_else(|| RgbImage::new(w, h));
    (f64::from(mean), heatmap)
}

/// The 8-bit values an image is displayed with: linear radiance clamped to
/// [0, 1] and encoded with [`DISPLAY_GAMMA`]; display values as they are.
fn displayed(image: &FloatImage) -> Vec<u8> {
    let encode = |v: f32| {
        let v = v.clamp(0.0, 1.0);
        let v = if image.linear { v.powf(1.0 / DISPLAY_GAMMA) } else { v };
        (v * 255.0).round() as u8
    };
    image.pixels.iter().flatten().map(|&v| encode(v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(pixels: Vec<[f32; 3]>, width: u32) -> FloatImage {
        FloatImage {
            width,
            height: pixels.len() as u32 / width,
            pixels,
            linear: true,
        }
    }

    #[test]
    fn hand_worked_metrics() {
        // Test: one black and one white pixel; reference: two white ones.
        // Three of six channels differ by 1: MSE 0.5, MAE 0.5, and relative
        // MSE 3 · 1/(1 + 0.01) / 6 = 0.49505.
        let test = image(vec![[0.0; 3], [1.0; 3]], 2);
        let reference = image(vec![[1.0; 3], [1.0; 3]], 2);
        let m = compare(&test, &reference).metrics;
        assert!((m.rmse - 0.5f64.sqrt()).abs() < 1e-12, "{m:?}");
        assert!((m.mae - 0.5).abs() < 1e-12, "{m:?}");
        assert!((m.rel_mse - 0.5 / 1.01).abs() < 1e-12, "{m:?}");
        assert!(m.flip > 0.5, "black against white is far apart as seen: {m:?}");
    }

    #[test]
    fn a_films_relative_mse_is_that_of_its_pixel_means() {
        // Two pixels of 4 samples: means (1, 1, 1) and (0.5, 0.5, 0.5)
        // against (1, 1, 1) and (1, 1, 1): three channels off by 0.5, so
        // 3 · 0.25 / 1.01 / 6.
        let sum = |v: f32| FixedRgb::from_radiance(device::math::Rgb::new(v, v, v) * 4.0);
        let reference = [sum(1.0), sum(1.0)];
        let test = [sum(1.0), sum(0.5)];
        let e = film_rel_mse(&test, &reference, 4);
        assert!((e - 0.125 / 1.01).abs() < 1e-9, "{e}");
        assert_eq!(film_rel_mse(&reference, &reference, 4), 0.0);
    }

    #[test]
    fn a_fast_film_is_held_to_a_fraction_of_the_noise() {
        let sum = |v: f32| FixedRgb::from_radiance(device::math::Rgb::new(v, v, v));
        let exact = [sum(1.0), sum(1.0)];
        // The next seed is off by 1 in one pixel: relative MSE 0.5 / 1.01.
        let next = [sum(1.0), sum(0.0)];
        let near = FastAgreement::measure(&[sum(1.0), sum(0.75)], &exact, &next, 1);
        assert!((near.noise_fraction() - 0.0625).abs() < 1e-9, "{near:?}");
        assert!(near.within_bound() && near.differing_pixels == 1);
        let far = FastAgreement::measure(&[sum(0.0), sum(0.0)], &exact, &next, 1);
        assert!(
            (far.noise_fraction() - 2.0).abs() < 1e-9 && !far.within_bound(),
            "{far:?}"
        );
        // With no noise to measure against, only the exact film itself passes.
        let same = FastAgreement::measure(&exact, &exact, &exact, 1);
        assert!(same.within_bound() && same.differing_pixels == 0);
        assert!(!FastAgreement::measure(&next, &exact, &exact, 1).within_bound());
    }

    #[test]
    fn an_image_against_itself_has_no_error() {
        let a = image((0..64).map(|i| [i as f32 / 64.0, 0.5, 2.0]).collect(), 8);
        let c = compare(&a, &a);
        assert_eq!(
            c.metrics,
            Metrics {
                rmse: 0.0,
                rel_mse: 0.0,
                mae: 0.0,
                flip: 0.0
            }
        );
        assert_eq!(c.heatmap.dimensions(), (8, 8));
    }

    #[test]
    fn relative_mse_weighs_dark_reference_pixels_more() {
        // The same absolute error of 0.1 costs 0.01 / (0.01 + 0.01) = 0.5
        // against a reference of 0.1, and 0.01 / (100 + 0.01) against 10.
        let dark = compare(&image(vec![[0.2; 3]], 1), &image(vec![[0.1; 3]], 1)).metrics;
        let bright = compare(&image(vec![[10.1; 3]], 1), &image(vec![[10.0; 3]], 1)).metrics;
        assert!((dark.rel_mse - 0.5).abs() < 1e-6, "{dark:?}");
        assert!(
            bright.rel_mse < 1e-3 && (bright.mae - dark.mae).abs() < 1e-5,
            "{bright:?}"
        );
    }
}
