//! `rusting hashes diff <A> <B>`: where two state-hash reports first differ.

use std::path::Path;

use rusting_engine::determinism::{StateHashReport, compare_reports};

use crate::exit::{Failure, Outcome};

/// Compares two reports; `Ok` with a summary when they match.
pub fn diff(a: &Path, b: &Path, json: bool) -> Result<String, Failure> {
    let load = |path: &Path| {
        StateHashReport::load(path)
            .map_err(|e| Failure::new("REPORT_INVALID", Outcome::BadInput, e.to_string()))
    };
    let (ra, rb) = (load(a)?, load(b)?);
    match compare_reports(&ra, &rb) {
        None => Ok(if json {
            serde_json::json!({ "result": "same", "ticks": ra.ticks.len() }).to_string()
        } else {
            format!(
                "the reports agree on all {} ticks and every entity",
                ra.ticks.len()
            )
        }),
        Some(difference) => {
            let mut message = match difference.tick {
                Some(tick) => format!("first divergent tick {tick}"),
                None => "every common tick matches, but the runs differ".to_owned(),
            };
            if let Some(at_tick) = &difference.at_tick {
                message.push_str(&crate::blame::describe(Some(at_tick)));
            } else if let Some(entity) = &difference.entity {
                message.push_str(&format!(
                    "; entity {}",
                    crate::blame::entity_label(entity.name.as_deref(), entity.scene_id)
                ));
                if let Some(component) = &difference.component {
                    message.push_str(&format!(", component {component}"));
                }
                message.push_str(
                    " after the last tick (run with `--detail-ticks` around the divergent tick to \
                     name the field at that tick)",
                );
            }
            if json {
                message = serde_json::json!({
                    "result": "different",
                    "code": "HASHES_DIFFER",
                    "tick": difference.tick,
                    "entity": difference.entity.as_ref().and_then(|e| e.name.clone()),
                    "scene_id": difference.entity.as_ref().and_then(|e| e.scene_id),
                    "sim_id": difference.entity.as_ref().map(|e| e.sim_id),
                    "component": difference.component,
                    "at_tick": difference.at_tick.as_ref().map(|d| serde_json::json!({
                        "entity": d.entity.as_ref().and_then(|e| e.name.clone()),
                        "sim_id": d.entity.as_ref().map(|e| e.sim_id),
                        "component": d.component,
                        "field": d.field.as_ref().map(|f| f.path.clone()),
                        "values": d.field.as_ref().map(|f| [f.first.clone(), f.second.clone()]),
                    })),
                })
                .to_string();
            }
            Err(Failure::new("HASHES_DIFFER", Outcome::Failed, message))
        }
    }
}
