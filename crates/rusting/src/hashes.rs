//! `rusting hashes diff <A> <B> [<C>...]`: where state-hash reports first differ. Two reports are
//! compared with each other, optionally drawn as an HTML report (`--report`); more are each
//! compared with one reference (the first, or `--reference`), as a CI job that gathers reports from
//! many machines needs: every report that differs is named with its first divergent tick and, where
//! the reports detail that tick, the entity, component and field with both values.

use std::path::{Path, PathBuf};

use rusting_engine::record::report::{TickHash, fold_gpu_hash};
use rusting_engine::record::{ReportDifference, StateHashReport, compare_reports};

use crate::exit::{Failure, Outcome};
use crate::html_report::{
    DivergenceView, HtmlReport, Lane, MAX_PLOTTED, PlottedEntity, Verdict, track_from_details,
};

/// A report's ticks as `(tick, hash)`, the GPU hash folded in, for the report's lanes.
fn lane_hashes(ticks: &[TickHash]) -> Vec<(u64, u64)> {
    ticks
        .iter()
        .map(|t| {
            let hash = u64::from_str_radix(&t.hash, 16).unwrap_or_default();
            let gpu = t
                .gpu_hash
                .as_deref()
                .and_then(|g| u64::from_str_radix(g, 16).ok());
            (t.tick, fold_gpu_hash(hash, gpu))
        })
        .collect()
}

/// The HTML page for two reports and the outcome of comparing them.
pub(crate) fn page(
    (a, ra): (&Path, &StateHashReport),
    (b, rb): (&Path, &StateHashReport),
    result: &Result<String, Failure>,
    human: &str,
) -> HtmlReport {
    let names = [a.display().to_string(), b.display().to_string()];
    let (ha, hb) = (lane_hashes(&ra.ticks), lane_hashes(&rb.ticks));
    let divergence = compare_reports(ra, rb).and_then(|difference| {
        let tick = difference.tick?;
        let da = ra.details.iter().find(|d| d.tick == tick)?;
        let db = rb.details.iter().find(|d| d.tick == tick)?;
        let at_tick = difference.at_tick.as_ref();
        let plots = at_tick
            .map(|d| d.plotted_entities(MAX_PLOTTED))
            .unwrap_or_default()
            .into_iter()
            .map(|(sim_id, label)| PlottedEntity {
                label,
                tracks: [
                    track_from_details(&ra.details, sim_id),
                    track_from_details(&rb.details, sim_id),
                ],
            })
            .collect();
        Some(DivergenceView::new(
            tick,
            [&names[0], &names[1]],
            [da, db],
            at_tick,
            plots,
        ))
    });
    let last = ha.iter().chain(&hb).map(|(t, _)| *t).max().unwrap_or(1);
    let first = ha.iter().chain(&hb).map(|(t, _)| *t).min().unwrap_or(1);
    HtmlReport {
        title: "rusting hashes diff".to_owned(),
        facts: vec![
            ("first report".to_owned(), names[0].clone()),
            ("second report".to_owned(), names[1].clone()),
        ],
        verdict: Verdict::of(result, Some(human)),
        ticks: (first, last),
        lanes: vec![
            Lane::reference(&names[0], &ha),
            Lane::compared(&names[1], &names[0], &ha, &hb),
        ],
        divergence,
        recording: None,
    }
}

/// Compares two reports; `Ok` with a summary when they match. With `report`, also writes the HTML
/// page.
pub fn diff(a: &Path, b: &Path, json: bool, report: Option<&Path>) -> Result<String, Failure> {
    let outputs: Vec<(&str, &Path)> = report.map(|p| ("--report", p)).into_iter().collect();
    crate::outputs::check(&[("A", a), ("B", b)], &outputs)?;
    let (ra, rb) = (load(a)?, load(b)?);
    let (result, human) = compare(&ra, &rb, json);
    if let Some(path) = report {
        crate::html_report::write(&page((a, &ra), (b, &rb), &result, &human), path)?;
    }
    result
}

/// What a difference says, in words: the tick and the blame.
fn difference_words(difference: &ReportDifference) -> String {
    if let Some(layout) = &difference.layout {
        return format!(
            "the reports come from games whose simulation state has another layout, so their \
             hashes cannot agree: {layout}"
        );
    }
    let mut message = match difference.tick {
        Some(tick) => format!("first divergent tick {tick}"),
        None => "every common tick matches, but the runs differ".to_owned(),
    };
    if let Some(at_tick) = &difference.at_tick {
        message.push_str(&crate::blame::describe(Some(at_tick)));
    } else if let Some(entity) = &difference.entity {
        message.push_str(&format!(
            "; entity {}",
            crate::blame::entity_label(entity.name.as_deref(), entity.scene_id, entity.sim_id)
        ));
        if let Some(component) = &difference.component {
            message.push_str(&format!(", component {component}"));
        }
        message.push_str(
            " after the last tick (run with `--detail-ticks` around the divergent tick to name \
             the field at that tick)",
        );
    }
    message
}

/// What a difference says, as JSON fields.
fn difference_json(difference: &ReportDifference) -> serde_json::Value {
    serde_json::json!({
        "result": "different",
        "code": "HASHES_DIFFER",
        "tick": difference.tick,
        "entity": difference.entity.as_ref().and_then(|e| e.name.clone()),
        "scene_id": difference.entity.as_ref().and_then(|e| e.scene_id),
        "sim_id": difference.entity.as_ref().map(|e| e.sim_id),
        "component": difference.component,
        "layout": difference.layout,
        "at_tick": difference.at_tick.as_ref().map(|d| serde_json::json!({
            "entity": d.entity.as_ref().and_then(|e| e.name.clone()),
            "sim_id": d.entity.as_ref().map(|e| e.sim_id),
            "component": d.component,
            "field": d.field.as_ref().map(|f| f.path.clone()),
            "values": d.field.as_ref().map(|f| [f.first.clone(), f.second.clone()]),
            "differences": d.listed.iter().map(crate::blame::differing_json).collect::<Vec<_>>(),
            "unlisted": d.unlisted,
        })),
    })
}

/// Each report compared with a reference: a line and a JSON entry per report, and how many
/// differ.
pub struct Compared {
    /// `<report>: <outcome>` per report.
    pub lines: Vec<String>,
    /// The JSON entry per report (`report`, `result` and, when it differs, the blame).
    pub entries: Vec<serde_json::Value>,
    /// How many differ.
    pub differing: usize,
}

/// Reads the report at `path` (`REPORT_INVALID` when it cannot).
pub fn load(path: &Path) -> Result<StateHashReport, Failure> {
    StateHashReport::load(path).map_err(|e| Failure::bad_input("REPORT_INVALID", e.to_string()))
}

/// Compares each of `others` with `base` (read from the reference).
pub fn compare_with(base: &StateHashReport, others: &[&Path]) -> Result<Compared, Failure> {
    let mut compared = Compared {
        lines: Vec::new(),
        entries: Vec::new(),
        differing: 0,
    };
    for path in others {
        let other = load(path)?;
        match compare_reports(base, &other) {
            None => {
                compared.lines.push(format!(
                    "{}: agrees on all {} ticks and every entity",
                    path.display(),
                    other.ticks.len()
                ));
                compared.entries.push(serde_json::json!({
                    "report": path.display().to_string(),
                    "result": "same",
                    "ticks": other.ticks.len(),
                }));
            }
            Some(difference) => {
                compared.differing += 1;
                // One line a report: the first difference, and how many more there are.
                let words = difference_words(&difference);
                let first = words.lines().next().unwrap_or_default();
                let more = difference
                    .at_tick
                    .as_ref()
                    .map_or(0, |d| d.count().saturating_sub(1));
                let more = if more > 0 {
                    format!(
                        " (and {more} more differences at that tick: `rusting hashes diff` the \
                         two reports to list them)"
                    )
                } else {
                    String::new()
                };
                compared
                    .lines
                    .push(format!("{}: {first}{more}", path.display()));
                let mut entry = difference_json(&difference);
                entry["report"] = serde_json::Value::from(path.display().to_string());
                compared.entries.push(entry);
            }
        }
    }
    Ok(compared)
}

/// Compares every report with the reference (`reference`, else the first): `Ok` with a summary
/// when all agree, else `HASHES_DIFFER` naming each report that differs.
pub fn diff_many(
    reports: &[PathBuf],
    reference: Option<&Path>,
    json: bool,
) -> Result<String, Failure> {
    let inputs: Vec<(&str, &Path)> = reports.iter().map(|p| ("REPORT", p.as_path())).collect();
    crate::outputs::check(&inputs, &[])?;
    let reference_path = reference.unwrap_or(&reports[0]);
    let base = load(reference_path)?;
    let others: Vec<&Path> = reports
        .iter()
        .map(PathBuf::as_path)
        .filter(|p| *p != reference_path)
        .collect();
    let Compared {
        lines,
        entries,
        differing,
    } = compare_with(&base, &others)?;
    let compared = entries.len();
    if json {
        let value = serde_json::json!({
            "result": if differing == 0 { "same" } else { "different" },
            "code": if differing == 0 { serde_json::Value::Null } else { "HASHES_DIFFER".into() },
            "reference": reference_path.display().to_string(),
            "reports": entries,
        })
        .to_string();
        return if differing == 0 {
            Ok(value)
        } else {
            Err(Failure::new("HASHES_DIFFER", Outcome::Failed, value))
        };
    }
    if differing == 0 {
        return Ok(format!(
            "all {compared} reports agree with {} on all {} ticks and every entity",
            reference_path.display(),
            base.ticks.len()
        ));
    }
    Err(Failure::new(
        "HASHES_DIFFER",
        Outcome::Failed,
        format!(
            "{differing} of {compared} reports differ from {}\nreference {}: {} ticks\n{}",
            reference_path.display(),
            reference_path.display(),
            base.ticks.len(),
            lines.join("\n")
        ),
    ))
}

/// The outcome of comparing two reports, and its human-readable message.
pub(crate) fn compare(
    ra: &StateHashReport,
    rb: &StateHashReport,
    json: bool,
) -> (Result<String, Failure>, String) {
    match compare_reports(ra, rb) {
        None => {
            let human = format!(
                "the reports agree on all {} ticks and every entity",
                ra.ticks.len()
            );
            let summary = if json {
                serde_json::json!({ "result": "same", "ticks": ra.ticks.len() }).to_string()
            } else {
                human.clone()
            };
            (Ok(summary), human)
        }
        Some(difference) => {
            let human = difference_words(&difference);
            let message = if json {
                difference_json(&difference).to_string()
            } else {
                human.clone()
            };
            (
                Err(Failure::new("HASHES_DIFFER", Outcome::Failed, message)),
                human,
            )
        }
    }
}
