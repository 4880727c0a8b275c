//! Simulation time and frame pacing: [`FrameTime`], [`TimeControl`] and [`TickAccumulator`].
//!
//! A fixed tick simulates `fixed_delta` seconds, whatever the frame rate. The engine `App` turns
//! each frame's real delta into a whole number of ticks with [`TickAccumulator::advance`]; pause and
//! time scale change that number and nothing else. Simulation code reads `fixed_tick` and
//! `fixed_delta` only. The frame fields (`frame`, `real_delta`, `delta`, `elapsed`) are
//! presentation: they differ between a live run, a replay and a test, so a system in `FixedUpdate`
//! that read them would make the simulation depend on frame pacing.
//!
//! This module must never read a clock: real time enters only as the delta the caller passes to
//! `App::update`.

use std::time::Duration;

use bevy::prelude::Resource;

/// The fixed tick rates the engine runs, in ticks per second: from one tick a second to 1,000.
/// Outside it a tick's duration rounds to nothing (the run never ends) or a run barely moves.
/// `rusting validate`, `Project::open` and the app's startup check share it.
pub const TICK_RATE_RANGE: std::ops::RangeInclusive<f32> = 1.0..=1000.0;

/// Checks a fixed tick rate against [`TICK_RATE_RANGE`]; the error says what is wrong.
pub fn check_tick_rate(rate_hz: f32) -> Result<(), String> {
    if rate_hz.is_finite() && TICK_RATE_RANGE.contains(&rate_hz) {
        Ok(())
    } else {
        Err(format!(
            "must be from {} to {} ticks per second, not {rate_hz}",
            TICK_RATE_RANGE.start(),
            TICK_RATE_RANGE.end()
        ))
    }
}

/// The engine's clock, as simulation and presentation see it.
#[derive(Resource, Clone, Debug, PartialEq, rusting_macros::SimState)]
pub struct FrameTime {
    /// Fixed ticks completed before the one now running (simulation state). During the third tick
    /// of a run it is 2, even when one frame runs several ticks.
    pub fixed_tick: u64,
    /// Seconds one fixed tick simulates (simulation state).
    pub fixed_delta: f32,
    /// Frames completed before the one now running (presentation).
    #[sim_state(skip = "frame pacing: a replay in other frames computes the same ticks")]
    pub frame: u64,
    /// Real seconds of the current frame, as passed to `App::update` (presentation).
    #[sim_state(skip = "the real clock never reaches a fixed tick")]
    pub real_delta: f32,
    /// `real_delta` after pause and time scale (presentation).
    #[sim_state(skip = "the real clock never reaches a fixed tick")]
    pub delta: f32,
    /// Sum of `delta` over every frame so far, in seconds (presentation).
    #[sim_state(skip = "the real clock never reaches a fixed tick")]
    pub elapsed: f64,
}

impl FrameTime {
    /// A clock at tick 0 running `rate_hz` fixed ticks per simulated second.
    pub fn new(rate_hz: f32) -> Self {
        FrameTime {
            fixed_tick: 0,
            fixed_delta: 1.0 / rate_hz,
            frame: 0,
            real_delta: 0.0,
            delta: 0.0,
            elapsed: 0.0,
        }
    }

    /// Simulated seconds since tick 0 at the start of the running tick: `fixed_tick * fixed_delta`,
    /// the only time simulation code may use.
    pub fn fixed_elapsed(&self) -> f32 {
        self.fixed_tick as f32 * self.fixed_delta
    }
}

impl Default for FrameTime {
    fn default() -> Self {
        FrameTime::new(60.0)
    }
}

/// Pause, slow motion and the per-frame tick cap: how many ticks a frame runs, never what a tick
/// computes.
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct TimeControl {
    /// While paused, frames run no ticks; time owed from before the pause waits.
    pub paused: bool,
    /// Simulated seconds per real second. Negative, zero, infinite or NaN scales run no ticks.
    pub time_scale: f64,
    /// The most ticks one frame runs. Ticks past it are not dropped: they run in later frames.
    pub max_ticks_per_frame: u32,
}

impl Default for TimeControl {
    fn default() -> Self {
        TimeControl {
            paused: false,
            time_scale: 1.0,
            max_ticks_per_frame: 8,
        }
    }
}

impl TimeControl {
    /// `real_delta` scaled by [`Self::time_scale`], or zero while paused.
    pub fn scaled(&self, real_delta: Duration) -> Duration {
        if self.paused || !(self.time_scale.is_finite() && self.time_scale > 0.0) {
            return Duration::ZERO;
        }
        Duration::try_from_secs_f64(real_delta.as_secs_f64() * self.time_scale)
            .unwrap_or(Duration::MAX)
    }
}

/// Frame pacing: the real length of a tick and the scaled time not yet turned into ticks
/// (presentation state).
///
/// Kept in whole nanoseconds, so the same sequence of deltas always gives the same sequence of tick
/// counts, with no floating-point drift.
#[derive(Resource, Clone, Debug, PartialEq, Eq)]
pub struct TickAccumulator {
    /// The tick rate's bits (kept as bits so the accumulator stays `Eq`).
    rate_bits: u32,
    step: Duration,
    /// Time owed to the simulation, including whole ticks held back by the cap.
    pub pending: Duration,
}

impl TickAccumulator {
    /// An empty accumulator for `rate_hz` ticks per second. The step is `1 / rate_hz` rounded to
    /// the nanosecond (16 666 667 ns at 60 Hz), so frames of `1 / rate_hz` seconds run one tick
    /// each. A rate that is not a positive finite number gives a zero step, which runs no ticks.
    pub fn new(rate_hz: f32) -> Self {
        TickAccumulator {
            rate_bits: rate_hz.to_bits(),
            step: Duration::try_from_secs_f64(1.0 / rate_hz as f64).unwrap_or(Duration::ZERO),
            pending: Duration::ZERO,
        }
    }

    /// The tick rate it was made for, in ticks per second.
    pub fn rate_hz(&self) -> f32 {
        f32::from_bits(self.rate_bits)
    }

    /// The real duration of one tick at time scale 1.
    pub fn step(&self) -> Duration {
        self.step
    }

    /// Adds a frame's real delta and returns how many ticks the frame runs.
    pub fn advance(&mut self, control: &TimeControl, real_delta: Duration) -> u32 {
        self.pending = self.pending.saturating_add(control.scaled(real_delta));
        if control.paused || self.step.is_zero() {
            return 0;
        }
        let due = self.pending.as_nanos() / self.step.as_nanos();
        let run = due.min(control.max_ticks_per_frame as u128) as u32;
        self.pending -= self.step * run;
        run
    }

    /// Whole ticks owed beyond what the last frame ran.
    pub fn backlog(&self) -> u64 {
        if self.step.is_zero() {
            return 0;
        }
        (self.pending.as_nanos() / self.step.as_nanos()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_follow_scaled_time_and_the_cap_defers_without_dropping() {
        let mut acc = TickAccumulator::new(60.0);
        let step = acc.step();
        assert_eq!(step, Duration::from_nanos(16_666_667));
        let mut control = TimeControl::default();
        assert_eq!(acc.advance(&control, step * 3), 3);
        assert_eq!(acc.advance(&control, step / 2), 0);
        assert_eq!(acc.advance(&control, step - step / 2), 1);

        assert_eq!(acc.advance(&control, step * 20), 8);
        assert_eq!(acc.backlog(), 12);
        assert_eq!(acc.advance(&control, Duration::ZERO), 8);
        assert_eq!(acc.advance(&control, Duration::ZERO), 4);
        assert_eq!(acc.advance(&control, Duration::ZERO), 0);

        control.paused = true;
        assert_eq!(acc.advance(&control, step * 5), 0);
        control.paused = false;
        control.time_scale = 2.0;
        assert_eq!(acc.advance(&control, step * 2), 4);
        control.time_scale = f64::NAN;
        assert_eq!(acc.advance(&control, step * 2), 0);
        control.time_scale = -1.0;
        assert_eq!(acc.advance(&control, step * 2), 0);
    }
}
