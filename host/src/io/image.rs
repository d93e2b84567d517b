//! From a fixed-point film to an image file: tone mapping, debug-view
//! normalisation, and PNG/PPM/BMP output written atomically (a temporary file
//! renamed into place, so a failed render never leaves half a file).

use crate::io::atomic_file;
use crate::scene::{ToneCurve, ToneMapping};
use anyhow::{Context, bail};
use device::film::FixedRgb;
use device::scene::{RenderParams, RenderView};
use image::{ImageFormat, RgbImage};
use std::path::Path;

/// Bytes per pixel of the 8-bit image (and at most of its encoding).
pub const BYTES_PER_PIXEL: u64 = 3;

fn apply_curve(curve: ToneCurve, x: f32) -> f32 {
    match curve {
        ToneCurve::Clamp => x,
        ToneCurve::Reinhard => x / (1.0 + x),
        ToneCurve::Aces => (x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14),
    }
}

/// Display value in [0, 255] of one channel of scene radiance.
pub fn display_byte(x: f32, tone: &ToneMapping) -> u8 {
    let v = apply_curve(tone.curve, x.max(0.0) * tone.exposure).clamp(0.0, 1.0);
    (v.powf(1.0 / tone.gamma) * 255.0 + 0.5) as u8
}

/// Converts a film of `spp` samples per pixel to an 8-bit image. Radiance
/// is tone-mapped; normals and albedo are shown linearly; depth is scaled
/// so the farthest hit is white.
pub fn to_image(film: &[FixedRgb], spp: u32, params: &RenderParams, tone: &ToneMapping) -> anyhow::Result<RgbImage> {
    let linear = ToneMapping {
        exposure: 1.0,
        curve: ToneCurve::Clamp,
        gamma: 1.0,
    };
    let (tone, scale) = match params.view {
        RenderView::Radiance => (*tone, 1.0),
        RenderView::Normals | RenderView::Albedo => (linear, 1.0),
        RenderView::Depth => {
            let far = film.iter().map(|p| p.mean(spp).r).fold(0.0f32, f32::max);
            (linear, if far > 0.0 { 1.0 / far } else { 1.0 })
        }
    };
    let (width, height) = (params.width, params.height);
    let mut bytes = crate::system::memory::zeroed_vec::<u8>("the image", film.len() * BYTES_PER_PIXEL as usize)?;
    for (px, p) in bytes.chunks_exact_mut(BYTES_PER_PIXEL as usize).zip(film) {
        let c = p.mean(spp);
        px.copy_from_slice(&[c.r, c.g, c.b].map(|c| display_byte(c * scale, &tone)));
    }
    RgbImage::from_raw(width, height, bytes).context("internal: the film does not match the image size")
}

/// The output format implied by a file name.
pub fn format_for(path: &Path) -> anyhow::Result<ImageFormat> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    Ok(match ext.as_deref() {
        Some("png") => ImageFormat::Png,
        Some("ppm") => ImageFormat::Pnm,
        Some("bmp") => ImageFormat::Bmp,
        _ => bail!(
            "{}: unknown image format (expected a .png, .ppm or .bmp file name)",
            path.display()
        ),
    })
}

/// Writes `image` to `path` (format from the extension), atomically.
pub fn write_image(path: &Path, image: &RgbImage) -> anyhow::Result<()> {
    let format = format_for(path)?;
    let mut encoded = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut encoded, format)
        .with_context(|| format!("{}: cannot encode the image", path.display()))?;
    atomic_file::write(path, encoded.get_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_and_curves_map_as_documented() {
        let t = ToneMapping {
            exposure: 1.0,
            curve: ToneCurve::Clamp,
            gamma: 2.0,
        };
        assert_eq!(display_byte(0.25, &t), 128); // sqrt(0.25) = 0.5
        assert_eq!(display_byte(4.0, &t), 255);
        assert_eq!(display_byte(-1.0, &t), 0);
        let r = ToneMapping {
            curve: ToneCurve::Reinhard,
            gamma: 1.0,
            ..t
        };
        assert_eq!(display_byte(1.0, &r), 128); // 1 / (1 + 1)
    }

    #[test]
    fn unknown_extension_is_refused_with_the_name() {
        let e = format_for(Path::new("out/x.jpg")).unwrap_err().to_string();
        assert!(e.contains("out/x.jpg") && e.contains(".png"), "{e}");
    }
}
