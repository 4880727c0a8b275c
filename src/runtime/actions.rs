//! Named input actions: games ask for `"jump"` or `Action::Jump`, and `rusting.json` says which
//! keys mean it.
//!
//! [`InputBindings`] is the `input` section of `rusting.json`: actions bound to keys, and axes
//! bound to a negative and a positive set of keys (added to the analog axis of the same name in
//! `RuntimeInput`). Fixed systems read actions through the [`Actions`] system parameter, which
//! answers from the tick's [`TickInput`], so `just_pressed` means this tick, whatever the frames
//! did. Input that a player drives is better read per player through `PlayerActions`, which
//! answers the same offline and in a session. The bindings are the project's configuration, the
//! same on every run; this module must never read devices.

use std::collections::{BTreeMap, BTreeSet};

use bevy::ecs::system::SystemParam;
use bevy::input::keyboard::KeyCode;
use bevy::prelude::{Res, Resource};
use serde::{Deserialize, Serialize};

use super::{RuntimeInput, TickInput};

/// An axis bound to keys: -1 while a `negative` key is down, +1 while a `positive` one is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AxisBinding {
    /// Keys that push the axis towards -1.
    #[serde(default)]
    pub negative: BTreeSet<KeyCode>,
    /// Keys that push the axis towards +1.
    #[serde(default)]
    pub positive: BTreeSet<KeyCode>,
}

/// The `input` section of `rusting.json`:
/// `{"actions": {"jump": ["Space"]}, "axes": {"move_x": {"negative": ["KeyA"], "positive": ["KeyD"]}}}`.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputBindings {
    /// Each action and the keys that trigger it (any of them).
    #[serde(default)]
    pub actions: BTreeMap<String, BTreeSet<KeyCode>>,
    /// Each axis and its keys.
    #[serde(default)]
    pub axes: BTreeMap<String, AxisBinding>,
}

/// A name an action is known by: a `&str`, or a game's own enum implementing this.
pub trait ActionName {
    /// The action's name in `rusting.json`.
    fn action_name(&self) -> &str;
}

impl ActionName for &str {
    fn action_name(&self) -> &str {
        self
    }
}

impl ActionName for String {
    fn action_name(&self) -> &str {
        self
    }
}

/// The tick's input by action and axis name (a system parameter for fixed systems).
#[derive(SystemParam)]
pub struct Actions<'w> {
    tick: Res<'w, TickInput>,
    frame: Res<'w, RuntimeInput>,
    bindings: Res<'w, InputBindings>,
}

impl Actions<'_> {
    fn keys(&self, action: &impl ActionName) -> Option<&BTreeSet<KeyCode>> {
        self.bindings.actions.get(action.action_name())
    }

    /// Whether `key` is down this tick, whatever it is bound to (`TickInput::is_pressed`).
    pub fn key_pressed(&self, key: KeyCode) -> bool {
        self.tick.is_pressed(key)
    }

    /// Whether any key bound to `action` is down this tick (false for an action not bound).
    pub fn pressed(&self, action: impl ActionName) -> bool {
        self.keys(&action)
            .is_some_and(|keys| keys.iter().any(|k| self.tick.is_pressed(*k)))
    }

    /// Whether `action` went down this tick: a bound key went down and none was down the tick
    /// before.
    pub fn just_pressed(&self, action: impl ActionName) -> bool {
        self.keys(&action).is_some_and(|keys| {
            keys.iter().any(|k| self.tick.just_pressed(*k))
                && !keys
                    .iter()
                    .any(|k| self.tick.is_pressed(*k) && !self.tick.just_pressed(*k))
        })
    }

    /// Whether `action` came up this tick: a bound key came up and none is down now.
    pub fn just_released(&self, action: impl ActionName) -> bool {
        self.keys(&action).is_some_and(|keys| {
            keys.iter().any(|k| self.tick.just_released(*k))
                && !keys.iter().any(|k| self.tick.is_pressed(*k))
        })
    }

    /// The axis named `name`: its keys (-1, +1) plus `RuntimeInput`'s analog axis of that name,
    /// clamped to `[-1, 1]`.
    pub fn axis(&self, name: &str) -> f32 {
        let mut value = self.frame.axis(name);
        if let Some(binding) = self.bindings.axes.get(name) {
            let down = |keys: &BTreeSet<KeyCode>| keys.iter().any(|k| self.tick.is_pressed(*k));
            value += f32::from(u8::from(down(&binding.positive)));
            value -= f32::from(u8::from(down(&binding.negative)));
        }
        value.clamp(-1.0, 1.0)
    }
}
