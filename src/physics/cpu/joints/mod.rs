//! Joints in the CPU solve: which joints hold this tick, their constraints, and what they leave
//! for the next tick.
//!
//! A joint is an edge of the constraint graph like a contact manifold: `colouring` colours the
//! joints first and the manifolds around them, and every pass of the solve takes the colours in
//! order, each colour's joints and then its contact batches. Two constraints of a colour never
//! share a moving body, so a large colour's joints may run on several threads with the same bits
//! as one after another.
//!
//! The stages, in the order `cpu::step` calls them:
//!
//! 1. [`resolve`], before the broad phase: each joint's two bodies are found by `SimId` (the world
//!    is the spare slot past the last body). A joint is left out while it is broken, fails
//!    `Joint::check`, or names a body that is not simulating. Joined bodies stop colliding with
//!    each other unless the joint says otherwise ([`filter_pairs`]); a sleeping body joined to a
//!    moving one wakes with it (`sleep` reads [`JointScratch::links`]), and a motor with work to
//!    do wakes its bodies.
//! 2. [`prepare`], after the colouring: each joint is measured at the start of the tick, with its
//!    bodies' masses, and warm-started with last tick's impulses from `PhysicsWorld::joints`; each
//!    colour's plain joints come first and are packed into lanes.
//! 3. [`JointScratch::warm_start`] and [`JointScratch::solve`], inside the substeps: plain joints
//!    (hinges without limits or a motor, ball joints without a cone) four at a time in SIMD lanes
//!    ([`wide`]), the rest one at a time ([`kernels`]).
//! 4. [`finish`], after the solve: a joint whose force or torque passed its limit breaks (its
//!    `broken` flag is set and a `JointBroke` event numbered with the collision events); the others'
//!    impulses are stored, in joint `SimId` order.
//!
//! This module must never move a body outside the velocity passes.

pub mod algebra;
pub mod kernels;
pub mod wide;

use std::ops::Range;

use bevy::math::{Quat, Vec3};
use bevy::prelude::Entity;
use rayon::prelude::*;

use self::algebra::{PairMass, PairVelocity, axes, inverse3, inverse3_locked};
use self::kernels::JointPass;
use super::body_state::{Displacement, Velocity};
use super::colouring::{COLOURS, Colouring, OVERFLOW};
use super::shared_velocities::SharedVelocities;
use super::{Motion, SolverBody};
use crate::physics::joint::{Joint, JointKind, Motor};
use crate::physics::resources::JointBroke;
use crate::physics::world::{JointWarmStart, PhysicsWorld};
use crate::runtime::sim_math::{dot3, quat_mul, quat_rotate};
use crate::state::SimId;

/// The joint spring's frequency (Hz): how fast a joint's error is removed.
pub const JOINT_HERTZ: f32 = 60.0;
/// The joint spring's damping ratio.
pub const JOINT_DAMPING_RATIO: f32 = 2.0;

/// A colour with at least this many joints spreads them over threads.
const PARALLEL_JOINTS: usize = 64;
/// Joints handed to one parallel task.
const JOINTS_PER_TASK: usize = 32;

/// How far a position motor's coordinate may be from its target before the motor wakes its
/// bodies (radians or metres).
const MOTOR_WAKE_ERROR: f32 = 1.0e-3;

/// One joint as the solver sees it; joints are passed sorted by `sim_id`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverJoint {
    /// The joint's simulation id.
    pub sim_id: SimId,
    /// Its entity: a handle for events, never an order.
    pub entity: Entity,
    /// The joint; the step sets `broken` when it breaks.
    pub joint: Joint,
}

/// A joint's accumulated impulses during the tick (world frame).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Impulses {
    /// Holding the anchors together (or across a slider's axis).
    pub linear: Vec3,
    /// Holding the rotation (or a hinge's axis).
    pub angular: Vec3,
    /// The motor's, the spring's or the rod's.
    pub axial: f32,
    /// The lower limit's.
    pub lower: f32,
    /// The upper limit's (a ball joint's cone).
    pub upper: f32,
}

impl From<&JointWarmStart> for Impulses {
    fn from(w: &JointWarmStart) -> Self {
        Impulses {
            linear: w.linear,
            angular: w.angular,
            axial: w.axial,
            lower: w.lower,
            upper: w.upper,
        }
    }
}

impl Impulses {
    /// The impulses as joint `joint` keeps them for the next tick.
    fn stored(&self, joint: SimId) -> JointWarmStart {
        JointWarmStart {
            joint,
            linear: self.linear,
            angular: self.angular,
            axial: self.axial,
            lower: self.lower,
            upper: self.upper,
        }
    }
}

/// A joint prepared for this tick's solve.
#[derive(Clone, Copy, Debug)]
pub struct Prepared {
    /// The joint's index in the tick's joints.
    pub joint: u32,
    /// `a`'s velocity slot (the spare slot for the world).
    pub a: u32,
    /// `b`'s velocity slot.
    pub b: u32,
    /// What the joint holds.
    pub kind: JointKind,
    /// The bodies' masses for the tick.
    pub mass: PairMass,
    /// `a`'s arm to its anchor at the start of the tick (world frame).
    pub ra: Vec3,
    /// `b`'s arm to its anchor.
    pub rb: Vec3,
    /// From `a`'s centre to `b`'s at the start of the tick.
    pub delta_center: Vec3,
    /// `a`'s joint frame in the world at the start of the tick.
    pub frame_a: Quat,
    /// `b`'s joint frame.
    pub frame_b: Quat,
    /// `a`'s frame's X, Y and Z axes at the start of the tick.
    pub axes_a: [Vec3; 3],
    /// `b`'s frame's X axis at the start of the tick.
    pub x_b: Vec3,
    /// The inverse of `Ia + Ib`, as rows.
    pub angular_inverse: [Vec3; 3],
    /// A hinge's two rows across its axis (`a`'s Y and Z at the start of the tick): their
    /// effective mass `[yy, yz, zz]`.
    pub hinge_mass: [f32; 3],
    /// Accumulated impulses.
    pub impulses: Impulses,
}

/// The joints of one tick (scratch).
#[derive(Default)]
pub struct JointScratch {
    /// Per joint, its two velocity slots; a joint left out has both at the spare slot, which
    /// never moves, so the colouring leaves it out too.
    pub edges: Vec<(u32, u32)>,
    /// Body pairs (lower index first, sorted) whose contacts the joints switch off.
    pub no_contact: Vec<(u32, u32)>,
    /// Body pairs held by a joint (both bodies, not the world), for sleep and waking.
    pub links: Vec<(u32, u32)>,
    /// The prepared joints, colour by colour.
    pub prepared: Vec<Prepared>,
    /// Per colour (the overflow last), its joints: a range of `prepared`.
    pub spans: Vec<Range<usize>>,
    /// Per joint, whether it holds this tick (not broken, valid, both bodies simulating).
    active: Vec<bool>,
    /// Per joint, its index in `prepared` (`u32::MAX` when it is not solved this tick).
    prepared_of: Vec<u32>,
    /// Whether each colour's joints may run on several threads.
    parallel: Vec<bool>,
    /// Per velocity slot, the last parallel colour that writes it (plus one).
    written_by: Vec<u32>,
    /// The joints that broke this tick, in joint order.
    pub events: Vec<JointBroke>,
    /// Per colour, where its plain joints (solved in lanes, first in the colour) end in
    /// `prepared`.
    plain_ends: Vec<usize>,
    /// The plain joints in SIMD layout.
    wide: wide::WideJoints,
    /// Last tick's stored impulses while `finish` writes this tick's.
    stored: Vec<JointWarmStart>,
}

/// Where a joint's frames are in the world for bodies at `(position, rotation)`: the anchors and
/// the frames' rotations.
fn placed(joint: &Joint, a: (Vec3, Quat), b: (Vec3, Quat)) -> (Vec3, Vec3, Quat, Quat) {
    (
        a.0 + quat_rotate(a.1, joint.frame_a.anchor),
        b.0 + quat_rotate(b.1, joint.frame_b.anchor),
        quat_mul(a.1, joint.frame_a.rotation),
        quat_mul(b.1, joint.frame_b.rotation),
    )
}

/// The position and rotation of slot `i` (the world's origin past the last body).
fn pose_of(bodies: &[SolverBody], i: u32) -> (Vec3, Quat) {
    bodies
        .get(i as usize)
        .map_or((Vec3::ZERO, Quat::IDENTITY), |b| (b.position, b.rotation))
}

/// Whether a motor has work to do for a joint whose coordinate is at `value`.
fn driving(motor: &Motor, value: f32) -> bool {
    match *motor {
        Motor::Off => false,
        Motor::Velocity { speed, max_force } => speed != 0.0 && max_force > 0.0,
        Motor::Position {
            target, max_force, ..
        } => max_force > 0.0 && (value - target).abs() > MOTOR_WAKE_ERROR,
    }
}

/// The coordinate a hinge's or slider's motor drives, where the bodies stand.
fn coordinate(joint: &Joint, a: (Vec3, Quat), b: (Vec3, Quat)) -> f32 {
    let (pa, pb, qa, qb) = placed(joint, a, b);
    match joint.kind {
        JointKind::Revolute { .. } => kernels::hinge_angle(qa, qb),
        JointKind::Prismatic { .. } => dot3(axes(qa)[0], pb - pa),
        _ => 0.0,
    }
}

impl JointScratch {
    /// Whether any joint holds this tick (after [`resolve`]).
    pub fn any_active(&self) -> bool {
        self.active.iter().any(|&active| active)
    }

    /// What [`finish`] leaves when no joint holds: no events, and nothing stored for any joint.
    pub fn finish_with_none_holding(&mut self, world: &mut PhysicsWorld) {
        debug_assert!(!self.any_active());
        self.events.clear();
        world.joints.clear();
    }
}

/// Finds every joint's bodies, the pairs the joints keep from colliding and the links sleep
/// follows, and wakes the bodies of motors with work to do.
pub fn resolve(bodies: &mut [SolverBody], joints: &[SolverJoint], scratch: &mut JointScratch) {
    let spare = bodies.len() as u32;
    let slot = |id: SimId| {
        bodies
            .binary_search_by_key(&id, |b| b.sim_id)
            .ok()
            .map(|i| i as u32)
    };
    scratch.edges.clear();
    scratch.active.clear();
    scratch.no_contact.clear();
    scratch.links.clear();
    for SolverJoint { joint, .. } in joints {
        let b = slot(joint.body_b);
        let a = match joint.body_a {
            Some(id) => slot(id),
            None => Some(spare),
        };
        let active = a.is_some() && b.is_some() && !joint.broken && joint.check().is_ok();
        scratch.active.push(active);
        let (a, b) = match (a, b) {
            (Some(a), Some(b)) if active => (a, b),
            _ => {
                scratch.edges.push((spare, spare));
                continue;
            }
        };
        scratch.edges.push((a, b));
        if a == spare {
            continue;
        }
        let pair = (a.min(b), a.max(b));
        scratch.links.push(pair);
        if !joint.collide_connected {
            scratch.no_contact.push(pair);
        }
    }
    scratch.no_contact.sort_unstable();
    scratch.no_contact.dedup();
    scratch.links.sort_unstable();
    scratch.links.dedup();
    for (SolverJoint { joint, .. }, &(a, b)) in joints.iter().zip(&scratch.edges) {
        let Some(motor) = joint.motor().filter(|_| b != spare) else {
            continue;
        };
        let asleep = |i: u32| bodies.get(i as usize).is_some_and(|body| body.sleeping);
        if !(asleep(a) || asleep(b)) {
            continue;
        }
        if driving(
            motor,
            coordinate(joint, pose_of(bodies, a), pose_of(bodies, b)),
        ) {
            for i in [a, b] {
                if let Some(body) = bodies.get_mut(i as usize) {
                    body.sleeping = false;
                }
            }
        }
    }
}

/// Removes from the broad phase's `pairs` (sorted) the pairs a joint keeps from colliding.
pub fn filter_pairs(pairs: &mut Vec<(u32, u32)>, no_contact: &[(u32, u32)]) {
    if no_contact.is_empty() {
        return;
    }
    let mut next = 0;
    pairs.retain(|pair| {
        while next < no_contact.len() && no_contact[next] < *pair {
            next += 1;
        }
        no_contact.get(next) != Some(pair)
    });
}

/// Prepares the coloured joints, colour by colour, warm-started from `world.joints`.
pub fn prepare(
    bodies: &[SolverBody],
    motion: &[Motion],
    joints: &[SolverJoint],
    world: &PhysicsWorld,
    colouring: &Colouring,
    scratch: &mut JointScratch,
) {
    let mass_of = |i: u32| {
        motion
            .get(i as usize)
            .map_or((0.0, [Vec3::ZERO; 3]), |m| (m.inv_mass, m.inv_inertia))
    };
    // 1 on the axes a body may move along (a slot past the bodies is the world, which never
    // moves).
    let free_of = |i: u32| motion.get(i as usize).map_or(Vec3::ONE, |m| m.free);
    let locked_of = |i: u32| motion.get(i as usize).is_some_and(|m| m.locked);
    let locked = |j: u32| {
        let (a, b) = scratch.edges[j as usize];
        locked_of(a) || locked_of(b)
    };
    scratch.prepared.clear();
    scratch.spans.clear();
    scratch.prepared_of.clear();
    scratch.prepared_of.resize(joints.len(), u32::MAX);
    scratch.plain_ends.clear();
    for colour in 0..=COLOURS {
        let start = scratch.prepared.len();
        let order = &colouring.joint_order[colouring.joint_spans[colour].clone()];
        // The plain joints first (solved four at a time), then the rest, each in joint order. A
        // joint on a body with a locked axis runs alone, where its masses are per axis and its
        // blocks are solved around the locked directions.
        let plain = |j: &u32| wide::is_plain(&joints[*j as usize].joint.kind) && !locked(*j);
        let plain_count = order.iter().filter(|j| plain(j)).count();
        let ordered = (order.iter().filter(|j| plain(j))).chain(order.iter().filter(|j| !plain(j)));
        for (n, &j) in ordered.enumerate() {
            if n == plain_count {
                scratch.plain_ends.push(scratch.prepared.len());
            }
            let joint = &joints[j as usize];
            let (a, b) = scratch.edges[j as usize];
            let (pose_a, pose_b) = (pose_of(bodies, a), pose_of(bodies, b));
            let (anchor_a, anchor_b, frame_a, frame_b) = placed(&joint.joint, pose_a, pose_b);
            let ((inv_mass_a, inv_inertia_a), (inv_mass_b, inv_inertia_b)) =
                (mass_of(a), mass_of(b));
            let impulses = world
                .joints
                .binary_search_by_key(&joint.sim_id, |w| w.joint)
                .map_or(Impulses::default(), |i| Impulses::from(&world.joints[i]));
            scratch.prepared_of[j as usize] = scratch.prepared.len() as u32;
            let mass = PairMass::new(inv_mass_a, inv_inertia_a, inv_mass_b, inv_inertia_b)
                .with_locks(free_of(a), free_of(b), locked_of(a) || locked_of(b));
            let (ra, rb) = (anchor_a - pose_a.0, anchor_b - pose_b.0);
            let angular_inverse = match joint.joint.kind {
                JointKind::Fixed | JointKind::Prismatic { .. } => {
                    let s = &mass.inertia_sum;
                    // Symmetric: its rows are its columns.
                    if mass.locked {
                        inverse3_locked(&[s[0], s[1], s[2]])
                    } else {
                        inverse3(&[s[0], s[1], s[2]])
                    }
                }
                _ => [Vec3::ZERO; 3],
            };
            let axes_a = axes(frame_a);
            let hinge_mass = match joint.joint.kind {
                JointKind::Revolute { .. } => {
                    let [_, y, z] = axes_a;
                    [
                        mass.angular_between(y, y),
                        mass.angular_between(y, z),
                        mass.angular_between(z, z),
                    ]
                }
                _ => [0.0; 3],
            };
            scratch.prepared.push(Prepared {
                joint: j,
                a,
                b,
                kind: joint.joint.kind,
                mass,
                axes_a,
                hinge_mass,
                x_b: axes(frame_b)[0],
                angular_inverse,
                ra,
                rb,
                delta_center: pose_b.0 - pose_a.0,
                frame_a,
                frame_b,
                impulses,
            });
        }
        if scratch.plain_ends.len() == colour {
            scratch.plain_ends.push(scratch.prepared.len());
        }
        scratch.spans.push(start..scratch.prepared.len());
    }
    let spare = bodies.len() as u32;
    scratch.wide.build(
        &scratch.prepared,
        &scratch.spans,
        &scratch.plain_ends,
        spare,
    );
    scratch.check_parallel(bodies.len() + 1);
}

impl JointScratch {
    /// Marks the colours whose joints may run on several threads: large ones, checked for
    /// disjoint writes (which the colouring guarantees; a colour that broke it would run on one
    /// thread, and a debug build stops).
    fn check_parallel(&mut self, slots: usize) {
        self.parallel.clear();
        self.written_by.clear();
        self.written_by.resize(slots, 0);
        for (colour, span) in self.spans.iter().enumerate() {
            let mut parallel = colour != OVERFLOW && span.len() >= PARALLEL_JOINTS;
            if parallel {
                let stamp = colour as u32 + 1;
                for p in &self.prepared[span.clone()] {
                    for (slot, inv_mass) in [(p.a, p.mass.inv_mass_a), (p.b, p.mass.inv_mass_b)] {
                        if inv_mass > 0.0 {
                            let seen = &mut self.written_by[slot as usize];
                            parallel &= *seen != stamp;
                            *seen = stamp;
                        }
                    }
                }
                debug_assert!(
                    parallel,
                    "two joints of colour {colour} share a moving body"
                );
            }
            self.parallel.push(parallel);
        }
    }

    /// Runs `kernel` on every joint of `colour`, on several threads when the colour is large.
    fn for_each(
        &mut self,
        colour: usize,
        velocities: &mut [Velocity],
        displacements: &[Displacement],
        kernel: impl Fn(&mut Prepared, &Displacement, &Displacement, &mut PairVelocity) + Sync,
    ) {
        let Some(span) = self.spans.get(colour).cloned() else {
            return;
        };
        let span = self.plain_ends[colour]..span.end;
        if span.is_empty() {
            return;
        }
        let shared = SharedVelocities::new(velocities);
        let run = |p: &mut Prepared| {
            let mut pair = PairVelocity {
                a: shared.get(p.a),
                b: shared.get(p.b),
            };
            kernel(
                p,
                &displacements[p.a as usize],
                &displacements[p.b as usize],
                &mut pair,
            );
            if p.mass.inv_mass_a > 0.0 {
                shared.set(p.a, pair.a);
            }
            if p.mass.inv_mass_b > 0.0 {
                shared.set(p.b, pair.b);
            }
        };
        let joints = &mut self.prepared[span];
        if self.parallel[colour] && rayon::current_num_threads() > 1 {
            joints
                .par_iter_mut()
                .with_min_len(JOINTS_PER_TASK)
                .for_each(|joint| {
                    crate::runtime::guard_worker(|| {
                        "before a parallel pass of the joint solver".to_owned()
                    });
                    run(joint);
                });
        } else {
            joints.iter_mut().for_each(run);
        }
    }

    /// Applies the accumulated impulses of every joint of `colour`.
    pub fn warm_start(
        &mut self,
        colour: usize,
        velocities: &mut [Velocity],
        displacements: &[Displacement],
    ) {
        let parallel = self.parallel.get(colour).copied().unwrap_or(false);
        self.wide
            .warm_start(colour, parallel, velocities, displacements);
        self.for_each(colour, velocities, displacements, |p, da, db, v| {
            kernels::warm_start(p, da, db, v)
        });
    }

    /// Whether `colour` holds any joint this tick.
    pub fn has_colour(&self, colour: usize) -> bool {
        self.spans.get(colour).is_some_and(|span| !span.is_empty())
    }

    /// One velocity pass over every joint of `colour`.
    pub fn solve(
        &mut self,
        colour: usize,
        velocities: &mut [Velocity],
        displacements: &[Displacement],
        pass: &JointPass,
    ) {
        let parallel = self.parallel.get(colour).copied().unwrap_or(false);
        self.wide
            .solve(colour, parallel, velocities, displacements, pass);
        self.for_each(colour, velocities, displacements, |p, da, db, v| {
            kernels::solve(p, da, db, v, pass)
        });
    }

    /// How many joints are in colours large enough to be spread over threads (a measure for
    /// tests and benchmarks: that a scene exercises the parallel path).
    pub fn parallel_joints(&self) -> usize {
        self.spans
            .iter()
            .zip(&self.parallel)
            .filter(|(_, parallel)| **parallel)
            .map(|(span, _)| span.len())
            .sum()
    }
}

/// Breaks the joints whose load passed their limits, and stores the others' impulses in
/// `world.joints` (joint order). A joint that was not solved this tick (both bodies at rest)
/// keeps what it had.
pub fn finish(
    tick: u64,
    h: f32,
    joints: &mut [SolverJoint],
    world: &mut PhysicsWorld,
    scratch: &mut JointScratch,
) {
    scratch.events.clear();
    scratch.wide.write_back(&mut scratch.prepared);
    // Last tick's list is read while this tick's is written into the spare buffer, which then
    // takes its place: no allocation once warm.
    std::mem::swap(&mut world.joints, &mut scratch.stored);
    world.joints.clear();
    let mut stored = scratch.stored.iter().peekable();
    for (j, joint) in joints.iter_mut().enumerate() {
        while stored.peek().is_some_and(|w| w.joint < joint.sim_id) {
            stored.next();
        }
        let previous = stored.peek().filter(|w| w.joint == joint.sim_id).copied();
        let index = scratch.prepared_of.get(j).copied().unwrap_or(u32::MAX);
        if index == u32::MAX {
            // Not solved: kept while the joint still holds, forgotten once it is left out.
            if scratch.active[j] {
                world.joints.extend(previous.copied());
            }
            continue;
        }
        let p = &scratch.prepared[index as usize];
        let (force, torque) = kernels::load(p, h);
        let over = |limit: Option<f32>, value: f32| limit.is_some_and(|l| value > l);
        if over(joint.joint.break_force, force) || over(joint.joint.break_torque, torque) {
            joint.joint.broken = true;
            scratch.events.push(JointBroke {
                tick,
                joint: joint.sim_id,
                entity: joint.entity,
                a: joint.joint.body_a,
                b: joint.joint.body_b,
                force,
                torque,
                id: world.next_event_id,
            });
            world.next_event_id += 1;
            continue;
        }
        world.joints.push(p.impulses.stored(joint.sim_id));
    }
}
