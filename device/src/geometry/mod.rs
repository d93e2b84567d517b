//! Primitives and their ray intersections, and the scene's arrays of them
//! ([`Primitives`]).
//!
//! Every primitive reports an exact hit distance and the *outward* unit normal
//! at the hit, also for rays that start inside it; [`Hit::front_face`] tells
//! the two sides apart.

pub mod aabb;
pub mod hit;
pub mod parallelepiped;
pub mod polygon;
pub mod prim_ref;
pub mod primitives;
pub mod sampling;
pub mod sphere;
pub mod triangle;

pub use aabb::{Aabb, RayBoxTest};
pub use hit::{Hit, SurfaceHit};
pub use parallelepiped::Parallelepiped;
pub use polygon::Polygon;
pub use prim_ref::{PrimKind, PrimKinds, PrimRef};
pub use primitives::Primitives;
pub use sphere::Sphere;
pub use triangle::Triangle;

/// The range of ray distances a query accepts: hits with `min < t < max`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Exclusive lower bound.
    pub min: f32,
    /// Exclusive upper bound.
    pub max: f32,
}

impl Interval {
    /// Every positive distance.
    pub const POSITIVE: Interval = Interval {
        min: 0.0,
        max: f32::INFINITY,
    };

    /// True when `t` lies strictly inside the interval.
    #[inline(always)]
    pub fn contains(self, t: f32) -> bool {
        t > self.min && t < self.max
    }
}
