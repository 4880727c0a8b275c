//! The game's plugin: its state, what scenes may hold, and where its systems run in the fixed
//! chain.

use bevy::prelude::*;
use rusting_engine::gameplay::{platformer_jump, platformer_move};
use rusting_engine::prelude::*;

use crate::coins::{Coin, CoinSpawner, collect_coins, expire_coins, spawn_coins};
use crate::dash::{Dash, dash};

// ANCHOR: score
/// The player's score: the game's own simulation state, hashed after every tick, rolled back by
/// snapshots and compared field by field by `rusting determinism`.
#[derive(Resource, Clone, Debug, Default, PartialEq, SimState)]
pub struct Score {
    /// Points from the coins picked up.
    pub points: u32,
    /// Coins picked up.
    pub collected: u32,
    /// Coins that vanished before anyone picked them up.
    pub missed: u32,
}
// ANCHOR_END: score

// ANCHOR: plugin
/// Coin Rush's systems and state.
pub struct CoinRush;

impl Plugin for CoinRush {
    fn build(&self, app: &mut bevy::app::App) {
        // State: inserted when the app is built, registered so the engine hashes, snapshots
        // and compares it.
        app.insert_resource(Score::default())
            .register_sim_resource::<Score>()
            .register_sim_component::<Coin>()
            // Components the scene file may hold, by their type names.
            .register_scene_component::<CoinSpawner>()
            .register_scene_component::<Dash>();
        // The dash sets the run speed before the platformer moves the player with it. Both
        // platformer systems write `PlatformerController` too, so the dash takes its place
        // between them: unordered writers of the same data are refused when the app starts.
        app.add_systems(
            FixedUpdate,
            dash.in_set(SimSet::Platformer)
                .after(platformer_jump)
                .before(platformer_move),
        );
        // After the physics step, so this tick's touches are known; in this order, so a coin
        // picked up on its last tick counts as picked up, and a new coin waits for the next step.
        app.add_systems(
            FixedUpdate,
            (collect_coins, expire_coins, spawn_coins)
                .chain()
                .in_set(SimSet::ContactTriggers),
        );
    }
}
// ANCHOR_END: plugin
