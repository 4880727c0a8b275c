//! [`SoundEvents`]: sound cues raised by the simulation, for the presentation to play.
//!
//! Cues are presentation: the simulation raises them (landing, collecting) and never reads them
//! back. They are gathered in a fixed system (`SimSet::SoundCues`) so that their order is the
//! chain's, and each tick's list replaces the last. Which pickups were already cued lives in the
//! resource itself (copied by snapshots), never in a system's `Local`, so a restore does not cue a
//! collected pickup again.
//!
//! What must happen once is *playing* a cue, and a tick can run more than once (a rollback
//! re-simulates it and raises its cues again) or share a frame with other ticks (whose lists the
//! next tick replaces). So after every tick the engine `App` moves the tick's cues into the
//! [`SoundQueue`], keyed by `(tick, source, cue)`: a key queued before is not queued again, and
//! nothing a tick raised is lost before the presentation drains the queue. This module must never
//! play audio itself.

use std::collections::BTreeSet;

use bevy::prelude::{Query, Res, ResMut, Resource, World};

use super::pickup::Pickup;
use super::platformer::PlatformerController;
use crate::runtime::FrameTime;
use crate::state::SimId;

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

/// How many ticks back the queue remembers what it queued: further than any rollback goes.
pub const SOUND_MEMORY_TICKS: u64 = 1024;

/// Sound cues waiting to be played, each once (presentation: never hashed, snapshotted or
/// restored). The presentation calls [`SoundQueue::drain`] every frame and plays what it gets.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct SoundQueue {
    pending: Vec<SoundEvent>,
    queued: BTreeSet<(u64, SimId, &'static str)>,
}

impl SoundQueue {
    /// Every cue not yet played, in the order its ticks ran and, within a tick, in `SimId` order;
    /// each cue once, whatever re-simulated its tick.
    pub fn drain(&mut self) -> Vec<SoundEvent> {
        std::mem::take(&mut self.pending)
    }

    /// Queues `events`, raised by tick `tick`, leaving out what was queued before; forgets keys
    /// older than [`SOUND_MEMORY_TICKS`].
    pub fn queue(&mut self, tick: u64, events: &[SoundEvent]) {
        for event in events {
            if self.queued.insert((event.tick, event.source, event.cue)) {
                self.pending.push(event.clone());
            }
        }
        let oldest = tick.saturating_sub(SOUND_MEMORY_TICKS);
        while self.queued.first().is_some_and(|(t, _, _)| *t < oldest) {
            self.queued.pop_first();
        }
    }
}

/// Moves the tick's cues into the [`SoundQueue`] (the engine `App` calls it after every tick).
pub fn queue_sound_cues(world: &mut World, tick: u64) {
    let Some(events) = world
        .get_resource::<SoundEvents>()
        .map(|s| s.events.clone())
    else {
        return;
    };
    if let Some(mut queue) = world.get_resource_mut::<SoundQueue>() {
        queue.queue(tick, &events);
    }
}
