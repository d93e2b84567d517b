//! The one table of shading classes. Each line declares a class: its
//! material kind (for surfaces), its scattering function and the name of
//! its wavefront shading kernel. Everything that depends on the set of
//! classes derives from this table:
//!
//! * [`MaterialKind`] (what a scene's material can be) and [`ShadeClass`]
//!   (the surfaces plus escaped rays), with [`ShadeClass::ALL`] and
//!   [`ShadeClass::COUNT`];
//! * [`MaterialKind::class`] and the megakernel's dispatch, [`scatter`];
//! * the marker types in [`class`], each a [`Shader`];
//! * the wavefront's shading kernels, one entry point per class, which
//!   `kernels::shade` declares by handing its own macro to
//!   `classes!` (so this module needs nothing of the kernels);
//! * the wavefront's shading queues and per-class counters, which are
//!   arrays of [`ShadeClass::COUNT`], and the divergence counters per
//!   kernel.
//!
//! Adding a material is a new line here, its `scatter` function in
//! [`crate::material`], and its fields in the host's scene schema.
//!
//! This module and [`crate::material`] import each other, and that circle
//! is the honest shape: the table names each material's scattering function
//! (and the types they take), while a [`Material`] names its
//! [`MaterialKind`], which only the table declares. Splitting them would
//! mean declaring the set of kinds twice.

use crate::material::{self, Material, Scatter, ScatterInput};

/// One shading class, as a type: which class, and how it scatters.
pub trait Shader {
    /// The class (and queue) it shades.
    const CLASS: ShadeClass;
    /// The class's scattering function (escaped rays never call it).
    fn scatter(material: &Material, input: &ScatterInput) -> Scatter;
}

/// The table, handed to the macro `$declare` (one in scope where this is
/// invoked): `surfaces { Kind => scatter function, kernel name; … }`, then
/// `escaped => kernel name;`, each line with its doc comment.
macro_rules! classes {
    ($declare:ident) => {
        $declare! {
            surfaces {
                /// Lambertian reflector, cosine-weighted sampling.
                Diffuse => $crate::material::diffuse::scatter, wf_shade_diffuse;
                /// Mirror reflection perturbed inside a roughness ball.
                Metal => $crate::material::metal::scatter, wf_shade_metal;
                /// Glass-like: Fresnel reflect-or-refract with Beer–Lambert absorption.
                Dielectric => $crate::material::dielectric::scatter, wf_shade_dielectric;
                /// A pure emitter: emits on its front face and absorbs every path.
                Emissive => $crate::material::absorb, wf_shade_emissive;
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
            $($(#[$doc:meta])* $surface:ident => $scatter:path, $_kernel:ident;)*
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

        /// Scatters a path at a surface of `material`, dispatching on its
        /// kind (the megakernel and the CPU back ends; the wavefront runs
        /// one kernel per class instead).
        #[inline(always)]
        pub fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
            match material.kind {
                $(MaterialKind::$surface => $scatter(material, input),)*
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
                #[inline(always)]
                fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
                    $scatter(material, input)
                }
            }
        )*

        impl Shader for class::Escaped {
            const CLASS: ShadeClass = ShadeClass::Escaped;
            #[inline(always)]
            fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
                material::absorb(material, input)
            }
        }
    };
}

classes!(shading_classes);
