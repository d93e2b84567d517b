//! The identical-film check: runs of a study that must render the same image
//! (same scene and fields, size, spp, depth, seed, sampler, next-event estimation and
//! structure) must have the
//! same film, compared through a hash of its fixed-point sums.

use super::records::RunRow;
pub use renderer::render::compare::film_hash;
use renderer::settings::arithmetic::Arithmetic;
use std::collections::HashMap;

/// Which runs must render the same image: same study, scene, replaced
/// fields, size, spp, depth, seed, sampler, next-event estimation,
/// structure, and exactness: every exact run renders the CPU's image, and
/// the fast GPU runs one of their own, the same for every GPU schedule.
pub fn film_group(r: &RunRow) -> String {
    let fast = r.arithmetic.as_deref() == Some(Arithmetic::Fast.name());
    format!(
        "{}|{}|{}|{}x{}|{}|{}|{}|{}|{}|{}{}",
        r.study,
        r.scene,
        r.scene_overrides,
        r.width,
        r.height,
        r.spp,
        r.max_depth,
        r.seed,
        r.sampler,
        r.nee,
        r.accel,
        if fast { "|fast" } else { "" }
    )
}

/// How the outcome of a study whose runs rendered the same images begins.
pub const IDENTICAL: &str = "identical: ";

/// Film groups: the first hash of each, its label, and how many rows agreed.
#[derive(Default)]
pub struct FilmChecks {
    groups: HashMap<String, (String, String, usize)>,
    /// The first mismatch of each study that has one.
    pub mismatches: HashMap<String, String>,
}

impl FilmChecks {
    /// Adds a row (with its film hash) to its group.
    pub fn check(&mut self, row: &RunRow) {
        let who = format!("{} (run {} rep {})", row.config, row.run, row.repetition);
        match self.groups.get_mut(&film_group(row)) {
            None => {
                self.groups.insert(film_group(row), (row.film_hash.clone(), who, 1));
            }
            Some((hash, _, n)) if *hash == row.film_hash => *n += 1,
            Some((_, first, _)) => {
                let msg = format!("{who} rendered a different image than {first}");
                self.mismatches.entry(row.study.clone()).or_insert(msg);
            }
        }
    }

    /// The outcome for `study`, as the manifest records it.
    pub fn outcome(&self, study: &str) -> String {
        if let Some(m) = self.mismatches.get(study) {
            return format!("MISMATCH: {m}");
        }
        let prefix = format!("{study}|");
        let compared = self
            .groups
            .iter()
            .filter(|(k, (_, _, n))| k.starts_with(&prefix) && *n > 1)
            .count();
        match compared {
            0 => "not checked: no two runs render the same image".into(),
            1 => format!("{IDENTICAL}1 group of runs that render the same image"),
            n => format!("{IDENTICAL}{n} groups of runs that render the same image"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use device::film::FixedRgb;

    fn row(study: &str, run: u32, spp: u32, hash: &str) -> RunRow {
        RunRow {
            study: study.into(),
            run,
            config: format!("run{run}"),
            spp,
            film_hash: hash.into(),
            ..RunRow::default()
        }
    }

    #[test]
    fn runs_that_render_the_same_image_must_agree() {
        let mut c = FilmChecks::default();
        c.check(&row("a", 0, 4, "h1"));
        assert!(c.outcome("a").starts_with("not checked"));
        c.check(&row("a", 1, 4, "h1"));
        c.check(&row("a", 2, 8, "h2")); // another spp: another image
        c.check(&row("b", 0, 4, "h9")); // another study: its own groups
        assert_eq!(c.outcome("a"), "identical: 1 group of runs that render the same image");
        c.check(&row("a", 3, 8, "h3"));
        let m = c.outcome("a");
        assert!(
            m.starts_with("MISMATCH: run3 (run 3 rep 0) rendered a different image than run2"),
            "{m}"
        );
        assert!(c.outcome("b").starts_with("not checked"));
    }

    #[test]
    fn fast_runs_agree_with_each_other_and_not_with_the_exact_ones() {
        let with = |run, arithmetic: Option<&str>, hash| RunRow {
            arithmetic: arithmetic.map(String::from),
            ..row("a", run, 4, hash)
        };
        let mut c = FilmChecks::default();
        c.check(&with(0, None, "exact")); // a CPU row
        c.check(&with(1, Some("exact"), "exact"));
        c.check(&with(2, Some("fast"), "fast"));
        c.check(&with(3, Some("fast"), "fast"));
        assert_eq!(c.outcome("a"), "identical: 2 groups of runs that render the same image");
        c.check(&with(4, Some("fast"), "other"));
        assert!(c.outcome("a").starts_with("MISMATCH: run4"), "{}", c.outcome("a"));
    }

    #[test]
    fn the_film_hash_sees_every_channel() {
        let film = |g| vec![FixedRgb { r: 1, g, b: 3 }; 4];
        assert_eq!(film_hash(&film(2)), film_hash(&film(2)));
        assert_ne!(film_hash(&film(2)), film_hash(&film(5)));
    }
}
