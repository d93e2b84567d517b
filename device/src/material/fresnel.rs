//! Fresnel reflectance of a dielectric interface.

use crate::math::scalar;

/// Which formula gives the reflectance.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FresnelModel {
    /// The exact unpolarised Fresnel equations.
    Exact = 0,
    /// Schlick's approximation.
    Schlick = 1,
}

/// Cosines of the incident and transmitted angles, or total internal
/// reflection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Refraction {
    /// Snell's law has no solution: everything reflects.
    TotalInternalReflection,
    /// The transmitted direction exists, with this cosine to the normal.
    Transmits {
        /// Cosine of the transmitted angle (positive).
        cos_t: f32,
    },
}

/// Snell's law for a ray at `cos_i` to the normal going from index `eta_i`
/// into index `eta_t`.
#[inline(always)]
pub fn refraction(cos_i: f32, eta_i: f32, eta_t: f32) -> Refraction {
    let sin_i2 = (1.0 - cos_i * cos_i).max(0.0);
    let ratio = eta_i / eta_t;
    let sin_t2 = ratio * ratio * sin_i2;
    if sin_t2 >= 1.0 {
        Refraction::TotalInternalReflection
    } else {
        Refraction::Transmits {
            cos_t: scalar::sqrt(1.0 - sin_t2),
        }
    }
}

/// Exact unpolarised reflectance: the mean of the s- and p-polarised terms.
#[inline(always)]
pub fn exact(cos_i: f32, cos_t: f32, eta_i: f32, eta_t: f32) -> f32 {
    let r_par = (eta_t * cos_i - eta_i * cos_t) / (eta_t * cos_i + eta_i * cos_t);
    let r_perp = (eta_i * cos_i - eta_t * cos_t) / (eta_i * cos_i + eta_t * cos_t);
    0.5 * (r_par * r_par + r_perp * r_perp)
}

/// Schlick's approximation, evaluated with the cosine on the less dense side
/// (the transmitted one when leaving the denser medium), which keeps it
/// continuous up to the critical angle.
#[inline(always)]
pub fn schlick(cos_i: f32, cos_t: f32, eta_i: f32, eta_t: f32) -> f32 {
    let r0 = (eta_i - eta_t) / (eta_i + eta_t);
    let r0 = r0 * r0;
    let c = if eta_i <= eta_t { cos_i } else { cos_t };
    let m = 1.0 - c;
    let m2 = m * m;
    r0 + (1.0 - r0) * (m2 * m2 * m)
}

/// Reflectance for `model`, 1 under total internal reflection.
#[inline(always)]
pub fn reflectance(model: FresnelModel, cos_i: f32, eta_i: f32, eta_t: f32) -> f32 {
    match refraction(cos_i, eta_i, eta_t) {
        Refraction::TotalInternalReflection => 1.0,
        Refraction::Transmits { cos_t } => match model {
            FresnelModel::Exact => exact(cos_i, cos_t, eta_i, eta_t),
            FresnelModel::Schlick => schlick(cos_i, cos_t, eta_i, eta_t),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_incidence_is_the_squared_index_ratio() {
        // ((n1 - n2) / (n1 + n2))^2 = (0.5 / 2.5)^2 = 0.04 for glass in air.
        for model in [FresnelModel::Exact, FresnelModel::Schlick] {
            assert!((reflectance(model, 1.0, 1.0, 1.5) - 0.04).abs() < 1e-6);
            assert!((reflectance(model, 1.0, 1.5, 1.0) - 0.04).abs() < 1e-6);
        }
    }

    #[test]
    fn grazing_incidence_reflects_everything() {
        for model in [FresnelModel::Exact, FresnelModel::Schlick] {
            assert!((reflectance(model, 0.0, 1.0, 1.5) - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn exact_matches_the_textbook_value_at_45_degrees() {
        // Air to glass (1.5) at 45°: sinθt = 0.4714, cosθt = 0.8819;
        // Rs = 0.0920, Rp = 0.0085, mean 0.0502.
        let c = core::f32::consts::FRAC_1_SQRT_2;
        assert!((reflectance(FresnelModel::Exact, c, 1.0, 1.5) - 0.05023).abs() < 2e-4);
    }

    #[test]
    fn brewster_angle_zeroes_the_parallel_term() {
        // At Brewster's angle tanθ = 1.5, r_par = 0 and R = Rs/2.
        let theta = 1.5f32.atan();
        let cos_i = theta.cos();
        let Refraction::Transmits { cos_t } = refraction(cos_i, 1.0, 1.5) else {
            panic!()
        };
        let r_perp = (cos_i - 1.5 * cos_t) / (cos_i + 1.5 * cos_t);
        assert!((exact(cos_i, cos_t, 1.0, 1.5) - 0.5 * r_perp * r_perp).abs() < 1e-6);
    }

    #[test]
    fn total_internal_reflection_beyond_the_critical_angle() {
        // Critical angle glass→air is asin(1/1.5) = 41.8°; at 50° all reflects.
        let cos_i = 50f32.to_radians().cos();
        assert_eq!(refraction(cos_i, 1.5, 1.0), Refraction::TotalInternalReflection);
        assert_eq!(reflectance(FresnelModel::Exact, cos_i, 1.5, 1.0), 1.0);
        assert_eq!(reflectance(FresnelModel::Schlick, cos_i, 1.5, 1.0), 1.0);
    }
}
