//! [`ExternalState`]: simulation state that lives outside the `World`'s entities (a device's
//! buffers, a non-send resource) and that snapshots hold through hooks its owner registers.
//!
//! A snapshot's ECS part is generic: components and resources are copied with `Clone`. State the
//! ECS cannot see needs its owner to say how to copy it out and how to put it back. The owner
//! registers an [`ExternalState`] with [`SnapshotRegistry::hold_external`]; a capture calls every
//! hook's `capture` first (so a hook may finish pending work that writes ECS state, such as
//! simulating queued GPU ticks that record their hashes), then copies the ECS; a restore puts the
//! ECS back first, then calls every hook's `restore` with the entities the restore matched, so
//! the external state can name the entities its bodies now belong to.
//!
//! This module owns the hook type, the value a hook returns and the entity map a restore hands
//! it. It must never know what any hook's state is.
//!
//! [`SnapshotRegistry::hold_external`]: super::SnapshotRegistry::hold_external

use std::any::Any;

use bevy::ecs::entity::{Entity, EntityHashMap};
use bevy::prelude::World;

use super::snapshot_error::SnapshotError;

/// What a hook copied out of a world: its own type, which only its `restore` reads.
pub type ExternalValue = Box<dyn Any + Send + Sync>;

/// Copies the state out of a world (finishing any pending work first); `None` when the world
/// holds none of it right now.
pub type ExternalCapture = fn(&mut World) -> Result<Option<ExternalValue>, SnapshotError>;

/// Puts a captured state back into a world whose ECS state the snapshot has just restored; `None`
/// when the snapshot's world held none of it, which the hook must make true of this world too.
pub type ExternalRestore =
    fn(&mut World, Option<&ExternalValue>, &RestoredEntities) -> Result<(), SnapshotError>;

/// Simulation state outside the ECS that snapshots hold (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct ExternalState {
    /// What the state is, for errors ("GPU physics bodies"); one name per registration.
    pub what: &'static str,
    /// Copies it out.
    pub capture: ExternalCapture,
    /// Puts it back.
    pub restore: ExternalRestore,
}

/// The entities a restore matched: each simulation entity of the snapshot's world with the
/// entity that holds its `SimId` now.
#[derive(Debug)]
pub struct RestoredEntities<'a> {
    map: &'a EntityHashMap<Entity>,
}

impl<'a> RestoredEntities<'a> {
    pub(super) fn new(map: &'a EntityHashMap<Entity>) -> Self {
        RestoredEntities { map }
    }

    /// The entity that now holds what `entity` held in the snapshot's world; an entity the
    /// snapshot did not hold (not a simulation entity) is returned as it is, as bevy's entity
    /// mapping does.
    pub fn get(&self, entity: Entity) -> Entity {
        self.map.get(&entity).copied().unwrap_or(entity)
    }
}

/// Every hook's state, in registration order, by name.
pub(super) type ExternalValues = Vec<(&'static str, Option<ExternalValue>)>;

/// Runs every hook's capture.
pub(super) fn capture_all(
    hooks: &[ExternalState],
    world: &mut World,
) -> Result<ExternalValues, SnapshotError> {
    hooks
        .iter()
        .map(|hook| Ok((hook.what, (hook.capture)(world)?)))
        .collect()
}

/// The snapshot's value for each of `hooks`, in order; an error when the snapshot lacks one (it
/// was taken in an app built another way). Called before a restore changes anything.
pub(super) fn match_hooks<'v>(
    hooks: &[ExternalState],
    values: &'v ExternalValues,
) -> Result<Vec<Option<&'v ExternalValue>>, String> {
    hooks
        .iter()
        .map(|hook| {
            values
                .iter()
                .find(|(what, _)| *what == hook.what)
                .map(|(_, value)| value.as_ref())
                .ok_or_else(|| {
                    format!(
                        "the snapshot does not hold its {} (it was taken in an app built another \
                         way)",
                        hook.what
                    )
                })
        })
        .collect()
}

/// Runs every hook's restore with its value.
pub(super) fn restore_all(
    hooks: &[ExternalState],
    values: &[Option<&ExternalValue>],
    world: &mut World,
    entities: &RestoredEntities,
) -> Result<(), SnapshotError> {
    for (hook, value) in hooks.iter().zip(values) {
        (hook.restore)(world, *value, entities)?;
    }
    Ok(())
}
