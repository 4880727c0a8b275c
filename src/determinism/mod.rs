//! Determinism tooling: the world-state hash after every tick, and its reports.
//!
//! - `hasher` holds `StateHasher` (XXH3-64 over raw bits) and the `StateHash` trait;
//! - `impls` implements `StateHash` for every simulation component and resource;
//! - `hash` holds `world_state_hash`, `StateHashes`, per-entity states and the non-finite check;
//! - `headless` holds `simulate_project_headless`;
//! - `report` holds `StateHashReport` on disk and `compare_reports`;
//! - `compare` holds `compare_runs`, which goes down to the first differing field;
//! - `replay` holds `Replay`, the `Recorder` the engine `App` keeps, and `play_replay`;
//! - `snapshot` holds `WorldSnapshot` (simulation entities by `SimId`, registered resources) and
//!   the registry of what it copies; `seek` holds `ReplaySeeker`;
//!   `synctest` holds `SyncTest`, which rolls back in place and re-simulates every tick.

pub mod compare;
pub mod hash;
pub mod hasher;
pub mod headless;
pub mod impls;
pub mod replay;
pub mod replay_compact;
pub mod report;
pub mod seek;
pub mod snapshot;
pub mod synctest;

use bevy::app::{App, Plugin};

pub use compare::{Divergence, FieldDifference, compare_runs};
pub use hash::{
    EntityState, NonFiniteValue, STATE_HASH_HISTORY, StateHashes, entity_states, world_state_hash,
};
pub use hasher::{StateHash, StateHasher};
pub use headless::simulate_project_headless;
pub use replay::{PlaybackCursor, Recorder, Replay, ReplayError, ReplayFrame, play_replay};
pub use report::{ReportDifference, ReportError, StateHashReport, compare_reports};
pub use seek::ReplaySeeker;
pub use snapshot::{SnapshotAppExt, SnapshotError, SnapshotRegistry, WorldSnapshot};
pub use synctest::{SyncTest, SyncTestError};

/// Inserts [`StateHashes`] when the app is built, and registers for snapshots the bevy types that
/// simulation entities share with presentation.
#[derive(Clone, Debug, Default)]
pub struct DeterminismPlugin;

impl Plugin for DeterminismPlugin {
    fn build(&self, app: &mut App) {
        use bevy::prelude::{GlobalTransform, Name, Transform};
        use bevy::transform::components::TransformTreeChanged;

        // Copied where they sit on a simulation entity; a camera's `Transform` is none of the
        // snapshot's business.
        app.insert_resource(StateHashes::default())
            .register_snapshot_component::<StateHashes>()
            .register_snapshot_component::<crate::scene::SceneId>()
            .copy_in_snapshots::<Name>()
            .copy_in_snapshots::<Transform>()
            .copy_in_snapshots::<GlobalTransform>()
            .copy_in_snapshots::<TransformTreeChanged>();
    }
}
