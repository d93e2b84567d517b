//! Image files: PNG, PPM or BMP by extension, written atomically (a
//! temporary file renamed into place, so a failed render never leaves half
//! a file). The film becomes an image in [`crate::render::tone`].

use crate::io::atomic_file;
use anyhow::{Context, bail};
use image::{ImageFormat, RgbImage};
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
    fn unknown_extension_is_refused_with_the_name() {
        let e = format_for(Path::new("out/x.jpg")).unwrap_err().to_string();
        assert!(e.contains("out/x.jpg") && e.contains(".png"), "{e}");
    }
}
