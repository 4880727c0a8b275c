//! Wording a [`DetailDifference`] for people: the entity, component or resource, and field that
//! differ, with both values. Shared by `determinism` and `hashes diff`, so both say it the same
//! way. This module must never compare anything itself.

use rusting_engine::determinism::DetailDifference;

/// An entity as messages name it: `` `Player` (scene id 10) ``.
pub fn entity_label(name: Option<&str>, scene_id: Option<u64>) -> String {
    format!(
        "`{}`{}",
        name.unwrap_or("(unnamed)"),
        scene_id
            .map(|id| format!(" (scene id {id})"))
            .unwrap_or_default()
    )
}

/// `: entity ..., component ..., field ...: a vs b`, or what only resources differ in.
pub fn describe(difference: Option<&DetailDifference>) -> String {
    let Some(difference) = difference else {
        return ": the runs' details agree in every field (the difference is in something the \
                hash covers and no field shows)"
            .to_owned();
    };
    let mut text = match &difference.entity {
        Some(entity) => format!(
            ": entity {}",
            entity_label(entity.name.as_deref(), entity.scene_id)
        ),
        None => ": only resources differ".to_owned(),
    };
    if let Some(component) = &difference.component {
        let kind = if difference.entity.is_some() {
            "component"
        } else {
            "resource"
        };
        text.push_str(&format!(", {kind} {component}"));
    } else if difference.entity.is_some() {
        text.push_str(", which only one of the runs holds");
    }
    if let Some(field) = &difference.field {
        text.push_str(&format!(
            ", field {}: {} vs {}",
            field.path, field.first, field.second
        ));
    }
    text
}
