//! The contact pass of the CPU reference, operation for operation `physics_contacts.comp`'s
//! contacts mode.
//!
//! This module owns [`collect`]: one dynamic body's fixed-point contact sums (position push and
//! velocity change) from every GPU body and CPU collider it touches. The shader finds candidates
//! through a hash grid and a fallback list; the reference visits every slot instead. Both give
//! the same sums: a pair counts only when the bounding spheres overlap (the grid finds every such
//! pair exactly once), and the sums are integers, so their order does not matter. It must never
//! read state this tick's contact pass has written: every body sees the others as integration
//! left them.

use super::float::{F, M3, V3};
use super::shapes::{Posed, Touch, bounding_radius, contact};
use super::{Step, Words};
use crate::physics::gpu::physics_layout::*;

const CONTACT_SLOP: F = F(0.002);
const CONTACT_RELAXATION: F = F(0.8);
const BOUNCE_THRESHOLD: F = F(1.0);
const MAX_PUSH: F = F(1.0);
const MAX_VELOCITY_CHANGE: F = F(1000.0);
const SUPPORT_COSINE: F = F(0.707_106_77);
/// Rolling resistance: the angular impulse that slows a body's spin against what it touches is
/// at most this times the friction coefficient, the normal impulse and the contact's lever arm.
const ROLLING_RESISTANCE: F = F(0.1);
const POSITION_SCALE: F = F(1_048_576.0);
const VELOCITY_SCALE: F = F(65_536.0);

/// What one body collects: position push (2^-20 m), velocity change (2^-16 m/s) and angular
/// velocity change (2^-16 rad/s).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sums {
    pub push: [i32; 3],
    pub velocity: [i32; 3],
    pub angular: [i32; 3],
}

fn to_fixed(value: F, scale: F) -> i32 {
    (value * scale).round_even().to_int()
}

fn add_fixed(sum: &mut [i32; 3], v: V3, scale: F) {
    for (axis, total) in sum.iter_mut().enumerate() {
        *total = total.wrapping_add(to_fixed(v.get(axis), scale));
    }
}

/// The other side of a contact, loaded before the shape test (as the shader loads it).
struct Other {
    posed: Posed,
    memberships: u32,
    filters: u32,
    flags: u32,
    friction: F,
    restitution: F,
    velocity: V3,
    angular: V3,
    inv_inertia: V3,
    kind: u32,
    mass: F,
}

fn collider(colliders: &[u32], index: usize) -> Other {
    let base = 1 + index * COLLIDER_STRIDE;
    let record = &colliders[base..base + COLLIDER_STRIDE];
    let words = Words(record);
    Other {
        posed: Posed {
            shape: record[COLLIDER_SHAPE],
            params: words.v3(COLLIDER_PARAMS),
            rotation: words.rotation(COLLIDER_MATRIX),
            centre: words.v3(COLLIDER_MATRIX + 12),
        },
        memberships: record[COLLIDER_MEMBERSHIPS],
        filters: record[COLLIDER_FILTERS],
        flags: record[COLLIDER_FLAGS] | FLAG_OCCUPIED,
        friction: words.f(COLLIDER_FRICTION),
        restitution: F::ZERO,
        velocity: V3::ZERO,
        angular: V3::ZERO,
        inv_inertia: V3::ZERO,
        kind: KIND_STATIC,
        mass: F::ZERO,
    }
}

fn body(record: &[u32], step: &Step) -> Other {
    let words = Words(record);
    let kind = record[BODY_KIND];
    let mut velocity = words.v3(BODY_LINEAR);
    if kind == KIND_DYNAMIC {
        // The other body's velocity before this tick's gravity.
        let gain = words.f(BODY_GRAVITY_SCALE) * step.dt;
        velocity = velocity - step.gravity.scale(gain);
    }
    Other {
        posed: posed(record),
        memberships: record[BODY_MEMBERSHIPS],
        filters: record[BODY_FILTERS],
        flags: record[BODY_FLAGS],
        friction: words.f(BODY_FRICTION),
        restitution: words.f(BODY_RESTITUTION),
        velocity,
        angular: words.v3(BODY_ANGULAR),
        inv_inertia: words.v3(BODY_INV_INERTIA),
        kind,
        mass: words.f(BODY_MASS),
    }
}

/// A body record's shape and pose.
pub(crate) fn posed(record: &[u32]) -> Posed {
    let words = Words(record);
    Posed {
        shape: record[BODY_SHAPE],
        params: words.v3(BODY_SHAPE_PARAMS),
        rotation: words.rotation(BODY_MATRIX),
        centre: words.v3(BODY_MATRIX + 12),
    }
}

fn layers_meet(memberships_a: u32, filters_a: u32, memberships_b: u32, filters_b: u32) -> bool {
    (memberships_a & filters_b) != 0 && (memberships_b & filters_a) != 0
}

/// `I^-1 v` for a body turned by `rotation` whose inverse inertia in its own frame is the
/// diagonal `inv_local` (`inertia_times` in the shader).
fn inertia_times(rotation: &M3, inv_local: V3, v: V3) -> V3 {
    let [c0, c1, c2] = rotation.0;
    let local = V3::new(v.dot(c0), v.dot(c1), v.dot(c2));
    let scaled = V3::new(
        local.x * inv_local.x,
        local.y * inv_local.y,
        local.z * inv_local.z,
    );
    rotation.mul_vec(scaled)
}

/// The turning part of a body's inverse mass along `direction` at lever arm `arm`:
/// `(arm x d) . I^-1 (arm x d)`.
fn turning_mass(rotation: &M3, inv_local: V3, arm: V3, direction: V3) -> F {
    let moment = arm.cross(direction);
    moment.dot(inertia_times(rotation, inv_local, moment))
}

/// How a body meets one other: the part of the position correction it takes, whether the other's
/// inertia shares the impulse (a dynamic body that is not this one's support), and the pair's
/// friction and restitution.
#[derive(Clone, Copy)]
struct Pairing {
    share: F,
    other_moves: bool,
    friction: F,
    restitution: F,
}

/// Adds the response of body `record` (shaped and posed as `own`) to one contact (`respond` in
/// the shader).
fn respond(
    sums: &mut Sums,
    record: &[u32],
    own: &Posed,
    touch: &Touch,
    other: &Other,
    pairing: &Pairing,
) {
    let Pairing {
        share,
        other_moves,
        friction,
        restitution,
    } = *pairing;
    let normal = touch.normal;
    let beyond = (touch.depth - CONTACT_SLOP).max(F::ZERO);
    let correction = (beyond * CONTACT_RELAXATION * share).min(MAX_PUSH);
    add_fixed(&mut sums.push, normal.scale(correction), POSITION_SCALE);

    let words = Words(record);
    let rotation = own.rotation;
    let inv_inertia = words.v3(BODY_INV_INERTIA);
    let angular = words.v3(BODY_ANGULAR);
    let arm = touch.point - own.centre;
    let other_arm = touch.point - other.posed.centre;
    let own_velocity = words.v3(BODY_LINEAR) + angular.cross(arm);
    let other_velocity = other.velocity + other.angular.cross(other_arm);
    let relative = own_velocity - other_velocity;
    let approach = relative.dot(normal);
    if !(approach.0 < 0.0) {
        return;
    }
    let mass = words.f(BODY_MASS);
    let inv_mass = mass.recip();
    let other_inv_mass = other.mass.recip();
    let inverse_mass = |direction: V3| {
        let own = inv_mass + turning_mass(&rotation, inv_inertia, arm, direction);
        if other_moves {
            own + (other_inv_mass
                + turning_mass(
                    &other.posed.rotation,
                    other.inv_inertia,
                    other_arm,
                    direction,
                ))
        } else {
            own
        }
    };
    let bounce = if (-approach).0 > BOUNCE_THRESHOLD.0 {
        restitution
    } else {
        F::ZERO
    };
    let wanted = (-approach) * (F::ONE + bounce);
    let normal_impulse = wanted
        .div(inverse_mass(normal))
        .min(MAX_VELOCITY_CHANGE * mass);
    let mut impulse = normal.scale(normal_impulse);
    let tangent = relative - normal.scale(approach);
    let speed = tangent.length();
    if speed.0 > 0.0 {
        let direction = tangent.scale(speed.recip());
        let limit = friction * normal_impulse;
        let slide = speed.div(inverse_mass(direction)).min(limit);
        impulse = impulse - direction.scale(slide);
    }
    let dv = impulse.scale(inv_mass);
    let mut dw = inertia_times(&rotation, inv_inertia, arm.cross(impulse));
    let spin = angular - other.angular;
    let spin_rate = spin.length();
    if spin_rate.0 > 0.0 {
        let axis = spin.scale(spin_rate.recip());
        let turning = axis.dot(inertia_times(&rotation, inv_inertia, axis));
        let limit = ROLLING_RESISTANCE * friction * normal_impulse * arm.length();
        let resist = spin_rate.div(turning).min(limit);
        dw = dw - axis.scale(resist * turning);
    }
    add_fixed(&mut sums.velocity, dv, VELOCITY_SCALE);
    add_fixed(&mut sums.angular, dw, VELOCITY_SCALE);
}

/// Body `slot` against one other body or collider (`touch` in the shader).
fn touch(
    sums: &mut Sums,
    bodies: &[u32],
    slot: usize,
    other: &Other,
    is_collider: bool,
    step: &Step,
) {
    if other.flags & FLAG_OCCUPIED == 0 || other.flags & FLAG_SENSOR != 0 {
        return;
    }
    let record = &bodies[slot * BODY_STRIDE..(slot + 1) * BODY_STRIDE];
    if !layers_meet(
        record[BODY_MEMBERSHIPS],
        record[BODY_FILTERS],
        other.memberships,
        other.filters,
    ) {
        return;
    }
    let a = posed(record);
    if !is_collider {
        let offset = a.centre - other.posed.centre;
        let reach = bounding_radius(a.shape, a.params)
            + bounding_radius(other.posed.shape, other.posed.params);
        let reach2 = reach * reach;
        let dist2 = offset.dot(offset);
        if !(dist2.0 <= reach2.0) {
            return;
        }
    }
    let Some(touch) = contact(&a, &other.posed) else {
        return;
    };
    let words = Words(record);
    let mut share = F::ONE;
    let mut other_moves = false;
    if other.kind == KIND_DYNAMIC {
        let up = touch.normal.dot(step.support_up);
        if up.0 < (-SUPPORT_COSINE).0 {
            return;
        }
        if !(up.0 > SUPPORT_COSINE.0) {
            let mass_a = words.f(BODY_MASS);
            let total = mass_a + other.mass;
            share = other.mass.div(total);
            other_moves = true;
        }
    }
    let friction = (words.f(BODY_FRICTION) * other.friction).sqrt();
    let restitution = words.f(BODY_RESTITUTION).max(other.restitution);
    let pairing = Pairing {
        share,
        other_moves,
        friction,
        restitution,
    };
    respond(sums, record, &a, &touch, other, &pairing);
}

/// The contact sums of dynamic, non-sensor body `slot`.
pub(crate) fn collect(bodies: &[u32], colliders: &[u32], slot: usize, step: &Step) -> Sums {
    let mut sums = Sums::default();
    let capacity = bodies.len() / BODY_STRIDE;
    for other in 0..capacity {
        if other == slot {
            continue;
        }
        let record = &bodies[other * BODY_STRIDE..(other + 1) * BODY_STRIDE];
        if record[BODY_FLAGS] & FLAG_OCCUPIED == 0 {
            continue;
        }
        touch(&mut sums, bodies, slot, &body(record, step), false, step);
    }
    for index in 0..colliders[0] as usize {
        touch(
            &mut sums,
            bodies,
            slot,
            &collider(colliders, index),
            true,
            step,
        );
    }
    sums
}
