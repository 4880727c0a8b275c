//! [`PlatformerController`]: run, jump with a buffer and coyote time, land.
//!
//! The controlled entity is a dynamic body; the controller sets its horizontal velocity from input
//! and its vertical velocity when it jumps, and leaves falling to gravity and contacts. It is
//! grounded when the physics step of the same tick found it resting on something (a contact whose
//! normal points up into it). Both systems run in `SimSet::Platformer`, so a rollback re-runs
//! them. The hero is driven by its player's input through `PlayerActions` (the entity's
//! `PlayerSlot`, or player 0 without one), by the names of the project's bindings and nothing
//! else: `platformer_jump` buffers a jump on the tick the `jump` action goes down, and
//! `platformer_move` runs from the `move_x` / `move_y` axes. The same system reads the local
//! keys offline and each player's input in a session. This module must never read the frame
//! delta in a fixed system, nor a key by its code.

use bevy::math::Vec3;
use bevy::prelude::{Component, Query, Res};
use serde::{Deserialize, Serialize};

use super::{JUMP_ACTION, MOVE_X_AXIS, MOVE_Y_AXIS};
use crate::physics::{CollisionEvents, LockedAxes, RigidBody};
use crate::runtime::{FrameTime, PlayerActions, PlayerSlot, sim_math};
use crate::state::SimId;

/// Steepest ground that still counts as standing: the cosine of about 45 degrees.
const GROUND_COSINE: f32 = 0.7;

/// Moves a dynamic body like a platformer hero (simulation state).
///
/// Its body never turns: the controller brings `LockedAxes::ROTATION` with it (a scene or game
/// that gives the entity its own `LockedAxes` keeps that instead), so a knock from an enemy or a
/// platform's edge cannot tip the hero over.
#[derive(
    Component, Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState,
)]
#[serde(default, deny_unknown_fields)]
#[require(crate::state::SimId, LockedAxes = LockedAxes::ROTATION)]
pub struct PlatformerController {
    /// Running speed, m/s.
    pub move_speed: f32,
    /// Upward speed a jump starts with, m/s.
    pub jump_speed: f32,
    /// How long a jump press waits for the ground, s.
    pub jump_buffer_time: f32,
    /// How long after leaving a ledge a jump still works, s.
    pub coyote_time: f32,
    /// The body's vertical speed after the last tick, m/s.
    pub vertical_speed: f32,
    /// Whether the body stood on something on the last tick.
    pub grounded: bool,
    /// Seconds a buffered jump press has left (0: none).
    pub jump_buffer: f32,
    /// Seconds since the body last stood on something.
    pub air_time: f32,
    /// Whether the `jump` action was down on the last tick.
    pub jump_held: bool,
    /// Whether the body landed on the last tick (was in the air, now grounded).
    pub landed: bool,
}

impl Default for PlatformerController {
    fn default() -> Self {
        PlatformerController {
            move_speed: 5.0,
            jump_speed: 6.0,
            jump_buffer_time: 0.15,
            coyote_time: 0.1,
            vertical_speed: 0.0,
            grounded: false,
            jump_buffer: 0.0,
            air_time: 0.0,
            jump_held: false,
            landed: false,
        }
    }
}

/// Buffers a jump when the player's `jump` action goes down this tick (runs in
/// `SimSet::Platformer`, before `platformer_move`, so a rollback buffers it again).
pub fn platformer_jump(
    actions: PlayerActions,
    mut players: Query<(&mut PlatformerController, Option<&PlayerSlot>)>,
) {
    for (mut player, slot) in &mut players {
        let input = actions.of(slot.map_or(0, |slot| slot.handle));
        if input.just_pressed(JUMP_ACTION) {
            player.jump_buffer = player.jump_buffer_time;
        }
        let held = input.pressed(JUMP_ACTION);
        if player.jump_held != held {
            player.jump_held = held;
        }
    }
}

/// Runs, jumps and lands (runs in `SimSet::Platformer`). Runs along x from the player's `move_x`
/// axis and along z from its `move_y` axis (forward is -z).
pub fn platformer_move(
    time: Res<FrameTime>,
    actions: PlayerActions,
    contacts: Res<CollisionEvents>,
    mut players: Query<(
        &SimId,
        &mut PlatformerController,
        &mut RigidBody,
        Option<&PlayerSlot>,
    )>,
) {
    let dt = time.fixed_delta;
    for (&sim_id, mut player, mut body, slot) in &mut players {
        let input = actions.of(slot.map_or(0, |slot| slot.handle));
        let run_x = input.axis(MOVE_X_AXIS);
        // `0.0 -` rather than a negation, so no input runs at +0.0 (a -0.0 would hash apart).
        let run_z = 0.0 - input.axis(MOVE_Y_AXIS);
        let grounded =
            contacts.is_supported(sim_id, GROUND_COSINE) && body.linear_velocity.y <= 0.5;
        player.landed = grounded && !player.grounded;
        player.grounded = grounded;
        player.air_time = if grounded { 0.0 } else { player.air_time + dt };
        let mut vertical = body.linear_velocity.y;
        if player.jump_buffer > 0.0 && player.air_time <= player.coyote_time {
            vertical = player.jump_speed;
            player.jump_buffer = 0.0;
            // No second jump from the same ground contact.
            player.air_time = player.coyote_time + dt;
            player.grounded = false;
        } else {
            player.jump_buffer = (player.jump_buffer - dt).max(0.0);
        }
        let mut run = Vec3::new(run_x, 0.0, run_z);
        if sim_math::dot3(run, run) > 1.0 {
            run = sim_math::normalize(run);
        }
        body.linear_velocity = Vec3::new(
            run.x * player.move_speed,
            vertical,
            run.z * player.move_speed,
        );
        player.vertical_speed = vertical;
    }
}
