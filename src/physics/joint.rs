//! [`Joint`]: two bodies held together (a hinge, a slider, a ball joint, a rope, a weld), as a
//! game puts it on an entity of its own.
//!
//! A joint names its bodies by `SimId`, so it means the same thing after a restore, on a peer and
//! in a replay, whatever entities the bodies have. Each body carries a [`JointFrame`]: an anchor
//! point and an orientation in the body's own frame. The joint holds the two anchors together
//! and, depending on its [`JointKind`], some of the two frames' relative rotation and
//! translation. Every kind measures along the frames' X axis: a hinge turns about it, a slider
//! slides along it, a ball joint's cone opens around it.
//!
//! Everything here is simulation state: it is hashed, snapshotted, compared field by field and
//! restored in place, the `broken` flag and motor targets included. This module owns the data
//! and its checks only; the solver (`physics::cpu::joints`) must never be called from here.

use bevy::math::{Quat, Vec3};
use bevy::prelude::{Component, Transform};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::runtime::sim_math;
use crate::state::SimId;

/// An anchor point and an orientation in one body's local frame (in the world frame for a joint
/// to the world).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState)]
#[serde(default, deny_unknown_fields)]
pub struct JointFrame {
    /// Where the joint attaches, relative to the body's centre, in metres.
    pub anchor: Vec3,
    /// The joint's axes relative to the body's: the joint's axis is this rotation's X axis.
    pub rotation: Quat,
}

impl Default for JointFrame {
    fn default() -> Self {
        JointFrame {
            anchor: Vec3::ZERO,
            rotation: Quat::IDENTITY,
        }
    }
}

/// Limits on a joint's free coordinate: an angle in radians for a hinge, a distance in metres
/// along the axis for a slider.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState)]
#[serde(deny_unknown_fields)]
pub struct JointLimits {
    /// The smallest value allowed.
    pub lower: f32,
    /// The largest value allowed (at least `lower`).
    pub upper: f32,
}

/// What drives a hinge or a slider along its free coordinate.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, rusting_macros::SimState,
)]
pub enum Motor {
    /// Nothing drives the joint.
    #[default]
    Off,
    /// Drives the coordinate at `speed` (rad/s or m/s) with at most `max_force`.
    Velocity {
        /// Target speed.
        speed: f32,
        /// The largest torque (N·m) or force (N) the motor applies.
        max_force: f32,
    },
    /// Pulls the coordinate towards `target` (rad or m) like a damped spring of `stiffness` hertz
    /// and damping ratio `damping`, with at most `max_force`.
    Position {
        /// The angle or distance the motor holds.
        target: f32,
        /// The spring's frequency in hertz (how fast the motor reaches its target).
        stiffness: f32,
        /// The damping ratio: 1 reaches the target without overshooting.
        damping: f32,
        /// The largest torque (N·m) or force (N) the motor applies.
        max_force: f32,
    },
}

/// A distance joint's spring.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState)]
#[serde(deny_unknown_fields)]
pub struct Spring {
    /// The length the spring pulls towards, in metres.
    pub rest_length: f32,
    /// Frequency in hertz.
    pub hertz: f32,
    /// Damping ratio (1 is critical).
    pub damping_ratio: f32,
}

/// What a joint holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState)]
pub enum JointKind {
    /// The two frames stay together and keep their relative rotation: a weld.
    Fixed,
    /// A hinge: the anchors stay together and the frames turn about their shared X axis.
    Revolute {
        /// Angle limits in radians, within `[-pi, pi]`.
        #[serde(default)]
        limits: Option<JointLimits>,
        /// The hinge's motor.
        #[serde(default)]
        motor: Motor,
    },
    /// A slider: the frames keep their rotation and `b`'s anchor moves along `a`'s X axis.
    Prismatic {
        /// Travel limits in metres along the axis.
        #[serde(default)]
        limits: Option<JointLimits>,
        /// The slider's motor.
        #[serde(default)]
        motor: Motor,
    },
    /// A ball joint: the anchors stay together and the frames turn freely, `b`'s X axis kept
    /// within `cone` radians of `a`'s when a cone is given, and its twist about that axis within
    /// `twist` when limits are given.
    Spherical {
        /// The largest angle between the two X axes, in `(0, pi]`.
        #[serde(default)]
        cone: Option<f32>,
        /// Limits on the twist: how far `b`'s frame turns about its X axis relative to `a`'s, in
        /// radians within `[-pi, pi]` (a ragdoll's neck or upper arm).
        #[serde(default)]
        twist: Option<JointLimits>,
    },
    /// A rope, a rod or a spring between the anchors: their distance stays within
    /// `[min, max]`; a spring pulls it towards its rest length.
    Distance {
        /// The shortest allowed distance in metres.
        min: f32,
        /// The longest allowed distance in metres (`min == max` makes a rigid rod).
        max: f32,
        /// A spring between the limits.
        #[serde(default)]
        spring: Option<Spring>,
    },
}

/// Two bodies held together (simulation state). Spawn it on an entity of its own; despawn it or
/// set `broken` to let go.
#[derive(
    Component, Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState,
)]
#[serde(deny_unknown_fields)]
#[require(crate::state::SimId)]
pub struct Joint {
    /// The first body, or `None` for a joint to a fixed point of the world.
    #[serde(default)]
    pub body_a: Option<SimId>,
    /// The second body.
    pub body_b: SimId,
    /// The joint in `body_a`'s frame (the world's when `body_a` is `None`).
    #[serde(default)]
    pub frame_a: JointFrame,
    /// The joint in `body_b`'s frame.
    #[serde(default)]
    pub frame_b: JointFrame,
    /// What the joint holds.
    pub kind: JointKind,
    /// The joint breaks when its force exceeds this many newtons.
    #[serde(default)]
    pub break_force: Option<f32>,
    /// The joint breaks when its torque exceeds this many newton-metres.
    #[serde(default)]
    pub break_torque: Option<f32>,
    /// Whether the two bodies still collide with each other (off by default, as chains and
    /// ragdolls want).
    #[serde(default)]
    pub collide_connected: bool,
    /// Set by the solver on the tick the joint breaks (a `JointBroke` event says so); a broken
    /// joint holds nothing. Clear it to mend the joint.
    #[serde(default)]
    pub broken: bool,
}

/// Why a joint cannot be simulated.
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum JointError {
    /// The joint joins a body to itself.
    #[error("the joint joins body {} to itself", .0.0)]
    SameBody(SimId),
    /// A number that must be finite is not.
    #[error("{0} is not a finite number")]
    NotFinite(&'static str),
    /// A frame's rotation is not a unit quaternion.
    #[error("{0} is not a unit quaternion")]
    NotUnit(&'static str),
    /// A lower bound is above its upper bound.
    #[error("{what}: the lower bound {lower} is above the upper bound {upper}")]
    Inverted {
        /// Which bounds.
        what: &'static str,
        /// The lower bound.
        lower: f32,
        /// The upper bound.
        upper: f32,
    },
    /// A value is outside the range it must lie in.
    #[error("{what} is {value}; it must be {range}")]
    OutOfRange {
        /// Which value.
        what: &'static str,
        /// The value given.
        value: f32,
        /// The range it must lie in, in words.
        range: &'static str,
    },
}

/// The rotation that turns the X axis onto `axis` (unit length), by the shortest arc.
pub fn rotation_onto_x(axis: Vec3) -> Quat {
    let axis = sim_math::normalize(axis);
    let w = 1.0 + axis.x;
    if w < 1.0e-6 {
        // Opposite to X: half a turn about Y.
        return Quat::from_xyzw(0.0, 1.0, 0.0, 0.0);
    }
    // X x axis = (0, -axis.z, axis.y).
    sim_math::quat_normalize(Quat::from_xyzw(0.0, -axis.z, axis.y, w))
}

/// The conjugate (inverse) of a unit quaternion.
fn conjugate(q: Quat) -> Quat {
    Quat::from_xyzw(-q.x, -q.y, -q.z, q.w)
}

impl Joint {
    /// A joint of `kind` between `body_a` (or the world) and `body_b`, with both frames at the
    /// bodies' centres and the axis along X. Place it with [`Joint::placed`] or set the frames.
    pub fn new(kind: JointKind, body_a: Option<SimId>, body_b: SimId) -> Self {
        Joint {
            body_a,
            body_b,
            frame_a: JointFrame::default(),
            frame_b: JointFrame::default(),
            kind,
            break_force: None,
            break_torque: None,
            collide_connected: false,
            broken: false,
        }
    }

    /// A weld.
    pub fn fixed(body_a: Option<SimId>, body_b: SimId) -> Self {
        Joint::new(JointKind::Fixed, body_a, body_b)
    }

    /// A free hinge.
    pub fn revolute(body_a: Option<SimId>, body_b: SimId) -> Self {
        Joint::new(
            JointKind::Revolute {
                limits: None,
                motor: Motor::Off,
            },
            body_a,
            body_b,
        )
    }

    /// A free slider.
    pub fn prismatic(body_a: Option<SimId>, body_b: SimId) -> Self {
        Joint::new(
            JointKind::Prismatic {
                limits: None,
                motor: Motor::Off,
            },
            body_a,
            body_b,
        )
    }

    /// A ball joint without a cone.
    pub fn spherical(body_a: Option<SimId>, body_b: SimId) -> Self {
        Joint::new(
            JointKind::Spherical {
                cone: None,
                twist: None,
            },
            body_a,
            body_b,
        )
    }

    /// A rope: the anchors at most `length` apart.
    pub fn rope(body_a: Option<SimId>, body_b: SimId, length: f32) -> Self {
        Joint::distance(body_a, body_b, 0.0, length)
    }

    /// A rigid rod: the anchors exactly `length` apart.
    pub fn rod(body_a: Option<SimId>, body_b: SimId, length: f32) -> Self {
        Joint::distance(body_a, body_b, length, length)
    }

    /// The anchors between `min` and `max` apart.
    pub fn distance(body_a: Option<SimId>, body_b: SimId, min: f32, max: f32) -> Self {
        Joint::new(
            JointKind::Distance {
                min,
                max,
                spring: None,
            },
            body_a,
            body_b,
        )
    }

    /// Both frames from where the bodies stand now: the joint sits at `anchor` (world) with its
    /// axis along `axis` (world), and the joint's coordinate (angle, travel) is zero as placed.
    /// `transform_a` is ignored for a joint to the world.
    pub fn placed(
        mut self,
        transform_a: Option<&Transform>,
        transform_b: &Transform,
        anchor: Vec3,
        axis: Vec3,
    ) -> Self {
        let joint_rotation = rotation_onto_x(axis);
        let local = |t: &Transform| {
            let inverse = conjugate(t.rotation);
            JointFrame {
                anchor: sim_math::quat_rotate(inverse, anchor - t.translation),
                rotation: sim_math::quat_normalize(sim_math::quat_mul(inverse, joint_rotation)),
            }
        };
        self.frame_a = match (self.body_a, transform_a) {
            (Some(_), Some(t)) => local(t),
            _ => JointFrame {
                anchor,
                rotation: joint_rotation,
            },
        };
        self.frame_b = local(transform_b);
        self
    }

    /// The same joint with local anchors (in each body's frame).
    pub fn with_anchors(mut self, anchor_a: Vec3, anchor_b: Vec3) -> Self {
        self.frame_a.anchor = anchor_a;
        self.frame_b.anchor = anchor_b;
        self
    }

    /// The same hinge or slider with limits on its coordinate, ball joint with limits on its
    /// twist, or distance joint with these lengths.
    pub fn with_limits(mut self, lower: f32, upper: f32) -> Self {
        let new = Some(JointLimits { lower, upper });
        match &mut self.kind {
            JointKind::Revolute { limits, .. } | JointKind::Prismatic { limits, .. } => {
                *limits = new
            }
            JointKind::Spherical { twist, .. } => *twist = new,
            JointKind::Distance { min, max, .. } => (*min, *max) = (lower, upper),
            JointKind::Fixed => {}
        }
        self
    }

    /// The same hinge or slider with a motor.
    pub fn with_motor(mut self, new: Motor) -> Self {
        if let JointKind::Revolute { motor, .. } | JointKind::Prismatic { motor, .. } =
            &mut self.kind
        {
            *motor = new;
        }
        self
    }

    /// The same ball joint with a cone limit of `angle` radians.
    pub fn with_cone(mut self, angle: f32) -> Self {
        if let JointKind::Spherical { cone, .. } = &mut self.kind {
            *cone = Some(angle);
        }
        self
    }

    /// The same distance joint with a spring.
    pub fn with_spring(mut self, rest_length: f32, hertz: f32, damping_ratio: f32) -> Self {
        if let JointKind::Distance { spring, .. } = &mut self.kind {
            *spring = Some(Spring {
                rest_length,
                hertz,
                damping_ratio,
            });
        }
        self
    }

    /// The same joint, breaking above `force` newtons or `torque` newton-metres.
    pub fn breaking_at(mut self, force: Option<f32>, torque: Option<f32>) -> Self {
        self.break_force = force;
        self.break_torque = torque;
        self
    }

    /// The same joint, with its two bodies still colliding with each other.
    pub fn colliding(mut self) -> Self {
        self.collide_connected = true;
        self
    }

    /// The motor, for a hinge or a slider.
    pub fn motor(&self) -> Option<&Motor> {
        match &self.kind {
            JointKind::Revolute { motor, .. } | JointKind::Prismatic { motor, .. } => Some(motor),
            _ => None,
        }
    }

    /// The motor, to change its target or speed from a fixed system.
    pub fn motor_mut(&mut self) -> Option<&mut Motor> {
        match &mut self.kind {
            JointKind::Revolute { motor, .. } | JointKind::Prismatic { motor, .. } => Some(motor),
            _ => None,
        }
    }

    /// Checks what the solver relies on: two different bodies, finite numbers, unit rotations,
    /// ordered limits, lengths and forces not negative.
    pub fn check(&self) -> Result<(), JointError> {
        if self.body_a == Some(self.body_b) {
            return Err(JointError::SameBody(self.body_b));
        }
        for (what, frame) in [("frame_a", &self.frame_a), ("frame_b", &self.frame_b)] {
            if !frame.anchor.is_finite() {
                return Err(JointError::NotFinite(what));
            }
            let q = frame.rotation;
            let length2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
            if !length2.is_finite() || (length2 - 1.0).abs() > 1.0e-3 {
                return Err(JointError::NotUnit(what));
            }
        }
        for (what, value) in [
            ("break_force", self.break_force),
            ("break_torque", self.break_torque),
        ] {
            if let Some(value) = value {
                non_negative(what, value)?;
            }
        }
        match self.kind {
            JointKind::Fixed => Ok(()),
            JointKind::Revolute { limits, motor } => {
                if let Some(limits) = limits {
                    ordered("limits", limits.lower, limits.upper)?;
                    within_half_turn("a hinge limit", limits.lower)?;
                    within_half_turn("a hinge limit", limits.upper)?;
                }
                check_motor(&motor)
            }
            JointKind::Prismatic { limits, motor } => {
                if let Some(limits) = limits {
                    ordered("limits", limits.lower, limits.upper)?;
                }
                check_motor(&motor)
            }
            JointKind::Spherical { cone, twist } => {
                if let Some(twist) = twist {
                    ordered("twist", twist.lower, twist.upper)?;
                    within_half_turn("twist", twist.lower)?;
                    within_half_turn("twist", twist.upper)?;
                }
                match cone {
                    Some(cone) if !(cone > 0.0 && cone <= std::f32::consts::PI) => {
                        Err(JointError::OutOfRange {
                            what: "cone",
                            value: cone,
                            range: "in (0, pi]",
                        })
                    }
                    _ => Ok(()),
                }
            }
            JointKind::Distance { min, max, spring } => {
                non_negative("min", min)?;
                ordered("min and max", min, max)?;
                if let Some(spring) = spring {
                    non_negative("spring.rest_length", spring.rest_length)?;
                    non_negative("spring.hertz", spring.hertz)?;
                    non_negative("spring.damping_ratio", spring.damping_ratio)?;
                }
                Ok(())
            }
        }
    }
}

fn non_negative(what: &'static str, value: f32) -> Result<(), JointError> {
    if !value.is_finite() {
        return Err(JointError::NotFinite(what));
    }
    if value < 0.0 {
        return Err(JointError::OutOfRange {
            what,
            value,
            range: "0 or more",
        });
    }
    Ok(())
}

fn ordered(what: &'static str, lower: f32, upper: f32) -> Result<(), JointError> {
    if !(lower.is_finite() && upper.is_finite()) {
        return Err(JointError::NotFinite(what));
    }
    if lower > upper {
        return Err(JointError::Inverted { what, lower, upper });
    }
    Ok(())
}

fn within_half_turn(what: &'static str, angle: f32) -> Result<(), JointError> {
    if angle.abs() > std::f32::consts::PI {
        return Err(JointError::OutOfRange {
            what,
            value: angle,
            range: "within [-pi, pi]",
        });
    }
    Ok(())
}

fn check_motor(motor: &Motor) -> Result<(), JointError> {
    match *motor {
        Motor::Off => Ok(()),
        Motor::Velocity { speed, max_force } => {
            if !speed.is_finite() {
                return Err(JointError::NotFinite("motor speed"));
            }
            non_negative("motor max_force", max_force)
        }
        Motor::Position {
            target,
            stiffness,
            damping,
            max_force,
        } => {
            if !target.is_finite() {
                return Err(JointError::NotFinite("motor target"));
            }
            non_negative("motor stiffness", stiffness)?;
            non_negative("motor damping", damping)?;
            non_negative("motor max_force", max_force)
        }
    }
}

impl JointError {
    /// The field of a `Joint` the error is about, for pointing at it in a scene: a top-level
    /// field, or `kind` (see [`Joint::error_path`] for the path into it).
    pub fn field(&self) -> &'static str {
        match self {
            JointError::SameBody(_) => "body_b",
            JointError::NotFinite(what) | JointError::NotUnit(what) => match *what {
                "frame_a" => "frame_a",
                "frame_b" => "frame_b",
                "break_force" => "break_force",
                "break_torque" => "break_torque",
                _ => "kind",
            },
            JointError::Inverted { .. } | JointError::OutOfRange { .. } => "kind",
        }
    }

    /// What the error names, for errors inside the kind.
    fn what(&self) -> &'static str {
        match self {
            JointError::NotFinite(what) | JointError::NotUnit(what) => what,
            JointError::Inverted { what, .. } | JointError::OutOfRange { what, .. } => what,
            JointError::SameBody(_) => "",
        }
    }
}

impl Joint {
    /// The path within this joint (JSON pointer segments joined by `/`) of the value `error` is
    /// about: `body_b`, `frame_a`, `kind/Revolute/limits`, `kind/Distance/spring`, ...
    pub fn error_path(&self, error: &JointError) -> String {
        let field = error.field();
        if field != "kind" {
            return field.to_owned();
        }
        let variant = match self.kind {
            JointKind::Fixed => return "kind".to_owned(),
            JointKind::Revolute { .. } => "Revolute",
            JointKind::Prismatic { .. } => "Prismatic",
            JointKind::Spherical { .. } => "Spherical",
            JointKind::Distance { .. } => "Distance",
        };
        let what = error.what();
        let inner = if what.contains("motor") {
            "/motor"
        } else if what.contains("limit") {
            "/limits"
        } else if what.starts_with("spring") {
            "/spring"
        } else if what == "cone" {
            "/cone"
        } else if what == "twist" {
            "/twist"
        } else {
            ""
        };
        format!("kind/{variant}{inner}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A joint placed between two bodies measures zero where it was placed: `b`'s anchor lands on
    /// `a`'s, and both frames' X axes point along the given axis in the world. Fails if `placed`
    /// rotates the anchor by the body's rotation instead of its inverse.
    #[test]
    fn a_placed_joint_starts_at_rest() {
        let ta = Transform::from_xyz(1.0, 2.0, 0.0).with_rotation(Quat::from_rotation_z(0.7));
        let tb = Transform::from_xyz(-1.0, 0.5, 3.0).with_rotation(Quat::from_rotation_x(-1.1));
        let anchor = Vec3::new(0.2, 1.0, 1.5);
        let axis = Vec3::new(0.0, 0.0, 1.0);
        let joint = Joint::revolute(Some(SimId(1)), SimId(2)).placed(Some(&ta), &tb, anchor, axis);
        let world = |t: &Transform, f: &JointFrame| {
            (
                t.translation + t.rotation * f.anchor,
                (t.rotation * f.rotation) * Vec3::X,
            )
        };
        let (pa, xa) = world(&ta, &joint.frame_a);
        let (pb, xb) = world(&tb, &joint.frame_b);
        assert!(pa.distance(anchor) < 1e-5 && pb.distance(anchor) < 1e-5);
        assert!(xa.distance(axis) < 1e-5 && xb.distance(axis) < 1e-5);
        assert_eq!(joint.check(), Ok(()));
        let world_joint = Joint::rope(None, SimId(2), 1.0).placed(None, &tb, anchor, axis);
        assert_eq!(world_joint.frame_a.anchor, anchor);
    }

    /// Each broken rule is named.
    #[test]
    fn bad_joints_are_refused() {
        let j = Joint::revolute(Some(SimId(1)), SimId(1));
        assert_eq!(j.check(), Err(JointError::SameBody(SimId(1))));
        let j = Joint::revolute(None, SimId(1)).with_limits(1.0, -1.0);
        assert!(matches!(j.check(), Err(JointError::Inverted { .. })));
        let j = Joint::rope(None, SimId(1), f32::NAN);
        assert!(matches!(j.check(), Err(JointError::NotFinite(_))));
        let j = Joint::spherical(None, SimId(1)).with_cone(4.0);
        assert!(matches!(j.check(), Err(JointError::OutOfRange { .. })));
        let mut j = Joint::fixed(None, SimId(1));
        j.frame_b.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 2.0);
        assert_eq!(j.check(), Err(JointError::NotUnit("frame_b")));
    }
}
