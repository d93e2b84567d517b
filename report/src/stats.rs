//! Statistics over timed runs: configurations (rows grouped by study and
//! run), medians, spreads, swept parameter values and baseline matching.

use indexmap::IndexMap;
use lab::config::SeedTime;
use lab::params::SETTINGS;
use lab::records::{KernelRow, ManifestStudy, RunRow, cell};
pub use lab::statistics::{Spread, median, spread};

/// One configuration: the rows of one (study, run), i.e. its repetitions.
#[derive(Debug, Clone)]
pub struct ConfigRows {
    /// The first row, for the settings the repetitions share.
    pub row: RunRow,
    /// How many timed rows it has.
    pub runs: usize,
    /// Median of `scaled_wall_ms`.
    pub median_ms: f64,
    /// Median of `total_ms`, the whole render call (never scaled: see
    /// [`ConfigRows::time`]).
    pub median_total_ms: f64,
    /// Spread of `scaled_wall_ms`.
    pub spread: Spread,
}

/// What must agree for two configurations' times to be compared.
type ComparisonKey<'a> = (&'a str, &'a str, u32, u32, u32, u32, &'a str, bool, &'a str, u32);

impl ConfigRows {
    /// Millions of rays per second at the median time (rays scaled to
    /// `report_spp` like the time).
    pub fn mrays_per_s(&self) -> f64 {
        let r = &self.row;
        let rays = r.rays as f64 * f64::from(r.report_spp) / f64::from(r.spp.max(1));
        rays / self.median_ms / 1e3
    }

    /// Whether its time was measured at the spp it reports (not scaled
    /// from fewer with `spp_cap`).
    pub fn is_measured(&self) -> bool {
        self.row.spp >= self.row.report_spp
    }

    /// Its median time of kind `time`: the render loop (scaled to
    /// `report_spp` where it was capped) or the whole render call, which is
    /// `None` where capped, as its set-up does not scale with spp.
    pub fn time(&self, time: SeedTime) -> Option<f64> {
        match time {
            SeedTime::Wall => Some(self.median_ms),
            SeedTime::Total => self.is_measured().then_some(self.median_total_ms),
        }
    }

    /// Whether this is a GPU configuration.
    pub fn is_gpu(&self) -> bool {
        self.row.backend.starts_with("gpu")
    }

    /// Scene, overrides, image size, depth, seed, sampler, next-event
    /// estimation, accel and reported spp.
    fn comparison_key(&self) -> ComparisonKey<'_> {
        let r = &self.row;
        (
            &r.scene,
            &r.scene_overrides,
            r.width,
            r.height,
            r.max_depth,
            r.seed,
            &r.sampler,
            r.nee == "on",
            &r.accel,
            r.report_spp,
        )
    }

    /// Whether `self` and `other` render the same work.
    pub fn comparable(&self, other: &ConfigRows) -> bool {
        self.comparison_key() == other.comparison_key()
    }

    /// The value of a swept parameter `name` (as the manifest names it) for
    /// this configuration, where it is numeric: a scene field's, or the
    /// number in the first filled cell of the columns a setting's
    /// [`Axis`](lab::params::Axis)
    /// names (e.g. `capacity`: the pool's slots in use where recorded, what
    /// `auto` resolved to, else the capacity asked for).
    pub fn param(&self, name: &str) -> Option<f64> {
        if let Some(field) = name.strip_prefix("scene.") {
            return scene_override(&self.row.scene_overrides, field).and_then(parse_number);
        }
        let decl = SETTINGS.iter().find(|d| d.name == name)?;
        decl.axis_columns().iter().find_map(|column| {
            let text = cell(&self.row, column).ok()??;
            parse_number(&text)
        })
    }
}

/// A number written plainly or as a power, `2^21`.
fn parse_number(text: &str) -> Option<f64> {
    match text.trim().split_once('^') {
        Some((base, exp)) => Some(base.trim().parse::<f64>().ok()?.powf(exp.trim().parse().ok()?)),
        None => text.trim().parse().ok(),
    }
}

/// The value of `field` in overrides like `a=1, b.c[0]=2`.
pub(super) fn scene_override<'a>(overrides: &'a str, field: &str) -> Option<&'a str> {
    overrides
        .split([',', ';'])
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| k.trim() == field)
        .map(|(_, v)| v.trim())
}

/// Groups rows by (study, run) into configurations, in order of appearance.
pub fn group_configs(rows: &[RunRow]) -> Vec<ConfigRows> {
    let mut groups: IndexMap<(&str, u32), Vec<&RunRow>> = IndexMap::new();
    for row in rows {
        groups.entry((&row.study, row.run)).or_default().push(row);
    }
    groups
        .into_values()
        .filter_map(|rows| {
            let times: Vec<f64> = rows.iter().map(|r| r.scaled_wall_ms).collect();
            let totals: Vec<f64> = rows.iter().map(|r| r.total_ms).collect();
            Some(ConfigRows {
                row: rows[0].clone(),
                runs: rows.len(),
                median_ms: median(&times)?,
                median_total_ms: median(&totals)?,
                spread: spread(&times)?,
            })
        })
        .collect()
}

/// One study with its configurations and kernel profiles.
pub struct StudyData<'a> {
    /// The manifest's entry.
    pub info: &'a ManifestStudy,
    /// Its configurations, in order of appearance.
    pub configs: Vec<ConfigRows>,
    /// Its kernel profile rows.
    pub kernels: Vec<&'a KernelRow>,
}

impl<'a> StudyData<'a> {
    /// The study `info` with its configurations and kernel rows.
    pub fn new(info: &'a ManifestStudy, configs: &[ConfigRows], kernels: &'a [KernelRow]) -> Self {
        Self {
            info,
            configs: configs.iter().filter(|c| c.row.study == info.name).cloned().collect(),
            kernels: kernels.iter().filter(|k| k.study == info.name).collect(),
        }
    }

    /// The median of the fastest baseline configuration comparable to `c`.
    pub fn baseline_ms(&self, c: &ConfigRows) -> Option<f64> {
        let baseline = self.info.baseline.as_deref()?;
        fastest(
            self.configs
                .iter()
                .filter(|b| b.row.backend == baseline && b.comparable(c)),
        )
    }

    /// Speedup of `c` over its baseline.
    pub fn speedup(&self, c: &ConfigRows) -> Option<f64> {
        self.baseline_ms(c).map(|b| b / c.median_ms)
    }

    /// Speedup of `c` over its baseline in whole render calls (`None`
    /// where either is scaled from fewer spp).
    pub fn total_speedup(&self, c: &ConfigRows) -> Option<f64> {
        self.measured_speedup(c, SeedTime::Total)
    }

    /// Speedup of a measured `c` over a measured baseline in `time`:
    /// neither scaled from fewer spp. `None` where either is scaled.
    pub fn measured_speedup(&self, c: &ConfigRows, time: SeedTime) -> Option<f64> {
        let baseline = self.info.baseline.as_deref()?;
        let base = self
            .configs
            .iter()
            .filter(|b| b.row.backend == baseline && b.comparable(c) && b.is_measured())
            .filter_map(|b| b.time(time))
            .min_by(f64::total_cmp)?;
        if !c.is_measured() {
            return None;
        }
        Some(base / c.time(time)?)
    }

    /// The measured configuration of run label `run`.
    pub fn config_of_run(&self, run: &str) -> Option<&ConfigRows> {
        self.configs.iter().find(|c| c.row.config == run && c.is_measured())
    }

    /// Speedup of a CPU configuration over the study baseline or, without
    /// one, over the 1-thread run of the same CPU schedule.
    pub fn thread_speedup(&self, c: &ConfigRows) -> Option<f64> {
        let reference = self.baseline_ms(c).or_else(|| {
            fastest(self.configs.iter().filter(|o| {
                o.row.backend == c.row.backend
                    && o.row.threads == Some(1)
                    && o.row.cpu_schedule == c.row.cpu_schedule
                    && o.comparable(c)
            }))
        })?;
        Some(reference / c.median_ms)
    }

    /// Whether the study sweeps `name`.
    pub fn sweeps(&self, name: &str) -> bool {
        self.info.swept.iter().any(|s| s == name)
    }

    /// The distinct scene names of its configurations, in order of
    /// appearance.
    pub fn scene_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for c in &self.configs {
            if !names.contains(&c.row.scene_name.as_str()) {
                names.push(&c.row.scene_name);
            }
        }
        names
    }

    /// Timed rows rendered at another spp than they report, their times
    /// scaled to `report_spp`.
    pub fn scaled_rows(&self) -> usize {
        self.configs
            .iter()
            .filter(|c| c.row.spp != c.row.report_spp)
            .map(|c| c.runs)
            .sum()
    }

    /// Kernel rows of configuration `run`.
    pub fn kernels_of(&self, run: u32) -> impl Iterator<Item = &&'a KernelRow> {
        self.kernels.iter().filter(move |k| k.run == run)
    }
}

/// The smallest median among `configs`.
fn fastest<'c>(configs: impl Iterator<Item = &'c ConfigRows>) -> Option<f64> {
    configs.map(|c| c.median_ms).min_by(f64::total_cmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run row with plain settings.
    fn row(study: &str, run: u32, backend: &str, ms: f64) -> RunRow {
        RunRow {
            study: study.into(),
            run,
            config: format!("{backend} #{run}"),
            scene: "scenes/a.toml".into(),
            scene_name: "a".into(),
            primitives: 10,
            backend: backend.into(),
            width: 64,
            height: 64,
            spp: 4,
            max_depth: 8,
            seed: 1,
            report_spp: 4,
            accel: "bvh".into(),
            scaled_wall_ms: ms,
            rays: 1000,
            ..RunRow::default()
        }
    }

    /// A study named `s` with an optional baseline.
    fn study(baseline: Option<&str>) -> ManifestStudy {
        ManifestStudy {
            name: "s".into(),
            baseline: baseline.map(str::to_string),
            ..ManifestStudy::default()
        }
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn spread_is_relative_to_the_median() {
        let s = spread(&[490.0, 500.0, 520.0]).unwrap();
        assert_eq!((s.min, s.max), (490.0, 520.0));
        assert!((s.relative - 0.06).abs() < 1e-12);
        assert_eq!(spread(&[]), None);
    }

    #[test]
    fn groups_by_study_and_run() {
        let rows = [
            row("s", 0, "cpu", 3.0),
            row("s", 1, "cpu", 9.0),
            row("s", 0, "cpu", 1.0),
        ];
        let configs = group_configs(&rows);
        assert_eq!(configs.len(), 2);
        assert_eq!((configs[0].runs, configs[0].median_ms), (2, 2.0));
    }

    #[test]
    fn baseline_is_the_fastest_comparable_config_of_the_baseline_backend() {
        let mut other_scene = row("s", 2, "cpu-serial", 10.0);
        other_scene.scene = "scenes/b.toml".into();
        let mut other_spp = row("s", 3, "cpu-serial", 20.0);
        other_spp.report_spp = 8;
        let rows = [
            row("s", 0, "cpu-serial", 100.0),
            row("s", 1, "cpu-serial", 80.0),
            other_scene,
            other_spp,
            row("s", 4, "cpu", 20.0),
        ];
        let configs = group_configs(&rows);
        let info = study(Some("cpu-serial"));
        let data = StudyData::new(&info, &configs, &[]);
        assert_eq!(data.speedup(&configs[4]), Some(4.0));
        let none = study(None);
        assert_eq!(StudyData::new(&none, &configs, &[]).speedup(&configs[4]), None);
    }

    #[test]
    fn without_a_baseline_threads_scale_against_one_thread_of_the_same_schedule() {
        let cpu = |run, threads, schedule: &str, ms| {
            let mut r = row("s", run, "cpu", ms);
            (r.threads, r.cpu_schedule) = (Some(threads), Some(schedule.into()));
            r
        };
        let rows = [
            cpu(0, 1, "static-rows", 100.0),
            cpu(1, 1, "dynamic-rows", 80.0),
            cpu(2, 4, "static-rows", 25.0),
        ];
        let configs = group_configs(&rows);
        let info = study(None);
        assert_eq!(
            StudyData::new(&info, &configs, &[]).thread_speedup(&configs[2]),
            Some(4.0)
        );
    }

    #[test]
    fn scene_names_and_scaled_rows_count_configurations_rows() {
        let mut other = row("s", 1, "cpu", 2.0);
        (other.scene_name, other.spp) = ("b".into(), 1);
        let rows = [row("s", 0, "cpu", 1.0), other.clone(), other];
        let configs = group_configs(&rows);
        let info = study(None);
        let data = StudyData::new(&info, &configs, &[]);
        assert_eq!(data.scene_names(), ["a", "b"]);
        assert_eq!(data.scaled_rows(), 2);
    }

    #[test]
    fn params_from_columns_and_scene_overrides() {
        let mut r = row("s", 0, "gpu-wave", 1.0);
        r.capacity = Some("2^10".into());
        r.scene_overrides = "camera.fov=40, generators[0].grid=44".into();
        let c = &group_configs(&[r])[0];
        assert_eq!(c.param("capacity"), Some(1024.0));
        let mut auto = row("s", 0, "gpu-wave", 1.0);
        (auto.capacity, auto.pool_capacity) = (Some("auto".into()), Some(1 << 23));
        assert_eq!(group_configs(&[auto])[0].param("capacity"), Some(8388608.0));
        assert_eq!(c.param("scene.generators[0].grid"), Some(44.0));
        assert_eq!(c.param("spp"), Some(4.0));
        assert_eq!(c.param("threads"), None);
        let mut wave = row("s", 0, "gpu-wave", 1.0);
        (wave.drain_below, wave.refill, wave.seed, wave.gpus) = (Some(300), Some(0.25), 7, Some(2));
        let c = &group_configs(&[wave])[0];
        assert_eq!(c.param("drain_below"), Some(300.0));
        assert_eq!(c.param("refill"), Some(0.25));
        assert_eq!(c.param("gpus"), Some(2.0));
        // A setting without an axis is no number to plot, nor is a name
        // that is no setting.
        assert_eq!(c.param("seed"), None);
        assert_eq!(c.param("drains"), None);
    }
}
