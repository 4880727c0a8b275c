//! [`FrameStepper`]: what one frame does before bevy's `Main` schedule: record the frame, latch
//! its input for the next tick, turn its real delta into fixed ticks and run each of them with
//! the world-state hash, the recorder and the [`TickHook`]s after it.
//!
//! The engine [`App`](crate::App) holds one and calls it from `App::update` (headless runs,
//! tests); a windowed game moves it into the world, where a system runs it inside each frame
//! bevy's window loop drives. So both step frames with the same code. The stepper is not
//! simulation state: it is never hashed, snapshotted or restored.
//!
//! This module must never read the wall clock or let the frame delta reach a fixed system.

use std::time::Duration;

use bevy::app::FixedMain;
use bevy::prelude::World;

use crate::app::{FrameReport, TickHook};
use crate::determinism::replay::Recorder;
use crate::determinism::undeclared::{UndeclaredCheck, UndeclaredState, find_undeclared};
use crate::runtime::{FrameTime, RuntimeInput, TickAccumulator, TimeControl};

/// Runs frames' fixed ticks and what follows each tick (see the module docs).
pub struct FrameStepper {
    /// Work after every tick, in the order it was added.
    pub(crate) hooks: Vec<Box<dyn TickHook>>,
    /// The replay being recorded, if any.
    pub(crate) recorder: Option<Recorder>,
    /// Whether ticks are checked for state nobody declared.
    pub(crate) undeclared: UndeclaredCheck,
    /// The first undeclared state found.
    pub(crate) first_undeclared: Option<UndeclaredState>,
}

impl Default for FrameStepper {
    fn default() -> Self {
        FrameStepper::new()
    }
}

impl FrameStepper {
    /// A stepper with no hooks and no recording; the undeclared-state check as the environment
    /// sets it.
    pub fn new() -> Self {
        FrameStepper {
            hooks: Vec::new(),
            recorder: None,
            undeclared: UndeclaredCheck::from_environment(),
            first_undeclared: None,
        }
    }

    /// Runs the part of a frame that took `real_delta` of real time before bevy's `Main`: the
    /// recorder's frame, the input latch, the frame's fixed ticks.
    pub fn run_frame(&mut self, world: &mut World, real_delta: Duration) -> FrameReport {
        let control = world.resource::<TimeControl>().clone();
        let first_tick = world.resource::<FrameTime>().fixed_tick;
        if let Some(recorder) = &mut self.recorder {
            recorder.frame(real_delta, first_tick, world.resource::<RuntimeInput>());
        }
        // The frame's input, latched for the next tick whether this frame runs one or not.
        let frame_input = world.resource::<RuntimeInput>().clone();
        if let Some(mut tick_input) = world.get_resource_mut::<crate::runtime::TickInput>() {
            tick_input.latch(&frame_input);
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
            if ticks > 0 && recorder.detail_due(tick) {
                recorder.detail(crate::determinism::StateDetail::capture(world, tick));
            }
            recorder.end_frame();
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
            crate::logging::LOG_RESIMULATING.store(again, std::sync::atomic::Ordering::Relaxed);
        }
        crate::logging::LOG_TICK.store(running, std::sync::atomic::Ordering::Relaxed);
        let start = world.change_tick();
        world.increment_change_tick();
        world.run_schedule(FixedMain);
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
        let hash = crate::determinism::hash::record_state_hash(world, tick);
        crate::gameplay::queue_sound_cues(world, tick);
        if let Some(recorder) = &mut self.recorder {
            recorder.tick(tick, hash);
        }
        for hook in &mut self.hooks {
            hook.after_tick(world, tick);
        }
    }

    /// The first state a tick changed that nobody declared, if the check found any.
    pub fn undeclared_state(&self) -> Option<&UndeclaredState> {
        self.first_undeclared.as_ref()
    }

    /// Rewinds a running recording to `tick` (after a snapshot of that tick is restored).
    pub fn rewind_recording(&mut self, tick: u64) {
        if let Some(recorder) = &mut self.recorder {
            recorder.rewind(tick);
        }
    }
}
