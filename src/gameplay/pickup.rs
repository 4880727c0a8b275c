//! [`Pickup`] and [`Counter`]: things a body collects by touching them, and the tally it keeps.
//!
//! A pickup is usually a sensor collider. When a body with a `Counter` starts touching a pickup that
//! has not been collected, the counter grows by the pickup's value and the pickup is collected: it
//! stops colliding (its layers are cleared) and stays in the world, so no entity id changes.
//! Collisions are read from the tick's `CollisionEvents`, which are ordered by `PhysicsId` pair and
//! event id, so when two collectors reach one pickup in the same tick the same one always wins.
//! This module must never despawn.

use bevy::prelude::{Commands, Component, Query, Res};
use serde::{Deserialize, Serialize};

use crate::physics::{CollisionEventKind, CollisionEvents, CollisionLayers};

/// Something to collect (simulation state).
#[derive(
    Component,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    rusting_macros::SimState,
)]
#[serde(default, deny_unknown_fields)]
#[require(crate::state::SimId)]
pub struct Pickup {
    /// What collecting it adds to the collector's counter.
    pub value: i64,
    /// Whether it has been collected.
    pub collected: bool,
}

/// A tally, kept by whatever collects pickups (simulation state).
#[derive(
    Component,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    rusting_macros::SimState,
)]
#[serde(default, deny_unknown_fields)]
#[require(crate::state::SimId)]
pub struct Counter {
    /// The current count.
    pub value: i64,
}

/// Collects pickups that a counter-carrying body started touching this tick.
pub fn collect_pickups(
    mut commands: Commands,
    events: Res<CollisionEvents>,
    mut pickups: Query<&mut Pickup>,
    mut counters: Query<&mut Counter>,
) {
    for event in events
        .events
        .iter()
        .filter(|e| e.kind == CollisionEventKind::Started)
    {
        for (item, collector) in [
            (event.entity_a, event.entity_b),
            (event.entity_b, event.entity_a),
        ] {
            let Ok(mut pickup) = pickups.get_mut(item) else {
                continue;
            };
            if pickup.collected {
                continue;
            }
            let Ok(mut counter) = counters.get_mut(collector) else {
                continue;
            };
            counter.value = counter.value.wrapping_add(pickup.value);
            pickup.collected = true;
            commands.entity(item).insert(CollisionLayers {
                memberships: 0,
                filters: 0,
            });
        }
    }
}
