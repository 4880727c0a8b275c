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
use super::{Motion, SolverBody, StepParams, integrate};
use crate::physics::resources::{SOLVER_ITERATIONS, SOLVER_SUBSTEPS};
use crate::physics::world::PhysicsWorld;
use crate::runtime::sim_math::{cross, dot3, normalize, quat_rotate};

/// Stiffness of the contact spring that removes overlap (Hz).
pub const CONTACT_HERTZ: f32 = 60.0;
/// Damping ratio of the contact spring.
pub const CONTACT_DAMPING_RATIO: f32 = 10.0;

const _: () = assert!(SOLVER_ITERATIONS == 2 * SOLVER_SUBSTEPS);

/// One contact point's constraint.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactConstraint {
    /// First body index.
    pub a: u32,
    /// Second body index.
    pub b: u32,
    /// Feature id, for warm starting.
    pub feature: u32,
    /// Unit normal from `a` to `b`.
    pub normal: Vec3,
    /// Two unit tangents, perpendicular to the normal and to each other.
    pub tangents: [Vec3; 2],
    /// From `a`'s centre to the contact point, at the start of the tick.
    pub ra: Vec3,
    /// From `b`'s centre to the contact point, at the start of the tick.
    pub rb: Vec3,
    /// The gap at the start of the tick minus the anchors' offset along the normal: adding the
    /// anchors' current offset gives the current gap.
    pub base_separation: f32,
    /// Impulse per unit of normal velocity change.
    pub normal_mass: f32,
    /// The same along each tangent.
    pub tangent_mass: [f32; 2],
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

/// Two unit vectors perpendicular to `n` and to each other, chosen from `n` alone.
fn tangent_basis(n: Vec3) -> [Vec3; 2] {
    let t1 = if n.x.abs() >= 0.577_35 {
        normalize(Vec3::new(n.y, -n.x, 0.0))
    } else {
        normalize(Vec3::new(0.0, n.z, -n.y))
    };
    [t1, cross(n, t1)]
}

/// `I^-1 v` for an inverse inertia given as rows.
fn apply_inertia(rows: &[Vec3; 3], v: Vec3) -> Vec3 {
    Vec3::new(dot3(rows[0], v), dot3(rows[1], v), dot3(rows[2], v))
}

/// Impulse needed per unit of relative velocity along `direction` at the lever arms.
fn effective_mass(ma: &Motion, mb: &Motion, ra: Vec3, rb: Vec3, direction: Vec3) -> f32 {
    let rna = cross(ra, direction);
    let rnb = cross(rb, direction);
    let k = ((ma.inv_mass + mb.inv_mass) + dot3(rna, apply_inertia(&ma.inv_inertia, rna)))
        + dot3(rnb, apply_inertia(&mb.inv_inertia, rnb));
    if k > 0.0 { 1.0 / k } else { 0.0 }
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

/// Velocities and how far each body moved during this tick.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BodyState {
    /// m/s.
    pub linear: Vec3,
    /// rad/s.
    pub angular: Vec3,
    /// Displacement since the start of the tick.
    pub delta_position: Vec3,
    /// Rotation since the start of the tick.
    pub delta_rotation: Quat,
}

/// Velocity of `b` relative to `a` at the contact.
fn relative_velocity(c: &ContactConstraint, states: &[BodyState]) -> Vec3 {
    let (sa, sb) = (&states[c.a as usize], &states[c.b as usize]);
    (sb.linear + cross(sb.angular, c.rb)) - (sa.linear + cross(sa.angular, c.ra))
}

/// Applies impulse `p` (from `a` on `b`) at the contact.
fn apply(c: &ContactConstraint, motion: &[Motion], states: &mut [BodyState], p: Vec3) {
    let (ma, mb) = (&motion[c.a as usize], &motion[c.b as usize]);
    let sa = &mut states[c.a as usize];
    sa.linear -= p * ma.inv_mass;
    sa.angular -= apply_inertia(&ma.inv_inertia, cross(c.ra, p));
    let sb = &mut states[c.b as usize];
    sb.linear += p * mb.inv_mass;
    sb.angular += apply_inertia(&mb.inv_inertia, cross(c.rb, p));
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
    let per_manifold: Vec<([ContactConstraint; 4], usize)> = manifolds
        .par_iter()
        .with_min_len(MANIFOLDS_PER_TASK)
        .map(|m| {
            let mut out = [ContactConstraint::default(); 4];
            let (body_a, body_b) = (&bodies[m.a as usize], &bodies[m.b as usize]);
            let (ma, mb) = (&motion[m.a as usize], &motion[m.b as usize]);
            let friction = (body_a.collider.friction * body_b.collider.friction).sqrt();
            let restitution = body_a.collider.restitution.max(body_b.collider.restitution);
            let against_fixed = ma.inv_mass == 0.0 || mb.inv_mass == 0.0;
            let stored = world.warm_starts_of(body_a.entity, body_b.entity);
            for (k, point) in m.points().iter().enumerate() {
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
                    normal: n,
                    tangents,
                    ra,
                    rb,
                    base_separation: point.separation - dot3(rb - ra, n),
                    normal_mass: effective_mass(ma, mb, ra, rb, n),
                    tangent_mass: [
                        effective_mass(ma, mb, ra, rb, tangents[0]),
                        effective_mass(ma, mb, ra, rb, tangents[1]),
                    ],
                    friction,
                    restitution,
                    approach: dot3(dv, n),
                    separation: point.separation,
                    against_fixed,
                    ..ContactConstraint::default()
                };
                if let Ok(i) = stored.binary_search_by_key(&point.feature, |w| w.feature) {
                    c.normal_impulse = stored[i].normal;
                    c.tangent_impulse = stored[i].tangent;
                }
                out[k] = c;
            }
            (out, m.points().len())
        })
        .collect();
    constraints.clear();
    for (group, len) in &per_manifold {
        constraints.extend_from_slice(&group[..*len]);
    }
}

/// Runs the substeps: gravity, warm start, biased pass, positions, relaxing pass; then restitution.
/// Moves the bodies and leaves their solved velocities in `bodies`.
pub fn solve(
    params: &StepParams,
    bodies: &mut [SolverBody],
    motion: &[Motion],
    constraints: &mut [ContactConstraint],
    states: &mut Vec<BodyState>,
) {
    let h = params.dt / SOLVER_SUBSTEPS as f32;
    let inv_h = 1.0 / h;
    let soft = Softness::new(CONTACT_HERTZ, CONTACT_DAMPING_RATIO, h);
    let fixed_soft = Softness::new(2.0 * CONTACT_HERTZ, CONTACT_DAMPING_RATIO, h);
    states.clear();
    states.extend(bodies.iter().map(|b| BodyState {
        linear: b.linear_velocity,
        angular: b.angular_velocity,
        delta_position: Vec3::ZERO,
        delta_rotation: Quat::IDENTITY,
    }));
    for _ in 0..SOLVER_SUBSTEPS {
        integrate::gravity(params, h, bodies, states);
        warm_start(motion, constraints, states);
        solve_contacts(
            params,
            motion,
            constraints,
            states,
            inv_h,
            Some((soft, fixed_soft)),
        );
        integrate::positions(h, bodies, states);
        solve_contacts(params, motion, constraints, states, inv_h, None);
    }
    restitution(params, motion, constraints, states);
    for (body, state) in bodies.iter_mut().zip(states.iter()) {
        if body.is_awake_dynamic() {
            body.linear_velocity = state.linear;
            body.angular_velocity = state.angular;
        }
    }
}

fn warm_start(motion: &[Motion], constraints: &[ContactConstraint], states: &mut [BodyState]) {
    for c in constraints {
        let p = c.normal * c.normal_impulse
            + (c.tangents[0] * c.tangent_impulse[0] + c.tangents[1] * c.tangent_impulse[1]);
        apply(c, motion, states, p);
    }
}

/// One velocity pass over every point: the normal, then friction. `bias` carries the contact
/// springs for the biased pass; `None` is the relaxing pass.
fn solve_contacts(
    params: &StepParams,
    motion: &[Motion],
    constraints: &mut [ContactConstraint],
    states: &mut [BodyState],
    inv_h: f32,
    bias: Option<(Softness, Softness)>,
) {
    let max_push = params.settings.max_correction_speed;
    let slop = params.settings.linear_slop;
    for c in constraints.iter_mut() {
        // The current gap, from how far the anchors moved since the start of the tick.
        let (sa, sb) = (&states[c.a as usize], &states[c.b as usize]);
        let anchor_a = sa.delta_position + quat_rotate(sa.delta_rotation, c.ra);
        let anchor_b = sb.delta_position + quat_rotate(sb.delta_rotation, c.rb);
        let separation = dot3(anchor_b - anchor_a, c.normal) + c.base_separation;
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
        let dv = relative_velocity(c, states);
        let vn = dot3(dv, c.normal);
        let lambda = -c.normal_mass * mass_scale * (vn - target) - impulse_scale * c.normal_impulse;
        let old = c.normal_impulse;
        c.normal_impulse = (old + lambda).max(0.0);
        c.max_normal_impulse = c.max_normal_impulse.max(c.normal_impulse);
        let applied = c.normal_impulse - old;
        apply(c, motion, states, c.normal * applied);

        let limit = c.friction * c.normal_impulse;
        for k in 0..2 {
            let dv = relative_velocity(c, states);
            let lambda = -c.tangent_mass[k] * dot3(dv, c.tangents[k]);
            let old = c.tangent_impulse[k];
            c.tangent_impulse[k] = (old + lambda).clamp(-limit, limit);
            let applied = c.tangent_impulse[k] - old;
            apply(c, motion, states, c.tangents[k] * applied);
        }
    }
}

/// Bounces: points that approached fast and carried load leave at `-e * approach`.
fn restitution(
    params: &StepParams,
    motion: &[Motion],
    constraints: &mut [ContactConstraint],
    states: &mut [BodyState],
) {
    let threshold = -params.settings.restitution_threshold;
    for c in constraints.iter_mut() {
        if c.restitution == 0.0 || c.approach >= threshold || c.max_normal_impulse == 0.0 {
            continue;
        }
        let dv = relative_velocity(c, states);
        let target = -c.restitution * c.approach;
        let lambda = -c.normal_mass * (dot3(dv, c.normal) - target);
        let old = c.normal_impulse;
        c.normal_impulse = (old + lambda).max(0.0);
        let applied = c.normal_impulse - old;
        apply(c, motion, states, c.normal * applied);
    }
}
