//! Axis-aligned bounding boxes: the acceleration structures' currency.

use crate::math::{Ray, Vec3};

/// An axis-aligned box; empty when `min > max` on some axis.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: Vec3,
    /// Upper corner.
    pub max: Vec3,
}

const _: () = assert!(core::mem::size_of::<Aabb>() == 24);

/// A ray prepared for many box tests: origin and reciprocal direction.
#[derive(Clone, Copy, Debug)]
pub struct RayBoxTest {
    origin: Vec3,
    inv_dir: Vec3,
}

impl RayBoxTest {
    /// Precomputes `1 / dir` (infinite for zero components, which the slab
    /// test handles).
    #[inline(always)]
    pub fn new(ray: &Ray) -> Self {
        RayBoxTest {
            origin: ray.origin,
            inv_dir: Vec3::new(1.0 / ray.dir.x, 1.0 / ray.dir.y, 1.0 / ray.dir.z),
        }
    }

    /// The reciprocal direction.
    #[inline(always)]
    pub fn inv_dir(&self) -> Vec3 {
        self.inv_dir
    }

    /// The ray origin.
    #[inline(always)]
    pub fn origin(&self) -> Vec3 {
        self.origin
    }

    /// The ray's entry distance into `b` when it overlaps `(t_min, t_max)`.
    ///
    /// Near and far planes are chosen by the sign of the reciprocal
    /// direction, not by comparing the distances, so the NaN of `0 · ∞` (a
    /// ray lying in a face plane) lands in a slot that `max`/`min` ignore and
    /// such rays count as inside the slab.
    #[inline(always)]
    pub fn enter(&self, b: &Aabb, t_min: f32, t_max: f32) -> Option<f32> {
        let t0 = (b.min - self.origin).mul_elem(self.inv_dir);
        let t1 = (b.max - self.origin).mul_elem(self.inv_dir);
        let order = |inv: f32, a: f32, b: f32| if inv >= 0.0 { (a, b) } else { (b, a) };
        let (nx, fx) = order(self.inv_dir.x, t0.x, t1.x);
        let (ny, fy) = order(self.inv_dir.y, t0.y, t1.y);
        let (nz, fz) = order(self.inv_dir.z, t0.z, t1.z);
        let enter = larger(larger(larger(t_min, nx), ny), nz);
        let exit = smaller(smaller(smaller(t_max, fx), fy), fz);
        if enter <= exit { Some(enter) } else { None }
    }
}

/// The larger of `acc` and `x`, ignoring a NaN `x` (`acc` is never NaN).
/// The GPU's `max` instruction does this; on the CPU, `f32::max` costs
/// extra NaN checks that the comparison (one `maxss`) does not need. The
/// two differ only in the sign of a zero result, which no caller sees.
#[inline(always)]
fn larger(acc: f32, x: f32) -> f32 {
    if cfg!(target_arch = "nvptx64") {
        acc.max(x)
    } else if x > acc {
        x
    } else {
        acc
    }
}

/// The smaller of `acc` and `x`, ignoring a NaN `x`; see [`larger`].
#[inline(always)]
fn smaller(acc: f32, x: f32) -> f32 {
    if cfg!(target_arch = "nvptx64") {
        acc.min(x)
    } else if x < acc {
        x
    } else {
        acc
    }
}

impl Aabb {
    /// The empty box (the identity of [`Aabb::union`]).
    pub const EMPTY: Aabb = Aabb {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    /// The box around one point.
    #[inline(always)]
    pub fn point(p: Vec3) -> Self {
        Aabb { min: p, max: p }
    }

    /// The smallest box holding both.
    #[inline(always)]
    pub fn union(self, o: Aabb) -> Aabb {
        Aabb {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }

    /// The box grown to hold `p`.
    #[inline(always)]
    pub fn grow(self, p: Vec3) -> Aabb {
        self.union(Aabb::point(p))
    }

    /// True when the box holds no point.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.min.x > self.max.x || self.min.y > self.max.y || self.min.z > self.max.z
    }

    /// Extent along each axis.
    #[inline(always)]
    pub fn extent(&self) -> Vec3 {
        self.max - self.min
    }

    /// Centre point.
    #[inline(always)]
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Surface area (0 for an empty box).
    #[inline(always)]
    pub fn surface_area(&self) -> f32 {
        if self.is_empty() {
            return 0.0;
        }
        let e = self.extent();
        2.0 * (e.x * e.y + e.y * e.z + e.z * e.x)
    }

    /// The axis (0, 1, 2) of largest extent.
    #[inline(always)]
    pub fn longest_axis(&self) -> usize {
        let e = self.extent();
        if e.x >= e.y && e.x >= e.z {
            0
        } else if e.y >= e.z {
            1
        } else {
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Aabb {
        Aabb {
            min: Vec3::ZERO,
            max: Vec3::splat(1.0),
        }
    }

    #[test]
    fn slab_test_hits_misses_and_starts_inside() {
        let hit = Ray::new(Vec3::new(0.5, 0.5, 3.0), Vec3::new(0.0, 0.0, -1.0));
        assert_eq!(RayBoxTest::new(&hit).enter(&unit(), 0.0, f32::INFINITY), Some(2.0));
        assert_eq!(RayBoxTest::new(&hit).enter(&unit(), 0.0, 1.5), None);
        let miss = Ray::new(Vec3::new(1.5, 0.5, 3.0), Vec3::new(0.0, 0.0, -1.0));
        assert_eq!(RayBoxTest::new(&miss).enter(&unit(), 0.0, f32::INFINITY), None);
        let inside = Ray::new(Vec3::new(0.5, 0.5, 0.5), Vec3::new(1.0, 0.0, 0.0));
        assert_eq!(RayBoxTest::new(&inside).enter(&unit(), 0.0, f32::INFINITY), Some(0.0));
        let behind = Ray::new(Vec3::new(0.5, 0.5, 3.0), Vec3::new(0.0, 0.0, 1.0));
        assert_eq!(RayBoxTest::new(&behind).enter(&unit(), 0.0, f32::INFINITY), None);
    }

    #[test]
    fn ray_in_a_face_plane_is_kept() {
        // Runs exactly in the plane x = 0 of the box's face.
        let ray = Ray::new(Vec3::new(0.0, 0.5, 3.0), Vec3::new(0.0, 0.0, -1.0));
        assert!(RayBoxTest::new(&ray).enter(&unit(), 0.0, f32::INFINITY).is_some());
    }

    #[test]
    fn union_area_and_axis() {
        let b = Aabb::EMPTY
            .grow(Vec3::new(1.0, 2.0, 3.0))
            .grow(Vec3::new(-1.0, 0.0, 4.0));
        assert_eq!(b.extent(), Vec3::new(2.0, 2.0, 1.0));
        assert_eq!(b.surface_area(), 2.0 * (4.0 + 2.0 + 2.0));
        assert_eq!(Aabb::EMPTY.surface_area(), 0.0);
        assert_eq!(b.longest_axis(), 0);
    }
}
