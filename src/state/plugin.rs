//! [`StatePlugin`]: the state layer's wiring into an app.
//!
//! This module must never register a type of a layer above `state`: each domain registers its
//! own types in its own plugin.

use bevy::app::{App, Plugin};

use super::hash::StateHashes;
use super::registration::{SimStateAppExt, SnapshotAppExt};
use super::registry::Simulated;
use super::scene_id::SceneId;

/// Inserts [`StateHashes`] when the app is built, and registers for snapshots the bevy types that
/// simulation entities share with presentation.
#[derive(Clone, Debug, Default)]
pub struct StatePlugin;

impl Plugin for StatePlugin {
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
            .copy_in_snapshots::<SceneId>()
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
