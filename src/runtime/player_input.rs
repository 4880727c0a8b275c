//! [`PlayerTickInput`]: one player's input for one tick in a fixed-size, plain-data form, and
//! [`PlayerInputs`], every player's for the tick being simulated.
//!
//! `RuntimeInput` and `TickInput` hold sets and maps, which suit replays and the simulation but
//! not a network packet or a rollback buffer that keeps one entry per player per tick. This form
//! is 32 bytes with a fixed little-endian layout: the bound actions as bits (up to 32), the bound
//! axes quantized (up to ten), and the tick's look movement. Bindings with more than that are
//! refused when a session starts and reported by `rusting validate`
//! ([`PlayerTickInput::check_fits`]), naming what does not fit; `PlayerActions` reads the names
//! past the limit as never pressed, offline too. It is made from the project's `InputBindings`
//! (so both ends must share them) and turns back into the `RuntimeInput` that gives the same
//! actions, axes and look. In a multiplayer session the session writes every player's input for
//! the tick into [`PlayerInputs`] (simulation state: hashed and in snapshots), and gameplay reads
//! its own player's from there: an entity with a [`PlayerSlot`] is driven by that player's input.
//! This module must never read devices.

use bevy::input::keyboard::KeyCode;
use bevy::math::Vec2;
use bevy::prelude::{Component, Resource};
use serde::{Deserialize, Serialize};

use super::{InputBindings, RuntimeInput, TickInput};

/// Look movement is carried in steps of 1/64 logical pixel.
const LOOK_STEPS_PER_PIXEL: f32 = 64.0;

/// Axes are carried in steps of 1/32767.
const AXIS_STEPS: f32 = 32767.0;

/// The most actions a session carries per player and tick.
pub const MAX_SESSION_ACTIONS: usize = 32;

/// The most axes a session carries per player and tick.
pub const MAX_SESSION_AXES: usize = 10;

/// Where axis `k` of [`PlayerTickInput::to_bytes`] lies: the first four after the actions (the
/// original layout), the other six in the twelve bytes after the look.
const fn axis_offset(k: usize) -> usize {
    if k < 4 { 4 + 2 * k } else { 20 + 2 * (k - 4) }
}

/// Bindings a session cannot carry whole.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputFitError {
    /// More actions than a session carries.
    #[error(
        "the input bindings declare {count} actions and a session carries {MAX_SESSION_ACTIONS}: \
         `{first_dropped}` and the actions after it in name order would never reach the other \
         players; merge or remove actions in rusting.json's `input`"
    )]
    Actions {
        /// How many are declared.
        count: usize,
        /// The first one past the limit, in name order.
        first_dropped: String,
    },
    /// More axes than a session carries.
    #[error(
        "the input bindings declare {count} axes and a session carries {MAX_SESSION_AXES}: \
         `{first_dropped}` and the axes after it in name order would never reach the other \
         players; merge or remove axes in rusting.json's `input`"
    )]
    Axes {
        /// How many are declared.
        count: usize,
        /// The first one past the limit, in name order.
        first_dropped: String,
    },
}

/// One player's input for one tick (see the module docs).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    rusting_macros::SimState,
)]
pub struct PlayerTickInput {
    /// Bit `k` is set when the `k`-th action of `InputBindings::actions` (in name order; at most
    /// [`MAX_SESSION_ACTIONS`]) is pressed this tick.
    pub actions: u32,
    /// The axes of `InputBindings::axes`, in name order (at most [`MAX_SESSION_AXES`]), as
    /// `value * 32767` rounded toward zero.
    pub axes: [i16; MAX_SESSION_AXES],
    /// The tick's look movement in 1/64 logical pixels, saturated.
    pub look: [i32; 2],
}

impl PlayerTickInput {
    /// The size of [`PlayerTickInput::to_bytes`].
    pub const SIZE: usize = 32;

    /// Whether a session can carry every action and axis of `bindings`: the error names the
    /// first that would be dropped.
    ///
    /// # Errors
    ///
    /// [`InputFitError`] for more than [`MAX_SESSION_ACTIONS`] actions or [`MAX_SESSION_AXES`]
    /// axes.
    pub fn check_fits(bindings: &InputBindings) -> Result<(), InputFitError> {
        if let Some(first) = bindings.actions.keys().nth(MAX_SESSION_ACTIONS) {
            return Err(InputFitError::Actions {
                count: bindings.actions.len(),
                first_dropped: first.clone(),
            });
        }
        if let Some(first) = bindings.axes.keys().nth(MAX_SESSION_AXES) {
            return Err(InputFitError::Axes {
                count: bindings.axes.len(),
                first_dropped: first.clone(),
            });
        }
        Ok(())
    }

    /// The player's input this tick, from the tick's keys and look, the frame's analog axes, and
    /// the project's bindings.
    pub fn capture(bindings: &InputBindings, tick: &TickInput, frame: &RuntimeInput) -> Self {
        let actions = Self::action_bits(bindings, |key| tick.is_pressed(key));
        let mut axes = [0i16; MAX_SESSION_AXES];
        for (slot, (name, binding)) in axes.iter_mut().zip(&bindings.axes) {
            let down = |keys: &std::collections::BTreeSet<KeyCode>| {
                f32::from(u8::from(keys.iter().any(|key| tick.is_pressed(*key))))
            };
            let value = (frame.axis(name) + down(&binding.positive) - down(&binding.negative))
                .clamp(-1.0, 1.0);
            *slot = (value * AXIS_STEPS) as i16;
        }
        let look = |v: f32| {
            let steps = (v * LOOK_STEPS_PER_PIXEL).trunc();
            if steps.is_nan() {
                0
            } else {
                steps.clamp(i32::MIN as f32, i32::MAX as f32) as i32
            }
        };
        PlayerTickInput {
            actions,
            axes,
            look: [look(tick.look_delta.x), look(tick.look_delta.y)],
        }
    }

    /// The action bits of `bindings` with `down` telling which keys are down: bit `k` set when
    /// any key bound to the `k`-th action (in name order) is.
    pub fn action_bits(bindings: &InputBindings, down: impl Fn(KeyCode) -> bool) -> u32 {
        let mut actions = 0u32;
        for (k, keys) in bindings
            .actions
            .values()
            .take(MAX_SESSION_ACTIONS)
            .enumerate()
        {
            if keys.iter().any(|key| down(*key)) {
                actions |= 1 << k;
            }
        }
        actions
    }

    /// The look movement in logical pixels.
    pub fn look_delta(&self) -> Vec2 {
        Vec2::new(
            self.look[0] as f32 / LOOK_STEPS_PER_PIXEL,
            self.look[1] as f32 / LOOK_STEPS_PER_PIXEL,
        )
    }

    /// The `RuntimeInput` that gives these actions (each pressed action's first bound key), axes
    /// and look; nothing else pressed.
    pub fn to_runtime_input(&self, bindings: &InputBindings) -> RuntimeInput {
        let mut input = RuntimeInput::default();
        for (k, keys) in bindings
            .actions
            .values()
            .take(MAX_SESSION_ACTIONS)
            .enumerate()
        {
            if self.actions & (1 << k) != 0
                && let Some(key) = keys.iter().next()
            {
                input.press(*key);
            }
        }
        for (value, name) in self.axes.iter().zip(bindings.axes.keys()) {
            if *value != 0 {
                input.set_axis(name.clone(), f32::from(*value) / AXIS_STEPS);
            }
        }
        input.look_delta = self.look_delta();
        input
    }

    /// The fixed layout: actions (u32), the first four axes (i16), look x and y (i32), then the
    /// other six axes (i16); all little-endian. A form written before the last six axes existed
    /// held zeros there, which read as those axes at rest.
    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut bytes = [0u8; Self::SIZE];
        bytes[0..4].copy_from_slice(&self.actions.to_le_bytes());
        for (k, axis) in self.axes.iter().enumerate() {
            let at = axis_offset(k);
            bytes[at..at + 2].copy_from_slice(&axis.to_le_bytes());
        }
        bytes[12..16].copy_from_slice(&self.look[0].to_le_bytes());
        bytes[16..20].copy_from_slice(&self.look[1].to_le_bytes());
        bytes
    }

    /// Reads [`PlayerTickInput::to_bytes`]'s layout.
    pub fn from_bytes(bytes: &[u8; Self::SIZE]) -> Self {
        let i16_at = |at: usize| i16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let i32_at = |at: usize| {
            i32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        PlayerTickInput {
            actions: u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
            axes: std::array::from_fn(|k| i16_at(axis_offset(k))),
            look: [i32_at(12), i32_at(16)],
        }
    }
}

/// Every player's input for the tick being simulated, by player handle, and for the tick before
/// (simulation state). A multiplayer session, a session replay and a synctest write it with
/// [`PlayerInputs::advance`] before each tick they run, re-simulated ticks included; games read
/// it through `PlayerActions`. Empty outside a session.
///
/// The tick before's inputs are state rather than looked up in the session's input history: a
/// rollback restores them with the rest of the world, so a re-simulated tick tells a press from a
/// hold exactly as the first simulation of that tick did.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq, rusting_macros::SimState)]
pub struct PlayerInputs {
    /// By player handle.
    pub players: Vec<PlayerTickInput>,
    /// The tick before's, by player handle (empty before the first tick).
    pub previous: Vec<PlayerTickInput>,
}

impl PlayerInputs {
    /// Player `handle`'s input this tick (no input for a handle the session does not have).
    pub fn of(&self, handle: usize) -> PlayerTickInput {
        self.players.get(handle).copied().unwrap_or_default()
    }

    /// Player `handle`'s input on the tick before (no input before the first tick).
    pub fn before(&self, handle: usize) -> PlayerTickInput {
        self.previous.get(handle).copied().unwrap_or_default()
    }

    /// Makes `players` the inputs of the tick about to run, the current ones those of the tick
    /// before.
    pub fn advance(&mut self, players: Vec<PlayerTickInput>) {
        self.previous = std::mem::replace(&mut self.players, players);
    }
}

/// Which player drives an entity (simulation state). The engine's controllers read
/// `PlayerActions::of(handle)` for it: in a session that player's input, offline the local
/// devices for player 0 and nothing for the others. An entity without a slot is player 0's.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, rusting_macros::SimState)]
pub struct PlayerSlot {
    /// The player handle, from 0.
    pub handle: usize,
}

impl PlayerSlot {
    /// The slot of player `handle`.
    pub fn new(handle: usize) -> Self {
        PlayerSlot { handle }
    }
}

impl PlayerInputs {
    /// Whether a session runs (it holds players): slot entities then read their player's input.
    pub fn in_session(&self) -> bool {
        !self.players.is_empty()
    }
}

impl PlayerTickInput {
    /// Whether the action named `action` in `bindings` is pressed (false for an action not
    /// bound, or past the 32 the form carries).
    pub fn pressed(&self, bindings: &InputBindings, action: &str) -> bool {
        Self::action_bit(bindings, action).is_some_and(|bit| self.actions & bit != 0)
    }

    /// The bit of the action named `action` in `bindings` (`None` for an action not bound, or
    /// past the 32 the form carries).
    pub fn action_bit(bindings: &InputBindings, action: &str) -> Option<u32> {
        bindings
            .actions
            .keys()
            .take(MAX_SESSION_ACTIONS)
            .position(|name| name == action)
            .map(|k| 1 << k)
    }

    /// The axis named `axis` in `bindings`, from -1 to 1 (0 for an axis not bound, or past the
    /// [`MAX_SESSION_AXES`] the form carries).
    pub fn axis(&self, bindings: &InputBindings, axis: &str) -> f32 {
        bindings
            .axes
            .keys()
            .zip(&self.axes)
            .find(|(name, _)| *name == axis)
            .map_or(0.0, |(_, value)| f32::from(*value) / AXIS_STEPS)
    }
}
