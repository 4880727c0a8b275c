//! Determinism tooling: the world-state hash after every tick, and its reports.
//!
//! - `hasher` holds `StateHasher` (XXH3-64 over raw bits) and the `StateHash` trait;
//! - `impls` implements `StateHash` for every simulation component and resource;
//! - `hash` holds `world_state_hash`, `StateHashes`, per-entity states and the non-finite check;
//! - `headless` holds `simulate_project_headless`;
//! - `report` holds `StateHashReport` on disk and `compare_reports`;
//! - `compare` holds `compare_runs`, which goes down to the first differing field;
//! - `replay` holds `Replay`, the `Recorder` the engine `App` keeps, and `play_replay`;
//! - `snapshot` holds `WorldSnapshot` and the registry of what it copies; `allocator` reads and
//!   rebuilds bevy's entity allocator for it; `seek` holds `ReplaySeeker`;
//!   `synctest` holds `SyncTest`, which rolls back and re-simulates every tick.

pub mod allocator;
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

/// Inserts [`StateHashes`] when the app is built, and registers for snapshots the bevy types every
/// engine app holds.
#[derive(Clone, Debug, Default)]
pub struct DeterminismPlugin;

impl Plugin for DeterminismPlugin {
    fn build(&self, app: &mut App) {
        use bevy::app::{FixedMainScheduleOrder, MainScheduleOrder};
        use bevy::ecs::entity_disabling::DefaultQueryFilters;
        use bevy::ecs::message::{MessageRegistry, Messages};
        use bevy::ecs::observer::Observer;
        use bevy::ecs::reflect::AppTypeRegistry;
        use bevy::ecs::schedule::Schedules;
        use bevy::prelude::{GlobalTransform, Name, Transform};
        use bevy::transform::components::TransformTreeChanged;
        use bevy::transform::systems::StaticTransformOptimizations;

        app.insert_resource(StateHashes::default())
            .register_snapshot_component::<StateHashes>()
            .register_snapshot_component::<crate::scene::SceneId>()
            .register_snapshot_component::<Name>()
            .register_snapshot_component::<Transform>()
            .register_snapshot_component::<GlobalTransform>()
            .register_snapshot_component::<TransformTreeChanged>()
            // Set up once and never changed by a tick, or cleared every frame.
            .ignore_in_snapshots::<StaticTransformOptimizations>()
            .ignore_in_snapshots::<Schedules>()
            .ignore_in_snapshots::<MainScheduleOrder>()
            .ignore_in_snapshots::<FixedMainScheduleOrder>()
            .ignore_in_snapshots::<DefaultQueryFilters>()
            .ignore_in_snapshots::<MessageRegistry>()
            .ignore_in_snapshots::<Messages<bevy::app::AppExit>>()
            .ignore_in_snapshots::<Observer>()
            .ignore_in_snapshots::<AppTypeRegistry>();
        // Transform propagation's private check that a parent has a `GlobalTransform`.
        app.world_mut()
            .get_resource_or_init::<SnapshotRegistry>()
            .ignore_by_name(
                "bevy_ecs::message::messages::Messages<bevy_app::hierarchy::\
                 CheckParentHasComponent<bevy_transform::components::global_transform::\
                 GlobalTransform>>",
            );
    }
}
