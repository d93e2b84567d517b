//! What a kernel is built for, declared once. Each [`Feature`] is code a
//! kernel holds only where its scene uses it: one material kind's
//! scattering, one primitive kind's intersection, next-event estimation,
//! texture lookups. A render's [`Features`] are derived from its scene and
//! settings (the host's `RenderJob::features`), never named by hand, and
//! every back end runs the same code under them.
//!
//! **Binding.** The PTX holds one entry point per kernel (and acceleration
//! structure), not one per feature set. A kernel reads its features through
//! [`Features::bound`], which on the GPU is an opaque constant: the
//! instruction `mov.u32 %r, 0x5EA7F00D` ([`SENTINEL_TEXT`]). Before the
//! driver compiles a kernel's module the host writes the render's set over
//! that literal, so `ptxas` sees a constant and removes the code of every
//! feature left out, as OptiX does with launch parameters it binds and
//! Cycles with its `KERNEL_FEATURE_*` masks. On the CPU the set is a field
//! of the scene view, and the same code branches on it: any superset of a
//! scene's features renders the same image as the set itself.
//!
//! A feature left out behaves as if the scene had none of it: a material of
//! a kind left out absorbs, a primitive of a kind left out is never hit,
//! colours are their constants. The host binds a superset of what the
//! render uses, so none of that happens in a render.

use crate::geometry::{PrimKind, PrimKinds};
use crate::shading::{MaterialKind, MaterialKinds};
#[cfg(not(target_arch = "nvptx64"))]
use core::fmt;

pub use crate::bound::{SENTINEL, SENTINEL_TEXT};

const _: () = assert!(SENTINEL & !Features::ALL.0 != 0);
const _: () = assert!(Features::ALL.0 & crate::bound::FAST_ARITHMETIC == 0);
// The random numbers read the Sobol sampler's bit without naming this module.
const _: () = assert!(Feature::Sobol.bit() == crate::rng::SOBOL_FEATURE_BIT);

/// One feature a kernel can hold or leave out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Materials of one kind: its scattering and evaluation code.
    Material(MaterialKind),
    /// Primitives of one kind: its intersection code.
    Primitive(PrimKind),
    /// Next-event estimation: light sampling, shadow rays and multiple
    /// importance sampling.
    Nee,
    /// Texture lookups: colours that are not constant.
    Textures,
    /// The Sobol sampler ([`crate::rng::Sampler::Sobol`]): Owen-scrambled
    /// Sobol points and their tables. Without it, every number is a hash.
    Sobol,
    /// Lights of one primitive kind ([`LIGHT_KINDS`]): next-event
    /// estimation's sampling of them and its density where a path hits one.
    /// Without it, next-event estimation passes such lights by.
    Light(PrimKind),
}

/// The primitive kinds a light can be (a box never emits as a light).
pub const LIGHT_KINDS: [PrimKind; 3] = [PrimKind::Sphere, PrimKind::Polygon, PrimKind::Triangle];

/// The first bit of the primitive kinds (the material kinds take the bits
/// below it).
const PRIMITIVE_BITS: u32 = 8;
/// The first bit of the light-transport features.
const TRANSPORT_BITS: u32 = PRIMITIVE_BITS + 8;
/// The first bit of the light kinds (after next-event estimation, textures
/// and the Sobol sampler), one per primitive kind.
const LIGHT_BITS: u32 = TRANSPORT_BITS + 3;

const _: () = assert!(MaterialKind::ALL.len() <= PRIMITIVE_BITS as usize);
const _: () = assert!(PrimKind::ALL.len() <= (TRANSPORT_BITS - PRIMITIVE_BITS) as usize);
const _: () = assert!(LIGHT_BITS + PrimKind::ALL.len() as u32 <= 32);

/// Number of features.
const COUNT: usize = MaterialKind::ALL.len() + PrimKind::ALL.len() + 3 + LIGHT_KINDS.len();

impl Feature {
    /// Every feature: the material kinds, the primitive kinds, next-event
    /// estimation, textures, the Sobol sampler, then the light kinds.
    pub const ALL: [Feature; COUNT] = {
        let mut all = [Feature::Nee; COUNT];
        let mut i = 0;
        let mut k = 0;
        while k < MaterialKind::ALL.len() {
            all[i] = Feature::Material(MaterialKind::ALL[k]);
            (i, k) = (i + 1, k + 1);
        }
        k = 0;
        while k < PrimKind::ALL.len() {
            all[i] = Feature::Primitive(PrimKind::ALL[k]);
            (i, k) = (i + 1, k + 1);
        }
        all[i] = Feature::Nee;
        all[i + 1] = Feature::Textures;
        all[i + 2] = Feature::Sobol;
        i += 3;
        k = 0;
        while k < LIGHT_KINDS.len() {
            all[i] = Feature::Light(LIGHT_KINDS[k]);
            (i, k) = (i + 1, k + 1);
        }
        all
    };

    /// Its bit in a [`Features`] set.
    #[inline(always)]
    pub const fn bit(self) -> u32 {
        1 << match self {
            Feature::Material(kind) => kind as u32,
            Feature::Primitive(kind) => PRIMITIVE_BITS + kind as u32,
            Feature::Nee => TRANSPORT_BITS,
            Feature::Textures => TRANSPORT_BITS + 1,
            Feature::Sobol => TRANSPORT_BITS + 2,
            Feature::Light(kind) => LIGHT_BITS + kind as u32,
        }
    }

    /// The name settings and reports use: the material or primitive kind's
    /// name, `nee`, `textures`, `sobol`, or the light kind's (`sphere-light`).
    pub fn name(self) -> &'static str {
        match self {
            Feature::Material(kind) => kind.name(),
            Feature::Primitive(kind) => kind.name(),
            Feature::Nee => "nee",
            Feature::Textures => "textures",
            Feature::Sobol => "sobol",
            Feature::Light(kind) => kind.light_name(),
        }
    }
}

/// A set of [`Feature`]s: what a kernel holds, or what a render uses.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Features(u32);

// SAFETY: `#[repr(transparent)]` over a `u32`.
unsafe impl crate::kernel::AsBytes for Features {}

impl Features {
    /// No feature.
    pub const NONE: Features = Features(0);

    /// Every feature.
    pub const ALL: Features = {
        let mut bits = 0;
        let mut i = 0;
        while i < COUNT {
            bits |= Feature::ALL[i].bit();
            i += 1;
        }
        Features(bits)
    };

    /// The set holding `features`.
    pub fn of(features: impl IntoIterator<Item = Feature>) -> Features {
        features.into_iter().fold(Features::NONE, Features::with)
    }

    /// This set and `feature`.
    #[must_use]
    pub const fn with(self, feature: Feature) -> Features {
        Features(self.0 | feature.bit())
    }

    /// Every feature of this set and of `other`.
    #[must_use]
    pub const fn union(self, other: Features) -> Features {
        Features(self.0 | other.0)
    }

    /// The features of this set that `other` lacks.
    #[must_use]
    pub const fn without(self, other: Features) -> Features {
        Features(self.0 & !other.0)
    }

    /// Whether the set holds `feature`.
    #[inline(always)]
    pub const fn contains(self, feature: Feature) -> bool {
        self.0 & feature.bit() != 0
    }

    /// Whether the set holds every feature of `other`.
    pub const fn holds(self, other: Features) -> bool {
        other.0 & !self.0 == 0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The material kinds of the set.
    #[inline(always)]
    pub const fn materials(self) -> MaterialKinds {
        MaterialKinds::from_bits(self.0 & ((1 << PRIMITIVE_BITS) - 1))
    }

    /// The primitive kinds of the set.
    #[inline(always)]
    pub const fn primitives(self) -> PrimKinds {
        PrimKinds::from_bits(self.0 >> PRIMITIVE_BITS & ((1 << (TRANSPORT_BITS - PRIMITIVE_BITS)) - 1))
    }

    /// The light kinds of the set: the primitive kinds whose lights
    /// next-event estimation samples.
    #[inline(always)]
    pub const fn lights(self) -> PrimKinds {
        PrimKinds::from_bits(self.0 >> LIGHT_BITS & ((1 << PrimKind::ALL.len()) - 1))
    }

    /// The features of the set, in [`Feature::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL.into_iter().filter(move |f| self.contains(*f))
    }

    /// The set as bits, as the host binds it into a kernel.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// The set whose bits are `bits`; `None` where a bit is no feature's.
    pub const fn from_bits(bits: u32) -> Option<Features> {
        if bits & !Features::ALL.0 == 0 {
            Some(Features(bits))
        } else {
            None
        }
    }

    /// The features the running code holds. On the GPU: the set the host
    /// bound into this kernel's module (the receiver, which carries the
    /// same set, is not read, so that the compiler sees a constant). On
    /// the CPU: the receiver.
    #[inline(always)]
    pub fn bound(self) -> Features {
        // The bound word also carries the arithmetic, which is no feature.
        Features(crate::bound::bits(self.0) & !crate::bound::FAST_ARITHMETIC)
    }
}

// Host only: on the GPU, `core::fmt` would be an external function the
// driver cannot load.
#[cfg(not(target_arch = "nvptx64"))]
impl fmt::Display for Features {
    /// The names of its features joined by `+`, or `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        for (i, feature) in self.iter().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            f.write_str(feature.name())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::ToString;

    #[test]
    fn every_feature_has_its_own_bit_and_its_own_name() {
        for (i, a) in Feature::ALL.iter().enumerate() {
            assert_eq!(a.bit().count_ones(), 1, "{a:?}");
            for b in &Feature::ALL[i + 1..] {
                assert_ne!(a.bit(), b.bit(), "{a:?} and {b:?}");
                assert_ne!(a.name(), b.name());
            }
        }
        assert_eq!(Features::ALL.bits().count_ones() as usize, Feature::ALL.len());
    }

    #[test]
    fn a_set_holds_what_it_was_given_and_names_it_in_order() {
        let set = Features::of([Feature::Nee, Feature::Material(MaterialKind::Metal)]);
        assert!(set.contains(Feature::Nee) && set.contains(Feature::Material(MaterialKind::Metal)));
        assert!(!set.contains(Feature::Textures));
        assert_eq!(set.to_string(), "metal+nee");
        assert_eq!(Features::NONE.to_string(), "none");
        assert!(Features::ALL.holds(set) && !set.holds(Features::ALL));
        assert_eq!(Features::ALL.without(set).union(set), Features::ALL);
    }

    #[test]
    fn bits_that_are_no_features_are_refused_and_the_sentinel_is_one_of_them() {
        assert_eq!(Features::from_bits(Features::ALL.bits()), Some(Features::ALL));
        assert_eq!(Features::from_bits(SENTINEL), None);
    }

    #[test]
    fn on_the_cpu_the_bound_set_is_the_one_carried() {
        let set = Features::of([Feature::Textures]);
        assert_eq!(set.bound(), set);
    }
}
