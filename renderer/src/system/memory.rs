//! Host memory: what a run needs, checked against what the machine has
//! before anything large is allocated, and allocations that fail as errors
//! instead of aborting the process.

use anyhow::bail;

/// One mebibyte, for messages.
const MIB: f64 = (1u64 << 20) as f64;

/// One gibibyte, for messages.
const GIB: f64 = (1u64 << 30) as f64;

/// Bytes as GiB with two decimals.
pub fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / GIB)
}

/// Bytes for a message: exact, and in GiB (from one GiB) or MiB.
pub fn bytes_text(bytes: usize) -> String {
    if bytes as f64 >= GIB {
        format!("{bytes} bytes ({})", gib(bytes as u64))
    } else {
        format!("{bytes} bytes ({:.1} MiB)", bytes as f64 / MIB)
    }
}

/// The memory the kernel says can be allocated without swapping
/// (`MemAvailable` in `/proc/meminfo`); `None` where that is unknown.
pub fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Checks that `bytes` for `what` fit in the memory available now; the
/// error says how much was asked, how much is free and what to change.
pub fn check_available(what: &str, bytes: u64, suggestion: &str) -> anyhow::Result<()> {
    match available_bytes() {
        Some(free) if bytes > free => bail!(
            "{what} needs {} of host memory, but only {} is available; {suggestion}",
            gib(bytes),
            gib(free)
        ),
        _ => Ok(()),
    }
}

/// A vector of `len` default values, or an error naming `what` and the
/// bytes asked when the allocation fails.
pub fn zeroed_vec<T: Clone + Default>(what: &str, len: usize) -> anyhow::Result<Vec<T>> {
    let bytes = len.saturating_mul(size_of::<T>()) as u64;
    let mut v = Vec::new();
    if v.try_reserve_exact(len).is_err() {
        bail!("cannot allocate {} of host memory for {what}", gib(bytes));
    }
    v.resize(len, T::default());
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_allocation_is_an_error() {
        let e = zeroed_vec::<u64>("a test", usize::MAX / 8).unwrap_err().to_string();
        assert!(e.contains("a test") && e.contains("GiB"), "{e}");
        assert_eq!(zeroed_vec::<u32>("a test", 3).unwrap(), [0, 0, 0]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn more_than_the_machine_has_is_refused_before_allocation() {
        assert!(available_bytes().is_some_and(|b| b > 0));
        let e = check_available("the film", u64::MAX / 2, "render a smaller image")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the film needs") && e.contains("available; render a smaller image"),
            "{e}"
        );
        check_available("a little", 1024, "").unwrap();
    }
}
