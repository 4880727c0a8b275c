//! [`Resimulation`]: whether the tick running now (or the frame's last tick) ran before.
//!
//! A rollback (`SyncTest`, a replay seek, later a network correction) restores a snapshot and runs
//! ticks again. Simulation systems must not care, but presentation must: a sound, a particle burst
//! or a log line that belongs to a tick should happen once, not again on every re-simulation. The
//! engine `App` keeps the newest tick it has run and marks every tick at or below it as a
//! re-simulation before the tick's systems run. The resource is presentation state: it is not
//! hashed, snapshotted or restored, and this module must never change simulation state.

use bevy::prelude::{Res, Resource};

/// Whether the tick running now ran before (see the module docs).
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resimulation {
    /// The tick being run (or the last one run, between ticks) is a re-simulation.
    pub active: bool,
    /// The newest tick the app has run.
    pub newest_tick: u64,
}

/// A run condition: true while a re-simulated tick runs (and after one, until the next tick).
pub fn resimulating(resimulation: Option<Res<Resimulation>>) -> bool {
    resimulation.is_some_and(|r| r.active)
}

/// A run condition: true unless the last tick run was a re-simulation; for presentation that must
/// happen once.
pub fn not_resimulating(resimulation: Option<Res<Resimulation>>) -> bool {
    !resimulating(resimulation)
}
