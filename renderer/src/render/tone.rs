//! From a fixed-point film to an 8-bit image (the scene's tone mapping for
//! radiance, linear for the debug views, depth scaled to the farthest hit),
//! or to linear floats for a float map.

use crate::io::image::BYTES_PER_PIXEL;
use crate::scene::{ToneCurve, ToneMapping};
use anyhow::Context;
use device::film::FixedRgb;
use device::scene::{RenderParams, RenderView};
use image::RgbImage;

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

/// The film's mean radiance per pixel, linear (for float outputs).
pub fn linear(film: &[FixedRgb], spp: u32) -> anyhow::Result<Vec<[f32; 3]>> {
    let mut out = crate::system::memory::zeroed_vec::<[f32; 3]>("the float image", film.len())?;
    for (o, p) in out.iter_mut().zip(film) {
        let c = p.mean(spp);
        *o = [c.r, c.g, c.b];
    }
    Ok(out)
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
}
