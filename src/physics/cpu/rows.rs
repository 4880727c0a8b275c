//! The contact constraints in SIMD layout: a [`Batch`] of four manifolds of one colour, its
//! [`WidePoint`]s and each point's [`WideRow`]s.
//!
//! Its own file so that building the rows (`jacobians`) and solving them (`batches`) stand on
//! this layout without importing each other. This module must never compute a row itself.

use super::lanes::{LANES, LaneVec3, Lanes, Mask};

/// One direction of a contact point (the normal or a tangent) with its Jacobian worked out for the
/// tick, for four lanes. The lever arms' cross products (`ra x direction`) are recomputed from the
/// point's `ra` and `rb` where a pass needs them, which keeps a point a third smaller at no
/// measured cost (the pyramid benchmark's time did not move).
#[derive(Clone, Copy, Debug, Default)]
pub struct WideRow {
    // The fields the warm start reads come first, so it touches fewer cache lines.
    /// Unit direction, from `a` towards `b` for the normal.
    pub direction: LaneVec3,
    /// `I_a^-1 (ra x direction)`: `a`'s angular velocity change per unit impulse.
    pub turn_a: LaneVec3,
    /// `I_b^-1 (rb x direction)`.
    pub turn_b: LaneVec3,
    /// Impulse per unit of velocity change along the direction.
    pub mass: Lanes,
}

/// Point `k` of the four manifolds of a batch.
#[derive(Clone, Copy, Debug, Default)]
pub struct WidePoint {
    /// The normal, then the two tangents.
    pub rows: [WideRow; 3],
    /// From `a`'s centre to the point at the start of the tick.
    pub ra: LaneVec3,
    /// From `b`'s centre to the point at the start of the tick.
    pub rb: LaneVec3,
    /// The gap at the start of the tick minus the anchors' offset along the normal: adding the
    /// anchors' current offset gives the current gap.
    pub base_separation: Lanes,
    /// The current gap (negative when overlapping), refreshed after the bodies move.
    pub separation: Lanes,
    /// Normal velocity before the solve (negative when approaching).
    pub approach: Lanes,
    /// Accumulated normal impulse.
    pub normal_impulse: Lanes,
    /// Largest normal impulse of any pass this tick.
    pub max_normal_impulse: Lanes,
    /// Accumulated friction impulses.
    pub tangent_impulse: [Lanes; 2],
}

/// Four manifolds of one colour (fewer in a colour's last batch and in the overflow).
#[derive(Clone, Copy, Debug, Default)]
pub struct Batch {
    /// Each lane's first body (the spare slot for an empty lane).
    pub a: [u32; LANES],
    /// Each lane's second body.
    pub b: [u32; LANES],
    /// Inverse masses of the first bodies (0 for bodies the contacts do not move).
    pub inv_mass_a: Lanes,
    /// Inverse masses of the second bodies.
    pub inv_mass_b: Lanes,
    /// Whether a lane's body has a locked translation axis (`LockedAxes`); then impulses are
    /// masked by `free_a` and `free_b`.
    pub locked: bool,
    /// 1 on each translation axis the first bodies may move along, 0 on a locked one.
    pub free_a: LaneVec3,
    /// The same for the second bodies.
    pub free_b: LaneVec3,
    /// Coulomb coefficient of each pair.
    pub friction: Lanes,
    /// Restitution of each pair.
    pub restitution: Lanes,
    /// Whether any lane has restitution.
    pub bounces: bool,
    /// Lanes where one body does not move (such contacts get a stiffer spring).
    pub against_fixed: Mask,
}
