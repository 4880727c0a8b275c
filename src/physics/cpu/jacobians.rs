//! Contact constraints built four manifolds at a time, straight into the SIMD layout: lever arms,
//! tangents, Jacobian rows with their effective masses, the gap and approach speed, and last
//! tick's impulses for warm starting.
//!
//! The arithmetic is the scalar formulas' (`sim_math::dot3`'s and `cross`'s order, IEEE `sqrt` and
//! `/`) done lane by lane, so it gives the same bits on every CPU. Empty lanes read a body at the
//! origin with no mass and a zero normal, which builds rows without mass. This module must never
//! change velocities or decide the order of anything.

use std::ops::Range;

use bevy::math::Vec3;

use super::lanes::{LANES, LaneVec3, Lanes, Mask};
use super::manifold::{ContactPoint, Manifold};
use super::rows::{Batch, WidePoint, WideRow};
use super::{Motion, SolverBody};
use crate::physics::world::WarmStart;

/// Everything a batch's constraints are built from.
pub struct Sources<'a> {
    /// The bodies, sorted by `SimId`.
    pub bodies: &'a [SolverBody],
    /// Their mass properties for the tick.
    pub motion: &'a [Motion],
    /// This tick's manifolds.
    pub manifolds: &'a [Manifold],
    /// Last tick's impulses, sorted by pair and feature.
    pub stored: &'a [WarmStart],
    /// Per manifold, its range of `stored`.
    pub warm: &'a [Range<usize>],
    /// The velocity slot of empty lanes.
    pub spare: u32,
}

/// One body of each lane, as the constraints see it.
struct LaneBodies {
    index: [u32; LANES],
    position: LaneVec3,
    linear: LaneVec3,
    angular: LaneVec3,
    inv_mass: Lanes,
    /// Rows of the world inverse inertia.
    inv_inertia: [LaneVec3; 3],
    /// Lanes whose body has a locked translation axis.
    locked: Mask,
    /// Whether any lane's body has one.
    any_locked: bool,
    /// 1 on each free translation axis, 0 on a locked one.
    free: LaneVec3,
}

impl LaneBodies {
    /// The body's linear inverse mass along unit `direction`: `inv_mass`, or where a translation
    /// axis is locked, `inv_mass` times the share of `direction` on the free axes.
    fn linear_inverse_mass(&self, direction: LaneVec3) -> Lanes {
        if !self.any_locked {
            return self.inv_mass;
        }
        let share = self.free.dot(direction.times(direction));
        self.locked.select(self.inv_mass * share, self.inv_mass)
    }
}

/// `I^-1 v` for an inverse inertia given as rows.
fn apply_inertia(rows: &[LaneVec3; 3], v: LaneVec3) -> LaneVec3 {
    LaneVec3 {
        x: rows[0].dot(v),
        y: rows[1].dot(v),
        z: rows[2].dot(v),
    }
}

/// `v / |v|`, or `fallback` where `v` is too short to have a direction.
fn direction_or(v: LaneVec3, fallback: Vec3) -> LaneVec3 {
    let len = v.dot(v).sqrt();
    let unit = v.scale(Lanes::splat(1.0) / len);
    let long = len.gt(Lanes::splat(1.0e-9));
    long.select3(unit, LaneVec3::from_vecs([fallback; LANES]))
}

/// Two unit vectors perpendicular to `n` and to each other, chosen from `n` alone.
fn tangent_basis(n: LaneVec3) -> [LaneVec3; 2] {
    let zero = Lanes::ZERO;
    let from_x = direction_or(
        LaneVec3 {
            x: n.y,
            y: -n.x,
            z: zero,
        },
        Vec3::Z,
    );
    let from_yz = direction_or(
        LaneVec3 {
            x: zero,
            y: n.z,
            z: -n.y,
        },
        Vec3::X,
    );
    let big_x = n.x.abs().ge(Lanes::splat(0.577_35));
    let t1 = big_x.select3(from_x, from_yz);
    [t1, n.cross(t1)]
}

/// The Jacobian row of `direction` at lever arms `ra`, `rb`.
fn row(a: &LaneBodies, b: &LaneBodies, ra: LaneVec3, rb: LaneVec3, direction: LaneVec3) -> WideRow {
    let arm_a = ra.cross(direction);
    let arm_b = rb.cross(direction);
    let turn_a = apply_inertia(&a.inv_inertia, arm_a);
    let turn_b = apply_inertia(&b.inv_inertia, arm_b);
    let linear = a.linear_inverse_mass(direction) + b.linear_inverse_mass(direction);
    let k = (linear + arm_a.dot(turn_a)) + arm_b.dot(turn_b);
    WideRow {
        direction,
        turn_a,
        turn_b,
        mass: k.gt(Lanes::ZERO).select(Lanes::splat(1.0) / k, Lanes::ZERO),
    }
}

impl Sources<'_> {
    fn lane_bodies(&self, index: [u32; LANES]) -> LaneBodies {
        let get = |i: u32| {
            if i == self.spare {
                (Vec3::ZERO, Vec3::ZERO, Vec3::ZERO, Motion::default())
            } else {
                let body = &self.bodies[i as usize];
                let motion = self.motion[i as usize];
                (
                    body.position,
                    body.linear_velocity,
                    body.angular_velocity,
                    motion,
                )
            }
        };
        let b = index.map(get);
        LaneBodies {
            index,
            position: LaneVec3::from_vecs(b.map(|b| b.0)),
            linear: LaneVec3::from_vecs(b.map(|b| b.1)),
            angular: LaneVec3::from_vecs(b.map(|b| b.2)),
            inv_mass: Lanes::from_array(b.map(|b| b.3.inv_mass)),
            inv_inertia: std::array::from_fn(|r| {
                LaneVec3::from_vecs(b.map(|b| b.3.inv_inertia[r]))
            }),
            locked: Mask::from_flags(b.map(|b| b.3.locks_translation)),
            any_locked: b.iter().any(|b| b.3.locks_translation),
            free: LaneVec3::from_vecs(b.map(|b| b.3.free)),
        }
    }

    /// Builds the batch of manifolds `lanes` (at most four, each with `points.len()` points).
    pub fn fill(&self, lanes: &[u32], batch: &mut Batch, points: &mut [WidePoint]) {
        let manifold: [Option<&Manifold>; LANES] =
            std::array::from_fn(|l| lanes.get(l).map(|&i| &self.manifolds[i as usize]));
        let a = self.lane_bodies(manifold.map(|m| m.map_or(self.spare, |m| m.a)));
        let b = self.lane_bodies(manifold.map(|m| m.map_or(self.spare, |m| m.b)));
        let collider = |m: Option<&Manifold>| {
            m.map(|m| {
                (
                    &self.bodies[m.a as usize].collider,
                    &self.bodies[m.b as usize].collider,
                )
            })
        };
        let pair = manifold.map(collider);
        let friction = pair.map(|p| p.map_or(0.0, |(ca, cb)| (ca.friction * cb.friction).sqrt()));
        let restitution =
            pair.map(|p| p.map_or(0.0, |(ca, cb)| ca.restitution.max(cb.restitution)));
        let sensor = pair.map(|p| p.is_some_and(|(ca, cb)| ca.sensor || cb.sensor));
        let (ima, imb) = (a.inv_mass.to_array(), b.inv_mass.to_array());
        *batch = Batch {
            a: a.index,
            b: b.index,
            inv_mass_a: a.inv_mass,
            inv_mass_b: b.inv_mass,
            locked: a.any_locked || b.any_locked,
            free_a: a.free,
            free_b: b.free,
            friction: Lanes::from_array(friction),
            restitution: Lanes::from_array(restitution),
            bounces: restitution.iter().any(|&e| e != 0.0),
            against_fixed: Mask::from_flags(std::array::from_fn(|l| {
                ima[l] == 0.0 || imb[l] == 0.0
            })),
        };
        let sensor_mask = Mask::from_flags(sensor);
        // Each lane's stored impulses (none for an empty lane, or a sensor, which pushes nothing).
        let stored: [&[WarmStart]; LANES] = std::array::from_fn(|l| match lanes.get(l) {
            Some(&i) if !sensor[l] => &self.stored[self.warm[i as usize].clone()],
            _ => &[],
        });
        for (p, out) in points.iter_mut().enumerate() {
            let point: [ContactPoint; LANES] =
                manifold.map(|m| m.map_or(ContactPoint::default(), |m| m.points[p]));
            let at = LaneVec3::from_vecs(point.map(|q| q.point));
            let n = LaneVec3::from_vecs(point.map(|q| q.normal));
            let separation = Lanes::from_array(point.map(|q| q.separation));
            let ra = at - a.position;
            let rb = at - b.position;
            let tangents = tangent_basis(n);
            let dv = (b.linear + b.angular.cross(rb)) - (a.linear + a.angular.cross(ra));
            let mut rows = [
                row(&a, &b, ra, rb, n),
                row(&a, &b, ra, rb, tangents[0]),
                row(&a, &b, ra, rb, tangents[1]),
            ];
            // A sensor reports contact but pushes nothing: rows without mass apply no impulse.
            for r in &mut rows {
                r.mass = sensor_mask.select(Lanes::ZERO, r.mass);
            }
            let mut normal = [0.0; LANES];
            let mut tangent = [[0.0; 2]; LANES];
            for (l, stored) in stored.iter().enumerate() {
                if let Ok(s) = stored.binary_search_by_key(&point[l].feature, |w| w.feature) {
                    normal[l] = stored[s].normal;
                    tangent[l] = stored[s].tangent;
                }
            }
            *out = WidePoint {
                rows,
                ra,
                rb,
                base_separation: separation - (rb - ra).dot(n),
                separation,
                approach: dv.dot(n),
                normal_impulse: Lanes::from_array(normal),
                max_normal_impulse: Lanes::ZERO,
                tangent_impulse: [
                    Lanes::from_array(tangent.map(|t| t[0])),
                    Lanes::from_array(tangent.map(|t| t[1])),
                ],
            };
        }
    }
}
