//! Scalar functions with the same bits on every back end.
//!
//! `sqrt`, `floor` and the fused multiply-add `fma` are correctly rounded
//! (exact) on x86-64 and NVPTX alike, so they map to the compiler
//! intrinsics. Everything transcendental is written here as range reduction
//! plus a minimax polynomial (the Cephes single-precision coefficients)
//! using only `+ - * /` and explicit `fma`, which both targets round
//! identically. The libm or `*.approx` versions would differ between the
//! CPU and the GPU in the last bits and break bit-exact agreement.
//!
//! Under the GPU's fast arithmetic ([`crate::bound::FAST_ARITHMETIC`])
//! sine, cosine, exponential and logarithm are the hardware's
//! approximations instead (the GPU-only `hardware` module); the host then also binds the
//! kernels' divisions and square roots to the approximate instructions.
//! Every GPU back end runs the same instructions, so they still agree with
//! each other bit for bit, and with the CPU's exact image statistically.
//!
//! Bit-identity forbids *implicit* contraction (a compiler fusing `a * b +
//! c` on one target and not the other), never an explicit `fma`: neither
//! rustc nor its NVPTX back end contracts on its own, so every fused
//! multiply-add in the device code is written as one.

/// π.
pub const PI: f32 = core::f32::consts::PI;
/// 2π.
pub const TAU: f32 = core::f32::consts::TAU;

/// Correctly rounded square root.
#[inline(always)]
pub fn sqrt(x: f32) -> f32 {
    core::intrinsics::sqrtf32(x)
}

/// `a * b + c` with a single rounding (IEEE 754 fusedMultiplyAdd), the
/// same bits everywhere: `fma.rn.f32` on the GPU; on x86-64 one `vfmadd`
/// where the build targets FMA (the project's `x86-64-v3`, see
/// `.cargo/config.toml`), else the C library's exact `fmaf`, correct and
/// slow.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    core::intrinsics::fmaf32(a, b, c)
}

/// Largest integer not greater than `x`.
#[inline(always)]
pub fn floor(x: f32) -> f32 {
    core::intrinsics::floorf32(x)
}

/// Cube root of a non-negative number.
#[inline(always)]
pub fn cbrt(x: f32) -> f32 {
    pow(x, 1.0 / 3.0)
}

// Cody–Waite split of π/2: the high parts have trailing zero bits so that
// `k * PIO2_HI` is exact for the quadrant counts used in rendering.
const PIO2_HI: f32 = 1.570_312_5;
const PIO2_MID: f32 = 4.837_513e-4;
const PIO2_LO: f32 = 7.549_79e-8;
const TWO_OVER_PI: f32 = core::f32::consts::FRAC_2_PI;

/// Sine and cosine of `x` (radians) together. Accurate to a few ulp for
/// `|x|` up to about 10⁴, far beyond the angles a renderer forms.
#[inline(always)]
pub fn sin_cos(x: f32) -> (f32, f32) {
    #[cfg(target_arch = "nvptx64")]
    if crate::bound::fast_arithmetic() {
        return (hardware::sin(x), hardware::cos(x));
    }
    let k = floor(fma(x, TWO_OVER_PI, 0.5));
    let r = fma(-k, PIO2_LO, fma(-k, PIO2_MID, fma(-k, PIO2_HI, x)));
    let z = r * r;
    let s = fma(fma(fma(-1.951_529_6e-4, z, 8.332_161e-3), z, -1.666_665_5e-1) * z, r, r);
    let c = fma(
        fma(fma(2.443_315_7e-5, z, -1.388_731_6e-3), z, 4.166_664_6e-2) * z,
        z,
        -0.5 * z,
    ) + 1.0;
    match (k as i32) & 3 {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// Sine of `x` (radians).
#[inline(always)]
pub fn sin(x: f32) -> f32 {
    sin_cos(x).0
}

/// Cosine of `x` (radians).
#[inline(always)]
pub fn cos(x: f32) -> f32 {
    sin_cos(x).1
}

/// Tangent of `x` (radians).
#[inline(always)]
pub fn tan(x: f32) -> f32 {
    let (s, c) = sin_cos(x);
    s / c
}

const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
const LOG2_E: f32 = core::f32::consts::LOG2_E;
const EXP_MAX_ARG: f32 = 88.37626;
const EXP_MIN_ARG: f32 = -87.33654;

/// Natural exponential. Returns 0 below about −87.3 (no subnormal results)
/// and +∞ above about 88.4.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    if crate::bound::fast_arithmetic() {
        return hardware::exp2(x * LOG2_E);
    }
    if x.is_nan() {
        return x;
    }
    if x > EXP_MAX_ARG {
        return f32::INFINITY;
    }
    if x < EXP_MIN_ARG {
        return 0.0;
    }
    let n = floor(fma(x, LOG2_E, 0.5));
    let r = fma(-n, LN2_LO, fma(-n, LN2_HI, x));
    let z = r * r;
    let p = fma(
        horner(
            r,
            &[
                1.987_569_2e-4,
                1.398_2e-3,
                8.333_452e-3,
                4.166_579_6e-2,
                1.666_666_5e-1,
                0.5,
            ],
        ),
        z,
        r,
    ) + 1.0;
    // n lies in [-126, 127] after the clamps above, so 2^n is a normal float.
    p * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

const SQRT_HALF: f32 = core::f32::consts::FRAC_1_SQRT_2;

/// Natural logarithm: −∞ at 0, NaN below 0.
#[inline(always)]
pub fn ln(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    if crate::bound::fast_arithmetic() {
        return hardware::log2(x) * core::f32::consts::LN_2;
    }
    if x.is_nan() || x < 0.0 {
        return f32::NAN;
    }
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    if x == f32::INFINITY {
        return x;
    }
    // Scale subnormals into the normal range first.
    let (x, bias) = if x < f32::MIN_POSITIVE {
        (x * 8_388_608.0, 23)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 126 - bias;
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000);
    if m < SQRT_HALF {
        e -= 1;
        m = m + m - 1.0;
    } else {
        m -= 1.0;
    }
    let ef = e as f32;
    let z = m * m;
    let p = horner(
        m,
        &[
            7.037_683_6e-2,
            -1.151_461e-1,
            1.167_699_9e-1,
            -1.242_014_1e-1,
            1.424_932_3e-1,
            -1.666_805_7e-1,
            2.000_071_4e-1,
            -2.499_999_4e-1,
            3.333_333e-1,
        ],
    );
    let y = fma(-0.5, z, fma(LN2_LO, ef, p * m * z));
    fma(LN2_HI, ef, m + y)
}

/// The polynomial with coefficients `c` (highest power first) at `x`, by
/// Horner's rule with one fused multiply-add per coefficient.
#[inline(always)]
fn horner(x: f32, c: &[f32]) -> f32 {
    c[1..].iter().fold(c[0], |acc, &k| fma(acc, x, k))
}

/// `base` raised to `exponent`, for `base >= 0` (the only case a renderer
/// needs: transmittance, roughness and gamma). Negative bases give NaN.
#[inline(always)]
pub fn pow(base: f32, exponent: f32) -> f32 {
    if exponent == 0.0 || base == 1.0 {
        return 1.0;
    }
    if base == 0.0 {
        return if exponent > 0.0 { 0.0 } else { f32::INFINITY };
    }
    exp(exponent * ln(base))
}

/// Arc tangent of `x`, in `[-π/2, π/2]` (Cephes' `atanf`: reduction to
/// `|x| <= tan(π/8)` and a minimax polynomial).
#[inline(always)]
pub fn atan(x: f32) -> f32 {
    let a = if x < 0.0 { -x } else { x };
    let (base, r) = if a > 2.414_213_6 {
        (0.5 * PI, -1.0 / a)
    } else if a > 0.414_213_57 {
        (0.25 * PI, (a - 1.0) / (a + 1.0))
    } else {
        (0.0, a)
    };
    let z = r * r;
    let p = horner(z, &[8.053_744_5e-2, -1.387_768_6e-1, 1.997_771_1e-1, -3.333_295e-1]);
    let y = base + fma(p * z, r, r);
    if x < 0.0 { -y } else { y }
}

/// The angle of the point `(x, y)` from the positive x axis, in `[-π, π]`
/// (0 at the origin).
#[inline(always)]
pub fn atan2(y: f32, x: f32) -> f32 {
    if x > 0.0 {
        atan(y / x)
    } else if x < 0.0 {
        let a = atan(y / x);
        if y < 0.0 { a - PI } else { a + PI }
    } else if y > 0.0 {
        0.5 * PI
    } else if y < 0.0 {
        -0.5 * PI
    } else {
        0.0
    }
}

/// The GPU's approximate special functions (the multi-function unit), for
/// the fast arithmetic: one instruction each where the crate's own take a
/// range reduction and a polynomial. Their results are the hardware's, the
/// same on every GPU back end but not the CPU's.
#[cfg(target_arch = "nvptx64")]
mod hardware {
    use core::arch::asm;

    /// Declares each function as one PTX instruction on one `f32`.
    macro_rules! approx {
        ($($(#[$doc:meta])* $name:ident => $op:literal;)*) => {$(
            $(#[$doc])*
            #[inline(always)]
            pub fn $name(x: f32) -> f32 {
                let y: f32;
                // SAFETY: one arithmetic instruction on registers; it
                // reads and writes no memory.
                unsafe { asm!(concat!($op, " {y}, {x};"), y = out(reg32) y, x = in(reg32) x, options(pure, nomem, nostack)) };
                y
            }
        )*};
    }

    approx! {
        /// Sine (radians): `sin.approx.f32`, absolute error about 2⁻²¹ over [−π, π].
        sin => "sin.approx.f32";
        /// Cosine (radians): `cos.approx.f32`.
        cos => "cos.approx.f32";
        /// 2ˣ: `ex2.approx.f32`, about 2 ulp.
        exp2 => "ex2.approx.f32";
        /// log₂ x: `lg2.approx.f32`, absolute error about 2⁻²².
        log2 => "lg2.approx.f32";
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    fn rel_err(got: f32, want: f64) -> f64 {
        ((got as f64) - want).abs() / want.abs().max(1e-30)
    }

    #[test]
    fn sin_cos_match_libm_over_two_turns() {
        for i in 0..20_000 {
            let x = -12.566 + i as f32 * (25.13 / 20_000.0);
            let (s, c) = sin_cos(x);
            assert!((s as f64 - (x as f64).sin()).abs() < 2e-7, "sin({x})");
            assert!((c as f64 - (x as f64).cos()).abs() < 2e-7, "cos({x})");
        }
    }

    #[test]
    fn exp_and_ln_match_libm() {
        for i in 0..20_000 {
            let x = -80.0 + i as f32 * (160.0 / 20_000.0);
            assert!(rel_err(exp(x), (x as f64).exp()) < 5e-7, "exp({x})");
        }
        for i in 1..20_000 {
            let x = i as f32 * 0.013;
            let want = (x as f64).ln();
            assert!((ln(x) as f64 - want).abs() < 5e-7 * want.abs().max(1.0), "ln({x})");
        }
        assert_eq!(ln(0.0), f32::NEG_INFINITY);
        assert!(ln(-1.0).is_nan());
        assert!((ln(1e-40) as f64 - (1e-40f64).ln()).abs() < 1e-4);
        assert_eq!(exp(-100.0), 0.0);
        assert_eq!(exp(100.0), f32::INFINITY);
    }

    #[test]
    fn pow_matches_libm_and_edge_cases() {
        for &(b, e) in &[(0.5f32, 3.0f32), (0.9, 12.5), (2.0, 0.5), (0.25, 1.0 / 2.2)] {
            assert!(rel_err(pow(b, e), (b as f64).powf(e as f64)) < 2e-6, "pow({b},{e})");
        }
        assert_eq!(pow(0.0, 2.0), 0.0);
        assert_eq!(pow(0.3, 0.0), 1.0);
        assert!((cbrt(27.0) - 3.0).abs() < 2e-6);
    }

    #[test]
    fn atan2_matches_libm_on_every_quadrant() {
        for i in 0..400 {
            for j in 0..400 {
                let (y, x) = (-3.0 + i as f32 * 0.015, -3.0 + j as f32 * 0.015);
                let want = (y as f64).atan2(x as f64);
                assert!((atan2(y, x) as f64 - want).abs() < 4e-7, "atan2({y}, {x})");
            }
        }
        assert_eq!(atan2(0.0, 0.0), 0.0);
        assert_eq!(atan2(1.0, 0.0), 0.5 * PI);
        assert_eq!(atan2(-1.0, 0.0), -0.5 * PI);
        assert!((atan(1e30) - 0.5 * PI).abs() < 1e-7);
    }
}
