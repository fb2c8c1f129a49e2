//! `plot REPORT_DIR`: draws the PNG plots of a `bench/run.py` report folder into it.
//!
//! Reads `summary.json` (the cases, the medians and the run files of each implementation) and
//! the run records it names (`runs/*.json`, `bench/SCHEMA.md`), and writes:
//! - `ccdf-<scenario>.png`: for every latency case a panel with the distribution of the
//!   round trip per implementation: the fraction of round trips at or above x (CCDF, log-log),
//!   from the histograms of all repetitions merged. An implementation without a histogram
//!   (ddsperf) is drawn as the points it has: p50, p90, p99 and max, dashed, "approx.".
//! - `throughput.png`: samples/s and Mbit/s against payload size per implementation (medians).
//! - `timeline-bound.png`: p50 and max of every second of the scenario-2 runs (the repetition
//!   with the median max of each implementation).
//! - `ccdf-isolation.png` (scenario 7): the critical writer's round trip alone, with the bulk
//!   load and with the bulk load and the discovery storm, as CCDFs in one panel (all
//!   repetitions merged, as above) and the max of every second of a typical run of each case.
//!
//! Text is drawn with the DejaVu Sans font file, registered at run time (no fontconfig needed):
//! `/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf`, or the file named by `PLOT_FONT`.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use serde_json::Value;

type Res<T> = Result<T, Box<dyn Error>>;

const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const PANEL: (u32, u32) = (720, 460);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 || args[1].starts_with('-') {
        eprintln!("usage: plot REPORT_DIR   (the folder bench/run.py wrote: summary.json, runs/)");
        std::process::exit(2);
    }
    if let Err(e) = run(Path::new(&args[1])) {
        eprintln!("plot: {e}");
        std::process::exit(1);
    }
}

fn run(dir: &Path) -> Res<()> {
    register_font()?;
    let summary = read_json(&dir.join("summary.json"))?;
    for scenario in array(&summary["scenarios"]) {
        let id = scenario["id"].as_str().unwrap_or("?");
        if id == "isolation" {
            let out = dir.join("ccdf-isolation.png");
            let drawn = isolation_plot(dir, scenario, &out)?;
            report(&out, drawn);
            continue;
        }
        let out = match (scenario["kind"].as_str(), id) {
            (Some("latency"), _) => Some(dir.join(format!("ccdf-{id}.png"))),
            (_, "throughput") => Some(dir.join("throughput.png")),
            _ => None,
        };
        if let Some(out) = out {
            let drawn = if id == "throughput" {
                throughput_plot(scenario, &out)?
            } else {
                latency_plot(dir, scenario, &out)?
            };
            report(&out, drawn);
        }
        if id == "bound" {
            let out = dir.join("timeline-bound.png");
            let drawn = timeline_plot(dir, scenario, &out)?;
            report(&out, drawn);
        }
    }
    Ok(())
}

fn report(path: &Path, drawn: bool) {
    if drawn {
        println!("plot: {}", path.display());
    }
}

fn register_font() -> Res<()> {
    let path = std::env::var("PLOT_FONT").unwrap_or_else(|_| FONT.to_owned());
    let bytes = std::fs::read(&path).map_err(|e| format!("font {path}: {e}"))?;
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
        .map_err(|_| format!("font {path}: not a font plotters can read"))?;
    Ok(())
}

// --- input -----------------------------------------------------------------------------------

fn read_json(path: &Path) -> Res<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?)
}

fn array(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// The successful run records of one implementation in one case.
fn runs_of(dir: &Path, result: &Value) -> Vec<Value> {
    array(&result["runs"])
        .iter()
        .filter_map(|f| f.as_str())
        .filter_map(|f| read_json(&dir.join(f)).ok())
        .filter(|r| r["harness"]["error"].is_null())
        .collect()
}

/// Implementations of a case, in the report's order (object order of `results`).
fn results(case: &Value) -> Vec<(String, &Value)> {
    case["results"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v)).collect())
        .unwrap_or_default()
}

fn color(implementation: &str) -> RGBColor {
    match implementation
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("")
    {
        "tachyon" => RGBColor(214, 39, 40),
        "cyclone" => RGBColor(31, 119, 180),
        "fastdds" => RGBColor(44, 160, 44),
        "udp" => RGBColor(90, 90, 90),
        _ => RGBColor(148, 103, 189),
    }
}

// --- latency distribution --------------------------------------------------------------------

/// A curve of one implementation: (µs, fraction at or above), and whether it is approximate.
struct Curve {
    name: String,
    points: Vec<(f64, f64)>,
    approximate: bool,
    color: RGBColor,
}

fn merged_histogram(runs: &[Value]) -> BTreeMap<u64, u64> {
    let mut merged = BTreeMap::new();
    for r in runs {
        for bucket in array(&r["histogram"]) {
            if let (Some(bound), Some(count)) = (bucket[0].as_u64(), bucket[1].as_u64()) {
                *merged.entry(bound).or_insert(0) += count;
            }
        }
    }
    merged
}

fn ccdf(hist: &BTreeMap<u64, u64>) -> Vec<(f64, f64)> {
    let total: u64 = hist.values().sum();
    let mut below = 0u64;
    let mut points = Vec::with_capacity(hist.len());
    for (&bound, &count) in hist {
        points.push((bound as f64 / 1e3, (total - below) as f64 / total as f64));
        below += count;
    }
    points
}

/// p50, p90, p99 and max (the medians of the report) as CCDF points.
fn percentile_points(medians: &Value) -> Vec<(f64, f64)> {
    let count = medians["count"].as_f64().unwrap_or(0.0);
    let mut points = Vec::new();
    for (key, above) in [("p50", 0.5), ("p90", 0.1), ("p99", 0.01), ("p99_9", 0.001)] {
        if let Some(v) = medians[key].as_f64() {
            points.push((v / 1e3, above));
        }
    }
    if let (Some(max), true) = (medians["max"].as_f64(), count > 0.0) {
        points.push((max / 1e3, 1.0 / count));
    }
    points
}

fn latency_curves(dir: &Path, case: &Value) -> Vec<Curve> {
    let mut curves = Vec::new();
    for (name, result) in results(case) {
        let hist = merged_histogram(&runs_of(dir, result));
        if hist.values().sum::<u64>() > 0 {
            curves.push(Curve {
                color: color(&name),
                name,
                points: ccdf(&hist),
                approximate: false,
            });
        } else {
            let points = percentile_points(&result["medians"]);
            if !points.is_empty() {
                curves.push(Curve {
                    color: color(&name),
                    name: format!("{name} (approx.)"),
                    points,
                    approximate: true,
                });
            }
        }
    }
    curves
}

fn latency_plot(dir: &Path, scenario: &Value, out: &Path) -> Res<bool> {
    let cases: Vec<(&Value, Vec<Curve>)> = array(&scenario["cases"])
        .iter()
        .map(|c| (c, latency_curves(dir, c)))
        .filter(|(_, curves)| !curves.is_empty())
        .collect();
    if cases.is_empty() {
        return Ok(false);
    }
    let title = scenario["title"].as_str().unwrap_or("");
    let root = canvas(out, cases.len(), title)?;
    for ((case, curves), area) in cases.iter().zip(panels(&root, cases.len())) {
        ccdf_panel(&area, case["label"].as_str().unwrap_or(""), curves)?;
    }
    root.present()?;
    Ok(true)
}

fn ccdf_panel(area: &DrawingArea<BitMapBackend, Shift>, label: &str, curves: &[Curve]) -> Res<()> {
    let xs = curves.iter().flat_map(|c| c.points.iter().map(|p| p.0));
    let ys = curves.iter().flat_map(|c| c.points.iter().map(|p| p.1));
    let (xmin, xmax) = bounds(xs);
    let (ymin, _) = bounds(ys);
    let mut chart = ChartBuilder::on(area)
        .caption(label, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (xmin * 0.8..xmax * 1.25).log_scale(),
            (ymin * 0.5..1.2f64).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("round trip (µs)")
        .y_desc("fraction ≥ x")
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()?;
    for curve in curves {
        let c = curve.color;
        let style = c.stroke_width(2);
        if curve.approximate {
            chart
                .draw_series(DashedLineSeries::new(curve.points.clone(), 6, 4, style))?
                .label(&curve.name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            chart.draw_series(curve.points.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
        } else {
            chart
                .draw_series(LineSeries::new(step(&curve.points), style))?
                .label(&curve.name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
        }
    }
    legend(&mut chart, SeriesLabelPosition::LowerLeft)
}

/// A staircase through the points (a CCDF is a step function).
fn step(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (i, &(x, y)) in points.iter().enumerate() {
        if i > 0 {
            out.push((x, points[i - 1].1));
        }
        out.push((x, y));
    }
    out
}

// --- isolation (scenario 7) ------------------------------------------------------------------

/// Colours of the isolation cases in their order: alone, with the bulk load, with the storm too.
const LOAD_COLORS: [RGBColor; 4] = [
    RGBColor(40, 40, 40),
    RGBColor(255, 127, 14),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];

/// Tachyon's curve per isolation case (the case's label as its name) and the typical run of
/// each (for the timeline).
fn isolation_plot(dir: &Path, scenario: &Value, out: &Path) -> Res<bool> {
    let mut curves = Vec::new();
    let mut timelines = Vec::new();
    for (i, case) in array(&scenario["cases"]).iter().enumerate() {
        let label = case["label"].as_str().unwrap_or("?").to_owned();
        let Some(result) = case["results"].get("tachyon") else {
            continue;
        };
        let runs = runs_of(dir, result);
        let hist = merged_histogram(&runs);
        let total: u64 = hist.values().sum();
        if total == 0 {
            continue;
        }
        let c = LOAD_COLORS[i % LOAD_COLORS.len()];
        curves.push(Curve {
            name: format!("{label} ({total} round trips)"),
            points: ccdf(&hist),
            approximate: false,
            color: c,
        });
        if let Some(run) = typical_run(runs) {
            let max: Vec<(f64, f64)> = array(&run["timeline"])
                .iter()
                .filter_map(|i| Some((i["t"].as_f64()?, i["max"].as_f64()? / 1e3)))
                .collect();
            timelines.push((label, max, c));
        }
    }
    if curves.is_empty() {
        return Ok(false);
    }
    let root = canvas(
        out,
        2,
        "Isolation: critical round trip alone and under load (same run)",
    )?;
    let areas = panels(&root, 2);
    ccdf_panel(&areas[0], "distribution, all repetitions merged", &curves)?;
    let all = timelines.iter().flat_map(|(_, pts, _)| pts.iter());
    let mut chart = time_chart(
        &areas[1],
        "max of each second, typical run",
        "round trip max (µs)",
        all,
    )?;
    for (label, points, c) in &timelines {
        let c = *c;
        chart
            .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    root.present()?;
    Ok(true)
}

// --- throughput against size -----------------------------------------------------------------

/// (payload size, samples/s, Mbit/s) of one case.
type ThroughputPoint = (f64, f64, f64);

fn throughput_plot(scenario: &Value, out: &Path) -> Res<bool> {
    // implementation -> its points
    let mut series: BTreeMap<String, Vec<ThroughputPoint>> = BTreeMap::new();
    for case in array(&scenario["cases"]) {
        let size = case["spec"]["size"].as_f64().unwrap_or(0.0).max(1.0);
        for (name, result) in results(case) {
            let m = &result["medians"];
            if let (Some(s), Some(mb)) = (m["samples_per_s"].as_f64(), m["mbit_per_s"].as_f64()) {
                series.entry(name).or_default().push((size, s, mb));
            }
        }
    }
    if series.is_empty() {
        return Ok(false);
    }
    let title = scenario["title"].as_str().unwrap_or("");
    let root = canvas(out, 2, title)?;
    let areas = panels(&root, 2);
    for (which, area) in areas.iter().enumerate() {
        let (desc, pick): (&str, fn(&ThroughputPoint) -> f64) = if which == 0 {
            ("samples/s", |p| p.1)
        } else {
            ("Mbit/s", |p| p.2)
        };
        let (xmin, xmax) = bounds(series.values().flatten().map(|p| p.0));
        let (ymin, ymax) = bounds(series.values().flatten().map(pick));
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("{desc} against payload size (median)"),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (xmin * 0.7..xmax * 1.4).log_scale(),
                (ymin * 0.5..ymax * 2.0).log_scale(),
            )?;
        chart
            .configure_mesh()
            .x_desc("payload size (octets)")
            .y_desc(desc)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0e}"))
            .draw()?;
        for (name, points) in &series {
            let c = color(name);
            let pts: Vec<(f64, f64)> = points.iter().map(|p| (p.0, pick(p))).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 4, c.filled())))?;
        }
        let corner = if which == 0 {
            SeriesLabelPosition::UpperRight
        } else {
            SeriesLabelPosition::LowerRight
        };
        legend(&mut chart, corner)?;
    }
    root.present()?;
    Ok(true)
}

// --- latency over time (scenario 2) ----------------------------------------------------------

/// The run with the median max among the repetitions (a typical one, not the best or worst).
fn typical_run(runs: Vec<Value>) -> Option<Value> {
    let mut runs: Vec<Value> = runs
        .into_iter()
        .filter(|r| !array(&r["timeline"]).is_empty())
        .collect();
    runs.sort_by(|a, b| {
        let (x, y) = (a["latency"]["max"].as_f64(), b["latency"]["max"].as_f64());
        x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
    });
    let mid = runs.len().checked_sub(1)? / 2;
    runs.into_iter().nth(mid)
}

fn timeline_plot(dir: &Path, scenario: &Value, out: &Path) -> Res<bool> {
    let mut cases = Vec::new();
    for case in array(&scenario["cases"]) {
        let mut lines = Vec::new();
        for (name, result) in results(case) {
            if let Some(run) = typical_run(runs_of(dir, result)) {
                let pick = |key: &str| -> Vec<(f64, f64)> {
                    array(&run["timeline"])
                        .iter()
                        .filter_map(|i| Some((i["t"].as_f64()?, i[key].as_f64()? / 1e3)))
                        .collect()
                };
                lines.push((name, pick("p50"), pick("max")));
            }
        }
        if !lines.is_empty() {
            cases.push((case["label"].as_str().unwrap_or("").to_owned(), lines));
        }
    }
    if cases.is_empty() {
        return Ok(false);
    }
    let root = canvas(
        out,
        cases.len(),
        "Latency over time: p50 (solid) and max (dashed) of each second",
    )?;
    for ((label, lines), area) in cases.iter().zip(panels(&root, cases.len())) {
        let all = lines.iter().flat_map(|(_, a, b)| a.iter().chain(b.iter()));
        let mut chart = time_chart(&area, label, "round trip (µs)", all)?;
        for (name, p50, max) in lines {
            let c = color(name);
            chart
                .draw_series(LineSeries::new(p50.clone(), c.stroke_width(2)))?
                .label(format!("{name} p50"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            chart
                .draw_series(DashedLineSeries::new(max.clone(), 5, 4, c.stroke_width(1)))?
                .label(format!("{name} max"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 8, y)], c.stroke_width(1))
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    }
    root.present()?;
    Ok(true)
}

// --- layout ----------------------------------------------------------------------------------

fn grid(n: usize) -> (usize, usize) {
    let cols = if n == 1 { 1 } else { 2 };
    (n.div_ceil(cols), cols)
}

/// A canvas for `n` panels in two columns under a title.
fn canvas(out: &Path, n: usize, title: &str) -> Res<DrawingArea<BitMapBackend<'static>, Shift>> {
    let (rows, cols) = grid(n);
    let size = (PANEL.0 * cols as u32, PANEL.1 * rows as u32 + 40);
    let path: &'static PathBuf = Box::leak(Box::new(out.to_path_buf()));
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    Ok(root)
}

/// A chart of values over time: seconds, and a logarithmic axis.
type TimeChart<'a, 'b> = ChartContext<
    'a,
    BitMapBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, LogCoord<f64>>,
>;

/// A panel of values over time (seconds) on a logarithmic axis, scaled to `points`, its mesh
/// drawn.
fn time_chart<'a, 'b>(
    area: &'a DrawingArea<BitMapBackend<'b>, Shift>,
    caption: &str,
    y_desc: &str,
    points: impl Iterator<Item = &'a (f64, f64)> + Clone,
) -> Res<TimeChart<'a, 'b>> {
    let (xmin, xmax) = bounds(points.clone().map(|p| p.0));
    let (ymin, ymax) = bounds(points.map(|p| p.1));
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (xmin - 0.5).min(0.0)..xmax + 0.5,
            (ymin * 0.7..ymax * 1.5).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(y_desc)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    Ok(chart)
}

fn panels<'a>(
    root: &DrawingArea<BitMapBackend<'a>, Shift>,
    n: usize,
) -> Vec<DrawingArea<BitMapBackend<'a>, Shift>> {
    let (rows, cols) = grid(n);
    root.split_evenly((rows, cols))
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    if hi <= lo {
        hi = lo * 10.0;
    }
    (lo, hi)
}

fn legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Res<()>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(())
}
