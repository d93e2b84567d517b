//! Materials: how a surface scatters (or absorbs) an arriving path.
//!
//! Each material class has its own module and its own `scatter` function, so
//! the wavefront back end can run one shading kernel per class without
//! divergence; [`AnyMaterial`] dispatches on the class for the megakernel and the
//! CPU back ends ([`dispatch`]). The classes themselves are declared once,
//! in [`crate::shading`]'s table, which this module reads and which
//! imports nothing of it.

pub mod coated;
pub mod dielectric;
pub mod diffuse;
pub mod dispatch;
pub mod fresnel;
pub mod metal;

use crate::geometry::{Hit, Primitives};
use crate::math::{Ray, Rgb, Vec3};
use crate::noise;
use crate::rng::PathRng;
use crate::shading::MaterialKinds;
use crate::texture::{Colour, SurfacePoint, Textures};

pub use fresnel::FresnelModel;

pub use crate::shading::MaterialKind;
pub use dispatch::{AnyMaterial, Bsdf, Shader};

/// A material as the device reads it. Fields that a class does not use are
/// ignored (and written as zero by the host).
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Which scattering model applies.
    pub kind: MaterialKind,
    /// Reflectance (diffuse, metal, coated where its noise is 0) or
    /// tint (dielectric).
    pub albedo: Colour,
    /// Radiance emitted from the front face; any class may emit.
    pub emission: Colour,
    /// Metal: radius of the perturbation ball (0 is a perfect mirror).
    pub roughness: f32,
    /// Dielectric, coated: index of refraction relative to the outside
    /// (vacuum).
    pub ior: f32,
    /// Dielectric: which Fresnel formula decides reflect versus refract.
    pub fresnel: FresnelModel,
    /// Dielectric: Beer–Lambert transmittance over one unit of distance
    /// inside (`A` in `I = I0 · A^t`); white is clear glass.
    pub transmittance: Rgb,
    /// Coated: the base colour where its noise texture is 1 (`albedo`
    /// where it is 0).
    pub pattern: Colour,
    /// Coated: octaves of the base's noise texture (its shading cost).
    pub octaves: u32,
    /// Coated: the texture's lattice cells per unit length.
    pub frequency: f32,
    /// Coated: which variant of the noise program textures the base.
    pub basis: noise::Basis,
    /// Makes the size 96, a multiple of the 16-byte alignment, with no
    /// implicit padding (materials are read with wide, aligned loads).
    pub _pad: u32,
}

const _: () = assert!(core::mem::size_of::<Material>() == 96);
// SAFETY: `#[repr(C, align(16))]`, four-byte fields only (its enums are `#[repr(u32)]`): the size asserted above is the sum of
// the fields, so there is no padding.
unsafe impl crate::kernel::AsBytes for Material {}

impl Material {
    /// Which program of its class shades this material: the noise basis of
    /// a coated material, 0 for every other (below
    /// [`crate::shading::VARIANTS`]).
    #[inline(always)]
    pub fn variant(&self) -> u32 {
        self.basis.0 % noise::BASES
    }
}

/// The outcome of a scattering event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scatter {
    /// The path ends here.
    Absorbed,
    /// The path continues along `ray`, its throughput multiplied by `weight`.
    Continue {
        /// The next ray segment.
        ray: Ray,
        /// Factor for the path throughput (BSDF · cos / pdf).
        weight: Rgb,
        /// True when a lobe that next-event estimation does not weigh
        /// chose the ray (a mirror, refraction, the rough metal's ball):
        /// the light it finds counts in full.
        delta: bool,
    },
}

/// A BSDF evaluated for one pair of directions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluated {
    /// The BSDF times the cosine at the surface.
    pub f_cos: Rgb,
    /// Density (solid angle) with which the material's own sampling
    /// would choose the direction.
    pub pdf: f32,
}

/// Everything a material needs to scatter one path at one hit.
#[derive(Clone, Copy)]
pub struct ScatterInput<'a> {
    /// The ray that arrived.
    pub ray: &'a Ray,
    /// Where it hit.
    pub hit: &'a Hit,
    /// The path's random stream.
    pub rng: PathRng,
    /// Which bounce this is (keys the random numbers).
    pub bounce: u32,
    /// The scene's primitives (where textures find a hit's coordinates).
    pub primitives: &'a Primitives<'a>,
    /// The scene's textures.
    pub textures: &'a Textures<'a>,
    /// The material kinds the kernel holds (those of its bound
    /// [`Features`](crate::features::Features)): a material of another kind
    /// absorbs. A constant on the GPU, so the code of the rest vanishes.
    pub materials: MaterialKinds,
    /// Whether colours may be textures: false in kernels bound without
    /// [`Feature::Textures`](crate::features::Feature::Textures) (a constant
    /// on the GPU, so the lookups vanish), which run only on scenes whose
    /// colours are all constant.
    pub textured: bool,
}

impl ScatterInput<'_> {
    /// The value of `colour` at the hit.
    #[inline(always)]
    pub fn colour(&self, colour: &Colour) -> Rgb {
        if self.textured {
            self.textures
                .colour(colour, self.primitives, &SurfacePoint::of(self.hit))
        } else {
            colour.rgb
        }
    }
}

/// Relative size of the offset that moves a new ray's origin off the surface
/// it leaves, scaled by the hit point's magnitude (float spacing grows with it).
pub const RAY_OFFSET_SCALE: f32 = 3.0e-5;

/// `point` pushed off its surface along `normal` by a distance that grows
/// with the point's magnitude, so the new ray does not re-hit the surface.
#[inline(always)]
pub fn offset_origin(point: Vec3, normal: Vec3) -> Vec3 {
    point + normal * (RAY_OFFSET_SCALE * (1.0 + point.max_abs_component()))
}

/// Materials whose scattering has no density to evaluate (mirrors, glass,
/// the ball-perturbed metal, pure emitters): next-event estimation skips
/// them, and light their scattered rays find gets weight one.
#[inline(always)]
pub fn no_density(_: &Material, _: &ScatterInput, _: Vec3) -> Option<Evaluated> {
    None
}

/// Pure emitters scatter nothing: every path ends.
#[inline(always)]
pub fn absorb(_: &Material, _: &ScatterInput) -> Scatter {
    Scatter::Absorbed
}
