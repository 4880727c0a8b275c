//! Contact constraints: preparation, the soft-step velocity passes, and restitution.
//!
//! The solver is Box2D v3's "soft step" (Catto, *Solver2D*, 2024) in 3D. A tick is split into
//! `SOLVER_SUBSTEPS` substeps; each substep applies gravity, warm-starts the contacts, runs one
//! biased velocity pass, moves the bodies, then runs one relaxing pass without bias. That is
//! `SOLVER_ITERATIONS` (8) velocity passes a tick, always, with no early exit.
//!
//! Position correction is a soft constraint: a contact that overlaps pushes apart at a rate set by
//! a spring of `CONTACT_HERTZ` with damping ratio `CONTACT_DAMPING_RATIO`, capped at
//! `max_correction_speed`. The spring acts only in the biased pass and is relaxed away afterwards,
//! so correcting overlap does not leave velocity behind (no jitter, no extra bounce). The contact's
//! current gap is tracked inside the tick from how far its two anchor points have moved, so the
//! contacts found once per tick stay accurate through the substeps. A contact that is still open
//! lets the bodies approach by exactly the gap (speculative contact).
//!
//! Each point has a normal constraint and two friction constraints bounded by `friction * normal
//! impulse`. Impulses start from last tick's values for the same feature (warm starting). After the
//! substeps, one restitution pass gives points that approached faster than
//! `restitution_threshold`, and carried load, the bounce velocity `-e * approach`.
//!
//! Preparation is independent per manifold and runs in parallel, collected in order; every pass
//! that accumulates runs sequentially in constraint order. This module must never change which
//! pairs touch.

use std::f32::consts::TAU;

use bevy::math::{Quat, Vec3};
use rayon::prelude::*;

use super::contacts::Manifold;
use super::{Motion, SolverBody, StepParams, integrate, math};
use crate::physics::resources::{SOLVER_ITERATIONS, SOLVER_SUBSTEPS};
use crate::physics::world::PhysicsWorld;
use crate::runtime::sim_math::{cross, dot3};

/// Stiffness of the contact spring that removes overlap (Hz).
pub const CONTACT_HERTZ: f32 = 60.0;
/// Damping ratio of the contact spring.
pub const CONTACT_DAMPING_RATIO: f32 = 10.0;

const _: () = assert!(SOLVER_ITERATIONS == 2 * SOLVER_SUBSTEPS);

/// One direction of a contact (the normal or a tangent), with its Jacobian worked out for the
/// tick: the lever arms' cross products and their images under the inverse inertia, so a pass
/// needs only dot products and scaled adds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Row {
    /// Unit direction, from `a` towards `b` for the normal.
    pub direction: Vec3,
    /// `ra x direction`.
    pub arm_a: Vec3,
    /// `rb x direction`.
    pub arm_b: Vec3,
    /// `I_a^-1 (ra x direction)`: `a`'s angular velocity change per unit impulse.
    pub turn_a: Vec3,
    /// `I_b^-1 (rb x direction)`.
    pub turn_b: Vec3,
    /// Impulse per unit of velocity change along the direction.
    pub mass: f32,
}

/// One contact point's constraint.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactConstraint {
    /// First body index.
    pub a: u32,
    /// Second body index.
    pub b: u32,
    /// Feature id, for warm starting.
    pub feature: u32,
    /// `a`'s inverse mass.
    pub inv_mass_a: f32,
    /// `b`'s inverse mass.
    pub inv_mass_b: f32,
    /// The normal, then the two tangents.
    pub rows: [Row; 3],
    /// From `a`'s centre to the contact point, at the start of the tick.
    pub ra: Vec3,
    /// From `b`'s centre to the contact point, at the start of the tick.
    pub rb: Vec3,
    /// The gap at the start of the tick minus the anchors' offset along the normal: adding the
    /// anchors' current offset gives the current gap.
    pub base_separation: f32,
    /// Coulomb coefficient of the pair.
    pub friction: f32,
    /// Restitution of the pair.
    pub restitution: f32,
    /// Normal velocity before the solve (negative when approaching).
    pub approach: f32,
    /// Gap at the start of the tick (negative when overlapping).
    pub separation: f32,
    /// Whether one body cannot move (such contacts get a stiffer spring).
    pub against_fixed: bool,
    /// Accumulated normal impulse.
    pub normal_impulse: f32,
    /// Largest normal impulse of any pass this tick.
    pub max_normal_impulse: f32,
    /// Accumulated friction impulses.
    pub tangent_impulse: [f32; 2],
}

impl ContactConstraint {
    /// The contact normal, from `a` to `b`.
    pub fn normal(&self) -> Vec3 {
        self.rows[0].direction
    }
}

/// Two unit vectors perpendicular to `n` and to each other, chosen from `n` alone.
fn tangent_basis(n: Vec3) -> [Vec3; 2] {
    let t1 = if n.x.abs() >= 0.577_35 {
        math::direction_or(Vec3::new(n.y, -n.x, 0.0), Vec3::Z).0
    } else {
        math::direction_or(Vec3::new(0.0, n.z, -n.y), Vec3::X).0
    };
    [t1, cross(n, t1)]
}

/// `I^-1 v` for an inverse inertia given as rows.
fn apply_inertia(rows: &[Vec3; 3], v: Vec3) -> Vec3 {
    Vec3::new(dot3(rows[0], v), dot3(rows[1], v), dot3(rows[2], v))
}

/// The Jacobian row of `direction` at lever arms `ra`, `rb`.
fn row(ma: &Motion, mb: &Motion, ra: Vec3, rb: Vec3, direction: Vec3) -> Row {
    let arm_a = cross(ra, direction);
    let arm_b = cross(rb, direction);
    let turn_a = apply_inertia(&ma.inv_inertia, arm_a);
    let turn_b = apply_inertia(&mb.inv_inertia, arm_b);
    let k = ((ma.inv_mass + mb.inv_mass) + dot3(arm_a, turn_a)) + dot3(arm_b, turn_b);
    Row {
        direction,
        arm_a,
        arm_b,
        turn_a,
        turn_b,
        mass: if k > 0.0 { 1.0 / k } else { 0.0 },
    }
}

/// A soft constraint's coefficients for one substep of length `h` (Box2D v3's `b2MakeSoft`).
#[derive(Clone, Copy, Debug)]
struct Softness {
    bias_rate: f32,
    mass_scale: f32,
    impulse_scale: f32,
}

impl Softness {
    fn new(hertz: f32, damping_ratio: f32, h: f32) -> Self {
        let omega = TAU * hertz;
        let a1 = 2.0 * damping_ratio + h * omega;
        let a2 = h * omega * a1;
        let a3 = 1.0 / (1.0 + a2);
        Softness {
            bias_rate: omega / a1,
            mass_scale: a2 * a3,
            impulse_scale: a3,
        }
    }
}

/// A body's velocity during the solve.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Velocity {
    /// m/s.
    pub linear: Vec3,
    /// rad/s.
    pub angular: Vec3,
}

/// How far a body has moved since the start of the tick.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Displacement {
    /// Translation since the start of the tick.
    pub position: Vec3,
    /// Rotation since the start of the tick.
    pub rotation: Quat,
    /// The same rotation as a matrix (columns), for moving anchors.
    pub matrix: [Vec3; 3],
}

impl Default for Displacement {
    fn default() -> Self {
        Displacement {
            position: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            matrix: [Vec3::X, Vec3::Y, Vec3::Z],
        }
    }
}

impl Displacement {
    /// Where an anchor at `r` from the centre at the start of the tick is now, relative to the
    /// starting centre.
    fn moved_anchor(&self, r: Vec3) -> Vec3 {
        let m = &self.matrix;
        self.position + ((m[0] * r.x + m[1] * r.y) + m[2] * r.z)
    }
}

/// Velocities and displacements of every body during the solve (scratch).
#[derive(Default)]
pub struct SolveState {
    /// One per body.
    pub velocities: Vec<Velocity>,
    /// One per body.
    pub displacements: Vec<Displacement>,
}

/// Velocity of `b` relative to `a` along `row`.
#[inline(always)]
fn speed_along(row: &Row, va: &Velocity, vb: &Velocity) -> f32 {
    (dot3(row.direction, vb.linear - va.linear) + dot3(row.arm_b, vb.angular))
        - dot3(row.arm_a, va.angular)
}

/// Applies impulse `lambda` along `row` (from `a` on `b`).
#[inline(always)]
fn push(c: &ContactConstraint, row: &Row, velocities: &mut [Velocity], lambda: f32) {
    let va = &mut velocities[c.a as usize];
    va.linear -= row.direction * (lambda * c.inv_mass_a);
    va.angular -= row.turn_a * lambda;
    let vb = &mut velocities[c.b as usize];
    vb.linear += row.direction * (lambda * c.inv_mass_b);
    vb.angular += row.turn_b * lambda;
}

/// The velocities of a constraint's two bodies, copied out.
#[inline(always)]
fn pair(c: &ContactConstraint, velocities: &[Velocity]) -> (Velocity, Velocity) {
    (velocities[c.a as usize], velocities[c.b as usize])
}

/// Manifolds handed to one parallel task.
const MANIFOLDS_PER_TASK: usize = 32;

/// Builds the constraints of every manifold, in order, with last tick's impulses for the same
/// features.
pub fn prepare(
    bodies: &[SolverBody],
    motion: &[Motion],
    manifolds: &[Manifold],
    world: &PhysicsWorld,
    constraints: &mut Vec<ContactConstraint>,
) {
    // Each manifold fills its own slice of the output, so the parallel split cannot reorder it.
    let total = manifolds.iter().map(|m| m.len as usize).sum();
    constraints.clear();
    constraints.resize(total, ContactConstraint::default());
    let mut slices = Vec::with_capacity(manifolds.len());
    let mut rest = constraints.as_mut_slice();
    for m in manifolds {
        let (head, tail) = rest.split_at_mut(m.len as usize);
        slices.push(head);
        rest = tail;
    }
    manifolds
        .par_iter()
        .zip(slices)
        .with_min_len(MANIFOLDS_PER_TASK)
        .for_each(|(m, out)| {
            let (body_a, body_b) = (&bodies[m.a as usize], &bodies[m.b as usize]);
            let (ma, mb) = (&motion[m.a as usize], &motion[m.b as usize]);
            let friction = (body_a.collider.friction * body_b.collider.friction).sqrt();
            let restitution = body_a.collider.restitution.max(body_b.collider.restitution);
            let against_fixed = ma.inv_mass == 0.0 || mb.inv_mass == 0.0;
            let sensor = body_a.collider.sensor || body_b.collider.sensor;
            let stored = world.warm_starts_of(body_a.sim_id, body_b.sim_id);
            for (slot, point) in out.iter_mut().zip(m.points()) {
                let ra = point.point - body_a.position;
                let rb = point.point - body_b.position;
                let n = point.normal;
                let tangents = tangent_basis(n);
                let dv = (body_b.linear_velocity + cross(body_b.angular_velocity, rb))
                    - (body_a.linear_velocity + cross(body_a.angular_velocity, ra));
                let mut c = ContactConstraint {
                    a: m.a,
                    b: m.b,
                    feature: point.feature,
                    inv_mass_a: ma.inv_mass,
                    inv_mass_b: mb.inv_mass,
                    rows: [
                        row(ma, mb, ra, rb, n),
                        row(ma, mb, ra, rb, tangents[0]),
                        row(ma, mb, ra, rb, tangents[1]),
                    ],
                    ra,
                    rb,
                    base_separation: point.separation - dot3(rb - ra, n),
                    friction,
                    restitution,
                    approach: dot3(dv, n),
                    separation: point.separation,
                    against_fixed,
                    ..ContactConstraint::default()
                };
                if sensor {
                    // A sensor reports contact but pushes nothing: rows without mass apply no
                    // impulse.
                    for row in &mut c.rows {
                        row.mass = 0.0;
                    }
                } else if let Ok(i) = stored.binary_search_by_key(&point.feature, |w| w.feature) {
                    c.normal_impulse = stored[i].normal;
                    c.tangent_impulse = stored[i].tangent;
                }
                *slot = c;
            }
        });
}

/// Runs the substeps: gravity, warm start, biased pass, positions, relaxing pass; then restitution.
/// Moves the bodies and leaves their solved velocities in `bodies`.
pub fn solve(
    params: &StepParams,
    bodies: &mut [SolverBody],
    constraints: &mut [ContactConstraint],
    state: &mut SolveState,
) {
    let h = params.dt / SOLVER_SUBSTEPS as f32;
    let inv_h = 1.0 / h;
    let soft = Softness::new(CONTACT_HERTZ, CONTACT_DAMPING_RATIO, h);
    let fixed_soft = Softness::new(2.0 * CONTACT_HERTZ, CONTACT_DAMPING_RATIO, h);
    state.velocities.clear();
    state.velocities.extend(bodies.iter().map(|b| Velocity {
        linear: b.linear_velocity,
        angular: b.angular_velocity,
    }));
    state.displacements.clear();
    state
        .displacements
        .resize(bodies.len(), Displacement::default());
    let (velocities, displacements) = (&mut state.velocities, &mut state.displacements);
    for _ in 0..SOLVER_SUBSTEPS {
        integrate::gravity(params, h, bodies, velocities);
        warm_start(constraints, velocities);
        let biased = Some((soft, fixed_soft));
        solve_contacts(
            params,
            constraints,
            velocities,
            displacements,
            inv_h,
            biased,
        );
        integrate::positions(h, bodies, velocities, displacements);
        solve_contacts(params, constraints, velocities, displacements, inv_h, None);
    }
    restitution(params, constraints, velocities);
    integrate::finish_rotations(bodies, displacements);
    for (body, velocity) in bodies.iter_mut().zip(velocities.iter()) {
        if body.is_awake_dynamic() {
            body.linear_velocity = velocity.linear;
            body.angular_velocity = velocity.angular;
        }
    }
}

fn warm_start(constraints: &[ContactConstraint], velocities: &mut [Velocity]) {
    for c in constraints {
        push(c, &c.rows[0], velocities, c.normal_impulse);
        push(c, &c.rows[1], velocities, c.tangent_impulse[0]);
        push(c, &c.rows[2], velocities, c.tangent_impulse[1]);
    }
}

/// One velocity pass over every point: the normal, then friction. `bias` carries the contact
/// springs for the biased pass; `None` is the relaxing pass.
fn solve_contacts(
    params: &StepParams,
    constraints: &mut [ContactConstraint],
    velocities: &mut [Velocity],
    displacements: &[Displacement],
    inv_h: f32,
    bias: Option<(Softness, Softness)>,
) {
    let max_push = params.settings.max_correction_speed;
    let slop = params.settings.linear_slop;
    // Last pair first: bodies come in `SimId` (spawn) order, so a stack built from the ground up
    // is solved from the top down, which carries its weight down the stack within one pass.
    for c in constraints.iter_mut().rev() {
        // The current gap, from how far the anchors moved since the start of the tick.
        let (da, db) = (&displacements[c.a as usize], &displacements[c.b as usize]);
        let normal = c.rows[0];
        let separation = dot3(
            db.moved_anchor(c.rb) - da.moved_anchor(c.ra),
            normal.direction,
        ) + c.base_separation;
        let (target, mass_scale, impulse_scale) = if separation > 0.0 {
            // Still open: approach by at most the gap.
            (-separation * inv_h, 1.0, 0.0)
        } else if let Some((soft, fixed_soft)) = bias {
            let s = if c.against_fixed { fixed_soft } else { soft };
            let push = (s.bias_rate * (separation + slop).min(0.0)).max(-max_push);
            (-push, s.mass_scale, s.impulse_scale)
        } else {
            (0.0, 1.0, 0.0)
        };
        let (va, vb) = pair(c, velocities);
        let vn = speed_along(&normal, &va, &vb);
        let lambda = -normal.mass * mass_scale * (vn - target) - impulse_scale * c.normal_impulse;
        let old = c.normal_impulse;
        c.normal_impulse = (old + lambda).max(0.0);
        c.max_normal_impulse = c.max_normal_impulse.max(c.normal_impulse);
        push(c, &normal, velocities, c.normal_impulse - old);

        let limit = c.friction * c.normal_impulse;
        for k in 0..2 {
            let tangent = c.rows[k + 1];
            let (va, vb) = pair(c, velocities);
            let lambda = -tangent.mass * speed_along(&tangent, &va, &vb);
            let old = c.tangent_impulse[k];
            c.tangent_impulse[k] = (old + lambda).clamp(-limit, limit);
            push(c, &tangent, velocities, c.tangent_impulse[k] - old);
        }
    }
}

/// Bounces: points that approached fast and carried load leave at `-e * approach`.
fn restitution(
    params: &StepParams,
    constraints: &mut [ContactConstraint],
    velocities: &mut [Velocity],
) {
    let threshold = -params.settings.restitution_threshold;
    for c in constraints.iter_mut() {
        if c.restitution == 0.0 || c.approach >= threshold || c.max_normal_impulse == 0.0 {
            continue;
        }
        let (va, vb) = pair(c, velocities);
        let normal = c.rows[0];
        let target = -c.restitution * c.approach;
        let lambda = -normal.mass * (speed_along(&normal, &va, &vb) - target);
        let old = c.normal_impulse;
        c.normal_impulse = (old + lambda).max(0.0);
        push(c, &normal, velocities, c.normal_impulse - old);
    }
}
