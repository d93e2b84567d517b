//! Figures of a study, drawn with plotters to SVG (and PNG when asked for): speedup against a
//! swept parameter, a heat map of the speedup over two swept parameters,
//! per-kernel time stacks (one per scene), time against spp
//! and against primitive count, CPU thread scaling, scaling over GPUs and
//! active lanes per warp.
//! Every figure carries a footer naming config, study and command.

use super::scaling;
use super::stats::{ConfigRows, StudyData, median};
use super::written::number;
use anyhow::{Context, anyhow};
use indexmap::IndexMap;
use lab::config::SeedTime;
use lab::params::{Axis, SETTINGS};
use lab::records::{KernelRow, Manifest};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use renderer::io::atomic_file::{self, Output};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Size of every figure, in pixels (SVG user units).
pub const SIZE: (u32, u32) = (1000, 600);
/// The one font family the figures use (registered from bundled bytes).
pub(super) const FONT: &str = "sans-serif";
/// Height of the footer strip under every chart, in pixels.
const FOOTER_HEIGHT: u32 = 22;
/// Characters of the command the footer keeps before cutting it with `…`.
const FOOTER_COMMAND_CHARS: usize = 140;
/// Ratio of largest to smallest x above which a line chart's x axis is log.
const LOG_SPAN: f64 = 100.0;
/// The most decades a log axis spans: beyond it no tick or point of the
/// figure can be read. Render times span at most 15
/// ([`super::written::MIN_TIME_MS`] to [`super::written::MAX_TIME_MS`]).
const MAX_LOG_DECADES: f64 = 20.0;

/// Whether a figure is drawn as a PNG too, beside its SVG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Png {
    /// The SVG only (the report embeds it).
    No,
    /// A PNG of the same figure too, for what cannot show an SVG.
    Yes,
}

/// One figure, drawn: its title, and its SVG file and, when asked for,
/// its PNG file, which [`Figure::write`] writes.
pub struct Figure {
    /// Title (also the image's alt text).
    pub title: String,
    /// The SVG file.
    pub svg: PathBuf,
    /// The PNG file, drawn or not.
    pub png: PathBuf,
    /// The SVG file's text.
    svg_text: String,
    /// The PNG file's bytes, when drawn.
    png_bytes: Option<Vec<u8>>,
}

impl Figure {
    /// Its files, as outputs to check before they are written.
    pub fn outputs(&self) -> Vec<Output> {
        self.files().map(|f| Output::new(f, "a figure")).collect()
    }

    /// The files it writes: the SVG, and the PNG when drawn.
    pub fn files(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.svg).chain(self.png_bytes.as_ref().map(|_| &self.png))
    }

    /// Whether its PNG was drawn.
    pub fn has_png(&self) -> bool {
        self.png_bytes.is_some()
    }

    /// Writes its files. Without a PNG, a PNG of the same name that an
    /// earlier report left is removed, so that no stale figure stays
    /// beside the new one.
    pub fn write(&self) -> anyhow::Result<()> {
        atomic_file::write(&self.svg, self.svg_text.as_bytes())?;
        match &self.png_bytes {
            Some(bytes) => atomic_file::write(&self.png, bytes),
            None if self.png.is_file() => std::fs::remove_file(&self.png)
                .with_context(|| format!("{}: cannot remove the earlier report's figure", self.png.display())),
            None => Ok(()),
        }
    }
}

/// Draws every figure that fits `study` of experiment `m`, to be written
/// into `dir` (`<study>_<kind>.svg`, and `.png` with [`Png::Yes`]; kernel
/// stacks of a study with several scenes are `<study>_kernels_<scene>`).
pub fn draw_study_figures(study: &StudyData, m: &Manifest, dir: &Path, png: Png) -> anyhow::Result<Vec<Figure>> {
    register_font()?;
    let name = &study.info.name;
    let footer = footer(name, m);
    let one = |kind: &str, plot: Option<Plot>| plot.map(|p| (kind.to_string(), p));
    let mut plots: Vec<(String, Plot)> = one("speedup", speedup_plot(study)).into_iter().collect();
    plots.extend(heat_maps(study));
    plots.extend(kernel_plots(study));
    plots.extend(
        [
            one("spp", spp_plot(study)),
            one("error", error_plot(study)),
            one("primitives", primitives_plot(study)),
            one("threads", thread_plot(study)),
            one("scaling", scaling_plot(study)),
            one("blocks", block_plot(study)),
            one("active_lanes", lanes_plot(study)),
        ]
        .into_iter()
        .flatten(),
    );
    plots
        .into_iter()
        .map(|(kind, plot)| plot.draw(dir, &format!("{name}_{kind}"), &footer, png))
        .collect()
}

/// The footer of every figure of `study`: `config … · study … · command`,
/// the command cut with `…` past [`FOOTER_COMMAND_CHARS`] characters.
fn footer(study: &str, m: &Manifest) -> String {
    let command = &m.experiment.command;
    let command = match command.char_indices().nth(FOOTER_COMMAND_CHARS) {
        Some((cut, _)) => format!("{}…", &command[..cut]),
        None => command.clone(),
    };
    format!("config {} · study {study} · {command}", m.experiment.config)
}

/// Registers the bundled Ubuntu Light as `sans-serif`, once.
pub(super) fn register_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT)
                .map_err(|_| "the bundled figure font (Ubuntu Light) is not a valid font".to_string())
        })
        .clone()
        .map_err(|e| anyhow!(e))
}

/// A named line of points.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    /// Per point: an estimate from a time scaled from fewer spp (drawn
    /// hollow), not a measurement.
    scaled: Vec<bool>,
}

/// Which of two y values at the same x a line keeps.
#[derive(Clone, Copy)]
enum Keep {
    Largest,
    Smallest,
}

/// Lines from configurations: `line` names a configuration's line (or skips
/// it), `point` gives its point and `scaled` whether that point rests on a
/// time scaled from fewer spp; at equal x the `keep` value stays. Lines and
/// points are in order of first appearance and of x.
fn lines<'c>(
    configs: impl Iterator<Item = &'c ConfigRows>,
    line: impl Fn(&ConfigRows) -> Option<String>,
    point: impl Fn(&ConfigRows) -> Option<(f64, f64)>,
    scaled: impl Fn(&ConfigRows) -> bool,
    keep: Keep,
) -> Vec<Series> {
    let mut map: IndexMap<String, Vec<(f64, f64, bool)>> = IndexMap::new();
    for c in configs {
        let (Some(name), Some((x, y))) = (line(c), point(c)) else {
            continue;
        };
        let points = map.entry(name).or_default();
        match points.iter_mut().find(|p| p.0 == x) {
            Some(p) => {
                let better = match keep {
                    Keep::Largest => y > p.1,
                    Keep::Smallest => y < p.1,
                };
                if better {
                    *p = (x, y, scaled(c));
                }
            }
            None => points.push((x, y, scaled(c))),
        }
    }
    map.into_iter()
        .map(|(name, mut points)| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                name,
                scaled: points.iter().map(|p| p.2).collect(),
                points: points.into_iter().map(|(x, y, _)| (x, y)).collect(),
            }
        })
        .collect()
}

/// Figure 1: speedup over the baseline against the first swept numeric
/// parameter that no specialised figure covers, one line per back end, or
/// per (back end, scene) when the study has several scenes. Capacity is
/// drawn on a log2 axis of paths in flight.
fn speedup_plot(study: &StudyData) -> Option<Plot> {
    let baseline = study.info.baseline.as_deref()?;
    let param = study
        .info
        .swept
        .iter()
        .find(|p| !is_specialised(p) && study.configs.iter().any(|c| c.param(p).is_some()))?;
    let per_scene = study.scene_names().len() > 1;
    let series = lines(
        study.configs.iter(),
        |c| {
            Some(if per_scene {
                format!("{} {}", c.row.backend, c.row.scene_name)
            } else {
                c.row.backend.clone()
            })
        },
        |c| Some((c.param(param)?, study.speedup(c)?)),
        |c| study.measured_speedup(c, SeedTime::Wall).is_none(),
        Keep::Largest,
    );
    let chart = LineChart::new(
        format!("Speedup over {baseline} against {param} (study {})", study.info.name),
        param_desc(param),
        format!("speedup over {baseline} (x)"),
        series,
    )?;
    Some(Plot::Line(if axis_of(param).is_some_and(|a| a.log) {
        chart.log_x()
    } else {
        chart
    }))
}

/// The axis a setting declares for its values, if `param` is a setting
/// that has one.
fn axis_of(param: &str) -> Option<&'static Axis> {
    SETTINGS.iter().find(|d| d.name == param)?.axis.as_ref()
}

/// Axis description of a swept parameter, with its unit where it has one
/// (a logarithmic axis: its unit alone).
fn param_desc(param: &str) -> String {
    match axis_of(param) {
        Some(Axis {
            unit: Some(unit),
            log: true,
            ..
        }) => unit.to_string(),
        Some(Axis { unit: Some(unit), .. }) => format!("{param} ({unit})"),
        _ => param.to_string(),
    }
}

/// Whether a swept parameter has a figure of its own.
fn is_specialised(param: &str) -> bool {
    param == "threads" || param == "spp" || param == "gpus" || param.starts_with("scene.")
}

/// Figure 3: time against spp, log-log, one line per back end.
fn spp_plot(study: &StudyData) -> Option<Plot> {
    if !study.sweeps("spp") {
        return None;
    }
    let series = lines(
        study.configs.iter(),
        |c| Some(c.row.backend.clone()),
        |c| Some((f64::from(c.row.report_spp), c.median_ms)),
        |c| !c.is_measured(),
        Keep::Smallest,
    );
    let title = format!("Time against samples per pixel (study {})", study.info.name);
    let chart = LineChart::new(title, "samples per pixel".into(), "median time (ms)".into(), series)?;
    Some(Plot::Line(chart.log()))
}

/// Error against time: the relative MSE of each configuration against the
/// study's reference image over its median time, log-log, one line per
/// variant (back end, sampler and next-event estimation, and scene where
/// the study has several):
/// lower and further left is better, and equal-time comparisons read off
/// a vertical line.
fn error_plot(study: &StudyData) -> Option<Plot> {
    study.info.reference.as_ref()?;
    let per_scene = study.scene_names().len() > 1;
    let series = lines(
        study.configs.iter(),
        |c| {
            let r = &c.row;
            let sampler = if r.sampler.is_empty() { "hash" } else { &r.sampler };
            let nee = if r.nee == "on" { " nee" } else { "" };
            Some(match per_scene {
                true => format!("{} {sampler}{nee} {}", r.backend, r.scene_name),
                false => format!("{} {sampler}{nee}", r.backend),
            })
        },
        |c| Some((c.median_ms, c.row.rel_mse?)),
        |c| !c.is_measured(),
        Keep::Smallest,
    );
    let title = format!("Relative MSE against time (study {})", study.info.name);
    let chart = LineChart::new(title, "median time (ms)".into(), "relative MSE".into(), series)?;
    Some(Plot::Line(chart.log()))
}

/// Figure 4: time against primitive count, log-log, one line per (back
/// end, accel), when a scene field is swept.
fn primitives_plot(study: &StudyData) -> Option<Plot> {
    let primitives: Vec<u64> = study.configs.iter().map(|c| c.row.primitives).collect();
    let varies = primitives.iter().any(|&p| p != primitives[0]);
    if !varies || !study.info.swept.iter().any(|p| p.starts_with("scene.")) {
        return None;
    }
    let series = lines(
        study.configs.iter(),
        |c| Some(format!("{} {}", c.row.backend, c.row.accel)),
        |c| Some((c.row.primitives as f64, c.median_ms)),
        |c| !c.is_measured(),
        Keep::Smallest,
    );
    let title = format!("Time against primitive count (study {})", study.info.name);
    let chart = LineChart::new(title, "primitives".into(), "median time (ms)".into(), series)?;
    Some(Plot::Line(chart.log()))
}

/// Figure 5: CPU thread scaling, one line per CPU schedule, with the ideal.
fn thread_plot(study: &StudyData) -> Option<Plot> {
    if !study.sweeps("threads") {
        return None;
    }
    let series = lines(
        study.configs.iter().filter(|c| c.row.backend == "cpu"),
        |c| Some(c.row.cpu_schedule.clone().unwrap_or_else(|| "cpu".into())),
        |c| Some((c.row.threads? as f64, study.thread_speedup(c)?)),
        |c| !c.is_measured(),
        Keep::Largest,
    );
    let reference = study.info.baseline.as_deref().unwrap_or("1 thread");
    let title = format!("CPU thread scaling (study {})", study.info.name);
    let chart = LineChart::new(
        title,
        "CPU threads".into(),
        format!("speedup over {reference} (x)"),
        series,
    )?;
    Some(Plot::Line(chart.with_ideal(Ideal::Diagonal)))
}

/// Scaling over GPUs, for a study that sweeps `gpus`: T1/TN against the
/// GPU count, one line per scene and back end: under strong scaling the
/// speedup with the ideal y = N, under weak scaling the efficiency with
/// the ideal y = 1 ([`scaling`]).
fn scaling_plot(study: &StudyData) -> Option<Plot> {
    if !study.sweeps("gpus") {
        return None;
    }
    let series = lines(
        study.configs.iter(),
        |c| Some(format!("{} {}", c.row.scene_name, c.row.backend)),
        |c| Some((f64::from(c.row.gpus?), scaling::ratio(study, c)?)),
        |c| !c.is_measured(),
        Keep::Largest,
    );
    let (kind, y_desc, ideal) = match scaling::is_weak(study) {
        true => ("Weak", "efficiency T1/TN (image N times as tall)", Ideal::One),
        false => ("Strong", "speedup over one GPU, T1/TN (x)", Ideal::Diagonal),
    };
    let title = format!("{kind} scaling over GPUs (study {})", study.info.name);
    let chart = LineChart::new(title, "GPUs".into(), y_desc.into(), series)?;
    Some(Plot::Line(chart.with_ideal(ideal)))
}

/// Figure 2: the kernel stacks of the study, `kernels`, or one
/// `kernels_<scene>` per scene when it has several (their times differ too
/// much to share an axis).
fn kernel_plots(study: &StudyData) -> Vec<(String, Plot)> {
    match study.scene_names().as_slice() {
        scenes @ [_, _, ..] => scenes
            .iter()
            .filter_map(|scene| Some((format!("kernels_{scene}"), kernel_plot(study, Some(scene))?)))
            .collect(),
        _ => kernel_plot(study, None)
            .map(|p| ("kernels".into(), p))
            .into_iter()
            .collect(),
    }
}

/// Per-kernel time, one stacked bar per GPU configuration (of `scene`, if
/// given) with a kernel profile, when there are wavefront profiles.
fn kernel_plot(study: &StudyData, scene: Option<&str>) -> Option<Plot> {
    let profiled: Vec<&ConfigRows> = study
        .configs
        .iter()
        .filter(|c| scene.is_none_or(|s| c.row.scene_name == s))
        .filter(|c| c.is_gpu() && study.kernels_of(c.row.run).next().is_some())
        .collect();
    if !profiled.iter().any(|c| c.row.backend == "gpu-wave") {
        return None;
    }
    let mut segments: IndexMap<String, Vec<f64>> = IndexMap::new();
    for (i, c) in profiled.iter().enumerate() {
        for (kernel, ms) in kernel_medians(study, c.row.run, |k| Some(k.total_ms)) {
            segments.entry(kernel).or_insert_with(|| vec![0.0; profiled.len()])[i] = ms;
        }
    }
    let value_max = (0..profiled.len())
        .map(|i| segments.values().map(|v| v[i]).sum::<f64>())
        .fold(0.0, f64::max);
    let scene = scene.map_or(String::new(), |s| format!(", scene {s}"));
    Some(Plot::Bars(BarChart {
        title: format!(
            "Time per kernel, median of repetitions (study {}{scene})",
            study.info.name
        ),
        value_desc: "kernel time (ms)".into(),
        categories: profiled.iter().map(|c| c.row.config.clone()).collect(),
        segments: segments.into_iter().collect(),
        value_max: value_max * 1.4,
    }))
}

/// Speedup over the baseline per megakernel block shape (a swept `block`
/// is not a number, so no line): one bar per megakernel configuration,
/// labelled with its settings and the kernel's registers and occupancy, as
/// the parallel-RTIOW report's Figure 4b shows them.
fn block_plot(study: &StudyData) -> Option<Plot> {
    if !study.sweeps("block") {
        return None;
    }
    let (mut categories, mut values) = (Vec::new(), Vec::new());
    for c in study.configs.iter().filter(|c| c.row.backend == "gpu-mega") {
        let speedup = study.speedup(c)?;
        let r = &c.row;
        let occupancy = r.occupancy.map_or("–".into(), |o| format!("{:.0}%", o * 100.0));
        let registers = r.registers.map_or("–".into(), |n| n.to_string());
        categories.push(format!("{} ({registers} registers, occupancy {occupancy})", r.config));
        values.push(speedup);
    }
    let value_max = values.iter().copied().fold(0.0, f64::max) * 1.2;
    if values.is_empty() {
        return None;
    }
    let baseline = study.info.baseline.as_deref().unwrap_or("the baseline");
    Some(Plot::Bars(BarChart {
        title: format!(
            "Megakernel speedup over {baseline} per block shape (study {})",
            study.info.name
        ),
        value_desc: format!("speedup over {baseline} (x, render loop)"),
        categories,
        segments: vec![("speedup".into(), values)],
        value_max,
    }))
}

/// Figure 6: mean active lanes per warp of each profiled kernel.
fn lanes_plot(study: &StudyData) -> Option<Plot> {
    let mut categories = Vec::new();
    let mut values = Vec::new();
    for c in &study.configs {
        for (kernel, lanes) in kernel_medians(study, c.row.run, |k| k.active_lanes) {
            categories.push(format!("{kernel} ({})", c.row.config));
            values.push(lanes);
        }
    }
    if values.is_empty() {
        return None;
    }
    Some(Plot::Bars(BarChart {
        title: format!(
            "Active lanes per warp at the material branch (study {})",
            study.info.name
        ),
        value_desc: "active lanes per warp (of 32)".into(),
        categories,
        segments: vec![("active lanes".into(), values)],
        value_max: 32.0,
    }))
}

/// Heat maps of the speedup over the baseline across the first two swept
/// numeric parameters, scene fields first (x across, y up): one per back end and material sort
/// other than the baseline, each cell the best speedup among that
/// group's configurations there (over the baseline's best), with the 1.0
/// contour drawn between cells on either side of it.
fn heat_maps(study: &StudyData) -> Vec<(String, Plot)> {
    let Some(baseline) = study.info.baseline.as_deref() else {
        return Vec::new();
    };
    // Scene fields first: they are what the scene varies (the back ends'
    // own settings are what the cells pick the best of).
    let mut numeric: Vec<&String> = study
        .info
        .swept
        .iter()
        .filter(|p| study.configs.iter().any(|c| c.param(p).is_some()))
        .collect();
    numeric.sort_by_key(|p| !p.starts_with("scene."));
    let [x_param, y_param, ..] = numeric[..] else {
        return Vec::new();
    };
    let mut groups: IndexMap<String, Vec<&ConfigRows>> = IndexMap::new();
    for c in study.configs.iter().filter(|c| c.row.backend != baseline) {
        let sort = c.row.material_sort.as_deref().map(|s| format!(", material sort {s}"));
        let key = format!("{}{}", c.row.backend, sort.unwrap_or_default());
        groups.entry(key).or_default().push(c);
    }
    let values = |param: &str| {
        let mut v: Vec<f64> = study.configs.iter().filter_map(|c| c.param(param)).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    let (xs, ys) = (values(x_param), values(y_param));
    groups
        .into_iter()
        .enumerate()
        .filter_map(|(i, (group, configs))| {
            let mut cells = vec![vec![None::<f64>; xs.len()]; ys.len()];
            for c in configs {
                let (Some(x), Some(y), Some(s)) = (c.param(x_param), c.param(y_param), study.speedup(c)) else {
                    continue;
                };
                let (Some(col), Some(row)) = (xs.iter().position(|&v| v == x), ys.iter().position(|&v| v == y)) else {
                    continue;
                };
                let cell = &mut cells[row][col];
                *cell = Some(cell.map_or(s, |best: f64| best.max(s)));
            }
            cells.iter().flatten().any(Option::is_some).then(|| {
                let plot = Plot::Heat(HeatMap {
                    title: format!("{group} over the best {baseline} (study {})", study.info.name),
                    x_desc: param_desc(x_param),
                    y_desc: param_desc(y_param),
                    xs: xs.clone(),
                    ys: ys.clone(),
                    cells,
                });
                (format!("heat_map_{i}"), plot)
            })
        })
        .collect()
}

/// Per kernel of configuration `run` (in order of appearance), the median
/// over repetitions of `value`, for kernels that have it.
fn kernel_medians(study: &StudyData, run: u32, value: impl Fn(&KernelRow) -> Option<f64>) -> Vec<(String, f64)> {
    let mut by_kernel: IndexMap<&str, Vec<f64>> = IndexMap::new();
    for k in study.kernels_of(run) {
        if let Some(v) = value(k) {
            by_kernel.entry(&k.kernel).or_default().push(v);
        }
    }
    by_kernel
        .into_iter()
        .filter_map(|(kernel, vs)| Some((kernel.to_string(), median(&vs)?)))
        .collect()
}

/// A figure to draw.
enum Plot {
    Line(LineChart),
    Bars(BarChart),
    Heat(HeatMap),
}

impl Plot {
    /// Draws the figure with `footer`, as `dir/<stem>.svg` and, with
    /// [`Png::Yes`], `.png`.
    fn draw(&self, dir: &Path, stem: &str, footer: &str, png: Png) -> anyhow::Result<Figure> {
        let svg_path = dir.join(format!("{stem}.svg"));
        let png_path = dir.join(format!("{stem}.png"));
        let mut svg = String::new();
        self.paint(SVGBackend::with_string(&mut svg, SIZE).into_drawing_area(), footer)
            .with_context(|| format!("{}: cannot draw the figure", svg_path.display()))?;
        let png_bytes = match png {
            Png::No => None,
            Png::Yes => {
                let mut rgb = vec![255u8; SIZE.0 as usize * SIZE.1 as usize * 3];
                self.paint(BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area(), footer)
                    .with_context(|| format!("{}: cannot draw the figure", png_path.display()))?;
                Some(encode_png(rgb)?)
            }
        };
        Ok(Figure {
            title: self.title().to_string(),
            svg: svg_path,
            png: png_path,
            svg_text: svg,
            png_bytes,
        })
    }

    /// Fills the background, draws the chart above a strip with `footer`
    /// and finishes `root`.
    fn paint<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>, footer: &str) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let (chart_area, footer_area) = root.split_vertically(SIZE.1 - FOOTER_HEIGHT);
        match self {
            Plot::Line(chart) => chart.draw(&chart_area)?,
            Plot::Bars(chart) => chart.draw(&chart_area)?,
            Plot::Heat(chart) => chart.draw(&chart_area)?,
        }
        let style = TextStyle::from((FONT, 12).into_font()).color(&RGBColor(90, 90, 90));
        footer_area.draw_text(footer, &style, (16, 4))?;
        root.present()?;
        Ok(())
    }

    /// The figure's title.
    fn title(&self) -> &str {
        match self {
            Plot::Line(chart) => &chart.title,
            Plot::Bars(chart) => &chart.title,
            Plot::Heat(chart) => &chart.title,
        }
    }
}

/// Encodes an RGB buffer of [`SIZE`] as PNG.
fn encode_png(rgb: Vec<u8>) -> anyhow::Result<Vec<u8>> {
    let image = image::RgbImage::from_raw(SIZE.0, SIZE.1, rgb).context("figure buffer of the wrong size")?;
    let mut png = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut png, image::ImageFormat::Png)
        .context("cannot encode the figure as PNG")?;
    Ok(png.into_inner())
}

/// The title, margins and label areas every chart shares.
fn chart_builder<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &'b str,
    y_label_area: u32,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, (FONT, 22))
        .margin(16)
        .x_label_area_size(52)
        .y_label_area_size(y_label_area);
    builder
}

/// Colour of the `i`-th series.
fn color(i: usize) -> RGBAColor {
    Palette99::pick(i).to_rgba()
}

/// Lines of points on linear, log-x or log-log axes.
struct LineChart {
    title: String,
    x_desc: String,
    y_desc: String,
    series: Vec<Series>,
    /// Log x axis even when x spans less than [`LOG_SPAN`].
    log_x: bool,
    /// Log y axis too (with a log x axis).
    log_y: bool,
    /// The dashed ideal line, if drawn.
    ideal: Option<Ideal>,
}

/// A chart's ideal line, drawn dashed at the points' x values.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ideal {
    /// y = x: a speedup equal to the threads or GPUs.
    Diagonal,
    /// y = 1: an efficiency of one.
    One,
}

impl Ideal {
    /// The line's points at `xs`.
    fn points(self, xs: &[f64]) -> Vec<(f64, f64)> {
        xs.iter()
            .map(|&x| match self {
                Ideal::Diagonal => (x, x),
                Ideal::One => (x, 1.0),
            })
            .collect()
    }

    /// Its legend entry.
    fn label(self) -> &'static str {
        match self {
            Ideal::Diagonal => "ideal (y = x)",
            Ideal::One => "ideal (y = 1)",
        }
    }
}

/// How a line chart's axes map values; `base` is the x axis's log base.
#[derive(Clone, Copy)]
enum Axes {
    Linear,
    LogX { base: f64 },
    LogLog { base: f64 },
}

impl LineChart {
    /// A linear chart of `series`; `None` when there is nothing to draw.
    fn new(title: String, x_desc: String, y_desc: String, series: Vec<Series>) -> Option<Self> {
        series.iter().any(|s| !s.points.is_empty()).then_some(Self {
            title,
            x_desc,
            y_desc,
            series,
            log_x: false,
            log_y: false,
            ideal: None,
        })
    }

    /// The same chart on log-log axes.
    fn log(self) -> Self {
        Self {
            log_x: true,
            log_y: true,
            ..self
        }
    }

    /// The same chart on a log x axis.
    fn log_x(self) -> Self {
        Self { log_x: true, ..self }
    }

    /// The same chart with the dashed `ideal` line.
    fn with_ideal(self, ideal: Ideal) -> Self {
        Self {
            ideal: Some(ideal),
            ..self
        }
    }

    /// Smallest and largest `coord` of all points.
    fn extent(&self, coord: impl Fn(&(f64, f64)) -> f64) -> (f64, f64) {
        min_max(self.series.iter().flat_map(|s| &s.points).map(coord))
    }

    /// The x values of all points, sorted, without repeats.
    fn xs(&self) -> Vec<f64> {
        let mut xs: Vec<f64> = self.series.iter().flat_map(|s| &s.points).map(|p| p.0).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        xs
    }

    /// The axes: log x where asked or where x spans more than [`LOG_SPAN`]
    /// (base 2 when every x is a power of two, else 10), log y where asked;
    /// linear where some x (or y, for y) is not positive.
    fn axes(&self) -> Axes {
        let (lo, hi) = self.extent(|p| p.0);
        if lo <= 0.0 || !(self.log_x || hi / lo > LOG_SPAN) {
            return Axes::Linear;
        }
        let base = if self.xs().into_iter().all(is_power_of_two) {
            2.0
        } else {
            10.0
        };
        if self.log_y && self.extent(|p| p.1).0 > 0.0 {
            Axes::LogLog { base }
        } else {
            Axes::LogX { base }
        }
    }

    /// Bounds (x, y) of the points (and of the ideal line) on `axes`,
    /// padded.
    fn bounds(&self, axes: Axes) -> ((f64, f64), (f64, f64)) {
        let (x_lo, x_hi) = self.extent(|p| p.0);
        let (y_lo, y_hi) = self.extent(|p| p.1);
        let ideal_hi = self
            .ideal
            .map_or(y_hi, |i| min_max(i.points(&self.xs()).iter().map(|p| p.1)).1);
        let y_hi = y_hi.max(ideal_hi);
        let x = match axes {
            Axes::Linear => {
                let pad = ((x_hi - x_lo) * 0.05).max(0.5);
                (x_lo - pad, x_hi + pad)
            }
            Axes::LogX { .. } | Axes::LogLog { .. } => (x_lo / 1.5, x_hi * 1.5),
        };
        let y = match axes {
            Axes::LogLog { .. } => (y_lo / 1.5, y_hi * 1.5),
            Axes::Linear | Axes::LogX { .. } => (0.0, y_hi * 1.15),
        };
        (x, y)
    }

    /// Draws the chart on `root`, on the axes of [`Self::axes`], each
    /// range checked ([`axis_range`]).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let axes = self.axes();
        let ((x0, x1), (y0, y1)) = self.bounds(axes);
        let (log_x, log_y) = match axes {
            Axes::Linear => (false, false),
            Axes::LogX { .. } => (true, false),
            Axes::LogLog { .. } => (true, true),
        };
        let (x, y) = (axis_range(x0, x1, log_x)?, axis_range(y0, y1, log_y)?);
        match axes {
            Axes::Linear => self.draw_on(root, x, y, tick),
            Axes::LogX { base } => self.draw_on(root, x.log_scale().base(base), y, log_tick),
            Axes::LogLog { base } => self.draw_on(root, x.log_scale().base(base), y.log_scale(), log_tick),
        }
    }

    /// Draws the mesh (x ticks written by `x_tick`), lines, points and
    /// legend on axes `x` and `y`.
    fn draw_on<DB, X, Y>(
        &self,
        root: &DrawingArea<DB, Shift>,
        x: X,
        y: Y,
        x_tick: fn(&f64) -> String,
    ) -> anyhow::Result<()>
    where
        DB: DrawingBackend,
        DB::ErrorType: 'static,
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let mut chart = chart_builder(root, &self.title, 80).build_cartesian_2d(x, y)?;
        chart
            .configure_mesh()
            .x_desc(self.x_desc.as_str())
            .y_desc(self.y_desc.as_str())
            .x_label_formatter(&x_tick)
            .y_label_formatter(&tick)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()?;
        for (i, s) in self.series.iter().enumerate() {
            let style = color(i).stroke_width(2);
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), style))?
                .label(s.name.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
            // Measured points are filled; estimates scaled from fewer spp
            // are hollow.
            chart.draw_series(s.points.iter().zip(&s.scaled).map(|(&p, &scaled)| {
                let style = if scaled {
                    color(i).stroke_width(2)
                } else {
                    color(i).filled()
                };
                Circle::new(p, 4, style)
            }))?;
        }
        if let Some(ideal) = self.ideal {
            let style = BLACK.stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(ideal.points(&self.xs()), 10, 6, style))?
                .label(ideal.label())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
    }
}

/// Draws `chart`'s legend at `position`, in the style every figure shares.
fn draw_legend<'a, DB, CT>(chart: &mut ChartContext<'a, DB, CT>, position: SeriesLabelPosition) -> anyhow::Result<()>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .label_font((FONT, 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// The range of an axis from `lo` to `hi`, on a log scale where `log`:
/// both ends finite, and on a log scale above 0 and at most
/// [`MAX_LOG_DECADES`] apart. Any other is refused, saying what it spans:
/// plotters would look for ticks on an infinite range for ever.
pub(super) fn axis_range(lo: f64, hi: f64, log: bool) -> anyhow::Result<std::ops::Range<f64>> {
    let finite = lo.is_finite() && hi.is_finite() && lo <= hi;
    if finite && (!log || (lo > 0.0 && (hi / lo).log10() <= MAX_LOG_DECADES)) {
        return Ok(lo..hi);
    }
    let expected = if log {
        format!(", above 0 and at most {MAX_LOG_DECADES} decades apart, on its log scale")
    } else {
        String::new()
    };
    Err(anyhow!(
        "an axis from {} to {} cannot be drawn (expected finite ends{expected})",
        number(lo),
        number(hi)
    ))
}

/// Smallest and largest of `values` (0, 1 when empty).
fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) }
}

/// An axis tick: at most two decimals, no trailing zeros (`4`, `2.5`).
fn tick(v: &f64) -> String {
    let text = format!("{v:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A log axis tick: powers of two from 2^10 up as `2^K`, others as
/// [`tick`].
fn log_tick(v: &f64) -> String {
    if *v >= 1024.0 && is_power_of_two(*v) {
        format!("2^{}", (*v as u64).trailing_zeros())
    } else {
        tick(v)
    }
}

/// Whether `v` is a whole power of two (1, 2, 4, …) below 2^64.
fn is_power_of_two(v: f64) -> bool {
    v >= 1.0 && v < u64::MAX as f64 && v.fract() == 0.0 && (v as u64).is_power_of_two()
}

/// Horizontal bars, one per category (top to bottom), stacked by segment.
struct BarChart {
    title: String,
    value_desc: String,
    categories: Vec<String>,
    /// Segment name and its value for each category.
    segments: Vec<(String, Vec<f64>)>,
    value_max: f64,
}

impl BarChart {
    /// Draws the bars, their category labels and the segment legend.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let n = self.categories.len();
        // At least two rows: plotters labels no row of a one-row axis (a
        // lone bar then sits in the top row).
        let rows = n.max(2);
        let longest = self.categories.iter().map(|c| c.chars().count()).max().unwrap_or(0);
        let label_area = (longest as u32 * 7 + 24).clamp(80, 460);
        let mut chart = chart_builder(root, &self.title, label_area)
            .build_cartesian_2d(axis_range(0.0, self.value_max, false)?, (0..rows - 1).into_segmented())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(self.value_desc.as_str())
            .x_label_formatter(&tick)
            .y_labels(rows)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => rows
                    .checked_sub(i + 1)
                    .and_then(|j| self.categories.get(j))
                    .cloned()
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 16))
            .draw()?;
        let mut start = vec![0.0; n];
        for (i, (name, values)) in self.segments.iter().enumerate() {
            let fill = color(i).filled();
            let bars = values.iter().enumerate().map(|(c, &v)| {
                let (x0, row) = (start[c], rows - 1 - c);
                start[c] += v;
                let mut bar = Rectangle::new(
                    [(x0, SegmentValue::Exact(row)), (x0 + v, SegmentValue::Exact(row + 1))],
                    fill,
                );
                bar.set_margin(6, 6, 0, 0);
                bar
            });
            chart
                .draw_series(bars.collect::<Vec<_>>())?
                .label(name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 12, y + 6)], fill));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}

/// Speedups over a grid of two parameters' values: coloured cells (blue
/// below 1, red above, by log2), each labelled with its value, and the 1.0
/// contour as thick lines on the edges between cells on either side.
struct HeatMap {
    title: String,
    x_desc: String,
    y_desc: String,
    /// The x parameter's values, across.
    xs: Vec<f64>,
    /// The y parameter's values, up.
    ys: Vec<f64>,
    /// `cells[row][column]`, row `i` at `ys[i]`; `None` where not measured.
    cells: Vec<Vec<Option<f64>>>,
}

impl HeatMap {
    /// The colour of speedup `s`: white at 1, saturating at 1/8 and 8.
    fn shade(s: f64) -> RGBColor {
        let t = (s.log2() / 3.0).clamp(-1.0, 1.0);
        let fade = |full: u8| (255.0 - (255.0 - f64::from(full)) * t.abs()) as u8;
        if t >= 0.0 {
            RGBColor(fade(200), fade(40), fade(40))
        } else {
            RGBColor(fade(40), fade(80), fade(200))
        }
    }

    /// Draws the cells, their values, the contour and the axes.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (nx, ny) = (self.xs.len(), self.ys.len());
        let mut chart = chart_builder(root, &self.title, 70).build_cartesian_2d(0.0..nx as f64, 0.0..ny as f64)?;
        let label = |values: &[f64], v: f64| {
            let i = v.floor() as usize;
            if (v - v.floor() - 0.5).abs() < 1e-6 && i < values.len() {
                tick(&values[i])
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(self.x_desc.as_str())
            .y_desc(self.y_desc.as_str())
            .x_labels(2 * nx + 1)
            .y_labels(2 * ny + 1)
            .x_label_formatter(&|v| label(&self.xs, *v))
            .y_label_formatter(&|v| label(&self.ys, *v))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()?;
        let cell = |row: usize, col: usize| self.cells[row][col];
        for row in 0..ny {
            for col in 0..nx {
                let Some(s) = cell(row, col) else { continue };
                let (x, y) = (col as f64, row as f64);
                chart.draw_series([Rectangle::new([(x, y), (x + 1.0, y + 1.0)], Self::shade(s).filled())])?;
                let style = TextStyle::from((FONT, 16).into_font()).pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Center,
                ));
                chart.draw_series([Text::new(format!("{s:.2}×"), (x + 0.5, y + 0.5), style)])?;
            }
        }
        // The contour: every edge between two measured cells on either
        // side of 1.
        let above = |row: usize, col: usize| cell(row, col).map(|s| s >= 1.0);
        let mut edges = Vec::new();
        for row in 0..ny {
            for col in 0..nx {
                let Some(here) = above(row, col) else { continue };
                if col + 1 < nx && above(row, col + 1).is_some_and(|a| a != here) {
                    let x = (col + 1) as f64;
                    edges.push([(x, row as f64), (x, row as f64 + 1.0)]);
                }
                if row + 1 < ny && above(row + 1, col).is_some_and(|a| a != here) {
                    let y = (row + 1) as f64;
                    edges.push([(col as f64, y), (col as f64 + 1.0, y)]);
                }
            }
        }
        let contour = BLACK.stroke_width(4);
        chart
            .draw_series(edges.into_iter().map(|e| PathElement::new(e.to_vec(), contour)))?
            .label("speedup 1.0")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], contour));
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::group_configs;
    use lab::records::{ManifestStudy, RunRow};

    #[test]
    fn an_axis_is_titled_by_the_unit_its_setting_declares() {
        assert_eq!(param_desc("drain_below"), "drain_below (paths)");
        assert_eq!(param_desc("wave_block"), "wave_block (threads per block)");
        assert_eq!(param_desc("capacity"), "paths in flight");
        assert!(axis_of("capacity").is_some_and(|a| a.log));
        assert_eq!(param_desc("threads"), "threads");
        assert_eq!(param_desc("scene.camera.fov"), "scene.camera.fov");
    }

    /// A timed row of `backend` on `scene`, wavefront rows with `slots`
    /// paths in flight (asked for as `auto`).
    fn row(run: u32, scene: &str, backend: &str, slots: Option<usize>, ms: f64) -> RunRow {
        RunRow {
            study: "s".into(),
            run,
            config: format!("{scene} {backend} #{run}"),
            scene: format!("scenes/{scene}.toml"),
            scene_name: scene.into(),
            backend: backend.into(),
            capacity: slots.map(|_| "auto".into()),
            pool_capacity: slots,
            scaled_wall_ms: ms,
            ..RunRow::default()
        }
    }

    /// Megakernel and two wavefront capacities on each of `scenes`.
    fn rows(scenes: &[&str]) -> Vec<RunRow> {
        let mut rows = Vec::new();
        for scene in scenes {
            let run = rows.len() as u32;
            rows.push(row(run, scene, "gpu-mega", None, 10.0));
            rows.push(row(run + 1, scene, "gpu-wave", Some(1 << 18), 40.0));
            rows.push(row(run + 2, scene, "gpu-wave", Some(1 << 27), 8.0));
        }
        rows
    }

    /// A kernel row of configuration `run`.
    fn kernel(run: u32) -> KernelRow {
        KernelRow {
            study: "s".into(),
            run,
            kernel: "wf_extend".into(),
            total_ms: 5.0,
            ..KernelRow::default()
        }
    }

    /// Study `info` over `rows`, with kernel rows `kernels`.
    fn study<'a>(info: &'a ManifestStudy, rows: &[RunRow], kernels: &'a [KernelRow]) -> StudyData<'a> {
        StudyData::new(info, &group_configs(rows), kernels)
    }

    /// A study over capacity with the megakernel as baseline.
    fn capacity_study() -> ManifestStudy {
        ManifestStudy {
            name: "s".into(),
            baseline: Some("gpu-mega".into()),
            swept: vec!["capacity".into()],
            ..ManifestStudy::default()
        }
    }

    /// The line chart of `plot`.
    fn line_chart(plot: Option<Plot>) -> LineChart {
        match plot {
            Some(Plot::Line(chart)) => chart,
            _ => panic!("expected a line chart"),
        }
    }

    #[test]
    fn scaling_draws_t1_over_tn_against_gpus_with_the_ideal() {
        use crate::scaling::tests::{info, rows};
        let strong = info(false);
        let chart = line_chart(scaling_plot(&study(&strong, &rows(), &[])));
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["cs500 gpu-mega", "cs500 gpu-wave"]);
        // 800 ms on one GPU, 400 on two, 250 on four; 600 and 400.
        assert_eq!(chart.series[0].points, [(1.0, 1.0), (2.0, 2.0), (4.0, 3.2)]);
        assert_eq!(chart.series[1].points, [(1.0, 1.0), (2.0, 1.5)]);
        assert_eq!(chart.ideal, Some(Ideal::Diagonal));
        assert_eq!(
            Ideal::Diagonal.points(&chart.xs()),
            [(1.0, 1.0), (2.0, 2.0), (4.0, 4.0)]
        );
        // The ideal's top (4) sets the y axis, past the best point (3.2).
        assert_eq!(chart.bounds(chart.axes()).1, (0.0, 4.0 * 1.15));
        let weak = info(true);
        let chart = line_chart(scaling_plot(&study(&weak, &rows(), &[])));
        assert_eq!(chart.ideal, Some(Ideal::One));
        assert!(chart.y_desc.starts_with("efficiency"));
        assert_eq!(Ideal::One.points(&chart.xs()), [(1.0, 1.0), (2.0, 1.0), (4.0, 1.0)]);
        let unswept = ManifestStudy::default();
        assert!(scaling_plot(&study(&unswept, &rows(), &[])).is_none());
    }

    #[test]
    fn speedup_has_a_line_per_back_end_and_scene_on_a_log2_capacity_axis() {
        let info = capacity_study();
        let chart = line_chart(speedup_plot(&study(&info, &rows(&["a", "b"]), &[])));
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["gpu-wave a", "gpu-wave b"]);
        assert_eq!(chart.series[0].points, [(262144.0, 0.25), (134217728.0, 1.25)]);
        assert_eq!(chart.x_desc, "paths in flight");
        assert!(matches!(chart.axes(), Axes::LogX { base: 2.0 }));
        let one = line_chart(speedup_plot(&study(&info, &rows(&["a"]), &[])));
        assert_eq!(one.series.len(), 1);
        assert_eq!(one.series[0].name, "gpu-wave");
    }

    #[test]
    fn heat_maps_take_each_cells_best_over_the_best_baseline_per_back_end_and_sort() {
        let info = ManifestStudy {
            name: "s".into(),
            baseline: Some("gpu-mega".into()),
            swept: vec!["max_registers".into(), "scene.k".into(), "scene.n".into()],
            ..ManifestStudy::default()
        };
        // Cells (k, n) in {1, 4} x {2, 8}; the megakernel takes 10 ms at
        // its best (20 ms capped at 80), the wavefront 5 ms sorted and 20
        // unsorted, except at (4, 8) where sorting is 40 ms capped at 80.
        let mut rows = Vec::new();
        for (k, n) in [(1, 2), (4, 2), (1, 8), (4, 8)] {
            let cell = |run: usize, backend: &str, cap: u32, sort: Option<&str>, ms: f64| RunRow {
                scene_overrides: format!("k={k}, n={n}"),
                max_registers: Some(cap),
                material_sort: sort.map(Into::into),
                ..row(run as u32, "m", backend, None, ms)
            };
            let run = rows.len();
            let sorted_ms = if (k, n) == (4, 8) { 40.0 } else { 5.0 };
            rows.extend([
                cell(run, "gpu-mega", 80, None, 20.0),
                cell(run + 1, "gpu-mega", 128, None, 10.0),
                cell(run + 2, "gpu-wave", 80, Some("variant"), sorted_ms),
                cell(run + 3, "gpu-wave", 128, Some("off"), 20.0),
            ]);
        }
        let data = study(&info, &rows, &[]);
        let maps = heat_maps(&data);
        let heat = |i: usize| match &maps[i].1 {
            Plot::Heat(h) => h,
            _ => panic!("expected a heat map"),
        };
        assert_eq!(maps.len(), 2, "one per (back end, sort)");
        let sorted = heat(0);
        assert!(
            sorted
                .title
                .starts_with("gpu-wave, material sort variant over the best gpu-mega")
        );
        assert_eq!(
            (sorted.xs.as_slice(), sorted.ys.as_slice()),
            ([1.0, 4.0].as_slice(), [2.0, 8.0].as_slice())
        );
        assert_eq!(sorted.cells, [[Some(2.0), Some(2.0)], [Some(2.0), Some(0.25)]]);
        assert_eq!(heat(1).cells, [[Some(0.5), Some(0.5)], [Some(0.5), Some(0.5)]]);
        assert_eq!(sorted.x_desc, "scene.k");
    }

    #[test]
    fn several_scenes_get_a_kernel_stack_each() {
        let info = capacity_study();
        let kernels: Vec<KernelRow> = (0..6).map(kernel).collect();
        let stems = |scenes: &[&str]| -> Vec<String> {
            let data = study(&info, &rows(scenes), &kernels);
            kernel_plots(&data).into_iter().map(|(stem, _)| stem).collect()
        };
        assert_eq!(stems(&["a", "b"]), ["kernels_a", "kernels_b"]);
        assert_eq!(stems(&["a"]), ["kernels"]);
    }

    #[test]
    fn points_scaled_from_fewer_spp_are_marked_and_follow_the_kept_value() {
        let measured = |run, ms| RunRow {
            spp: 16,
            report_spp: 16,
            ..row(run, "a", "cpu", None, ms)
        };
        // Run 1 is scaled from 4 spp; at x = 1 it is the faster of two.
        let rows = [
            measured(0, 30.0),
            RunRow {
                spp: 4,
                report_spp: 16,
                ..row(1, "a", "cpu", None, 20.0)
            },
            measured(2, 50.0),
        ];
        let configs = group_configs(&rows);
        let x = |c: &ConfigRows| if c.row.run == 2 { 2.0 } else { 1.0 };
        let series = lines(
            configs.iter(),
            |c| Some(c.row.backend.clone()),
            |c| Some((x(c), c.median_ms)),
            |c| !c.is_measured(),
            Keep::Smallest,
        );
        assert_eq!(series[0].points, [(1.0, 20.0), (2.0, 50.0)]);
        assert_eq!(series[0].scaled, [true, false]);
    }

    #[test]
    fn x_is_log_past_a_span_of_a_hundred_base_two_for_powers_of_two() {
        let chart = |xs: &[f64]| {
            let points: Vec<(f64, f64)> = xs.iter().map(|&x| (x, 1.0)).collect();
            let series = vec![Series {
                name: "l".into(),
                scaled: vec![false; points.len()],
                points,
            }];
            LineChart::new(String::new(), String::new(), String::new(), series).unwrap()
        };
        assert!(matches!(chart(&[1.0, 16.0]).axes(), Axes::Linear));
        assert!(matches!(chart(&[1.0, 16.0]).log().axes(), Axes::LogLog { base: 2.0 }));
        assert!(matches!(chart(&[1.0, 1024.0]).axes(), Axes::LogX { base: 2.0 }));
        assert!(matches!(chart(&[3.0, 500.0]).axes(), Axes::LogX { base: 10.0 }));
        assert_eq!(
            (log_tick(&262144.0), log_tick(&512.0), log_tick(&2.5)),
            ("2^18".into(), "512".into(), "2.5".into())
        );
    }

    #[test]
    fn an_axis_that_cannot_be_drawn_is_refused_and_a_log_y_needs_positive_values() {
        let chart = |points: Vec<(f64, f64)>| {
            let series = vec![Series {
                name: "l".into(),
                scaled: vec![false; points.len()],
                points,
            }];
            LineChart::new("t".into(), String::new(), String::new(), series).unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        // An infinite speedup (a time of 0 over another) on a linear y.
        let infinite = Plot::Line(chart(vec![(1.0, 1.0), (2.0, f64::INFINITY)]));
        let e = format!(
            "{:#}",
            infinite.draw(dir.path(), "f", "", Png::Yes).err().expect("refused")
        );
        assert!(
            e.contains("an axis from 0 to inf cannot be drawn (expected finite ends)"),
            "{e}"
        );
        // Thirty decades on a log x.
        let wide = Plot::Line(chart(vec![(1e-20, 1.0), (1e10, 2.0)]));
        let e = format!("{:#}", wide.draw(dir.path(), "f", "", Png::Yes).err().expect("refused"));
        assert!(e.contains("at most 20 decades apart"), "{e}");
        // An error of 0 cannot stand on a log y: the y axis is linear.
        let zero = chart(vec![(1.0, 0.0), (1000.0, 0.5)]).log();
        assert!(matches!(zero.axes(), Axes::LogX { base: 10.0 }));
        assert!(Plot::Line(zero).draw(dir.path(), "f", "", Png::Yes).is_ok());
        assert_eq!(axis_range(1e-6, 1e9, true).unwrap(), 1e-6..1e9);
        for (lo, hi, log) in [(0.0, f64::NAN, false), (0.0, 1.0, true), (2.0, 1.0, false)] {
            assert!(axis_range(lo, hi, log).is_err(), "{lo}..{hi}");
        }
    }

    #[test]
    fn footer_names_config_study_and_a_cut_command() {
        let mut m = Manifest::default();
        m.experiment.config = "experiments/e.toml".into();
        m.experiment.command = "wavepath experiment".into();
        assert_eq!(
            footer("s", &m),
            "config experiments/e.toml · study s · wavepath experiment"
        );
        m.experiment.command = "é".repeat(200);
        let cut = footer("s", &m);
        assert!(cut.ends_with(&format!("{}…", "é".repeat(140))), "{cut}");
    }
}
