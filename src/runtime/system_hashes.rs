//! [`SystemHashes`]: the world-state hash after every system of the fixed schedules during one
//! chosen tick, so that two runs that part at that tick can be told which system's output first
//! differs.
//!
//! A run asks for it before the app is set up ([`SystemHashProbe::at_tick`], installed by
//! `App::hash_each_system_at`). Every system of the fixed schedules then gets a run condition
//! that, during that tick only, hashes the world just before the system runs (the same hash
//! `world_state_hash` computes after a tick) and always lets the system run. The hash before
//! system `k + 1` is the world after system `k`; the hash after the last system is the tick's
//! own. In every other tick a probe reads one number and returns, and a run that does not ask
//! installs none: there is no cost outside the re-run that asks.
//!
//! Commands a system queues reach the world at the next sync point bevy inserts, so their effect
//! is seen by the probe of the first system after that point; the difference is then named at
//! the system before it, which the wording says ("or a system before it whose commands were
//! applied there"). This module must never change simulation state.

use std::path::Path;
use std::sync::{Arc, Mutex};

use bevy::ecs::schedule::ConditionWithAccess;
use bevy::prelude::{IntoSystem, World};
use serde::{Deserialize, Serialize};

use super::json_file;
use super::time::FrameTime;

/// The hash of the world after one system of the chosen tick.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemStep {
    /// The fixed schedule the system is in (`FixedUpdate`).
    pub schedule: String,
    /// The system's name (`my_game::enemies::steer`).
    pub system: String,
    /// The world-state hash after it ran, 16 hex digits.
    pub after: String,
}

/// The world-state hash before the chosen tick's first fixed system and after each of them, in
/// the order they ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemHashes {
    /// The tick (ticks completed, counting it).
    pub tick: u64,
    /// The hash before the first fixed system ran (the previous tick's state, plus whatever
    /// changed between the ticks).
    pub before: String,
    /// Every system of the fixed schedules, in the order they ran (or were skipped), with the
    /// hash after it.
    pub systems: Vec<SystemStep>,
}

/// Where two runs' [`SystemHashes`] of the same tick first part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SystemDifference {
    /// The world differed before the tick's first system: between the ticks (in `Update`, the
    /// frame's input, or anything else outside the fixed schedules).
    BeforeFirstSystem,
    /// The world first differed after this system.
    After {
        /// The system's place among the tick's systems (0-based).
        index: usize,
        /// The fixed schedule it is in.
        schedule: String,
        /// Its name.
        system: String,
        /// The system that ran just before it, if any.
        previous: Option<String>,
    },
    /// The two runs ran different systems (different builds of the schedules): the first place
    /// where the lists differ.
    DifferentSystems {
        /// The place (0-based).
        index: usize,
    },
}

impl std::fmt::Display for SystemDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SystemDifference::BeforeFirstSystem => f.write_str(
                "the state already differed before the tick's first fixed system: something \
                 outside the fixed schedules (`Update`, the frame's input or pacing) changed it",
            ),
            SystemDifference::After {
                schedule,
                system,
                previous,
                ..
            } => {
                write!(f, "`{system}` ({schedule}")?;
                if let Some(previous) = previous {
                    write!(f, ", after `{previous}`")?;
                }
                f.write_str(") is the first system whose output differs")
            }
            SystemDifference::DifferentSystems { index } => write!(
                f,
                "the two runs ran different fixed systems (from system {} on)",
                index + 1
            ),
        }
    }
}

impl SystemHashes {
    /// Reads a file a run wrote.
    pub fn load(path: &Path) -> Result<SystemHashes, String> {
        json_file::read(path).map_err(|e| {
            e.into(
                |io| format!("{}: {io}", path.display()),
                |line, column, message| {
                    format!(
                        "{}:{line}:{column}: not a system-hash file: {message}",
                        path.display()
                    )
                },
            )
        })
    }

    /// Writes it to `path` atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        json_file::write_atomically(path, &bytes)
    }

    /// Where `self` and `other` first part, `None` when they agree after every system.
    pub fn first_difference(&self, other: &SystemHashes) -> Option<SystemDifference> {
        if self.before != other.before {
            return Some(SystemDifference::BeforeFirstSystem);
        }
        for (index, (a, b)) in self.systems.iter().zip(&other.systems).enumerate() {
            if a.system != b.system || a.schedule != b.schedule {
                return Some(SystemDifference::DifferentSystems { index });
            }
            if a.after != b.after {
                return Some(SystemDifference::After {
                    index,
                    schedule: a.schedule.clone(),
                    system: a.system.clone(),
                    previous: index.checked_sub(1).map(|k| self.systems[k].system.clone()),
                });
            }
        }
        (self.systems.len() != other.systems.len()).then_some(SystemDifference::DifferentSystems {
            index: self.systems.len().min(other.systems.len()),
        })
    }
}

/// What the probes saw during the chosen tick: `(schedule, system, hash before it)`.
#[derive(Default)]
struct Probed {
    before: Vec<(Arc<str>, Arc<str>, u64)>,
}

/// The probes of one run (see the module docs): install them, run the chosen tick, take the
/// hashes.
#[derive(Clone)]
pub struct SystemHashProbe {
    tick: u64,
    probed: Arc<Mutex<Probed>>,
}

impl SystemHashProbe {
    /// Probes for tick `tick` (ticks completed, counting it; from 1).
    pub fn at_tick(tick: u64) -> SystemHashProbe {
        SystemHashProbe {
            tick,
            probed: Arc::default(),
        }
    }

    /// The tick probed.
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// Gives every system of the fixed schedules a probe. Call it before the schedules are first
    /// built.
    pub fn install(&self, world: &mut World) {
        for label in super::schedule::fixed_schedule_labels(world) {
            let schedule_name: Arc<str> = Arc::from(format!("{label:?}"));
            let _ = world.try_schedule_scope(label, |world, schedule| {
                let systems = &mut schedule.graph_mut().systems;
                let named: Vec<_> = systems
                    .iter()
                    .map(|(key, system, _)| (key, Arc::<str>::from(system.name().to_string())))
                    .collect();
                for (key, name) in named {
                    let probe = self.clone();
                    let schedule_name = Arc::clone(&schedule_name);
                    let mut condition: Box<
                        dyn bevy::ecs::system::ReadOnlySystem<In = (), Out = bool>,
                    > = Box::new(IntoSystem::into_system(move |world: &World| {
                        probe.observe(world, &schedule_name, &name);
                        true
                    }));
                    let access = condition.initialize(world);
                    if let Some(conditions) = systems.get_conditions_mut(key) {
                        conditions.push(ConditionWithAccess { condition, access });
                    }
                }
            });
        }
    }

    /// A probe's work, just before system `system` of `schedule` runs.
    fn observe(&self, world: &World, schedule: &Arc<str>, system: &Arc<str>) {
        let running = world
            .get_resource::<FrameTime>()
            .map_or(0, |time| time.fixed_tick + 1);
        if running != self.tick {
            return;
        }
        let hash = crate::state::hash::world_state_hash_of(world);
        if let Ok(mut probed) = self.probed.lock() {
            probed
                .before
                .push((Arc::clone(schedule), Arc::clone(system), hash));
        }
    }

    /// The hashes of the chosen tick, once it has run and hashed to `tick_hash`; `None` before
    /// (or when no fixed system ran).
    pub fn hashes(&self, tick_hash: u64) -> Option<SystemHashes> {
        let probed = self.probed.lock().ok()?;
        let (_, _, first) = probed.before.first()?;
        let afters = probed
            .before
            .iter()
            .skip(1)
            .map(|(_, _, hash)| *hash)
            .chain(std::iter::once(tick_hash));
        Some(SystemHashes {
            tick: self.tick,
            before: format!("{first:016x}"),
            systems: probed
                .before
                .iter()
                .zip(afters)
                .map(|((schedule, system, _), after)| SystemStep {
                    schedule: schedule.to_string(),
                    system: system.to_string(),
                    after: format!("{after:016x}"),
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hashes(before: &str, afters: &[(&str, &str)]) -> SystemHashes {
        SystemHashes {
            tick: 3,
            before: before.to_owned(),
            systems: afters
                .iter()
                .map(|(system, after)| SystemStep {
                    schedule: "FixedUpdate".to_owned(),
                    system: (*system).to_owned(),
                    after: (*after).to_owned(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_first_differing_step_is_named_with_the_one_before() {
        let a = hashes("0", &[("input", "1"), ("steer", "2"), ("move", "3")]);
        let b = hashes("0", &[("input", "1"), ("steer", "9"), ("move", "8")]);
        assert_eq!(a.first_difference(&a), None);
        let found = a.first_difference(&b).unwrap();
        assert_eq!(
            found.to_string(),
            "`steer` (FixedUpdate, after `input`) is the first system whose output differs"
        );
        let c = hashes("7", &[("input", "1")]);
        assert_eq!(
            a.first_difference(&c),
            Some(SystemDifference::BeforeFirstSystem)
        );
        let d = hashes("0", &[("input", "1"), ("aim", "2")]);
        assert_eq!(
            a.first_difference(&d),
            Some(SystemDifference::DifferentSystems { index: 1 })
        );
    }
}
