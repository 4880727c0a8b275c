//! Gameplay components and their fixed systems, one file each.
//!
//! Every system here runs in `FixedUpdate`, in its `SimSet`, takes `FrameTime::fixed_delta` and
//! nothing of the frame, and does its math through `sim_math` or plain IEEE operations in a fixed
//! order. [`GameplayPlugin`] wires them up.

pub mod pickup;
pub mod player;
pub mod tween;

use bevy::app::{App, FixedUpdate, Plugin, Update};
use bevy::prelude::IntoScheduleConfigs;

pub use pickup::{Counter, Pickup, collect_pickups};
pub use player::{PlayerController, player_look, player_move};
pub use tween::{Easing, Tween, TweenMode, advance_tweens};

use crate::runtime::SimSet;

/// The gameplay systems, each in its place in the fixed chain.
#[derive(Clone, Debug, Default)]
pub struct GameplayPlugin;

impl Plugin for GameplayPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(
            FixedUpdate,
            (
                player_move.in_set(SimSet::Player),
                collect_pickups.in_set(SimSet::Pickups),
                advance_tweens.in_set(SimSet::Tweens),
            ),
        )
        .add_systems(Update, player_look);
    }
}
