//! [`SyncTest`]: roll back and re-simulate every tick, to catch state that escapes the snapshot or
//! the hash.
//!
//! Rollback networking restores the world a few ticks back and re-simulates it with corrected
//! input, inside the running app, several times a second. That only works if everything a tick
//! reads is in the snapshot: a counter kept in a system's `Local`, a value in a `static`, a type
//! ignored in snapshots that the simulation writes, a resource that game code changes from outside
//! the fixed schedule. A synctest finds such state before a network session does: every frame runs
//! one tick; once `distance` frames have run, the same app restores the snapshot from `distance`
//! ticks back in place, re-simulates the same frames with the same input, and compares each tick's
//! hash with the first run's. The game then goes on from the re-simulated world, as a rollback
//! session would. The first mismatch fails with the tick, and the entity and component that
//! differ (found by putting the first run's snapshot of that tick back next to a snapshot of the
//! re-simulated world and comparing their per-component hashes, in the same app). GPU bodies are
//! compared too: each re-simulated tick's GPU tick against the first run's GPU hash.
//!
//! A mismatch has two causes a user must tell apart, so the failing tick is re-simulated again
//! from the same snapshot: when it gives yet another result, the tick itself is nondeterministic
//! (a worker thread's timing, hash-map order, an address, a clock, or a counter every run of the
//! tick moves) and the error says so ([`SyncTestError::Nondeterministic`]); when it gives the same
//! result again, something the first run saw was not in the snapshot
//! ([`SyncTestError::Mismatch`]).
//!
//! This module must never read a clock; its frames are exactly one fixed step long.

use crate::record::{StateDetail, compare_details};
use std::collections::VecDeque;

use crate::engine::{App, SimulationHost};
use crate::runtime::RuntimeInput;
use crate::state::hash::StateHashes;
use crate::state::{SnapshotError, UndeclaredState, WorldSnapshot};

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
    /// A tick re-simulated again from the same snapshot with the same input gave yet another
    /// hash: the tick does not compute the same result from the same state.
    #[error(
        "synctest: tick {tick} re-simulated from the snapshot of tick {from} gives different \
         results from the same state ({resimulated:016x}, then {again:016x}; the first run \
         {original:016x}){}: the simulation is nondeterministic (threads, clocks, addresses, \
         hash-map order) or keeps state outside the snapshot that every run of the tick changes \
         (a counter in a `Local` or a `static`)",
        where_.as_ref().map(|w| format!(" ({w})")).unwrap_or_default()
    )]
    Nondeterministic {
        /// The first tick that differs.
        tick: u64,
        /// The tick the re-simulations started from.
        from: u64,
        /// The first run's hash.
        original: u64,
        /// The first re-simulation's hash.
        resimulated: u64,
        /// The hash of the re-simulation that differed from the first one.
        again: u64,
        /// The first entity and component where the first run and the first re-simulation
        /// differ, when the comparison finds one.
        where_: Option<String>,
    },
    /// A re-simulated GPU tick's hash differs from the first run's while the CPU state agrees.
    #[error(
        "synctest: GPU tick {gpu_tick} re-simulated from the snapshot of tick {from} hashes \
         {resimulated:016x}, the first run {original:016x}, and the CPU state agrees: the GPU \
         commands, bodies or spawns of fixed tick {gpu_tick} came from state outside the snapshot"
    )]
    GpuMismatch {
        /// The fixed tick after which the hashes were compared (`gpu_tick + 1`).
        tick: u64,
        /// The first GPU tick that differs (the one fixed tick `gpu_tick` queued).
        gpu_tick: u64,
        /// The tick the re-simulation started from.
        from: u64,
        /// The first run's GPU hash.
        original: u64,
        /// The re-simulated GPU hash.
        resimulated: u64,
    },
    /// A snapshot could not be taken or restored.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// A tick changed state nobody declared (the synctest always runs this check).
    #[error("synctest: {0}")]
    Undeclared(UndeclaredState),
    /// The floating-point environment changed (a synctest fails on it whatever the build).
    #[error("synctest: {0}")]
    FloatEnv(crate::runtime::FloatEnvChanged),
}

/// How many more times a tick whose re-simulation differs from the first run is re-simulated
/// from the same snapshot, to tell a nondeterministic tick (another result, at least once in a
/// few tries) from state outside the snapshot (the same wrong result every time).
pub const RESIMULATE_AGAIN: usize = 3;

/// One frame of the first run: the snapshot before it and its input.
struct Frame {
    before: WorldSnapshot,
    input: RuntimeInput,
}

/// A synctest's own state, apart from the simulation it drives: the last `distance` frames with
/// the snapshot before each. [`SyncTest`] pairs it with an engine [`App`]; a windowed game keeps one
/// and drives the world inside each window frame with it.
pub struct SyncTestRun {
    distance: usize,
    frames: VecDeque<Frame>,
    /// The snapshot of the state after the last frame, the next frame's `before`.
    latest: Option<WorldSnapshot>,
    rollbacks: u64,
}

impl SyncTestRun {
    /// A synctest that rolls back `distance` ticks (at least 1) after every frame. The host it
    /// drives should check for undeclared state (a synctest always does; [`SyncTest::new`] turns
    /// the check on).
    pub fn new(distance: usize) -> Self {
        SyncTestRun {
            distance: distance.max(1),
            frames: VecDeque::new(),
            latest: None,
            rollbacks: 0,
        }
    }

    /// Runs one frame of one tick with `input` in `host`, then rolls back and re-simulates.
    pub fn advance(
        &mut self,
        host: &mut impl SimulationHost,
        input: RuntimeInput,
    ) -> Result<(), SyncTestError> {
        let before = match self.latest.take() {
            Some(snapshot) => snapshot,
            None => host.take_snapshot()?,
        };
        self.frames.push_back(Frame {
            before,
            input: input.clone(),
        });
        if self.frames.len() > self.distance {
            self.frames.pop_front();
        }
        host.set_frame_input(input);
        let step = host.tick_length();
        host.step_frame(step);
        if let Some(found) = host.first_undeclared() {
            return Err(SyncTestError::Undeclared(found.clone()));
        }
        if let Some(change) = host.first_float_change() {
            return Err(SyncTestError::FloatEnv(change.clone()));
        }
        let now = host.take_snapshot()?;
        if self.frames.len() == self.distance {
            self.resimulate(host, &now)?;
        }
        self.latest = Some(now);
        Ok(())
    }

    /// Restores the oldest kept snapshot in place and re-simulates every kept frame, comparing
    /// each tick's hash with the first run's, and the GPU hash of the GPU tick it queued (the
    /// first run's snapshots simulated it; the re-simulation completes it before comparing).
    fn resimulate(
        &mut self,
        host: &mut impl SimulationHost,
        now: &WorldSnapshot,
    ) -> Result<(), SyncTestError> {
        let from = self.frames[0].before.tick();
        let first_run: Vec<(Option<u64>, Option<u64>)> = {
            let hashes = host.world().resource::<StateHashes>();
            (1..=self.frames.len() as u64)
                .map(|k| (hashes.get(from + k), hashes.get_gpu(from + k - 1)))
                .collect()
        };
        host.restore_snapshot(&self.frames[0].before)?;
        self.rollbacks += 1;
        let step = host.tick_length();
        for (k, &(original, original_gpu)) in first_run.iter().enumerate() {
            host.set_frame_input(self.frames[k].input.clone());
            host.step_frame(step);
            let tick = host.ticks_done();
            let resimulated = host.world().resource::<StateHashes>().get(tick);
            let resimulated_gpu =
                crate::physics::gpu::complete_gpu_ticks_before(host.world_mut(), tick);
            if original != resimulated {
                let first_run_state = self.frames.get(k + 1).map_or(now, |f| &f.before);
                let where_ = locate(host, first_run_state);
                let (original, resimulated) = (
                    original.unwrap_or_default(),
                    resimulated.unwrap_or_default(),
                );
                if let Some(again) = self.differs_again(host, k, resimulated)? {
                    return Err(SyncTestError::Nondeterministic {
                        tick,
                        from,
                        original,
                        resimulated,
                        again,
                        where_,
                    });
                }
                return Err(SyncTestError::Mismatch {
                    tick,
                    from,
                    original,
                    resimulated,
                    where_,
                });
            }
            if original_gpu != resimulated_gpu {
                return Err(SyncTestError::GpuMismatch {
                    tick,
                    gpu_tick: tick - 1,
                    from,
                    original: original_gpu.unwrap_or_default(),
                    resimulated: resimulated_gpu.unwrap_or_default(),
                });
            }
        }
        Ok(())
    }

    /// Re-simulates frames `0..=k` from the oldest kept snapshot up to [`RESIMULATE_AGAIN`]
    /// times and returns the first hash of frame `k`'s tick that differs from `resimulated` (the
    /// first re-simulation's): a tick that gives different results from the same state is
    /// nondeterministic, where state outside the snapshot gives the same wrong result every time.
    /// Leaves the host at that tick.
    fn differs_again(
        &mut self,
        host: &mut impl SimulationHost,
        k: usize,
        resimulated: u64,
    ) -> Result<Option<u64>, SyncTestError> {
        let step = host.tick_length();
        for _ in 0..RESIMULATE_AGAIN {
            host.restore_snapshot(&self.frames[0].before)?;
            for frame in self.frames.iter().take(k + 1) {
                host.set_frame_input(frame.input.clone());
                host.step_frame(step);
            }
            let tick = host.ticks_done();
            let again = host
                .world()
                .resource::<StateHashes>()
                .get(tick)
                .unwrap_or_default();
            if again != resimulated {
                return Ok(Some(again));
            }
        }
        Ok(None)
    }

    /// How many times the host has been rolled back so far.
    pub fn rollbacks(&self) -> u64 {
        self.rollbacks
    }

    /// How many ticks each rollback goes back.
    pub fn distance(&self) -> usize {
        self.distance
    }
}

/// Runs an app one tick a frame and re-simulates the last `distance` ticks after every frame, in
/// place.
pub struct SyncTest<F: FnMut() -> App> {
    app: App,
    /// Kept for API compatibility: the app is built once, and every rollback happens inside it.
    _make_app: F,
    run: SyncTestRun,
}

impl<F: FnMut() -> App> SyncTest<F> {
    /// A synctest of the app from `make_app` that rolls back `distance` ticks (at least 1).
    pub fn new(mut make_app: F, distance: usize) -> Self {
        let mut app = make_app();
        app.check_undeclared_state(true);
        app.set_float_env_policy(crate::runtime::FloatEnvPolicy::Error);
        SyncTest {
            app,
            _make_app: make_app,
            run: SyncTestRun::new(distance),
        }
    }

    /// Runs one frame of one tick with `input`, then rolls back and re-simulates.
    pub fn advance(&mut self, input: RuntimeInput) -> Result<(), SyncTestError> {
        self.run.advance(&mut self.app, input)
    }

    /// How many times the app has been rolled back so far.
    pub fn rollbacks(&self) -> u64 {
        self.run.rollbacks()
    }

    /// The app (first run and re-simulations alike).
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The app, mutably.
    pub fn app_mut(&mut self) -> &mut App {
        &mut self.app
    }
}

/// Where the re-simulated `host` differs from `first_run`, the first run's snapshot of the same
/// tick: every differing entity, component and field and every differing resource, bounded
/// (`compare_details`), worded as every command words it. Leaves `host` as it found it.
fn locate(host: &mut impl SimulationHost, first_run: &WorldSnapshot) -> Option<String> {
    let resimulated = host.take_snapshot().ok()?;
    let tick = host.ticks_done();
    let got = StateDetail::capture(host.world_mut(), tick);
    host.restore_snapshot(first_run).ok()?;
    let expected = StateDetail::capture(host.world_mut(), tick);
    host.restore_snapshot(&resimulated).ok()?;
    compare_details(&expected, &got)
        .map(|difference| format!("first run vs re-simulation: {difference}"))
}
