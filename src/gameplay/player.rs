//! [`PlayerController`]: walking relative to where the player looks.
//!
//! Both systems run in the fixed chain (`SimSet::Player`) and read the player's input through
//! `PlayerActions` (the entity's `PlayerSlot`, or player 0 without one), so the same controller
//! walks from the local keys offline and from each player's input in a session. `player_look`
//! turns the yaw by the tick's look movement; `player_move` reads the `move_x` / `move_y` axes
//! of the project's bindings (no key of its own), turns them by the yaw with `sim_math::sin_cos`,
//! and sets the body's horizontal velocity, leaving the vertical to gravity and contacts. This
//! module must never read the frame delta in a fixed system.

use bevy::math::Vec3;
use bevy::prelude::{Component, Query};
use serde::{Deserialize, Serialize};

use super::{MOVE_X_AXIS, MOVE_Y_AXIS};
use crate::physics::{LockedAxes, RigidBody};
use crate::runtime::{PlayerActions, PlayerSlot, sim_math};

/// Walks a dynamic body with input (simulation state).
///
/// Its body never turns (the heading is `yaw`, not the body's rotation): the controller brings
/// `LockedAxes::ROTATION` with it, unless the entity has its own `LockedAxes`.
#[derive(
    Component, Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState,
)]
#[serde(default, deny_unknown_fields)]
#[require(crate::state::SimId, LockedAxes = LockedAxes::ROTATION)]
pub struct PlayerController {
    /// Walking speed, m/s.
    pub speed: f32,
    /// Heading in radians about +Y; 0 looks along -Z.
    pub yaw: f32,
    /// Radians of yaw per logical pixel of look movement.
    pub look_sensitivity: f32,
}

impl Default for PlayerController {
    fn default() -> Self {
        PlayerController {
            speed: 4.0,
            yaw: 0.0,
            look_sensitivity: 0.003,
        }
    }
}

/// Turns players by their look movement this tick (runs in `SimSet::Player`, before
/// `player_move`, so a rollback turns them again).
pub fn player_look(
    actions: PlayerActions,
    mut players: Query<(&mut PlayerController, Option<&PlayerSlot>)>,
) {
    for (mut player, slot) in &mut players {
        let look = actions.of(slot.map_or(0, |slot| slot.handle)).look();
        if look.x == 0.0 {
            continue;
        }
        let turned = player.yaw - look.x * player.look_sensitivity;
        // Keep the yaw in [-pi, pi] so it never grows past sin_cos's accurate range.
        let turns = ((turned + sim_math::PI) * (0.5 / sim_math::PI)).floor();
        player.yaw = turned - turns * (2.0 * sim_math::PI);
    }
}

/// Sets each player's horizontal velocity from its `move_x` (right) and `move_y` (forward) axes
/// and its yaw (runs in `SimSet::Player`).
pub fn player_move(
    actions: PlayerActions,
    mut players: Query<(&PlayerController, &mut RigidBody, Option<&PlayerSlot>)>,
) {
    for (player, mut body, slot) in &mut players {
        let input = actions.of(slot.map_or(0, |slot| slot.handle));
        let (right, forward) = (input.axis(MOVE_X_AXIS), input.axis(MOVE_Y_AXIS));
        let (sin, cos) = sim_math::sin_cos(player.yaw);
        // Forward is -Z turned by the yaw; right is +X turned by it.
        let forward_dir = Vec3::new(-sin, 0.0, -cos);
        let right_dir = Vec3::new(cos, 0.0, -sin);
        let mut direction = forward_dir * forward + right_dir * right;
        if sim_math::dot3(direction, direction) > 1.0 {
            direction = sim_math::normalize(direction);
        }
        let velocity = direction * player.speed;
        body.linear_velocity = Vec3::new(velocity.x, body.linear_velocity.y, velocity.z);
    }
}
