//! The CPU rigid-body solver: plain Rust over slices, one stage a file.
//!
//! [`step`] advances a set of bodies, sorted by `SimId`, by one fixed tick:
//!
//! 1. [`joints::resolve`]: each joint's bodies found by `SimId`; then
//!    [`broad_phase::find_pairs_in`]: sweep and prune on the axis of greatest spread over the
//!    bodies near anything that moves (every body when a sleeping one is disturbed), pairs sorted
//!    into body order, less the pairs a joint keeps from colliding (in a large world, the bounds,
//!    the groups of the sweep's strips and the sort on the pool's threads).
//! 2. [`sleep::wake_touched`]: sleeping bodies near a moving one wake, with everything resting on
//!    them. Then [`involved::Involved::gather`] lists the bodies the rest of the tick can reach
//!    (those the substeps move, and those in a pair or a joint); the per-body lists of the
//!    stages below are filled for these alone, so a sleeping heap far from anything moving costs
//!    them nothing (in a large world, their mass properties are worked out on the pool's threads).
//! 3. [`contacts::collide_pairs`]: the narrow phase, in parallel, one manifold per pair.
//! 4. [`solver::prepare`] and [`joints::prepare`]: the joints and manifolds coloured so that no
//!    two of a colour share a moving body ([`colouring`]), the contacts built four at a time into
//!    SIMD lanes ([`jacobians`], [`batches`]), warm-started from [`PhysicsWorld`] by feature (in a
//!    large world, each manifold's stored warm starts are found beside the colouring), and the
//!    joints measured and warm-started by joint.
//! 5. [`solver::solve`]: `SOLVER_SUBSTEPS` substeps, each gravity ([`integrate::gravity`]), warm
//!    start, a biased velocity pass with soft position correction, positions and rotations
//!    ([`integrate::positions`], rotation through `sim_math`), and a relaxing pass: eight velocity
//!    passes in all, each taking the colours in order, a colour's joints before its contacts.
//!    Then restitution, the points' results (in a large world, listed in parts on the pool's
//!    threads), and [`joints::finish`]: joints past their break force break.
//! 6. [`continuous::stop_fast_bodies`]: a body that moved more than half its smallest extent is
//!    swept along its path and put back at the first static or kinematic surface it meets.
//! 7. [`sleep::update`]: groups of touching bodies at rest for `SLEEP_STEPS` ticks are found, and
//!    fall asleep ([`sleep::fall_asleep`]) once the events are done.
//! 8. [`events::update`]: which pairs started or stopped touching; warm starts are stored. In a
//!    large world it runs beside the sleep counters, and its touching pairs beside its warm
//!    starts, on the pool's threads (neither side reads what the other writes).
//!
//! [`overlap::overlaps_at_start`] runs the broad and narrow phases once, without stepping, to find
//! bodies that a scene places inside each other.
//!
//! The ECS only copies bodies in and out (see `physics::plugin` and `physics::body_copy`). Threads
//! may run the narrow phase and constraint preparation, whose results are collected in pair order,
//! the batches of one colour, which share no moving body, per-body stages in which a body reads
//! and writes only its own values (bounds, mass properties, gravity, moves, the tick's end),
//! lists split into parts that each fill their own slots (the sweep's strip groups, the batches,
//! the points' results), the sort of distinct pairs, and stages that share nothing either writes
//! (`both`); the colours run in a fixed order and everything else that accumulates runs
//! sequentially in body order, so the bits never depend on the thread count. No
//! stage reads a clock, a global generator or `HashMap` order, and the math is IEEE `+ - * /`,
//! `sqrt` and `sim_math` in a fixed order, four lanes at a time in the contact solve (`lanes`),
//! never fused.

pub mod batches;
pub mod body_state;
pub mod box_box;
pub mod broad_phase;
pub mod colouring;
pub mod contacts;
pub mod continuous;
pub mod events;
pub mod integrate;
pub mod involved;
pub mod jacobians;
pub mod joints;
pub mod lanes;
pub mod manifold;
pub mod math;
pub mod mesh_contacts;
pub mod overlap;
pub mod rows;
pub mod shared_velocities;
pub mod sleep;
pub mod softness;
pub mod solver;
pub mod sphere_box;

use bevy::math::{Quat, Vec3};
use bevy::prelude::Entity;
use rayon::prelude::*;

use broad_phase::Scope;

use super::components::{BodyKind, Collider, CollisionLayers, LockedAxes, PhysicsId, Shape};
use super::level::LevelMeshes;
use super::resources::{self, CollisionEvent, ContactReport, PhysicsSettings};
use super::world::PhysicsWorld;
use crate::runtime::{guard_worker, sim_math};
use crate::state::SimId;

/// One body as the solver sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverBody {
    /// The body's simulation id; bodies are passed sorted by it, and every order and key the
    /// solver keeps is by it.
    pub sim_id: SimId,
    /// The body's entity: a handle for copying results back and for events, never an order.
    pub entity: Entity,
    /// Its stable slot id.
    pub id: PhysicsId,
    /// Dynamic, kinematic or static. A dynamic body without a positive finite mass counts as
    /// static.
    pub kind: BodyKind,
    /// World position of the shape's centre.
    pub position: Vec3,
    /// World rotation (unit quaternion).
    pub rotation: Quat,
    /// m/s.
    pub linear_velocity: Vec3,
    /// rad/s about the world axes.
    pub angular_velocity: Vec3,
    /// kg.
    pub mass: f32,
    /// Multiplies gravity.
    pub gravity_scale: f32,
    /// Shape and material.
    pub collider: Collider,
    /// Collision filtering.
    pub layers: CollisionLayers,
    /// Whether the body sleeps. The step may wake it or put it to sleep.
    pub sleeping: bool,
    /// World axes the body may not move along or turn about (dynamic bodies).
    pub locks: LockedAxes,
}

impl SolverBody {
    /// Whether the solver moves this body with forces and contacts this tick.
    pub fn is_awake_dynamic(&self) -> bool {
        self.kind == BodyKind::Dynamic && !self.sleeping
    }

    /// Whether the body is kinematic and moving.
    pub fn is_moving_kinematic(&self) -> bool {
        self.kind == BodyKind::Kinematic
            && (self.linear_velocity != Vec3::ZERO || self.angular_velocity != Vec3::ZERO)
    }

    /// Whether the body may move this tick, and so start a pair with anything or wake a sleeping
    /// body: awake and dynamic, or kinematic and moving.
    pub fn moves(&self) -> bool {
        self.is_awake_dynamic() || self.is_moving_kinematic()
    }

    /// What the step first makes of a body as it was read: a dynamic body without a positive
    /// finite mass counts as static, only a dynamic body sleeps, and a locked axis carries no
    /// velocity. Doing it twice changes nothing, so a record the step has already seen may be
    /// given to it again.
    pub fn settle_inputs(&mut self) {
        if self.kind == BodyKind::Dynamic && !(self.mass.is_finite() && self.mass > 0.0) {
            self.kind = BodyKind::Static;
        }
        if self.kind != BodyKind::Dynamic {
            self.sleeping = false;
        } else if self.locks.any() {
            self.linear_velocity = self.locks.clear_translation(self.linear_velocity);
            self.angular_velocity = self.locks.clear_rotation(self.angular_velocity);
        }
    }
}

/// What one step needs besides the bodies.
#[derive(Clone, Debug, PartialEq)]
pub struct StepParams {
    /// Seconds the tick simulates (`FrameTime::fixed_delta`).
    pub dt: f32,
    /// The tick being simulated (ticks completed before it), for event stamps.
    pub tick: u64,
    /// Gravity, tolerances, sleep thresholds.
    pub settings: PhysicsSettings,
    /// The level meshes `Shape::Mesh` colliders name.
    pub meshes: LevelMeshes,
}

/// Mass properties and orientation of a body for one tick.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Motion {
    /// 0 for bodies the contacts cannot move.
    pub inv_mass: f32,
    /// World inverse inertia tensor, as rows.
    pub inv_inertia: [Vec3; 3],
    /// World directions of the local X, Y and Z axes.
    pub axes: [Vec3; 3],
    /// Whether any axis is locked (`LockedAxes`).
    pub locked: bool,
    /// Whether a translation axis is locked: then `free` says which.
    pub locks_translation: bool,
    /// 1 on each world axis of translation the contacts may move the body along, 0 on a locked
    /// one (all 1 for a body without a translation lock).
    pub free: Vec3,
}

/// Per-tick buffers, reused between ticks so a step allocates nothing once warm. Never part of
/// the simulation state.
#[derive(Default)]
pub struct StepScratch {
    /// Mass properties and axes, one slot per body, filled for the involved bodies.
    pub motion: Vec<Motion>,
    /// The bodies the narrow phase, solve and sweep may look at this tick.
    pub involved: involved::Involved,
    /// Broad-phase buffers and the pairs it found.
    pub broad: broad_phase::BroadPhase,
    /// One manifold per narrow-phase pair (empty when the shapes are apart).
    pub manifolds: Vec<manifold::Manifold>,
    /// What the solve left at every contact point, in manifold and point order.
    pub points: Vec<solver::PointResult>,
    /// Velocities and displacements during the solve, one per body.
    pub solve: solver::SolveState,
    /// The islands' lists: union-find parents, waking's group flags, the counters being built
    /// and the bodies falling asleep.
    pub islands: sleep::IslandBuffers,
    /// Where the bodies started the tick, for the continuous sweep.
    pub sweeps: continuous::Sweeps,
    /// Bodies woken this tick.
    pub woken: Vec<u32>,
    /// The events of this tick, ordered by `(a, b, id)`.
    pub events: Vec<CollisionEvent>,
    /// The pairs touching this tick, in body order. The caller puts last tick's here before the
    /// step (`CollisionEvents::contacts`): they give the pairs the narrow phase skips.
    pub contacts: Vec<ContactReport>,
    /// The lists the events' update builds each tick.
    pub event_buffers: events::EventBuffers,
    /// The tick's joints: their bodies, constraints and breaks.
    pub joints: joints::JointScratch,
    /// Whether the last step was a tick at rest (nothing moving, no joint holding: see
    /// `at_rest`), which finds no pair and solves nothing.
    pub at_rest: bool,
}

/// Advances `bodies` (sorted by `sim_id`), held by `joints` (sorted by `sim_id`), by one tick.
pub fn step(
    params: &StepParams,
    bodies: &mut [SolverBody],
    joints: &mut [joints::SolverJoint],
    world: &mut PhysicsWorld,
    scratch: &mut StepScratch,
) {
    let mut any_moves = false;
    for body in bodies.iter_mut() {
        body.settle_inputs();
        any_moves |= body.moves();
    }
    // Resolving the joints may wake their bodies, but only those of a joint that holds, and then
    // the tick is not at rest anyway.
    joints::resolve(bodies, joints, &mut scratch.joints);
    scratch.at_rest = !scratch.joints.any_active() && !any_moves;
    if scratch.at_rest {
        at_rest(params, bodies, world, scratch);
        return;
    }
    // Bodies at rest far from anything moving give the narrow phase nothing to do, so the sweep
    // skips them; only when a sleeping body is disturbed does waking need every pair (to wake
    // whatever rests on it), and then every body is swept.
    broad_phase::find_pairs_in(params, bodies, Scope::NearMovers, &mut scratch.broad);
    joints::filter_pairs(&mut scratch.broad.pairs, &scratch.joints.no_contact);
    if sleep::any_disturbed(bodies, &scratch.broad.pairs, &scratch.joints.links) {
        broad_phase::find_pairs_in(params, bodies, Scope::All, &mut scratch.broad);
        joints::filter_pairs(&mut scratch.broad.pairs, &scratch.joints.no_contact);
        sleep::wake_touched(
            bodies,
            &scratch.broad.pairs,
            &scratch.joints.links,
            world,
            &mut scratch.islands,
            &mut scratch.woken,
        );
    } else {
        // Nothing sleeping is beside anything moving: nothing wakes.
        scratch.woken.clear();
    }
    scratch
        .involved
        .gather(bodies, &scratch.broad.pairs, &scratch.joints.edges);
    compute_motion(bodies, &scratch.involved, &mut scratch.motion);
    contacts::collide_pairs(
        params,
        bodies,
        &scratch.motion,
        &scratch.broad.pairs,
        &mut scratch.manifolds,
    );
    solver::prepare(
        bodies,
        &scratch.motion,
        &scratch.manifolds,
        world,
        &mut scratch.solve,
        &scratch.joints.edges,
    );
    joints::prepare(
        bodies,
        &scratch.motion,
        joints,
        world,
        &scratch.solve.colouring,
        &mut scratch.joints,
    );
    scratch.sweeps.begin(bodies, &scratch.involved.list);
    solver::solve(
        params,
        bodies,
        &scratch.involved.list,
        &scratch.manifolds,
        &mut scratch.solve,
        &mut scratch.joints,
        &mut scratch.points,
    );
    joints::finish(
        params.tick,
        params.dt / resources::SOLVER_SUBSTEPS as f32,
        joints,
        world,
        &mut scratch.joints,
    );
    continuous::stop_fast_bodies(
        bodies,
        &scratch.broad.pairs,
        &scratch.involved.list,
        &params.meshes,
        &mut scratch.sweeps,
    );
    count_rest_and_events(params, bodies, world, scratch);
}

/// The tick of a scene in which nothing moves and no joint holds: every body asleep, fixed, or
/// kinematic without a velocity. Such a tick finds no pair to look at and solves nothing, so it
/// goes straight to what the full step would leave: kinematic bodies moved by their (zero)
/// velocity substep by substep as the solve moves them (so even the sign of a zero coordinate
/// comes out the same), the sleep counters kept, what was stored for pairs kept while both
/// bodies are here (and `Ended` for pairs whose body has gone), and nothing kept for joints.
fn at_rest(
    params: &StepParams,
    bodies: &mut [SolverBody],
    world: &mut PhysicsWorld,
    scratch: &mut StepScratch,
) {
    scratch.broad.pairs.clear();
    scratch.involved.clear();
    scratch.woken.clear();
    scratch.manifolds.clear();
    scratch.points.clear();
    let h = params.dt / resources::SOLVER_SUBSTEPS as f32;
    for body in bodies.iter_mut() {
        if body.kind == BodyKind::Kinematic {
            for _ in 0..resources::SOLVER_SUBSTEPS {
                body.position += body.linear_velocity * h;
            }
        }
    }
    scratch.joints.finish_with_none_holding(world);
    count_rest_and_events(params, bodies, world, scratch);
}

/// The end of every tick: sleep counters and islands ([`sleep::update`]) beside the events and
/// what is stored for the next tick ([`events::update`]), from the tick's manifolds and points;
/// then the islands at rest fall asleep.
fn count_rest_and_events(
    params: &StepParams,
    bodies: &mut [SolverBody],
    world: &mut PhysicsWorld,
    scratch: &mut StepScratch,
) {
    // Counting rest only reads the bodies, and the events write nothing it reads: in a large
    // world they run side by side, and the islands found asleep are put to sleep after both.
    let parallel = side_by_side(bodies.len());
    let mut counters = std::mem::take(&mut world.sleep_counters);
    let read: &[SolverBody] = bodies;
    both(
        parallel,
        "before the sleep counters",
        || {
            sleep::update(
                params,
                read,
                &scratch.involved.list,
                &scratch.manifolds,
                &scratch.joints.links,
                &mut counters,
                &mut scratch.islands,
            )
        },
        || {
            events::update(
                params,
                read,
                &scratch.manifolds,
                &scratch.points,
                world,
                &mut scratch.events,
                &mut scratch.contacts,
                &mut scratch.event_buffers,
                parallel,
            )
        },
    );
    world.sleep_counters = counters;
    sleep::fall_asleep(bodies, &scratch.islands);
}

/// Fewest bodies for which a stage hands independent parts of its work to the pool's threads:
/// below it, handing the work over costs more than it saves.
pub const PARALLEL_BODIES: usize = 4096;

/// Whether a world of `bodies` hands independent parts of a stage to the pool's threads: at least
/// `PARALLEL_BODIES` of them, and a pool of more than one thread.
fn side_by_side(bodies: usize) -> bool {
    bodies >= PARALLEL_BODIES && rayon::current_num_threads() > 1
}

/// Whether a per-body stage over `listed` of a world's `bodies` (each body reading and writing only
/// its own values) runs on the pool's threads: `side_by_side` for the listed bodies, and only
/// when they are at least half of all bodies (the parallel walk visits every body to find them).
fn each_on_the_pool(bodies: usize, listed: usize) -> bool {
    side_by_side(listed) && listed * 2 >= bodies
}

/// Runs `a` and `b`, which must share nothing either writes, on two of the pool's threads when
/// `parallel`, else one after the other; `place` names the work if a pool thread's floating-point
/// environment has to be put back (see `runtime::guard_worker`).
fn both<A: Send, B: Send>(
    parallel: bool,
    place: &'static str,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    rayon::join(
        || {
            guard_worker(|| place.to_owned());
            a()
        },
        || {
            guard_worker(|| place.to_owned());
            b()
        },
    )
}

/// Mass, inertia and axes of the `involved` bodies for this tick, each at its body's slot (the
/// other slots are never read: see [`involved`]). A body's depend on that body alone, so they may
/// be worked out on the pool's threads ([`each_on_the_pool`]) with the same bits.
fn compute_motion(bodies: &[SolverBody], involved: &involved::Involved, motion: &mut Vec<Motion>) {
    motion.resize(bodies.len(), Motion::default());
    if each_on_the_pool(bodies.len(), involved.list.len()) {
        motion
            .par_iter_mut()
            .zip(bodies.par_iter())
            .zip(involved.marks().par_iter())
            .filter(|(_, listed)| **listed)
            .for_each_init(
                || guard_worker(|| "before the bodies' mass properties".to_owned()),
                |_, ((motion, body), _)| *motion = motion_of(body),
            );
        return;
    }
    for &i in &involved.list {
        motion[i as usize] = motion_of(&bodies[i as usize]);
    }
}

/// Mass, inertia and axes of one body for this tick.
fn motion_of(body: &SolverBody) -> Motion {
    let m = sim_math::rotation_matrix(body.rotation);
    let axes = [m.x_axis, m.y_axis, m.z_axis];
    if !body.is_awake_dynamic() {
        return Motion {
            inv_mass: 0.0,
            inv_inertia: [Vec3::ZERO; 3],
            axes,
            locked: false,
            locks_translation: false,
            free: Vec3::ONE,
        };
    }
    let local = inverse_local_inertia(&body.collider.shape, body.mass);
    // I^-1 = R diag(local) R^T, row r column c = sum_k R[r][k] local[k] R[c][k].
    let row = |r: usize| {
        let rk = Vec3::new(axes[0][r], axes[1][r], axes[2][r]);
        let scaled = Vec3::new(rk.x * local.x, rk.y * local.y, rk.z * local.z);
        Vec3::new(
            sim_math::dot3(scaled, Vec3::new(axes[0].x, axes[1].x, axes[2].x)),
            sim_math::dot3(scaled, Vec3::new(axes[0].y, axes[1].y, axes[2].y)),
            sim_math::dot3(scaled, Vec3::new(axes[0].z, axes[1].z, axes[2].z)),
        )
    };
    let mut inv_inertia = [row(0), row(1), row(2)];
    if body.locks.any() {
        // A locked rotation axis gets no inverse inertia: its row and column are zero, so no
        // impulse turns the body about it (and the other axes' entries are kept bit for bit).
        let free = body.locks.free_rotation();
        for (r, row) in inv_inertia.iter_mut().enumerate() {
            *row = body.locks.clear_rotation(*row);
            if free[r] == 0.0 {
                *row = Vec3::ZERO;
            }
        }
    }
    Motion {
        inv_mass: 1.0 / body.mass,
        inv_inertia,
        axes,
        locked: body.locks.any(),
        locks_translation: body.locks.locks_translation(),
        free: body.locks.free_translation(),
    }
}

/// The inverse of a solid shape's inertia tensor about its centre, in its local frame (diagonal).
pub fn inverse_local_inertia(shape: &Shape, mass: f32) -> Vec3 {
    let inertia = match *shape {
        Shape::Sphere { radius } => Vec3::splat(0.4 * mass * radius * radius),
        Shape::Box { half_extents: h } => {
            let (x2, y2, z2) = (h.x * h.x, h.y * h.y, h.z * h.z);
            let k = mass / 3.0;
            Vec3::new(k * (y2 + z2), k * (x2 + z2), k * (x2 + y2))
        }
        Shape::Capsule {
            half_height,
            radius,
        } => {
            // A cylinder of height 2h plus two hemispheres, sharing the mass by volume.
            let r2 = radius * radius;
            let cylinder_volume = 2.0 * half_height;
            let sphere_volume = (4.0 / 3.0) * radius;
            let total = cylinder_volume + sphere_volume;
            let m_cyl = mass * cylinder_volume / total;
            let m_sph = mass * sphere_volume / total;
            let axial = 0.5 * m_cyl * r2 + 0.4 * m_sph * r2;
            let h2 = half_height * half_height;
            // Hemispheres: 2/5 m r^2 about their own centre, shifted by h + 3r/8.
            let cap_offset = half_height + 0.375 * radius;
            let transverse = m_cyl * (0.25 * r2 + h2 / 3.0)
                + m_sph * (0.4 * r2 + cap_offset * cap_offset - 0.140_625 * r2);
            Vec3::new(transverse, axial, transverse)
        }
        Shape::HalfSpace { .. } | Shape::Mesh { .. } => Vec3::ZERO,
    };
    let inv = |i: f32| {
        if i > 0.0 && i.is_finite() {
            1.0 / i
        } else {
            0.0
        }
    };
    Vec3::new(inv(inertia.x), inv(inertia.y), inv(inertia.z))
}
