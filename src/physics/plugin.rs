//! Wiring: the physics resources, and the fixed system that copies bodies into the CPU solver and
//! back.
//!
//! [`cpu_physics_step`] is the first system of the engine's fixed chain (`SimSet::Physics`). It
//! gathers every CPU body (an entity with a `Transform` and a `Collider`, whose `PhysicsBody` class
//! is not `Gpu`) sorted by `Entity`, runs [`cpu::step`] with `FrameTime::fixed_delta`, and writes
//! positions, rotations, velocities, `Sleeping` and `PhysicsId` back. This module must never do
//! physics itself, and never touch GPU-class bodies.

use bevy::app::{App, FixedUpdate, Plugin};
use bevy::prelude::{Entity, IntoScheduleConfigs, Local, Transform, World};

use super::components::{
    BodyClass, BodyKind, Collider, CollisionLayers, PhysicsBody, PhysicsId, RigidBody, Sleeping,
};
use super::cpu::{self, SolverBody, StepParams, StepScratch};
use super::resources::{CollisionEvents, PhysicsIdRegistry, PhysicsSettings};
use super::world::PhysicsWorld;
use crate::runtime::{DeterminismMode, DeterminismSupport, FrameTime, SimSet};

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
            .add_systems(FixedUpdate, cpu_physics_step.in_set(SimSet::Physics));
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
    bodies: Vec<SolverBody>,
    entities: Vec<Entity>,
    had_id: Vec<Option<PhysicsId>>,
    was_sleeping: Vec<bool>,
    scratch: StepScratch,
}

/// Copies CPU bodies into the solver, steps it one tick, and copies them back.
pub fn cpu_physics_step(world: &mut World, mut buffers: Local<CpuStepBuffers>) {
    let buffers = &mut *buffers;
    gather(world, buffers);
    let ids = world
        .resource_mut::<PhysicsIdRegistry>()
        .sync(&buffers.entities);
    for (body, id) in buffers.bodies.iter_mut().zip(&ids) {
        body.id = *id;
    }
    let params = StepParams {
        dt: world.resource::<FrameTime>().fixed_delta,
        tick: world.resource::<FrameTime>().fixed_tick,
        settings: world.resource::<PhysicsSettings>().clone(),
    };
    world.resource_scope(|_, mut physics: bevy::prelude::Mut<PhysicsWorld>| {
        cpu::step(
            &params,
            &mut buffers.bodies,
            &mut physics,
            &mut buffers.scratch,
        );
    });
    write_back(world, buffers);
    world.resource_mut::<CollisionEvents>().events = buffers.scratch.events.clone();
}

fn gather(world: &mut World, buffers: &mut CpuStepBuffers) {
    let mut query = world.query::<(
        Entity,
        &Transform,
        &Collider,
        Option<&RigidBody>,
        Option<&PhysicsBody>,
        Option<&CollisionLayers>,
        Option<&PhysicsId>,
        bevy::ecs::query::Has<Sleeping>,
    )>();
    let mut gathered: Vec<(SolverBody, Option<PhysicsId>, bool)> = query
        .iter(world)
        .filter(|row| row.4.is_none_or(|b| b.class == BodyClass::Cpu))
        .map(
            |(entity, transform, collider, rigid, _, layers, id, sleeping)| {
                let rigid = rigid.copied().unwrap_or_else(RigidBody::fixed);
                let at_rest = rigid.linear_velocity == bevy::math::Vec3::ZERO
                    && rigid.angular_velocity == bevy::math::Vec3::ZERO;
                let body = SolverBody {
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
                };
                (body, id.copied(), sleeping)
            },
        )
        .collect();
    gathered.sort_unstable_by_key(|(body, _, _)| body.entity);
    buffers.bodies.clear();
    buffers.entities.clear();
    buffers.had_id.clear();
    buffers.was_sleeping.clear();
    for (body, id, sleeping) in gathered {
        buffers.entities.push(body.entity);
        buffers.bodies.push(body);
        buffers.had_id.push(id);
        buffers.was_sleeping.push(sleeping);
    }
}

fn write_back(world: &mut World, buffers: &CpuStepBuffers) {
    for (k, body) in buffers.bodies.iter().enumerate() {
        let mut entity = world.entity_mut(body.entity);
        if buffers.had_id[k] != Some(body.id) {
            entity.insert(body.id);
        }
        if buffers.was_sleeping[k] != body.sleeping {
            if body.sleeping {
                entity.insert(Sleeping);
            } else {
                entity.remove::<Sleeping>();
            }
        }
        if body.kind == BodyKind::Static {
            continue;
        }
        if let Some(mut transform) = entity.get_mut::<Transform>() {
            transform.translation = body.position;
            transform.rotation = body.rotation;
        }
        if let Some(mut rigid) = entity.get_mut::<RigidBody>() {
            rigid.linear_velocity = body.linear_velocity;
            rigid.angular_velocity = body.angular_velocity;
        }
    }
}
