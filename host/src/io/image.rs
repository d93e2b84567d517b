//! Image files: PNG, PPM or BMP by extension, written atomically (a
//! temporary file renamed into place, so a failed render never leaves half
//! a file). The film becomes an image in [`crate::render::tone`].

use crate::io::atomic_file;
use anyhow::{Context, bail};
use image::codecs::pnm::{PnmEncoder, PnmSubtype, SampleEncoding};
use image::{ExtendedColorType, ImageEncoder, ImageFormat, RgbImage};
use std::path::Path;

/// Bytes per pixel of the 8-bit image (and at most of its encoding).
pub const BYTES_PER_PIXEL: u64 = 3;

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

/// Writes `image` to `path` (format from the extension), atomically. A
/// `.ppm` is binary PPM (`P6`), which every PPM reader takes; the `image`
/// crate's default for the PNM family is PAM (`P7`), which they refuse.
pub fn write_image(path: &Path, image: &RgbImage) -> anyhow::Result<()> {
    let format = format_for(path)?;
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
    fn unknown_extension_is_refused_with_the_name() {
        let e = format_for(Path::new("out/x.jpg")).unwrap_err().to_string();
        assert!(e.contains("out/x.jpg") && e.contains(".png"), "{e}");
    }
}
