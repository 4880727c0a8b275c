//! Solver bodies built by hand for the tests that drive `physics::cpu::step` directly, and the
//! bits that compare two runs of it: shared by the solver's and the joints' thread-count tests.

use bevy::math::{Quat, Vec3};
use bevy::prelude::Entity;
use rusting_engine::physics::cpu::SolverBody;
use rusting_engine::physics::{BodyKind, Collider, CollisionLayers, LockedAxes, PhysicsId};
use rusting_engine::state::SimId;

/// A 1 kg body at rest, unturned, with `SimId`, slot and entity from `index`.
pub fn body(index: u32, kind: BodyKind, position: Vec3, collider: Collider) -> SolverBody {
    SolverBody {
        sim_id: SimId(index as u64),
        entity: Entity::from_raw_u32(index + 1).unwrap(),
        id: PhysicsId(index),
        kind,
        position,
        rotation: Quat::IDENTITY,
        linear_velocity: Vec3::ZERO,
        angular_velocity: Vec3::ZERO,
        mass: 1.0,
        gravity_scale: 1.0,
        collider,
        layers: CollisionLayers::default(),
        sleeping: false,
        locks: LockedAxes::NONE,
    }
}

/// Every body's position, velocities, rotation and sleep flag, as bits.
pub fn bits(bodies: &[SolverBody]) -> Vec<u32> {
    let mut out = Vec::new();
    for b in bodies {
        let r = b.rotation;
        for v in [b.position, b.linear_velocity, b.angular_velocity] {
            out.extend([v.x.to_bits(), v.y.to_bits(), v.z.to_bits()]);
        }
        out.extend([r.x.to_bits(), r.y.to_bits(), r.z.to_bits(), r.w.to_bits()]);
        out.push(b.sleeping as u32);
    }
    out
}
