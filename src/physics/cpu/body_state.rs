//! The state of bodies and contact points while the solver runs: [`Velocity`], [`Displacement`],
//! and what the solve leaves at a point ([`PointResult`]).
//!
//! Its own file so that the solver's stages (`integrate`, `batches`, `solver`) stand on these
//! types without importing each other. This module must never solve anything.

use bevy::math::{Quat, Vec3};

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

/// What the solve left at one contact point, for events and next tick's warm start.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PointResult {
    /// First body index.
    pub a: u32,
    /// Second body index.
    pub b: u32,
    /// Feature id.
    pub feature: u32,
    /// Gap at the start of the tick (negative when overlapping).
    pub separation: f32,
    /// Accumulated normal impulse.
    pub normal_impulse: f32,
    /// Largest normal impulse of any pass this tick.
    pub max_normal_impulse: f32,
    /// Accumulated friction impulses.
    pub tangent_impulse: [f32; 2],
}
