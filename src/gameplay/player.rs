//! [`PlayerController`]: walking relative to where the player looks.
//!
//! `player_look` runs in `Update`, once per frame: it turns the yaw by the frame's look delta, a
//! simulation value written from input (replays record its effect). `player_move` runs in the fixed
//! chain (`SimSet::Player`): it reads the held keys or the `move_x` / `move_y` axes, turns them by
//! the yaw with `sim_math::sin_cos`, and sets the body's horizontal velocity, leaving the vertical
//! to gravity and contacts. This module must never read the frame delta in a fixed system.

use bevy::input::keyboard::KeyCode;
use bevy::math::Vec3;
use bevy::prelude::{Component, Query, Res};
use serde::{Deserialize, Serialize};

use crate::physics::{LockedAxes, RigidBody};
use crate::runtime::{RuntimeInput, TickInput, sim_math};

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

/// The wished direction in the player's own frame: `x` right, `y` forward, each in `[-1, 1]`.
fn wish(input: &RuntimeInput) -> (f32, f32) {
    let key = |k: KeyCode| if input.is_pressed(k) { 1.0 } else { 0.0 };
    let right = key(KeyCode::KeyD) - key(KeyCode::KeyA) + input.axis("move_x");
    let forward = key(KeyCode::KeyW) - key(KeyCode::KeyS) + input.axis("move_y");
    (right.clamp(-1.0, 1.0), forward.clamp(-1.0, 1.0))
}

/// Turns players by the look movement since the last tick (runs in `SimSet::Player`, before
/// `player_move`, so a rollback turns them again).
pub fn player_look(input: Res<TickInput>, mut players: Query<&mut PlayerController>) {
    if input.look_delta.x == 0.0 {
        return;
    }
    for mut player in &mut players {
        let turned = player.yaw - input.look_delta.x * player.look_sensitivity;
        // Keep the yaw in [-pi, pi] so it never grows past sin_cos's accurate range.
        let turns = ((turned + sim_math::PI) * (0.5 / sim_math::PI)).floor();
        player.yaw = turned - turns * (2.0 * sim_math::PI);
    }
}

/// Sets each player's horizontal velocity from input and yaw (runs in `SimSet::Player`).
pub fn player_move(
    input: Res<RuntimeInput>,
    mut players: Query<(&PlayerController, &mut RigidBody)>,
) {
    let (right, forward) = wish(&input);
    for (player, mut body) in &mut players {
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
