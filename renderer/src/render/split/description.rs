//! Describing a split render: what rendered it, one line per device and
//! where its time went, the merge and the load imbalance.

use super::output::DeviceShare;
use std::fmt::Write as _;
use std::time::Duration;

/// The load imbalance of work spread over devices busy `busy` seconds
/// each: the busiest device's time over the mean, less one (0 when every
/// device was busy equally long).
pub fn imbalance(busy: &[f64]) -> f64 {
    let busiest = busy.iter().copied().fold(0.0, f64::max);
    let mean = busy.iter().sum::<f64>() / busy.len().max(1) as f64;
    if mean > 0.0 { busiest / mean - 1.0 } else { 0.0 }
}

/// One line per device (and where its time went), one for the final merge
/// and one for the imbalance (nothing for a render on one device).
pub fn describe(shares: &[DeviceShare], merge: Duration) -> String {
    let mut s = String::new();
    if shares.is_empty() {
        return s;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for share in shares {
        let _ = writeln!(
            s,
            "  {}: {} spp in {} chunks, {:.3} s busy, {:.3} M rays",
            share.device,
            share.spp,
            share.chunks,
            share.busy.as_secs_f64(),
            share.rays as f64 / 1e6
        );
        let Some(t) = share.times else { continue };
        let _ = match (t.left_out, share.chunks) {
            (Some(join), _) => writeln!(
                s,
                "    stayed out after a setup of {:.3} ms: joining would have saved about {:.3} ms, \
                 and reading back and merging its film costs {:.3} ms",
                ms(t.setup),
                ms(join.gain),
                ms(join.cost)
            ),
            (None, 0) => writeln!(
                s,
                "    setup {:.3} ms; nothing was left to render (or the render was stopping) when it was ready",
                ms(t.setup)
            ),
            (None, _) => writeln!(
                s,
                "    setup {:.3} ms, first chunk {:.3} ms, readback {:.3} ms, idle at the end {:.3} ms",
                ms(t.setup),
                ms(t.first_chunk),
                ms(t.readback),
                ms(t.idle)
            ),
        };
    }
    let rendering = shares.iter().filter(|s| s.chunks > 0).count();
    let stayed_out = shares.iter().any(|s| s.times.is_some_and(|t| t.left_out.is_some()));
    if rendering == 1 && stayed_out {
        let _ = writeln!(s, "  kept on one device: splitting would not have paid for itself");
    }
    let _ = writeln!(s, "  merge of the devices' films: {:.3} ms", ms(merge));
    let _ = writeln!(
        s,
        "  load imbalance: {:.1} % (the busiest device's time over the mean)",
        100.0 * imbalance(&shares.iter().map(|s| s.busy.as_secs_f64()).collect::<Vec<_>>())
    );
    s
}

/// What rendered a split over the devices `names`: the device itself when
/// there is one, else how many and which.
pub(super) fn devices_label(names: &[String]) -> String {
    match names {
        [one] => one.clone(),
        _ => format!("{} devices: {}", names.len(), names.join(", ")),
    }
}
