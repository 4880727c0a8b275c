//! [`FrameStepper`]: what one frame does before bevy's `Main` schedule: tell the frame to its
//! recorder, latch its input for the next tick, turn its real delta into fixed ticks and run each
//! of them (after letting in the outside results that waited for it, and with the floating-point
//! environment checked before and after it) with the world-state hash, the recorder and the
//! [`TickHook`]s after it.
//!
//! The engine [`App`](crate::engine::App) holds one and calls it from `App::update` (headless runs,
//! tests); a windowed game moves it into the world, where a system runs it inside each frame
//! bevy's window loop drives. So both step frames with the same code. The stepper is not
//! simulation state: it is never hashed, snapshotted or restored.
//!
//! The stepper knows a recorder only as a [`FrameRecorder`]: the replay recorder lives with the
//! replay formats above the engine (`record`), which put it here; the engine never names it.
//!
//! This module must never read the wall clock or let the frame delta reach a fixed system.

use std::any::Any;
use std::time::Duration;

use bevy::app::FixedMain;
use bevy::prelude::World;

use crate::jobs::OutsideEntry;
use crate::runtime::{
    DeterminismMode, FloatEnvChanged, FloatEnvPolicy, FloatGuard, FrameTime, RuntimeInput,
    TickAccumulator, TickStampedInput, TimeControl,
};
use crate::state::undeclared::{UndeclaredCheck, UndeclaredState, find_undeclared};

/// Work that runs after every fixed tick, with the world as the tick left it.
///
/// They run after the world-state hash is recorded and the recorder is told of it, in the order
/// they were added. `tick` is the number of ticks completed, counting the one that just ran.
pub trait TickHook: Send + 'static {
    /// Called once after each fixed tick.
    fn after_tick(&mut self, world: &mut World, tick: u64);
}

impl<F: FnMut(&mut World, u64) + Send + 'static> TickHook for F {
    fn after_tick(&mut self, world: &mut World, tick: u64) {
        self(world, tick)
    }
}

/// What one frame did (what [`App::update`](super::App::update) returns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameReport {
    /// The fixed tick the frame started on (ticks completed before it).
    pub first_tick: u64,
    /// How many fixed ticks the frame ran.
    pub ticks: u32,
}

/// What records the frames a [`FrameStepper`] runs (the replay recorder, `record::Recorder`):
/// told of each frame before it runs, of each tick's hash, and of each frame's end; rewound when
/// the app is rolled back. It must never change simulation state (it may read the world, which
/// capturing a state detail needs mutably).
pub trait FrameRecorder: Send + 'static {
    /// A frame that took `real_delta` is about to run, from `first_tick` ticks completed, with
    /// `input` as the frame's input.
    fn on_frame(&mut self, real_delta: Duration, first_tick: u64, input: &RuntimeInput);
    /// Outside results entered tick `tick` (ticks completed, counting it) before it ran, in
    /// arrival order (only called for a tick that some entered).
    fn on_outside(&mut self, tick: u64, entries: &[OutsideEntry]);
    /// Tick `tick` ran and the world hashed to `hash` (before the tick hooks run).
    fn on_tick(&mut self, tick: u64, hash: u64);
    /// The frame's `ticks` ticks ran, leaving `tick` ticks completed and `world` as they left it.
    fn on_frame_end(&mut self, world: &mut World, tick: u64, ticks: u32);
    /// The app was rolled back to a snapshot of `tick`: what it runs next replaces what followed.
    fn on_rewind(&mut self, tick: u64);
    /// The recorder, to be downcast to its own type.
    fn as_any(&self) -> &dyn Any;
    /// The recorder, owned, to be downcast to its own type.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// Runs frames' fixed ticks and what follows each tick (see the module docs).
pub struct FrameStepper {
    /// Work after every tick, in the order it was added.
    pub(crate) hooks: Vec<Box<dyn TickHook>>,
    /// What records the frames, if anything does.
    recorder: Option<Box<dyn FrameRecorder>>,
    /// Whether ticks are checked for state nobody declared.
    pub(crate) undeclared: UndeclaredCheck,
    /// The first undeclared state found.
    pub(crate) first_undeclared: Option<UndeclaredState>,
    /// The floating-point environment's check.
    pub(crate) float: FloatGuard,
    /// Input stamped by tick, fed to each tick right before it runs instead of latching each
    /// frame's input (a script run in other frames, see `runtime::stamped_input`).
    pub(crate) stamped: Option<TickStampedInput>,
}

impl Default for FrameStepper {
    fn default() -> Self {
        FrameStepper::new()
    }
}

impl FrameStepper {
    /// A stepper with no hooks and no recording; the undeclared-state check and the
    /// floating-point environment's policy as the environment sets them.
    pub fn new() -> Self {
        FrameStepper {
            hooks: Vec::new(),
            recorder: None,
            undeclared: UndeclaredCheck::from_environment(),
            first_undeclared: None,
            float: FloatGuard::new(FloatEnvPolicy::from_environment()),
            stamped: None,
        }
    }

    /// Runs the part of a frame that took `real_delta` of real time before bevy's `Main`: the
    /// recorder's frame, the input latch, the frame's fixed ticks.
    pub fn run_frame(&mut self, world: &mut World, real_delta: Duration) -> FrameReport {
        let control = world.resource::<TimeControl>().clone();
        let first_tick = world.resource::<FrameTime>().fixed_tick;
        if let Some(recorder) = &mut self.recorder {
            recorder.on_frame(real_delta, first_tick, world.resource::<RuntimeInput>());
        }
        // The frame's input, latched for the next tick whether this frame runs one or not
        // (unless input is stamped by tick: each tick is then fed its own).
        if self.stamped.is_none() {
            let frame_input = world.resource::<RuntimeInput>().clone();
            if let Some(mut tick_input) = world.get_resource_mut::<crate::runtime::TickInput>() {
                tick_input.latch(&frame_input);
            }
        }
        let ticks = world
            .resource_mut::<TickAccumulator>()
            .advance(&control, real_delta);
        {
            let mut time = world.resource_mut::<FrameTime>();
            let scaled = control.scaled(real_delta);
            time.real_delta = real_delta.as_secs_f32();
            time.delta = scaled.as_secs_f32();
            time.elapsed += scaled.as_secs_f64();
        }
        for _ in 0..ticks {
            self.run_tick(world);
        }
        if let Some(recorder) = &mut self.recorder {
            let tick = world.resource::<FrameTime>().fixed_tick;
            recorder.on_frame_end(world, tick, ticks);
        }
        FrameReport { first_tick, ticks }
    }

    /// Runs one fixed tick and the hooks after it.
    fn run_tick(&mut self, world: &mut World) {
        // Before the tick's change ticks start: presentation state, not the tick's own changes.
        let running = world.resource::<FrameTime>().fixed_tick + 1;
        if let Some(mut resimulation) = world.get_resource_mut::<crate::runtime::Resimulation>() {
            let again = running <= resimulation.newest_tick;
            resimulation.active = again;
            resimulation.newest_tick = resimulation.newest_tick.max(running);
            super::logging::LOG_RESIMULATING.store(again, std::sync::atomic::Ordering::Relaxed);
        }
        super::logging::LOG_TICK.store(running, std::sync::atomic::Ordering::Relaxed);
        if let Some(stamped) = &self.stamped {
            // As the frames before this tick in a steady run would: set the frame input when it
            // changes, and latch every one of them.
            for input in stamped.for_tick(running) {
                let mut frame = world.resource_mut::<RuntimeInput>();
                if *frame != *input {
                    *frame = input.clone();
                }
                if let Some(mut tick_input) = world.get_resource_mut::<crate::runtime::TickInput>()
                {
                    tick_input.latch(input);
                }
            }
        }
        let start = world.change_tick();
        world.increment_change_tick();
        let outside = crate::jobs::enter_tick(world, running);
        if !outside.is_empty()
            && let Some(recorder) = &mut self.recorder
        {
            recorder.on_outside(running, &outside);
        }
        self.float.before_tick(running);
        world.run_schedule(FixedMain);
        self.float.after_tick(running);
        let end = world.change_tick();
        let tick = {
            let mut time = world.resource_mut::<FrameTime>();
            time.fixed_tick += 1;
            time.fixed_tick
        };
        if self.undeclared.enabled
            && self.first_undeclared.is_none()
            && let Some(found) = find_undeclared(world, start, end, tick)
        {
            bevy::log::error!("{found}");
            self.first_undeclared = Some(found);
        }
        let check_non_finite = world
            .get_resource::<DeterminismMode>()
            .is_some_and(|mode| *mode != DeterminismMode::Off);
        let hash = crate::state::hash::record_state_hash(world, tick, check_non_finite);
        crate::gameplay::queue_sound_cues(world, tick);
        if let Some(recorder) = &mut self.recorder {
            recorder.on_tick(tick, hash);
        }
        for hook in &mut self.hooks {
            hook.after_tick(world, tick);
        }
    }

    /// The first state a tick changed that nobody declared, if the check found any.
    pub fn undeclared_state(&self) -> Option<&UndeclaredState> {
        self.first_undeclared.as_ref()
    }

    /// The first change of the floating-point environment the checks found, if any.
    pub fn float_env_change(&self) -> Option<&FloatEnvChanged> {
        self.float.first_change()
    }

    /// The first change of the floating-point environment, when the policy makes it fail the run
    /// ([`FloatEnvPolicy::Error`]).
    pub fn float_env_failure(&self) -> Option<&FloatEnvChanged> {
        self.float
            .first_change()
            .filter(|_| self.float.policy == FloatEnvPolicy::Error)
    }

    /// Rewinds a running recording to `tick` (after a snapshot of that tick is restored).
    pub fn rewind_recording(&mut self, tick: u64) {
        if let Some(recorder) = &mut self.recorder {
            recorder.on_rewind(tick);
        }
    }

    /// Records the following frames with `recorder`, replacing any recorder it had.
    pub fn set_recorder(&mut self, recorder: Box<dyn FrameRecorder>) {
        self.recorder = Some(recorder);
    }

    /// The recorder, if one of type `T` records the frames.
    pub fn recorder<T: FrameRecorder>(&self) -> Option<&T> {
        self.recorder.as_deref()?.as_any().downcast_ref::<T>()
    }

    /// Stops a recorder of type `T` and hands it back; a recorder of another type keeps
    /// recording.
    pub fn take_recorder<T: FrameRecorder>(&mut self) -> Option<T> {
        self.recorder::<T>()?;
        let recorder = self.recorder.take()?.into_any().downcast::<T>().ok()?;
        Some(*recorder)
    }
}
