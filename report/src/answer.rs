//! The summary's first section, "The answer": per study that sets the
//! megakernel against the wavefront, the range of the wavefront's speedup
//! over the megakernel across the study's scenes and its best case, and a
//! figure of every scene's speedup per study (`figures/answer.svg`).
//!
//! Both are drawn from the summary's megakernel-against-wavefront rows, so
//! the README, which carries the section between markers (checked by
//! `tests/docs.rs`), states no figure of its own. Beside them stands the
//! baseline's own speed against the outside peers (`report::peers`): a
//! table in the section and a panel under the figure's chart.

use super::figures::{FONT, SIZE, axis_range, register_font};
use super::markdown::text;
use super::peers::{self, Standing};
use super::tables::{fmt_speedup, table_head, table_row};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The figure's path inside the results folder.
pub const FIGURE: &str = "figures/answer.svg";
/// The section's heading line.
pub const HEADING: &str = "## The answer";

/// One scene of one study: the wavefront's speedup over the megakernel,
/// each at its fastest measured configuration.
pub struct SceneSpeedup {
    /// The study as the summary cites it (`folder` / `study`, linked).
    pub study: String,
    /// The study as the figure labels it, `folder / study`, as written.
    pub label: String,
    /// The scene's name.
    pub scene: String,
    /// The scene fields the study set, `path=value;…` (empty where none).
    pub overrides: String,
    /// The megakernel's time over the wavefront's (above 1: the wavefront
    /// wins).
    pub speedup: f64,
    /// The device cell of the study's folder.
    pub device: String,
    /// The commit cell of the study's folder.
    pub commit: String,
    /// The measured-source cell of the study's folder.
    pub measured: String,
}

impl SceneSpeedup {
    /// The scene with its fields shortened to their last path segment
    /// (`material_cost (materials=16, octaves=64)`).
    fn scene_label(&self) -> String {
        if self.overrides.is_empty() {
            return self.scene.clone();
        }
        let fields: Vec<&str> = self
            .overrides
            .split(';')
            .map(|field| match field.split_once('=') {
                Some((path, _)) => &field[path.rfind('.').map_or(0, |dot| dot + 1)..],
                None => field,
            })
            .collect();
        format!("{} ({})", self.scene, fields.join(", "))
    }
}

/// The comparisons of one study.
struct StudySpeedups<'c> {
    rows: Vec<&'c SceneSpeedup>,
}

impl StudySpeedups<'_> {
    /// The smallest and largest speedup.
    fn range(&self) -> (f64, f64) {
        self.rows
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
                (lo.min(c.speedup), hi.max(c.speedup))
            })
    }

    /// The scene where the wavefront does best (the first of equals).
    fn best(&self) -> &SceneSpeedup {
        self.rows
            .iter()
            .copied()
            .reduce(|best, c| if c.speedup > best.speedup { c } else { best })
            .expect("a study has a comparison")
    }

    /// Its scenes by name, in order, with how many variants of each the
    /// study's scene fields made.
    fn scenes(&self) -> String {
        let names: Vec<String> = scene_names(self.rows.iter().copied())
            .into_iter()
            .map(|name| match self.rows.iter().filter(|c| c.scene == name).count() {
                1 => name.to_string(),
                n => format!("{name} ({n} variants)"),
            })
            .collect();
        names.join(", ")
    }
}

/// The scene names of `rows`, each once, in order of appearance.
fn scene_names<'c>(rows: impl IntoIterator<Item = &'c SceneSpeedup>) -> Vec<&'c str> {
    let mut names: Vec<&str> = Vec::new();
    for c in rows {
        if !names.contains(&c.scene.as_str()) {
            names.push(&c.scene);
        }
    }
    names
}

/// The comparisons grouped by study, ordered by their best case, the
/// least favourable to the wavefront first (ties in order of appearance).
fn studies(comparisons: &[SceneSpeedup]) -> Vec<StudySpeedups<'_>> {
    let mut studies: Vec<(&str, StudySpeedups)> = Vec::new();
    for c in comparisons {
        match studies.iter_mut().find(|(s, _)| *s == c.study) {
            Some((_, study)) => study.rows.push(c),
            None => studies.push((&c.study, StudySpeedups { rows: vec![c] })),
        }
    }
    let mut studies: Vec<StudySpeedups> = studies.into_iter().map(|(_, s)| s).collect();
    studies.sort_by(|a, b| a.best().speedup.total_cmp(&b.best().speedup));
    studies
}

/// The section's Markdown, ending with the figure's link (a path relative
/// to the results folder) where there is one.
pub fn section(comparisons: &[SceneSpeedup], standings: &[Standing]) -> String {
    let mut out = format!(
        "\n{HEADING}\n\n\
         How much faster the wavefront renders than the megakernel (above 1: the wavefront \
         wins), per study: over the study's scenes, each back end at its fastest measured \
         configuration ([the rows](SUMMARY.md#megakernel-against-wavefront) of the summary's \
         table \"Megakernel against wavefront\"). Studies are ordered by their best case, the \
         least favourable to the wavefront first.\n\n"
    );
    let studies = studies(comparisons);
    if studies.is_empty() {
        out += "No study sets the megakernel against the wavefront yet.\n";
        out += &peers::section(standings);
        return out;
    }
    out += &table_head(&[
        "study",
        "scenes",
        "wavefront ÷ megakernel",
        "best for the wavefront",
        "device",
        "commit",
        "measured source",
    ]);
    for s in &studies {
        let (lo, hi) = s.range();
        let (lo, hi) = (fmt_speedup(lo), fmt_speedup(hi));
        let range = if lo == hi { lo } else { format!("{lo}–{hi}") };
        let best = s.best();
        out += &table_row(&[
            best.study.clone(),
            text(&s.scenes()),
            range,
            format!("{} ({})", fmt_speedup(best.speedup), text(&best.scene_label())),
            best.device.clone(),
            best.commit.clone(),
            best.measured.clone(),
        ]);
    }
    out += &peers::section(standings);
    out += &format!(
        "\n![The wavefront's speedup over the megakernel, per study and scene, and the megakernel \
         beside the outside peers]({FIGURE})\n"
    );
    out
}

/// The figure's SVG: per study (a row, labelled `folder / study`) a point
/// for each scene's speedup on a log axis, coloured by scene, with a dashed
/// line at 1; under it, where there are `standings`, a panel of the
/// peers' times over the megakernel's, a row each. `None` where no study
/// compares the back ends.
pub fn figure(comparisons: &[SceneSpeedup], standings: &[Standing], footer: &str) -> anyhow::Result<Option<String>> {
    let studies = studies(comparisons);
    if studies.is_empty() {
        return Ok(None);
    }
    register_font()?;
    let mut svg = String::new();
    let size = (SIZE.0, SIZE.1 + peer_panel_height(standings.len()));
    paint(
        SVGBackend::with_string(&mut svg, size).into_drawing_area(),
        &studies,
        standings,
        footer,
    )?;
    Ok(Some(svg))
}

/// Paints the whole figure on `root`: the studies' chart and its legend,
/// the peers' panel under them where there are `standings`, the footer.
fn paint<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    studies: &[StudySpeedups],
    standings: &[Standing],
    footer: &str,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (top, rest) = root.split_vertically(SIZE.1 - FOOTER_HEIGHT);
    let (chart_area, legend_area) = top.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    draw(chart_area, legend_area, studies)?;
    let (panel, footer_area) = rest.split_vertically(peer_panel_height(standings.len()));
    if !standings.is_empty() {
        draw_peers(panel.split_horizontally(SIZE.0 - LEGEND_WIDTH).0, standings)?;
    }
    let style = TextStyle::from((FONT, 12).into_font()).color(&RGBColor(90, 90, 90));
    footer_area.draw_text(footer, &style, (16, 4))?;
    root.present()?;
    Ok(())
}

/// Height of the peers' panel with `n` rows, in pixels (none without).
fn peer_panel_height(n: usize) -> u32 {
    match n {
        0 => 0,
        n => 110 + 30 * n as u32,
    }
}

/// Draws the peers' panel: per standing a row, labelled with the peer and
/// its workload, a point at the peer's time over the megakernel's on a log
/// axis, with a dashed line at 1.
fn draw_peers<DB: DrawingBackend>(
    area: DrawingArea<DB, plotters::coord::Shift>,
    standings: &[Standing],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let labels: Vec<String> = standings.iter().map(Standing::label).collect();
    let range = standings
        .iter()
        .map(Standing::ratio)
        .fold((1.0f64, 1.0f64), |(lo, hi), r| (lo.min(r), hi.max(r)));
    let rows = standings.len();
    let mut chart = PEERS_CHART.draw(&area, &labels, range)?;
    chart.draw_series(
        standings
            .iter()
            .enumerate()
            .map(|(i, s)| Circle::new((s.ratio(), (rows - 1 - i) as f64 + 0.5), 5, BLACK.filled())),
    )?;
    Ok(())
}

/// The coordinates of a [`RowChart`]: a log axis of ratios, and a row a
/// unit high per label.
type RowCoord = plotters::coord::cartesian::Cartesian2d<
    plotters::coord::combinators::WithKeyPoints<plotters::coord::combinators::LogCoord<f64>>,
    plotters::coord::types::RangedCoordf64,
>;

/// A chart of labelled rows over a log axis of ratios, with a dashed line
/// at 1: the studies' chart and the peers' panel differ only in these
/// words and sizes.
struct RowChart {
    caption: &'static str,
    x_desc: &'static str,
    /// Font sizes of the caption, the tick labels and the axis description.
    fonts: (u32, u32, u32),
    /// Height of the x axis's label area, in pixels.
    x_label_area: u32,
    /// Pixels per character of the longest row label, and the most the
    /// label area may take.
    label_char_px: u32,
    max_label_area: u32,
    /// Whether grey lines part the rows.
    separators: bool,
}

/// The studies' chart.
const STUDIES_CHART: RowChart = RowChart {
    caption: "Wavefront ÷ megakernel, per study and scene",
    x_desc: "wavefront ÷ megakernel (log scale; above 1 the wavefront wins)",
    fonts: (22, 14, 16),
    x_label_area: 52,
    label_char_px: 8,
    max_label_area: 400,
    separators: true,
};

/// The peers' panel.
const PEERS_CHART: RowChart = RowChart {
    caption: "The baseline: a peer's time ÷ the megakernel's (exact arithmetic)",
    x_desc: "peer ÷ megakernel (log scale; above 1 the megakernel is faster)",
    fonts: (18, 13, 14),
    x_label_area: 44,
    label_char_px: 7,
    max_label_area: 420,
    separators: false,
};

impl RowChart {
    /// Draws the axes on `area`, with `labels` as the rows from the top and
    /// `(lo, hi)` the ratios to span (refused where no axis can span them:
    /// [`axis_range`]), the rows' separators where it has them and the
    /// dashed line at 1; returns the chart for the points. Row `i` (top to
    /// bottom) spans y = rows - 1 - i to rows - i.
    fn draw<'a, DB: DrawingBackend>(
        &self,
        area: &'a DrawingArea<DB, plotters::coord::Shift>,
        labels: &[String],
        (lo, hi): (f64, f64),
    ) -> anyhow::Result<ChartContext<'a, DB, RowCoord>>
    where
        DB::ErrorType: 'static,
    {
        let rows = labels.len();
        let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u32;
        let (caption_font, label_font, desc_font) = self.fonts;
        let mut chart = ChartBuilder::on(area)
            .caption(self.caption, (FONT, caption_font))
            .margin(16)
            .x_label_area_size(self.x_label_area)
            .y_label_area_size((longest * self.label_char_px + 24).clamp(80, self.max_label_area))
            .build_cartesian_2d(
                axis_range(lo / 1.25, hi * 1.25, true)?
                    .log_scale()
                    .with_key_points(powers_of_two(lo, hi)),
                0.0..rows as f64,
            )?;
        let row_label = |y: &f64| {
            let i = y.floor();
            if (y - i - 0.5).abs() < 1e-6 && i >= 0.0 && (i as usize) < rows {
                labels[rows - 1 - i as usize].clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(self.x_desc)
            .y_labels(2 * rows + 1)
            .y_label_formatter(&row_label)
            .x_label_formatter(&tick)
            .label_style((FONT, label_font))
            .axis_desc_style((FONT, desc_font))
            .draw()?;
        if self.separators {
            let grey = RGBColor(210, 210, 210);
            chart.draw_series(
                (1..rows).map(|y| PathElement::new([(lo / 1.25, y as f64), (hi * 1.25, y as f64)], grey)),
            )?;
        }
        chart.draw_series(DashedLineSeries::new(
            [(1.0, 0.0), (1.0, rows as f64)],
            8,
            5,
            BLACK.stroke_width(2),
        ))?;
        Ok(chart)
    }
}

/// A tick's label: the value with its trailing zeros cut.
fn tick(v: &f64) -> String {
    let text = format!("{v:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Width of the legend strip right of the chart, in pixels.
const LEGEND_WIDTH: u32 = 190;
/// Height of the footer strip under the chart, in pixels.
const FOOTER_HEIGHT: u32 = 22;

/// Draws the chart of `studies` on `chart_area` and its legend of scenes
/// on `legend_area`.
fn draw<DB: DrawingBackend>(
    chart_area: DrawingArea<DB, plotters::coord::Shift>,
    legend_area: DrawingArea<DB, plotters::coord::Shift>,
    studies: &[StudySpeedups],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let labels: Vec<String> = studies.iter().map(|s| s.best().label.clone()).collect();
    let scenes = scene_names(studies.iter().flat_map(|s| s.rows.iter().copied()));
    let (lo, hi) = studies
        .iter()
        .map(StudySpeedups::range)
        .fold((1.0f64, 1.0f64), |(lo, hi), (l, h)| (lo.min(l), hi.max(h)));
    let rows = studies.len();
    let mut chart = STUDIES_CHART.draw(&chart_area, &labels, (lo, hi))?;
    // In row `i`, the study's `j`-th scene stands j + 1 steps from the top.
    for (i, study) in studies.iter().enumerate() {
        let base = (rows - 1 - i) as f64;
        let own = scene_names(study.rows.iter().copied());
        chart.draw_series(study.rows.iter().map(|c| {
            let k = scenes.iter().position(|s| *s == c.scene).unwrap_or(0);
            let j = own.iter().position(|s| *s == c.scene).unwrap_or(0);
            let y = base + 1.0 - (j + 1) as f64 / (own.len() + 1) as f64;
            Circle::new((c.speedup, y), 5, color(k).filled())
        }))?;
    }
    let text = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (k, scene) in scenes.iter().enumerate() {
        let y = 60 + 24 * k as i32;
        legend_area.draw(&Circle::new((16, y), 5, color(k).filled()))?;
        legend_area.draw(&Text::new(scene.to_string(), (30, y), text.clone()))?;
    }
    Ok(())
}

/// The powers of two from the largest at most `lo` to the smallest at
/// least `hi` (both positive, and as far apart as an axis may span:
/// [`axis_range`]): the figure's ticks.
fn powers_of_two(lo: f64, hi: f64) -> Vec<f64> {
    let (first, last) = (lo.log2().floor() as i32, hi.log2().ceil() as i32);
    (first..=last).map(|k| 2f64.powi(k)).collect()
}

/// The `i`-th scene's colour.
fn color(i: usize) -> RGBAColor {
    Palette99::pick(i).to_rgba()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(study: &str, scene: &str, overrides: &str, speedup: f64) -> SceneSpeedup {
        SceneSpeedup {
            study: format!("[`{study}`](x/report.md)"),
            label: study.into(),
            scene: scene.into(),
            overrides: overrides.into(),
            speedup,
            device: "a GPU".into(),
            commit: "`abc`".into(),
            measured: "`0123456789abcdef`".into(),
        }
    }

    #[test]
    fn each_study_gets_its_range_and_best_case_ordered_by_the_best() {
        let rows = [
            comparison("a / wins", "box", "scene.size=1", 0.5),
            comparison(
                "b / cost",
                "field",
                "generators[0].materials=1;generators[0].octaves=4",
                0.9,
            ),
            comparison(
                "b / cost",
                "field",
                "generators[0].materials=16;generators[0].octaves=64",
                13.0,
            ),
            comparison("a / wins", "spheres", "", 2.0),
            comparison("a / wins", "box", "scene.size=2", 1.5),
        ];
        let text = section(&rows, &[]);
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("| [")).collect();
        assert_eq!(
            lines,
            [
                "| [`a / wins`](x/report.md) | box (2 variants), spheres | 0.50x–2.00x | 2.00x (spheres) \
                 | a GPU | `abc` | `0123456789abcdef` |",
                "| [`b / cost`](x/report.md) | field (2 variants) | 0.90x–13.00x | \
                 13.00x (field (materials=16, octaves=64)) | a GPU | `abc` | `0123456789abcdef` |",
            ]
        );
        assert!(text.starts_with(&format!("\n{HEADING}\n")));
        assert!(text.ends_with(&format!("]({FIGURE})\n")));
    }

    #[test]
    fn nothing_to_compare_says_so_and_draws_nothing() {
        assert!(section(&[], &[]).contains("No study sets the megakernel against the wavefront yet."));
        assert!(figure(&[], &[], "footer").unwrap().is_none());
    }

    #[test]
    fn the_figure_has_a_row_per_study_a_point_per_scene_and_a_legend() {
        let rows = [
            comparison("a / wins", "box", "", 0.5),
            comparison("a / wins", "spheres", "", 2.0),
            comparison("b / cost", "field", "", 3.0),
        ];
        let svg = figure(&rows, &[], "the footer").unwrap().unwrap();
        for text in ["a / wins", "b / cost", "box", "spheres", "field", "the footer"] {
            assert!(svg.lines().any(|line| line == text), "{text} missing");
        }
        assert_eq!(
            svg.matches("<circle").count(),
            3 + 3,
            "a point per scene, a legend mark per scene"
        );
        assert_eq!(powers_of_two(0.51, 13.18), [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]);
    }

    #[test]
    fn a_speedup_no_axis_can_span_is_refused() {
        for speedup in [f64::INFINITY, 0.0, 1e-30] {
            let rows = [comparison("a / wins", "box", "", speedup)];
            let e = figure(&rows, &[], "f").expect_err("refused").to_string();
            assert!(e.contains("cannot be drawn"), "{speedup}: {e}");
        }
    }

    #[test]
    fn the_peers_stand_in_the_section_and_in_a_panel_of_the_figure() {
        let rows = [comparison("a / wins", "box", "", 0.5)];
        let standing = Standing {
            peer: peers::Peer {
                program: "fastpeer".into(),
                workload: "spheres".into(),
                width: 64,
                height: 32,
                spp: 8,
                depth: 50,
                roulette: 1,
                render_ms: 2.0,
                samples_per_s: 8192.0,
                scene: "spheres".into(),
            },
            mega_ms: 2.5,
            mega_run: "gpu-mega".into(),
            study: "the study".into(),
            commit: "`abc`".into(),
            measured: "`0123456789abcdef`".into(),
        };
        let text = section(&rows, std::slice::from_ref(&standing));
        let table = text
            .find("| fastpeer: spheres 64x32 8 spp | 2.00 | 2.50 |")
            .expect("the peers' row");
        assert!(
            table < text.find(FIGURE).unwrap(),
            "the peers' table stands before the figure"
        );
        let plain = figure(&rows, &[], "f").unwrap().unwrap();
        let with = figure(&rows, std::slice::from_ref(&standing), "f").unwrap().unwrap();
        assert!(with.lines().any(|l| l == "fastpeer: spheres 64x32 8 spp"));
        assert!(!plain.contains("fastpeer"));
        assert_eq!(with.matches("<circle").count(), plain.matches("<circle").count() + 1);
    }
}
