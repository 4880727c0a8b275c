//! [`PhysicsWorld`]: what the CPU solver carries from one tick to the next.
//!
//! Only persistent state lives here (contact and joint warm-start impulses, sleep counters, which pairs touch, the
//! event counter), all in vectors sorted by `SimId`, so that it hashes, snapshots and iterates the
//! same way every run. Per-tick scratch (contacts, constraints, broad-phase lists) lives in
//! `cpu::StepScratch` and is never part of the state.

use bevy::math::Vec3;
use bevy::prelude::Resource;

use crate::state::SimId;

/// Accumulated impulses of one contact point, kept for warm-starting the next tick.
#[derive(Clone, Copy, Debug, PartialEq, rusting_macros::SimState)]
pub struct WarmStart {
    /// The lower body of the pair.
    pub a: SimId,
    /// The higher body of the pair.
    pub b: SimId,
    /// Which features of the two shapes made the point (stable while the contact persists).
    pub feature: u32,
    /// Normal impulse (N·s).
    pub normal: f32,
    /// Friction impulses along the contact's two tangents (N·s).
    pub tangent: [f32; 2],
}

/// A pair of bodies in contact after a tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, rusting_macros::SimState)]
pub struct Touching {
    /// The lower body.
    pub a: SimId,
    /// The higher body.
    pub b: SimId,
}

/// Accumulated impulses of one joint, kept for warm-starting the next tick (world frame).
#[derive(Clone, Copy, Debug, Default, PartialEq, rusting_macros::SimState)]
pub struct JointWarmStart {
    /// The joint's entity's simulation id.
    pub joint: SimId,
    /// The impulse holding the anchors together (N·s).
    pub linear: Vec3,
    /// The impulse holding the frames' rotation (N·m·s).
    pub angular: Vec3,
    /// The motor's, the spring's or the rod's impulse along the joint's free coordinate.
    pub axial: f32,
    /// The lower limit's impulse.
    pub lower: f32,
    /// The upper limit's impulse.
    pub upper: f32,
}

/// The CPU solver's persistent state (simulation state).
#[derive(Resource, Clone, Debug, Default, PartialEq, rusting_macros::SimState)]
pub struct PhysicsWorld {
    /// Last tick's contact impulses, sorted by `(a, b, feature)`.
    pub warm_starts: Vec<WarmStart>,
    /// Ticks each dynamic body has spent below the sleep thresholds, sorted by body.
    pub sleep_counters: Vec<(SimId, u32)>,
    /// Pairs touching after the last tick, sorted by `(a, b)`.
    pub touching: Vec<Touching>,
    /// The id the next collision or joint event gets.
    pub next_event_id: u64,
    /// Last tick's joint impulses, sorted by joint.
    pub joints: Vec<JointWarmStart>,
}

impl PhysicsWorld {
    /// The sleep counter of `body` (0 when it has none).
    pub fn sleep_counter(&self, body: SimId) -> u32 {
        self.sleep_counters
            .binary_search_by_key(&body, |(id, _)| *id)
            .map(|i| self.sleep_counters[i].1)
            .unwrap_or(0)
    }
}
