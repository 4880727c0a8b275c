//! The fixed schedules: one chain of [`SimSet`]s, single-threaded, with ambiguity as an error.
//!
//! Bevy's multi-threaded executor runs unordered systems in whatever order threads finish, and
//! two unordered systems that touch the same data then produce different bits from run to run.
//! So every fixed schedule (`FixedFirst` to `FixedLast`) runs on the single-threaded executor, in
//! the schedule's topological order, and bevy's ambiguity detection is set to fail the build when
//! two systems with conflicting access have no order between them. The engine's own fixed systems
//! go into the sets below, which run as one chain.
//!
//! This module owns that configuration; it must never add simulation systems itself.

use bevy::app::{App, FixedMainScheduleOrder};
use bevy::ecs::schedule::{
    InternedScheduleLabel, LogLevel, ScheduleBuildSettings, SingleThreadedExecutor, SystemSet,
};
use bevy::prelude::{FixedUpdate, IntoScheduleConfigs, World};

/// The engine's stages of one fixed tick, in the order they run.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SimSet {
    /// Deadline-job results due this tick, then sliced tasks' units (`jobs`): first, so every
    /// later system of the tick sees them.
    Jobs,
    /// The tick's input: presses and releases since the tick before (`TickInput`).
    Input,
    /// CPU rigid-body physics: broad phase, contacts, solver, integration, sleep, events.
    Physics,
    /// First-person player movement.
    Player,
    /// Platformer movement.
    Platformer,
    /// Reactions to contacts (triggers).
    ContactTriggers,
    /// Pickups and counters.
    Pickups,
    /// Sound cues raised by the simulation.
    SoundCues,
    /// Burst particles already alive.
    BurstParticles,
    /// New bursts from emitters.
    NewBursts,
    /// Tweens.
    Tweens,
}

impl SimSet {
    /// Every set, in chain order.
    pub const ALL: [SimSet; 11] = [
        SimSet::Jobs,
        SimSet::Input,
        SimSet::Physics,
        SimSet::Player,
        SimSet::Platformer,
        SimSet::ContactTriggers,
        SimSet::Pickups,
        SimSet::SoundCues,
        SimSet::BurstParticles,
        SimSet::NewBursts,
        SimSet::Tweens,
    ];
}

/// The labels of the schedules `FixedMain` runs each tick, in order.
pub fn fixed_schedule_labels(world: &World) -> Vec<InternedScheduleLabel> {
    world
        .get_resource::<FixedMainScheduleOrder>()
        .map(|order| order.labels.clone())
        .unwrap_or_default()
}

/// Makes every fixed schedule single-threaded with ambiguity detection as an error, and chains the
/// [`SimSet`]s in `FixedUpdate`.
pub fn configure_fixed_schedules(app: &mut App) {
    for label in fixed_schedule_labels(app.world()) {
        app.edit_schedule(label, |schedule| {
            schedule.set_executor(SingleThreadedExecutor::new());
            schedule.set_build_settings(ScheduleBuildSettings {
                ambiguity_detection: LogLevel::Error,
                ..Default::default()
            });
        });
    }
    for pair in SimSet::ALL.windows(2) {
        app.configure_sets(FixedUpdate, pair[1].after(pair[0]));
    }
}

/// Builds every fixed schedule now and returns the first build error (such as two unordered
/// systems writing the same data), with bevy's description of it.
pub fn build_fixed_schedules(world: &mut World) -> Result<(), String> {
    for label in fixed_schedule_labels(world) {
        let built = world.try_schedule_scope(label, |world, schedule| {
            schedule
                .initialize(world)
                .map(|_| ())
                .map_err(|error| format!("{label:?}: {}", error.to_string(schedule.graph(), world)))
        });
        if let Ok(Err(message)) = built {
            return Err(message);
        }
    }
    Ok(())
}
