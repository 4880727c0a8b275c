//! Gameplay components and their fixed systems, one file each.
//!
//! Every system here runs in `FixedUpdate`, in its `SimSet`, takes `FrameTime::fixed_delta` and
//! nothing of the frame, and does its math through `sim_math` or plain IEEE operations in a fixed
//! order. [`GameplayPlugin`] wires them up.

pub mod burst;
pub mod debug_lines;
pub mod hud;
pub mod pickup;
pub mod platformer;
pub mod player;
pub mod seating;
pub mod sound;
pub mod tween;

use bevy::app::{App, FixedFirst, FixedUpdate, Plugin, PostStartup, Update};
use bevy::prelude::IntoScheduleConfigs;

pub use burst::{
    BurstEmitter, BurstParticle, MAX_BURST_PARTICLES, spawn_bursts, update_burst_particles,
};
pub use debug_lines::{
    DebugColor, DebugDraw, DebugLine, DebugLines, DebugView, MAX_DEBUG_LINES, clear_debug_lines,
    draw_debug_view,
};
pub use hud::{HudElement, refresh_hud};
pub use pickup::{Counter, Pickup, collect_pickups};
pub use platformer::{PlatformerController, platformer_jump, platformer_move};
pub use player::{PlayerController, player_look, player_move};
pub use seating::{seat_players, unseated_players};
pub use sound::{SoundEvent, SoundEvents, SoundQueue, queue_sound_cues, raise_sound_cues};
pub use tween::{Easing, Tween, TweenMode, advance_tweens};

use crate::runtime::SimSet;
use crate::state::{SimStateAppExt, SnapshotAppExt};

/// The action the engine's platformer hero jumps with, by its name in `rusting.json`'s bindings.
pub const JUMP_ACTION: &str = "jump";

/// The axis the engine's controllers move right with (+1 right, -1 left).
pub const MOVE_X_AXIS: &str = "move_x";

/// The axis the engine's controllers move forward with (+1 forward, -1 back).
pub const MOVE_Y_AXIS: &str = "move_y";

/// The gameplay systems, each in its place in the fixed chain.
#[derive(Clone, Debug, Default)]
pub struct GameplayPlugin;

impl Plugin for GameplayPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(SoundEvents::default())
            .insert_resource(SoundQueue::default())
            .register_sim_component::<PlayerController>()
            .register_sim_component::<PlatformerController>()
            .register_sim_component::<crate::runtime::PlayerSlot>()
            .register_sim_component::<Tween>()
            .register_sim_component::<Pickup>()
            .register_sim_component::<Counter>()
            .register_sim_component::<BurstEmitter>()
            // Presentation that fixed systems move and despawn: rolled back, never hashed.
            .register_presentation_component::<BurstParticle>("BurstParticle")
            .copy_in_snapshots::<SoundEvents>()
            .copy_in_snapshots::<HudElement>()
            // What the last tick drew for a developer to see: never rolled back or hashed.
            .insert_resource(DebugLines::default())
            .insert_resource(DebugView::default())
            .ignore_in_snapshots::<DebugLines>()
            // After the game's own startup systems, so a game that seats its players keeps them.
            .add_systems(PostStartup, seat_players)
            .add_systems(FixedFirst, clear_debug_lines)
            .add_systems(
                FixedUpdate,
                (
                    (player_look, player_move).chain().in_set(SimSet::Player),
                    (platformer_jump, platformer_move)
                        .chain()
                        .in_set(SimSet::Platformer),
                    collect_pickups.in_set(SimSet::Pickups),
                    raise_sound_cues.in_set(SimSet::SoundCues),
                    update_burst_particles.in_set(SimSet::BurstParticles),
                    spawn_bursts.in_set(SimSet::NewBursts),
                    advance_tweens.in_set(SimSet::Tweens),
                    // Reads the tick's final state and writes only its own line buffer: no
                    // order among the game's systems after the chain changes what it draws
                    // into the simulation, so it takes none.
                    draw_debug_view.after(SimSet::Tweens).ambiguous_with_all(),
                ),
            )
            .add_systems(Update, refresh_hud);
    }
}
