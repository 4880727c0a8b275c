//! Determinism tooling: the world-state hash after every tick, and its reports.
//!
//! - `hasher` holds `StateHasher` (XXH3-64 over raw bits) and the `StateHash` trait;
//! - `impls` implements `StateHash` for every simulation component and resource;
//! - `hash` holds `world_state_hash`, `StateHashes`, per-entity states and the non-finite check;
//! - `headless` holds `simulate_project_headless`;
//! - `report` holds `StateHashReport` on disk and `compare_reports`;
//! - `compare` holds `compare_runs`, which goes down to the first differing field;
//! - `replay` holds `Replay`, the `Recorder` the engine `App` keeps, and `play_replay`.

pub mod compare;
pub mod hash;
pub mod hasher;
pub mod headless;
pub mod impls;
pub mod replay;
pub mod replay_compact;
pub mod report;

use bevy::app::{App, Plugin};

pub use compare::{Divergence, FieldDifference, compare_runs};
pub use hash::{
    EntityState, NonFiniteValue, STATE_HASH_HISTORY, StateHashes, entity_states, world_state_hash,
};
pub use hasher::{StateHash, StateHasher};
pub use headless::simulate_project_headless;
pub use replay::{Recorder, Replay, ReplayError, ReplayFrame, play_replay};
pub use report::{ReportDifference, ReportError, StateHashReport, compare_reports};

/// Inserts [`StateHashes`] when the app is built.
#[derive(Clone, Debug, Default)]
pub struct DeterminismPlugin;

impl Plugin for DeterminismPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(StateHashes::default());
    }
}
