//! Checks of single field values (numbers, points, lengths, colours), and
//! the error they give before `Locator` places it in the file.

use super::schema::Triple;
use device::math::{Rgb, Vec3};
use device::noise::MAX_OCTAVES;

/// The largest coordinate accepted anywhere in a scene, after transforms.
/// Beyond it `f32` keeps fewer than 64 steps per unit, and the squared
/// distances of box and sphere tests approach the overflow at 3.4e38.
pub const MAX_COORDINATE: f32 = 1.0e9;

/// A problem found in one field, before it is placed in the file.
pub struct FieldError {
    /// The field's name (dotted for nested tables; empty for the whole entry).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// Shorthand for a field check.
pub type FieldResult<T> = Result<T, FieldError>;

/// A [`FieldError`] in `field`.
pub fn field_error(field: &str, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.to_string(),
        message: message.into(),
    }
}

/// A noise's octaves: a whole number from 0 to [`MAX_OCTAVES`].
pub fn octaves(field: &str, v: i64) -> FieldResult<u32> {
    match u32::try_from(v) {
        Ok(n) if n <= MAX_OCTAVES => Ok(n),
        _ => Err(field_error(
            field,
            format!("must be a whole number from 0 to at most {MAX_OCTAVES}, got {v}"),
        )),
    }
}

/// A finite number.
pub fn finite(field: &str, v: f32) -> FieldResult<f32> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(field_error(field, format!("expected a finite number, got {v}")))
    }
}

/// A finite, strictly positive number.
pub fn positive(field: &str, v: f32) -> FieldResult<f32> {
    if finite(field, v)? > 0.0 {
        Ok(v)
    } else {
        Err(field_error(field, format!("must be positive, got {v}")))
    }
}

/// A point in the scene: finite and within [`MAX_COORDINATE`].
pub fn point(field: &str, v: Triple) -> FieldResult<Vec3> {
    let p = vec3(field, v)?;
    if p.max_abs_component() > MAX_COORDINATE {
        return Err(field_error(
            field,
            format!("coordinates must be within ±{MAX_COORDINATE:e}, got {v:?}"),
        ));
    }
    Ok(p)
}

/// A length in the scene: positive and at most [`MAX_COORDINATE`].
pub fn length(field: &str, v: f32) -> FieldResult<f32> {
    if positive(field, v)? > MAX_COORDINATE {
        return Err(field_error(
            field,
            format!("must be at most {MAX_COORDINATE:e}, got {v}"),
        ));
    }
    Ok(v)
}

/// A finite vector.
pub fn vec3(field: &str, v: Triple) -> FieldResult<Vec3> {
    for c in v {
        if !c.is_finite() {
            return Err(field_error(field, format!("expected three finite numbers, got {v:?}")));
        }
    }
    Ok(Vec3::new(v[0], v[1], v[2]))
}

/// A colour with finite, non-negative channels, at most `max` each.
pub fn rgb(field: &str, v: Triple, max: f32) -> FieldResult<Rgb> {
    vec3(field, v)?;
    if v.iter().any(|&c| !(0.0..=max).contains(&c)) {
        let range = if max.is_finite() {
            format!("in [0, {max}]")
        } else {
            "non-negative".to_string()
        };
        return Err(field_error(field, format!("channels must be {range}, got {v:?}")));
    }
    Ok(Rgb::new(v[0], v[1], v[2]))
}
