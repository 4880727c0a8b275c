//! Wording a [`DetailDifference`] for people: the entity, component or resource, and field that
//! differ, with both values. Shared by `determinism` and `hashes diff`, so both say it the same
//! way as the engine's own errors (the wording is `DetailDifference`'s `Display`). This module must
//! never compare anything itself.

use rusting_engine::record::{DetailDifference, Differing};

pub use rusting_engine::record::detail::entity_label;

/// `: entity ..., component ..., field ...: a vs b`, or what only resources differ in.
pub fn describe(difference: Option<&DetailDifference>) -> String {
    match difference {
        Some(difference) => format!(": {difference}"),
        None => ": the runs' details agree in every field (the difference is in something the \
                   hash covers and no field shows)"
            .to_owned(),
    }
}

/// One listed difference as `--json` gives it: the entity's label and simulation id (none for a
/// resource), the component or resource, the field and both values (none where only one run
/// holds the entity or component).
pub fn differing_json(d: &Differing) -> serde_json::Value {
    serde_json::json!({
        "entity": d.entity,
        "sim_id": d.sim_id,
        "component": d.component,
        "field": d.field.as_ref().map(|f| f.path.clone()),
        "values": d.field.as_ref().map(|f| [f.first.clone(), f.second.clone()]),
    })
}
