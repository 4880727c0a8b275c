//! The starter game's own systems, on top of what the engine and its scene provide.

use bevy::prelude::*;
use rusting_engine::gameplay::{PlatformerController, advance_tweens, platformer_move};
use rusting_engine::prelude::*;

/// Where a player who falls off the course comes back.
const RESPAWN: Vec3 = Vec3::new(0.0, 0.9, 0.0);

/// Below this height a player has fallen off the course.
const FALL_LIMIT: f32 = -20.0;

/// How many times the player fell off the course: the game's own simulation state. One derive
/// and one registration make it hashed after every tick, rolled back by snapshots and compared
/// down to the field by `rusting determinism`.
#[derive(Resource, Clone, Debug, Default, PartialEq, SimState)]
pub struct Falls {
    /// Falls so far.
    pub count: u32,
}

/// Turns an entity about the vertical axis: the game's own component, written in its scene file
/// (`"Spin": {"radians_per_second": 2.0}` on the gem) and loaded into the entity when the app
/// starts, because it is registered with `register_scene_component`.
#[derive(Component, Clone, Debug, PartialEq, serde::Deserialize, SimState)]
pub struct Spin {
    /// How fast it turns.
    pub radians_per_second: f32,
}

/// The starter game's systems.
pub struct StarterGame;

impl Plugin for StarterGame {
    fn build(&self, app: &mut bevy::app::App) {
        // Resources are inserted when the app is built, never during a run.
        app.insert_resource(Falls::default())
            .register_sim_resource::<Falls>()
            .register_scene_component::<Spin>();
        // In the engine's last stage, after its tweens: a game system ordered after
        // `SimSet::Tweens` then runs after this one too.
        app.add_systems(
            FixedUpdate,
            spin.in_set(SimSet::Tweens).after(advance_tweens),
        );
        // Game systems take their place in the engine's fixed chain and order themselves against
        // the engine systems that touch the same data.
        app.add_systems(
            FixedUpdate,
            respawn_fallen_players
                .in_set(SimSet::Platformer)
                .after(platformer_move),
        );
    }
}

/// Turns every `Spin` entity by its rate for one tick, with `sim_math` (the same bits everywhere).
fn spin(time: Res<FrameTime>, mut spinning: Query<(&Spin, &mut Transform)>) {
    for (spin, mut transform) in &mut spinning {
        let (sin, cos) = sim_math::sin_cos(0.5 * spin.radians_per_second * time.fixed_delta);
        let step = Quat::from_xyzw(0.0, sin, 0.0, cos);
        transform.rotation = sim_math::quat_normalize(sim_math::quat_mul(step, transform.rotation));
    }
}

/// Puts a player who fell off the course back at the start, at rest.
fn respawn_fallen_players(
    mut players: Query<(&mut Transform, &mut RigidBody), With<PlatformerController>>,
    mut falls: ResMut<Falls>,
) {
    for (mut transform, mut body) in &mut players {
        if transform.translation.y < FALL_LIMIT {
            falls.count += 1;
            transform.translation = RESPAWN;
            transform.rotation = Quat::IDENTITY;
            body.linear_velocity = Vec3::ZERO;
            body.angular_velocity = Vec3::ZERO;
        }
    }
}
