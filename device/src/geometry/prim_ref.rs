//! Compact references to primitives of any type.

/// The primitive types.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrimKind {
    /// [`super::Sphere`].
    Sphere = 0,
    /// [`super::Parallelepiped`] (a box).
    Parallelepiped = 1,
    /// [`super::Polygon`].
    Polygon = 2,
    /// [`super::Triangle`].
    Triangle = 3,
}

/// A set of primitive kinds: those a kernel holds the intersection code of
/// (the primitive bits of its [`Features`](crate::features::Features)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrimKinds(u32);

impl PrimKinds {
    /// Every kind.
    pub const ALL: PrimKinds = PrimKinds(u32::MAX);

    /// The set whose bit `1 << kind` is set for each kind it holds (other
    /// bits are ignored).
    #[inline(always)]
    pub const fn from_bits(bits: u32) -> Self {
        PrimKinds(bits)
    }

    /// Whether the set holds `kind`.
    #[inline(always)]
    pub const fn contains(self, kind: PrimKind) -> bool {
        self.0 & 1 << kind as u32 != 0
    }
}

impl PrimKind {
    /// Every kind, in order.
    pub const ALL: [PrimKind; 4] = [
        PrimKind::Sphere,
        PrimKind::Parallelepiped,
        PrimKind::Polygon,
        PrimKind::Triangle,
    ];

    /// The name scenes and settings use.
    pub fn name(self) -> &'static str {
        match self {
            PrimKind::Sphere => "sphere",
            PrimKind::Parallelepiped => "box",
            PrimKind::Polygon => "polygon",
            PrimKind::Triangle => "triangle",
        }
    }

    /// The name of lights of this kind, as a feature
    /// ([`crate::features::Feature::Light`]).
    pub fn light_name(self) -> &'static str {
        match self {
            PrimKind::Sphere => "sphere-light",
            PrimKind::Parallelepiped => "box-light",
            PrimKind::Polygon => "polygon-light",
            PrimKind::Triangle => "triangle-light",
        }
    }
}

/// A primitive's type and its index in that type's array, packed in 32 bits
/// (type in the top two bits).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PrimRef(u32);

// SAFETY: `#[repr(transparent)]` over a `u32`.
unsafe impl crate::kernel::AsBytes for PrimRef {}

const INDEX_BITS: u32 = 30;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;

impl PrimRef {
    /// The largest index a reference can hold.
    pub const MAX_INDEX: u32 = INDEX_MASK;

    /// Packs a reference; `index` must not exceed [`PrimRef::MAX_INDEX`].
    #[inline(always)]
    pub const fn new(kind: PrimKind, index: u32) -> Self {
        PrimRef(((kind as u32) << INDEX_BITS) | (index & INDEX_MASK))
    }

    /// The primitive's type.
    #[inline(always)]
    pub fn kind(self) -> PrimKind {
        match self.0 >> INDEX_BITS {
            0 => PrimKind::Sphere,
            1 => PrimKind::Parallelepiped,
            2 => PrimKind::Polygon,
            _ => PrimKind::Triangle,
        }
    }

    /// The packed 32-bit value.
    #[inline(always)]
    pub fn raw(self) -> u32 {
        self.0
    }

    /// The index within that type's array.
    #[inline(always)]
    pub fn index(self) -> u32 {
        self.0 & INDEX_MASK
    }
}
