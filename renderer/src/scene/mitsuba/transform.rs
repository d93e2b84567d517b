//! Mitsuba's `<transform>`: a 4×4 matrix composed of `matrix`, `lookat`,
//! `translate`, `rotate` and `scale` steps, each applied after the ones
//! before it (the step's matrix multiplies the product so far from the
//! left), as Mitsuba composes them.

/// A row-major 4×4 affine transform in double precision (the file's
/// numbers are kept as written until the scene is flattened).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Matrix4(pub [[f64; 4]; 4]);

impl Matrix4 {
    /// The identity.
    pub const IDENTITY: Matrix4 = Matrix4([
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ]);

    /// `self × rhs`: `rhs` applied first.
    pub fn times(&self, rhs: &Matrix4) -> Matrix4 {
        let mut m = [[0.0; 4]; 4];
        for (r, row) in m.iter_mut().enumerate() {
            for (c, cell) in row.iter_mut().enumerate() {
                *cell = (0..4).map(|k| self.0[r][k] * rhs.0[k][c]).sum();
            }
        }
        Matrix4(m)
    }

    /// A point carried by the transform (affine: the last row is taken to
    /// be `0 0 0 1`).
    pub fn point(&self, p: [f64; 3]) -> [f64; 3] {
        let m = &self.0;
        [0, 1, 2].map(|r| m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3])
    }

    /// A direction carried by the transform (no translation).
    pub fn vector(&self, v: [f64; 3]) -> [f64; 3] {
        let m = &self.0;
        [0, 1, 2].map(|r| m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2])
    }

    /// Whether the last row is `0 0 0 1` (no projection), as every
    /// transform of a shape, a sensor or an emitter must be.
    pub fn is_affine(&self) -> bool {
        self.0[3] == [0.0, 0.0, 0.0, 1.0]
    }

    /// A translation by `t`.
    pub fn translation(t: [f64; 3]) -> Matrix4 {
        let mut m = Matrix4::IDENTITY;
        for (r, v) in t.into_iter().enumerate() {
            m.0[r][3] = v;
        }
        m
    }

    /// A scale by `s` along each axis.
    pub fn scaling(s: [f64; 3]) -> Matrix4 {
        let mut m = Matrix4::IDENTITY;
        for (r, v) in s.into_iter().enumerate() {
            m.0[r][r] = v;
        }
        m
    }

    /// A rotation by `degrees` about `axis` (right-handed; the axis need not
    /// be of unit length, but must not be zero).
    pub fn rotation(axis: [f64; 3], degrees: f64) -> Option<Matrix4> {
        let [x, y, z] = normalized(axis)?;
        let (s, c) = degrees.to_radians().sin_cos();
        let t = 1.0 - c;
        Some(Matrix4([
            [t * x * x + c, t * x * y - s * z, t * x * z + s * y, 0.0],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x, 0.0],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]))
    }

    /// A camera at `origin` looking at `target` with `up` above it, as
    /// Mitsuba's `lookat` places one: +z towards the target, +x to the
    /// left of the view (`up × direction`), +y the up that is square to
    /// both. `None` where the target is the origin or up is along the view.
    pub fn look_at(origin: [f64; 3], target: [f64; 3], up: [f64; 3]) -> Option<Matrix4> {
        let dir = normalized(sub(target, origin))?;
        let left = normalized(cross(normalized(up)?, dir))?;
        let new_up = cross(dir, left);
        Some(Matrix4([
            [left[0], new_up[0], dir[0], origin[0]],
            [left[1], new_up[1], dir[1], origin[1]],
            [left[2], new_up[2], dir[2], origin[2]],
            [0.0, 0.0, 0.0, 1.0],
        ]))
    }
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `v` scaled to unit length; `None` for a zero (or not finite) vector.
fn normalized(v: [f64; 3]) -> Option<[f64; 3]> {
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    (len > 0.0 && len.is_finite()).then(|| v.map(|c| c / len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: [f64; 3], b: [f64; 3]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn a_quarter_turn_about_z_takes_x_to_y() {
        let r = Matrix4::rotation([0.0, 0.0, 2.0], 90.0).unwrap();
        assert!(close(r.vector([1.0, 0.0, 0.0]), [0.0, 1.0, 0.0]));
        assert!(close(r.vector([0.0, 1.0, 0.0]), [-1.0, 0.0, 0.0]));
        assert!(Matrix4::rotation([0.0; 3], 90.0).is_none());
    }

    #[test]
    fn steps_apply_in_order_the_later_on_the_left() {
        // Scale by 2, then move by +1 in x: (1,0,0) → (2,0,0) → (3,0,0).
        let m = Matrix4::translation([1.0, 0.0, 0.0]).times(&Matrix4::scaling([2.0; 3]));
        assert!(close(m.point([1.0, 0.0, 0.0]), [3.0, 0.0, 0.0]));
        assert!(close(m.vector([1.0, 0.0, 0.0]), [2.0, 0.0, 0.0]));
        assert!(m.is_affine());
    }

    #[test]
    fn look_at_points_z_at_the_target_and_x_to_the_left() {
        // From (0,0,5) towards the origin with y up: the view is -z, and
        // the left of the view is -x (the camera faces the other way from +z).
        let m = Matrix4::look_at([0.0, 0.0, 5.0], [0.0; 3], [0.0, 1.0, 0.0]).unwrap();
        assert!(close(m.vector([0.0, 0.0, 1.0]), [0.0, 0.0, -1.0]));
        assert!(close(m.vector([1.0, 0.0, 0.0]), [-1.0, 0.0, 0.0]));
        assert!(close(m.vector([0.0, 1.0, 0.0]), [0.0, 1.0, 0.0]));
        assert!(close(m.point([0.0; 3]), [0.0, 0.0, 5.0]));
        assert!(Matrix4::look_at([0.0; 3], [0.0; 3], [0.0, 1.0, 0.0]).is_none());
        assert!(Matrix4::look_at([0.0; 3], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]).is_none());
    }
}
