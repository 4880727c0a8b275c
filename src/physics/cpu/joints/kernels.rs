//! The joint rows, kind by kind: warm start and one velocity pass, as Box2D v3's joint solver
//! does them (Catto, *Solver2D*), in 3D.
//!
//! Each pass first measures the joint as it stands in the substep: the anchors' arms and the
//! frames' rotations are the tick's starting ones turned by how far each body has turned since
//! (`Displacement`), and the anchors' separation is the starting one plus how far each anchor has
//! moved. So the joint's error is current in every substep though the joint is prepared once a
//! tick. Then, in Box2D's order: the spring or motor, the limits, the rotation lock, the point
//! constraint.
//!
//! - A **lock** (the anchors together, the rotation held) is a soft constraint: in the biased pass
//!   its error becomes a target velocity through the joint spring ([`JointPass::soft`]), in the
//!   relaxing pass it is a plain velocity constraint. Blocks of two or three rows are solved
//!   together (Cramer's rule), not row by row.
//! - A **limit** is one-sided: while it is not reached it lets the coordinate approach by exactly
//!   what is left (speculative, like an open contact); once passed it pushes back softly in the
//!   biased pass. Its accumulated impulse never changes sign.
//! - A **motor** drives the coordinate's rate to a speed, or pulls it towards a target like a
//!   damped spring, its accumulated impulse clamped to `max_force * h`; it acts in both passes,
//!   being a physical force and not an error correction. A distance joint's spring does the same
//!   without the clamp.
//!
//! This module must never choose which joints run together; `colouring` does.

use bevy::math::{Quat, Vec3};

use super::Prepared;
use super::algebra::{
    PairVelocity, inverse_or_zero, rows_mul, solve2, solve2_locked, solve3, solve3_locked,
};
use crate::physics::cpu::body_state::Displacement;
use crate::physics::cpu::math::direction_or;
use crate::physics::cpu::softness::Softness;
use crate::physics::joint::{JointKind, Motor};
use crate::runtime::sim_math::{acos, atan2, cross, dot3, quat_mul};

/// What a velocity pass needs besides the joint.
#[derive(Clone, Copy, Debug)]
pub struct JointPass {
    /// The substep's length in seconds.
    pub h: f32,
    /// `1 / h`.
    pub inv_h: f32,
    /// The joint spring that removes error in the biased pass.
    pub soft: Softness,
    /// Whether this is the biased pass.
    pub use_bias: bool,
}

impl JointPass {
    /// The bias rate, mass scale and impulse scale of a lock in this pass.
    #[inline]
    fn lock(&self) -> (f32, f32, f32) {
        if self.use_bias {
            (
                self.soft.bias_rate,
                self.soft.mass_scale,
                self.soft.impulse_scale,
            )
        } else {
            (0.0, 1.0, 0.0)
        }
    }

    /// The bias, mass scale and impulse scale of a limit `c` away from being reached (negative
    /// once passed).
    #[inline]
    fn limit(&self, c: f32) -> (f32, f32, f32) {
        if c > 0.0 {
            (c * self.inv_h, 1.0, 0.0)
        } else if self.use_bias {
            (
                self.soft.bias_rate * c,
                self.soft.mass_scale,
                self.soft.impulse_scale,
            )
        } else {
            (0.0, 1.0, 0.0)
        }
    }
}

/// The joint as it stands in the current substep.
struct Pose {
    /// `a`'s arm to its anchor.
    ra: Vec3,
    /// `b`'s arm to its anchor.
    rb: Vec3,
    /// From `a`'s anchor to `b`'s.
    d: Vec3,
    /// `a`'s frame's X, Y and Z axes in the world.
    a: [Vec3; 3],
    /// `b`'s frame's X axis in the world.
    xb: Vec3,
}

/// `m r` for a displacement's rotation matrix (columns).
#[inline]
fn turned(m: &[Vec3; 3], r: Vec3) -> Vec3 {
    (m[0] * r.x + m[1] * r.y) + m[2] * r.z
}

fn pose(p: &Prepared, da: &Displacement, db: &Displacement) -> Pose {
    let ra = turned(&da.matrix, p.ra);
    let rb = turned(&db.matrix, p.rb);
    Pose {
        ra,
        rb,
        d: ((db.position - da.position) + (rb - ra)) + p.delta_center,
        a: p.axes_a.map(|axis| turned(&da.matrix, axis)),
        xb: turned(&db.matrix, p.x_b),
    }
}

/// The two joint frames' rotations in the world now, for the kinds that measure angles.
fn frames(p: &Prepared, da: &Displacement, db: &Displacement) -> (Quat, Quat) {
    (
        quat_mul(da.rotation, p.frame_a),
        quat_mul(db.rotation, p.frame_b),
    )
}

/// `b`'s frame turned about `a`'s X axis relative to `a`'s, in `(-pi, pi]`: a hinge's angle.
pub fn hinge_angle(qa: Quat, qb: Quat) -> f32 {
    let inverse = Quat::from_xyzw(-qa.x, -qa.y, -qa.z, qa.w);
    let relative = quat_mul(inverse, qb);
    let angle = 2.0 * atan2(relative.x, relative.w);
    let pi = std::f32::consts::PI;
    if angle > pi {
        angle - 2.0 * pi
    } else if angle <= -pi {
        angle + 2.0 * pi
    } else {
        angle
    }
}

/// The rotation taking `a`'s frame onto `b`'s, as a small-angle vector (world frame).
fn rotation_error(qa: Quat, qb: Quat) -> Vec3 {
    let inverse = Quat::from_xyzw(-qa.x, -qa.y, -qa.z, qa.w);
    let e = quat_mul(qb, inverse);
    let s = if e.w < 0.0 { -2.0 } else { 2.0 };
    Vec3::new(e.x * s, e.y * s, e.z * s)
}

/// The impulse scalar of one row: `-mass_scale * mass * (rate + bias) - impulse_scale * acc`.
#[inline]
fn row(mass: f32, rate: f32, (bias, mass_scale, impulse_scale): (f32, f32, f32), acc: f32) -> f32 {
    -mass_scale * mass * (rate + bias) - impulse_scale * acc
}

/// The motor's new accumulated impulse for a coordinate at `value` moving at `rate`.
fn motor(motor: &Motor, value: f32, rate: f32, mass: f32, acc: f32, h: f32) -> f32 {
    match *motor {
        Motor::Off => 0.0,
        Motor::Velocity { speed, max_force } => {
            let limit = max_force * h;
            (acc + -mass * (rate - speed)).clamp(-limit, limit)
        }
        Motor::Position {
            target,
            stiffness,
            damping,
            max_force,
        } => {
            let s = Softness::new(stiffness, damping, h);
            let limit = max_force * h;
            let lambda = row(
                mass,
                rate,
                (
                    s.bias_rate * (value - target),
                    s.mass_scale,
                    s.impulse_scale,
                ),
                acc,
            );
            (acc + lambda).clamp(-limit, limit)
        }
    }
}

/// Applies the joint's accumulated impulses (warm starting). Only the arms are measured anew;
/// an axis is turned to where it stands only when an impulse acts along it.
pub fn warm_start(p: &Prepared, da: &Displacement, db: &Displacement, v: &mut PairVelocity) {
    let ra = turned(&da.matrix, p.ra);
    let rb = turned(&db.matrix, p.rb);
    let d = || ((db.position - da.position) + (rb - ra)) + p.delta_center;
    let x = || turned(&da.matrix, p.axes_a[0]);
    let m = &p.mass;
    let i = &p.impulses;
    let axial = (i.axial + i.lower) - i.upper;
    match p.kind {
        JointKind::Fixed => {
            v.turn(m, i.angular);
            v.push(m, ra, rb, i.linear);
        }
        JointKind::Revolute { .. } => {
            let turn = if axial != 0.0 {
                i.angular + x() * axial
            } else {
                i.angular
            };
            v.turn(m, turn);
            v.push(m, ra, rb, i.linear);
        }
        JointKind::Prismatic { .. } => {
            v.turn(m, i.angular);
            v.push(m, ra + d(), rb, i.linear + x() * axial);
        }
        JointKind::Spherical { .. } => {
            // The cone's impulse is kept in `axial`, the twist limits' in `lower` and `upper`.
            let twist = i.lower - i.upper;
            if i.axial != 0.0 || twist != 0.0 {
                let xb = turned(&db.matrix, p.x_b);
                let (swing, _) = direction_or(cross(x(), xb), Vec3::ZERO);
                v.turn(m, swing * -i.axial + xb * twist);
            }
            v.push(m, ra, rb, i.linear);
        }
        JointKind::Distance { .. } => {
            let (n, _) = direction_or(d(), x());
            v.push(m, ra, rb, n * axial);
        }
    }
}

/// One velocity pass over the joint.
pub fn solve(
    p: &mut Prepared,
    da: &Displacement,
    db: &Displacement,
    v: &mut PairVelocity,
    pass: &JointPass,
) {
    let pose = pose(p, da, db);
    match p.kind {
        JointKind::Fixed => {
            lock_rotation(p, da, db, v, pass);
            lock_point(p, &pose, v, pass);
        }
        JointKind::Revolute { limits, motor: m } => {
            let [x, y, z] = pose.a;
            let driven = !matches!(m, Motor::Off);
            let (k, angle) = if driven || limits.is_some() {
                let (qa, qb) = frames(p, da, db);
                (
                    inverse_or_zero(p.mass.angular_between(x, x)),
                    hinge_angle(qa, qb),
                )
            } else {
                (0.0, 0.0)
            };
            if driven {
                let old = p.impulses.axial;
                p.impulses.axial = motor(&m, angle, dot3(x, v.spin()), k, old, pass.h);
                v.turn(&p.mass, x * (p.impulses.axial - old));
            }
            if let Some(limits) = limits {
                let lower = limit(
                    &mut p.impulses.lower,
                    angle - limits.lower,
                    dot3(x, v.spin()),
                    k,
                    pass,
                );
                v.turn(&p.mass, x * lower);
                let upper = limit(
                    &mut p.impulses.upper,
                    limits.upper - angle,
                    -dot3(x, v.spin()),
                    k,
                    pass,
                );
                v.turn(&p.mass, x * -upper);
            }
            // The two rows that keep the axes aligned: `xa x xb` is the rotation that would
            // bring them together, seen along `a`'s Y and Z.
            let e = cross(x, pose.xb);
            let (bias, mass_scale, impulse_scale) = pass.lock();
            let spin = v.spin();
            let acc = p.impulses.angular;
            let rhs = [
                dot3(y, spin) + bias * dot3(y, e),
                dot3(z, spin) + bias * dot3(z, e),
            ];
            let [kyy, kyz, kzz] = p.hinge_mass;
            let [ly, lz] = if p.mass.locked {
                solve2_locked(kyy, kyz, kzz, rhs)
            } else {
                solve2(kyy, kyz, kzz, rhs)
            };
            let impulse = (y * (-mass_scale * ly - impulse_scale * dot3(y, acc)))
                + z * (-mass_scale * lz - impulse_scale * dot3(z, acc));
            p.impulses.angular += impulse;
            v.turn(&p.mass, impulse);
            lock_point(p, &pose, v, pass);
        }
        JointKind::Prismatic { limits, motor: m } => {
            let [x, y, z] = pose.a;
            let ra = pose.ra + pose.d;
            let k = inverse_or_zero(p.mass.linear_between(ra, pose.rb, x, x));
            let travel = dot3(x, pose.d);
            if !matches!(m, Motor::Off) {
                let old = p.impulses.axial;
                let rate = v.along(ra, pose.rb, x);
                p.impulses.axial = motor(&m, travel, rate, k, old, pass.h);
                v.push(&p.mass, ra, pose.rb, x * (p.impulses.axial - old));
            }
            if let Some(limits) = limits {
                let rate = v.along(ra, pose.rb, x);
                let lower = limit(&mut p.impulses.lower, travel - limits.lower, rate, k, pass);
                v.push(&p.mass, ra, pose.rb, x * lower);
                let rate = v.along(ra, pose.rb, x);
                let upper = limit(&mut p.impulses.upper, limits.upper - travel, -rate, k, pass);
                v.push(&p.mass, ra, pose.rb, x * -upper);
            }
            lock_rotation(p, da, db, v, pass);
            // The two rows across the axis.
            let (bias, mass_scale, impulse_scale) = pass.lock();
            let rhs = [
                v.along(ra, pose.rb, y) + bias * dot3(y, pose.d),
                v.along(ra, pose.rb, z) + bias * dot3(z, pose.d),
            ];
            let (kyy, kyz, kzz) = (
                p.mass.linear_between(ra, pose.rb, y, y),
                p.mass.linear_between(ra, pose.rb, y, z),
                p.mass.linear_between(ra, pose.rb, z, z),
            );
            let [ly, lz] = if p.mass.locked {
                solve2_locked(kyy, kyz, kzz, rhs)
            } else {
                solve2(kyy, kyz, kzz, rhs)
            };
            let acc = p.impulses.linear;
            let impulse = (y * (-mass_scale * ly - impulse_scale * dot3(y, acc)))
                + z * (-mass_scale * lz - impulse_scale * dot3(z, acc));
            p.impulses.linear += impulse;
            v.push(&p.mass, ra, pose.rb, impulse);
        }
        JointKind::Spherical { cone, twist } => {
            if let Some(cone) = cone {
                let (xa, xb) = (pose.a[0], pose.xb);
                let (swing, sine) = direction_or(cross(xa, xb), Vec3::ZERO);
                if sine > 0.0 {
                    let angle = acos(dot3(xa, xb).clamp(-1.0, 1.0));
                    let k = inverse_or_zero(p.mass.angular_between(swing, swing));
                    let rate = -dot3(swing, v.spin());
                    let upper = limit(&mut p.impulses.axial, cone - angle, rate, k, pass);
                    v.turn(&p.mass, swing * -upper);
                } else {
                    p.impulses.axial = 0.0;
                }
            }
            if let Some(twist) = twist {
                // The twist of the swing-twist split about `a`'s X axis, turned about `b`'s.
                let (qa, qb) = frames(p, da, db);
                let angle = hinge_angle(qa, qb);
                let axis = pose.xb;
                let k = inverse_or_zero(p.mass.angular_between(axis, axis));
                let rate = dot3(axis, v.spin());
                let lower = limit(&mut p.impulses.lower, angle - twist.lower, rate, k, pass);
                v.turn(&p.mass, axis * lower);
                let rate = dot3(axis, v.spin());
                let upper = limit(&mut p.impulses.upper, twist.upper - angle, -rate, k, pass);
                v.turn(&p.mass, axis * -upper);
            }
            lock_point(p, &pose, v, pass);
        }
        JointKind::Distance { min, max, spring } => {
            let x = pose.a[0];
            let (n, length) = direction_or(pose.d, x);
            let (ra, rb) = (pose.ra, pose.rb);
            let k = inverse_or_zero(p.mass.linear_between(ra, rb, n, n));
            if min < max {
                if let Some(spring) = spring.filter(|s| s.hertz > 0.0) {
                    let s = Softness::new(spring.hertz, spring.damping_ratio, pass.h);
                    let c = length - spring.rest_length;
                    let scales = (s.bias_rate * c, s.mass_scale, s.impulse_scale);
                    let lambda = row(k, v.along(ra, rb, n), scales, p.impulses.axial);
                    p.impulses.axial += lambda;
                    v.push(&p.mass, ra, rb, n * lambda);
                }
                let rate = v.along(ra, rb, n);
                let lower = limit(&mut p.impulses.lower, length - min, rate, k, pass);
                v.push(&p.mass, ra, rb, n * lower);
                let rate = v.along(ra, rb, n);
                let upper = limit(&mut p.impulses.upper, max - length, -rate, k, pass);
                v.push(&p.mass, ra, rb, n * -upper);
            } else {
                let (bias, mass_scale, impulse_scale) = pass.lock();
                let scales = (bias * (length - min), mass_scale, impulse_scale);
                let lambda = row(k, v.along(ra, rb, n), scales, p.impulses.axial);
                p.impulses.axial += lambda;
                v.push(&p.mass, ra, rb, n * lambda);
            }
        }
    }
}

/// A one-sided row `c` away from its limit, the coordinate's distance to it moving at `rate`;
/// returns the change of its impulse, whose total stays at or above zero.
fn limit(acc: &mut f32, c: f32, rate: f32, mass: f32, pass: &JointPass) -> f32 {
    let lambda = row(mass, rate, pass.limit(c), *acc);
    let new = (*acc + lambda).max(0.0);
    let change = new - *acc;
    *acc = new;
    change
}

/// The three rows that hold the frames' relative rotation.
fn lock_rotation(
    p: &mut Prepared,
    da: &Displacement,
    db: &Displacement,
    v: &mut PairVelocity,
    pass: &JointPass,
) {
    let (bias, mass_scale, impulse_scale) = pass.lock();
    let (qa, qb) = frames(p, da, db);
    let error = rotation_error(qa, qb);
    let x = rows_mul(&p.angular_inverse, v.spin() + error * bias);
    let impulse = x * -mass_scale - p.impulses.angular * impulse_scale;
    p.impulses.angular += impulse;
    v.turn(&p.mass, impulse);
}

/// The three rows that hold the anchors together.
fn lock_point(p: &mut Prepared, pose: &Pose, v: &mut PairVelocity, pass: &JointPass) {
    let (bias, mass_scale, impulse_scale) = pass.lock();
    // The effective mass with the current arms: a link whipping round turns its arms too far
    // within a tick for the tick's starting ones to do (a chain let fall from the horizontal
    // then blows up).
    let k = p.mass.point(pose.ra, pose.rb);
    let rhs = v.point(pose.ra, pose.rb) + pose.d * bias;
    let x = if p.mass.locked {
        solve3_locked(&k, rhs)
    } else {
        solve3(&k, rhs)
    };
    let impulse = x * -mass_scale - p.impulses.linear * impulse_scale;
    p.impulses.linear += impulse;
    v.push(&p.mass, pose.ra, pose.rb, impulse);
}

/// The force (N) and torque (N·m) the joint carried on the last substep, from its accumulated
/// impulses and its frame at the start of the tick.
pub fn load(p: &Prepared, h: f32) -> (f32, f32) {
    let i = &p.impulses;
    let x = p.axes_a[0];
    let axial = (i.axial + i.lower) - i.upper;
    let (linear, angular) = match p.kind {
        JointKind::Fixed => (i.linear, i.angular),
        JointKind::Revolute { .. } => (i.linear, i.angular + x * axial),
        JointKind::Prismatic { .. } => (i.linear + x * axial, i.angular),
        JointKind::Spherical { .. } => (i.linear, x * (i.axial.abs() + (i.lower - i.upper).abs())),
        JointKind::Distance { .. } => (x * axial, Vec3::ZERO),
    };
    let length = |v: Vec3| dot3(v, v).sqrt();
    (length(linear) / h, length(angular) / h)
}
