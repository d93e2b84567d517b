//! A thin-lens perspective camera with look-at placement.

use crate::geometry::sampling::concentric_disk;
use crate::math::{Ray, Vec3, scalar};

/// Where a camera is and how it sees, as a scene file states it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraSpec {
    /// Eye position.
    pub look_from: Vec3,
    /// Point the camera looks at.
    pub look_at: Vec3,
    /// World "up" used to orient the image.
    pub up: Vec3,
    /// Vertical field of view in degrees.
    pub vfov_degrees: f32,
    /// Image width over height.
    pub aspect: f32,
    /// Lens diameter; 0 is a pinhole.
    pub aperture: f32,
    /// Distance to the plane in perfect focus.
    pub focus_distance: f32,
    /// Camera rays start this far from the eye along each ray (0: at the
    /// eye). smallpt starts its rays 140 units out, past its scene's front
    /// wall: g++ normalises smallpt's direction before it computes the
    /// start, so the start is 140 along the ray, as here.
    pub near: f32,
}

/// The camera in the form the path stages use (precomputed image plane).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Camera {
    origin: Vec3,
    /// Image-plane corner at the bottom left, on the focus plane.
    lower_left: Vec3,
    horizontal: Vec3,
    vertical: Vec3,
    /// Camera-space right and up unit vectors (lens plane axes).
    right: Vec3,
    up: Vec3,
    lens_radius: f32,
    /// Distance along each ray at which camera rays start (0: the eye).
    near: f32,
}

impl Camera {
    /// Precomputes the image plane of `spec`.
    pub fn new(spec: &CameraSpec) -> Self {
        let half_height = scalar::tan(spec.vfov_degrees * (scalar::PI / 180.0) * 0.5);
        let half_width = spec.aspect * half_height;
        let back = (spec.look_from - spec.look_at).normalized();
        let right = spec.up.cross(back).normalized();
        let up = back.cross(right);
        let fd = spec.focus_distance;
        let horizontal = right * (2.0 * half_width * fd);
        let vertical = up * (2.0 * half_height * fd);
        Camera {
            origin: spec.look_from,
            lower_left: spec.look_from - horizontal * 0.5 - vertical * 0.5 - back * fd,
            horizontal,
            vertical,
            right,
            up,
            lens_radius: spec.aperture * 0.5,
            near: spec.near,
        }
    }

    /// The ray through image coordinates `(s, t)` (0..1, `t` up) from lens
    /// sample `(lens_u, lens_v)` in `[0, 1)²`, starting `near` along it.
    #[inline(always)]
    pub fn ray(&self, s: f32, t: f32, lens_u: f32, lens_v: f32) -> Ray {
        let (dx, dy) = concentric_disk(lens_u, lens_v);
        let offset = self.right * (dx * self.lens_radius) + self.up * (dy * self.lens_radius);
        let origin = self.origin + offset;
        let target = self.lower_left + self.horizontal * s + self.vertical * t;
        let dir = (target - origin).normalized();
        if self.near > 0.0 {
            Ray::new(origin + dir * self.near, dir)
        } else {
            Ray::new(origin, dir)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> CameraSpec {
        CameraSpec {
            look_from: Vec3::new(0.0, 0.0, 5.0),
            look_at: Vec3::ZERO,
            up: Vec3::new(0.0, 1.0, 0.0),
            vfov_degrees: 90.0,
            aspect: 2.0,
            aperture: 0.0,
            focus_distance: 5.0,
            near: 0.0,
        }
    }

    #[test]
    fn centre_ray_looks_at_target_and_corners_span_the_fov() {
        let cam = Camera::new(&spec());
        let c = cam.ray(0.5, 0.5, 0.3, 0.7);
        assert!((c.dir - Vec3::new(0.0, 0.0, -1.0)).length() < 1e-6);
        // 90 degrees vertical: the top edge ray is 45 degrees up.
        let top = cam.ray(0.5, 1.0, 0.5, 0.5);
        assert!((top.dir.y - core::f32::consts::FRAC_1_SQRT_2).abs() < 1e-5);
        // aspect 2: the right edge is at tan = 2 horizontally.
        let right = cam.ray(1.0, 0.5, 0.5, 0.5);
        assert!((right.dir.x / -right.dir.z - 2.0).abs() < 1e-5);
    }

    #[test]
    fn thin_lens_rays_converge_on_the_focus_plane() {
        let cam = Camera::new(&CameraSpec {
            aperture: 1.0,
            ..spec()
        });
        let a = cam.ray(0.3, 0.6, 0.1, 0.2);
        let b = cam.ray(0.3, 0.6, 0.9, 0.7);
        assert!((a.origin - b.origin).length() > 0.1);
        let pa = a.at((0.0 - a.origin.z) / a.dir.z);
        let pb = b.at((0.0 - b.origin.z) / b.dir.z);
        assert!((pa - pb).length() < 1e-4, "{pa:?} vs {pb:?}");
    }

    #[test]
    fn a_near_distance_moves_the_start_along_the_ray_and_changes_no_direction() {
        let far = Camera::new(&spec());
        let near = Camera::new(&CameraSpec { near: 2.0, ..spec() });
        for (s, t) in [(0.5, 0.5), (0.0, 0.0), (1.0, 0.3)] {
            let (a, b) = (far.ray(s, t, 0.5, 0.5), near.ray(s, t, 0.5, 0.5));
            assert_eq!(a.dir, b.dir);
            let along = (b.origin - a.origin).dot(a.dir);
            assert!((along - 2.0).abs() < 1e-5, "{along}");
            assert!(((b.origin - a.origin).length() - along).abs() < 1e-5, "on the ray");
        }
        assert_eq!(
            far.ray(0.2, 0.7, 0.1, 0.9),
            Camera::new(&spec()).ray(0.2, 0.7, 0.1, 0.9)
        );
    }
}
