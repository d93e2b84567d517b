//! Image files, written atomically (a temporary file renamed into place, so
//! a failed render never leaves half a file): PNG, PPM or BMP of the
//! tone-mapped image ([`crate::render::tone`]), or PFM of the linear
//! radiance, by extension.

use crate::io::atomic_file;
use anyhow::{Context, bail};
use image::codecs::pnm::{PnmEncoder, PnmSubtype, SampleEncoding};
use image::{ExtendedColorType, ImageEncoder, ImageFormat, RgbImage};
use std::path::Path;

/// Bytes per pixel of the 8-bit image (and at most of its encoding).
pub const BYTES_PER_PIXEL: u64 = 3;

/// What an output file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// The tone-mapped 8-bit image in this format.
    Display(ImageFormat),
    /// Linear radiance (the film's mean per pixel) as a portable float map.
    LinearPfm,
}

/// The output format implied by a file name.
pub fn format_for(path: &Path) -> anyhow::Result<OutputFormat> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    Ok(match ext.as_deref() {
        Some("png") => OutputFormat::Display(ImageFormat::Png),
        Some("ppm") => OutputFormat::Display(ImageFormat::Pnm),
        Some("bmp") => OutputFormat::Display(ImageFormat::Bmp),
        Some("pfm") => OutputFormat::LinearPfm,
        _ => bail!(
            "{}: unknown image format (expected a .png, .ppm, .bmp or .pfm file name)",
            path.display()
        ),
    })
}

/// Writes linear RGB `pixels` (rows top to bottom) of a `width`-wide image
/// to `path` as a PFM file (little-endian `f32`, rows bottom to top, as the
/// format has them), atomically.
pub fn write_pfm(path: &Path, width: u32, pixels: &[[f32; 3]]) -> anyhow::Result<()> {
    let height = pixels.len() / width.max(1) as usize;
    let header = format!("PF\n{width} {height}\n-1.0\n");
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(header.len() + pixels.len() * 12)
        .map_err(|_| anyhow::anyhow!("{}: cannot allocate the float image", path.display()))?;
    bytes.extend_from_slice(header.as_bytes());
    for row in pixels.chunks_exact(width as usize).rev() {
        for channel in row.iter().flatten() {
            bytes.extend_from_slice(&channel.to_le_bytes());
        }
    }
    atomic_file::write(path, &bytes)
}

/// Writes `image` to `path` (a display format from the extension),
/// atomically. A `.ppm` is binary PPM (`P6`), which every PPM reader takes;
/// the `image` crate's default for the PNM family is PAM (`P7`), which they
/// refuse.
pub fn write_image(path: &Path, image: &RgbImage) -> anyhow::Result<()> {
    let OutputFormat::Display(format) = format_for(path)? else {
        bail!(
            "{}: a float map holds linear radiance, not an 8-bit image",
            path.display()
        );
    };
    let mut encoded = std::io::Cursor::new(Vec::new());
    let result = match format {
        ImageFormat::Pnm => PnmEncoder::new(&mut encoded)
            .with_subtype(PnmSubtype::Pixmap(SampleEncoding::Binary))
            .write_image(image.as_raw(), image.width(), image.height(), ExtendedColorType::Rgb8),
        _ => image.write_to(&mut encoded, format),
    };
    result.with_context(|| format!("{}: cannot encode the image", path.display()))?;
    atomic_file::write(path, encoded.get_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ppm_is_binary_ppm_that_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.ppm");
        let image = RgbImage::from_fn(3, 2, |x, y| image::Rgb([x as u8 * 80, y as u8 * 200, 7]));
        write_image(&path, &image).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let header = b"P6\n3 2 255\n";
        assert!(bytes.starts_with(header), "{:?}", &bytes[..12]);
        assert_eq!(bytes.len(), header.len() + 3 * 2 * 3);
        assert_eq!(image::open(&path).unwrap().to_rgb8(), image);
    }

    #[test]
    fn pfm_holds_linear_floats_bottom_row_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.pfm");
        // Two rows of two pixels, top row first.
        let pixels = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.5, 0.0, -1.0], [1e6, 0.25, 0.5]];
        write_pfm(&path, 2, &pixels).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let header = b"PF\n2 2\n-1.0\n";
        assert!(bytes.starts_with(header));
        let floats: Vec<f32> = bytes[header.len()..]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(floats, [7.5, 0.0, -1.0, 1e6, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn unknown_extension_is_refused_with_the_name() {
        let e = format_for(Path::new("out/x.jpg")).unwrap_err().to_string();
        assert!(e.contains("out/x.jpg") && e.contains(".png"), "{e}");
    }
}
