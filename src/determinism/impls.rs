//! [`StateHash`] for every simulation component and resource, field by field.
//!
//! Each impl lists the fields the specification calls simulation state and nothing else; a field
//! added to one of these types must be added here too (or it will not be hashed). This module must
//! never hash presentation fields (`FrameTime::frame`, `HudElement`, `BurstParticle`, ...).

use bevy::prelude::Transform;

use super::hasher::{StateHash, StateHasher};
use crate::gameplay::{
    BurstEmitter, Counter, Pickup, PlatformerController, PlayerController, Tween,
};
use crate::physics::gpu::{GpuCommand, GpuPhysicsCommands};
use crate::physics::world::PhysicsWorld;
use crate::physics::{
    BodyClass, BodyKind, Collider, CollisionLayers, PhysicsBody, PhysicsId, PhysicsIdRegistry,
    PhysicsSettings, RigidBody, Shape,
};
use crate::runtime::{DeterminismMode, FrameTime, RandomSeed, SimId, SimIdAllocator};

impl StateHash for Transform {
    fn hash_state(&self, h: &mut StateHasher) {
        h.vec3("translation", self.translation);
        h.quat("rotation", self.rotation);
        h.vec3("scale", self.scale);
    }
}

impl StateHash for RigidBody {
    fn hash_state(&self, h: &mut StateHasher) {
        h.u32(match self.kind {
            BodyKind::Dynamic => 0,
            BodyKind::Kinematic => 1,
            BodyKind::Static => 2,
        });
        h.f32("mass", self.mass);
        h.f32("gravity_scale", self.gravity_scale);
        h.vec3("linear_velocity", self.linear_velocity);
        h.vec3("angular_velocity", self.angular_velocity);
    }
}

impl StateHash for Collider {
    fn hash_state(&self, h: &mut StateHasher) {
        match self.shape {
            Shape::Sphere { radius } => {
                h.u32(0);
                h.f32("shape.radius", radius);
            }
            Shape::Box { half_extents } => {
                h.u32(1);
                h.vec3("shape.half_extents", half_extents);
            }
            Shape::Capsule {
                half_height,
                radius,
            } => {
                h.u32(2);
                h.f32("shape.half_height", half_height);
                h.f32("shape.radius", radius);
            }
            Shape::HalfSpace { normal } => {
                h.u32(3);
                h.vec3("shape.normal", normal);
            }
        }
        h.f32("friction", self.friction);
        h.f32("restitution", self.restitution);
        h.bool(self.sensor);
    }
}

impl StateHash for CollisionLayers {
    fn hash_state(&self, h: &mut StateHasher) {
        h.u32(self.memberships);
        h.u32(self.filters);
    }
}

impl StateHash for PhysicsBody {
    fn hash_state(&self, h: &mut StateHasher) {
        h.u32(match self.class {
            BodyClass::Cpu => 0,
            BodyClass::Gpu => 1,
        });
    }
}

impl StateHash for PhysicsId {
    fn hash_state(&self, h: &mut StateHasher) {
        h.u32(self.0);
    }
}

impl StateHash for PlayerController {
    fn hash_state(&self, h: &mut StateHasher) {
        h.f32("speed", self.speed);
        h.f32("yaw", self.yaw);
        h.f32("look_sensitivity", self.look_sensitivity);
    }
}

impl StateHash for PlatformerController {
    fn hash_state(&self, h: &mut StateHasher) {
        h.f32("move_speed", self.move_speed);
        h.f32("jump_speed", self.jump_speed);
        h.f32("jump_buffer_time", self.jump_buffer_time);
        h.f32("coyote_time", self.coyote_time);
        h.f32("vertical_speed", self.vertical_speed);
        h.bool(self.grounded);
        h.f32("jump_buffer", self.jump_buffer);
        h.f32("air_time", self.air_time);
        h.bool(self.jump_held);
        h.bool(self.landed);
    }
}

impl StateHash for Tween {
    fn hash_state(&self, h: &mut StateHasher) {
        h.vec3("from", self.from);
        h.vec3("to", self.to);
        h.f32("duration", self.duration);
        h.u32(self.easing as u32);
        h.u32(self.mode as u32);
        h.f32("played", self.played);
    }
}

impl StateHash for Pickup {
    fn hash_state(&self, h: &mut StateHasher) {
        h.i64(self.value);
        h.bool(self.collected);
    }
}

impl StateHash for Counter {
    fn hash_state(&self, h: &mut StateHasher) {
        h.i64(self.value);
    }
}

impl StateHash for BurstEmitter {
    fn hash_state(&self, h: &mut StateHasher) {
        h.u32(self.particles);
        h.f32("speed", self.speed);
        h.f32("lifetime", self.lifetime);
        h.bool(self.fire);
        h.bool(self.fire_on_landing);
        h.u32(self.fired);
    }
}

impl StateHash for FrameTime {
    /// Only the simulation clock: `fixed_tick` and `fixed_delta`.
    fn hash_state(&self, h: &mut StateHasher) {
        h.u64(self.fixed_tick);
        h.f32("fixed_delta", self.fixed_delta);
    }
}

impl StateHash for RandomSeed {
    fn hash_state(&self, h: &mut StateHasher) {
        h.u64(self.0);
    }
}

impl StateHash for DeterminismMode {
    fn hash_state(&self, h: &mut StateHasher) {
        h.u32(*self as u32);
    }
}

impl StateHash for PhysicsSettings {
    fn hash_state(&self, h: &mut StateHasher) {
        h.vec3("gravity", self.gravity);
        h.f32("linear_slop", self.linear_slop);
        h.f32("max_correction_speed", self.max_correction_speed);
        h.f32("speculative_distance", self.speculative_distance);
        h.f32("restitution_threshold", self.restitution_threshold);
        h.bool(self.sleep_enabled);
        h.f32("sleep_linear_speed", self.sleep_linear_speed);
        h.f32("sleep_angular_speed", self.sleep_angular_speed);
    }
}

impl StateHash for PhysicsIdRegistry {
    fn hash_state(&self, h: &mut StateHasher) {
        let (assigned, free, next) = self.state();
        h.u64(assigned.len() as u64);
        for (body, id) in assigned {
            h.u64(body.0);
            h.u32(id.0);
        }
        h.u64(free.len() as u64);
        for slot in free {
            h.u32(*slot);
        }
        h.u32(next);
    }
}

impl StateHash for PhysicsWorld {
    /// Warm starts and sleep counters sorted by `SimId` (they are kept sorted), touching pairs and
    /// the event counter.
    fn hash_state(&self, h: &mut StateHasher) {
        h.u64(self.warm_starts.len() as u64);
        for w in &self.warm_starts {
            h.u64(w.a.0);
            h.u64(w.b.0);
            h.u32(w.feature);
            h.f32("warm_starts.normal", w.normal);
            h.f32("warm_starts.tangent", w.tangent[0]);
            h.f32("warm_starts.tangent", w.tangent[1]);
        }
        h.u64(self.sleep_counters.len() as u64);
        for (body, count) in &self.sleep_counters {
            h.u64(body.0);
            h.u32(*count);
        }
        h.u64(self.touching.len() as u64);
        for t in &self.touching {
            h.u64(t.a.0);
            h.u64(t.b.0);
        }
        h.u64(self.next_event_id);
    }
}

impl StateHash for SimId {
    fn hash_state(&self, h: &mut StateHasher) {
        h.u64(self.0);
    }
}

impl StateHash for SimIdAllocator {
    fn hash_state(&self, h: &mut StateHasher) {
        h.u64(self.next);
    }
}

impl StateHash for GpuPhysicsCommands {
    fn hash_state(&self, h: &mut StateHasher) {
        for (tick, command) in self.queued() {
            h.u64(*tick);
            match *command {
                GpuCommand::Teleport {
                    slot,
                    translation,
                    rotation,
                } => {
                    h.u32(0);
                    h.u32(slot);
                    h.vec3("teleport.translation", translation);
                    h.quat("teleport.rotation", rotation);
                }
                GpuCommand::SetVelocity {
                    slot,
                    linear,
                    angular,
                } => {
                    h.u32(1);
                    h.u32(slot);
                    h.vec3("set_velocity.linear", linear);
                    h.vec3("set_velocity.angular", angular);
                }
                GpuCommand::ApplyImpulse { slot, impulse } => {
                    h.u32(2);
                    h.u32(slot);
                    h.vec3("apply_impulse.impulse", impulse);
                }
                GpuCommand::SetCustom { slot, values } => {
                    h.u32(3);
                    h.u32(slot);
                    for value in values {
                        h.f32("set_custom.values", value);
                    }
                }
            }
        }
    }
}
