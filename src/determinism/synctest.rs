//! [`SyncTest`]: roll back and re-simulate every tick, to catch state that escapes the snapshot or
//! the hash.
//!
//! Rollback networking restores the world a few ticks back and re-simulates it with corrected
//! input. That only works if everything a tick reads is in the snapshot: a counter kept in a
//! system's `Local`, a value in a `static`, a type ignored in snapshots that the simulation
//! writes, a resource that game code changes from outside the fixed schedule. A synctest finds
//! such state before a network session does: every frame runs one tick and takes a snapshot
//! first; once `distance` frames have run, a new app from `make_app` restores the snapshot from
//! `distance` ticks back, re-simulates the same frames with the same input, and compares each
//! tick's hash with the first run's. The first mismatch fails with the tick, and the entity and
//! component that differ (found by restoring the first run's snapshot of that tick next to the
//! re-simulated world and comparing their per-component hashes).
//!
//! This module must never read a clock; its frames are exactly one fixed step long.

use std::collections::VecDeque;

use super::hash::{StateHashes, entity_states, resources_hash};
use super::snapshot::{SnapshotError, WorldSnapshot};
use crate::app::App;
use crate::runtime::RuntimeInput;

/// Why a synctest failed.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SyncTestError {
    /// A re-simulated tick's hash differs from the first run's.
    #[error(
        "synctest: tick {tick} re-simulated from the snapshot of tick {from} hashes {resimulated:016x}, \
         the first run {original:016x}{}: state outside the snapshot changed the simulation",
        where_.as_ref().map(|w| format!(" ({w})")).unwrap_or_default()
    )]
    Mismatch {
        /// The first tick that differs.
        tick: u64,
        /// The tick the re-simulation started from.
        from: u64,
        /// The first run's hash.
        original: u64,
        /// The re-simulated hash.
        resimulated: u64,
        /// The first entity and component that differ, when the comparison finds one.
        where_: Option<String>,
    },
    /// A snapshot could not be taken or restored.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
}

/// One frame of the first run: the snapshot before it and its input.
struct Frame {
    before: WorldSnapshot,
    input: RuntimeInput,
}

/// Runs an app one tick a frame and re-simulates the last `distance` ticks after every frame.
pub struct SyncTest<F: FnMut() -> App> {
    app: App,
    make_app: F,
    distance: usize,
    frames: VecDeque<Frame>,
}

impl<F: FnMut() -> App> SyncTest<F> {
    /// A synctest of apps from `make_app` that rolls back `distance` ticks (at least 1).
    pub fn new(mut make_app: F, distance: usize) -> Self {
        let app = make_app();
        SyncTest {
            app,
            make_app,
            distance: distance.max(1),
            frames: VecDeque::new(),
        }
    }

    /// Runs one frame of one tick with `input`, then rolls back and re-simulates.
    pub fn advance(&mut self, input: RuntimeInput) -> Result<(), SyncTestError> {
        let before = self.app.snapshot()?;
        self.frames.push_back(Frame {
            before,
            input: input.clone(),
        });
        if self.frames.len() > self.distance {
            self.frames.pop_front();
        }
        self.app.set_input(input);
        let step = self.app.fixed_step();
        self.app.update(step);
        if self.frames.len() == self.distance {
            self.resimulate()?;
        }
        Ok(())
    }

    /// Restores the oldest kept snapshot into a new app and re-simulates every kept frame.
    fn resimulate(&mut self) -> Result<(), SyncTestError> {
        let from = self.frames[0].before.tick();
        let mut replica = (self.make_app)();
        replica.restore(&self.frames[0].before)?;
        let step = replica.fixed_step();
        for (k, frame) in self.frames.iter().enumerate() {
            replica.set_input(frame.input.clone());
            replica.update(step);
            let tick = replica.ticks();
            let original = self.app.world().resource::<StateHashes>().get(tick);
            let resimulated = replica.world().resource::<StateHashes>().get(tick);
            if original != resimulated {
                let after = self.frames.get(k + 1).map(|f| &f.before);
                return Err(SyncTestError::Mismatch {
                    tick,
                    from,
                    original: original.unwrap_or_default(),
                    resimulated: resimulated.unwrap_or_default(),
                    where_: locate(&mut self.app, &mut self.make_app, &mut replica, after),
                });
            }
        }
        Ok(())
    }

    /// The app of the first run.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The app of the first run, mutably.
    pub fn app_mut(&mut self) -> &mut App {
        &mut self.app
    }
}

/// The first entity and component where `replica` differs from the first run at the same
/// tick: `first_run` is the first run's snapshot of that tick (none when it is the current
/// tick, whose world is the app itself).
fn locate(
    app: &mut App,
    make_app: &mut impl FnMut() -> App,
    replica: &mut App,
    first_run: Option<&WorldSnapshot>,
) -> Option<String> {
    let mut restored;
    let original = match first_run {
        Some(snapshot) => {
            restored = make_app();
            restored.restore(snapshot).ok()?;
            &mut restored
        }
        None => app,
    };
    let expected = entity_states(original.world_mut());
    let got = entity_states(replica.world_mut());
    let name = |app: &App, entity| {
        app.world()
            .get::<bevy::prelude::Name>(entity)
            .map(|n| format!("{entity} `{n}`"))
            .unwrap_or_else(|| entity.to_string())
    };
    for (a, b) in expected.iter().zip(&got) {
        if a.entity != b.entity {
            return Some(format!(
                "entity {} exists in only one run",
                a.entity.min(b.entity)
            ));
        }
        if a.components != b.components {
            let component = a
                .components
                .iter()
                .zip(&b.components)
                .find(|(x, y)| x != y)
                .map_or("its component set", |((name, _), _)| *name);
            return Some(format!(
                "entity {}, component {component}",
                name(original, a.entity)
            ));
        }
    }
    if expected.len() != got.len() {
        return Some("the runs hold different entities".to_owned());
    }
    (resources_hash(original.world()).0 != resources_hash(replica.world()).0)
        .then(|| "the simulation resources".to_owned())
}
