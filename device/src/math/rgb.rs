//! Linear RGB radiance, reflectance and throughput.

use super::scalar;
use core::ops::{Add, AddAssign, Mul};

/// A linear-light RGB triple (radiance, albedo or path throughput).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rgb {
    /// Red.
    pub r: f32,
    /// Green.
    pub g: f32,
    /// Blue.
    pub b: f32,
}

const _: () = assert!(core::mem::size_of::<Rgb>() == 12);

// SAFETY: `#[repr(C)]`, three `f32`, no padding (scene arrays upload texels).
unsafe impl crate::kernel::AsBytes for Rgb {}

impl Rgb {
    /// Black: no light, or a reflectance of zero.
    pub const BLACK: Rgb = Rgb::new(0.0, 0.0, 0.0);
    /// White: a reflectance or throughput of one.
    pub const WHITE: Rgb = Rgb::new(1.0, 1.0, 1.0);

    /// Builds a colour from its channels.
    #[inline(always)]
    pub const fn new(r: f32, g: f32, b: f32) -> Self {
        Rgb { r, g, b }
    }

    /// The largest channel.
    #[inline(always)]
    pub fn max_channel(self) -> f32 {
        self.r.max(self.g).max(self.b)
    }

    /// Luminance (Rec. 709 weights): a light's brightness when lights are
    /// chosen by power.
    #[inline(always)]
    pub fn luminance(self) -> f32 {
        0.2126 * self.r + 0.7152 * self.g + 0.0722 * self.b
    }

    /// True when every channel is zero.
    #[inline(always)]
    pub fn is_black(self) -> bool {
        self.r == 0.0 && self.g == 0.0 && self.b == 0.0
    }

    /// Linear interpolation: `self` at `t = 0`, `other` at `t = 1`.
    #[inline(always)]
    pub fn lerp(self, other: Rgb, t: f32) -> Rgb {
        self * (1.0 - t) + other * t
    }

    /// Beer–Lambert attenuation `A^distance` per channel, for a medium whose
    /// transmittance over one unit of distance is `self`.
    #[inline(always)]
    pub fn powf(self, distance: f32) -> Rgb {
        Rgb::new(
            scalar::pow(self.r, distance),
            scalar::pow(self.g, distance),
            scalar::pow(self.b, distance),
        )
    }
}

impl Add for Rgb {
    type Output = Rgb;
    #[inline(always)]
    fn add(self, o: Rgb) -> Rgb {
        Rgb::new(self.r + o.r, self.g + o.g, self.b + o.b)
    }
}

impl AddAssign for Rgb {
    #[inline(always)]
    fn add_assign(&mut self, o: Rgb) {
        *self = *self + o;
    }
}

impl Mul for Rgb {
    type Output = Rgb;
    #[inline(always)]
    fn mul(self, o: Rgb) -> Rgb {
        Rgb::new(self.r * o.r, self.g * o.g, self.b * o.b)
    }
}

impl Mul<f32> for Rgb {
    type Output = Rgb;
    #[inline(always)]
    fn mul(self, s: f32) -> Rgb {
        Rgb::new(self.r * s, self.g * s, self.b * s)
    }
}
