//! [`SoundEvents`]: sound cues raised by the simulation, for the presentation to play.
//!
//! Cues are presentation: the simulation raises them (landing, collecting) and never reads them
//! back. They are gathered in a fixed system (`SimSet::SoundCues`) so that their order is the
//! chain's, and each tick's list replaces the last. Which pickups were already cued lives in the
//! resource itself (copied by snapshots), never in a system's `Local`, so a restore does not cue a
//! collected pickup again. This module must never play audio itself.

use bevy::prelude::{Query, Res, ResMut, Resource};

use super::pickup::Pickup;
use super::platformer::PlatformerController;
use crate::runtime::{FrameTime, SimId};

/// A sound the presentation should play.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoundEvent {
    /// The tick that raised it.
    pub tick: u64,
    /// The body it comes from.
    pub source: SimId,
    /// What sound: `"land"`, `"pickup"`.
    pub cue: &'static str,
}

/// The sound cues of the latest tick, in `SimId` order (presentation, copied by snapshots).
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct SoundEvents {
    /// This tick's cues.
    pub events: Vec<SoundEvent>,
    /// The pickups collected by the end of the last tick, sorted: a pickup cues once, on the tick
    /// it joins this list.
    pub collected: Vec<SimId>,
}

/// Raises a `"land"` cue for every platformer that landed this tick and a `"pickup"` cue for every
/// pickup collected this tick (runs in `SimSet::SoundCues`).
pub fn raise_sound_cues(
    time: Res<FrameTime>,
    mut sounds: ResMut<SoundEvents>,
    platformers: Query<(&SimId, &PlatformerController)>,
    pickups: Query<(&SimId, &Pickup)>,
) {
    let tick = time.fixed_tick;
    let mut events = Vec::new();
    for (&source, platformer) in &platformers {
        if platformer.landed {
            events.push(SoundEvent {
                tick,
                source,
                cue: "land",
            });
        }
    }
    let mut collected: Vec<SimId> = pickups
        .iter()
        .filter(|(_, p)| p.collected)
        .map(|(&id, _)| id)
        .collect();
    collected.sort_unstable();
    for &source in &collected {
        if sounds.collected.binary_search(&source).is_err() {
            events.push(SoundEvent {
                tick,
                source,
                cue: "pickup",
            });
        }
    }
    events.sort_by_key(|e| (e.source, e.cue));
    let sounds = &mut *sounds;
    sounds.collected = collected;
    sounds.events = events;
}
