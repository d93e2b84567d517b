//! How each shading class scatters: the [`Bsdf`] of each class's marker
//! type (one line per class, naming its functions), the [`Shader`] that
//! ties a marker to its class, and [`AnyMaterial`], the dispatch over
//! every class for the megakernel, the drain and the CPU back ends. The
//! classes are [`crate::shading`]'s table; the dispatch is derived from it,
//! so a class without its line here does not compile.

use super::{Evaluated, Material, Scatter, ScatterInput, absorb, coated, dielectric, diffuse, metal, no_density};
use crate::math::Vec3;
use crate::shading::{MaterialKind, ShadeClass, class};

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

/// Every material, dispatching on its kind over the kinds its kernel holds
/// ([`ScatterInput::materials`]) (the megakernel, the drain and the CPU back ends; the
/// wavefront runs one kernel per class instead). A material of a kind left
/// out absorbs: the host binds every kind its scene has.
pub struct AnyMaterial;

/// The [`Bsdf`] of class `$class`: its scattering and evaluation functions.
macro_rules! bsdf {
    ($class:ident => $scatter:path, $evaluate:path) => {
        impl Bsdf for class::$class {
            #[inline(always)]
            fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
                $scatter(material, input)
            }

            #[inline(always)]
            fn evaluate(material: &Material, input: &ScatterInput, dir: Vec3) -> Option<Evaluated> {
                $evaluate(material, input, dir)
            }
        }
    };
}

bsdf!(Diffuse => diffuse::scatter, diffuse::evaluate);
bsdf!(Metal => metal::scatter, no_density);
bsdf!(Dielectric => dielectric::scatter, no_density);
bsdf!(Coated => coated::scatter, coated::evaluate);
bsdf!(Emissive => absorb, no_density);
bsdf!(Escaped => absorb, no_density);

/// Each class's [`Shader`] and [`AnyMaterial`]'s dispatch, from the class
/// table ([`crate::shading`]'s `classes!`).
macro_rules! dispatch {
    (
        surfaces {
            $($(#[$doc:meta])* $surface:ident $name:literal => $_kernel:ident;)*
        }
        $(#[$escaped_doc:meta])* escaped => $_escaped_kernel:ident;
    ) => {
        impl Bsdf for AnyMaterial {
            #[inline(always)]
            fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
                match material.kind {
                    $(MaterialKind::$surface if input.materials.contains(MaterialKind::$surface) => {
                        <class::$surface as Bsdf>::scatter(material, input)
                    })*
                    _ => Scatter::Absorbed,
                }
            }

            #[inline(always)]
            fn evaluate(material: &Material, input: &ScatterInput, dir: Vec3) -> Option<Evaluated> {
                match material.kind {
                    $(MaterialKind::$surface if input.materials.contains(MaterialKind::$surface) => {
                        <class::$surface as Bsdf>::evaluate(material, input, dir)
                    })*
                    _ => None,
                }
            }
        }

        $(
            impl Shader for class::$surface {
                const CLASS: ShadeClass = ShadeClass::$surface;
            }
        )*

        impl Shader for class::Escaped {
            const CLASS: ShadeClass = ShadeClass::Escaped;
        }
    };
}

crate::shading::classes!(dispatch);
