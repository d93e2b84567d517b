//! Where a measurement came from: version, commit, host CPU and time.

/// The build a binary is: what its `build.rs` stamped on it (the
/// `wavepath` crate's `BUILD`), handed down to whatever writes records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Build {
    /// The commit, with `-dirty` for uncommitted changes (`unknown` outside
    /// a git checkout).
    pub commit: &'static str,
    /// The fingerprint of the measured source
    /// ([`super::fingerprint::source_fingerprint`]).
    pub source: &'static str,
    /// wavepath's version.
    pub version: &'static str,
}

/// Metadata stamped on every result row.
#[derive(Clone, Debug)]
pub struct Provenance {
    /// Commit the binary was built from (with `-dirty` for uncommitted changes).
    pub commit: String,
    /// The fingerprint of the measured source it was built from
    /// ([`super::fingerprint::source_fingerprint`]).
    pub source: String,
    /// Host CPU model and thread count.
    pub cpu: String,
    /// Host CPU model.
    pub cpu_model: String,
    /// Host hardware threads.
    pub cpu_threads: usize,
    /// wavepath's version.
    pub version: String,
    /// UTC time, RFC 3339.
    pub date: String,
}

impl Provenance {
    /// `build`'s commit and source, with the CPU model and the clock.
    pub fn collect(build: Build) -> Self {
        let model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|c| {
                c.lines()
                    .find(|l| l.starts_with("model name"))
                    .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Provenance {
            commit: build.commit.to_string(),
            source: build.source.to_string(),
            cpu: format!("{model} ({threads} threads)"),
            cpu_model: model,
            cpu_threads: threads,
            version: build.version.to_string(),
            date: now(),
        }
    }

    /// The commit without the `-dirty` mark.
    pub fn commit_hash(&self) -> &str {
        self.commit.strip_suffix("-dirty").unwrap_or(&self.commit)
    }

    /// Whether the build had uncommitted changes.
    pub fn dirty(&self) -> bool {
        self.commit.ends_with("-dirty")
    }
}

/// The current UTC time, RFC 3339, to the second.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
