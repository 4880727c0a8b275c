//! The report's divergence section: the blamed entity (or resource) field by field in the two runs
//! that diverged, and plots of the positions of the entities that moved differently (at most
//! [`MAX_PLOTTED`]) around the divergent tick in both runs, with their difference.
//!
//! The rows come from the two runs' `StateDetail`s of the divergent tick; the positions from the
//! runs' tracks (`rusting determinism`) or from the ticks two saved reports detail (`rusting
//! hashes diff`). This module must never decide what is blamed: `compare_details` does.

use std::fmt::Write as _;

use rusting_engine::record::{ComponentDetail, DetailDifference, Differing, StateDetail};

use super::escape;

/// One run's `(tick, translation)` of an entity, in tick order.
pub type Track = Vec<(u64, [f32; 3])>;

/// The most entities one divergence plots.
pub const MAX_PLOTTED: usize = 4;

/// An entity the page plots: its label as messages name it, and its track in both runs.
#[derive(Clone, Debug, PartialEq)]
pub struct PlottedEntity {
    /// `` `Player` (scene id 10) ``.
    pub label: String,
    /// The first run's track, then the second's.
    pub tracks: [Track; 2],
}

/// One field in both runs (`None` where a run lacks it).
struct Row {
    path: String,
    values: [Option<String>; 2],
}

/// One component or resource, field by field.
struct Rows {
    name: String,
    rows: Vec<Row>,
}

/// Where two runs first diverged, as the page shows it.
pub struct DivergenceView {
    /// The divergent tick.
    pub tick: u64,
    runs: [String; 2],
    blame: String,
    blamed: Option<(String, String)>,
    tables: Vec<Rows>,
    blamed_entity: bool,
    /// Every difference at the tick (bounded), and how many more there are.
    listed: (Vec<Differing>, usize),
    /// The entities the plots follow.
    plots: Vec<PlottedEntity>,
}

/// The rows of components `a` and `b` (matched by name; `a`'s order, then what only `b` has).
fn rows_of(a: &[ComponentDetail], b: &[ComponentDetail], only_differing: bool) -> Vec<Rows> {
    let mut names: Vec<&str> = a.iter().map(|c| c.name.as_str()).collect();
    names.extend(
        b.iter()
            .map(|c| c.name.as_str())
            .filter(|n| !a.iter().any(|c| c.name == *n)),
    );
    names
        .into_iter()
        .filter_map(|name| {
            let ca = a.iter().find(|c| c.name == name);
            let cb = b.iter().find(|c| c.name == name);
            if only_differing && ca.map(|c| &c.hash) == cb.map(|c| &c.hash) {
                return None;
            }
            let mut paths: Vec<&str> = Vec::new();
            for c in [ca, cb].into_iter().flatten() {
                for (path, _) in &c.fields {
                    if !paths.contains(&path.as_str()) {
                        paths.push(path);
                    }
                }
            }
            let value = |c: Option<&ComponentDetail>, path: &str| {
                c.and_then(|c| c.fields.iter().find(|(p, _)| p == path))
                    .map(|(_, v)| v.clone())
            };
            Some(Rows {
                name: name.to_owned(),
                rows: paths
                    .into_iter()
                    .map(|path| Row {
                        path: path.to_owned(),
                        values: [value(ca, path), value(cb, path)],
                    })
                    .collect(),
            })
        })
        .collect()
}

/// Entity `sim_id`'s `Transform` translation in each of `details`, by tick.
pub fn track_from_details(details: &[StateDetail], sim_id: u64) -> Vec<(u64, [f32; 3])> {
    details
        .iter()
        .filter_map(|detail| {
            let entity = detail.entities.iter().find(|e| e.sim_id == sim_id)?;
            let transform = entity.components.iter().find(|c| c.name == "Transform")?;
            let axis = |name: &str| -> Option<f32> {
                let (_, value) = transform
                    .fields
                    .iter()
                    .find(|(p, _)| p == &format!("translation.{name}"))?;
                value.parse().ok()
            };
            Some((detail.tick, [axis("x")?, axis("y")?, axis("z")?]))
        })
        .collect()
}

impl DivergenceView {
    /// The view of runs `runs` at `tick`, from their details there, what `compare_details` blamed,
    /// and the positions of the entities it plots (`DetailDifference::plotted_entities`) in both
    /// runs.
    pub fn new(
        tick: u64,
        runs: [&str; 2],
        details: [&StateDetail; 2],
        difference: Option<&DetailDifference>,
        plots: Vec<PlottedEntity>,
    ) -> DivergenceView {
        // The first difference; every one is listed in a table of its own.
        let blame = crate::blame::describe(difference)
            .trim_start_matches(": ")
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned();
        let blamed = difference.and_then(|d| {
            let field = d.field.as_ref()?;
            Some((d.component.clone()?, field.path.clone()))
        });
        let tables = match difference {
            Some(DetailDifference {
                entity: Some(entity),
                ..
            }) => {
                let find = |k: usize| {
                    details[k]
                        .entities
                        .iter()
                        .find(|e| e.sim_id == entity.sim_id)
                        .map(|e| e.components.as_slice())
                        .unwrap_or_default()
                };
                rows_of(find(0), find(1), false)
            }
            Some(_) => rows_of(&details[0].resources, &details[1].resources, true),
            None => Vec::new(),
        };
        DivergenceView {
            tick,
            runs: runs.map(str::to_owned),
            blame,
            blamed,
            tables,
            blamed_entity: difference.is_some_and(|d| d.entity.is_some()),
            listed: difference.map_or((Vec::new(), 0), |d| (d.listed.clone(), d.unlisted)),
            plots,
        }
    }

    /// The divergence's section of the page.
    pub fn render(&self, page: &mut String) {
        let [a, b] = &self.runs;
        let _ = write!(
            page,
            "<section id=\"divergence\"><h2>First divergence: tick <span id=\"divergent-tick\">{}</span></h2>\
             <p class=\"blame\"><b>{} vs {}</b>: {}</p>",
            self.tick,
            escape(a),
            escape(b),
            escape(&self.blame)
        );
        self.render_listing(page);
        self.render_plot(page);
        if !self.tables.is_empty() {
            let _ = write!(
                page,
                "<h3>{}, field by field</h3>",
                if self.blamed_entity {
                    "The entity"
                } else {
                    "The resources that differ"
                }
            );
            let _ = write!(
                page,
                "<table class=\"fields\"><thead><tr><th>component</th><th>field</th>\
                 <th>{}</th><th>{}</th></tr></thead><tbody>",
                escape(a),
                escape(b)
            );
            for table in &self.tables {
                for (k, row) in table.rows.iter().enumerate() {
                    let differs = row.values[0] != row.values[1];
                    let blamed = self
                        .blamed
                        .as_ref()
                        .is_some_and(|(c, f)| *c == table.name && *f == row.path);
                    let class = match (blamed, differs) {
                        (true, _) => " class=\"blamed\"",
                        (false, true) => " class=\"differs\"",
                        _ => "",
                    };
                    let value = |v: &Option<String>| {
                        v.as_deref()
                            .map_or_else(|| "<i>(absent)</i>".to_owned(), escape)
                    };
                    let _ = write!(
                        page,
                        "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        if k == 0 {
                            escape(&table.name)
                        } else {
                            String::new()
                        },
                        escape(&row.path),
                        value(&row.values[0]),
                        value(&row.values[1]),
                    );
                }
            }
            page.push_str("</tbody></table>");
        }
        page.push_str("</section>");
    }

    /// Every difference at the tick, one row each, when there is more than one.
    fn render_listing(&self, page: &mut String) {
        let (listed, unlisted) = &self.listed;
        if listed.len() + unlisted <= 1 {
            return;
        }
        let [a, b] = &self.runs;
        let _ = write!(
            page,
            "<h3>Every difference at this tick ({} in all)</h3><table class=\"fields\" \
             id=\"differences\"><thead><tr><th>entity or resource</th><th>component</th>\
             <th>field</th><th>{}</th><th>{}</th></tr></thead><tbody>",
            listed.len() + unlisted,
            escape(a),
            escape(b)
        );
        for d in listed {
            let (first, second) = d.field.as_ref().map_or_else(
                || ("<i>(only one run)</i>".to_owned(), String::new()),
                |f| (escape(&f.first), escape(&f.second)),
            );
            let _ = write!(
                page,
                "<tr class=\"differs\"><td>{}</td><td>{}</td><td>{}</td><td>{first}</td>\
                 <td>{second}</td></tr>",
                escape(d.entity.as_deref().unwrap_or("resource")),
                escape(d.component.as_deref().unwrap_or("")),
                escape(d.field.as_ref().map_or("", |f| f.path.as_str())),
            );
        }
        if *unlisted > 0 {
            let _ = write!(
                page,
                "<tr><td colspan=\"5\"><i>… and {unlisted} more</i></td></tr>"
            );
        }
        page.push_str("</tbody></table>");
    }

    /// A position plot for each plotted entity.
    fn render_plot(&self, page: &mut String) {
        for plot in &self.plots {
            self.render_entity_plot(page, plot);
        }
    }

    /// One entity's position plots: each axis that moves or differs, both runs; then their
    /// difference.
    fn render_entity_plot(&self, page: &mut String, plot: &PlottedEntity) {
        let tracks = &plot.tracks;
        if tracks.iter().all(Vec::is_empty) {
            return;
        }
        let (from, to) = tracks
            .iter()
            .flatten()
            .fold((u64::MAX, 0), |(lo, hi), (t, _)| (lo.min(*t), hi.max(*t)));
        let _ = write!(
            page,
            "<h3>Position of {}, ticks {from}–{to}</h3><p class=\"legend\"><span class=\"first\">━ {}</span> \
             <span class=\"second\">┅ {}</span> <span class=\"marker\">│ tick {}</span></p><div class=\"plots\">",
            escape(&plot.label),
            escape(&self.runs[0]),
            escape(&self.runs[1]),
            self.tick
        );
        for (axis, name) in ["x", "y", "z"].into_iter().enumerate() {
            let series: [Vec<(u64, f64)>; 2] = tracks
                .clone()
                .map(|t| t.iter().map(|(tick, p)| (*tick, p[axis] as f64)).collect());
            let values = series.iter().flatten().map(|p| p.1);
            let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
            if lo == hi {
                continue;
            }
            chart(
                page,
                &format!("translation.{name}"),
                (from, to),
                self.tick,
                &[("first", &series[0]), ("second", &series[1])],
            );
        }
        let mut differences: Vec<(&str, Vec<(u64, f64)>)> = Vec::new();
        for (axis, class) in ["diff-x", "diff-y", "diff-z"].into_iter().enumerate() {
            let series: Vec<(u64, f64)> = tracks[0]
                .iter()
                .filter_map(|(tick, p)| {
                    let (_, q) = tracks[1].iter().find(|(t, _)| t == tick)?;
                    Some((*tick, q[axis] as f64 - p[axis] as f64))
                })
                .collect();
            if series.iter().any(|p| p.1 != 0.0) {
                differences.push((class, series));
            }
        }
        if !differences.is_empty() {
            let refs: Vec<(&str, &[(u64, f64)])> = differences
                .iter()
                .map(|(c, s)| (*c, s.as_slice()))
                .collect();
            chart(
                page,
                &format!(
                    "{} − {} (x red, y green, z blue)",
                    self.runs[1], self.runs[0]
                ),
                (from, to),
                self.tick,
                &refs,
            );
        }
        page.push_str("</div>");
    }
}

/// One chart: `series` (CSS class, points) over ticks `from..=to`, a mark at `tick`.
fn chart(
    page: &mut String,
    title: &str,
    (from, to): (u64, u64),
    tick: u64,
    series: &[(&str, &[(u64, f64)])],
) {
    const W: f64 = 640.0;
    const H: f64 = 150.0;
    const LEFT: f64 = 90.0;
    const TOP: f64 = 22.0;
    const BOTTOM: f64 = 20.0;
    let (mut lo, mut hi) = series
        .iter()
        .flat_map(|(_, s)| s.iter().map(|p| p.1))
        .fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
    if lo > hi {
        return;
    }
    if lo == hi {
        lo -= 1.0;
        hi += 1.0;
    }
    let span = (to.saturating_sub(from)).max(1) as f64;
    let x = |t: u64| LEFT + (t.saturating_sub(from)) as f64 / span * (W - LEFT - 10.0);
    let y = |v: f64| TOP + (hi - v) / (hi - lo) * (H - TOP - BOTTOM);
    let _ = write!(
        page,
        "<svg class=\"chart\" viewBox=\"0 0 {W} {H}\" role=\"img\"><title>{t}</title>\
         <text x=\"{LEFT}\" y=\"14\" class=\"title\">{t}</text>\
         <text x=\"{lx}\" y=\"{ty}\" class=\"value\">{hi}</text>\
         <text x=\"{lx}\" y=\"{by}\" class=\"value\">{lo}</text>\
         <text x=\"{LEFT}\" y=\"{H}\" class=\"value start\" dy=\"-4\">{from}</text>\
         <text x=\"{rx}\" y=\"{H}\" class=\"value\" dy=\"-4\">{to}</text>\
         <rect class=\"frame\" x=\"{LEFT}\" y=\"{TOP}\" width=\"{fw}\" height=\"{fh}\"/>\
         <line class=\"marker\" x1=\"{mx}\" x2=\"{mx}\" y1=\"{TOP}\" y2=\"{mb}\"/>",
        t = escape(title),
        lx = LEFT - 6.0,
        ty = y(hi) + 4.0,
        by = y(lo) + 4.0,
        hi = format_value(hi),
        lo = format_value(lo),
        rx = W - 10.0,
        fw = W - LEFT - 10.0,
        fh = H - TOP - BOTTOM,
        mx = x(tick),
        mb = H - BOTTOM,
    );
    for (class, points) in series {
        let mut d = String::new();
        for (k, (t, v)) in points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.2},{:.2}",
                if k == 0 { 'M' } else { 'L' },
                x(*t),
                y(*v)
            );
        }
        let _ = write!(page, "<path class=\"{class}\" d=\"{d}\"/>");
    }
    page.push_str("</svg>");
}

/// A plot label: short, and exact enough to tell 1e-4 apart.
fn format_value(v: f64) -> String {
    if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e6) {
        format!("{v:.3e}")
    } else {
        format!("{}", (v * 1e6).round() / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusting_engine::record::EntityDetail;

    fn detail(tick: u64, x: &str) -> StateDetail {
        StateDetail {
            tick,
            entities: vec![EntityDetail {
                sim_id: 3,
                name: Some("Player".into()),
                scene_id: Some(10),
                hash: x.into(),
                components: vec![ComponentDetail {
                    name: "Transform".into(),
                    hash: x.into(),
                    fields: ["x", "y", "z"]
                        .into_iter()
                        .map(|a| {
                            (
                                format!("translation.{a}"),
                                if a == "x" { x.into() } else { "0.0".into() },
                            )
                        })
                        .collect(),
                }],
            }],
            resources: Vec::new(),
            gpu: None,
        }
    }

    /// Fails if the table loses the blamed field or the track stops reading translations.
    #[test]
    fn the_blamed_field_is_marked_and_positions_are_read_from_details() {
        let (a, b) = (detail(31, "1.0"), detail(31, "1.0001"));
        let difference = rusting_engine::record::compare_details(&a, &b);
        let track = track_from_details(&[detail(30, "0.5"), a.clone()], 3);
        assert_eq!(track, vec![(30, [0.5, 0.0, 0.0]), (31, [1.0, 0.0, 0.0])]);
        let view = DivergenceView::new(
            31,
            ["debug", "release"],
            [&a, &b],
            difference.as_ref(),
            vec![PlottedEntity {
                label: "`Player` (scene id 3)".to_owned(),
                tracks: [track.clone(), track],
            }],
        );
        let mut page = String::new();
        view.render(&mut page);
        assert!(page.contains("<tr class=\"blamed\"><td>Transform</td><td>translation.x</td><td>1.0</td><td>1.0001</td>"), "{page}");
        assert!(page.contains("entity `Player`"), "{page}");
        assert!(page.contains("<svg class=\"chart\""), "{page}");
    }
}
