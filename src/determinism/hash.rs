//! [`world_state_hash`] and [`StateHashes`]: one hash of the simulation state after every tick.
//!
//! The hash covers exactly the specification's simulation state:
//!
//! - per simulation entity (one holding a [`SimId`]), in `SimId` order, tagged by its `SimId`:
//!   `Transform` of every CPU-simulated body (an entity with a
//!   `Collider` that is not GPU-class) and of every entity a fixed system moves (`Tween`,
//!   `PlayerController`, `PlatformerController`); `RigidBody`, `Collider`, `CollisionLayers`,
//!   `PhysicsBody`, the `Sleeping` marker, `PhysicsId`, `PlayerController`, `PlatformerController`,
//!   `Tween`, `Pickup`, `Counter`, `BurstEmitter`;
//! - resources: `PhysicsWorld`, `PhysicsSettings`, `FrameTime::fixed_tick` and `fixed_delta`,
//!   `RandomSeed`, `DeterminismMode`, `PhysicsIdRegistry`, `GpuPhysicsCommands` as queued, and
//!   `SimIdAllocator` (the next id a spawn gets).
//!
//! No `Entity` goes into the hash or decides its order: bevy hands out entity ids to resources,
//! windows, cameras and meshes too, so presentation would move them, and a restored entity gets
//! another one. Entities without a `SimId` (presentation, resources) are not simulation state.
//!
//! GPU bodies are hashed on the device, per GPU tick, into `StateHashes::gpu`.
//!
//! Presentation never counts: `FrameTime::frame` and the frame deltas, `HudElement`, burst
//! particles, sound cues, names, and a GPU-class body's `Transform` (a readback copy). Entities are
//! hashed each alone and combined in `SimId` order, so neither the thread count nor the table order
//! can change the result. This module must never write to the world it hashes.

use std::collections::VecDeque;

use bevy::ecs::query::Has;
use bevy::ecs::resource::IsResource;
use bevy::ecs::world::EntityRef;
use bevy::prelude::{Component, Entity, Resource, Transform, Without, World};
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use super::hasher::{StateHash, StateHasher};
use crate::gameplay::{
    BurstEmitter, Counter, Pickup, PlatformerController, PlayerController, Tween,
};
use crate::physics::gpu::GpuPhysicsCommands;
use crate::physics::world::PhysicsWorld;
use crate::physics::{
    BodyClass, Collider, CollisionLayers, PhysicsBody, PhysicsId, PhysicsIdRegistry,
    PhysicsSettings, RigidBody, Sleeping,
};
use crate::runtime::{DeterminismMode, FrameTime, RandomSeed, SimId, SimIdAllocator};

/// How many ticks of hashes [`StateHashes`] keeps.
pub const STATE_HASH_HISTORY: usize = 1024;

/// A NaN or infinity found in simulation state: a bug to report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NonFiniteValue {
    /// The tick after which it was found (ticks completed).
    pub tick: u64,
    /// The simulation entity holding it (`None` for a resource).
    pub entity: Option<SimId>,
    /// The component or resource.
    pub component: &'static str,
    /// The field.
    pub field: &'static str,
}

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

/// One entity's part of the hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntityState {
    /// Its simulation id: what pairs it across runs and orders it in the hash.
    pub sim_id: SimId,
    /// Its entity in this world (a handle, e.g. for reading its `Name`).
    pub entity: Entity,
    /// The hash of all its simulation components.
    pub hash: u64,
    /// Each simulation component it has, by name, with its own hash.
    pub components: Vec<(&'static str, u64)>,
    /// Its first non-finite field, if any: `(component, field)`.
    pub non_finite: Option<(&'static str, &'static str)>,
}

type Hashes = fn(&EntityRef, &mut StateHasher) -> bool;

fn component<T: Component + StateHash>(entity: &EntityRef, h: &mut StateHasher) -> bool {
    match entity.get::<T>() {
        Some(value) => {
            value.hash_state(h);
            true
        }
        None => false,
    }
}

fn sleeping(entity: &EntityRef, _: &mut StateHasher) -> bool {
    entity.contains::<Sleeping>()
}

/// Whether the entity's `Transform` is simulation state.
fn simulates(entity: &EntityRef) -> bool {
    let gpu = entity
        .get::<PhysicsBody>()
        .is_some_and(|b| b.class == BodyClass::Gpu);
    (entity.contains::<Collider>() && !gpu)
        || entity.contains::<Tween>()
        || entity.contains::<PlayerController>()
        || entity.contains::<PlatformerController>()
}

fn transform(entity: &EntityRef, h: &mut StateHasher) -> bool {
    simulates(entity) && component::<Transform>(entity, h)
}

/// The simulation components, in the order they are hashed.
const COMPONENTS: [(&str, Hashes); 13] = [
    ("Transform", transform),
    ("RigidBody", component::<RigidBody>),
    ("Collider", component::<Collider>),
    ("CollisionLayers", component::<CollisionLayers>),
    ("PhysicsBody", component::<PhysicsBody>),
    ("Sleeping", sleeping),
    ("PhysicsId", component::<PhysicsId>),
    ("PlayerController", component::<PlayerController>),
    ("PlatformerController", component::<PlatformerController>),
    ("Tween", component::<Tween>),
    ("Pickup", component::<Pickup>),
    ("Counter", component::<Counter>),
    ("BurstEmitter", component::<BurstEmitter>),
];

/// The simulation state of one entity, or `None` when it has none (a presentation entity, or one
/// without a `SimId`).
pub fn entity_state(world: &World, entity: Entity) -> Option<EntityState> {
    let entity_ref = world.get_entity(entity).ok()?;
    let sim_id = *entity_ref.get::<SimId>()?;
    let mut part = StateHasher::new();
    // The entity's own hash covers its values only (the world hash adds the `SimId`s).
    let mut whole = StateHasher::new();
    let mut components = Vec::new();
    for (name, hashes) in COMPONENTS {
        part.clear();
        part.begin(name);
        if hashes(&entity_ref, &mut part) {
            components.push((name, part.finish()));
            whole.begin(name);
            hashes(&entity_ref, &mut whole);
        }
    }
    if components.is_empty() {
        return None;
    }
    Some(EntityState {
        sim_id,
        entity,
        hash: whole.finish(),
        components,
        non_finite: whole.non_finite,
    })
}

/// What the fast hash pass asks of each entity.
type RowQuery = (
    &'static SimId,
    Option<&'static Transform>,
    Option<&'static RigidBody>,
    Option<&'static Collider>,
    Option<&'static CollisionLayers>,
    Option<&'static PhysicsBody>,
    Has<Sleeping>,
    Option<&'static PhysicsId>,
    Option<&'static PlayerController>,
    Option<&'static PlatformerController>,
    Option<&'static Tween>,
    Option<&'static Pickup>,
    Option<&'static Counter>,
    Option<&'static BurstEmitter>,
);

/// What the fast hash pass reads of each entity.
type Row<'a> = bevy::ecs::query::QueryItem<'a, 'a, RowQuery>;

/// Feeds one row exactly as [`entity_state`] feeds the same entity; returns whether it has any
/// simulation component.
fn hash_row(row: &Row, h: &mut StateHasher) -> bool {
    let (
        _,
        transform,
        body,
        collider,
        layers,
        class,
        asleep,
        id,
        player,
        platformer,
        tween,
        pickup,
        counter,
        emitter,
    ) = *row;
    let gpu = class.is_some_and(|c| c.class == BodyClass::Gpu);
    let simulates =
        (collider.is_some() && !gpu) || tween.is_some() || player.is_some() || platformer.is_some();
    let mut any = asleep;
    let mut feed = |name: &'static str, value: Option<&dyn StateHash>, h: &mut StateHasher| {
        if let Some(value) = value {
            h.begin(name);
            value.hash_state(h);
            any = true;
        }
    };
    feed(
        "Transform",
        transform.filter(|_| simulates).map(|t| t as &dyn StateHash),
        h,
    );
    feed("RigidBody", body.map(|v| v as &dyn StateHash), h);
    feed("Collider", collider.map(|v| v as &dyn StateHash), h);
    feed("CollisionLayers", layers.map(|v| v as &dyn StateHash), h);
    feed("PhysicsBody", class.map(|v| v as &dyn StateHash), h);
    if asleep {
        h.begin("Sleeping");
    }
    feed("PhysicsId", id.map(|v| v as &dyn StateHash), h);
    feed("PlayerController", player.map(|v| v as &dyn StateHash), h);
    feed(
        "PlatformerController",
        platformer.map(|v| v as &dyn StateHash),
        h,
    );
    feed("Tween", tween.map(|v| v as &dyn StateHash), h);
    feed("Pickup", pickup.map(|v| v as &dyn StateHash), h);
    feed("Counter", counter.map(|v| v as &dyn StateHash), h);
    feed("BurstEmitter", emitter.map(|v| v as &dyn StateHash), h);
    any
}

/// An entity's `SimId`, its hash, and its first non-finite `(component, field)`.
type EntityHash = (SimId, u64, Option<(&'static str, &'static str)>);

/// `(sim id, hash, first non-finite field)` of every simulation entity, in `SimId` order, from one
/// pass over the archetypes.
fn entity_hashes(world: &mut World) -> Vec<EntityHash> {
    let mut query = world.query_filtered::<RowQuery, Without<IsResource>>();
    let mut hasher = StateHasher::new();
    let mut hashes = Vec::with_capacity(query.iter(world).len());
    for row in query.iter(world) {
        hasher.clear();
        if hash_row(&row, &mut hasher) {
            hashes.push((*row.0, hasher.finish(), hasher.non_finite));
        }
    }
    hashes.sort_unstable_by_key(|(sim_id, ..)| *sim_id);
    hashes
}

/// Every simulation entity's state with per-component hashes, in `SimId` order (for reports and
/// explanations; the per-tick hash uses the one-pass `entity_hashes`).
pub fn entity_states(world: &mut World) -> Vec<EntityState> {
    let mut query = world.query_filtered::<(&SimId, Entity), Without<IsResource>>();
    let mut entities: Vec<(SimId, Entity)> = query.iter(world).map(|(&id, e)| (id, e)).collect();
    entities.sort_unstable();
    let world: &World = world;
    entities
        .par_iter()
        .with_min_len(256)
        .filter_map(|&(_, e)| entity_state(world, e))
        .collect()
}

/// The hash of the simulation resources, and the first non-finite value among them.
pub fn resources_hash(world: &World) -> (u64, Option<(&'static str, &'static str)>) {
    let mut h = StateHasher::new();
    fn feed<T: Resource + StateHash>(world: &World, name: &'static str, h: &mut StateHasher) {
        h.begin(name);
        match world.get_resource::<T>() {
            Some(value) => value.hash_state(h),
            None => h.u32(u32::MAX),
        }
    }
    feed::<PhysicsWorld>(world, "PhysicsWorld", &mut h);
    feed::<PhysicsSettings>(world, "PhysicsSettings", &mut h);
    feed::<FrameTime>(world, "FrameTime", &mut h);
    feed::<RandomSeed>(world, "RandomSeed", &mut h);
    feed::<DeterminismMode>(world, "DeterminismMode", &mut h);
    feed::<PhysicsIdRegistry>(world, "PhysicsIdRegistry", &mut h);
    feed::<GpuPhysicsCommands>(world, "GpuPhysicsCommands", &mut h);
    feed::<SimIdAllocator>(world, "SimIdAllocator", &mut h);
    (h.finish(), h.non_finite)
}

/// The hash of the whole simulation state: every simulation entity's `SimId` and hash in `SimId`
/// order, then the resources.
pub fn world_state_hash(world: &mut World) -> u64 {
    let hashes = entity_hashes(world);
    combine(&hashes, resources_hash(world).0)
}

fn combine(hashes: &[EntityHash], resources: u64) -> u64 {
    let mut bytes = Vec::with_capacity(hashes.len() * 16 + 8);
    for (sim_id, hash, _) in hashes {
        bytes.extend_from_slice(&sim_id.0.to_le_bytes());
        bytes.extend_from_slice(&hash.to_le_bytes());
    }
    bytes.extend_from_slice(&resources.to_le_bytes());
    xxh3_64(&bytes)
}

/// The world hash computed from per-entity [`EntityState`]s (as reports and explanations use):
/// the same value as [`world_state_hash`] when both entity paths feed the same bytes.
pub fn combine_states(states: &[EntityState], world: &World) -> u64 {
    let hashes: Vec<EntityHash> = states.iter().map(|s| (s.sim_id, s.hash, None)).collect();
    combine(&hashes, resources_hash(world).0)
}

/// Hashes the world after tick `tick`, appends it to [`StateHashes`], and notes the first NaN or
/// infinity (unless the project's mode is `Off`). Called by `App` after every fixed step.
pub fn record_state_hash(world: &mut World, tick: u64) -> u64 {
    let entities = entity_hashes(world);
    let (resources, resource_non_finite) = resources_hash(world);
    let hash = combine(&entities, resources);
    let checking = world
        .get_resource::<DeterminismMode>()
        .is_some_and(|m| *m != DeterminismMode::Off);
    let mut hashes = world.resource_mut::<StateHashes>();
    hashes.push(tick, hash);
    if checking && hashes.first_non_finite.is_none() {
        let found = entities
            .iter()
            .find_map(|(entity, _, bad)| bad.map(|(c, f)| (Some(*entity), c, f)))
            .or(resource_non_finite.map(|(c, f)| (None, c, f)));
        if let Some((entity, component, field)) = found {
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

#[cfg(test)]
mod tests {
    use super::COMPONENTS;

    /// `StateHasher::begin` tags a component by its name's length and first letter; every
    /// simulation component and resource must get its own tag.
    #[test]
    fn component_and_resource_tags_are_distinct() {
        let mut names: Vec<&str> = COMPONENTS.iter().map(|(name, _)| *name).collect();
        names.extend([
            "PhysicsWorld",
            "PhysicsSettings",
            "FrameTime",
            "RandomSeed",
            "DeterminismMode",
            "PhysicsIdRegistry",
            "SimIdAllocator",
        ]);
        let mut tags: Vec<(usize, u8)> = names.iter().map(|n| (n.len(), n.as_bytes()[0])).collect();
        tags.sort();
        tags.dedup();
        assert_eq!(tags.len(), names.len(), "two names share a tag: {names:?}");
    }
}
