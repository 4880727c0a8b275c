//! Coins: spawned at random places by a spawner, picked up by touching them, gone when their time
//! runs out.

use bevy::prelude::*;
use rusting_engine::prelude::*;

use crate::game::Score;

// ANCHOR: components
/// Drops a coin at a random place around itself every `every_ticks` ticks (written in the scene).
#[derive(Component, Clone, Debug, PartialEq, serde::Deserialize, SimState)]
pub struct CoinSpawner {
    /// Ticks between coins.
    pub every_ticks: u64,
    /// Coins land within this distance of the spawner along x and z, m.
    pub half_extent: f32,
    /// Ticks a coin stays before it vanishes.
    pub lifetime_ticks: u64,
    /// Points a coin is worth.
    pub value: u32,
}

/// A coin waiting to be picked up (spawned during play).
#[derive(Component, Clone, Debug, PartialEq, SimState)]
pub struct Coin {
    /// Points it is worth.
    pub value: u32,
    /// The tick it vanishes on.
    pub vanishes_at: u64,
}
// ANCHOR_END: components

// ANCHOR: spawn
/// Drops a coin from every spawner whose time has come, at a place drawn from the seed.
pub fn spawn_coins(
    mut commands: Commands,
    time: Res<FrameTime>,
    seed: Res<RandomSeed>,
    spawners: Query<(&SimId, &CoinSpawner, &Transform)>,
) {
    let tick = time.fixed_tick;
    // Spawners in `SimId` order, never in query order: the coins take their `SimId`s in the
    // order they are spawned, so that order must be the same in every run.
    let mut spawners: Vec<_> = spawners.iter().collect();
    spawners.sort_by_key(|(id, _, _)| **id);
    for (id, spawner, place) in spawners {
        if spawner.every_ticks == 0 || !tick.is_multiple_of(spawner.every_ticks) {
            continue;
        }
        // ANCHOR: place
        // One stream per spawner and axis; a value depends only on (seed, stream, tick).
        let x = seed.unit(tick, RandomSeed::stream("coin_x", id.get()));
        let z = seed.unit(tick, RandomSeed::stream("coin_z", id.get()));
        // ANCHOR_END: place
        let offset = Vec3::new(2.0 * x - 1.0, 0.0, 2.0 * z - 1.0) * spawner.half_extent;
        commands.spawn((
            Name::new("Coin"),
            Transform::from_translation(place.translation + offset),
            Collider::sphere(0.5).as_sensor(),
            Coin {
                value: spawner.value,
                vanishes_at: tick + spawner.lifetime_ticks,
            },
        ));
    }
}
// ANCHOR_END: spawn

// ANCHOR: collect
/// Gives a player who started touching a coin its points, and removes the coin.
pub fn collect_coins(
    mut commands: Commands,
    collisions: Res<CollisionEvents>,
    resimulation: Res<Resimulation>,
    players: Query<&SimId, With<PlatformerController>>,
    coins: Query<&Coin>,
    mut score: ResMut<Score>,
) {
    let mut players: Vec<SimId> = players.iter().copied().collect();
    players.sort();
    let mut taken = Vec::new();
    for player in players {
        // Every body the player began touching this tick, in `SimId` order.
        for touch in collisions.started_touching(player) {
            let Ok(coin) = coins.get(touch.entity) else {
                continue;
            };
            // Two players touching one coin on one tick: the first in `SimId` order gets it.
            if taken.contains(&touch.entity) {
                continue;
            }
            taken.push(touch.entity);
            score.points += coin.value;
            score.collected += 1;
            commands.entity(touch.entity).despawn();
            // A re-simulated tick (a rollback) picks the coin up again; say so only once.
            if !resimulation.active {
                info!("picked up a coin: {} points", score.points);
            }
        }
    }
}
// ANCHOR_END: collect

// ANCHOR: expire
/// Removes the coins whose time ran out.
pub fn expire_coins(
    mut commands: Commands,
    time: Res<FrameTime>,
    coins: Query<(Entity, &Coin)>,
    mut score: ResMut<Score>,
) {
    for (entity, coin) in &coins {
        if time.fixed_tick >= coin.vanishes_at {
            // Despawning in query order is fine: the same coins go, whatever the order.
            commands.entity(entity).despawn();
            score.missed += 1;
        }
    }
}
// ANCHOR_END: expire
