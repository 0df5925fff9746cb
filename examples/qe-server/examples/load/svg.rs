//! The soak's plot: every process's resident set against the calls answered, as a small
//! self-contained SVG (no script, no external style).

use std::fmt::Write as _;

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 430.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
const COLOURS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

/// The smallest of 1, 2 and 5 times a power of ten that is at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * power).find(|&step| step >= raw).unwrap_or(10.0 * power)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A tick label for a count of calls: `250k`, `1M`.
fn calls_label(calls: f64) -> String {
    if calls >= 1e6 {
        format!("{}M", calls / 1e6)
    } else if calls >= 1e3 {
        format!("{}k", calls / 1e3)
    } else {
        format!("{calls}")
    }
}

/// The plot of `lines` (a label, and `(calls answered, RSS in KiB)` points each), with a
/// dashed mark where the warm-up ends.
#[allow(clippy::cast_precision_loss)] // Counts and KiB far below 2^52.
pub(super) fn plot(title: &str, lines: &[(String, Vec<(u64, u64)>)], warmup: u64) -> String {
    let points = || lines.iter().flat_map(|(_, points)| points.iter());
    let x_max = points().map(|p| p.0).max().unwrap_or(1).max(1) as f64;
    let y_top = points().map(|p| p.1 as f64 / 1024.0).fold(0.0, f64::max);
    let y_step = nice_step(y_top / 5.0);
    let y_max = (y_top / y_step).ceil().max(1.0) * y_step;
    let x_step = nice_step(x_max / 5.0);
    let (width, height) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |calls: f64| LEFT + calls / x_max * width;
    let y = |mib: f64| TOP + height - mib / y_max * height;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(svg, r#"<text x="{LEFT}" y="24" font-size="14">{}</text>"#, escape(title));
    let mut tick = 0.0;
    while tick <= y_max + y_step / 2.0 {
        let (ty, label) = (y(tick), (tick * 100.0).round() / 100.0);
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{ty:.1}" x2="{:.1}" y2="{ty:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"##,
            LEFT + width,
            LEFT - 6.0,
            ty + 4.0
        );
        tick += y_step;
    }
    let mut tick = 0.0;
    while tick <= x_max + x_step / 2.0 {
        let tx = x(tick);
        let _ = writeln!(
            svg,
            r##"<line x1="{tx:.1}" y1="{TOP}" x2="{tx:.1}" y2="{:.1}" stroke="#eee"/><text x="{tx:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + height,
            TOP + height + 16.0,
            calls_label(tick)
        );
        tick += x_step;
    }
    let (bottom, right) = (TOP + height, LEFT + width);
    let _ = writeln!(
        svg,
        r#"<polyline points="{LEFT},{TOP} {LEFT},{bottom} {right},{bottom}" fill="none" stroke="black"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">calls answered</text>"#,
        LEFT + width / 2.0,
        HEIGHT - 12.0
    );
    let _ = writeln!(
        svg,
        r#"<text transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle">RSS (MiB)</text>"#,
        TOP + height / 2.0
    );
    let wx = x(warmup as f64);
    let _ = writeln!(
        svg,
        r##"<line x1="{wx:.1}" y1="{TOP}" x2="{wx:.1}" y2="{bottom}" stroke="#888" stroke-dasharray="4 3"/><text x="{:.1}" y="{:.1}" fill="#555">warm-up end</text>"##,
        wx + 4.0,
        TOP + 12.0
    );
    for (i, (label, points)) in lines.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let path: Vec<String> = points
            .iter()
            .map(|&(calls, kib)| format!("{:.1},{:.1}", x(calls as f64), y(kib as f64 / 1024.0)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="1.5"/>"#,
            path.join(" ")
        );
        let ly = TOP + 10.0 + 20.0 * i as f64;
        let _ = writeln!(
            svg,
            r#"<line x1="{:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{colour}" stroke-width="3"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            right + 14.0,
            right + 34.0,
            right + 40.0,
            ly + 4.0,
            escape(label)
        );
    }
    svg.push_str("</svg>\n");
    svg
}
