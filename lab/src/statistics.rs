//! Medians and spreads of repeated measurements.

/// The median of `values` (the mean of the middle two for an even count);
/// `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// Smallest and largest of a set of times, and their gap relative to the
/// median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// `(max - min) / median`, as a fraction.
    pub relative: f64,
}

/// The spread of `values`; `None` when empty.
pub fn spread(values: &[f64]) -> Option<Spread> {
    let mid = median(values)?;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let relative = if mid > 0.0 { (max - min) / mid } else { 0.0 };
    Some(Spread { min, max, relative })
}
