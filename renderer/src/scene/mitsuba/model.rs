//! What a Mitsuba scene describes, read into types: the camera and its
//! film, the integrator's settings, each shape with its BSDF and its area
//! light, and the environment. Parameters keep Mitsuba's meaning and its
//! defaults (filled in where the file leaves one out); nothing here is yet
//! in wavepath's own units.

use super::transform::Matrix4;
use std::path::PathBuf;

/// A linear RGB triple.
pub type Rgb = [f64; 3];

/// A Mitsuba scene, read.
#[derive(Clone, Debug, PartialEq)]
pub struct MitsubaScene {
    /// The `version` of its `<scene>`.
    pub version: String,
    /// The path tracer's settings.
    pub integrator: PathIntegrator,
    /// The camera, its film and its sampler.
    pub sensor: Sensor,
    /// Every shape, in file order.
    pub shapes: Vec<Shape>,
    /// What a ray that leaves the scene sees (`None`: black).
    pub environment: Option<Environment>,
    /// Settings the file gives that do not apply to a render (how Mitsuba
    /// would write its image file), each with its line.
    pub not_applying: Vec<(usize, String)>,
}

/// `<integrator type="path">`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathIntegrator {
    /// `max_depth`: the most ray segments a path has (`None`: unbounded,
    /// Mitsuba's `-1`).
    pub max_depth: Option<u32>,
    /// `rr_depth`: the depth from which Russian roulette may end a path.
    pub rr_depth: u32,
}

impl Default for PathIntegrator {
    /// Mitsuba's defaults: no depth limit, roulette from depth 5.
    fn default() -> Self {
        PathIntegrator {
            max_depth: None,
            rr_depth: 5,
        }
    }
}

/// Which extent of the image `fov` spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FovAxis {
    /// The width (Mitsuba's default).
    X,
    /// The height.
    Y,
    /// The diagonal.
    Diagonal,
    /// The smaller of width and height.
    Smaller,
    /// The larger.
    Larger,
}

/// The pixel reconstruction filter (`<rfilter>`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PixelFilter {
    /// `box`: each sample counts for its pixel alone.
    Box,
    /// `tent`: a triangle of radius `radius` pixels (Mitsuba's default 1).
    Tent {
        /// The radius in pixels.
        radius: f64,
    },
    /// `gaussian`: standard deviation `stddev` pixels (Mitsuba's default,
    /// 0.5), cut at four deviations.
    Gaussian {
        /// The standard deviation in pixels.
        stddev: f64,
    },
}

/// `<sensor type="perspective">` with its `<film>` and `<sampler>`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sensor {
    /// The field of view, degrees.
    pub fov_degrees: f64,
    /// Which extent it spans.
    pub fov_axis: FovAxis,
    /// Camera to world: the camera looks down +z with +y up and +x to the
    /// left of the image.
    pub to_world: Matrix4,
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
    /// Samples per pixel.
    pub sample_count: u32,
    /// How samples are weighted into pixels.
    pub filter: PixelFilter,
}

/// A shape's geometry, in its own space (`to_world` places it).
#[derive(Clone, Debug, PartialEq)]
pub enum Geometry {
    /// `obj`: a Wavefront OBJ mesh.
    Obj {
        /// The file, relative paths taken from the scene file's folder.
        file: PathBuf,
        /// `face_normals`: shade with the triangles' own normals, ignoring
        /// the file's `vn`.
        face_normals: bool,
        /// `flip_tex_coords`: `v` is `1 - v` (Mitsuba's default, true).
        flip_tex_coords: bool,
    },
    /// `rectangle`: the square from (-1, -1, 0) to (1, 1, 0), facing +z.
    Rectangle,
    /// `disk`: the unit disk in the plane z = 0, facing +z.
    Disk,
    /// `sphere`: a ball, facing out.
    Sphere {
        /// Its centre.
        center: [f64; 3],
        /// Its radius.
        radius: f64,
    },
}

/// One `<shape>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// Its geometry.
    pub geometry: Geometry,
    /// Object to world.
    pub to_world: Matrix4,
    /// `flip_normals`: the normals point the other way.
    pub flip_normals: bool,
    /// How its surface scatters (Mitsuba's default: a diffuse BSDF of
    /// reflectance 0.5).
    pub bsdf: Bsdf,
    /// The radiance of its `<emitter type="area">`, if it has one.
    pub emission: Option<Rgb>,
    /// The line of its `<shape>`.
    pub line: usize,
}

/// How a bitmap texture is looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextureFilter {
    /// `nearest`.
    Nearest,
    /// `bilinear`.
    Bilinear,
    /// `ewa`: Mitsuba 0.6's default, elliptically weighted averaging.
    Ewa,
}

/// `<texture type="bitmap">`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bitmap {
    /// The image file, relative paths taken from the scene file's folder.
    pub file: PathBuf,
    /// Its lookup.
    pub filter: TextureFilter,
    /// The line of its `<texture>`.
    pub line: usize,
}

/// A colour that may vary over a surface.
#[derive(Clone, Debug, PartialEq)]
pub enum Reflectance {
    /// One colour everywhere.
    Constant(Rgb),
    /// An image.
    Bitmap(Bitmap),
}

/// A microfacet distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// Beckmann's (Mitsuba's default).
    Beckmann,
    /// GGX (Trowbridge–Reitz).
    Ggx,
}

/// A rough surface's microfacets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Microfacets {
    /// Their distribution.
    pub distribution: Distribution,
    /// Its roughness `alpha` (Mitsuba's default 0.1).
    pub alpha: f64,
}

/// A conductor's reflectance at normal and grazing angles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Conductor {
    /// Fresnel's equations with the complex index of refraction `eta + i k`
    /// (relative to the outside), per RGB channel.
    Complex {
        /// The real part.
        eta: Rgb,
        /// The imaginary part (absorption).
        k: Rgb,
    },
    /// `material = "none"`: reflects everything.
    Perfect,
}

/// A BSDF, as Mitsuba defines each plugin.
#[derive(Clone, Debug, PartialEq)]
pub enum Bsdf {
    /// `diffuse`: Lambertian.
    Diffuse {
        /// `reflectance` (default 0.5).
        reflectance: Reflectance,
    },
    /// `plastic` (smooth) and `roughplastic`: a diffuse base under a
    /// dielectric coating.
    Plastic {
        /// The coating's microfacets (`None`: smooth, `plastic`).
        rough: Option<Microfacets>,
        /// `int_ior` (default polypropylene, 1.49).
        int_ior: f64,
        /// `ext_ior` (default air, 1.000277).
        ext_ior: f64,
        /// `diffuse_reflectance` (default 0.5).
        diffuse: Reflectance,
        /// `specular_reflectance` (default 1).
        specular: Rgb,
        /// `nonlinear`: account for the colour shift of light reflected
        /// inside the coating many times (default false).
        nonlinear: bool,
    },
    /// `conductor` and `roughconductor`.
    Conductor {
        /// The microfacets (`None`: smooth, `conductor`).
        rough: Option<Microfacets>,
        /// Its Fresnel reflectance.
        fresnel: Conductor,
        /// `specular_reflectance` (default 1).
        specular: Rgb,
    },
    /// `dielectric` (`thin: false`) and `thindielectric` (`thin: true`):
    /// smooth glass, solid or a thin pane.
    Dielectric {
        /// A thin pane, whose transmitted rays go on undeflected.
        thin: bool,
        /// `int_ior` (default BK7, 1.5046).
        int_ior: f64,
        /// `ext_ior` (default air, 1.000277).
        ext_ior: f64,
        /// `specular_reflectance` (default 1).
        reflectance: Rgb,
        /// `specular_transmittance` (default 1).
        transmittance: Rgb,
    },
    /// `twosided`: the BSDF on both faces (Mitsuba's BSDFs otherwise
    /// scatter on the front face only, and are black from behind).
    TwoSided(Box<Bsdf>),
    /// `mask`: `opacity` of the time the surface is there, otherwise the
    /// ray passes as if it were not.
    Mask {
        /// `opacity` (default 0.5): a number, or an image whose first
        /// channel is read.
        opacity: Reflectance,
        /// The surface where it is there.
        inner: Box<Bsdf>,
    },
    /// `bumpmap`: the shading normal tilted by the gradient of a height
    /// texture.
    BumpMap {
        /// The height texture.
        map: Bitmap,
        /// The surface it tilts.
        inner: Box<Bsdf>,
    },
}

/// A distant light that surrounds the scene.
#[derive(Clone, Debug, PartialEq)]
pub enum Environment {
    /// `envmap`: a latitude–longitude image (EXR or Radiance HDR).
    Map {
        /// The image file.
        file: PathBuf,
        /// `scale`: its radiance multiplied by this (default 1).
        scale: f64,
        /// The map's frame to world.
        to_world: Matrix4,
        /// The line of its `<emitter>`.
        line: usize,
    },
    /// `constant`: the same radiance from every direction.
    Constant {
        /// `radiance`.
        radiance: Rgb,
    },
}
