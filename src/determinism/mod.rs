//! Determinism tooling: the world-state hash after every tick, and its reports.
//!
//! - `hasher` holds `StateHasher` (XXH3-64 over raw bits);
//! - `sim_state` holds the `SimState` trait (what `#[derive(SimState)]` writes) and its impls for
//!   the building blocks;
//! - `registry` holds `SimRegistry`, the one declaration of every simulation type, and the
//!   `Simulated` marker;
//! - `undeclared` finds state a tick changed that nobody declared;
//! - `hash` holds `world_state_hash`, `StateHashes`, per-entity states and the non-finite check;
//! - `headless` holds `simulate_project_headless`;
//! - `report` holds `StateHashReport` on disk and `compare_reports`;
//! - `compare` holds `compare_runs`, which goes down to the first differing field;
//! - `detail` holds `StateDetail` (one tick's state down to the field) and `compare_details`;
//! - `lockstep` lets `rusting determinism` step a game's headless run tick by tick;
//! - `replay` holds `Replay`, the `Recorder` the engine `App` keeps, and `play_replay`;
//!   `session_replay` holds `SessionReplay`, a multiplayer session's confirmed ticks (every
//!   player's input and the hash), played back without the network;
//! - `snapshot` holds `WorldSnapshot` (simulation entities by `SimId`, registered resources) and
//!   the registry of what it copies; `snapshot_external` the hooks that hold state outside the
//!   ECS (GPU bodies); `seek` holds `ReplaySeeker`;
//!   `synctest` holds `SyncTest`, which rolls back in place and re-simulates every tick;
//! - `host` holds `SimulationHost`, what those tools drive: an engine `App`, or a windowed game's
//!   world and frame stepper.

pub mod compare;
pub mod detail;
pub mod hash;
pub mod hasher;
pub mod headless;
pub mod host;
pub mod lockstep;
pub mod recorder;
pub mod registry;
pub mod replay;
pub mod replay_compact;
pub mod replay_journal;
pub mod report;
pub mod seek;
pub mod session_replay;
pub mod sim_state;
pub mod snapshot;
pub mod snapshot_external;
mod snapshot_store;
pub mod synctest;
pub mod undeclared;

use bevy::app::{App, Plugin};

pub use compare::{Divergence, FieldDifference, compare_runs};
pub use detail::{
    ComponentDetail, DetailDifference, EntityDetail, GpuDetail, StateDetail, compare_details,
};
pub use hash::{
    EntityState, NonFiniteValue, STATE_HASH_HISTORY, StateHashes, entity_states, world_state_hash,
};
pub use hasher::StateHasher;
pub use headless::simulate_project_headless;
pub use host::{SimulationHost, SteppedWorld};
pub use registry::{SimEntry, SimKind, SimRegistry, SimStateAppExt, Simulated};
pub use replay::{PlaybackCursor, Recorder, Replay, ReplayError, ReplayFrame, play_replay};
pub use report::{ReportDifference, ReportError, StateHashReport, compare_reports};
pub use seek::{DEFAULT_SNAPSHOT_INTERVAL, ReplaySeeker, SeekState, snapshot_points};
pub use sim_state::SimState;
pub use snapshot::{SnapshotAppExt, SnapshotError, SnapshotRegistry, WorldSnapshot};
pub use snapshot_external::{ExternalState, ExternalValue, RestoredEntities};
pub use synctest::{SyncTest, SyncTestError, SyncTestRun};
pub use undeclared::{UndeclaredCheck, UndeclaredState};

/// Inserts [`StateHashes`] when the app is built, and registers for snapshots the bevy types that
/// simulation entities share with presentation.
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

        // Copied where they sit on a simulation entity; a camera's `Transform` is none of the
        // snapshot's business. Hash history and scene ids are bookkeeping, copied, never hashed.
        app.insert_resource(StateHashes::default())
            .register_sim_component::<Simulated>()
            .copy_in_snapshots::<StateHashes>()
            .copy_in_snapshots::<crate::scene::SceneId>()
            .copy_in_snapshots::<Name>()
            .copy_in_snapshots::<Transform>()
            .copy_in_snapshots::<GlobalTransform>()
            .copy_in_snapshots::<TransformTreeChanged>()
            // bevy's own bookkeeping, which running a schedule touches: not simulation state.
            .ignore_in_snapshots::<Schedules>()
            .ignore_in_snapshots::<MainScheduleOrder>()
            .ignore_in_snapshots::<FixedMainScheduleOrder>()
            .ignore_in_snapshots::<DefaultQueryFilters>()
            .ignore_in_snapshots::<MessageRegistry>()
            .ignore_in_snapshots::<Messages<bevy::app::AppExit>>()
            .ignore_in_snapshots::<Observer>()
            .ignore_in_snapshots::<AppTypeRegistry>()
            .ignore_in_snapshots::<StaticTransformOptimizations>();
    }
}
