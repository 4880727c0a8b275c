//! GPU bodies for the GPU tests: a dynamic body at rest and a CPU ground.

use bevy::math::{Quat, Vec3};
use rusting_engine::physics::components::{Collider, CollisionLayers, RigidBody};
use rusting_engine::physics::gpu::{GpuBodyInit, GpuCollider, GpuRule};

/// A dynamic body of `mass` kilograms at rest at `translation`, unturned, on the default layers.
pub fn body(slot: u32, translation: Vec3, collider: Collider, mass: f32) -> GpuBodyInit {
    GpuBodyInit {
        slot,
        translation,
        rotation: Quat::IDENTITY,
        linear_velocity: Vec3::ZERO,
        angular_velocity: Vec3::ZERO,
        collider,
        body: RigidBody::dynamic(mass),
        layers: CollisionLayers::default(),
        rule: GpuRule::None,
        custom: [0.0; 4],
    }
}

/// A CPU half-space ground through the origin, facing up.
pub fn ground() -> GpuCollider {
    GpuCollider {
        collider: Collider::half_space(Vec3::Y),
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        layers: CollisionLayers::default(),
    }
}
