//! Gameplay components and their fixed systems, one file each.
//!
//! Every system here runs in `FixedUpdate`, in its `SimSet`, takes `FrameTime::fixed_delta` and
//! nothing of the frame, and does its math through `sim_math` or plain IEEE operations in a fixed
//! order. [`GameplayPlugin`] wires them up.

pub mod tween;

use bevy::app::{App, FixedUpdate, Plugin};
use bevy::prelude::IntoScheduleConfigs;

pub use tween::{Easing, Tween, TweenMode, advance_tweens};

use crate::runtime::SimSet;

/// The gameplay systems, each in its place in the fixed chain.
#[derive(Clone, Debug, Default)]
pub struct GameplayPlugin;

impl Plugin for GameplayPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(FixedUpdate, advance_tweens.in_set(SimSet::Tweens));
    }
}
