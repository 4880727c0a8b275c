//! [`SnapshotError`]: why a snapshot cannot be taken or restored. Its own file because both the
//! snapshot and the hooks for state outside the ECS (`snapshot_external`) return it.
//!
//! This module must never do anything but describe the error.

use bevy::ecs::entity::Entity;

use super::sim_id::SimId;

/// Why a snapshot cannot be taken or restored.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// A simulation entity holds a component type that is neither registered nor ignored.
    #[error(
        "`{type_name}` on simulation entity {entity} is not registered for snapshots: register \
         it with `register_sim_component` (hashed and rolled back), \
         `register_presentation_component` (rolled back, never hashed) or `ignore_in_snapshots`"
    )]
    Unregistered {
        /// The type's name.
        type_name: String,
        /// The entity holding it.
        entity: SimId,
    },
    /// Two entities hold the same `SimId` (one was copied or given an id by hand).
    #[error(
        "entities {first} and {second} both hold simulation id {id}: a `SimId` must never be \
         copied or written by hand"
    )]
    DuplicateSimId {
        /// The id.
        id: SimId,
        /// One entity holding it.
        first: Entity,
        /// The other.
        second: Entity,
    },
    /// Simulation state outside the ECS (see [`SnapshotRegistry::hold_external`]) could not be
    /// copied out or put back.
    #[error("the {what} could not be {action}: {reason}")]
    External {
        /// What the state is.
        what: &'static str,
        /// "captured" or "restored".
        action: &'static str,
        /// Why (a device error, for GPU bodies).
        reason: String,
    },
    /// The snapshot was taken in a game whose simulation state has another layout (a field
    /// added, renamed or retyped, a type registered or not, another target).
    #[error(
        "cannot restore the snapshot of tick {tick} into this app: its state has another layout: \
         {difference}"
    )]
    Layout {
        /// The snapshot's tick.
        tick: u64,
        /// The first type or field that differs.
        difference: String,
    },
    /// The app to restore into was not built the same way.
    #[error("cannot restore the snapshot of tick {tick} into this app: {reason}")]
    Incompatible {
        /// The snapshot's tick.
        tick: u64,
        /// What does not match.
        reason: String,
    },
}
