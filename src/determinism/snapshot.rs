//! [`WorldSnapshot`]: a copy of every entity, resources included, and of the entity allocator,
//! that can be put back into an app built the same way.
//!
//! What a snapshot holds:
//! - every spawned entity, at its id and generation, with a `Clone` of each component whose type
//!   is registered with [`SnapshotRegistry::register`] (resources are components of resource
//!   entities in bevy 0.19, so they are covered the same way);
//! - the generation of every entity index ever handed out, so that an id freed before the
//!   snapshot comes back with the same generation;
//! - the allocator's free lists and fresh cursor ([`AllocatorState`]), so that later spawns get the
//!   same ids, and with them the same hashes.
//!
//! Every component type in the world must be either registered (copied with `Clone`) or ignored
//! (the restored app keeps what it has: caches, handles to outside state, values fixed at setup).
//! Any other type fails the snapshot with [`SnapshotError::Unregistered`], because silently leaving
//! state behind is how a rollback or a seek diverges without a clue.
//!
//! Restoring works on an app "built the same way" that has not run past the snapshot: its entity
//! generations may only be behind the snapshot's (bevy can only move a generation forward, one
//! despawn at a time), and it must hold the same resource entities at the same ids. Restored
//! values count as unchanged for change detection, and restored entities sit in a different table
//! order than the original ones, so game systems that depend on query order rather than sorting by
//! `Entity` can diverge after a restore (the per-tick hash check reports it).
//!
//! This module must never register types on its own initiative or touch the schedules.

use std::any::TypeId;
use std::collections::BTreeMap;
use std::sync::Arc;

use bevy::ecs::component::{Component, ComponentId, Mutable};
use bevy::ecs::entity::{Entity, EntityGeneration, EntityIndex};
use bevy::ecs::resource::IsResource;
use bevy::ecs::world::{EntityRef, EntityWorldMut};
use bevy::prelude::{Resource, World};

use super::allocator::AllocatorState;
use crate::runtime::FrameTime;

/// Why a snapshot cannot be taken or restored.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The world holds a component or resource type that is neither registered nor ignored.
    #[error(
        "`{type_name}` is not registered for snapshots: call `register_snapshot_component` (copied \
         with Clone) or `ignore_in_snapshots` for it"
    )]
    Unregistered {
        /// The type's name.
        type_name: String,
    },
    /// The app to restore into was not built the same way, or ran past the snapshot.
    #[error("cannot restore the snapshot of tick {tick} into this app: {reason}")]
    Incompatible {
        /// The snapshot's tick.
        tick: u64,
        /// What does not match.
        reason: String,
    },
}

/// Copies one value out of an entity, if it has the type.
type Capture = fn(&EntityRef) -> Option<Box<dyn StoredValue>>;

/// What a snapshot does with one type.
#[derive(Clone, Copy)]
enum Rule {
    /// Copied with `Clone`.
    Copy(Capture),
    /// Left as the restored app has it.
    Ignore,
}

/// Which component and resource types snapshots copy and which they leave alone.
///
/// A resource, inserted when the app is built, so plugins can register their types from
/// `Plugin::build` (see `SnapshotAppExt`).
#[derive(Resource, Clone)]
pub struct SnapshotRegistry {
    rules: Arc<BTreeMap<TypeId, Rule>>,
    /// Types ignored by name: private types of other crates that cannot be named in Rust.
    ignored_names: Arc<Vec<String>>,
}

impl Default for SnapshotRegistry {
    fn default() -> Self {
        let mut registry = SnapshotRegistry {
            rules: Arc::new(BTreeMap::new()),
            ignored_names: Arc::new(Vec::new()),
        };
        // The registry itself, and bevy's marker of resource entities (the same in an app built
        // the same way).
        registry.ignore::<SnapshotRegistry>();
        registry.ignore::<IsResource>();
        registry
    }
}

impl SnapshotRegistry {
    /// Snapshots copy `T` with `Clone` and write it back in place.
    pub fn register<T: Component<Mutability = Mutable> + Clone>(&mut self) {
        Arc::make_mut(&mut self.rules).insert(TypeId::of::<T>(), Rule::Copy(capture::<T>));
    }

    /// Snapshots leave `T` as the restored app has it.
    pub fn ignore<T: Component>(&mut self) {
        Arc::make_mut(&mut self.rules).insert(TypeId::of::<T>(), Rule::Ignore);
    }

    /// Snapshots leave the type called `type_name` (its full path, as `std::any::type_name`
    /// writes it) as the restored app has it. Only for types that cannot be named in Rust, such as
    /// bevy's private message types.
    pub fn ignore_by_name(&mut self, type_name: impl Into<String>) {
        Arc::make_mut(&mut self.ignored_names).push(type_name.into());
    }

    /// Whether `T` is registered or ignored.
    pub fn knows<T: Component>(&self) -> bool {
        self.rules.contains_key(&TypeId::of::<T>())
    }

    /// The rule for the component `id` of `world`.
    fn rule(&self, world: &World, id: ComponentId) -> Result<(TypeId, Rule), SnapshotError> {
        let info = world
            .components()
            .get_info(id)
            .expect("an archetype's components are registered in its world");
        let unregistered = || SnapshotError::Unregistered {
            type_name: info.name().to_string(),
        };
        let type_id = info.type_id().ok_or_else(unregistered)?;
        match self.rules.get(&type_id) {
            Some(rule) => Ok((type_id, *rule)),
            None if self
                .ignored_names
                .iter()
                .any(|name| info.name().to_string() == *name) =>
            {
                Ok((type_id, Rule::Ignore))
            }
            None => Err(unregistered()),
        }
    }
}

/// One copied component value.
trait StoredValue: Send + Sync + 'static {
    /// The component's type.
    fn component_type(&self) -> TypeId;
    /// Writes the value into `entity`: in place when it has the component, else by inserting it.
    fn write(&self, entity: &mut EntityWorldMut);
}

struct Stored<T>(T);

impl<T: Component<Mutability = Mutable> + Clone> StoredValue for Stored<T> {
    fn component_type(&self) -> TypeId {
        TypeId::of::<T>()
    }

    fn write(&self, entity: &mut EntityWorldMut) {
        match entity.get_mut::<T>() {
            Some(mut value) => *value = self.0.clone(),
            None => {
                entity.insert(self.0.clone());
            }
        }
    }
}

fn capture<T: Component<Mutability = Mutable> + Clone>(
    entity: &EntityRef,
) -> Option<Box<dyn StoredValue>> {
    entity
        .get::<T>()
        .map(|value| Box::new(Stored(value.clone())) as Box<dyn StoredValue>)
}

/// One entity in a snapshot.
struct EntityRecord {
    entity: Entity,
    resource: bool,
    values: Vec<Box<dyn StoredValue>>,
}

/// A copy of a world: entities with their registered component values, entity generations and
/// the allocator's state. Take one with `App::snapshot`, put it back with `App::restore`.
pub struct WorldSnapshot {
    tick: u64,
    entities: Vec<EntityRecord>,
    generations: Vec<u32>,
    allocator: AllocatorState,
}

impl std::fmt::Debug for WorldSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorldSnapshot")
            .field("tick", &self.tick)
            .field("entities", &self.entities.len())
            .field("allocator", &self.allocator)
            .finish()
    }
}

impl WorldSnapshot {
    /// Copies `world` (reading the allocator needs `&mut`; the world is left as it was).
    pub fn capture(world: &mut World) -> Result<WorldSnapshot, SnapshotError> {
        let registry = world
            .get_resource::<SnapshotRegistry>()
            .cloned()
            .unwrap_or_default();
        let mut entities = Vec::new();
        for archetype in world.archetypes().iter() {
            if archetype.is_empty() {
                continue;
            }
            let mut captures = Vec::new();
            let mut resource = false;
            for &id in archetype.components() {
                let (type_id, rule) = registry.rule(world, id)?;
                resource |= type_id == TypeId::of::<IsResource>();
                if let Rule::Copy(capture) = rule {
                    captures.push(capture);
                }
            }
            for row in archetype.entities() {
                let entity = world.entity(row.id());
                entities.push(EntityRecord {
                    entity: row.id(),
                    resource,
                    values: captures.iter().filter_map(|c| c(&entity)).collect(),
                });
            }
        }
        entities.sort_unstable_by_key(|record| record.entity.index_u32());
        let allocator = AllocatorState::read(world);
        let generations = (0..allocator.fresh_cursor)
            .map(|index| generation_at(world, index).to_bits())
            .collect();
        Ok(WorldSnapshot {
            tick: world
                .get_resource::<FrameTime>()
                .map_or(0, |t| t.fixed_tick),
            entities,
            generations,
            allocator,
        })
    }

    /// The fixed tick the snapshot was taken after.
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// The spawned entities it holds, resource entities included, in index order.
    pub fn entities(&self) -> impl Iterator<Item = Entity> + '_ {
        self.entities.iter().map(|record| record.entity)
    }

    /// The allocator state it restores.
    pub fn allocator(&self) -> &AllocatorState {
        &self.allocator
    }

    /// Puts the snapshot back into `world`: same entities at the same ids and generations, the
    /// registered values, the generations of freed ids and the allocator.
    ///
    /// Checks everything it can before it changes anything; an `Incompatible` error from the
    /// later steps (a component hook that spawns or despawns) can leave the world half restored.
    pub fn restore(&self, world: &mut World) -> Result<(), SnapshotError> {
        let registry = world
            .get_resource::<SnapshotRegistry>()
            .cloned()
            .unwrap_or_default();
        for archetype in world.archetypes().iter() {
            for &id in archetype.components() {
                registry.rule(world, id)?;
            }
        }
        let fresh = self.allocator.fresh_cursor;
        let declared = world.entities().len();
        let mut wanted: Vec<Option<&EntityRecord>> = vec![None; fresh.max(declared) as usize];
        for record in &self.entities {
            wanted[record.entity.index_u32() as usize] = Some(record);
        }

        // Check, then despawn what the snapshot does not hold at the same id.
        let mut despawn = Vec::new();
        for index in 0..declared {
            let current = entity_at(world, index);
            let spawned = world.entities().contains_spawned(current);
            let keep = spawned && wanted[index as usize].is_some_and(|r| r.entity == current);
            if index >= fresh {
                if spawned || current.generation() != EntityGeneration::FIRST {
                    return Err(self.incompatible(format!(
                        "it has used entity index {index}, which was never handed out when the \
                         snapshot was taken (it ran past the snapshot)"
                    )));
                }
                continue;
            }
            let after = if spawned && !keep {
                current.generation().after_versions(1)
            } else {
                current.generation()
            };
            let wanted_generation = EntityGeneration::from_bits(self.generations[index as usize]);
            if generations_between(after, wanted_generation).is_none() {
                return Err(self.incompatible(format!(
                    "entity index {index} is at generation {} and the snapshot wants {} (the app \
                     ran past the snapshot)",
                    after.to_bits(),
                    wanted_generation.to_bits()
                )));
            }
            if spawned && !keep {
                if world.entity(current).contains::<IsResource>() {
                    return Err(self.incompatible(format!(
                        "it holds resource entity {current}, which the snapshot does not"
                    )));
                }
                despawn.push(current);
            }
        }
        for record in self.entities.iter().filter(|r| r.resource) {
            let held = world.get_entity(record.entity).ok();
            if !held.is_some_and(|e| e.contains::<IsResource>()) {
                return Err(self.incompatible(format!(
                    "it does not hold resource entity {} as the snapshot does",
                    record.entity
                )));
            }
        }
        for entity in despawn {
            world.despawn_no_free(entity);
        }

        // Move every generation forward to the snapshot's.
        for (index, &bits) in self.generations.iter().enumerate() {
            let mut current = entity_at(world, index as u32);
            if world.entities().contains_spawned(current) {
                continue;
            }
            let steps =
                generations_between(current.generation(), EntityGeneration::from_bits(bits))
                    .ok_or_else(|| {
                        self.incompatible(format!("entity index {index} moved past the snapshot"))
                    })?;
            for _ in 0..steps {
                let spawned = world
                    .spawn_empty_at(current)
                    .map_err(|e| self.incompatible(format!("{current} cannot be reused: {e}")))?;
                current = Entity::from_index_and_generation(
                    current.index(),
                    current.generation().after_versions(1),
                );
                spawned.despawn_no_free();
            }
        }

        // Entities first, then resources, so a resource value written by a component hook on the
        // way is overwritten by the snapshot's.
        let (resources, others): (Vec<&EntityRecord>, Vec<&EntityRecord>) =
            self.entities.iter().partition(|r| r.resource);
        for record in others.into_iter().chain(resources) {
            self.write_record(world, &registry, record)?;
        }
        self.allocator.install(world);
        Ok(())
    }

    /// Spawns `record`'s entity if needed, removes registered components it does not hold, and
    /// writes its values.
    fn write_record(
        &self,
        world: &mut World,
        registry: &SnapshotRegistry,
        record: &EntityRecord,
    ) -> Result<(), SnapshotError> {
        if !world.entities().contains_spawned(record.entity) {
            world.spawn_empty_at(record.entity).map_err(|e| {
                self.incompatible(format!("{} cannot be spawned again: {e}", record.entity))
            })?;
        }
        let mut extra: Vec<ComponentId> = Vec::new();
        for &id in world.entity(record.entity).archetype().components() {
            let (type_id, rule) = registry.rule(world, id)?;
            if matches!(rule, Rule::Copy(_))
                && !record.values.iter().any(|v| v.component_type() == type_id)
            {
                extra.push(id);
            }
        }
        let mut entity = world.entity_mut(record.entity);
        for id in extra {
            entity.remove_by_id(id);
        }
        for value in &record.values {
            value.write(&mut entity);
        }
        Ok(())
    }

    fn incompatible(&self, reason: String) -> SnapshotError {
        SnapshotError::Incompatible {
            tick: self.tick,
            reason,
        }
    }
}

/// The entity that index `index` resolves to now (spawned or not).
fn entity_at(world: &World, index: u32) -> Entity {
    let index = EntityIndex::from_raw_u32(index).expect("entity indices are below u32::MAX");
    world.entities().resolve_from_index(index)
}

fn generation_at(world: &World, index: u32) -> EntityGeneration {
    entity_at(world, index).generation()
}

/// How many despawns take generation `from` to `to`, or `None` when `to` is behind `from`.
fn generations_between(from: EntityGeneration, to: EntityGeneration) -> Option<u32> {
    let steps = to.to_bits().wrapping_sub(from.to_bits());
    (steps < 1 << 31).then_some(steps)
}

/// Registration from `Plugin::build`, where only bevy's `App` is at hand.
pub trait SnapshotAppExt {
    /// Snapshots copy `T` with `Clone`.
    fn register_snapshot_component<T: Component<Mutability = Mutable> + Clone>(
        &mut self,
    ) -> &mut Self;
    /// Snapshots leave `T` as the restored app has it.
    fn ignore_in_snapshots<T: Component>(&mut self) -> &mut Self;
}

impl SnapshotAppExt for bevy::app::App {
    fn register_snapshot_component<T: Component<Mutability = Mutable> + Clone>(
        &mut self,
    ) -> &mut Self {
        registry_mut(self.world_mut()).register::<T>();
        self
    }

    fn ignore_in_snapshots<T: Component>(&mut self) -> &mut Self {
        registry_mut(self.world_mut()).ignore::<T>();
        self
    }
}

/// The registry, inserted the first time a plugin registers something (while the app is built,
/// before any entity the simulation spawns).
fn registry_mut(world: &mut World) -> bevy::prelude::Mut<'_, SnapshotRegistry> {
    world.get_resource_or_init::<SnapshotRegistry>()
}
