//! The one table of shading classes. Each line declares a class: its
//! material kind (for surfaces), its scattering function and its wavefront
//! shading kernel. Everything that depends on the set of classes derives
//! from this table:
//!
//! * [`MaterialKind`] (what a scene's material can be) and [`ShadeClass`]
//!   (the surfaces plus escaped rays), with [`ShadeClass::ALL`] and
//!   [`ShadeClass::COUNT`];
//! * [`MaterialKind::class`] and the megakernel's dispatch, [`scatter`];
//! * the marker types in [`class`], each a [`Shader`], and one wavefront
//!   shading kernel per class ([`crate::kernels::wavefront::Shade`]) with
//!   its entry-point name;
//! * the wavefront's shading queues and per-class counters, which are
//!   arrays of [`ShadeClass::COUNT`], and the divergence counters per
//!   kernel.
//!
//! Adding a material is a new line here, its `scatter` function in
//! [`crate::material`], and its fields in the host's scene schema.

use crate::kernel::EntryPoint;
use crate::kernels::wavefront::{Shade, WavefrontArgs};
use crate::material::{self, Material, Scatter, ScatterInput};

/// One shading class, as a type: which class, and how it scatters.
pub trait Shader {
    /// The class (and queue) it shades.
    const CLASS: ShadeClass;
    /// The class's wavefront shading kernel.
    type Kernel: EntryPoint<Args = WavefrontArgs>;
    /// The class's scattering function (escaped rays never call it).
    fn scatter(material: &Material, input: &ScatterInput) -> Scatter;
}

/// Something done with a shading class's type, chosen at run time with
/// [`ShadeClass::visit`] (launching its kernel, naming it).
pub trait ClassVisitor {
    /// What the visit returns.
    type Output;
    /// Does it for class `S`.
    fn visit<S: Shader>(self) -> Self::Output;
}

macro_rules! shading_classes {
    (
        surfaces {
            $($(#[$doc:meta])* $surface:ident => $scatter:path, $kernel:ident;)*
        }
        $(#[$escaped_doc:meta])* escaped => $escaped_kernel:ident;
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

            /// Runs `visitor` with this class's type.
            #[inline(always)]
            pub fn visit<V: ClassVisitor>(self, visitor: V) -> V::Output {
                match self {
                    $(ShadeClass::$surface => visitor.visit::<class::$surface>(),)*
                    ShadeClass::Escaped => visitor.visit::<class::Escaped>(),
                }
            }
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
                type Kernel = Shade<class::$surface>;
                #[inline(always)]
                fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
                    $scatter(material, input)
                }
            }
        )*

        impl Shader for class::Escaped {
            const CLASS: ShadeClass = ShadeClass::Escaped;
            type Kernel = Shade<class::Escaped>;
            #[inline(always)]
            fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
                material::absorb(material, input)
            }
        }

        crate::kernel::entry_points! {
            $($kernel => Shade<class::$surface>,)*
            $escaped_kernel => Shade<class::Escaped>,
        }
    };
}

shading_classes! {
    surfaces {
        /// Lambertian reflector, cosine-weighted sampling.
        Diffuse => material::diffuse::scatter, wf_shade_diffuse;
        /// Mirror reflection perturbed inside a roughness ball.
        Metal => material::metal::scatter, wf_shade_metal;
        /// Glass-like: Fresnel reflect-or-refract with Beer–Lambert absorption.
        Dielectric => material::dielectric::scatter, wf_shade_dielectric;
        /// A pure emitter: emits on its front face and absorbs every path.
        Emissive => material::absorb, wf_shade_emissive;
    }
    /// Rays that escaped to the background.
    escaped => wf_shade_escaped;
}

/// The name of class `class`'s shading kernel.
pub fn kernel_of(class: ShadeClass) -> &'static str {
    struct Name;
    impl ClassVisitor for Name {
        type Output = &'static str;
        fn visit<S: Shader>(self) -> &'static str {
            S::Kernel::NAME
        }
    }
    class.visit(Name)
}
