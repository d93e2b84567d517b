//! The GPU machine as a study run sees it: its GPUs (through the driver's
//! `nvidia-smi`) and its logical CPUs shared out among slots, whole cores
//! together.

use std::path::Path;
use std::process::Command;

/// How many GPUs the host has, as `nvidia-smi -L` lists them (0 without
/// the driver's tool).
pub fn gpu_count() -> usize {
    Command::new("nvidia-smi")
        .arg("-L")
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.starts_with("GPU"))
                .count()
        })
        .unwrap_or(0)
}

/// The GPU `ordinal`'s name and driver as `nvidia-smi` says them, or why
/// it cannot.
pub fn gpu_line(ordinal: usize) -> String {
    let query = Command::new("nvidia-smi")
        .args(["--query-gpu=name,driver_version", "--format=csv,noheader", "-i"])
        .arg(ordinal.to_string())
        .output();
    match query {
        Ok(o) => format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => format!("nvidia-smi: {e}\n"),
    }
}

/// The logical CPUs of `cpus` in `slots` equal shares, in order of socket,
/// then core, so that each share holds whole cores (a share's size is the
/// count over the slots, rounded down); `None` when there are fewer CPUs
/// than slots.
pub fn cpu_shares(cpus: &[usize], slots: usize) -> Option<Vec<Vec<usize>>> {
    let topology = |cpu: usize, what: &str| -> usize {
        let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/{what}");
        std::fs::read_to_string(Path::new(&path))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    };
    let mut ordered: Vec<(usize, usize, usize)> = cpus
        .iter()
        .map(|&c| (topology(c, "physical_package_id"), topology(c, "core_id"), c))
        .collect();
    ordered.sort_unstable();
    let per = ordered.len() / slots.max(1);
    (per >= 1).then(|| {
        (0..slots)
            .map(|i| ordered[i * per..(i + 1) * per].iter().map(|&(_, _, c)| c).collect())
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_equal_and_apart() {
        let shares = cpu_shares(&[0, 1, 2, 3, 4], 2).unwrap();
        assert_eq!(shares.len(), 2);
        assert_eq!(shares[0].len(), 2);
        assert_eq!(shares[1].len(), 2);
        assert!(shares[0].iter().all(|c| !shares[1].contains(c)));
        assert_eq!(cpu_shares(&[0], 2), None);
    }
}
