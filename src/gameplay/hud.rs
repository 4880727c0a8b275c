//! [`HudElement`]: a line of on-screen text that shows a counter (presentation).
//!
//! The text is refreshed in `Update` from the simulation and never read by it. This module must
//! never write simulation state.

use bevy::prelude::{Component, Query};
use serde::{Deserialize, Serialize};

use super::pickup::Counter;
use crate::state::SceneId;

/// Text on the heads-up display showing the counter of the entity with `counter` as its `SceneId`.
#[derive(Component, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HudElement {
    /// Written before the value, e.g. `"Coins: "`.
    pub label: String,
    /// The `SceneId` of the entity whose `Counter` to show.
    pub counter: u64,
    /// The text to draw (written by `refresh_hud`).
    #[serde(skip)]
    pub text: String,
}

/// Refreshes every HUD element's text from its counter (runs in `Update`).
pub fn refresh_hud(mut elements: Query<&mut HudElement>, counters: Query<(&SceneId, &Counter)>) {
    for mut element in &mut elements {
        let value = counters
            .iter()
            .find(|(id, _)| id.0 == element.counter)
            .map(|(_, c)| c.value);
        let text = match value {
            Some(v) => format!("{}{v}", element.label),
            None => format!("{}-", element.label),
        };
        if element.text != text {
            element.text = text;
        }
    }
}
