//! [`GpuPhysicsPlugin`]: GPU bodies in the engine's ticks.
//!
//! When the app is finished (`App::setup`), the plugin looks for bodies whose `PhysicsBody` class
//! is `Gpu`. With none, it does nothing and never opens a device. With some, it opens the process's
//! Vulkan device (one per process, shared by every app), declares the device's mode as the part
//! `physics.gpu` (so the startup check refuses a `CrossPlatform` project on lavapipe), uploads the
//! bodies sorted by `PhysicsId` slot, and from then on:
//!
//! - at the end of every fixed tick `n` (`FixedPostUpdate`), takes the GPU bodies spawned and
//!   despawned during the tick (by their `PhysicsId` slots), the commands stamped for GPU tick `n`
//!   from [`GpuPhysicsCommands`] and the CPU bodies' colliders as tick `n` left them, and queues
//!   GPU tick `n` with them (an app's first GPU body spawned after setup opens the device then);
//! - after every frame (`PostUpdate`), simulates at most [`MAX_GPU_TICKS_PER_FRAME`] queued GPU
//!   ticks (the rest wait for the next frame), appends each tick's GPU hash to `StateHashes::gpu`,
//!   and copies the bodies' poses back into their `Transform`s (a presentation copy: fixed systems
//!   must not read it);
//! - at the start of fixed tick `n` (before CPU physics), hands CPU simulation the events of GPU
//!   tick `n - GPU_EVENT_LAG` in [`GpuEvents`], simulating late GPU ticks on the spot if the frame
//!   budget left them behind (a stall, counted in [`GpuPhysicsStatus`]). Events therefore reach CPU
//!   systems on a fixed tick whatever the frame pacing, never "when they arrive".
//!
//! Without a device, an app holding GPU bodies does not start (`AppError::Gpu`): GPU bodies are
//! never silently left still. The runtime is outside the `World`'s entities; snapshots hold it
//! through the hooks in `snapshot` (queued GPU ticks simulated, bodies read back, put back on
//! restore). This module must never read a clock or step the GPU from anything but the queued
//! ticks.

use bevy::app::{App as BevyApp, FixedPostUpdate, FixedUpdate, Plugin, PostUpdate};
use bevy::ecs::query::{Added, Changed, Or, QueryState, With};
use bevy::prelude::{
    Component, Entity, IntoScheduleConfigs, Mut, NonSendMut, Query, Res, ResMut, Resource,
    Transform, World,
};

use super::physics_bodies::{GpuBodyInit, GpuCollider, GpuRule};
use super::physics_events::GpuEvent;
use super::physics_world::GpuPhysicsConfig;
use super::runtime::GpuPhysicsStatus;
use super::runtime::{GpuRuntime, GpuTickInput, open_runtime};
use super::tick_commands::GpuPhysicsCommands;
use crate::physics::components::{
    BodyClass, Collider, CollisionLayers, PhysicsBody, PhysicsId, RigidBody,
};
use crate::physics::resources::{PhysicsIdRegistry, PhysicsSettings};
use crate::runtime::{FrameTime, SimSet};
use crate::state::{SimId, SimStateAppExt, SnapshotAppExt, SnapshotRegistry, StateHashes};

/// Fixed ticks between a GPU tick and the CPU tick that receives its events: events of GPU tick
/// `n` reach CPU systems during fixed tick `n + GPU_EVENT_LAG`. Two ticks leave the GPU a frame
/// to catch up at one tick a frame before CPU simulation has to wait for it.
pub const GPU_EVENT_LAG: u64 = 2;

/// GPU ticks simulated after one frame at most; the rest wait for the next frame (or for a fixed
/// tick that needs their events).
pub const MAX_GPU_TICKS_PER_FRAME: usize = 8;

/// A GPU body's rule and custom values (simulation state, uploaded with the body). In a scene:
/// `"GpuBehaviour": { "rule": { "EmitEvery": { "period": 0.5 } }, "custom": [1, 0, 0, 0] }`
/// (both fields optional; the rule `"None"` by default).
#[derive(
    Component,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    rusting_macros::SimState,
)]
#[serde(default, deny_unknown_fields)]
pub struct GpuBehaviour {
    /// What the body emits.
    pub rule: GpuRule,
    /// Game values the GPU carries, hashes and reads back.
    pub custom: [f32; 4],
}

/// The GPU events CPU simulation sees during this fixed tick: exactly those GPU tick
/// `fixed_tick - GPU_EVENT_LAG` produced, sorted by `(tick, slot, kind)`, with the entity of each
/// event's body (simulation state: fixed systems react to it).
#[derive(Resource, Clone, Debug, Default, PartialEq, rusting_macros::SimState)]
#[component(map_entities)]
pub struct GpuEvents {
    /// The GPU tick the events come from (`None` before the first delivery).
    pub tick: Option<u64>,
    /// `(body, event)`.
    #[sim_state(with = hash_gpu_events)]
    pub events: Vec<(Entity, GpuEvent)>,
}

impl bevy::ecs::entity::MapEntities for GpuEvents {
    fn map_entities<M: bevy::ecs::entity::EntityMapper>(&mut self, mapper: &mut M) {
        for (entity, _) in &mut self.events {
            *entity = mapper.get_mapped(*entity);
        }
    }
}

/// The events without their entities (handles; each event's slot names its body).
fn hash_gpu_events(events: &[(Entity, GpuEvent)], hasher: &mut crate::state::StateHasher) {
    hasher.u64(events.len() as u64);
    for (_, event) in events {
        crate::state::SimState::hash_state(event, hasher);
    }
}

/// Runs GPU bodies with the engine's ticks (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct GpuPhysicsPlugin;

impl Plugin for GpuPhysicsPlugin {
    fn build(&self, app: &mut BevyApp) {
        app.insert_resource(GpuPhysicsCommands::default())
            .insert_resource(GpuEvents::default())
            .insert_resource(GpuPhysicsStatus::default())
            .register_sim_resource::<GpuPhysicsCommands>()
            .register_sim_resource::<GpuEvents>()
            .register_sim_component::<GpuBehaviour>()
            .ignore_in_snapshots::<GpuPhysicsStatus>()
            .add_systems(FixedUpdate, deliver_gpu_events.before(SimSet::Physics))
            .add_systems(FixedPostUpdate, queue_gpu_tick)
            .add_systems(PostUpdate, step_gpu_frame);
        // The GPU bodies' state lives on the device: snapshots read it back and restores upload it.
        app.world_mut()
            .get_resource_or_init::<SnapshotRegistry>()
            .hold_external(super::snapshot::GPU_STATE);
    }

    fn finish(&self, app: &mut BevyApp) {
        start(app.world_mut());
    }
}

/// Uploads the GPU bodies, if there are any, and declares the device's mode.
fn start(world: &mut World) {
    let mut query = world.query::<(&SimId, Entity, &PhysicsBody, &Collider)>();
    let mut colliders: Vec<(SimId, Entity, bool)> = query
        .iter(world)
        .map(|(&sim_id, entity, body, _)| (sim_id, entity, body.class == BodyClass::Gpu))
        .collect();
    if !colliders.iter().any(|(.., gpu)| *gpu) {
        return;
    }
    colliders.sort_unstable();
    // Every collider body gets its PhysicsId now, in `SimId` order, as the CPU solver would; GPU
    // bodies use theirs as their slot.
    let sim_ids: Vec<SimId> = colliders.iter().map(|(id, ..)| *id).collect();
    let ids = world.resource_mut::<PhysicsIdRegistry>().sync(&sim_ids);
    let mut bodies = Vec::new();
    let mut slots = Vec::new();
    for ((_, entity, gpu), id) in colliders.iter().zip(ids) {
        world.entity_mut(*entity).insert(id);
        if !gpu {
            continue;
        }
        bodies.push(body_init(world.entity(*entity), id.0));
        slots.push((id.0, *entity));
    }
    let config = GpuPhysicsConfig {
        capacity: (sim_ids.len() as u32).next_power_of_two().max(16),
        ..GpuPhysicsConfig::default()
    };
    if let Err(reason) = open_runtime(world, config, &bodies, slots) {
        world.resource_mut::<GpuPhysicsStatus>().unavailable =
            Some(format!("the scene has GPU bodies, but {reason}"));
    }
}

/// What a CPU body's collider is read from.
type CpuColliderData = (
    &'static SimId,
    &'static Collider,
    &'static Transform,
    Option<&'static PhysicsBody>,
    Option<&'static CollisionLayers>,
);

/// A GPU body as its entity holds it now, for slot `slot`.
fn body_init(e: bevy::ecs::world::EntityRef, slot: u32) -> GpuBodyInit {
    let transform = e.get::<Transform>().copied().unwrap_or_default();
    let body = e
        .get::<RigidBody>()
        .copied()
        .unwrap_or_else(RigidBody::fixed);
    let behaviour = e.get::<GpuBehaviour>().copied().unwrap_or_default();
    GpuBodyInit {
        slot,
        translation: transform.translation,
        rotation: transform.rotation,
        linear_velocity: body.linear_velocity,
        angular_velocity: body.angular_velocity,
        collider: *e.get::<Collider>().expect("queried with a collider"),
        body,
        layers: e.get::<CollisionLayers>().copied().unwrap_or_default(),
        rule: behaviour.rule,
        custom: behaviour.custom,
    }
}

/// Collider bodies whose class may have just become `Gpu`: what an app without GPU bodies looks
/// at each tick (so a CPU-only app does not scan every body every tick).
type NewClassFilter = Or<(Changed<PhysicsBody>, Added<Collider>)>;

/// Ends fixed tick `n` for the GPU: queues GPU tick `n` with the GPU bodies spawned and
/// despawned during the tick, the commands stamped for it and the CPU colliders as they are now.
/// The first GPU body in an app that started without one opens the device here; if none works,
/// the run stops with the reason (a GPU body is never left still).
fn queue_gpu_tick(
    world: &mut World,
    gpu_query: &mut QueryState<(Entity, &SimId, &PhysicsBody, &Collider)>,
    new_class: &mut QueryState<&PhysicsBody, (With<Collider>, NewClassFilter)>,
    cpu_query: &mut QueryState<CpuColliderData>,
) {
    let tick = world.resource::<FrameTime>().fixed_tick;
    if !world.contains_non_send::<GpuRuntime>() {
        if !new_class
            .iter(world)
            .any(|body| body.class == BodyClass::Gpu)
        {
            return;
        }
        start(world);
        let Some(mut runtime) = world.get_non_send_mut::<GpuRuntime>() else {
            let reason = world.resource::<GpuPhysicsStatus>().unavailable.clone();
            panic!(
                "a GPU body was spawned on fixed tick {tick}, but {}",
                reason.unwrap_or_else(|| "GPU physics did not start".to_owned())
            );
        };
        runtime.start_at(tick);
    }
    let mut present: Vec<(Entity, SimId)> = gpu_query
        .iter(world)
        .filter(|(_, _, body, _)| body.class == BodyClass::Gpu)
        .map(|(entity, &sim_id, ..)| (entity, sim_id))
        .collect();
    present.sort_unstable_by_key(|(entity, _)| *entity);
    let tracked = world.non_send::<GpuRuntime>().tracked();
    let mut removed: Vec<u32> = tracked
        .iter()
        .filter(|(entity, _)| present.binary_search_by_key(*entity, |(e, _)| *e).is_err())
        .map(|(_, slot)| *slot)
        .collect();
    removed.sort_unstable();
    present.retain(|(entity, _)| !tracked.contains_key(entity));
    let mut added = Vec::with_capacity(present.len());
    for (entity, sim_id) in present {
        // A body spawned after CPU physics ran this tick gets its slot from the next tick's
        // physics step, and joins the GPU at the boundary after that tick.
        let Some(id) = world.resource::<PhysicsIdRegistry>().get(sim_id) else {
            continue;
        };
        if world.get::<PhysicsId>(entity).is_none() {
            world.entity_mut(entity).insert(id);
        }
        added.push((body_init(world.entity(entity), id.0), entity));
    }
    added.sort_unstable_by_key(|(body, _)| body.slot);

    let mut cpu: Vec<_> = cpu_query
        .iter(world)
        .filter(|(.., body, _)| body.is_none_or(|b| b.class == BodyClass::Cpu))
        // GPU bodies do not meet level meshes: the device has no triangles.
        .filter(|(_, collider, ..)| !matches!(collider.shape, crate::physics::Shape::Mesh { .. }))
        .map(|(&sim_id, collider, transform, _, layers)| {
            (
                sim_id,
                GpuCollider {
                    collider: *collider,
                    translation: transform.translation,
                    rotation: transform.rotation,
                    layers: layers.copied().unwrap_or_default(),
                },
            )
        })
        .collect();
    cpu.sort_unstable_by_key(|(sim_id, _)| *sim_id);
    let gravity = world.resource::<PhysicsSettings>().gravity;
    let commands = world
        .resource_mut::<GpuPhysicsCommands>()
        .take_through(tick);
    let mut runtime = world.non_send_mut::<GpuRuntime>();
    runtime.queue(GpuTickInput {
        tick,
        commands,
        colliders: cpu.into_iter().map(|(_, collider)| collider).collect(),
        gravity,
        removed,
        added,
    });
    let bodies = runtime.tracked().len();
    world.resource_mut::<GpuPhysicsStatus>().bodies = bodies;
}

/// Simulates one queued GPU tick and records its hash; panics on a device error, which the
/// engine cannot recover from mid-run (the message names it).
fn step(runtime: &mut GpuRuntime, hashes: &mut StateHashes) -> bool {
    match runtime.step_one() {
        Ok(Some((tick, hash))) => {
            hashes.push_gpu(tick, hash);
            true
        }
        Ok(None) => false,
        Err(error) => panic!("GPU physics failed: {error}"),
    }
}

/// Hands CPU simulation the events of GPU tick `fixed_tick - GPU_EVENT_LAG`, simulating that tick
/// first if the frame budget left it behind.
fn deliver_gpu_events(
    time: Res<FrameTime>,
    runtime: Option<NonSendMut<GpuRuntime>>,
    mut delivered: ResMut<GpuEvents>,
    mut status: ResMut<GpuPhysicsStatus>,
    mut hashes: ResMut<StateHashes>,
) {
    let Some(mut runtime) = runtime else {
        return;
    };
    let Some(source) = time.fixed_tick.checked_sub(GPU_EVENT_LAG) else {
        delivered.tick = None;
        delivered.events.clear();
        return;
    };
    if runtime.completed() <= source {
        status.stalls += 1;
        while runtime.completed() <= source && step(&mut runtime, &mut hashes) {
            status.stalled_ticks += 1;
        }
    }
    delivered.tick = Some(source);
    delivered.events = runtime.take_events(source);
}

/// After a frame: simulates up to [`MAX_GPU_TICKS_PER_FRAME`] queued GPU ticks and copies the
/// bodies' poses into their `Transform`s.
fn step_gpu_frame(
    runtime: Option<NonSendMut<GpuRuntime>>,
    mut hashes: ResMut<StateHashes>,
    mut transforms: Query<&mut Transform, With<PhysicsId>>,
) {
    let Some(mut runtime) = runtime else {
        return;
    };
    let mut stepped = 0;
    while stepped < MAX_GPU_TICKS_PER_FRAME && step(&mut runtime, &mut hashes) {
        stepped += 1;
    }
    if stepped > 0 {
        write_back(&runtime, &mut transforms);
    }
}

/// Every GPU body's entity and pose as read back; panics on a device error, which the engine
/// cannot recover from mid-run (the message names it).
fn poses(runtime: &GpuRuntime) -> Vec<(Entity, Transform)> {
    let states = match runtime.read_bodies() {
        Ok(states) => states,
        Err(error) => panic!("GPU physics read-back failed: {error}"),
    };
    states
        .into_iter()
        .filter_map(|state| {
            let pose = Transform::from_translation(state.translation).with_rotation(state.rotation);
            Some((runtime.entity_of(state.slot)?, pose))
        })
        .collect()
}

/// Copies every GPU body's pose into its `Transform` (presentation; the scale is left alone).
fn write_back(runtime: &GpuRuntime, transforms: &mut Query<&mut Transform, With<PhysicsId>>) {
    for (entity, pose) in poses(runtime) {
        if let Ok(mut transform) = transforms.get_mut(entity) {
            transform.translation = pose.translation;
            transform.rotation = pose.rotation;
        }
    }
}

/// Simulates the queued GPU ticks below `tick`, so that GPU tick `tick - 1` (the one fixed tick
/// `tick - 1` queued) is done, and returns its hash: a fixed tick's GPU state, for a check that
/// compares runs tick by tick. `None` without GPU bodies, or before the first GPU tick. Running
/// GPU ticks earlier than the frame would changes no simulated bit (each runs from its queued
/// input; its events wait for their fixed tick), only when the presentation copy is refreshed.
pub fn complete_gpu_ticks_before(world: &mut World, tick: u64) -> Option<u64> {
    let last = tick.checked_sub(1)?;
    world.resource_scope(|world, mut hashes: Mut<StateHashes>| {
        let mut runtime = world.get_non_send_mut::<GpuRuntime>()?;
        while runtime.completed() <= last && step(&mut runtime, &mut hashes) {}
        Some(())
    })?;
    gpu_hash_of(world, last)
}

/// The hash of GPU tick `gpu_tick`, if it has been simulated.
pub fn gpu_hash_of(world: &World, gpu_tick: u64) -> Option<u64> {
    let runtime = world.get_non_send::<GpuRuntime>()?;
    let hashes = runtime.hashes();
    let index = hashes
        .binary_search_by_key(&gpu_tick, |(tick, _)| *tick)
        .ok()?;
    Some(hashes[index].1)
}

/// Simulates every queued GPU tick and copies the poses back: the end of a headless run, so its
/// report has a GPU hash for every tick. Does nothing in an app without GPU bodies.
pub fn finish_gpu_ticks(world: &mut World) {
    let poses = world.resource_scope(|world, mut hashes: Mut<StateHashes>| {
        let mut runtime = world.get_non_send_mut::<GpuRuntime>()?;
        while step(&mut runtime, &mut hashes) {}
        Some(poses(&runtime))
    });
    let mut transforms = world.query_filtered::<&mut Transform, With<PhysicsId>>();
    for (entity, pose) in poses.unwrap_or_default() {
        if let Ok(mut transform) = transforms.get_mut(world, entity) {
            transform.translation = pose.translation;
            transform.rotation = pose.rotation;
        }
    }
}

/// `(tick, hash)` of every GPU tick the app has simulated (empty without GPU bodies).
pub fn gpu_hashes(world: &World) -> Vec<(u64, u64)> {
    world
        .get_non_send::<GpuRuntime>()
        .map(|runtime| runtime.hashes().to_vec())
        .unwrap_or_default()
}
