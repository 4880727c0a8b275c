//! Wiring: the physics resources, and the fixed system that copies bodies into the CPU solver and
//! back.
//!
//! [`cpu_physics_step`] is the first system of the engine's fixed chain (`SimSet::Physics`). It
//! reads every CPU body (an entity with a `Transform` and a `Collider`, whose `PhysicsBody` class
//! is not `Gpu`) into the solver's list, sorted by `SimId` (`physics::body_copy`, which keeps the
//! list between ticks and reads again only what changed), and every `Joint`, runs [`cpu::step`]
//! with `FrameTime::fixed_delta`, and writes positions, rotations and velocities back, with the
//! `broken` flag of joints that broke and their `JointEvents`; `Sleeping` and `PhysicsId` changes
//! go through commands, applied before the next set of the chain runs. It is an ordinary system,
//! so game systems that touch none of its data need no order against it. In a world at rest it
//! leaves the tick out while nothing it reads changes, marking changed what the tick would have
//! marked (see [`Rest`]). This module must never do physics itself, and never touch GPU-class
//! bodies.

use bevy::app::{App, FixedUpdate, Plugin};
use bevy::ecs::change_detection::{DetectChanges, DetectChangesMut};
use bevy::prelude::{Commands, Entity, IntoScheduleConfigs, Local, Query, Ref, Res, ResMut};

use super::body_copy::{BodyCopy, BodyQuery, Carriers, any_body_changed};
use super::components::{
    BodyClass, BodyKind, Collider, CollisionLayers, LockedAxes, PhysicsBody, PhysicsId, RigidBody,
    Sleeping,
};
use super::cpu::joints::SolverJoint;
use super::cpu::{self, StepParams, StepScratch};
use super::joint::Joint;
use super::level::LevelMeshes;
use super::resources::{CollisionEvents, JointEvents, PhysicsIdRegistry, PhysicsSettings};
use super::world::PhysicsWorld;
use crate::runtime::{DeterminismMode, DeterminismSupport, FrameTime, SimSet};
use crate::state::{SimId, SimRegistry, SimStateAppExt, SnapshotAppExt, SnapshotRegistry};

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
    /// The CPU bodies, kept between ticks (see [`BodyCopy`]).
    copy: BodyCopy,
    joints: Vec<SolverJoint>,
    scratch: StepScratch,
    /// Where the world stands in coming to rest (see [`Rest`]).
    rest: Rest,
    /// The CPU kinematic bodies the census saw: a tick at rest writes their velocities back.
    kinematic: Vec<Entity>,
}

/// A world at rest: every body asleep, fixed, or kinematic without a velocity, and no joint
/// holding. Such a tick (`cpu::step`'s tick at rest) finds no pair and solves nothing, and once
/// it has run on a world it leaves that world as it found it; running it again on the same world
/// with the same settings changes nothing. So once a tick at rest is seen to change nothing, the
/// following ticks are left out, for as long as nothing it reads has changed since: no
/// component of a body or joint written, added or removed by anyone else, no body or joint come
/// or gone, no physics resource written, no restore, and the ticks following one another at the
/// same step. A sleeping world then costs a look at each body's change ticks, where a tick at rest
/// costs reading every body into the solver and back. A tick left out marks changed what the tick
/// at rest marks (the physics resources, and the `RigidBody` of kinematic bodies, whose
/// velocities it writes back), so a game's change detection reads the same whether a tick was
/// left out or, after a restore, run.
#[derive(Default)]
enum Rest {
    /// The last tick was not a tick at rest that changed nothing in the world's bodies.
    #[default]
    Moving,
    /// The last tick was a tick at rest that wrote nothing to the bodies and sent no event; the
    /// next one, if it is one too, is compared whole with what it was given.
    Settling,
    /// The last tick was a tick at rest that changed nothing at all, given what `Census` counts.
    Still(Census),
}

/// What a tick left out at rest must find unchanged besides the change ticks: the tick expected,
/// the step, the restores begun, and how many bodies and joints there are and which of the
/// bodies carry each optional component (a component removed shows only in these counts).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Census {
    next_tick: u64,
    dt_bits: u32,
    restores: u64,
    carriers: Carriers,
    joints: usize,
}

/// The joints the CPU solver reads, and marks when they break.
type JointQuery<'w, 's> = Query<'w, 's, (Entity, Ref<'static, SimId>, &'static mut Joint)>;

/// The resources the step reads or writes besides its bodies, for the check that nothing changed.
type Watched<'w> = (
    Option<Res<'w, SnapshotRegistry>>,
    Option<Res<'w, LevelMeshes>>,
);

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
    (mut events, mut joint_events): EventsOut,
    mut query: BodyQuery,
    mut joint_query: JointQuery,
    mut buffers: Local<CpuStepBuffers>,
    (snapshots, meshes): Watched,
) {
    let buffers = &mut *buffers;
    // Anything that changed the step's inputs since the last tick: a tick at rest left out only
    // while none did (see `Rest`).
    let touched = settings.is_changed()
        || registry.is_changed()
        || physics.is_changed()
        || events.is_changed()
        || joint_events.as_ref().is_some_and(|e| e.is_changed())
        || meshes.as_ref().is_some_and(|m| m.is_changed());
    // Only a world coming to rest or at rest needs its census; a moving one skips the look.
    let census = (!touched && !matches!(buffers.rest, Rest::Moving))
        .then(|| {
            let kinematic = &mut buffers.kinematic;
            unchanged_census(
                &time,
                snapshots.as_deref(),
                &mut query,
                &mut joint_query,
                kinematic,
            )
        })
        .flatten();
    if let (Rest::Still(still), Some(census)) = (&buffers.rest, census)
        && *still == census
    {
        buffers.rest = Rest::Still(Census {
            next_tick: census.next_tick + 1,
            ..census
        });
        // What the tick at rest would have marked changed, marked the same: its resources, and
        // the velocities it writes back to kinematic bodies. A game's `Changed` filters then see
        // the same whether a tick was left out or (after a restore) run.
        physics.set_changed();
        registry.set_changed();
        events.set_changed();
        if let Some(joint_events) = joint_events.as_mut() {
            joint_events.set_changed();
        }
        for &entity in &buffers.kinematic {
            if let Ok((.., Some(mut rigid), _, _, _, _, _)) = query.get_mut(entity) {
                rigid.set_changed();
            }
        }
        return;
    }
    // A tick that may come to rest is compared whole with what it was given.
    let before = matches!(buffers.rest, Rest::Settling).then(|| {
        (
            physics.clone(),
            registry.clone(),
            events.clone(),
            joint_events.as_deref().cloned(),
        )
    });
    let restores = snapshots.as_deref().map(SnapshotRegistry::restores);
    let kept = buffers.copy.read(&mut query, restores);
    buffers.joints.clear();
    buffers.joints.extend(
        joint_query
            .iter()
            .map(|(entity, sim_id, joint)| SolverJoint {
                sim_id: *sim_id,
                entity,
                joint: *joint,
            }),
    );
    buffers.joints.sort_unstable_by_key(|j| j.sim_id);
    if kept && !registry.is_changed() {
        // The same bodies as last tick and a registry no one else wrote: every body keeps the
        // slot it was given, and syncing would change nothing. The registry is marked changed as
        // a sync marks it, so a game's change detection reads the same.
        registry.set_changed();
        #[cfg(debug_assertions)]
        check_slots(&mut registry.clone(), &buffers.copy);
    } else {
        give_slots(&mut registry, &mut buffers.copy);
    }
    let params = StepParams {
        dt: time.fixed_delta,
        tick: time.fixed_tick,
        settings: settings.clone(),
        meshes: meshes.as_deref().cloned().unwrap_or_default(),
    };
    // Last tick's contact reports give the pairs the narrow phase skips their normal. They are
    // lent to the step, not copied: it swaps them out before it writes this tick's, and this
    // tick's come back the same way below.
    std::mem::swap(&mut buffers.scratch.contacts, &mut events.contacts);
    cpu::step(
        &params,
        &mut buffers.copy.bodies,
        &mut buffers.joints,
        &mut physics,
        &mut buffers.scratch,
    );
    // The bodies the solve moved (a tick at rest solves nothing, and moves no dynamic body).
    let moved: &[u32] = if buffers.scratch.at_rest {
        &[]
    } else {
        &buffers.scratch.solve.moving
    };
    // After a kept read, the bodies the step could change, where it knows them (a tick at rest
    // moves kinematic bodies without listing them).
    let involved = (kept && !buffers.scratch.at_rest).then_some(&buffers.scratch.involved.list[..]);
    let wrote = buffers
        .copy
        .write_back(&mut commands, &mut query, restores, moved, involved);
    for broke in &buffers.scratch.joints.events {
        if let Ok((.., mut joint)) = joint_query.get_mut(broke.entity) {
            joint.broken = true;
        }
    }
    events.events.clone_from(&buffers.scratch.events);
    std::mem::swap(&mut events.contacts, &mut buffers.scratch.contacts);
    if let Some(joint_events) = joint_events.as_mut() {
        joint_events
            .broke
            .clone_from(&buffers.scratch.joints.events);
    }
    let quiet = buffers.scratch.at_rest
        && !wrote
        && buffers.scratch.events.is_empty()
        && buffers.scratch.joints.events.is_empty();
    buffers.rest = match (quiet, before, census) {
        (false, ..) => Rest::Moving,
        (true, Some((world_was, registry_was, events_were, joint_events_were)), Some(census))
            if world_was == *physics
                && registry_was == *registry
                && events_were == *events
                && joint_events_were.as_ref() == joint_events.as_deref() =>
        {
            Rest::Still(Census {
                next_tick: census.next_tick + 1,
                ..census
            })
        }
        (true, ..) => Rest::Settling,
    };
}

/// What the step's bodies and joints look like now, or `None` when one of their components was
/// written or added since the step last ran (by anyone but the step itself), or the world has no
/// snapshot registry to count its restores. Lists the CPU kinematic bodies in `kinematic`.
/// Gives every collider body its slot, GPU ones included (their slot is their place in the GPU
/// buffers), in `SimId` order. The CPU bodies are a sorted subset of that list, so one walk along
/// both finds each one's slot.
fn give_slots(registry: &mut PhysicsIdRegistry, copy: &mut BodyCopy) {
    let ids = registry.sync(&copy.all_bodies);
    let mut slot = 0;
    for body in copy.bodies.iter_mut() {
        while copy
            .all_bodies
            .get(slot)
            .is_some_and(|id| *id < body.sim_id)
        {
            slot += 1;
        }
        if copy.all_bodies.get(slot) == Some(&body.sim_id) {
            body.id = ids[slot];
        }
    }
}

/// Checks that a kept list's slot ids are what a sync of an unchanged registry gives (debug
/// builds, every tick that skips the sync).
#[cfg(debug_assertions)]
fn check_slots(registry: &mut PhysicsIdRegistry, copy: &BodyCopy) {
    let mut given = BodyCopy::default();
    given.bodies.clone_from(&copy.bodies);
    given.all_bodies.clone_from(&copy.all_bodies);
    give_slots(registry, &mut given);
    assert!(
        given
            .bodies
            .iter()
            .zip(&copy.bodies)
            .all(|(a, b)| a.id == b.id),
        "a kept body's slot id is not the registry's"
    );
}

fn unchanged_census(
    time: &FrameTime,
    snapshots: Option<&SnapshotRegistry>,
    query: &mut BodyQuery,
    joint_query: &mut JointQuery,
    kinematic: &mut Vec<Entity>,
) -> Option<Census> {
    kinematic.clear();
    let mut census = Census {
        next_tick: time.fixed_tick,
        dt_bits: time.fixed_delta.to_bits(),
        restores: snapshots?.restores(),
        ..Census::default()
    };
    if any_body_changed(query) {
        return None;
    }
    census.carriers = Carriers::of(query);
    let mut lens = query.transmute_lens::<(Entity, Option<&RigidBody>, Option<&PhysicsBody>)>();
    kinematic.extend(
        lens.query()
            .iter()
            .filter(|(_, rigid, class)| {
                class.is_none_or(|c| c.class == BodyClass::Cpu)
                    && rigid.is_some_and(|r| r.kind == BodyKind::Kinematic)
            })
            .map(|(entity, ..)| entity),
    );
    for (_, sim_id, joint) in joint_query.iter_mut() {
        census.joints += 1;
        if sim_id.is_changed() || joint.is_changed() {
            return None;
        }
    }
    Some(census)
}
