//! [`SimulationHost`]: the running simulation that rollback tools ([`SyncTest`](crate::determinism::SyncTest)'s
//! rollbacks, [`ReplaySeeker`](crate::determinism::ReplaySeeker)'s seeks, replay playback) drive.
//!
//! A headless run owns an engine [`App`], which steps its frames itself. A windowed game owns no
//! `App` once it runs: bevy's window loop drives the frames, and the engine's frame step runs
//! inside each of them with the world and the [`FrameStepper`] (see `window::frame`). Both are
//! hosts, so a synctest or a replay seek works the same way in a window as headless: step a frame,
//! take a snapshot, restore one in place. A host's frame step is the engine's alone: in a window,
//! bevy's own schedules (`Update`, the renderer) run once per window frame however many frames
//! the tool steps inside it, which is what a rollback session does too.
//!
//! This module must never read a clock.

use std::time::Duration;

use bevy::prelude::World;

use super::app::App;
use super::frame_step::{FrameReport, FrameStepper};
use crate::runtime::{FrameTime, RuntimeInput, TickAccumulator};
use crate::state::{SnapshotError, UndeclaredState, WorldSnapshot};

/// A running simulation that can step frames, take snapshots and restore them in place.
pub trait SimulationHost {
    /// The simulation's world.
    fn world(&self) -> &World;

    /// The simulation's world, mutably.
    fn world_mut(&mut self) -> &mut World;

    /// Runs the engine's step of one frame that took `real_delta` of real time (its fixed ticks
    /// and what follows each).
    fn step_frame(&mut self, real_delta: Duration) -> FrameReport;

    /// Copies the simulation state (see [`WorldSnapshot`]).
    fn take_snapshot(&mut self) -> Result<WorldSnapshot, SnapshotError>;

    /// Puts `snapshot` back in place and rewinds a running recording to its tick.
    fn restore_snapshot(&mut self, snapshot: &WorldSnapshot) -> Result<(), SnapshotError>;

    /// The first state a tick changed that nobody declared, if the check found any.
    fn first_undeclared(&self) -> Option<&UndeclaredState>;

    /// The first change of the floating-point environment the checks found, if any.
    fn first_float_change(&self) -> Option<&crate::runtime::FloatEnvChanged>;

    /// Sets the input for the frames that follow.
    fn set_frame_input(&mut self, input: RuntimeInput) {
        *self.world_mut().resource_mut::<RuntimeInput>() = input;
    }

    /// The real duration of one fixed tick at time scale 1.
    fn tick_length(&self) -> Duration {
        self.world().resource::<TickAccumulator>().step()
    }

    /// The fixed ticks completed so far.
    fn ticks_done(&self) -> u64 {
        self.world().resource::<FrameTime>().fixed_tick
    }
}

impl SimulationHost for App {
    fn world(&self) -> &World {
        App::world(self)
    }

    fn world_mut(&mut self) -> &mut World {
        App::world_mut(self)
    }

    /// [`App::update`]: the engine's frame step, then bevy's `Main` schedule.
    fn step_frame(&mut self, real_delta: Duration) -> FrameReport {
        self.update(real_delta)
    }

    fn take_snapshot(&mut self) -> Result<WorldSnapshot, SnapshotError> {
        self.snapshot()
    }

    fn restore_snapshot(&mut self, snapshot: &WorldSnapshot) -> Result<(), SnapshotError> {
        self.restore(snapshot)
    }

    fn first_undeclared(&self) -> Option<&UndeclaredState> {
        self.undeclared_state()
    }

    fn first_float_change(&self) -> Option<&crate::runtime::FloatEnvChanged> {
        self.float_env_change()
    }
}

/// A world and the frame stepper that runs its ticks, borrowed together: the host inside a frame
/// that bevy's window loop drives. The world must be set up (the engine `App`'s setup ran before
/// it handed its parts over).
pub struct SteppedWorld<'a> {
    /// The simulation's world.
    pub world: &'a mut World,
    /// The stepper the engine `App` handed over with it.
    pub stepper: &'a mut FrameStepper,
}

impl SimulationHost for SteppedWorld<'_> {
    fn world(&self) -> &World {
        self.world
    }

    fn world_mut(&mut self) -> &mut World {
        self.world
    }

    /// The engine's frame step only: bevy's schedules run once for the window's frame.
    fn step_frame(&mut self, real_delta: Duration) -> FrameReport {
        self.stepper.run_frame(self.world, real_delta)
    }

    fn take_snapshot(&mut self) -> Result<WorldSnapshot, SnapshotError> {
        let tick = self.world.resource::<FrameTime>().fixed_tick;
        WorldSnapshot::capture(self.world, tick)
    }

    fn restore_snapshot(&mut self, snapshot: &WorldSnapshot) -> Result<(), SnapshotError> {
        snapshot.restore(self.world)?;
        self.stepper.rewind_recording(snapshot.tick());
        Ok(())
    }

    fn first_undeclared(&self) -> Option<&UndeclaredState> {
        self.stepper.undeclared_state()
    }

    fn first_float_change(&self) -> Option<&crate::runtime::FloatEnvChanged> {
        self.stepper.float_env_change()
    }
}
