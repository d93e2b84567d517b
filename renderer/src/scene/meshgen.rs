//! Generated meshes for scaling experiments: an icosphere subdivided `n`
//! times (20·4ⁿ triangles) and displaced by a smooth deterministic bump
//! field, so that the surface is neither flat-faceted nor trivially convex.

use device::math::Vec3;
use std::collections::HashMap;
use std::fmt::Write as _;

/// The most subdivisions accepted (20·4¹⁰ ≈ 21 M triangles).
pub const MAX_SUBDIVISIONS: u32 = 10;

/// A triangle mesh: positions and counter-clockwise index triples.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// Vertex positions.
    pub positions: Vec<Vec3>,
    /// Triangles as indices into `positions`, wound counter-clockwise seen
    /// from outside.
    pub faces: Vec<[u32; 3]>,
}

/// Parameters of a displaced sphere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DisplacedSphere {
    /// Icosahedron subdivisions.
    pub subdivisions: u32,
    /// Relative bump height (0: a plain sphere).
    pub amplitude: f32,
}

/// Radial displacement factor at unit direction `d`: three octaves of
/// products of sines, deterministic and smooth.
fn bumps(d: Vec3, amplitude: f32) -> f32 {
    let (x, y, z) = (d.x as f64, d.y as f64, d.z as f64);
    let mut h = 0.0;
    let mut f = 3.0;
    let mut a = 1.0;
    for _ in 0..3 {
        h += a * (f * x + 1.3).sin() * (f * 1.1 * y + 0.7).sin() * (f * 0.9 * z + 2.1).sin();
        f *= 2.7;
        a *= 0.45;
    }
    1.0 + amplitude * h as f32
}

impl DisplacedSphere {
    /// Builds the mesh (unit radius before displacement, centred at the origin).
    pub fn mesh(&self) -> Mesh {
        self.mesh_unless(&|| false).expect("an unstoppable build finishes")
    }

    /// Builds the mesh as [`Self::mesh`] does, asking `stop` every
    /// [`STOP_POLL`] faces; `None` once it says yes.
    pub fn mesh_unless(&self, stop: &dyn Fn() -> bool) -> Option<Mesh> {
        let t = (1.0 + 5f32.sqrt()) / 2.0;
        let mut positions: Vec<Vec3> = [
            (-1.0, t, 0.0),
            (1.0, t, 0.0),
            (-1.0, -t, 0.0),
            (1.0, -t, 0.0),
            (0.0, -1.0, t),
            (0.0, 1.0, t),
            (0.0, -1.0, -t),
            (0.0, 1.0, -t),
            (t, 0.0, -1.0),
            (t, 0.0, 1.0),
            (-t, 0.0, -1.0),
            (-t, 0.0, 1.0),
        ]
        .iter()
        .map(|&(x, y, z)| Vec3::new(x, y, z).normalized())
        .collect();
        let mut faces: Vec<[u32; 3]> = vec![
            [0, 11, 5],
            [0, 5, 1],
            [0, 1, 7],
            [0, 7, 10],
            [0, 10, 11],
            [1, 5, 9],
            [5, 11, 4],
            [11, 10, 2],
            [10, 7, 6],
            [7, 1, 8],
            [3, 9, 4],
            [3, 4, 2],
            [3, 2, 6],
            [3, 6, 8],
            [3, 8, 9],
            [4, 9, 5],
            [2, 4, 11],
            [6, 2, 10],
            [8, 6, 7],
            [9, 8, 1],
        ];
        for _ in 0..self.subdivisions.min(MAX_SUBDIVISIONS) {
            let mut midpoints: HashMap<(u32, u32), u32> = HashMap::new();
            let mut midpoint = |a: u32, b: u32, positions: &mut Vec<Vec3>| {
                *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
                    positions.push(((positions[a as usize] + positions[b as usize]) * 0.5).normalized());
                    positions.len() as u32 - 1
                })
            };
            let mut next = Vec::with_capacity(faces.len() * 4);
            for (i, [a, b, c]) in faces.into_iter().enumerate() {
                if i % STOP_POLL == 0 && stop() {
                    return None;
                }
                let ab = midpoint(a, b, &mut positions);
                let bc = midpoint(b, c, &mut positions);
                let ca = midpoint(c, a, &mut positions);
                next.extend_from_slice(&[[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
            }
            faces = next;
        }
        for p in &mut positions {
            *p = *p * bumps(*p, self.amplitude);
        }
        Some(Mesh { positions, faces })
    }
}

/// How many faces or lines pass between two polls of a stop request: a
/// few milliseconds of work.
pub const STOP_POLL: usize = 1 << 16;

impl Mesh {
    /// The mesh as OBJ text (`v` and 1-based `f` lines), with a comment header.
    pub fn to_obj(&self, header: &str) -> String {
        self.to_obj_unless(header, &|| false)
            .expect("an unstoppable write finishes")
    }

    /// The OBJ text as [`Self::to_obj`] makes it, asking `stop` every
    /// [`STOP_POLL`] lines; `None` once it says yes.
    pub fn to_obj_unless(&self, header: &str, stop: &dyn Fn() -> bool) -> Option<String> {
        let mut s = String::with_capacity(self.positions.len() * 32 + self.faces.len() * 24);
        for line in header.lines() {
            let _ = writeln!(s, "# {line}");
        }
        for (i, p) in self.positions.iter().enumerate() {
            if i % STOP_POLL == 0 && stop() {
                return None;
            }
            let _ = writeln!(s, "v {} {} {}", p.x, p.y, p.z);
        }
        for (i, [a, b, c]) in self.faces.iter().enumerate() {
            if i % STOP_POLL == 0 && stop() {
                return None;
            }
            let _ = writeln!(s, "f {} {} {}", a + 1, b + 1, c + 1);
        }
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_the_subdivision_law_and_faces_point_outward() {
        for n in 0..4 {
            let m = DisplacedSphere {
                subdivisions: n,
                amplitude: 0.0,
            }
            .mesh();
            assert_eq!(m.faces.len(), 20 * 4usize.pow(n));
            // Euler: V - E + F = 2 with E = 3F/2.
            assert_eq!(
                m.positions.len() as i64 - (3 * m.faces.len() / 2) as i64 + m.faces.len() as i64,
                2
            );
            for [a, b, c] in &m.faces {
                let (a, b, c) = (
                    m.positions[*a as usize],
                    m.positions[*b as usize],
                    m.positions[*c as usize],
                );
                assert!((b - a).cross(c - a).dot(a + b + c) > 0.0, "face winds inward");
            }
        }
    }

    #[test]
    fn displacement_moves_vertices_off_the_unit_sphere_within_bounds() {
        let m = DisplacedSphere {
            subdivisions: 3,
            amplitude: 0.1,
        }
        .mesh();
        let radii: Vec<f32> = m.positions.iter().map(|p| p.length()).collect();
        let (lo, hi) = radii.iter().fold((f32::MAX, 0.0f32), |(l, h), &r| (l.min(r), h.max(r)));
        assert!(lo < 0.97 && hi > 1.03, "{lo} {hi}");
        assert!(lo > 1.0 - 0.1 * 1.7 && hi < 1.0 + 0.1 * 1.7);
    }
}
