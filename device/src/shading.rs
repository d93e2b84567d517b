//! The one table of shading classes. Each line declares a class: its
//! material kind (for surfaces), its scattering function, its evaluation
//! function (for next-event estimation) and the names of its wavefront
//! shading kernels (with every feature, and [`PLAIN`]: without next-event
//! estimation and textures). Everything that depends on the set of
//! classes derives from this table:
//!
//! * [`MaterialKind`] (what a scene's material can be) and [`ShadeClass`]
//!   (the surfaces plus escaped rays), with [`ShadeClass::ALL`] and
//!   [`ShadeClass::COUNT`];
//! * [`MaterialKind::class`] and the megakernel's dispatch, [`AnyMaterial`];
//! * the marker types in [`class`], each a [`Shader`];
//! * the wavefront's shading kernels, two entry points per surface class
//!   and one for escaped rays, which
//!   `kernels::shade` declares by handing its own macro to
//!   `classes!` (so this module needs nothing of the kernels);
//! * the wavefront's shading queues and per-class counters, which are
//!   arrays of [`ShadeClass::COUNT`], and the divergence counters per
//!   kernel.
//!
//! Adding a material is a new line here, its `scatter` and `evaluate` functions in
//! [`crate::material`], and its fields in the host's scene schema.
//!
//! This module and [`crate::material`] import each other, and that circle
//! is the honest shape: the table names each material's scattering function
//! (and the types they take), while a [`Material`] names its
//! [`MaterialKind`], which only the table declares. Splitting them would
//! mean declaring the set of kinds twice.

use crate::material::{self, Evaluated, Material, Scatter, ScatterInput};
use crate::math::Vec3;

/// The class whose materials come in variants with different programs
/// (the coated material's noise bases), whose queue the wavefront can sort
/// by variant ([`crate::launch::MaterialSort`]).
pub const SORTED_CLASS: ShadeClass = ShadeClass::Coated;

/// Variants a material of [`SORTED_CLASS`] can take ([`Material::variant`]).
pub const VARIANTS: usize = crate::material::noise::BASES as usize;

/// How a surface scatters: one class's functions, or [`AnyMaterial`]'s
/// dispatch over every class.
pub trait Bsdf {
    /// What the code using it is compiled with ([`Features`]): every
    /// feature, but for [`AnyMaterial`]'s specialised kernels.
    const FEATURES: Features = ALL_FEATURES;
    /// Samples the next direction (escaped rays never call it).
    fn scatter(material: &Material, input: &ScatterInput) -> Scatter;
    /// The BSDF towards `dir` and the density of sampling it, for
    /// next-event estimation; `None` where the class has no density.
    fn evaluate(material: &Material, input: &ScatterInput, dir: Vec3) -> Option<Evaluated>;
}

/// One shading class, as a type: which class, and how it scatters.
pub trait Shader: Bsdf {
    /// The class (and queue) it shades.
    const CLASS: ShadeClass;
}

/// What a kernel that dispatches over materials (the megakernel, the
/// wavefront's drain) is compiled with: one bit per [`ShadeClass`] whose
/// code it holds, and the light-transport features [`NEE`] and
/// [`TEXTURES`] above them. Each left-out part is code the kernel does not
/// carry: fewer registers and less local memory for the rest. The host
/// runs the smallest [`KernelVariant`] that holds what the scene needs.
pub type Features = u32;

/// Next-event estimation (light sampling and multiple importance sampling).
pub const NEE: Features = 1 << 30;

/// Texture lookups (a colour that is not constant).
pub const TEXTURES: Features = 1 << 31;

/// Every class and feature.
pub const ALL_FEATURES: Features = Features::MAX;

/// The classes whose code is large (the coated material's sixteen noise
/// programs): compiled in, their code made the megakernel up to 13% slower
/// on scenes that never run it (results/material_cost/).
pub const COSTLY_CLASSES: Features = 1 << ShadeClass::Coated as u32;

/// Every class but the costly ones, with every feature.
pub const LEAN: Features = !COSTLY_CLASSES;

/// The seeds' workloads: pure path tracing of constant colours, without
/// the costly classes. Next-event estimation and textures compiled in took
/// the megakernel with the BVH from 135 to 213 registers (`ptxas -v`, sm_90).
pub const PLAIN: Features = LEAN & !NEE & !TEXTURES;

/// The classes the materials `materials` need.
pub fn classes_of(materials: &[Material]) -> Features {
    materials.iter().fold(0, |set, m| set | 1 << m.kind.class() as u32)
}

/// The builds of a kernel that dispatches over materials, smallest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelVariant {
    /// [`PLAIN`].
    Plain,
    /// [`LEAN`].
    Lean,
    /// [`ALL_FEATURES`].
    Full,
}

impl KernelVariant {
    /// Every variant, smallest first.
    pub const ALL: [KernelVariant; 3] = [KernelVariant::Plain, KernelVariant::Lean, KernelVariant::Full];

    /// The smallest variant that holds every class and feature of `needed`.
    pub fn holding(needed: Features) -> Self {
        if needed & !PLAIN == 0 {
            KernelVariant::Plain
        } else if needed & !LEAN == 0 {
            KernelVariant::Lean
        } else {
            KernelVariant::Full
        }
    }

    /// The classes and features this variant holds.
    pub fn features(self) -> Features {
        match self {
            KernelVariant::Plain => PLAIN,
            KernelVariant::Lean => LEAN,
            KernelVariant::Full => ALL_FEATURES,
        }
    }
}

/// Every material, dispatching on its kind over the classes of `FEATURES`
/// (the megakernel and the CPU back ends; the wavefront runs one kernel per
/// class instead). A material of a class left out absorbs: the host runs
/// such a kernel only on scenes without that class.
pub struct AnyMaterial<const FEATURES: Features = ALL_FEATURES>;

/// The table, handed to the macro `$declare` (one in scope where this is
/// invoked): `surfaces { Kind => scatter, evaluate, kernel name, plain
/// kernel name; … }`, then `escaped => kernel name;` (escaped rays run the
/// same code in every build), each line with its doc comment.
macro_rules! classes {
    ($declare:ident) => {
        $declare! {
            surfaces {
                /// Lambertian reflector, cosine-weighted sampling.
                Diffuse => $crate::material::diffuse::scatter, $crate::material::diffuse::evaluate, wf_shade_diffuse, wf_shade_plain_diffuse;
                /// Mirror reflection perturbed inside a roughness ball.
                Metal => $crate::material::metal::scatter, $crate::material::no_density, wf_shade_metal, wf_shade_plain_metal;
                /// Glass-like: Fresnel reflect-or-refract with Beer–Lambert absorption.
                Dielectric => $crate::material::dielectric::scatter, $crate::material::no_density, wf_shade_dielectric, wf_shade_plain_dielectric;
                /// A clear coat over a noise-textured diffuse base: a material of tunable cost.
                Coated => $crate::material::coated::scatter, $crate::material::coated::evaluate, wf_shade_coated, wf_shade_plain_coated;
                /// A pure emitter: emits on its front face and absorbs every path.
                Emissive => $crate::material::absorb, $crate::material::no_density, wf_shade_emissive, wf_shade_plain_emissive;
            }
            /// Rays that escaped to the background.
            escaped => wf_shade_escaped;
        }
    };
}
pub(crate) use classes;

macro_rules! shading_classes {
    (
        surfaces {
            $($(#[$doc:meta])* $surface:ident => $scatter:path, $evaluate:path, $_kernel:ident, $_plain_kernel:ident;)*
        }
        $(#[$escaped_doc:meta])* escaped => $_escaped_kernel:ident;
    ) => {
        /// What a material can be: one shading class per kind.
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum MaterialKind {
            $($(#[$doc])* $surface,)*
        }

        /// The classes a path can be shaded in: every material kind, then
        /// escaped rays. Also the order of the wavefront's shading queues.
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum ShadeClass {
            $($(#[$doc])* $surface,)*
            $(#[$escaped_doc])* Escaped,
        }

        impl ShadeClass {
            /// Every class, in queue order.
            pub const ALL: [ShadeClass; [$(ShadeClass::$surface,)* ShadeClass::Escaped].len()] =
                [$(ShadeClass::$surface,)* ShadeClass::Escaped];
            /// Number of classes.
            pub const COUNT: usize = Self::ALL.len();
        }

        impl MaterialKind {
            /// The shading class of a material of this kind.
            #[inline(always)]
            pub fn class(self) -> ShadeClass {
                match self {
                    $(MaterialKind::$surface => ShadeClass::$surface,)*
                }
            }
        }

        impl<const FEATURES: Features> Bsdf for AnyMaterial<FEATURES> {
            const FEATURES: Features = FEATURES;

            #[inline(always)]
            fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
                match material.kind {
                    $(MaterialKind::$surface if FEATURES & 1 << ShadeClass::$surface as u32 != 0 => {
                        $scatter(material, input)
                    })*
                    _ => Scatter::Absorbed,
                }
            }

            #[inline(always)]
            fn evaluate(material: &Material, input: &ScatterInput, dir: Vec3) -> Option<Evaluated> {
                match material.kind {
                    $(MaterialKind::$surface if FEATURES & 1 << ShadeClass::$surface as u32 != 0 => {
                        $evaluate(material, input, dir)
                    })*
                    _ => None,
                }
            }
        }

        /// One marker type per shading class, compiled with the features
        /// `FEATURES` (of which only [`NEE`] and [`TEXTURES`] matter to one
        /// class's code).
        pub mod class {
            use super::{ALL_FEATURES, Features};
            $($(#[$doc])* pub struct $surface<const FEATURES: Features = ALL_FEATURES>;)*
            $(#[$escaped_doc])* pub struct Escaped;
        }

        $(
            impl<const FEATURES: Features> Shader for class::$surface<FEATURES> {
                const CLASS: ShadeClass = ShadeClass::$surface;
            }

            impl<const FEATURES: Features> Bsdf for class::$surface<FEATURES> {
                const FEATURES: Features = FEATURES;

                #[inline(always)]
                fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
                    $scatter(material, input)
                }

                #[inline(always)]
                fn evaluate(material: &Material, input: &ScatterInput, dir: Vec3) -> Option<Evaluated> {
                    $evaluate(material, input, dir)
                }
            }
        )*

        impl Shader for class::Escaped {
            const CLASS: ShadeClass = ShadeClass::Escaped;
        }

        impl Bsdf for class::Escaped {
            #[inline(always)]
            fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
                material::absorb(material, input)
            }

            #[inline(always)]
            fn evaluate(material: &Material, input: &ScatterInput, dir: Vec3) -> Option<Evaluated> {
                material::no_density(material, input, dir)
            }
        }
    };
}

classes!(shading_classes);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_variant_that_holds_the_needs_is_chosen() {
        let class = |c: ShadeClass| 1 << c as u32;
        let seeds = class(ShadeClass::Diffuse) | class(ShadeClass::Metal) | class(ShadeClass::Dielectric);
        assert_eq!(KernelVariant::holding(0), KernelVariant::Plain);
        assert_eq!(KernelVariant::holding(seeds), KernelVariant::Plain);
        assert_eq!(KernelVariant::holding(seeds | NEE), KernelVariant::Lean);
        assert_eq!(KernelVariant::holding(seeds | TEXTURES), KernelVariant::Lean);
        assert_eq!(KernelVariant::holding(class(ShadeClass::Coated)), KernelVariant::Full);
        assert_eq!(KernelVariant::holding(ALL_FEATURES), KernelVariant::Full);
    }

    #[test]
    fn the_variants_nest_and_the_plain_one_leaves_out_exactly_the_costly_classes_and_both_features() {
        assert_eq!(PLAIN & !LEAN, 0);
        assert_eq!(LEAN & !ALL_FEATURES, 0);
        assert_eq!(!PLAIN, COSTLY_CLASSES | NEE | TEXTURES);
        // The feature bits lie above every class's bit.
        assert!(ShadeClass::ALL.iter().all(|&c| (1 << c as u32) & (NEE | TEXTURES) == 0));
    }
}
