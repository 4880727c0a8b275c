//! [`BurstEmitter`] and [`BurstParticle`]: seeded bursts of short-lived particles.
//!
//! An emitter fires when its `fire` flag is set (by gameplay, or on landing when `fire_on_landing`
//! is set and the entity has a platformer controller). Each particle's direction comes from
//! `RandomSeed::value(tick, RandomSeed::stream("bursts", key))`, keyed by the emitter's `SimId`, so
//! two emitters never share a sequence and a replay draws the same particles. Particles are
//! presentation that snapshots copy: they fly, age and are despawned when their lifetime runs out,
//! all on the fixed clock, and they carry a `SimId` (spawned in emitter order) so a rollback finds
//! them again. This module must never use a stateful random generator.

use bevy::math::Vec3;
use bevy::prelude::{Commands, Component, Entity, Query, Res, Transform};
use serde::{Deserialize, Serialize};

use super::platformer::PlatformerController;
use crate::runtime::{FrameTime, RandomSeed, sim_math};
use crate::state::SimId;

/// The most particles one burst spawns: a scene asking for more is refused when it is cooked, and
/// an emitter set to more by game code spawns this many.
pub const MAX_BURST_PARTICLES: u32 = 4096;

/// Fires bursts of particles (its trigger flags are simulation state).
#[derive(
    Component, Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState,
)]
#[serde(default, deny_unknown_fields)]
#[require(crate::state::SimId)]
pub struct BurstEmitter {
    /// Particles per burst, at most [`MAX_BURST_PARTICLES`].
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
#[require(crate::state::SimId)]
pub struct BurstParticle {
    /// m/s.
    pub velocity: Vec3,
    /// Seconds lived.
    pub age: f32,
    /// Seconds it lives.
    pub lifetime: f32,
}

/// The random-stream key of an emitter: its `SimId`.
pub fn burst_key(emitter: SimId) -> u64 {
    emitter.0
}

/// Moves and ages particles, and despawns those past their lifetime (runs in
/// `SimSet::BurstParticles`).
pub fn update_burst_particles(
    mut commands: Commands,
    time: Res<FrameTime>,
    mut particles: Query<(Entity, &SimId, &mut BurstParticle, &mut Transform)>,
) {
    let dt = time.fixed_delta;
    let mut expired: Vec<(SimId, Entity)> = Vec::new();
    for (entity, &sim_id, mut particle, mut transform) in &mut particles {
        particle.age += dt;
        if particle.age >= particle.lifetime {
            expired.push((sim_id, entity));
            continue;
        }
        transform.translation += particle.velocity * dt;
    }
    // Despawn in `SimId` order, whatever order the query visited them in.
    expired.sort_unstable();
    for (_, entity) in expired {
        commands.entity(entity).despawn();
    }
}

/// What `spawn_bursts` reads of an emitter.
type EmitterRow = (
    &'static SimId,
    &'static mut BurstEmitter,
    &'static Transform,
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
    let mut firing: Vec<(SimId, BurstEmitter, Vec3, u64)> = Vec::new();
    for (&sim_id, mut emitter, transform, platformer) in &mut emitters {
        let landed = emitter.fire_on_landing && platformer.is_some_and(|p| p.landed);
        if emitter.fire || landed {
            emitter.fire = false;
            emitter.fired = emitter.fired.saturating_add(1);
            firing.push((sim_id, *emitter, transform.translation, burst_key(sim_id)));
        }
    }
    // Spawn in a fixed order, whatever order the query visited the emitters in.
    // The particles' `SimId`s follow the order they are spawned in.
    firing.sort_by_key(|(sim_id, ..)| *sim_id);
    for (_, emitter, origin, key) in firing {
        let stream = RandomSeed::stream("bursts", key);
        for k in 0..u64::from(emitter.particles.min(MAX_BURST_PARTICLES)) {
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
