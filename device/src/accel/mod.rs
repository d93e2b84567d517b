//! Closest-hit and any-hit queries against the whole scene. Builders live on the host;
//! only traversal lives here, shared by every back end. Traversal reads the
//! scene's [`Primitives`] and the structure's [`AccelView`], nothing else of
//! the scene (materials, camera and background are the stages' business).
//!
//! | structure | node | traversal |
//! |---|---|---|
//! | none | – | every primitive ([`brute`]) |
//! | BVH | 64-byte binary node holding both child boxes | nearer child first, stack culled by entry distance, leaves held until the warp's lanes all have one ([`bvh`]) |
//! | 8-wide BVH | 96-byte node, child boxes quantised to 8 bits | children in octant order, one stack entry per level; the host tests the eight boxes at once ([`bvh8`]) |
//! | kd-tree | 8-byte node | front-to-back with `t_min`/`t_max` per node ([`kdtree`]) |

pub mod brute;
pub mod bvh;
pub mod bvh8;
pub mod kdtree;
pub mod stack;

use crate::geometry::{Aabb, Hit, Interval, PrimKind, PrimKinds, PrimRef, Primitives, SurfaceHit};
use crate::math::{Ray, Vec3};
use crate::slice::DeviceSlice;

pub use bvh::BvhNode;
pub use bvh8::Bvh8Node;
pub use kdtree::KdNode;

/// Which acceleration structure the scene carries.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccelKind {
    /// Brute force.
    None = 0,
    /// Bounding volume hierarchy.
    Bvh = 1,
    /// kd-tree.
    KdTree = 2,
    /// Compressed 8-wide bounding volume hierarchy.
    Bvh8 = 3,
}

/// The acceleration structure as the device reads it. Only the arrays of
/// `kind` are used; the others are empty.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct AccelView<'a> {
    /// Which structure.
    pub kind: AccelKind,
    /// BVH nodes, root first.
    pub bvh_nodes: DeviceSlice<'a, BvhNode>,
    /// kd-tree nodes, root first.
    pub kd_nodes: DeviceSlice<'a, KdNode>,
    /// 8-wide BVH nodes, root first.
    pub bvh8_nodes: DeviceSlice<'a, Bvh8Node>,
    /// Primitive references that leaves index into (the kd-tree may list a
    /// primitive in several leaves).
    pub prims: DeviceSlice<'a, PrimRef>,
    /// Bounds of the whole scene (the kd-tree's root cell).
    pub bounds: Aabb,
}

/// What a traversal looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    /// The nearest hit (extension rays).
    Closest,
    /// Any hit but on primitive `except`: the first one found ends the
    /// search (shadow rays, which ignore the light they aim at, so that
    /// they can run all the way to it).
    Any {
        /// The primitive that does not count.
        except: PrimRef,
    },
}

/// The order in which a traversal offers primitives to [`Closest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestOrder {
    /// Ascending [`PrimRef`] (brute force): of two hits at the same
    /// distance, the first offered is the smaller reference, so an
    /// exclusive bound at the best distance keeps it.
    Ascending,
    /// Any order (the structures, which test primitives near to far).
    Unordered,
}

/// The nearest hit found so far during a traversal; offering a hit shrinks
/// the search interval.
///
/// The closest hit is a total order, so that every structure returns the
/// same hit whatever order it tests primitives in: the smaller distance
/// wins, and at equal distance (coincident surfaces) the smaller
/// [`PrimRef`]. A traversal that offers primitives in ascending reference
/// order gets that for free; for any other order the interval's exclusive
/// upper bound stays one float above the best distance, so that a tie
/// reaches [`Closest::offer`] to be compared.
pub struct Closest {
    /// Distances still searched.
    pub range: Interval,
    /// Best hit so far.
    best: Option<Best>,
    /// What the search looks for.
    query: Query,
    /// The order primitives are offered in.
    order: TestOrder,
    /// The primitive kinds the kernel holds: a primitive of another kind
    /// is never hit.
    kinds: PrimKinds,
}

/// The best hit of a search so far.
#[derive(Clone, Copy, Debug)]
struct Best {
    /// Its distance.
    t: f32,
    /// Its outward normal, or `None` for a sphere's, which [`Closest::finish`]
    /// computes once for the closest rather than for every sphere offered.
    normal: Option<Vec3>,
    /// Its material.
    material: u32,
    /// Its primitive.
    prim: PrimRef,
}

impl Closest {
    /// An empty search over `range`, offered primitives in `order`.
    #[inline(always)]
    pub fn new(range: Interval, query: Query, order: TestOrder, kinds: PrimKinds) -> Self {
        Closest {
            range,
            best: None,
            query,
            order,
            kinds,
        }
    }

    /// True once an any-hit query has its hit: the traversal may stop.
    #[inline(always)]
    pub fn done(&self) -> bool {
        matches!(self.query, Query::Any { .. }) && self.best.is_some()
    }

    /// Keeps `hit` (already inside the range, so no farther than the best
    /// so far) as the best, unless the query ignores `prim` or the best is
    /// as near and on a smaller primitive reference.
    #[inline(always)]
    pub fn offer(&mut self, hit: Option<SurfaceHit>, material: u32, prim: PrimRef) {
        if let Some(h) = hit {
            self.offer_distance(h.t, Some(h.normal), material, prim);
        }
    }

    /// Offers a sphere's hit at distance `t`, if any: its normal waits for
    /// [`Closest::finish`].
    #[inline(always)]
    pub fn offer_sphere(&mut self, t: Option<f32>, material: u32, prim: PrimRef) {
        if let Some(t) = t {
            self.offer_distance(t, None, material, prim);
        }
    }

    /// [`Closest::offer`]'s rule for a hit at `t` with `normal` (`None`:
    /// a sphere's, computed at the end).
    #[inline(always)]
    fn offer_distance(&mut self, t: f32, normal: Option<Vec3>, material: u32, prim: PrimRef) {
        if let Query::Any { except } = self.query
            && except == prim
        {
            return;
        }
        match self.order {
            // A later hit at the best distance lies outside the exclusive
            // bound and never gets here.
            TestOrder::Ascending => self.range.max = t,
            TestOrder::Unordered => {
                if let Some(best) = self.best
                    && t == best.t
                    && best.prim.raw() < prim.raw()
                {
                    return;
                }
                self.range.max = t.next_up();
            }
        }
        self.best = Some(Best {
            t,
            normal,
            material,
            prim,
        });
    }

    /// Tests one referenced primitive of any type the search holds.
    #[inline(always)]
    pub fn test(&mut self, primitives: &Primitives, ray: &Ray, prim: PrimRef) {
        let i = prim.index() as usize;
        // Each arm tests its own kind's bit, so that on the GPU each is a
        // constant the driver's compiler folds (a bit picked by the
        // run-time kind would not be).
        let k = self.kinds;
        let (hit, material) = match prim.kind() {
            PrimKind::Sphere if k.contains(PrimKind::Sphere) => {
                let s = &primitives.spheres.fetch(i);
                return self.offer_sphere(s.distance(ray, self.range), s.material, prim);
            }
            PrimKind::Parallelepiped if k.contains(PrimKind::Parallelepiped) => {
                let b = &primitives.boxes.as_slice()[i];
                (b.intersect(ray, self.range), b.material)
            }
            PrimKind::Polygon if k.contains(PrimKind::Polygon) => {
                let p = &primitives.polygons.as_slice()[i];
                (
                    p.intersect(ray, self.range, primitives.polygon_vertices.as_slice()),
                    p.material,
                )
            }
            PrimKind::Triangle if k.contains(PrimKind::Triangle) => {
                let t = &primitives.triangles.fetch(i);
                (t.intersect(ray, self.range), t.material)
            }
            _ => return,
        };
        self.offer(hit, material, prim);
    }

    /// The scene hit, completed from the best surface hit (a sphere's
    /// normal computed here).
    #[inline(always)]
    pub fn finish(self, primitives: &Primitives, ray: &Ray) -> Option<Hit> {
        self.best.map(|b| {
            let normal = b
                .normal
                .unwrap_or_else(|| primitives.spheres.fetch(b.prim.index() as usize).normal(ray, b.t));
            Hit::new(ray, SurfaceHit { t: b.t, normal }, b.material, b.prim)
        })
    }
}

/// A search strategy over the scene's primitives and its structure.
/// Each structure is its own zero-sized type so that a GPU kernel can be
/// compiled for exactly one (no dead traversal code inflating its register
/// count); [`Dispatch`] picks by the structure's kind at run time, for code
/// that serves every structure.
pub trait Traversal {
    /// Bytes of its traversal stack: on the GPU, the only local memory a
    /// kernel tracing through it should hold.
    const STACK_BYTES: usize;

    /// The hit `query` asks for of `ray` in `range` among the `primitives`
    /// of `kinds`, found through `accel`, or `None` when it escapes.
    fn search(
        primitives: &Primitives,
        accel: &AccelView,
        kinds: PrimKinds,
        ray: &Ray,
        range: Interval,
        query: Query,
    ) -> Option<Hit>;

    /// The closest hit of `ray` in `range`, or `None` when it escapes.
    #[inline(always)]
    fn closest_hit(
        primitives: &Primitives,
        accel: &AccelView,
        kinds: PrimKinds,
        ray: &Ray,
        range: Interval,
    ) -> Option<Hit> {
        Self::search(primitives, accel, kinds, ray, range, Query::Closest)
    }

    /// True when anything but primitive `except` blocks `ray` within `range`.
    #[inline(always)]
    fn occluded(
        primitives: &Primitives,
        accel: &AccelView,
        kinds: PrimKinds,
        ray: &Ray,
        range: Interval,
        except: PrimRef,
    ) -> bool {
        Self::search(primitives, accel, kinds, ray, range, Query::Any { except }).is_some()
    }
}

/// Declares each structure's marker type, its [`Traversal`] (its module's
/// `search`) and [`Dispatch`]'s choice among them, from one table.
macro_rules! structures {
    ($($(#[$doc:meta])* $kind:ident => $t:ident, $module:ident;)*) => {
        $(
            $(#[$doc])*
            pub struct $t;

            impl Traversal for $t {
                const STACK_BYTES: usize = $module::STACK_BYTES;

                #[inline(always)]
                fn search(
                    primitives: &Primitives,
                    accel: &AccelView,
                    kinds: PrimKinds,
                    ray: &Ray,
                    range: Interval,
                    query: Query,
                ) -> Option<Hit> {
                    $module::search(primitives, accel, kinds, ray, range, query)
                }
            }
        )*

        /// Whichever structure the scene carries.
        pub struct Dispatch;

        impl Traversal for Dispatch {
            /// The largest of the structures' stacks.
            const STACK_BYTES: usize = {
                let stacks = [$($module::STACK_BYTES,)*];
                let (mut largest, mut i) = (0, 0);
                while i < stacks.len() {
                    if stacks[i] > largest {
                        largest = stacks[i];
                    }
                    i += 1;
                }
                largest
            };

            #[inline(always)]
            fn search(
                primitives: &Primitives,
                accel: &AccelView,
                kinds: PrimKinds,
                ray: &Ray,
                range: Interval,
                query: Query,
            ) -> Option<Hit> {
                match accel.kind {
                    $(AccelKind::$kind => $module::search(primitives, accel, kinds, ray, range, query),)*
                }
            }
        }
    };
}

structures! {
    /// Brute force.
    None => BruteForce, brute;
    /// BVH traversal.
    Bvh => Bvh, bvh;
    /// kd-tree traversal.
    KdTree => KdTree, kdtree;
    /// 8-wide BVH traversal.
    Bvh8 => Bvh8, bvh8;
}

/// The closest hit of `ray` in `range` with whichever structure `accel` is,
/// among primitives of every kind (for the host's ray casts).
#[inline(always)]
pub fn closest_hit(primitives: &Primitives, accel: &AccelView, ray: &Ray, range: Interval) -> Option<Hit> {
    Dispatch::closest_hit(primitives, accel, PrimKinds::ALL, ray, range)
}
