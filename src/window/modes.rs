//! What a windowed run's frames do besides plain play: a synctest, and the replay viewer.
//!
//! Both roll the simulation back in place inside the window's frames, through the world and the
//! frame stepper ([`SteppedWorld`]): a restore puts the simulation entities back and leaves the
//! window, camera, lights and HUD alone, and the visuals follow the `SimId`s they find. A
//! windowed synctest runs every tick as a frame of its own and re-simulates the last `distance`
//! ticks after it, as `rusting run --synctest` does headless; the viewer plays a replay's recorded
//! frames at their recorded pace, with no live input, and seeks through [`SeekState`] (restoring
//! the nearest snapshot and re-simulating, every tick checked against its recorded hash).
//!
//! Their pause and speed keys pace the window's frames ([`PaceControl`]); this module must never
//! let a key write the world's `TimeControl`, which snapshots copy and which decides how many
//! ticks a stepped frame runs.

use std::time::Duration;

use bevy::ecs::message::MessageReader;
use bevy::input::ButtonState;
use bevy::input::keyboard::{KeyCode, KeyboardInput};
use bevy::prelude::{ResMut, Resource, World};

use crate::determinism::{SeekState, SyncTestError, SyncTestRun};
use crate::engine::frame_step::FrameStepper;
use crate::engine::{SimulationHost, SteppedWorld};
use crate::record::ReplayError;
use crate::runtime::{FrameTime, RuntimeInput, TickAccumulator};

/// What a windowed run's frames do.
pub enum WindowedMode {
    /// Play: each frame runs the ticks its real delta is worth, with the frame's input.
    Play,
    /// A synctest: every tick runs as a frame of its own, then the last `distance` ticks are
    /// rolled back and re-simulated and their hashes compared. Live input paces ticks by the
    /// clock; a script gives one tick a frame, each with the script's next input.
    SyncTest(SyncTestRun),
    /// The replay viewer: the recorded frames at their recorded pace, no live input; the arrow
    /// keys, Home and End seek.
    View(SeekState),
}

/// How a windowed run's mode ended, for the run's summary.
#[derive(Debug)]
pub enum ModeEnd {
    /// Plain play ended.
    Played,
    /// The synctest ran its ticks with every re-simulation matching.
    SyncTested {
        /// How far each rollback went.
        distance: usize,
        /// How many rollbacks ran.
        rollbacks: u64,
    },
    /// A re-simulated tick differed, or a snapshot failed.
    SyncTestFailed(SyncTestError),
    /// The viewer ended (its tick budget reached, or the window closed).
    Viewed {
        /// The tick shown last.
        tick: u64,
        /// The recording's last tick.
        end_tick: u64,
        /// How many seeks the viewer made.
        seeks: u64,
    },
    /// A played or re-simulated tick did not match its recorded hash, or a snapshot failed.
    ViewFailed(ReplayError),
}

/// The pause and speed of a synctest's or viewer's frames (presentation: never snapshotted).
#[derive(Resource, Debug)]
pub(super) struct PaceControl {
    pub(super) paused: bool,
    pub(super) time_scale: f64,
    /// Real time (scaled) owed to the pacing and not yet spent on ticks or recorded frames.
    owed: Duration,
}

impl Default for PaceControl {
    fn default() -> Self {
        PaceControl {
            paused: false,
            time_scale: 1.0,
            owed: Duration::ZERO,
        }
    }
}

/// What the status line says a synctest or the viewer is: its name, and the recording's last tick.
#[derive(Resource, Debug)]
pub(super) struct ModeLabel {
    pub(super) name: String,
    pub(super) end_tick: Option<u64>,
}

impl ModeLabel {
    /// The label of `mode`, none for plain play.
    pub(super) fn of(mode: &WindowedMode) -> Option<ModeLabel> {
        match mode {
            WindowedMode::Play => None,
            WindowedMode::SyncTest(run) => Some(ModeLabel {
                name: format!("synctest ({} back)", run.distance()),
                end_tick: None,
            }),
            WindowedMode::View(state) => Some(ModeLabel {
                name: "replay".to_owned(),
                end_tick: Some(state.replay().end_tick()),
            }),
        }
    }
}

/// The most ticks (synctest) or recorded frames (viewer) one window frame runs; time owed past it
/// is dropped, so a slow window shows the run in slow motion instead of falling behind for good.
const MAX_STEPS_PER_FRAME: u32 = 8;

impl PaceControl {
    /// Adds a window frame's `delta` and returns the time owed, unless paused.
    fn add(&mut self, delta: Duration) -> Option<Duration> {
        if self.paused || !(self.time_scale.is_finite() && self.time_scale > 0.0) {
            return None;
        }
        let scaled = Duration::try_from_secs_f64(delta.as_secs_f64() * self.time_scale)
            .unwrap_or(Duration::MAX);
        self.owed = self.owed.saturating_add(scaled);
        Some(self.owed)
    }
}

/// The seeks the viewer's keys asked for, in order, done at the start of the next frame.
#[derive(Resource, Default, Debug)]
pub(super) struct SeekRequest(Vec<SeekTo>);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SeekTo {
    Back,
    Forward,
    Start,
    End,
}

/// Back one second.
pub const SEEK_BACK_KEY: KeyCode = KeyCode::ArrowLeft;
/// Forward one second.
pub const SEEK_FORWARD_KEY: KeyCode = KeyCode::ArrowRight;
/// To the recording's start.
pub const SEEK_START_KEY: KeyCode = KeyCode::Home;
/// To the recording's end.
pub const SEEK_END_KEY: KeyCode = KeyCode::End;

/// What the viewer says once its first frame is on screen.
pub(super) const VIEWER_KEYS_HINT: &str = "replay viewer: F1 pauses, F2 steps one recorded frame while paused, F3/F4 halve/double the speed, F5 puts it back to 1, Left/Right seek one second, Home/End go to the start/end";

/// The viewer's seek keys (runs in `Update`; the seeks happen next frame). Every press counts, in
/// order, even several in one slow frame.
pub(super) fn viewer_keys(
    mut presses: MessageReader<KeyboardInput>,
    mut request: ResMut<SeekRequest>,
) {
    for press in presses.read() {
        if press.state != ButtonState::Pressed || press.repeat {
            continue;
        }
        let to = match press.key_code {
            SEEK_BACK_KEY => SeekTo::Back,
            SEEK_FORWARD_KEY => SeekTo::Forward,
            SEEK_START_KEY => SeekTo::Start,
            SEEK_END_KEY => SeekTo::End,
            _ => continue,
        };
        request.0.push(to);
    }
}

/// The viewer's count of seeks and whether it has said the recording ended.
#[derive(Default, Debug)]
pub(super) struct ViewProgress {
    pub(super) seeks: u64,
    said_end: bool,
}

/// One window frame of a synctest: the ticks the frame is due (one with a script, by the clock
/// with live input, one more if F2 asked while paused), each with `input`, rolled back and
/// re-simulated. Stops at `limit` ticks.
pub(super) fn synctest_frame(
    world: &mut World,
    stepper: &mut FrameStepper,
    run: &mut SyncTestRun,
    input: RuntimeInput,
    paced: Option<Duration>,
    single_step: bool,
    limit: Option<u64>,
) -> Result<(), SyncTestError> {
    let step = world.resource::<TickAccumulator>().step();
    let due = match paced {
        None => 1,
        Some(delta) => {
            let mut pace = world.resource_mut::<PaceControl>();
            match pace.add(delta) {
                Some(owed) if !step.is_zero() => {
                    let due =
                        (owed.as_nanos() / step.as_nanos()).min(MAX_STEPS_PER_FRAME.into()) as u32;
                    pace.owed = owed.saturating_sub(step * due).min(step);
                    due
                }
                _ => u32::from(single_step),
            }
        }
    };
    let mut host = SteppedWorld { world, stepper };
    for _ in 0..due {
        if limit.is_some_and(|limit| host.ticks_done() >= limit) {
            break;
        }
        run.advance(&mut host, input.clone())?;
    }
    Ok(())
}

/// One window frame of the viewer: a seek if one was asked, then the recorded frames the frame's
/// `delta` is due at the viewer's pace (one if F2 asked while paused). Stops at `limit` ticks.
pub(super) fn view_frame(
    world: &mut World,
    stepper: &mut FrameStepper,
    state: &mut SeekState,
    progress: &mut ViewProgress,
    delta: Duration,
    single_step: bool,
    limit: Option<u64>,
) -> Result<(), ReplayError> {
    let requests = std::mem::take(&mut world.resource_mut::<SeekRequest>().0);
    let owed = world.resource_mut::<PaceControl>().add(delta);
    let second = {
        let step = world.resource::<TickAccumulator>().step();
        if step.is_zero() {
            60
        } else {
            (Duration::from_secs(1).as_nanos() / step.as_nanos()).max(1) as u64
        }
    };
    let mut host = SteppedWorld { world, stepper };
    for to in requests {
        let here = host.ticks_done();
        let target = match to {
            SeekTo::Back => here.saturating_sub(second),
            SeekTo::Forward => here.saturating_add(second),
            SeekTo::Start => state.replay().start_tick,
            SeekTo::End => state.replay().end_tick(),
        };
        let reached = state.seek(&mut host, target)?;
        progress.seeks += 1;
        progress.said_end = false;
        host.world.resource_mut::<PaceControl>().owed = Duration::ZERO;
        bevy::log::info!("replay: at tick {reached}");
    }
    let mut played = 0;
    let mut budget = owed.unwrap_or_default();
    while played < MAX_STEPS_PER_FRAME && !state.at_end() {
        if limit.is_some_and(|limit| host.ticks_done() >= limit) {
            break;
        }
        let frame_delta = state.next_frame_delta().unwrap_or_default();
        let stepped = single_step && played == 0;
        if !stepped && (owed.is_none() || budget < frame_delta) {
            break;
        }
        budget = budget.saturating_sub(frame_delta);
        state.play_next_frame(&mut host)?;
        played += 1;
    }
    if owed.is_some() {
        // What the played frames did not spend waits for the next window frame, at most one
        // recorded frame's worth when the cap stopped playback.
        let cap = state.next_frame_delta().unwrap_or_default();
        host.world.resource_mut::<PaceControl>().owed = if played == MAX_STEPS_PER_FRAME {
            budget.min(cap)
        } else {
            budget
        };
    }
    if state.at_end() && !progress.said_end {
        progress.said_end = true;
        bevy::log::info!(
            "replay: the recording ends at tick {} (Home plays it again)",
            host.world.resource::<FrameTime>().fixed_tick
        );
    }
    Ok(())
}
