//! [`TickRanks`]: change detection carried through a snapshot, so that a fixed system filtering on
//! `Changed<T>` or `Added<T>` sees the same entities in a re-simulated tick as in the first run.
//!
//! bevy marks a component changed with the world's change tick at the write, and a system sees it
//! as changed when that tick is newer than the system's previous run. A restore writes every value
//! it puts back, so without more every component would look changed to every system in the next
//! tick, which the first run did not see (a bevy_ggrs game that counts `Changed<Health>` then
//! fails its synctest). The exact ticks cannot be put back (the world's tick only moves forward,
//! and systems keep their last runs), but what a system sees only depends on *which systems ran
//! before the change*. So a snapshot keeps, for every value, its **rank**: how many of the fixed
//! systems last ran before it was changed (or added). A restore gives the value a tick with the
//! same rank among the systems' last runs now. The fixed schedules run the same systems in the
//! same order every tick, so every system then sees exactly what it saw the first time.
//!
//! This module owns the ranking. It must never change a value: the snapshot writes values and
//! calls it for the ticks.

use bevy::ecs::change_detection::{ComponentTicks, Tick};
use bevy::ecs::schedule::Schedules;
use bevy::prelude::World;

/// A value's ranks: how many fixed systems ran before it was changed, and before it was added.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ranks {
    changed: u16,
    added: u16,
}

/// The fixed systems' last runs, as ages from the world's current tick (see the module docs).
pub(crate) struct TickRanks {
    now: Tick,
    /// Every fixed system's age (`now - last_run`), ascending: the latest run first.
    ages: Vec<u32>,
}

impl TickRanks {
    /// The last runs of every system of `world`'s fixed schedules, now.
    pub fn of(world: &World) -> Self {
        let now = world.read_change_tick();
        let mut ages = Vec::new();
        if let Some(schedules) = world.get_resource::<Schedules>() {
            // The fixed schedules (`FixedMain`'s order), read here: the runtime that configures
            // them sits above this module.
            let labels = world
                .get_resource::<bevy::app::FixedMainScheduleOrder>()
                .map(|order| order.labels.clone())
                .unwrap_or_default();
            for label in labels {
                let Some(Ok(systems)) = schedules.get(label).map(|s| s.systems()) else {
                    continue;
                };
                ages.extend(systems.map(|(_, system)| age(now, system.get_last_run())));
            }
        }
        ages.sort_unstable();
        TickRanks { now, ages }
    }

    /// How many systems ran before `tick` (so see it as changed at their next run).
    fn rank(&self, tick: Tick) -> u16 {
        let age = age(self.now, tick);
        let seen_by = self.ages.len() - self.ages.partition_point(|&a| a <= age);
        u16::try_from(seen_by).unwrap_or(u16::MAX)
    }

    /// A tick that exactly `rank` systems ran before.
    fn tick_for(&self, rank: u16) -> Tick {
        let n = self.ages.len();
        let rank = usize::from(rank).min(n);
        let age = match rank {
            // Older than every system's last run: seen by none.
            0 => self.ages.last().copied().unwrap_or(0),
            // Just newer than the `rank` oldest last runs.
            _ => self.ages[n - rank].saturating_sub(1),
        };
        Tick::new(self.now.get().wrapping_sub(age))
    }

    /// The ranks of a value with `ticks`.
    pub fn ranks(&self, ticks: ComponentTicks) -> Ranks {
        Ranks {
            changed: self.rank(ticks.changed),
            added: self.rank(ticks.added),
        }
    }

    /// The ticks to give a value restored with `ranks`.
    pub fn ticks(&self, ranks: Ranks) -> (Tick, Tick) {
        (self.tick_for(ranks.changed), self.tick_for(ranks.added))
    }
}

/// How many ticks before `now` `tick` was.
fn age(now: Tick, tick: Tick) -> u32 {
    now.get().wrapping_sub(tick.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_comes_back_as_a_tick_with_the_same_rank() {
        let then = TickRanks {
            now: Tick::new(1000),
            ages: vec![2, 5, 9, 14],
        };
        let later = TickRanks {
            now: Tick::new(5000),
            ages: vec![3, 4, 20, 31],
        };
        for changed in [999, 997, 996, 995, 992, 988, 986, 900] {
            let rank = then.rank(Tick::new(changed));
            let restored = later.tick_for(rank);
            assert_eq!(later.rank(restored), rank, "changed at {changed}");
        }
        assert_eq!(then.rank(Tick::new(999)), 4);
        assert_eq!(then.rank(Tick::new(900)), 0);
    }
}
