//! [`BurstEmitter`] and [`BurstParticle`]: seeded bursts of short-lived particles.
//!
//! An emitter fires when its `fire` flag is set (by gameplay, or on landing when `fire_on_landing`
//! is set and the entity has a platformer controller). Each particle's direction comes from
//! `RandomSeed::value(tick, RandomSeed::stream("bursts", key))`, keyed by the emitter's `SceneId`,
//! or by its entity when it has none, so two emitters never share a sequence and a replay draws the
//! same particles. Particles are presentation: they fly, age and are despawned when their lifetime
//! runs out, all on the fixed clock. This module must never use a stateful random generator.

use bevy::math::Vec3;
use bevy::prelude::{Commands, Component, Entity, Query, Res, Transform};
use serde::{Deserialize, Serialize};

use super::platformer::PlatformerController;
use crate::runtime::{FrameTime, RandomSeed, sim_math};
use crate::scene::SceneId;

/// Fires bursts of particles (its trigger flags are simulation state).
#[derive(Component, Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BurstEmitter {
    /// Particles per burst.
    pub particles: u32,
    /// Particle speed, m/s.
    pub speed: f32,
    /// Seconds a particle lives.
    pub lifetime: f32,
    /// Set to fire on the next tick; cleared when the burst is spawned.
    pub fire: bool,
    /// Fire whenever the entity's platformer controller lands.
    pub fire_on_landing: bool,
    /// Bursts fired so far.
    pub fired: u32,
}

impl Default for BurstEmitter {
    fn default() -> Self {
        BurstEmitter {
            particles: 8,
            speed: 3.0,
            lifetime: 0.5,
            fire: false,
            fire_on_landing: false,
            fired: 0,
        }
    }
}

/// One particle of a burst (presentation).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct BurstParticle {
    /// m/s.
    pub velocity: Vec3,
    /// Seconds lived.
    pub age: f32,
    /// Seconds it lives.
    pub lifetime: f32,
}

/// The random-stream key of an emitter: its `SceneId`, else its entity's bits.
pub fn burst_key(entity: Entity, scene_id: Option<&SceneId>) -> u64 {
    match scene_id {
        Some(id) => id.0,
        None => entity.to_bits() | (1 << 63),
    }
}

/// Moves and ages particles, and despawns those past their lifetime (runs in
/// `SimSet::BurstParticles`).
pub fn update_burst_particles(
    mut commands: Commands,
    time: Res<FrameTime>,
    mut particles: Query<(Entity, &mut BurstParticle, &mut Transform)>,
) {
    let dt = time.fixed_delta;
    let mut expired: Vec<Entity> = Vec::new();
    for (entity, mut particle, mut transform) in &mut particles {
        particle.age += dt;
        if particle.age >= particle.lifetime {
            expired.push(entity);
            continue;
        }
        transform.translation += particle.velocity * dt;
    }
    // Despawn in entity order: the freed ids are reused in that order.
    expired.sort();
    for entity in expired {
        commands.entity(entity).despawn();
    }
}

/// What `spawn_bursts` reads of an emitter.
type EmitterRow = (
    Entity,
    &'static mut BurstEmitter,
    &'static Transform,
    Option<&'static SceneId>,
    Option<&'static PlatformerController>,
);

/// Sets `fire` on emitters whose platformer landed this tick, then spawns the bursts of every
/// emitter that fires (runs in `SimSet::NewBursts`).
pub fn spawn_bursts(
    mut commands: Commands,
    time: Res<FrameTime>,
    seed: Res<RandomSeed>,
    mut emitters: Query<EmitterRow>,
) {
    let mut firing: Vec<(Entity, BurstEmitter, Vec3, u64)> = Vec::new();
    for (entity, mut emitter, transform, scene_id, platformer) in &mut emitters {
        let landed = emitter.fire_on_landing && platformer.is_some_and(|p| p.landed);
        if emitter.fire || landed {
            emitter.fire = false;
            emitter.fired += 1;
            firing.push((
                entity,
                *emitter,
                transform.translation,
                burst_key(entity, scene_id),
            ));
        }
    }
    // Spawn in a fixed order, whatever order the query visited the emitters in.
    firing.sort_by_key(|(entity, ..)| *entity);
    for (_, emitter, origin, key) in firing {
        let stream = RandomSeed::stream("bursts", key);
        for k in 0..emitter.particles as u64 {
            // Three draws per particle, from consecutive streams of this emitter.
            let draw = |c: u64| seed.unit(time.fixed_tick, stream.wrapping_add(3 * k + c));
            let (sin_a, cos_a) = sim_math::sin_cos(draw(0) * 2.0 * sim_math::PI);
            let up = 0.3 + 0.7 * draw(1);
            let spread = 1.0 - up * up;
            let side = if spread > 0.0 { spread.sqrt() } else { 0.0 };
            let direction = Vec3::new(cos_a * side, up, sin_a * side);
            let speed = emitter.speed * (0.75 + 0.5 * draw(2));
            commands.spawn((
                Transform::from_translation(origin),
                BurstParticle {
                    velocity: direction * speed,
                    age: 0.0,
                    lifetime: emitter.lifetime,
                },
            ));
        }
    }
}
