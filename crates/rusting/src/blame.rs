//! Wording a [`DetailDifference`] for people: the entity, component or resource, and field that
//! differ, with both values. Shared by `determinism` and `hashes diff`, so both say it the same
//! way as the engine's own errors (the wording is `DetailDifference`'s `Display`). This module must
//! never compare anything itself.

use rusting_engine::record::DetailDifference;

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
