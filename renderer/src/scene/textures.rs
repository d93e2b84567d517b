//! A scene's `[textures.*]` tables, validated into device [`Texture`]s,
//! with the texels of their images read through the `image` crate, and
//! the materials' colours resolved against them ([`SceneTextures::colour`]).

use super::fields::{self, FieldResult, field_error, positive, rgb};
use super::schema::{ColourDef, TextureDef, TextureSpaceDef};
use crate::io::image::{Channels, check_pixels};
use crate::settings::echo::shorten_for_error;
use device::math::Rgb;
use device::texture::{Colour, Texture, TextureKind, TextureRef, TextureSpace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most texels of all images together (768 MiB of linear RGB).
pub const MAX_TEXELS: u64 = 1 << 26;

/// The widest and tallest image accepted.
pub const MAX_IMAGE_SIDE: u32 = 16_384;

/// The largest image file read.
pub const MAX_IMAGE_FILE_BYTES: u64 = 512 << 20;

/// What a material colour naming a texture becomes.
#[derive(Clone, Copy, Debug)]
struct Named {
    /// The texture, with its mean as the constant.
    colour: Colour,
    /// Its largest channel anywhere (an albedo must not exceed 1).
    max: f32,
}

/// The textures of a scene, in file order, and the texels of their images.
#[derive(Clone, Debug, Default)]
pub struct SceneTextures {
    /// Every texture, indexed by [`TextureRef`].
    pub textures: Vec<Texture>,
    /// The images' texels, linear radiance, each image's rows bottom to top.
    pub texels: Vec<Rgb>,
    /// The image files read.
    pub files: Vec<PathBuf>,
    by_name: BTreeMap<String, Named>,
}

impl SceneTextures {
    /// Validates `[textures.NAME]` and adds it; image files are read
    /// relative to `scene_dir`.
    pub fn add(&mut self, name: &str, def: &TextureDef, scene_dir: &Path) -> FieldResult<()> {
        let (texture, mean, max) = match def {
            TextureDef::Checker {
                colors,
                frequency,
                space,
            } => {
                let colours = two_colours(colors)?;
                let t = procedural(TextureKind::Checker, colours, *frequency, *space)?;
                (t, (colours[0] + colours[1]) * 0.5, max_of(&colours))
            }
            TextureDef::Noise {
                colors,
                octaves,
                frequency,
                space,
            } => {
                let colours = two_colours(colors)?;
                let octaves = fields::octaves("octaves", *octaves)?;
                let t = Texture {
                    octaves,
                    ..procedural(TextureKind::Noise, colours, *frequency, *space)?
                };
                (t, (colours[0] + colours[1]) * 0.5, max_of(&colours))
            }
            TextureDef::Image { file, tint, repeat } => {
                let tint = rgb("tint", *tint, f32::INFINITY)?;
                let path = scene_dir.join(file);
                let image = read_image(&path, self.texels.len() as u64).map_err(|e| field_error("file", e))?;
                let first_texel = self.texels.len() as u32;
                let count = image.texels.len() as f32;
                let sum = image.texels.iter().fold(Rgb::BLACK, |s, &t| s + t);
                let max = image.texels.iter().fold(0.0f32, |m, t| m.max(t.max_channel()));
                self.texels.extend(image.texels);
                self.files.push(path);
                let t = Texture {
                    kind: TextureKind::Image,
                    space: TextureSpace::Uv,
                    colours: [tint, Rgb::BLACK],
                    frequency: positive("repeat", *repeat)?,
                    octaves: 0,
                    first_texel,
                    width: image.width,
                    height: image.height,
                };
                (t, tint * sum * (1.0 / count), max * tint.max_channel())
            }
        };
        let colour = Colour {
            rgb: mean,
            texture: TextureRef::new(self.textures.len() as u32),
        };
        self.textures.push(texture);
        self.by_name.insert(name.to_string(), Named { colour, max });
        Ok(())
    }

    /// A material's colour `field`: a constant, each channel within
    /// `0..=max`, or the texture it names, whose values must be too.
    pub fn colour(&self, field: &str, def: &ColourDef, max: f32) -> FieldResult<Colour> {
        let name = match def {
            ColourDef::Rgb(c) => return Ok(Colour::constant(rgb(field, *c, max)?)),
            ColourDef::Texture(name) => name,
        };
        let Some(named) = self.by_name.get(name) else {
            let known: Vec<_> = self.by_name.keys().map(|n| shorten_for_error(n)).collect();
            let known = if known.is_empty() {
                "the scene has no [textures] tables".to_string()
            } else {
                format!("defined: {}", known.join(", "))
            };
            return Err(field_error(field, format!("unknown texture `{name}` ({known})")));
        };
        if named.max > max {
            return Err(field_error(
                field,
                format!(
                    "texture `{name}` reaches {} in a channel, but {field} must stay within 0 to {max}",
                    named.max
                ),
            ));
        }
        Ok(named.colour)
    }
}

/// A checker's or a noise's two colours (any non-negative values).
fn two_colours(colors: &[[f32; 3]; 2]) -> FieldResult<[Rgb; 2]> {
    Ok([
        rgb("colors", colors[0], f32::INFINITY)?,
        rgb("colors", colors[1], f32::INFINITY)?,
    ])
}

fn max_of(colours: &[Rgb; 2]) -> f32 {
    colours[0].max_channel().max(colours[1].max_channel())
}

/// A checker or noise texture with every image field zero.
fn procedural(kind: TextureKind, colours: [Rgb; 2], frequency: f32, space: TextureSpaceDef) -> FieldResult<Texture> {
    Ok(Texture {
        kind,
        space: match space {
            TextureSpaceDef::World => TextureSpace::World,
            TextureSpaceDef::Uv => TextureSpace::Uv,
        },
        colours,
        frequency: positive("frequency", frequency)?,
        octaves: 0,
        first_texel: 0,
        width: 0,
        height: 0,
    })
}

/// An image's texels, rows bottom to top, linear radiance.
struct Texels {
    width: u32,
    height: u32,
    texels: Vec<Rgb>,
}

/// The 8- or 16-bit sRGB value `c` (0 to 1) in linear light.
fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Reads the image at `path` (a regular file of at most
/// [`MAX_IMAGE_FILE_BYTES`]; its format from its contents), after
/// `texels_before` texels of earlier images. Integer formats are sRGB and
/// are decoded to linear light; float formats (OpenEXR) are linear already,
/// and must hold no negative or non-finite value. Errors name the file.
fn read_image(path: &Path, texels_before: u64) -> Result<Texels, String> {
    let fail = |e: &dyn std::fmt::Display| format!("cannot read image {}: {e}", path.display());
    let bytes = crate::io::input_file::read_limited(path, MAX_IMAGE_FILE_BYTES)
        .map_err(|e| format!("image {} {e}", path.display()))?;
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| fail(&e))?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    reader.limits(limits);
    let image = reader.decode().map_err(|e| fail(&e))?;
    let (width, height) = (image.width(), image.height());
    if width == 0 || height == 0 {
        return Err(format!("image {} has no texels", path.display()));
    }
    let total = texels_before + width as u64 * height as u64;
    if total > MAX_TEXELS {
        return Err(format!(
            "image {} ({width} × {height}) takes the scene's images to {total} texels, over the limit of {MAX_TEXELS}",
            path.display()
        ));
    }
    let linear = matches!(image.color(), image::ColorType::Rgb32F | image::ColorType::Rgba32F);
    let mut values = image.into_rgb32f().into_raw();
    if !linear {
        values.iter_mut().for_each(|v| *v = srgb_to_linear(*v));
    }
    let (pixels, _) = values.as_chunks::<3>();
    check_pixels(path, width, pixels, Channels::NonNegative)?;
    let texels = pixels
        .chunks_exact(width as usize)
        .rev()
        .flatten()
        .map(|&[r, g, b]| Rgb::new(r, g, b))
        .collect();
    Ok(Texels { width, height, texels })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srgb_decodes_to_linear_light() {
        assert_eq!(srgb_to_linear(0.0), 0.0);
        assert!((srgb_to_linear(1.0) - 1.0).abs() < 1e-6);
        // The linear segment, and mid-grey (sRGB 0.5 is about 0.214 linear).
        assert!((srgb_to_linear(0.04) - 0.04 / 12.92).abs() < 1e-9);
        assert!((srgb_to_linear(0.5) - 0.214_041).abs() < 1e-5);
    }

    #[test]
    fn an_image_is_read_bottom_row_first_in_linear_light() {
        let path = std::env::temp_dir().join(format!("wavepath-texture-test-{}.png", std::process::id()));
        // 2 × 2: top row white, black; bottom row sRGB 128 grey, red.
        let img = image::RgbImage::from_fn(2, 2, |x, y| match (x, y) {
            (0, 0) => image::Rgb([255, 255, 255]),
            (1, 0) => image::Rgb([0, 0, 0]),
            (0, 1) => image::Rgb([128, 128, 128]),
            _ => image::Rgb([255, 0, 0]),
        });
        img.save(&path).unwrap();
        let t = read_image(&path, 0).unwrap();
        assert_eq!((t.width, t.height), (2, 2));
        let grey = srgb_to_linear(128.0 / 255.0);
        assert_eq!(t.texels[0], Rgb::new(grey, grey, grey));
        assert_eq!(t.texels[1], Rgb::new(1.0, 0.0, 0.0));
        assert_eq!(t.texels[2], Rgb::WHITE);
        assert_eq!(t.texels[3], Rgb::BLACK);
        // Past the limit of all images together.
        let e = read_image(&path, MAX_TEXELS - 3).err().unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(e.contains("over the limit"), "{e}");
    }

    #[test]
    fn a_texel_that_is_negative_or_not_finite_is_refused_by_its_position() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.exr");
        for (bad, fault) in [(f32::NAN, "is not finite"), (-0.5, "is negative")] {
            // 2 × 2, top row first: the fault in the top row's second texel.
            let pixels = [[0.5; 3], [0.5, bad, 0.5], [0.5; 3], [0.5; 3]];
            crate::io::image::write_linear(&path, crate::io::image::LinearFormat::Exr, 2, &pixels).unwrap();
            let e = read_image(&path, 0).err().unwrap();
            assert!(e.contains("t.exr: pixel (1, 0)") && e.contains(fault), "{e}");
        }
    }

    #[test]
    fn colours_resolve_to_textures_with_their_mean_and_range() {
        let mut t = SceneTextures::default();
        let checker = TextureDef::Checker {
            colors: [[0.2, 0.4, 0.6], [0.6, 0.8, 1.0]],
            frequency: 2.0,
            space: TextureSpaceDef::World,
        };
        assert!(t.add("checks", &checker, Path::new(".")).is_ok());
        let hot = TextureDef::Checker {
            colors: [[0.0; 3], [4.0, 4.0, 4.0]],
            frequency: 1.0,
            space: TextureSpaceDef::Uv,
        };
        assert!(t.add("hot", &hot, Path::new(".")).is_ok());
        let c = t
            .colour("albedo", &ColourDef::Texture("checks".into()), 1.0)
            .ok()
            .unwrap();
        assert_eq!(c.texture, TextureRef::new(0));
        assert_eq!(c.rgb, Rgb::new(0.4, 0.6, 0.8));
        let c = t
            .colour("emission", &ColourDef::Texture("hot".into()), f32::INFINITY)
            .ok()
            .unwrap();
        assert_eq!((c.texture, c.rgb), (TextureRef::new(1), Rgb::new(2.0, 2.0, 2.0)));
        let e = t
            .colour("albedo", &ColourDef::Texture("hot".into()), 1.0)
            .err()
            .unwrap();
        assert!(e.message.contains("reaches 4"), "{}", e.message);
        let e = t
            .colour("albedo", &ColourDef::Texture("nope".into()), 1.0)
            .err()
            .unwrap();
        assert!(
            e.message.contains("unknown texture `nope` (defined: checks, hot)"),
            "{}",
            e.message
        );
        let c = t.colour("albedo", &ColourDef::Rgb([0.5; 3]), 1.0).ok().unwrap();
        assert_eq!(c, Colour::constant(Rgb::new(0.5, 0.5, 0.5)));
    }
}
