//! Image files, written atomically (a temporary file renamed into place, so
//! a failed render never leaves half a file): PNG, PPM or BMP of the
//! tone-mapped image ([`crate::render::tone`]), or PFM or OpenEXR of the
//! linear radiance, by extension; and images read back as floats for
//! `compare` and an experiment's reference (their headers alone first, to
//! compare sizes), every pixel checked ([`check_pixels`], which the scene's
//! texture loader shares).

use crate::io::{atomic_file, input_file};
use crate::settings::choice::prose_list;
use anyhow::{Context, anyhow, bail};
use image::codecs::pnm::{PnmEncoder, PnmSubtype, SampleEncoding};
use image::{ExtendedColorType, ImageEncoder, ImageFormat, Rgb32FImage, RgbImage};
use std::io::Read as _;
use std::path::Path;

/// Bytes per pixel of the 8-bit image (and at most of its encoding).
pub const BYTES_PER_PIXEL: u64 = 3;

/// What an output file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// The tone-mapped 8-bit image in this format.
    Display(ImageFormat),
    /// Linear radiance (the film's mean per pixel) as 32-bit floats.
    Linear(LinearFormat),
}

/// A file format of linear radiance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinearFormat {
    /// Portable float map: a three-line header, then little-endian `f32`.
    Pfm,
    /// OpenEXR, 32-bit float RGB (through the `image` crate's `exr`).
    Exr,
}

/// Every output format, by the file extension that picks it, in the order
/// help texts and messages list them: the one declaration of what
/// `--out` (and every other image path) may name.
pub const OUTPUT_FORMATS: [(&str, OutputFormat); 5] = [
    ("png", OutputFormat::Display(ImageFormat::Png)),
    ("ppm", OutputFormat::Display(ImageFormat::Pnm)),
    ("bmp", OutputFormat::Display(ImageFormat::Bmp)),
    ("pfm", OutputFormat::Linear(LinearFormat::Pfm)),
    ("exr", OutputFormat::Linear(LinearFormat::Exr)),
];

impl OutputFormat {
    /// True for the 8-bit formats of the tone-mapped image.
    pub fn is_display(&self) -> bool {
        matches!(self, OutputFormat::Display(_))
    }

    /// True for the formats of linear radiance.
    pub fn is_linear(&self) -> bool {
        matches!(self, OutputFormat::Linear(_))
    }
}

/// The extensions of the output formats that `keep` picks, as help texts
/// and messages list them: `.png, .ppm or .bmp`.
pub fn extension_list(keep: fn(&OutputFormat) -> bool) -> String {
    let names: Vec<String> = OUTPUT_FORMATS
        .iter()
        .filter(|(_, f)| keep(f))
        .map(|(ext, _)| format!(".{ext}"))
        .collect();
    prose_list(&names, "or")
}

/// The output format implied by a file name.
pub fn format_for(path: &Path) -> anyhow::Result<OutputFormat> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match OUTPUT_FORMATS.iter().find(|(name, _)| ext.as_deref() == Some(*name)) {
        Some(&(_, format)) => Ok(format),
        None => bail!(
            "{}: unknown image format (expected a {} file name)",
            path.display(),
            extension_list(|_| true)
        ),
    }
}

/// Writes linear RGB `pixels` (rows top to bottom) of a `width`-wide image
/// to `path` in `format`, atomically.
pub fn write_linear(path: &Path, format: LinearFormat, width: u32, pixels: &[[f32; 3]]) -> anyhow::Result<()> {
    match format {
        LinearFormat::Pfm => write_pfm(path, width, pixels),
        LinearFormat::Exr => write_exr(path, width, pixels),
    }
}

/// Writes `pixels` as 32-bit float RGB OpenEXR.
fn write_exr(path: &Path, width: u32, pixels: &[[f32; 3]]) -> anyhow::Result<()> {
    let height = (pixels.len() / width.max(1) as usize) as u32;
    let mut raw = Vec::new();
    raw.try_reserve_exact(pixels.len() * 3)
        .map_err(|_| anyhow::anyhow!("{}: cannot allocate the float image", path.display()))?;
    raw.extend(pixels.iter().flatten());
    let image = Rgb32FImage::from_raw(width, height, raw).with_context(|| {
        format!(
            "{}: {} pixels are not a {width}-wide image",
            path.display(),
            pixels.len()
        )
    })?;
    let mut encoded = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut encoded, ImageFormat::OpenExr)
        .with_context(|| format!("{}: cannot encode the OpenEXR image", path.display()))?;
    atomic_file::write(path, encoded.get_ref())
}

/// Writes `pixels` as a PFM file (little-endian `f32`, rows bottom to top,
/// as the format has them).
fn write_pfm(path: &Path, width: u32, pixels: &[[f32; 3]]) -> anyhow::Result<()> {
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

/// An image read back as floats: linear radiance from PFM or OpenEXR, or
/// the display values (0 to 1) of an 8-bit image.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// RGB, rows top to bottom.
    pub pixels: Vec<[f32; 3]>,
    /// Whether the values are linear radiance (PFM, OpenEXR) rather than
    /// display values.
    pub linear: bool,
}

/// What an image file's header says: its size and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageHeader {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Whether it holds linear radiance (PFM, OpenEXR) rather than display
    /// values.
    pub linear: bool,
}

/// The largest image file `read` takes: a 32 768-pixel square of float RGB.
const MAX_IMAGE_FILE: u64 = 13 << 30;

/// Reads the header of a PNG, PPM, BMP, PFM or OpenEXR file (by
/// extension), not its pixels. Errors name the file and what was wrong.
pub fn read_header(path: &Path) -> anyhow::Result<ImageHeader> {
    let format = format_for(path)?;
    let file = input_file::open_regular(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let (width, height, linear) = match format {
        OutputFormat::Linear(LinearFormat::Pfm) => {
            let mut head = Vec::new();
            file.take(MAX_PFM_HEADER as u64)
                .read_to_end(&mut head)
                .with_context(|| format!("{}: cannot be read", path.display()))?;
            let h = pfm_header(path, &head)?;
            (h.width, h.height, true)
        }
        OutputFormat::Linear(LinearFormat::Exr) => {
            dimensions(path, file, ImageFormat::OpenExr).map(|(w, h)| (w, h, true))?
        }
        OutputFormat::Display(format) => dimensions(path, file, format).map(|(w, h)| (w, h, false))?,
    };
    Ok(ImageHeader { width, height, linear })
}

/// The size in the header of the image `file` (of `path`) of `format`.
fn dimensions(path: &Path, file: std::fs::File, format: ImageFormat) -> anyhow::Result<(u32, u32)> {
    image::ImageReader::with_format(std::io::BufReader::new(file), format)
        .into_dimensions()
        .with_context(|| format!("{}: not a readable {format:?} image", path.display()))
}

/// Reads a PNG, PPM, BMP, PFM or OpenEXR file (by extension) as floats.
/// Every channel must be finite. Errors name the file and what was wrong.
pub fn read(path: &Path) -> anyhow::Result<FloatImage> {
    let format = format_for(path)?;
    let bytes = input_file::read_limited(path, MAX_IMAGE_FILE).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let image = match format {
        OutputFormat::Linear(LinearFormat::Pfm) => read_pfm(path, &bytes),
        OutputFormat::Linear(LinearFormat::Exr) => decode(path, &bytes, ImageFormat::OpenExr, true),
        OutputFormat::Display(format) => decode(path, &bytes, format, false),
    }?;
    check_pixels(path, image.width, &image.pixels, Channels::Finite).map_err(anyhow::Error::msg)?;
    Ok(image)
}

/// The values an image's channels may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channels {
    /// Any finite value.
    Finite,
    /// Finite and not negative (a texture's colours).
    NonNegative,
}

/// Checks every channel of `pixels` (rows top to bottom, `width` wide) of
/// the image file `path` against `allowed`; the error names the file and
/// the first pixel at fault, by its (x, y) from the top left. Every image
/// reader checks its pixels here.
pub fn check_pixels(path: &Path, width: u32, pixels: &[[f32; 3]], allowed: Channels) -> Result<(), String> {
    let refused = |v: f32| !v.is_finite() || (allowed == Channels::NonNegative && v < 0.0);
    let Some(at) = pixels.iter().position(|p| p.iter().any(|&v| refused(v))) else {
        return Ok(());
    };
    let [r, g, b] = pixels[at];
    let (x, y) = (at % width.max(1) as usize, at / width.max(1) as usize);
    let fault = if [r, g, b].iter().all(|v| v.is_finite()) {
        "is negative"
    } else {
        "is not finite"
    };
    Err(format!(
        "{}: pixel ({x}, {y}), counted from the top left, {fault}: ({r}, {g}, {b})",
        path.display()
    ))
}

/// Decodes `bytes` of `format` through the `image` crate.
fn decode(path: &Path, bytes: &[u8], format: ImageFormat, linear: bool) -> anyhow::Result<FloatImage> {
    let image = image::load_from_memory_with_format(bytes, format)
        .with_context(|| format!("{}: not a readable {format:?} image", path.display()))?
        .into_rgb32f();
    let (width, height) = image.dimensions();
    let pixels = image.pixels().map(|p| p.0).collect();
    Ok(FloatImage {
        width,
        height,
        pixels,
        linear,
    })
}

/// The most bytes of a PFM header: `PF`, the size and the scale, each
/// followed by whitespace.
const MAX_PFM_HEADER: usize = 256;

/// What a PFM file's header says.
struct PfmHeader {
    width: u32,
    height: u32,
    /// The byte order of the pixels: the scale's sign (negative: little-endian).
    little_endian: bool,
    /// Where the pixels start.
    data_at: usize,
}

/// An error of the PFM file `path`: `what` is wrong.
fn not_pfm(path: &Path, what: &str) -> anyhow::Error {
    anyhow!("{}: not a colour PFM file: {what}", path.display())
}

/// Parses the header at the start of `bytes` of the PFM file `path`: `PF`,
/// the width and the height, and a scale whose sign gives the byte order,
/// each followed by whitespace (one byte after the scale), within the first
/// [`MAX_PFM_HEADER`] bytes.
fn pfm_header(path: &Path, bytes: &[u8]) -> anyhow::Result<PfmHeader> {
    let bad = |what: &str| not_pfm(path, what);
    let head = &bytes[..bytes.len().min(MAX_PFM_HEADER)];
    let mut fields = Vec::new();
    let mut at = 0;
    while fields.len() < 4 {
        while at < head.len() && head[at].is_ascii_whitespace() {
            at += 1;
        }
        let start = at;
        while at < head.len() && !head[at].is_ascii_whitespace() && at - start < 32 {
            at += 1;
        }
        if start == at {
            return Err(bad(&format!(
                "the header ends early (expected PF, width, height and scale within its first {MAX_PFM_HEADER} bytes)"
            )));
        }
        fields.push(std::str::from_utf8(&head[start..at]).map_err(|_| bad("the header is not text"))?);
    }
    if fields[0] != "PF" {
        return Err(bad(&format!("it starts with `{}`, expected `PF`", fields[0])));
    }
    let side = |s: &str, name: &str| -> anyhow::Result<u32> {
        s.parse::<u32>()
            .ok()
            .filter(|v| (1..=crate::settings::size::MAX_IMAGE_SIDE).contains(v))
            .ok_or_else(|| {
                bad(&format!(
                    "{name} `{s}` (expected 1 to {})",
                    crate::settings::size::MAX_IMAGE_SIDE
                ))
            })
    };
    let (width, height) = (side(fields[1], "width")?, side(fields[2], "height")?);
    let scale = fields[3]
        .parse::<f32>()
        .ok()
        .filter(|s| s.is_finite() && *s != 0.0)
        .ok_or_else(|| {
            bad(&format!(
                "scale `{}` (expected a non-zero finite number: negative for little-endian pixels, positive for big-endian)",
                fields[3]
            ))
        })?;
    Ok(PfmHeader {
        width,
        height,
        little_endian: scale < 0.0,
        // The one whitespace byte after the scale.
        data_at: at + 1,
    })
}

/// Parses a PFM file: its header ([`pfm_header`]), then `f32` RGB rows
/// bottom to top.
fn read_pfm(path: &Path, bytes: &[u8]) -> anyhow::Result<FloatImage> {
    let PfmHeader {
        width,
        height,
        little_endian,
        data_at,
    } = pfm_header(path, bytes)?;
    let expected = width as usize * height as usize * 12;
    let data = bytes.get(data_at..).unwrap_or_default();
    if data.len() != expected {
        return Err(not_pfm(
            path,
            &format!(
                "{} bytes of pixels, expected {expected} for {width}x{height}",
                data.len()
            ),
        ));
    }
    let floats: Vec<f32> = data
        .chunks_exact(4)
        .map(|b| {
            let b = [b[0], b[1], b[2], b[3]];
            if little_endian {
                f32::from_le_bytes(b)
            } else {
                f32::from_be_bytes(b)
            }
        })
        .collect();
    let rows: Vec<&[f32]> = floats.chunks_exact(width as usize * 3).rev().collect();
    let pixels = rows
        .into_iter()
        .flat_map(|row| row.chunks_exact(3).map(|c| [c[0], c[1], c[2]]))
        .collect();
    Ok(FloatImage {
        width,
        height,
        pixels,
        linear: true,
    })
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
    fn linear_images_read_back_bit_for_bit_from_pfm_and_exr() {
        let dir = tempfile::tempdir().unwrap();
        let pixels = vec![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.5, 0.0, 1e-7], [1e6, 0.25, 0.5]];
        for (name, format) in [("x.pfm", LinearFormat::Pfm), ("x.exr", LinearFormat::Exr)] {
            let path = dir.path().join(name);
            write_linear(&path, format, 2, &pixels).unwrap();
            let back = read(&path).unwrap();
            assert_eq!((back.width, back.height, back.linear), (2, 2, true), "{name}");
            assert_eq!(back.pixels, pixels, "{name}");
        }
    }

    #[test]
    fn a_damaged_pfm_is_refused_with_the_file_and_the_fault() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.pfm");
        for (bytes, expect) in [
            (&b"P6\n1 1\n255\n"[..], "expected `PF`"),
            (
                &b"PF\n2 2\n-1.0\n\0\0\0\0"[..],
                "4 bytes of pixels, expected 48 for 2x2",
            ),
            (&b"PF\n0 2\n-1.0\n"[..], "width `0`"),
            (&b"PF\n2"[..], "the header ends early"),
        ] {
            std::fs::write(&path, bytes).unwrap();
            let e = read(&path).unwrap_err().to_string();
            assert!(e.contains("x.pfm") && e.contains(expect), "{e}");
        }
    }

    /// A 1×1 PFM with `scale` and the pixel (0.25, 0.5, 2.0) in the byte
    /// order `bytes` gives.
    fn one_pixel_pfm(scale: &str, bytes: fn(f32) -> [u8; 4]) -> Vec<u8> {
        let mut pfm = format!("PF\n1 1\n{scale}\n").into_bytes();
        pfm.extend([0.25f32, 0.5, 2.0].into_iter().flat_map(bytes));
        pfm
    }

    #[test]
    fn a_pfm_scale_is_non_zero_and_finite_and_its_sign_is_the_byte_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.pfm");
        for (scale, bytes) in [
            ("-1.0", f32::to_le_bytes as fn(f32) -> [u8; 4]),
            ("2.5", f32::to_be_bytes),
        ] {
            std::fs::write(&path, one_pixel_pfm(scale, bytes)).unwrap();
            assert_eq!(read(&path).unwrap().pixels, [[0.25, 0.5, 2.0]], "scale {scale}");
        }
        for scale in ["0", "-0.0", "nan", "inf", "-inf"] {
            std::fs::write(&path, one_pixel_pfm(scale, f32::to_le_bytes)).unwrap();
            let e = read(&path).unwrap_err().to_string();
            assert!(
                e.contains("x.pfm") && e.contains(&format!("scale `{scale}`")) && e.contains("non-zero"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_pixel_that_is_not_finite_is_refused_by_its_position() {
        let dir = tempfile::tempdir().unwrap();
        // The PFM's rows run bottom to top: the file's first row is y = 1.
        let path = dir.path().join("x.pfm");
        let mut pfm = b"PF\n2 2\n-1.0\n".to_vec();
        let floats = [[0.5; 3], [0.5, f32::NAN, 0.5], [0.5; 3], [0.5; 3]];
        pfm.extend(floats.into_iter().flatten().flat_map(f32::to_le_bytes));
        std::fs::write(&path, pfm).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains("x.pfm") && e.contains("pixel (1, 1)") && e.contains("not finite"),
            "{e}"
        );
        let path = dir.path().join("x.exr");
        let pixels = [[0.5; 3], [0.5; 3], [0.5, 0.5, f32::INFINITY], [0.5; 3]];
        write_linear(&path, LinearFormat::Exr, 2, &pixels).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains("x.exr") && e.contains("pixel (0, 1)") && e.contains("not finite"),
            "{e}"
        );
    }

    #[test]
    fn every_error_names_the_file() {
        let e = read(Path::new("no/such.png")).unwrap_err().to_string();
        assert!(e.contains("no/such.png") && e.contains("does not exist"), "{e}");
    }

    #[test]
    fn unknown_extension_is_refused_with_the_name_and_every_format() {
        let e = format_for(Path::new("out/x.jpg")).unwrap_err().to_string();
        assert!(e.contains("out/x.jpg"), "{e}");
        for (ext, _) in OUTPUT_FORMATS {
            assert!(e.contains(&format!(".{ext}")), "{e}");
        }
    }

    #[test]
    fn every_declared_format_is_picked_by_its_extension_in_either_case() {
        for (ext, format) in OUTPUT_FORMATS {
            assert_eq!(format_for(Path::new(&format!("a.{ext}"))).unwrap(), format);
            let upper = ext.to_ascii_uppercase();
            assert_eq!(format_for(Path::new(&format!("a.{upper}"))).unwrap(), format);
        }
        assert_eq!(extension_list(OutputFormat::is_display), ".png, .ppm or .bmp");
        assert_eq!(extension_list(OutputFormat::is_linear), ".pfm or .exr");
    }
}
