//! Pictures drawn on the server as inline SVG, no JavaScript: a line chart over time and a bar
//! chart of counts. Each is an image with a title and a description (its text summary, also
//! shown as the caption), followed by the same numbers as a table for screen readers and for
//! anyone who prefers to read them.

use maud::{Markup, html};

use super::format::{thousands, utc};

// Alike on purpose: named numbers, one a line (crates/mapwright/tests/serve/ingest.rs's constants
// pair with these by shape alone).
const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 180.0;
/// Room for the axis labels, at least (a wider number takes more, see [`left_room`]).
const LEFT: f64 = 64.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

/// One line of a chart: its name, its colour class, and (time, value) points in time order.
pub(crate) struct Series<'a> {
    pub label: &'a str,
    pub class: &'a str,
    pub points: Vec<(i64, i64)>,
}

/// A line chart of one or more series over time, with its table twin. `summary` is the one
/// sentence a reader would take from the picture.
pub(crate) fn line_chart(id: &str, title: &str, summary: &str, series: &[Series<'_>]) -> Markup {
    let times = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (t0, t1) = times.fold((i64::MAX, i64::MIN), |(a, b), t| (a.min(t), b.max(t)));
    let max = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).max().unwrap_or(0).max(1);
    let span = (t1 - t0).max(1) as f64;
    let left = left_room(&thousands(max));
    let x = |t: i64| left + (t - t0) as f64 / span * (WIDTH - left - RIGHT);
    let y = |v: i64| TOP + (1.0 - v as f64 / max as f64) * (HEIGHT - TOP - BOTTOM);
    let base = HEIGHT - BOTTOM;
    let empty = t0 > t1;
    html! {
        figure class="chart" {
            svg viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" aria-labelledby=(format!("{id}-title {id}-desc"))
                xmlns="http://www.w3.org/2000/svg" {
                title id=(format!("{id}-title")) { (title) }
                desc id=(format!("{id}-desc")) { (summary) }
                line class="axis" x1=(left) y1=(base) x2=(WIDTH - RIGHT) y2=(base) {}
                line class="axis" x1=(left) y1=(TOP) x2=(left) y2=(base) {}
                text class="tick" x=(left - 6.0) y=(TOP + 8.0) text-anchor="end" { (thousands(max)) }
                text class="tick" x=(left - 6.0) y=(base) text-anchor="end" { "0" }
                @if !empty {
                    text class="tick" x=(left) y=(HEIGHT - 4.0) { (&utc(t0)[..10]) }
                    text class="tick" x=(WIDTH - RIGHT) y=(HEIGHT - 4.0) text-anchor="end" { (&utc(t1)[..10]) }
                }
                @for s in series {
                    @if s.points.len() == 1 {
                        circle class=(s.class) cx=(x(s.points[0].0)) cy=(y(s.points[0].1)) r="4" {}
                    } @else if !s.points.is_empty() {
                        polyline class=(s.class) fill="none"
                            points=(s.points.iter().map(|&(t, v)| format!("{:.1},{:.1}", x(t), y(v))).collect::<Vec<_>>().join(" ")) {}
                    }
                }
            }
            figcaption {
                (summary)
                @if series.len() > 1 {
                    " "
                    @for s in series { span class=(format!("key {}", s.class)) { (s.label) } " " }
                }
            }
            details class="twin" {
                summary { "The numbers as a table" }
                table {
                    caption class="visually-hidden" { (title) }
                    thead { tr {
                        th scope="col" { "When (UTC)" }
                        @for s in series { th scope="col" class="num" { (s.label) } }
                    } }
                    tbody {
                        @for (i, (t, _)) in series.first().map(|s| s.points.as_slice()).unwrap_or(&[]).iter().enumerate() {
                            tr {
                                td { (utc(*t).replace('T', " ").replace('Z', "")) }
                                @for s in series { td class="num" { (s.points.get(i).map(|p| thousands(p.1)).unwrap_or_default()) } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The room left of the plot for the value axis's widest label: 16 units a character holds
/// the largest label size the stylesheet sets (28 units, on the narrowest chart).
fn left_room(label: &str) -> f64 {
    (16.0 * label.chars().count() as f64 + 12.0).max(LEFT)
}

/// A horizontal bar chart of labelled counts, with its table twin. Each label sits above its
/// bar, across the whole width, so that a long one ("Unreachable or other status") fits at the
/// larger text size of a narrow chart.
pub(crate) fn bar_chart(id: &str, title: &str, summary: &str, bars: &[(String, i64)]) -> Markup {
    let max = bars.iter().map(|b| b.1).max().unwrap_or(0).max(1);
    let row = 56.0;
    let height = TOP + row * bars.len() as f64;
    let label_width = 0.0;
    let room = WIDTH - 110.0;
    html! {
        figure class="chart" {
            svg viewBox=(format!("0 0 {WIDTH} {height}")) role="img" aria-labelledby=(format!("{id}-title {id}-desc"))
                xmlns="http://www.w3.org/2000/svg" {
                title id=(format!("{id}-title")) { (title) }
                desc id=(format!("{id}-desc")) { (summary) }
                @for (i, (label, count)) in bars.iter().enumerate() {
                    @let top = TOP + row * i as f64;
                    text class="tick" x=(label_width) y=(top + 16.0) { (label) }
                    rect class="bar" x=(label_width) y=(top + 24.0) height="20"
                        width=(format!("{:.1}", (*count as f64 / max as f64 * room).max(2.0))) {}
                    text class="tick" x=(label_width + (*count as f64 / max as f64 * room).max(2.0) + 8.0) y=(top + 42.0) { (thousands(*count)) }
                }
            }
            figcaption { (summary) }
            details class="twin" {
                summary { "The numbers as a table" }
                table {
                    caption class="visually-hidden" { (title) }
                    thead { tr { th scope="col" { "Kind" } th scope="col" class="num" { "URLs" } } }
                    tbody { @for (label, count) in bars { tr { td { (label) } td class="num" { (thousands(*count)) } } } }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_chart_is_an_accessible_image_with_its_table() {
        let s = [Series { label: "URLs", class: "line-a", points: vec![(0, 10), (86_400, 30)] }];
        let svg = line_chart("h", "URLs over time", "30 URLs now, up from 10.", &s).into_string();
        assert!(svg.contains(r#"role="img""#) && svg.contains(r#"aria-labelledby="h-title h-desc""#), "{svg}");
        assert!(svg.contains("<title id=\"h-title\">URLs over time</title>"), "{svg}");
        assert!(svg.contains("<polyline") && svg.contains("points=\"64.0,105.3 588.0,12.0\""), "{svg}");
        assert!(svg.contains("<td class=\"num\">30</td>") && svg.contains("1970-01-02 00:00:00"), "{svg}");
        let bars = bar_chart("k", "Failing", "2 of 404", &[("404".into(), 2), ("5xx".into(), 1)]).into_string();
        assert!(bars.contains("<rect") && bars.contains("<td>404</td>"), "{bars}");
    }
}
