//! [`TickInput`]: the input as each fixed tick sees it, with what went down and up since the
//! tick before.
//!
//! `RuntimeInput` is written once a frame, and frames do not line up with ticks: a frame can run
//! no tick, or several. So the engine `App` latches every frame's input here before the frame's
//! ticks (keys seen down in any frame since the last tick stay down for the next tick, and look
//! movement adds up), and the first stage of the fixed chain (`SimSet::Input`) turns the latch
//! into this tick's input: `pressed`, and against the tick before, `just_pressed` and
//! `just_released`, once per tick. A tap that starts and ends within frames that run no tick is
//! still seen, by the next tick, and so is every bit of look movement. The resource is simulation
//! state (hashed, snapshotted), so a rollback sees the same presses on the same ticks. This module
//! must never read devices.

use std::collections::BTreeSet;

use bevy::input::keyboard::KeyCode;
use bevy::math::Vec2;
use bevy::prelude::{Res, ResMut, Resource};

use super::RuntimeInput;
use super::input::hash_keys;

/// The input of the tick running now (see the module docs).
#[derive(Resource, Clone, Debug, Default, PartialEq, rusting_macros::SimState)]
pub struct TickInput {
    /// The keys down this tick: held now, or seen down in a frame since the last tick.
    #[sim_state(with = hash_keys)]
    pub pressed: BTreeSet<KeyCode>,
    /// The keys down this tick that were not down the tick before.
    #[sim_state(with = hash_keys)]
    pub just_pressed: BTreeSet<KeyCode>,
    /// The keys down the tick before that are not down this tick.
    #[sim_state(with = hash_keys)]
    pub just_released: BTreeSet<KeyCode>,
    /// Pointer movement since the last tick: every frame's, added up (zero for a frame's second
    /// and later ticks).
    pub look_delta: Vec2,
    /// Keys seen down in the frames since the last tick.
    #[sim_state(with = hash_keys)]
    latched: BTreeSet<KeyCode>,
    /// Look movement of the frames since the last tick.
    latched_look: Vec2,
}

impl TickInput {
    /// Whether `key` is down this tick.
    pub fn is_pressed(&self, key: KeyCode) -> bool {
        self.pressed.contains(&key)
    }

    /// Whether `key` went down this tick.
    pub fn just_pressed(&self, key: KeyCode) -> bool {
        self.just_pressed.contains(&key)
    }

    /// Whether `key` came up this tick.
    pub fn just_released(&self, key: KeyCode) -> bool {
        self.just_released.contains(&key)
    }

    /// Latches a frame's input before the frame's ticks (the engine `App` calls it).
    pub fn latch(&mut self, frame: &RuntimeInput) {
        self.latched.extend(frame.pressed.iter().copied());
        self.latched_look += frame.look_delta;
    }
}

/// Turns the latch into this tick's input (runs in `SimSet::Input`, first in the chain).
pub fn advance_tick_input(frame: Res<RuntimeInput>, mut tick: ResMut<TickInput>) {
    let tick = &mut *tick;
    let mut now: BTreeSet<KeyCode> = frame.pressed.clone();
    now.extend(std::mem::take(&mut tick.latched));
    tick.just_pressed = now.difference(&tick.pressed).copied().collect();
    tick.just_released = tick.pressed.difference(&now).copied().collect();
    tick.pressed = now;
    tick.look_delta = std::mem::take(&mut tick.latched_look);
}
