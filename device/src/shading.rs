//! The one table of shading classes. Each line declares a class: its
//! material kind (for surfaces), its scattering function, its evaluation
//! function (for next-event estimation), its name and the name of its
//! wavefront shading kernel. Everything that depends on the set of classes
//! derives from this table:
//!
//! * [`MaterialKind`] (what a scene's material can be), its names and its
//!   [`Feature::Material`](crate::features::Feature::Material)s, and [`ShadeClass`]
//!   (the surfaces plus escaped rays), with [`ShadeClass::ALL`] and
//!   [`ShadeClass::COUNT`];
//! * [`MaterialKind::class`] and the megakernel's dispatch, [`AnyMaterial`];
//! * the marker types in [`class`], each a [`Shader`];
//! * the wavefront's shading kernels, one entry point per class, which
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

/// A set of material kinds: those a kernel holds the code of (the
/// material bits of its [`Features`](crate::features::Features)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaterialKinds(u32);

impl MaterialKinds {
    /// The set whose bit `1 << kind` is set for each kind it holds (other
    /// bits are ignored).
    #[inline(always)]
    pub const fn from_bits(bits: u32) -> Self {
        MaterialKinds(bits)
    }

    /// Whether the set holds `kind`.
    #[inline(always)]
    pub const fn contains(self, kind: MaterialKind) -> bool {
        self.0 & 1 << kind as u32 != 0
    }
}

/// Every material, dispatching on its kind over the kinds its kernel holds
/// ([`ScatterInput::materials`]) (the megakernel, the drain and the CPU back ends; the
/// wavefront runs one kernel per class instead). A material of a kind left
/// out absorbs: the host binds every kind its scene has.
pub struct AnyMaterial;

/// The table, handed to the macro `$declare` (one in scope where this is
/// invoked): `surfaces { Kind "name" => scatter, evaluate, kernel name; … }`,
/// then `escaped => kernel name;`, each line with its doc comment. The
/// name is the one scenes and settings use.
macro_rules! classes {
    ($declare:ident) => {
        $declare! {
            surfaces {
                /// Lambertian reflector, cosine-weighted sampling.
                Diffuse "diffuse" => $crate::material::diffuse::scatter, $crate::material::diffuse::evaluate, wf_shade_diffuse;
                /// Mirror reflection perturbed inside a roughness ball.
                Metal "metal" => $crate::material::metal::scatter, $crate::material::no_density, wf_shade_metal;
                /// Glass-like: Fresnel reflect-or-refract with Beer–Lambert absorption.
                Dielectric "dielectric" => $crate::material::dielectric::scatter, $crate::material::no_density, wf_shade_dielectric;
                /// A clear coat over a noise-textured diffuse base: a material of tunable cost.
                Coated "coated" => $crate::material::coated::scatter, $crate::material::coated::evaluate, wf_shade_coated;
                /// A pure emitter: emits on its front face and absorbs every path.
                Emissive "emissive" => $crate::material::absorb, $crate::material::no_density, wf_shade_emissive;
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
            $($(#[$doc:meta])* $surface:ident $name:literal => $scatter:path, $evaluate:path, $_kernel:ident;)*
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
            /// Every kind, in [`ShadeClass`] order.
            pub const ALL: [MaterialKind; [$(MaterialKind::$surface,)*].len()] = [$(MaterialKind::$surface,)*];

            /// The name scenes and settings use.
            pub fn name(self) -> &'static str {
                match self {
                    $(MaterialKind::$surface => $name,)*
                }
            }

            /// The shading class of a material of this kind.
            #[inline(always)]
            pub fn class(self) -> ShadeClass {
                match self {
                    $(MaterialKind::$surface => ShadeClass::$surface,)*
                }
            }
        }

        impl Bsdf for AnyMaterial {
            #[inline(always)]
            fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
                match material.kind {
                    $(MaterialKind::$surface if input.materials.contains(MaterialKind::$surface) => {
                        $scatter(material, input)
                    })*
                    _ => Scatter::Absorbed,
                }
            }

            #[inline(always)]
            fn evaluate(material: &Material, input: &ScatterInput, dir: Vec3) -> Option<Evaluated> {
                match material.kind {
                    $(MaterialKind::$surface if input.materials.contains(MaterialKind::$surface) => {
                        $evaluate(material, input, dir)
                    })*
                    _ => None,
                }
            }
        }

        /// One marker type per shading class.
        pub mod class {
            $($(#[$doc])* pub struct $surface;)*
            $(#[$escaped_doc])* pub struct Escaped;
        }

        $(
            impl Shader for class::$surface {
                const CLASS: ShadeClass = ShadeClass::$surface;
            }

            impl Bsdf for class::$surface {
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
