//! Wiring: the physics resources, and the fixed system that copies bodies into the CPU solver and
//! back.
//!
//! [`cpu_physics_step`] is the first system of the engine's fixed chain (`SimSet::Physics`). It
//! gathers every CPU body (an entity with a `Transform` and a `Collider`, whose `PhysicsBody` class
//! is not `Gpu`) and every `Joint`, each sorted by `SimId`, runs [`cpu::step`] with
//! `FrameTime::fixed_delta`, and writes positions, rotations and velocities back, with the
//! `broken` flag of joints that broke and their `JointEvents`; `Sleeping` and `PhysicsId` changes go through
//! commands, applied before the next set of the chain runs. It is an ordinary system, so game
//! systems that touch none of its data need no order against it. This module must never do
//! physics itself, and never touch GPU-class bodies.

use bevy::app::{App, FixedUpdate, Plugin};
use bevy::ecs::query::Has;
use bevy::math::Vec3;
use bevy::prelude::{Commands, Entity, IntoScheduleConfigs, Local, Query, Res, ResMut, Transform};

use super::components::{
    BodyClass, BodyKind, Collider, CollisionLayers, LockedAxes, PhysicsBody, PhysicsId, RigidBody,
    Sleeping,
};
use super::cpu::joints::SolverJoint;
use super::cpu::{self, SolverBody, StepParams, StepScratch};
use super::joint::Joint;
use super::level::LevelMeshes;
use super::resources::{CollisionEvents, JointEvents, PhysicsIdRegistry, PhysicsSettings};
use super::world::PhysicsWorld;
use crate::runtime::{DeterminismMode, DeterminismSupport, FrameTime, SimSet};
use crate::state::{SimId, SimRegistry, SimStateAppExt, SnapshotAppExt};

/// The name the CPU solver declares its determinism under.
pub const CPU_SOLVER_PART: &str = "physics.cpu";

/// The physics resources and the CPU solver's fixed system.
#[derive(Clone, Debug, Default)]
pub struct PhysicsPlugin {
    /// What the world simulates with.
    pub settings: PhysicsSettings,
}

impl Plugin for PhysicsPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(self.settings.clone())
            .insert_resource(PhysicsIdRegistry::default())
            .insert_resource(PhysicsWorld::default())
            .insert_resource(CollisionEvents::default())
            .insert_resource(JointEvents::default())
            .init_resource::<LevelMeshes>()
            // Meshes never change and are named by their content, so a restored collider finds
            // its mesh under the same id: nothing to copy.
            .ignore_in_snapshots::<LevelMeshes>()
            .register_sim_resource::<PhysicsSettings>()
            .register_sim_resource::<PhysicsIdRegistry>()
            .register_sim_resource::<PhysicsWorld>()
            .register_sim_resource::<CollisionEvents>()
            .register_sim_resource::<JointEvents>()
            .register_sim_component::<RigidBody>()
            .register_sim_component::<Collider>()
            .register_sim_component::<CollisionLayers>()
            .register_sim_component::<LockedAxes>()
            .register_sim_component::<PhysicsBody>()
            .register_sim_component::<Sleeping>()
            .register_sim_component::<PhysicsId>()
            .register_sim_component::<Joint>()
            .add_systems(FixedUpdate, cpu_physics_step.in_set(SimSet::Physics));
        // A GPU body's `Transform` is a read-back copy of state on the device: not hashed.
        app.world_mut()
            .get_resource_or_init::<SimRegistry>()
            .transform_is_copy_when::<PhysicsBody>(|body| body.class == BodyClass::Gpu);
        if let Some(mut support) = app.world_mut().get_resource_mut::<DeterminismSupport>() {
            // Only IEEE + - * /, sqrt and sim_math, in a fixed order: see docs/determinism.md for the
            // cross-build comparison behind this.
            support.declare(CPU_SOLVER_PART, DeterminismMode::CrossPlatform);
        }
    }
}

/// Buffers the system keeps between ticks (not simulation state).
#[derive(Default)]
pub struct CpuStepBuffers {
    /// The bodies as the query gave them, with their slot ids and sleep markers.
    gathered: Vec<(SolverBody, Option<PhysicsId>, bool)>,
    bodies: Vec<SolverBody>,
    sim_ids: Vec<SimId>,
    all_bodies: Vec<SimId>,
    had_id: Vec<Option<PhysicsId>>,
    was_sleeping: Vec<bool>,
    /// Whether each body entered the step asleep (marked, at rest and dynamic).
    entered_asleep: Vec<bool>,
    joints: Vec<SolverJoint>,
    scratch: StepScratch,
}

/// The bodies the CPU solver reads and writes.
type BodyQuery<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static SimId,
        &'static mut Transform,
        &'static Collider,
        Option<&'static mut RigidBody>,
        Option<&'static PhysicsBody>,
        Option<&'static CollisionLayers>,
        Option<&'static PhysicsId>,
        Has<Sleeping>,
        Option<&'static LockedAxes>,
    ),
>;

/// The joints the CPU solver reads, and marks when they break.
type JointQuery<'w, 's> = Query<'w, 's, (Entity, &'static SimId, &'static mut Joint)>;

/// The events the step writes.
type EventsOut<'w> = (ResMut<'w, CollisionEvents>, Option<ResMut<'w, JointEvents>>);

/// Copies CPU bodies and joints into the solver, steps it one tick, and copies them back.
#[allow(clippy::too_many_arguments)]
pub fn cpu_physics_step(
    mut commands: Commands,
    time: Res<FrameTime>,
    settings: Res<PhysicsSettings>,
    mut registry: ResMut<PhysicsIdRegistry>,
    mut physics: ResMut<PhysicsWorld>,
    (mut events, joint_events): EventsOut,
    mut query: BodyQuery,
    mut joint_query: JointQuery,
    mut buffers: Local<CpuStepBuffers>,
    meshes: Option<Res<LevelMeshes>>,
) {
    let buffers = &mut *buffers;
    gather(&query, buffers);
    buffers.joints.clear();
    buffers.joints.extend(
        joint_query
            .iter()
            .map(|(entity, &sim_id, joint)| SolverJoint {
                sim_id,
                entity,
                joint: *joint,
            }),
    );
    buffers.joints.sort_unstable_by_key(|j| j.sim_id);
    // Slots go to every collider body, GPU ones included (their slot is their place in the GPU
    // buffers), in `SimId` order. The CPU bodies are a sorted subset of that list, so one walk
    // along both finds each one's slot.
    let ids = registry.sync(&buffers.all_bodies);
    let mut slot = 0;
    for body in buffers.bodies.iter_mut() {
        while buffers
            .all_bodies
            .get(slot)
            .is_some_and(|id| *id < body.sim_id)
        {
            slot += 1;
        }
        if buffers.all_bodies.get(slot) == Some(&body.sim_id) {
            body.id = ids[slot];
        }
    }
    let params = StepParams {
        dt: time.fixed_delta,
        tick: time.fixed_tick,
        settings: settings.clone(),
        meshes: meshes.as_deref().cloned().unwrap_or_default(),
    };
    cpu::step(
        &params,
        &mut buffers.bodies,
        &mut buffers.joints,
        &mut physics,
        &mut buffers.scratch,
    );
    write_back(&mut commands, &mut query, buffers);
    for broke in &buffers.scratch.joints.events {
        if let Ok((.., mut joint)) = joint_query.get_mut(broke.entity) {
            joint.broken = true;
        }
    }
    events.events.clone_from(&buffers.scratch.events);
    events.contacts.clone_from(&buffers.scratch.contacts);
    if let Some(mut joint_events) = joint_events {
        joint_events
            .broke
            .clone_from(&buffers.scratch.joints.events);
    }
}

/// Reads every collider body: its `SimId` into `all_bodies`, and a CPU body's solver record into
/// `bodies` (with its slot id and sleep marker beside it), both sorted by `SimId`.
fn gather(query: &BodyQuery, buffers: &mut CpuStepBuffers) {
    let gathered = &mut buffers.gathered;
    gathered.clear();
    buffers.all_bodies.clear();
    let all_bodies = &mut buffers.all_bodies;
    gathered.extend(
        query
            .iter()
            .inspect(|row| all_bodies.push(*row.1))
            .filter(|row| row.5.is_none_or(|b| b.class == BodyClass::Cpu))
            .map(
                |(entity, &sim_id, transform, collider, rigid, _, layers, id, sleeping, locks)| {
                    let rigid = rigid.copied().unwrap_or_else(RigidBody::fixed);
                    let at_rest =
                        rigid.linear_velocity == Vec3::ZERO && rigid.angular_velocity == Vec3::ZERO;
                    let body = SolverBody {
                        sim_id,
                        entity,
                        id: PhysicsId(0),
                        kind: rigid.kind,
                        position: transform.translation,
                        rotation: transform.rotation,
                        linear_velocity: rigid.linear_velocity,
                        angular_velocity: rigid.angular_velocity,
                        mass: rigid.mass,
                        gravity_scale: rigid.gravity_scale,
                        collider: *collider,
                        layers: layers.copied().unwrap_or_default(),
                        // Giving a sleeping body a velocity wakes it.
                        sleeping: sleeping && at_rest && rigid.kind == BodyKind::Dynamic,
                        locks: locks.copied().unwrap_or_default(),
                    };
                    (body, id.copied(), sleeping)
                },
            ),
    );
    // The query yields each archetype's bodies in the order they were spawned, so the list is a
    // few runs already in `SimId` order: the stable sort merges runs (ids are unique, so the
    // order is the same as any sort's).
    gathered.sort_by_key(|(body, _, _)| body.sim_id);
    buffers.all_bodies.sort();
    buffers.bodies.clear();
    buffers.sim_ids.clear();
    buffers.had_id.clear();
    buffers.was_sleeping.clear();
    buffers.entered_asleep.clear();
    for &(body, id, sleeping) in gathered.iter() {
        buffers.entered_asleep.push(body.sleeping);
        buffers.sim_ids.push(body.sim_id);
        buffers.bodies.push(body);
        buffers.had_id.push(id);
        buffers.was_sleeping.push(sleeping);
    }
}

fn write_back(commands: &mut Commands, query: &mut BodyQuery, buffers: &CpuStepBuffers) {
    for (k, body) in buffers.bodies.iter().enumerate() {
        if buffers.had_id[k] != Some(body.id) {
            commands.entity(body.entity).insert(body.id);
        }
        if buffers.was_sleeping[k] != body.sleeping {
            if body.sleeping {
                commands.entity(body.entity).insert(Sleeping);
            } else {
                commands.entity(body.entity).remove::<Sleeping>();
            }
        }
        // A body asleep before and after the step did not move, and its velocities are zero in
        // the world already: nothing to write (and no change for `Changed` to report).
        if body.kind == BodyKind::Static || (buffers.entered_asleep[k] && body.sleeping) {
            continue;
        }
        let Ok((_, _, mut transform, _, rigid, ..)) = query.get_mut(body.entity) else {
            continue;
        };
        if transform.translation != body.position || transform.rotation != body.rotation {
            transform.translation = body.position;
            transform.rotation = body.rotation;
        }
        if let Some(mut rigid) = rigid {
            rigid.linear_velocity = body.linear_velocity;
            rigid.angular_velocity = body.angular_velocity;
        }
    }
}
