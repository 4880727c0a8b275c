//! [`WorldSnapshot`]: a copy of the simulation state that can be put back into the app it came
//! from (rolling back in place) or into another app built the same way.
//!
//! What a snapshot holds:
//! - every simulation entity (one holding a [`SimId`]), keyed by its `SimId`, with a `Clone` of
//!   each component whose type is registered with [`SnapshotRegistry::register`];
//! - every registered resource's value, keyed by its type.
//!
//! What it leaves alone: every entity without a `SimId` (windows, cameras, UI, meshes, observers,
//! presentation a game spawns) and every resource that is not registered. Their types need not be
//! registered, and a restore neither reads nor changes them. On a simulation entity, every
//! component type must be registered (copied) or ignored (kept as the restored app has it); any
//! other fails with [`SnapshotError::Unregistered`], because silently leaving simulation state
//! behind is how a rollback or a seek diverges without a clue.
//!
//! Restoring matches entities by `SimId`, never by `Entity`: a simulation entity the world holds
//! and the snapshot does not is despawned, one the snapshot holds and the world does not is
//! spawned (with its `SimId` given, so the allocator is not asked), and every matched entity gets
//! the snapshot's values and loses the registered components the snapshot did not have. Then the
//! resources are written, the `SimIdAllocator` among them, so later spawns get the same ids
//! again. An `Entity` held inside a restored value (a component or resource whose type maps its
//! entities, `#[entities]` or `Component::map_entities`) is mapped to the entity now holding the
//! same `SimId`. A restored entity may have another `Entity` than before; nothing the simulation
//! orders or hashes depends on it. Restored values count as changed for change detection, and
//! respawned entities sit elsewhere in their tables, so systems must order by `SimId`, never by
//! query order.
//!
//! State that lives outside the `World`'s entities (GPU bodies on a device) is held through the
//! hooks its owner registers ([`SnapshotRegistry::hold_external`], see `snapshot_external`): a
//! capture runs them before it copies the ECS, a restore after it has put the ECS back.
//!
//! This module must never register types on its own initiative or touch the schedules.

use std::any::TypeId;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::component::{Component, ComponentId, Mutable};
use bevy::ecs::entity::{Entity, EntityHashMap};
use bevy::ecs::resource::IsResource;
use bevy::ecs::world::EntityRef;
use bevy::prelude::{DetectChangesMut, Resource, World};

use super::change_ticks::{Ranks, TickRanks};
use super::layout::LayoutFingerprint;
use super::registry::sim_registry;
use super::sim_id::SimId;
use super::snapshot_error::SnapshotError;
use super::snapshot_external::{
    ExternalState, ExternalValues, RestoredEntities, capture_all, match_hooks, restore_all,
};
use super::snapshot_store::{
    HeapValue, StoredColumn, StoredValue, capture, capture_column, heap_value,
};

/// The column index [`WorldSnapshot::group_ids`] gives the entity's `SimId`, which is the key of
/// its record rather than a stored value.
const SIM_ID_SLOT: usize = usize::MAX;

/// Copies one value out of an entity (a resource's), if it has the type.
type Capture = fn(&EntityRef) -> Option<Box<dyn StoredValue>>;

/// Copies one component type out of every entity of one archetype, in order.
type CaptureColumn = fn(&World, &[Entity]) -> Box<dyn StoredColumn>;

/// What a snapshot does with one type.
#[derive(Clone, Copy)]
enum Rule {
    /// Copied with `Clone`: a resource's value alone, a component's in columns.
    Copy(Capture, CaptureColumn),
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
    /// Simulation state that lives outside the ECS, with the hooks that copy it out and back.
    external: Arc<Vec<ExternalState>>,
    /// How many restores the world has begun (see [`SnapshotRegistry::restores`]).
    restores: Arc<AtomicU64>,
}

impl Default for SnapshotRegistry {
    fn default() -> Self {
        let mut registry = SnapshotRegistry {
            rules: Arc::new(BTreeMap::new()),
            ignored_names: Arc::new(Vec::new()),
            external: Arc::new(Vec::new()),
            restores: Arc::new(AtomicU64::new(0)),
        };
        // The registry itself, bevy's marker of resource entities, and the key of every record.
        registry.ignore::<SnapshotRegistry>();
        registry.ignore::<IsResource>();
        registry.ignore::<SimId>();
        registry
    }
}

impl SnapshotRegistry {
    /// How many times [`WorldSnapshot::restore`] has begun on the world holding this registry.
    /// A restore gives values back with the change ticks they had (systems see them as they did
    /// the first time), so a system that keeps something derived from the world between ticks
    /// reads this to learn that the world may have been replaced under it.
    pub fn restores(&self) -> u64 {
        self.restores.load(Ordering::Relaxed)
    }

    /// Snapshots copy `T` with `Clone` (on simulation entities, or as a resource) and write it
    /// back in place.
    pub fn register<T: Component<Mutability = Mutable> + Clone>(&mut self) {
        Arc::make_mut(&mut self.rules).insert(
            TypeId::of::<T>(),
            Rule::Copy(capture::<T>, capture_column::<T>),
        );
    }

    /// Snapshots leave `T` as the restored app has it.
    pub fn ignore<T: Component>(&mut self) {
        Arc::make_mut(&mut self.rules).insert(TypeId::of::<T>(), Rule::Ignore);
    }

    /// Snapshots leave the type called `type_name` (its full path, as `std::any::type_name`
    /// writes it) as the restored app has it. Only for types that cannot be named in Rust, such as
    /// another crate's private components.
    pub fn ignore_by_name(&mut self, type_name: impl Into<String>) {
        Arc::make_mut(&mut self.ignored_names).push(type_name.into());
    }

    /// Snapshots hold `state`, simulation state outside the ECS, through its hooks (see
    /// [`ExternalState`]); a second registration with the same name replaces the first.
    pub fn hold_external(&mut self, state: ExternalState) {
        let hooks = Arc::make_mut(&mut self.external);
        hooks.retain(|hook| hook.what != state.what);
        hooks.push(state);
    }

    /// Whether the component `id` of `world` is copied or ignored.
    pub(crate) fn declares(&self, world: &World, id: ComponentId) -> bool {
        self.rule(world, id).is_some()
    }

    /// Whether `T` is registered or ignored.
    pub fn knows<T: Component>(&self) -> bool {
        self.rules.contains_key(&TypeId::of::<T>())
    }

    /// The rule for the component `id` of `world`, `None` when it has none.
    fn rule(&self, world: &World, id: ComponentId) -> Option<(TypeId, Rule)> {
        let info = world.components().get_info(id)?;
        let type_id = info.type_id()?;
        match self.rules.get(&type_id) {
            Some(rule) => Some((type_id, *rule)),
            None if self
                .ignored_names
                .iter()
                .any(|name| info.name().to_string() == *name) =>
            {
                Some((type_id, Rule::Ignore))
            }
            None => None,
        }
    }

    /// The rule for component `id` on simulation entity `entity`, which must have one.
    fn entity_rule(
        &self,
        world: &World,
        id: ComponentId,
        entity: SimId,
    ) -> Result<(TypeId, Rule), SnapshotError> {
        self.rule(world, id)
            .ok_or_else(|| SnapshotError::Unregistered {
                type_name: world
                    .components()
                    .get_info(id)
                    .map_or_else(|| format!("{id:?}"), |info| info.name().to_string()),
                entity,
            })
    }
}

/// One simulation entity in a snapshot.
struct EntityRecord {
    sim_id: SimId,
    /// The entity it had when the snapshot was taken: the key for mapping entities held in values.
    entity: Entity,
    /// Which of the snapshot's `groups` holds its values (its archetype's), so a restore works
    /// out what to remove once per group and archetype.
    group: usize,
    /// Its row in the group's columns.
    row: usize,
}

/// The copied values of one captured archetype: a column per copied type.
struct Group {
    /// The copied types, in the archetype's component order.
    types: Vec<TypeId>,
    /// One column per type, in the same order.
    columns: Vec<Box<dyn StoredColumn>>,
    /// Each value's change-detection ranks, by column, then row (see [`TickRanks`]).
    ranks: Vec<Vec<Ranks>>,
}

/// A copy of the simulation state: every simulation entity's registered components by `SimId`,
/// and every registered resource. Take one with `App::snapshot`, put it back with `App::restore`.
/// Values are kept a column per type and archetype, so taking one allocates per archetype, not
/// per value.
pub struct WorldSnapshot {
    tick: u64,
    entities: Vec<EntityRecord>,
    /// The captured archetypes' values, in capture order.
    groups: Vec<Group>,
    resources: Vec<Box<dyn StoredValue>>,
    /// Each resource's change-detection ranks, in the same order.
    resource_ranks: Vec<Ranks>,
    /// The layout of the state it holds.
    layout: Arc<LayoutFingerprint>,
    /// What each external-state hook copied out, by its name.
    external: ExternalValues,
}

impl std::fmt::Debug for WorldSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorldSnapshot")
            .field("tick", &self.tick)
            .field("entities", &self.entities.len())
            .field("resources", &self.resources.len())
            .finish()
    }
}

/// What an archetype is to a snapshot.
enum Kind {
    /// Resource entities: their registered resources are copied.
    Resource,
    /// Simulation entities: every component must be known.
    Simulation,
    /// Anything else: left alone.
    Other,
}

fn kind_of(world: &World, components: &[ComponentId]) -> Kind {
    let has = |id: Option<ComponentId>| id.is_some_and(|id| components.contains(&id));
    if has(world.component_id::<IsResource>()) {
        Kind::Resource
    } else if has(world.component_id::<SimId>()) {
        Kind::Simulation
    } else {
        Kind::Other
    }
}

fn registry_of(world: &World) -> SnapshotRegistry {
    world
        .get_resource::<SnapshotRegistry>()
        .cloned()
        .unwrap_or_default()
}

/// Every simulation entity of `world` by `SimId`.
fn simulation_entities(world: &World) -> Result<BTreeMap<SimId, Entity>, SnapshotError> {
    let mut found = BTreeMap::new();
    for archetype in world.archetypes().iter() {
        if archetype.is_empty()
            || !matches!(kind_of(world, archetype.components()), Kind::Simulation)
        {
            continue;
        }
        for row in archetype.entities() {
            let entity = row.id();
            let id = *world
                .entity(entity)
                .get::<SimId>()
                .expect("a simulation archetype");
            if let Some(first) = found.insert(id, entity) {
                return Err(SnapshotError::DuplicateSimId {
                    id,
                    first,
                    second: entity,
                });
            }
        }
    }
    Ok(found)
}

impl WorldSnapshot {
    /// Copies the simulation state of `world` after `tick` fixed ticks (the snapshot's
    /// [`tick`](Self::tick), which the caller reads from its clock). Nothing simulated changes;
    /// external-state hooks may finish pending work first (the GPU hook simulates the queued GPU
    /// ticks and records their hashes, as the frame would have).
    pub fn capture(world: &mut World, tick: u64) -> Result<WorldSnapshot, SnapshotError> {
        let registry = registry_of(world);
        // First: a hook may finish pending work that writes ECS state (GPU ticks record hashes).
        let external = capture_all(&registry.external, world)?;
        let world: &World = world;
        let tick_ranks = TickRanks::of(world);
        let ranks_of = |entity: Entity, id: ComponentId| {
            world
                .entity(entity)
                .get_change_ticks_by_id(id)
                .map_or_else(Ranks::default, |ticks| tick_ranks.ranks(ticks))
        };
        let mut entities = Vec::new();
        let mut groups = Vec::new();
        let mut resources = Vec::new();
        let mut resource_ranks = Vec::new();
        for archetype in world.archetypes().iter() {
            if archetype.is_empty() {
                continue;
            }
            let kind = kind_of(world, archetype.components());
            if matches!(kind, Kind::Other) {
                continue;
            }
            let mut captures = Vec::new();
            let mut types = Vec::new();
            let mut ids = Vec::new();
            for &id in archetype.components() {
                let rule = match kind {
                    Kind::Resource => registry.rule(world, id).map(|(_, rule)| rule),
                    _ => {
                        let first = archetype.entities()[0].id();
                        let sim_id = world.entity(first).get::<SimId>().copied();
                        let sim_id = sim_id.expect("a simulation archetype");
                        Some(registry.entity_rule(world, id, sim_id)?.1)
                    }
                };
                if let Some(Rule::Copy(capture, column)) = rule
                    && let Some(type_id) = world.components().get_info(id).and_then(|i| i.type_id())
                {
                    captures.push((capture, column));
                    types.push(type_id);
                    ids.push(id);
                }
            }
            if matches!(kind, Kind::Resource) {
                for row in archetype.entities() {
                    let entity = world.entity(row.id());
                    for ((capture, _), &id) in captures.iter().zip(&ids) {
                        if let Some(value) = capture(&entity) {
                            resources.push(value);
                            resource_ranks.push(ranks_of(row.id(), id));
                        }
                    }
                }
                continue;
            }
            let rows: Vec<Entity> = archetype.entities().iter().map(|row| row.id()).collect();
            let group = groups.len();
            groups.push(Group {
                types,
                columns: captures
                    .iter()
                    .map(|(_, column)| column(world, &rows))
                    .collect(),
                ranks: ids
                    .iter()
                    .map(|&id| rows.iter().map(|&entity| ranks_of(entity, id)).collect())
                    .collect(),
            });
            for (row, &entity) in rows.iter().enumerate() {
                entities.push(EntityRecord {
                    sim_id: *world
                        .entity(entity)
                        .get::<SimId>()
                        .expect("a simulation archetype"),
                    entity,
                    group,
                    row,
                });
            }
        }
        entities.sort_unstable_by_key(|record| record.sim_id);
        if let Some(pair) = entities.windows(2).find(|w| w[0].sim_id == w[1].sim_id) {
            return Err(SnapshotError::DuplicateSimId {
                id: pair[0].sim_id,
                first: pair[0].entity,
                second: pair[1].entity,
            });
        }
        Ok(WorldSnapshot {
            tick,
            entities,
            groups,
            resources,
            resource_ranks,
            layout: sim_registry(world).layout(),
            external,
        })
    }

    /// The fixed tick the snapshot was taken after.
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// The simulation entities it holds, in `SimId` order.
    pub fn entities(&self) -> impl Iterator<Item = SimId> + '_ {
        self.entities.iter().map(|record| record.sim_id)
    }

    /// Puts the snapshot back into `world`: the same simulation entities (by `SimId`) with the
    /// registered values, and the registered resources. Everything else is left alone.
    ///
    /// Checks everything it can before it changes anything: unregistered types on the world's
    /// simulation entities, duplicate ids, and the resources and external states the snapshot
    /// needs. External state is put back last; a hook that fails then (a device error) leaves the
    /// ECS restored and returns [`SnapshotError::External`].
    pub fn restore(&self, world: &mut World) -> Result<(), SnapshotError> {
        let registry = registry_of(world);
        registry.restores.fetch_add(1, Ordering::Relaxed);
        let layout = sim_registry(world).layout();
        if !Arc::ptr_eq(&layout, &self.layout)
            && let Some(difference) = layout.first_difference(&self.layout, "the snapshot")
        {
            return Err(SnapshotError::Layout {
                tick: self.tick,
                difference,
            });
        }
        let external = match_hooks(&registry.external, &self.external)
            .map_err(|reason| self.incompatible(reason))?;
        let current = simulation_entities(world)?;
        for archetype in world.archetypes().iter() {
            if archetype.is_empty()
                || !matches!(kind_of(world, archetype.components()), Kind::Simulation)
            {
                continue;
            }
            let first = archetype.entities()[0].id();
            let sim_id = *world
                .entity(first)
                .get::<SimId>()
                .expect("a simulation archetype");
            for &id in archetype.components() {
                registry.entity_rule(world, id, sim_id)?;
            }
        }
        let resource_entities = self.resource_entities(world, &registry)?;

        // Despawn what the snapshot does not hold, spawn what it holds and the world does not.
        let mut wanted = self.entities.iter().map(|r| r.sim_id).peekable();
        for (&sim_id, &entity) in &current {
            while wanted.next_if(|id| *id < sim_id).is_some() {}
            if wanted.peek() != Some(&sim_id) {
                world.despawn(entity);
            }
        }
        // Spawned entities get their `SimId` with their values (see `insert_all`).
        world.register_component::<SimId>();
        let mut mapper = EntityHashMap::<Entity>::default();
        let mut targets = Vec::with_capacity(self.entities.len());
        for record in &self.entities {
            // A matched entity may have gone with a despawned parent.
            let (target, spawned) = match current.get(&record.sim_id) {
                Some(&entity) if world.get_entity(entity).is_ok() => (entity, false),
                _ => (world.spawn_empty().id(), true),
            };
            mapper.insert(record.entity, target);
            targets.push((target, spawned));
        }

        // Entities first, then resources, so a resource value written by a component hook on the
        // way is overwritten by the snapshot's.
        let mut removals = BTreeMap::new();
        let mut ids_of_group: BTreeMap<usize, Vec<(usize, ComponentId)>> = BTreeMap::new();
        for (record, &(target, spawned)) in self.entities.iter().zip(&targets) {
            if spawned {
                let ids = match ids_of_group.entry(record.group) {
                    std::collections::btree_map::Entry::Occupied(ids) => ids.into_mut(),
                    std::collections::btree_map::Entry::Vacant(slot) => {
                        slot.insert(self.group_ids(world, record)?)
                    }
                };
                self.insert_all(world, record, target, ids, &mut mapper);
            } else {
                self.write_record(world, &registry, record, target, &mut mapper, &mut removals)?;
            }
        }
        for (value, &entity) in self.resources.iter().zip(&resource_entities) {
            value.write(&mut world.entity_mut(entity), &mut mapper);
        }
        self.restore_change_ticks(world, &targets, &resource_entities);
        restore_all(
            &registry.external,
            &external,
            world,
            &RestoredEntities::new(&mapper),
        )
    }

    /// Gives every value written its change-detection ticks back, by rank (see [`TickRanks`]):
    /// the next tick's systems see as changed or added what they saw the first time.
    fn restore_change_ticks(
        &self,
        world: &mut World,
        targets: &[(Entity, bool)],
        resource_entities: &[Entity],
    ) {
        let tick_ranks = TickRanks::of(world);
        let set = |world: &mut World, entity: Entity, type_id: TypeId, ranks: Ranks| {
            let Some(id) = world.components().get_id(type_id) else {
                return;
            };
            let (changed, added) = tick_ranks.ticks(ranks);
            if let Ok(mut value) = world.entity_mut(entity).get_mut_by_id(id) {
                // `set_last_added` sets the changed tick too, so it goes first.
                value.set_last_added(added);
                value.set_last_changed(changed);
            }
        };
        for (record, &(target, _)) in self.entities.iter().zip(targets) {
            let group = &self.groups[record.group];
            for (type_id, ranks) in group.types.iter().zip(&group.ranks) {
                set(world, target, *type_id, ranks[record.row]);
            }
        }
        for ((value, ranks), &entity) in self
            .resources
            .iter()
            .zip(&self.resource_ranks)
            .zip(resource_entities)
        {
            set(world, entity, value.component_type(), *ranks);
        }
    }

    /// The resource entity that holds each of the snapshot's resources, in order.
    fn resource_entities(
        &self,
        world: &World,
        registry: &SnapshotRegistry,
    ) -> Result<Vec<Entity>, SnapshotError> {
        let mut by_type: BTreeMap<TypeId, Entity> = BTreeMap::new();
        for archetype in world.archetypes().iter() {
            if archetype.is_empty()
                || !matches!(kind_of(world, archetype.components()), Kind::Resource)
            {
                continue;
            }
            for &id in archetype.components() {
                if let Some((type_id, Rule::Copy(..))) = registry.rule(world, id) {
                    for row in archetype.entities() {
                        by_type.insert(type_id, row.id());
                    }
                }
            }
        }
        self.resources
            .iter()
            .map(|value| {
                by_type
                    .get(&value.component_type())
                    .copied()
                    .ok_or_else(|| {
                        self.incompatible(
                        "it lacks a resource the snapshot holds (it was not built the same way)"
                            .to_owned(),
                    )
                    })
            })
            .collect()
    }

    /// The component id of each of `record`'s group's columns, with the column's index, and
    /// `SimId`'s with [`SIM_ID_SLOT`], sorted by id (the same for every record of the group).
    fn group_ids(
        &self,
        world: &World,
        record: &EntityRecord,
    ) -> Result<Vec<(usize, ComponentId)>, SnapshotError> {
        let mut ids = self.groups[record.group]
            .types
            .iter()
            .enumerate()
            .map(|(index, type_id)| {
                world
                    .components()
                    .get_id(*type_id)
                    .map(|id| (index, id))
                    .ok_or_else(|| {
                        self.incompatible(format!(
                            "it has never seen a component type simulation entity {} holds",
                            record.sim_id
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        ids.extend(world.component_id::<SimId>().map(|id| (SIM_ID_SLOT, id)));
        ids.sort_unstable_by_key(|(_, id)| *id);
        Ok(ids)
    }

    /// Gives the freshly spawned, empty `target` its `SimId` and every value of `record` in one
    /// archetype move (a component at a time would move it through one archetype per component).
    fn insert_all(
        &self,
        world: &mut World,
        record: &EntityRecord,
        target: Entity,
        ids: &[(usize, ComponentId)],
        mapper: &mut EntityHashMap<Entity>,
    ) {
        let values: Vec<HeapValue> = ids
            .iter()
            .map(|&(index, _)| match index {
                SIM_ID_SLOT => heap_value(record.sim_id),
                _ => self.groups[record.group].columns[index].row_to_heap(record.row, mapper),
            })
            .collect();
        let component_ids: Vec<ComponentId> = ids.iter().map(|(_, id)| *id).collect();
        // SAFETY: each id is the component id, in this world, of the type its value was cloned
        // from (a group's `types` list its columns' types in order; `SIM_ID_SLOT` is `SimId`'s
        // id with a `SimId`), and each pointer holds a live
        // value of that type that `insert_by_ids` moves out.
        unsafe {
            world.entity_mut(target).insert_by_ids(
                &component_ids,
                values
                    .iter()
                    .map(|value| bevy::ptr::OwningPtr::new(value.ptr)),
            );
        }
        for value in values {
            // SAFETY: inserted above, so the value was moved out; only the memory is left.
            unsafe { (value.free)(value.ptr) };
        }
    }

    /// Removes the registered components `record` does not hold from `target`, then writes its
    /// values. What to remove is worked out once per target archetype and record group.
    fn write_record(
        &self,
        world: &mut World,
        registry: &SnapshotRegistry,
        record: &EntityRecord,
        target: Entity,
        mapper: &mut EntityHashMap<Entity>,
        removals: &mut BTreeMap<(ArchetypeId, usize), Vec<ComponentId>>,
    ) -> Result<(), SnapshotError> {
        let target_ref = world.entity(target);
        let archetype = target_ref.archetype();
        let key = (archetype.id(), record.group);
        if let std::collections::btree_map::Entry::Vacant(slot) = removals.entry(key) {
            let kept = &self.groups[record.group].types;
            let mut extra = Vec::new();
            for &id in archetype.components() {
                let (type_id, rule) = registry.entity_rule(world, id, record.sim_id)?;
                if matches!(rule, Rule::Copy(..)) && !kept.contains(&type_id) {
                    extra.push(id);
                }
            }
            slot.insert(extra);
        }
        let mut entity = world.entity_mut(target);
        for &id in &removals[&key] {
            entity.remove_by_id(id);
        }
        for column in &self.groups[record.group].columns {
            column.write_row(record.row, &mut entity, mapper);
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
