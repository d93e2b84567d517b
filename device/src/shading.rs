//! The one table of shading classes. Each line declares a class: its
//! material kind (for surfaces), its name and the name of its wavefront
//! shading kernel. Everything that depends on the set of classes derives
//! from this table:
//!
//! * [`MaterialKind`] (what a scene's material can be), its names and its
//!   [`Feature::Material`](crate::features::Feature::Material)s, and [`ShadeClass`]
//!   (the surfaces plus escaped rays), with [`ShadeClass::ALL`] and
//!   [`ShadeClass::COUNT`];
//! * [`MaterialKind::class`], and the marker types in [`class`];
//! * how each class scatters, and the megakernel's dispatch over them
//!   (`material::dispatch`, which hands its own macro to `classes!`);
//! * the wavefront's shading kernels, one entry point per class, which
//!   `kernels::shade` declares the same way (so this module needs nothing
//!   of the kernels);
//! * the wavefront's shading queues and per-class counters, which are
//!   arrays of [`ShadeClass::COUNT`], and the divergence counters per
//!   kernel.
//!
//! Adding a material is a new line here, its `scatter` and `evaluate`
//! functions in `material` and the line of `material::dispatch` that names
//! them, and its fields in the host's scene schema.
//!
//! The table declares the classes alone: how each scatters is
//! `material`'s, which reads the classes from here, so this module imports
//! nothing of it but the count of the noise's variants.

/// The class whose materials come in variants with different programs
/// (the coated material's noise bases), whose queue the wavefront can sort
/// by variant ([`crate::launch::MaterialSort`]).
pub const SORTED_CLASS: ShadeClass = ShadeClass::Coated;

/// Variants a material of [`SORTED_CLASS`] can take
/// ([`crate::material::Material::variant`]).
pub const VARIANTS: usize = crate::noise::BASES as usize;

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

/// The table, handed to the macro `$declare` (one in scope where this is
/// invoked): `surfaces { Kind "name" => kernel name; … }`,
/// then `escaped => kernel name;`, each line with its doc comment. The
/// name is the one scenes and settings use.
macro_rules! classes {
    ($declare:ident) => {
        $declare! {
            surfaces {
                /// Lambertian reflector, cosine-weighted sampling.
                Diffuse "diffuse" => wf_shade_diffuse;
                /// Mirror reflection perturbed inside a roughness ball.
                Metal "metal" => wf_shade_metal;
                /// Glass-like: Fresnel reflect-or-refract with Beer–Lambert absorption.
                Dielectric "dielectric" => wf_shade_dielectric;
                /// A clear coat over a noise-textured diffuse base: a material of tunable cost.
                Coated "coated" => wf_shade_coated;
                /// A pure emitter: emits on its front face and absorbs every path.
                Emissive "emissive" => wf_shade_emissive;
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
            $($(#[$doc:meta])* $surface:ident $name:literal => $_kernel:ident;)*
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

        /// One marker type per shading class.
        pub mod class {
            $($(#[$doc])* pub struct $surface;)*
            $(#[$escaped_doc])* pub struct Escaped;
        }

    };
}

classes!(shading_classes);
