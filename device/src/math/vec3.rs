//! Three-component vectors for points, directions and normals.

use super::scalar;
use core::ops::{Add, AddAssign, Div, Index, Mul, Neg, Sub};

/// A vector in world space (points, directions and normals alike).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec3 {
    /// x component.
    pub x: f32,
    /// y component.
    pub y: f32,
    /// z component.
    pub z: f32,
}

const _: () = assert!(core::mem::size_of::<Vec3>() == 12 && core::mem::align_of::<Vec3>() == 4);
// SAFETY: `#[repr(C)]`, three `f32`: the size asserted above is the sum of
// the fields, so there is no padding.
unsafe impl crate::kernel::AsBytes for Vec3 {}

impl Vec3 {
    /// The zero vector.
    pub const ZERO: Vec3 = Vec3::new(0.0, 0.0, 0.0);

    /// Builds a vector from its components.
    #[inline(always)]
    pub const fn new(x: f32, y: f32, z: f32) -> Self {
        Vec3 { x, y, z }
    }

    /// The same value in every component.
    #[inline(always)]
    pub const fn splat(v: f32) -> Self {
        Vec3::new(v, v, v)
    }

    /// Dot product.
    #[inline(always)]
    pub fn dot(self, o: Vec3) -> f32 {
        scalar::fma(self.x, o.x, scalar::fma(self.y, o.y, self.z * o.z))
    }

    /// Cross product (right-handed).
    #[inline(always)]
    pub fn cross(self, o: Vec3) -> Vec3 {
        Vec3::new(
            scalar::fma(self.y, o.z, -(self.z * o.y)),
            scalar::fma(self.z, o.x, -(self.x * o.z)),
            scalar::fma(self.x, o.y, -(self.y * o.x)),
        )
    }

    /// `self * m + a`, each component fused (one rounding).
    #[inline(always)]
    pub fn mul_add(self, m: Vec3, a: Vec3) -> Vec3 {
        Vec3::new(
            scalar::fma(self.x, m.x, a.x),
            scalar::fma(self.y, m.y, a.y),
            scalar::fma(self.z, m.z, a.z),
        )
    }

    /// Squared Euclidean length.
    #[inline(always)]
    pub fn length_squared(self) -> f32 {
        self.dot(self)
    }

    /// Euclidean length.
    #[inline(always)]
    pub fn length(self) -> f32 {
        scalar::sqrt(self.length_squared())
    }

    /// The unit vector in the same direction (the zero vector stays zero-length NaN-free only if non-zero).
    #[inline(always)]
    pub fn normalized(self) -> Vec3 {
        self / self.length()
    }

    /// Component-wise product.
    #[inline(always)]
    pub fn mul_elem(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x * o.x, self.y * o.y, self.z * o.z)
    }

    /// Component-wise minimum.
    #[inline(always)]
    pub fn min(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x.min(o.x), self.y.min(o.y), self.z.min(o.z))
    }

    /// Component-wise maximum.
    #[inline(always)]
    pub fn max(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x.max(o.x), self.y.max(o.y), self.z.max(o.z))
    }

    /// Largest absolute component.
    #[inline(always)]
    pub fn max_abs_component(self) -> f32 {
        self.x.abs().max(self.y.abs()).max(self.z.abs())
    }

    /// True when every component is finite.
    #[inline(always)]
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite() && self.z.is_finite()
    }

    /// Mirror reflection of `self` (pointing at the surface) about `normal`.
    #[inline(always)]
    pub fn reflect(self, normal: Vec3) -> Vec3 {
        self - normal * (2.0 * self.dot(normal))
    }
}

impl Add for Vec3 {
    type Output = Vec3;
    #[inline(always)]
    fn add(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}

impl AddAssign for Vec3 {
    #[inline(always)]
    fn add_assign(&mut self, o: Vec3) {
        *self = *self + o;
    }
}

impl Sub for Vec3 {
    type Output = Vec3;
    #[inline(always)]
    fn sub(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}

impl Neg for Vec3 {
    type Output = Vec3;
    #[inline(always)]
    fn neg(self) -> Vec3 {
        Vec3::new(-self.x, -self.y, -self.z)
    }
}

impl Mul<f32> for Vec3 {
    type Output = Vec3;
    #[inline(always)]
    fn mul(self, s: f32) -> Vec3 {
        Vec3::new(self.x * s, self.y * s, self.z * s)
    }
}

impl Div<f32> for Vec3 {
    type Output = Vec3;
    #[inline(always)]
    fn div(self, s: f32) -> Vec3 {
        Vec3::new(self.x / s, self.y / s, self.z / s)
    }
}

impl Index<usize> for Vec3 {
    type Output = f32;
    /// Component by axis: 0 is x, 1 is y, anything else z.
    #[inline(always)]
    fn index(&self, axis: usize) -> &f32 {
        match axis {
            0 => &self.x,
            1 => &self.y,
            _ => &self.z,
        }
    }
}
