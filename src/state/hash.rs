//! [`world_state_hash`] and [`StateHashes`]: one hash of the simulation state after every tick.
//!
//! The hash covers exactly what is registered as simulation state (see `registry`):
//!
//! - per simulation entity (one holding a [`SimId`]), in `SimId` order, tagged by its `SimId`: its
//!   `Transform` when it holds a registered simulation component (or the `Simulated` marker) and no
//!   registered rule says its `Transform` is a copy (GPU bodies' read-back), then every registered
//!   simulation component it holds, in name order, each tagged by its registered name;
//! - every registered simulation resource, in name order, tagged by its name.
//!
//! No `Entity` goes into the hash or decides its order: bevy hands out entity ids to resources,
//! windows, cameras and meshes too, so presentation would move them, and a restored entity gets
//! another one. Presentation (registered as such, or not registered at all) is never hashed. The
//! same pass notes the first NaN or infinity with its component and field path. This module must
//! never write to the world it hashes, and never name a gameplay or physics type.

use std::collections::VecDeque;

use bevy::ecs::archetype::{Archetype, ArchetypeEntity};
use bevy::ecs::component::{ComponentId, StorageType};
use bevy::ecs::storage::{Column, ComponentSparseSet, Table};
use bevy::prelude::{Entity, Resource, Transform, World};
use bevy::ptr::Ptr;
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use super::hash_plan::{WorldPlan, world_plan};
use super::hasher::StateHasher;
use super::registry::{SimEntry, TransformIsCopy, sim_registry};
use super::sim_id::SimId;
use super::sim_state::SimState;

/// How many ticks of hashes [`StateHashes`] keeps.
pub const STATE_HASH_HISTORY: usize = 1024;

/// The world-state hash of the last [`STATE_HASH_HISTORY`] ticks (simulation bookkeeping; not
/// itself hashed).
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct StateHashes {
    /// `(tick, hash)` of the CPU simulation state, oldest first.
    pub cpu: VecDeque<(u64, u64)>,
    /// `(tick, hash)` of GPU simulation state, as it comes back from the device.
    pub gpu: VecDeque<(u64, u64)>,
    /// The first NaN or infinity found in simulation state, if any.
    pub first_non_finite: Option<NonFiniteValue>,
}

impl StateHashes {
    /// Appends a tick's hash, dropping the oldest past [`STATE_HASH_HISTORY`].
    pub fn push(&mut self, tick: u64, hash: u64) {
        if self.cpu.len() == STATE_HASH_HISTORY {
            self.cpu.pop_front();
        }
        self.cpu.push_back((tick, hash));
    }

    /// Appends a GPU tick's hash, dropping the oldest past [`STATE_HASH_HISTORY`].
    pub fn push_gpu(&mut self, tick: u64, hash: u64) {
        if self.gpu.len() == STATE_HASH_HISTORY {
            self.gpu.pop_front();
        }
        self.gpu.push_back((tick, hash));
    }

    /// The GPU hash after GPU tick `tick`, if it has been simulated and is still kept.
    pub fn get_gpu(&self, tick: u64) -> Option<u64> {
        let first = self.gpu.front()?.0;
        let index = tick.checked_sub(first)? as usize;
        self.gpu.get(index).map(|&(_, hash)| hash)
    }

    /// The hash after `tick`, if it is still kept.
    pub fn get(&self, tick: u64) -> Option<u64> {
        let first = self.cpu.front()?.0;
        let index = tick.checked_sub(first)? as usize;
        self.cpu.get(index).map(|&(_, hash)| hash)
    }
}

/// A NaN or infinity found in simulation state: a bug to report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NonFiniteValue {
    /// The tick after which it was found (ticks completed).
    pub tick: u64,
    /// The simulation entity holding it (`None` for a resource).
    pub entity: Option<SimId>,
    /// The component or resource, by its registered name.
    pub component: &'static str,
    /// The field's path inside it.
    pub field: String,
}

/// One entity's part of the hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntityState {
    /// Its simulation id: what pairs it across runs and orders it in the hash.
    pub sim_id: SimId,
    /// Its entity in this world (a handle, e.g. for reading its `Name`).
    pub entity: Entity,
    /// The hash of all its simulation components.
    pub hash: u64,
    /// Each simulation component it has, by registered name, with its own hash.
    pub components: Vec<(&'static str, u64)>,
    /// Its first non-finite field, if any: `(component, field path)`.
    pub non_finite: Option<(&'static str, String)>,
}

/// Where one component of an archetype's entities lives.
#[derive(Clone, Copy)]
enum Place<'w> {
    /// A column of the archetype's table.
    Table(&'w Column),
    /// A sparse set.
    Sparse(&'w ComponentSparseSet),
}

/// What the hash reads of one archetype of simulation entities, and where it finds it.
struct Plan<'w> {
    sim_id: Place<'w>,
    /// Its `Transform`, when the entities hold a simulation component.
    transform: Option<Place<'w>>,
    /// The rules that can mark the `Transform` a copy, with the component each reads.
    copy_rules: Vec<(Place<'w>, TransformIsCopy)>,
    /// Its registered simulation components, in name order.
    components: Vec<(SimEntry, Place<'w>)>,
}

/// The name and tag `Transform` is hashed under.
const TRANSFORM: &str = "Transform";

/// What the hash needs of a world: the registry's ids in it and its archetypes' plans, kept by
/// the registry between ticks (see `hash_plan`).
struct Hashing<'w> {
    world: &'w World,
    plan: WorldPlan,
    transform_tag: u32,
}

impl<'w> Hashing<'w> {
    fn of(world: &'w World) -> Hashing<'w> {
        Hashing {
            world,
            plan: world_plan(&sim_registry(world), world),
            transform_tag: super::hasher::name_tag(TRANSFORM),
        }
    }

    /// Where the entities of an archetype stored in `table` keep component `id`.
    fn place(&self, table: &'w Table, id: ComponentId) -> Option<Place<'w>> {
        match self.world.components().get_info(id)?.storage_type() {
            StorageType::SparseSet => self.world.storages().sparse_sets.get(id).map(Place::Sparse),
            StorageType::Table => table.get_column(id).map(Place::Table),
        }
    }

    /// The plan for `archetype`, or `None` when it holds no simulation entity.
    fn plan(&self, archetype: &Archetype) -> Option<Plan<'w>> {
        if archetype.is_empty() {
            return None;
        }
        let ids = self.plan.archetype(archetype)?;
        let table = self.world.storages().tables.get(archetype.table_id())?;
        let mut components = Vec::with_capacity(ids.components.len());
        components.extend(
            ids.components
                .iter()
                .filter_map(|(entry, id)| Some((*entry, self.place(table, *id)?))),
        );
        let transform = ids.transform.and_then(|id| self.place(table, id));
        let copy_rules = ids
            .copy_rules
            .iter()
            .filter_map(|(id, rule)| Some((self.place(table, *id)?, rule.clone())))
            .collect();
        Some(Plan {
            sim_id: self.place(table, ids.sim_id)?,
            transform,
            copy_rules,
            components,
        })
    }

    /// The component at `place` of `entity`, which belongs to the planned archetype.
    fn read(&self, place: Place<'w>, entity: &ArchetypeEntity) -> Option<Ptr<'w>> {
        match place {
            // SAFETY: the entity is in the archetype, so its row is within the archetype's table.
            Place::Table(column) => Some(unsafe { column.get_data_unchecked(entity.table_row()) }),
            Place::Sparse(set) => set.get(entity.id()),
        }
    }

    /// The `SimId` of `entity` (in `plan`'s archetype).
    fn sim_id(&self, plan: &Plan<'w>, entity: &ArchetypeEntity) -> SimId {
        let ptr = self
            .read(plan.sim_id, entity)
            .expect("a simulation archetype holds SimId");
        // SAFETY: the place is `SimId`'s.
        *unsafe { ptr.deref::<SimId>() }
    }

    /// Feeds `entity` as `plan` says into `whole`, and each component alone into `parts` when
    /// given; returns whether anything was fed.
    fn feed(
        &self,
        plan: &Plan<'w>,
        entity: &ArchetypeEntity,
        whole: &mut StateHasher,
        mut parts: Option<(&mut StateHasher, &mut Vec<(&'static str, u64)>)>,
    ) -> bool {
        let mut fed = false;
        let copy = plan
            .copy_rules
            .iter()
            .any(|(place, rule)| self.read(*place, entity).is_some_and(|ptr| rule(ptr)));
        if let Some(place) = plan.transform
            && !copy
            && let Some(ptr) = self.read(place, entity)
        {
            // SAFETY: the place is `Transform`'s.
            let transform = unsafe { ptr.deref::<Transform>() };
            whole.begin_tagged(TRANSFORM, self.transform_tag);
            transform.hash_state(whole);
            if let Some((part, list)) = parts.as_mut() {
                part.clear();
                part.begin_tagged(TRANSFORM, self.transform_tag);
                transform.hash_state(part);
                list.push((TRANSFORM, part.finish()));
            }
            fed = true;
        }
        for (entry, place) in &plan.components {
            let Some(ptr) = self.read(*place, entity) else {
                continue;
            };
            whole.begin_tagged(entry.name, entry.tag);
            // SAFETY: the place is the entry's type's.
            unsafe { entry.hash(ptr, whole) };
            if let Some((part, list)) = parts.as_mut() {
                part.clear();
                part.begin_tagged(entry.name, entry.tag);
                // SAFETY: as above.
                unsafe { entry.hash(ptr, part) };
                list.push((entry.name, part.finish()));
            }
            fed = true;
        }
        fed
    }
}

/// An entity's `SimId` and its hash.
type EntityHash = (SimId, u64);

/// The first NaN or infinity among the entities, in `SimId` order: `(entity, component, field)`.
type EntityNonFinite = (SimId, &'static str, String);

/// Every simulation entity's hash in `SimId` order, and the first non-finite field among them.
type EntityHashes = (Vec<EntityHash>, Option<EntityNonFinite>);

/// The resources' hash, and the first non-finite field among them: `(resource, field path)`.
type ResourcesHash = (u64, Option<(&'static str, String)>);

/// How many rows of one archetype one piece of the hash covers.
const ROWS_PER_PIECE: usize = 256;

/// From this many simulation entities on, the pieces are hashed on rayon's global pool
/// (`RUSTING_THREADS`); fewer are hashed on the calling thread, where handing pieces out would
/// cost more than it saves.
const PARALLEL_FROM: usize = 4096;

/// What hashing some rows found: their entities' hashes in row order, and the first
/// non-finite field among them in `SimId` order.
struct Piece {
    hashes: Vec<EntityHash>,
    non_finite: Option<EntityNonFinite>,
}

impl Piece {
    /// Keeps `found` when no field with a lower `SimId` was noted before it.
    fn note(&mut self, found: EntityNonFinite) {
        if self
            .non_finite
            .as_ref()
            .is_none_or(|(first, ..)| found.0 < *first)
        {
            self.non_finite = Some(found);
        }
    }

    /// Hashes every entity of `runs` (rows of planned archetypes), in order.
    fn of<'h, 'w: 'h>(
        hashing: &Hashing<'w>,
        runs: impl IntoIterator<Item = (&'h Plan<'w>, &'h [ArchetypeEntity])>,
        rows: usize,
    ) -> Piece {
        let mut hasher = StateHasher::new();
        let mut piece = Piece {
            hashes: Vec::with_capacity(rows),
            non_finite: None,
        };
        for (plan, run) in runs {
            for row in run {
                hasher.clear();
                if hashing.feed(plan, row, &mut hasher, None) {
                    let sim_id = hashing.sim_id(plan, row);
                    piece.hashes.push((sim_id, hasher.finish()));
                    if let Some((component, field)) = hasher.non_finite.take() {
                        piece.note((sim_id, component, field));
                    }
                }
            }
        }
        piece
    }
}

/// The pieces of a large world's hash: runs of up to [`ROWS_PER_PIECE`] rows of simulation
/// archetypes, each with its archetype's plan. A piece only reads the world, and its result
/// depends on its rows alone, so the pieces may be hashed on any threads in any order and give
/// the same bytes.
struct Pieces<'h, 'w> {
    hashing: &'h Hashing<'w>,
    runs: Vec<(&'h Plan<'w>, &'w [ArchetypeEntity])>,
}

// SAFETY: a `Plan` holds references to the world's columns and sparse sets, whose change ticks
// sit in `UnsafeCell`s; the hash never touches those ticks and only reads component values
// (which are `Send + Sync`, as every component is) through a shared borrow of the world, held
// for the whole hash, so no thread can write while the pieces are read.
unsafe impl Sync for Pieces<'_, '_> {}

impl Pieces<'_, '_> {
    /// Hashes every piece on rayon's pool and joins them in order (rayon's indexed collect keeps
    /// the order, whichever thread ran each).
    fn hash(&self, rows: usize) -> Piece {
        let done: Vec<Piece> = (0..self.runs.len())
            .into_par_iter()
            .map(|k| Piece::of(self.hashing, [self.runs[k]], self.runs[k].1.len()))
            .collect();
        let mut joined = Piece {
            hashes: Vec::with_capacity(rows),
            non_finite: None,
        };
        for piece in done {
            joined.hashes.extend_from_slice(&piece.hashes);
            if let Some(found) = piece.non_finite {
                joined.note(found);
            }
        }
        joined
    }
}

/// `(sim id, hash)` of every simulation entity, in `SimId` order, and the first non-finite field
/// among them. A world of [`PARALLEL_FROM`] simulation entities or more is hashed in pieces on
/// several threads, joined in archetype and row order whatever thread hashed them, so the thread
/// count never changes a hash; a smaller one in one pass on the calling thread. The pairs are
/// small so that putting them in order (rarely needed: spawn order is `SimId` order) moves little.
fn entity_hashes(hashing: &Hashing) -> EntityHashes {
    let world = hashing.world;
    let mut plans: Vec<(Plan, &[ArchetypeEntity])> = Vec::with_capacity(world.archetypes().len());
    plans.extend(
        world
            .archetypes()
            .iter()
            .filter_map(|archetype| Some((hashing.plan(archetype)?, archetype.entities()))),
    );
    let rows: usize = plans.iter().map(|(_, rows)| rows.len()).sum();
    let Piece {
        mut hashes,
        non_finite,
    } = if rows >= PARALLEL_FROM && rayon::current_num_threads() > 1 {
        Pieces {
            hashing,
            runs: plans
                .iter()
                .flat_map(|(plan, rows)| rows.chunks(ROWS_PER_PIECE).map(move |run| (plan, run)))
                .collect(),
        }
        .hash(rows)
    } else {
        Piece::of(hashing, plans.iter().map(|(plan, run)| (plan, *run)), rows)
    };
    if !hashes.is_sorted_by_key(|(sim_id, _)| *sim_id) {
        hashes.sort_unstable_by_key(|(sim_id, _)| *sim_id);
    }
    (hashes, non_finite)
}

/// The simulation state of one entity, or `None` when it has none (a presentation entity, or one
/// without a `SimId`).
pub fn entity_state(world: &World, entity: Entity) -> Option<EntityState> {
    let hashing = Hashing::of(world);
    let location = world.entities().get_spawned(entity).ok()?;
    let archetype = world.archetypes().get(location.archetype_id)?;
    let plan = hashing.plan(archetype)?;
    let row = archetype.entities().get(location.archetype_row.index())?;
    state_of(&hashing, &plan, row)
}

fn state_of<'w>(
    hashing: &Hashing<'w>,
    plan: &Plan<'w>,
    row: &ArchetypeEntity,
) -> Option<EntityState> {
    let mut whole = StateHasher::new();
    let mut part = StateHasher::new();
    let mut components = Vec::new();
    if !hashing.feed(plan, row, &mut whole, Some((&mut part, &mut components))) {
        return None;
    }
    Some(EntityState {
        sim_id: hashing.sim_id(plan, row),
        entity: row.id(),
        hash: whole.finish(),
        components,
        non_finite: whole.non_finite,
    })
}

/// Every simulation entity's state with per-component hashes, in `SimId` order (for reports and
/// explanations; the per-tick hash uses the one-pass `entity_hashes`).
pub fn entity_states(world: &mut World) -> Vec<EntityState> {
    let world: &World = world;
    let hashing = Hashing::of(world);
    let mut states = Vec::new();
    for archetype in world.archetypes().iter() {
        let Some(plan) = hashing.plan(archetype) else {
            continue;
        };
        states.extend(
            archetype
                .entities()
                .iter()
                .filter_map(|row| state_of(&hashing, &plan, row)),
        );
    }
    states.sort_unstable_by_key(|state| state.sim_id);
    states
}

/// The hash of the simulation resources, and the first non-finite value among them.
pub fn resources_hash(world: &World) -> ResourcesHash {
    resources_hash_by(&world_plan(&sim_registry(world), world), world)
}

/// [`resources_hash`] with the world's plan already in hand.
fn resources_hash_by(plan: &WorldPlan, world: &World) -> ResourcesHash {
    let mut h = StateHasher::new();
    for (entry, id) in &plan.resolved.resources {
        h.begin_tagged(entry.name, entry.tag);
        match id.and_then(|id| world.get_resource_by_id(id)) {
            // SAFETY: the id is the component id of the entry's type in this world.
            Some(ptr) => unsafe { entry.hash(ptr, &mut h) },
            None => h.u32(u32::MAX),
        }
    }
    (h.finish(), h.non_finite)
}

/// The hash of the whole simulation state: every simulation entity's `SimId` and hash in `SimId`
/// order, then the resources.
pub fn world_state_hash(world: &mut World) -> u64 {
    world_state_hash_of(world)
}

/// [`world_state_hash`] through a shared borrow, for code that only reads the world (a run
/// condition, such as the per-system probes of `runtime::system_hashes`).
pub fn world_state_hash_of(world: &World) -> u64 {
    let ((hashes, _), (resources, _)) = entities_and_resources(world);
    combine(&hashes, resources)
}

/// [`entity_hashes`] and [`resources_hash`] of `world`, the two side by side on rayon's pool
/// when the world is large enough for its entities to be hashed in parallel (a resource can be
/// as large as a column: the physics id registry holds an entry per body).
fn entities_and_resources(world: &World) -> (EntityHashes, ResourcesHash) {
    let hashing = Hashing::of(world);
    let resources = || resources_hash_by(&hashing.plan, world);
    if rayon::current_num_threads() > 1 && world.entities().len() as usize >= PARALLEL_FROM {
        rayon::join(|| entity_hashes(&hashing), resources)
    } else {
        (entity_hashes(&hashing), resources())
    }
}

fn combine(hashes: &[EntityHash], resources: u64) -> u64 {
    let mut bytes = Vec::with_capacity(hashes.len() * 16 + 8);
    for (sim_id, hash) in hashes {
        bytes.extend_from_slice(&sim_id.0.to_le_bytes());
        bytes.extend_from_slice(&hash.to_le_bytes());
    }
    bytes.extend_from_slice(&resources.to_le_bytes());
    xxh3_64(&bytes)
}

/// The world hash computed from per-entity [`EntityState`]s (as reports and explanations use):
/// the same value as [`world_state_hash`] when both entity paths feed the same bytes.
pub fn combine_states(states: &[EntityState], world: &World) -> u64 {
    let hashes: Vec<EntityHash> = states.iter().map(|s| (s.sim_id, s.hash)).collect();
    combine(&hashes, resources_hash(world).0)
}

/// Hashes the world after tick `tick`, appends it to [`StateHashes`], and, with
/// `check_non_finite` (every determinism mode but `Off`), notes the first NaN or infinity. Called
/// by the engine's frame stepper after every fixed step.
pub fn record_state_hash(world: &mut World, tick: u64, check_non_finite: bool) -> u64 {
    let ((entities, entity_non_finite), (resources, resource_non_finite)) =
        entities_and_resources(world);
    let hash = combine(&entities, resources);
    let mut hashes = world.resource_mut::<StateHashes>();
    hashes.push(tick, hash);
    if check_non_finite && hashes.first_non_finite.is_none() {
        let found = entity_non_finite
            .map(|(entity, c, f)| (Some(entity), c, f))
            .or(resource_non_finite.map(|(c, f)| (None, c, f)));
        if let Some((entity, component, mut field)) = found {
            if field.is_empty() {
                field = non_finite_field(world, entity, component).unwrap_or_default();
            }
            let mut hashes = world.resource_mut::<StateHashes>();
            let report = NonFiniteValue {
                tick,
                entity,
                component,
                field,
            };
            bevy::log::error!("non-finite value in simulation state: {report:?}");
            hashes.first_non_finite = Some(report);
        }
    }
    hash
}

/// The path of the first NaN or infinite field of `component` (by registered name) on the
/// simulation entity `entity`, or of the resource when `entity` is `None`: the hash notes only
/// which component held one, and this finds the field from its `visit_fields` afterwards.
fn non_finite_field(world: &mut World, entity: Option<SimId>, component: &str) -> Option<String> {
    if component == TRANSFORM {
        let transform = world
            .query::<(&SimId, &Transform)>()
            .iter(world)
            .find(|(id, _)| Some(**id) == entity)
            .map(|(_, transform)| *transform)?;
        return super::sim_state::fields_of(&transform)
            .into_iter()
            .find(|(_, value)| value.parse::<f64>().is_ok_and(|v| !v.is_finite()))
            .map(|(path, _)| path);
    }
    let registry = sim_registry(world);
    let entry = *registry.by_name(component)?;
    let id = world.components().get_id(entry.type_id)?;
    let fields = match entity {
        None => {
            let ptr = world.get_resource_by_id(id)?;
            // SAFETY: `id` is the entry's type's component id in this world.
            unsafe { entry.fields(ptr) }
        }
        Some(sim_id) => {
            let holder = world
                .query::<(Entity, &SimId)>()
                .iter(world)
                .find(|(_, id)| **id == sim_id)
                .map(|(e, _)| e)?;
            let ptr = world.entity(holder).get_by_id(id).ok()?;
            // SAFETY: as above.
            unsafe { entry.fields(ptr) }
        }
    };
    fields
        .into_iter()
        .find(|(_, value)| value.parse::<f64>().is_ok_and(|v| !v.is_finite()))
        .map(|(path, _)| path)
}
