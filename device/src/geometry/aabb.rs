//! Axis-aligned bounding boxes: the acceleration structures' currency.

use crate::math::{Ray, Vec3, scalar};

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

/// A ray prepared for many box tests: its reciprocal direction and its
/// origin scaled by it, so that the distance to a plane is one fused
/// multiply-add ([`RayBoxTest::distances`]).
#[derive(Clone, Copy, Debug)]
pub struct RayBoxTest {
    inv_dir: Vec3,
    /// `-origin · inv_dir`, per component.
    neg_origin_inv: Vec3,
}

impl RayBoxTest {
    /// Precomputes `1 / dir` and the scaled origin. A direction component
    /// smaller than 2⁻⁶⁴ in magnitude counts as ±2⁻⁶⁴ (Aila and Laine's
    /// clamp, at 2⁻⁶⁴ rather than their 2⁻⁸⁰ so that `origin · inv_dir`
    /// stays finite for origins up to 2⁶⁴ from zero): every reciprocal is
    /// finite and the fused distances never meet `∞ - ∞`. A ray parallel to
    /// an axis gets distances of at least about 10¹⁹ times its offset to the
    /// planes normal to it, with the sign of the side it runs on. Where
    /// `origin · inv_dir` overflows all the same (an origin beyond 2⁶⁴ on
    /// an axis the ray nearly parallels) that axis's distances are NaN: it
    /// culls nothing, and the test stays conservative.
    #[inline(always)]
    pub fn new(ray: &Ray) -> Self {
        let reciprocal = |d: f32| {
            let tiny = f32::from_bits(TINY_DIRECTION.to_bits() | (d.to_bits() & SIGN_BIT));
            1.0 / if d.abs() < TINY_DIRECTION { tiny } else { d }
        };
        let inv_dir = Vec3::new(reciprocal(ray.dir.x), reciprocal(ray.dir.y), reciprocal(ray.dir.z));
        // An overflowed product would make every distance on its axis -∞
        // or +∞ whatever the plane, culling boxes the ray runs through;
        // NaN makes that axis cull nothing instead.
        let shift = |o: f32, inv: f32| finite_or_nan(-(o * inv));
        RayBoxTest {
            inv_dir,
            neg_origin_inv: Vec3::new(
                shift(ray.origin.x, inv_dir.x),
                shift(ray.origin.y, inv_dir.y),
                shift(ray.origin.z, inv_dir.z),
            ),
        }
    }

    /// The reciprocal direction.
    #[inline(always)]
    pub fn inv_dir(&self) -> Vec3 {
        self.inv_dir
    }

    /// `-origin · inv_dir` (NaN where it overflowed): the distance to a plane at coordinate `p` on
    /// axis `k` is `fma(p, inv_dir[k], neg_origin_inv[k])`.
    #[inline(always)]
    pub fn neg_origin_inv(&self) -> Vec3 {
        self.neg_origin_inv
    }

    /// The distances along the ray to the planes through `p` normal to
    /// each axis: `p · inv_dir - origin · inv_dir`, one fused multiply-add
    /// each.
    #[inline(always)]
    pub fn distances(&self, p: Vec3) -> Vec3 {
        p.mul_add(self.inv_dir, self.neg_origin_inv)
    }

    /// [`RayBoxTest::distances`] to a frame's origin `p`, for distances to
    /// planes measured from it (`q · step + frame`, the 8-wide BVH's
    /// quantised planes): NaN where one overflowed. An overflowed distance
    /// to a single plane is ±∞ with the right sign, but one used as a base
    /// would swamp every offset from it; NaN makes that axis cull nothing.
    #[inline(always)]
    pub fn frame_distances(&self, p: Vec3) -> Vec3 {
        let t = self.distances(p);
        Vec3::new(finite_or_nan(t.x), finite_or_nan(t.y), finite_or_nan(t.z))
    }

    /// The ray's entry distance into `b` when it overlaps `(t_min, t_max)`.
    #[inline(always)]
    pub fn enter(&self, b: &Aabb, t_min: f32, t_max: f32) -> Option<f32> {
        self.enter_between(self.distances(b.min), self.distances(b.max), (t_min, t_max))
    }

    /// The entry distance into the box whose lower planes lie at distances
    /// `t0` along the ray and upper planes at `t1`, when it overlaps
    /// `(t_min, t_max)`.
    ///
    /// Near and far planes are chosen by the sign of the reciprocal
    /// direction, not by comparing the distances, and a NaN distance (from
    /// a box with an infinite plane) lands in a slot that `max`/`min`
    /// ignore: such a box is kept, never culled by mistake.
    #[inline(always)]
    pub fn enter_between(&self, t0: Vec3, t1: Vec3, range: (f32, f32)) -> Option<f32> {
        let (enter, exit) = self.slab([t0.x, t0.y, t0.z], [t1.x, t1.y, t1.z], range);
        if enter <= exit { Some(enter) } else { None }
    }

    /// The slab test of [`RayBoxTest::enter_between`] on lanes, each lane
    /// one box: per lane, the entry and exit distances of the box whose
    /// lower planes lie at distances `t0[k]` along the ray and upper planes
    /// at `t1[k]`, clipped to `(t_min, t_max)`. The ray enters a lane's box
    /// where `enter <= exit`.
    ///
    /// Written once for [`f32`] (one box, every back end) and, on the host,
    /// for [`F32x8`] (eight boxes per instruction): the near/far choice is
    /// one branch on the ray, shared by every lane, and each lane then runs
    /// the same comparisons in the same order as the scalar test, so a
    /// lane's results equal the scalar test's for its box bit for bit.
    #[inline(always)]
    pub fn slab<L: SlabLanes>(&self, t0: [L; 3], t1: [L; 3], (t_min, t_max): (f32, f32)) -> (L, L) {
        let order = |inv: f32, a: L, b: L| if inv >= 0.0 { (a, b) } else { (b, a) };
        let (nx, fx) = order(self.inv_dir.x, t0[0], t1[0]);
        let (ny, fy) = order(self.inv_dir.y, t0[1], t1[1]);
        let (nz, fz) = order(self.inv_dir.z, t0[2], t1[2]);
        let enter = L::splat(t_min).larger(nx).larger(ny).larger(nz);
        let exit = L::splat(t_max).smaller(fx).smaller(fy).smaller(fz);
        (enter, exit)
    }
}

/// What the slab test ([`RayBoxTest::slab`]) runs on: one `f32` per box,
/// or (on the host) eight boxes in the lanes of an [`F32x8`]. Each
/// operation is one IEEE operation per lane, the same for both types, so
/// code written once over `SlabLanes` computes in every lane what it
/// computes for `f32`, bit for bit.
pub trait SlabLanes: Copy {
    /// Every lane `x`.
    fn splat(x: f32) -> Self;
    /// `self · m + a` per lane, fused (one rounding).
    fn mul_add(self, m: Self, a: Self) -> Self;
    /// Per lane, the larger of `self` and `x`, ignoring a NaN `x` (the
    /// slab test's `max`; `self` is never NaN).
    fn larger(self, x: Self) -> Self;
    /// Per lane, the smaller of `self` and `x`, ignoring a NaN `x` (the
    /// slab test's `min`).
    fn smaller(self, x: Self) -> Self;
}

impl SlabLanes for f32 {
    #[inline(always)]
    fn splat(x: f32) -> Self {
        x
    }

    #[inline(always)]
    fn mul_add(self, m: Self, a: Self) -> Self {
        scalar::fma(self, m, a)
    }

    #[inline(always)]
    fn larger(self, x: Self) -> Self {
        larger(self, x)
    }

    #[inline(always)]
    fn smaller(self, x: Self) -> Self {
        smaller(self, x)
    }
}

/// Eight `f32` lanes (the host's 256-bit vectors: one AVX instruction per
/// operation on x86-64-v3).
#[cfg(not(target_arch = "nvptx64"))]
pub type F32x8 = core::simd::f32x8;

/// The same operations as `f32`'s, lane by lane: `mul_add` is LLVM's
/// `fma` on vectors (`vfmadd`), correctly rounded per lane like
/// [`scalar::fma`]; `larger` and `smaller` select on the same comparisons
/// (`x > self`, `x < self`) as `f32`'s do off the GPU, so NaN lanes and
/// signed zeros come out the same.
#[cfg(not(target_arch = "nvptx64"))]
impl SlabLanes for F32x8 {
    #[inline(always)]
    fn splat(x: f32) -> Self {
        F32x8::splat(x)
    }

    #[inline(always)]
    fn mul_add(self, m: Self, a: Self) -> Self {
        // SAFETY: `simd_fma` requires a vector of floats, which `f32x8` is;
        // std's `StdFloat::mul_add` is this same call, which `core` lacks.
        unsafe { core::intrinsics::simd::simd_fma(self, m, a) }
    }

    #[inline(always)]
    fn larger(self, x: Self) -> Self {
        use core::simd::{Select, cmp::SimdPartialOrd};
        x.simd_gt(self).select(x, self)
    }

    #[inline(always)]
    fn smaller(self, x: Self) -> Self {
        use core::simd::{Select, cmp::SimdPartialOrd};
        x.simd_lt(self).select(x, self)
    }
}

/// The smallest direction component [`RayBoxTest`] divides by: 2⁻⁶⁴.
const TINY_DIRECTION: f32 = 5.421_011e-20;

/// `t`, or NaN where it overflowed: the slab test ignores a NaN distance,
/// where an infinite one would cull.
#[inline(always)]
fn finite_or_nan(t: f32) -> f32 {
    if t.is_finite() { t } else { f32::NAN }
}

/// An `f32`'s sign bit.
const SIGN_BIT: u32 = 0x8000_0000;

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
        // Parallel to x and z, beside the box on x: culled.
        let beside = Ray::new(Vec3::new(1.5, 0.5, 0.5), Vec3::new(0.0, 1.0, 0.0));
        assert_eq!(RayBoxTest::new(&beside).enter(&unit(), 0.0, f32::INFINITY), None);
        let inside = Ray::new(Vec3::new(0.5, 0.5, 0.5), Vec3::new(1.0, 0.0, 0.0));
        assert_eq!(RayBoxTest::new(&inside).enter(&unit(), 0.0, f32::INFINITY), Some(0.0));
        let behind = Ray::new(Vec3::new(0.5, 0.5, 3.0), Vec3::new(0.0, 0.0, 1.0));
        assert_eq!(RayBoxTest::new(&behind).enter(&unit(), 0.0, f32::INFINITY), None);
    }

    #[test]
    fn distances_are_exact_where_the_products_are() {
        let ray = Ray::new(Vec3::new(1.0, -2.0, 0.5), Vec3::new(0.5, -0.25, 2.0));
        let t = RayBoxTest::new(&ray).distances(Vec3::new(3.0, -4.0, 4.5));
        assert_eq!(t, Vec3::new(4.0, 8.0, 2.0));
        assert_eq!(TINY_DIRECTION, 2f32.powi(-64));
    }

    #[test]
    fn an_origin_too_far_out_for_the_scaled_origin_culls_nothing_on_that_axis() {
        // x = 2^70 with a direction of 0 on x: 2^70 · 2^64 overflows.
        let far = (1u128 << 70) as f32;
        let b = Aabb {
            min: Vec3::new(far * 0.5, 0.0, 0.0),
            max: Vec3::new(far * 1.5, 1.0, 1.0),
        };
        let through = Ray::new(Vec3::new(far, 0.5, 3.0), Vec3::new(0.0, 0.0, -1.0));
        assert_eq!(RayBoxTest::new(&through).enter(&b, 0.0, f32::INFINITY), Some(2.0));
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
