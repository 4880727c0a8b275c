//! [`RuntimeInput`]: the input one frame saw, in a form replays can store.
//!
//! Whatever supplies input (a window, a replay, a test script) writes it here once per frame,
//! before the frame's fixed ticks. Every container is ordered (`BTreeSet`, `BTreeMap`), so two
//! equal inputs serialize to the same bytes and iterate in the same order.
//!
//! This module must never read devices itself: sampling belongs to the window layer, so that a
//! replay can stand in for it.

use std::collections::{BTreeMap, BTreeSet};

use bevy::input::keyboard::KeyCode;
use bevy::math::{UVec2, Vec2};
use bevy::prelude::Resource;
use serde::{Deserialize, Serialize};

/// The sampled input of the current frame (simulation input: replays record it).
#[derive(
    Resource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, rusting_macros::SimState,
)]
pub struct RuntimeInput {
    /// Keys held down, sorted.
    #[sim_state(with = hash_keys)]
    pub pressed: BTreeSet<KeyCode>,
    /// Named analog axes (such as `"move_x"`), sorted by name.
    pub axes: BTreeMap<String, f32>,
    /// Pointer movement this frame, in logical pixels.
    pub look_delta: Vec2,
    /// The viewport size gameplay sees, in logical pixels.
    pub viewport: UVec2,
}

/// Held keys by their serialized names (the same text on every platform and in replays).
pub(crate) fn hash_keys(keys: &BTreeSet<KeyCode>, hasher: &mut crate::state::StateHasher) {
    hasher.u64(keys.len() as u64);
    for key in keys {
        let name = serde_json::to_string(key).unwrap_or_default();
        hasher.u64(name.len() as u64);
        hasher.bytes(name.as_bytes());
    }
}

impl RuntimeInput {
    /// No key held, no axis set, no pointer movement, no viewport.
    pub const EMPTY: RuntimeInput = RuntimeInput {
        pressed: BTreeSet::new(),
        axes: BTreeMap::new(),
        look_delta: Vec2::ZERO,
        viewport: UVec2::ZERO,
    };

    /// Whether `key` is held down.
    pub fn is_pressed(&self, key: KeyCode) -> bool {
        self.pressed.contains(&key)
    }

    /// Marks `key` as held down.
    pub fn press(&mut self, key: KeyCode) {
        self.pressed.insert(key);
    }

    /// Marks `key` as released.
    pub fn release(&mut self, key: KeyCode) {
        self.pressed.remove(&key);
    }

    /// The value of axis `name`, 0 when it was never set.
    pub fn axis(&self, name: &str) -> f32 {
        self.axes.get(name).copied().unwrap_or(0.0)
    }

    /// Sets axis `name` to `value`.
    pub fn set_axis(&mut self, name: impl Into<String>, value: f32) {
        self.axes.insert(name.into(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_input_serializes_to_equal_bytes() {
        let mut a = RuntimeInput::default();
        a.press(KeyCode::KeyW);
        a.press(KeyCode::Space);
        a.set_axis("move_y", 1.0);
        a.set_axis("move_x", -0.5);
        let mut b = RuntimeInput::default();
        b.set_axis("move_x", -0.5);
        b.press(KeyCode::Space);
        b.set_axis("move_y", 1.0);
        b.press(KeyCode::KeyW);
        let a_json = serde_json::to_string(&a).unwrap();
        assert_eq!(a_json, serde_json::to_string(&b).unwrap());
        let back: RuntimeInput = serde_json::from_str(&a_json).unwrap();
        assert_eq!(back, a);
        assert!(back.is_pressed(KeyCode::KeyW));
        assert_eq!(back.axis("missing"), 0.0);
    }
}
