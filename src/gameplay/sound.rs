//! [`SoundEvents`]: sound cues raised by the simulation, for the presentation to play.
//!
//! Cues are presentation: the simulation raises them (landing, collecting) and never reads them
//! back. They are gathered in a fixed system (`SimSet::SoundCues`) so that their order is the
//! chain's, and each tick's list replaces the last. This module must never play audio itself.

use bevy::prelude::{Entity, Query, ResMut, Resource};

use super::pickup::Pickup;
use super::platformer::PlatformerController;
use crate::runtime::FrameTime;
use bevy::prelude::Res;

/// A sound the presentation should play.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoundEvent {
    /// The tick that raised it.
    pub tick: u64,
    /// The entity it comes from.
    pub source: Entity,
    /// What sound: `"land"`, `"pickup"`.
    pub cue: &'static str,
}

/// The sound cues of the latest tick, in entity order (presentation).
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct SoundEvents {
    /// This tick's cues.
    pub events: Vec<SoundEvent>,
}

/// Raises a `"land"` cue for every platformer that landed this tick and a `"pickup"` cue for every
/// pickup collected this tick (runs in `SimSet::SoundCues`).
pub fn raise_sound_cues(
    time: Res<FrameTime>,
    mut sounds: ResMut<SoundEvents>,
    platformers: Query<(Entity, &PlatformerController)>,
    pickups: Query<(Entity, &Pickup)>,
    mut collected_before: bevy::prelude::Local<Vec<Entity>>,
) {
    let tick = time.fixed_tick;
    let mut events = Vec::new();
    for (entity, platformer) in &platformers {
        if platformer.landed {
            events.push(SoundEvent {
                tick,
                source: entity,
                cue: "land",
            });
        }
    }
    let mut collected: Vec<Entity> = pickups
        .iter()
        .filter(|(_, p)| p.collected)
        .map(|(e, _)| e)
        .collect();
    collected.sort();
    for &entity in &collected {
        if collected_before.binary_search(&entity).is_err() {
            events.push(SoundEvent {
                tick,
                source: entity,
                cue: "pickup",
            });
        }
    }
    *collected_before = collected;
    events.sort_by_key(|e| (e.source, e.cue));
    sounds.events = events;
}
