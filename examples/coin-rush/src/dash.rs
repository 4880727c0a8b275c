//! The dash: a short burst of speed on the `dash` action, from the ground only, then a cooldown.

use bevy::prelude::*;
use rusting_engine::physics::Shape;
use rusting_engine::physics::query::{QueryFilter, Ray, SpatialQuery};
use rusting_engine::prelude::*;

// ANCHOR: action
/// The game's input actions, bound to keys in `rusting.json`.
pub enum Action {
    /// A short burst of speed.
    Dash,
}

impl ActionName for Action {
    fn action_name(&self) -> &str {
        match self {
            Action::Dash => "dash",
        }
    }
}
// ANCHOR_END: action

// ANCHOR: component
/// Lets a platformer dash (simulation state, written in the scene).
#[derive(Component, Clone, Debug, PartialEq, serde::Deserialize, SimState)]
pub struct Dash {
    /// Running speed during a dash, m/s.
    pub speed: f32,
    /// How many ticks a dash lasts.
    pub ticks: u32,
    /// Ticks from the start of one dash until the next may start.
    pub cooldown_ticks: u32,
    /// Ticks left of the dash under way (0: not dashing).
    #[serde(default)]
    pub ticks_left: u32,
    /// Ticks until the next dash may start.
    #[serde(default)]
    pub cooldown_left: u32,
    /// The running speed to go back to when the dash ends.
    #[serde(default)]
    pub run_speed: f32,
}
// ANCHOR_END: component

// ANCHOR: system
/// What the dash reads and changes of a hero: where it is, its shape, its dash and controller, and
/// the player who drives it (none: player 0).
type Dasher = (
    &'static SimId,
    &'static Transform,
    &'static Collider,
    &'static mut Dash,
    &'static mut PlatformerController,
    Option<&'static PlayerSlot>,
);

/// Starts a dash on the tick the `dash` action goes down, if the player stands on something, and
/// ends it `ticks` later.
pub fn dash(actions: PlayerActions, world: SpatialQuery, mut players: Query<Dasher>) {
    for (id, at, collider, mut dash, mut controller, slot) in &mut players {
        // The player who drives this hero: its slot's, or player 0 (the local player offline).
        let pressed = actions
            .of(slot.map_or(0, |slot| slot.handle))
            .just_pressed(Action::Dash);
        dash.cooldown_left = dash.cooldown_left.saturating_sub(1);
        if dash.ticks_left > 0 {
            dash.ticks_left -= 1;
            if dash.ticks_left == 0 {
                controller.move_speed = dash.run_speed;
            }
        } else if pressed && dash.cooldown_left == 0 && on_ground(&world, *id, at, collider) {
            dash.run_speed = controller.move_speed;
            controller.move_speed = dash.speed;
            dash.ticks_left = dash.ticks;
            dash.cooldown_left = dash.cooldown_ticks;
        }
    }
}
// ANCHOR_END: system

// ANCHOR: ground
/// How far below the player's feet the ground may be for it to count as standing, in metres.
const GROUND_REACH: f32 = 0.1;

/// Whether a ray straight down from the player's centre meets another collider within
/// `GROUND_REACH` of its feet.
fn on_ground(world: &SpatialQuery, player: SimId, at: &Transform, collider: &Collider) -> bool {
    let feet = match collider.shape {
        Shape::Capsule {
            half_height,
            radius,
        } => half_height + radius,
        Shape::Sphere { radius } => radius,
        Shape::Box { half_extents } => half_extents.y,
        _ => 0.0,
    };
    let down = Ray::new(at.translation, Vec3::NEG_Y, feet + GROUND_REACH);
    let others = QueryFilter::default().excluding(player);
    matches!(world.cast_ray(&down, &others), Ok(Some(_)))
}
// ANCHOR_END: ground
