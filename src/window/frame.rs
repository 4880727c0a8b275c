//! The windowed frame: the engine's frame step inside each frame bevy's window loop drives.
//!
//! [`install_frame_step`] hands the app's [`FrameStepper`] to the world and puts the [`EngineFrame`] schedule
//! after bevy's `PreUpdate` (where the window's key and mouse events have just reached
//! `ButtonInput` and friends). Its one system takes the frame's real delta and input from the
//! run's [`FrameFeed`] (the real clock and the devices, or an input script's frames), runs the
//! frame step (ticks, hashes, hooks, recording), stops the run when its tick budget is spent, and
//! moves bevy's `Time` on for the renderer. The real clock is read here and nowhere else; what it
//! gives reaches the simulation only as the frame's delta, which the recorder records.
//!
//! This module must never let the frame delta reach a fixed system.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bevy::app::{App as BevyApp, AppExit, Last, MainScheduleOrder, PreUpdate};
use bevy::ecs::message::Messages;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::platform::cell::SyncCell;
use bevy::prelude::{Mut, Resource, World};
use bevy::render::view::screenshot::{Screenshot, save_to_disk};
use bevy::time::{Real, Time, Virtual};

use super::live_input::SingleStep;
use super::modes::{ModeEnd, ViewProgress, WindowedMode};
use crate::engine::frame_step::FrameStepper;
use crate::runtime::{FrameTime, RuntimeInput, TickAccumulator, TimeControl};

/// The longest real delta one frame passes on: a frame that took longer (the first one, which
/// waits for the renderer's pipelines, or one after the window was dragged) counts as this long,
/// so the simulation does not try to catch up on seconds it never showed.
pub const MAX_FRAME_DELTA: Duration = Duration::from_millis(250);

/// The schedule that runs the engine's frame step in a windowed game, after `PreUpdate`.
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct EngineFrame;

/// Where a windowed run's frames come from.
#[derive(Clone, Debug)]
pub enum FrameFeed {
    /// The real clock and the player's keyboard and mouse.
    Live,
    /// Scripted frames, `(ticks of real time, input)` each (an input script's
    /// [`frames`](crate::runtime::InputScript::frames)), then one tick a frame with the last
    /// input: the frames a headless run of the same script gets.
    Script(Vec<(f64, RuntimeInput)>),
}

/// Called once when a windowed run ends (its tick budget spent, the window closed, or its mode
/// failed), with the world as the last frame left it, the stepper (to finish a recording, say) and
/// how the run's mode ended.
pub type OnEnd = Box<dyn FnOnce(&mut World, &mut FrameStepper, ModeEnd) + Send>;

/// What a windowed run plays and when it stops.
pub struct WindowedRun {
    /// Where frames come from.
    pub feed: FrameFeed,
    /// Stop after this many ticks (none: when the window closes).
    pub ticks: Option<u64>,
    /// What to do at the end.
    pub on_end: OnEnd,
    /// Save a screenshot of the window here when the ticks are done, then exit.
    pub screenshot: Option<PathBuf>,
    /// Plain play, a synctest or the replay viewer.
    pub mode: WindowedMode,
    ended: Arc<Mutex<Option<WindowedEnd>>>,
}

impl WindowedRun {
    /// A run fed by `feed`, stopping after `ticks` (or when the window closes), calling `on_end`.
    pub fn new(feed: FrameFeed, ticks: Option<u64>, on_end: OnEnd) -> Self {
        WindowedRun {
            feed,
            ticks,
            on_end,
            screenshot: None,
            mode: WindowedMode::Play,
            ended: Arc::new(Mutex::new(None)),
        }
    }

    /// Runs the frames as `mode` says (plain play unless set).
    pub fn with_mode(mut self, mode: WindowedMode) -> Self {
        self.mode = mode;
        self
    }

    /// Saves a screenshot of the window to `path` (PNG) when the ticks are done, before exiting.
    pub fn with_screenshot(mut self, path: Option<PathBuf>) -> Self {
        self.screenshot = path;
        self
    }

    pub(super) fn outcome(&self) -> Outcome {
        Outcome(self.ended.clone())
    }
}

/// How a windowed run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WindowedEnd {
    /// It ran its ticks.
    Finished,
    /// The player closed the window (or the app exited another way) first.
    Closed,
    /// The app could not start.
    Failed(String),
}

/// Where [`run_in_window`](super::run_in_window) finds how the run ended.
pub(super) struct Outcome(Arc<Mutex<Option<WindowedEnd>>>);

impl Outcome {
    pub(super) fn take(&self) -> WindowedEnd {
        self.0
            .lock()
            .ok()
            .and_then(|mut end| end.take())
            .unwrap_or(WindowedEnd::Closed)
    }
}

/// The windowed run's state in the world.
#[derive(Resource)]
struct Windowed {
    stepper: SyncCell<FrameStepper>,
    feed: FrameFeed,
    next_frame: usize,
    last_input: Option<RuntimeInput>,
    ticks: Option<u64>,
    on_end: Option<SyncCell<OnEnd>>,
    screenshot: Option<PathBuf>,
    mode: WindowedMode,
    progress: ViewProgress,
    /// Why the mode stopped the run early.
    failure: Option<ModeEnd>,
    /// Frames waited so far for the screenshot to be saved.
    waited: u32,
    ended: Arc<Mutex<Option<WindowedEnd>>>,
}

/// How many frames to wait for a screenshot to be saved before exiting anyway.
const SCREENSHOT_FRAMES: u32 = 600;

impl Windowed {
    /// Runs `on_end` once and records how the run ended.
    fn end(&mut self, world: &mut World, how: WindowedEnd) {
        let Some(mut on_end) = self.on_end.take() else {
            return;
        };
        let on_end = std::mem::replace(on_end.get(), Box::new(|_, _, _| {}));
        let mode_end = match (self.failure.take(), &self.mode) {
            (Some(failure), _) => failure,
            (None, WindowedMode::Play) => ModeEnd::Played,
            (None, WindowedMode::SyncTest(run)) => ModeEnd::SyncTested {
                distance: run.distance(),
                rollbacks: run.rollbacks(),
            },
            (None, WindowedMode::View(state)) => ModeEnd::Viewed {
                tick: world.resource::<FrameTime>().fixed_tick,
                end_tick: state.replay().end_tick(),
                seeks: self.progress.seeks,
            },
        };
        on_end(world, self.stepper.get(), mode_end);
        if let Ok(mut ended) = self.ended.lock() {
            ended.get_or_insert(how);
        }
    }
}

/// The real clock a windowed game reads once per frame (presentation).
#[derive(Resource, Default)]
struct FrameClock {
    last: Option<Instant>,
}

/// Inserts the frame clock and bevy's `Time` resources, which the renderer reads (the engine
/// leaves bevy's `TimePlugin` out, so nothing else provides them).
pub(super) fn add_frame_clock(app: &mut BevyApp) {
    app.init_resource::<FrameClock>()
        .init_resource::<SingleStep>()
        .init_resource::<Time>()
        .init_resource::<Time<Real>>()
        .init_resource::<Time<Virtual>>();
}

/// Hands `stepper` to the world and schedules the frame step inside bevy's frames.
pub(super) fn install_frame_step(bevy: &mut BevyApp, stepper: FrameStepper, run: WindowedRun) {
    if let Some(label) = super::modes::ModeLabel::of(&run.mode) {
        bevy.insert_resource(label);
    }
    match &run.mode {
        WindowedMode::Play => {}
        WindowedMode::SyncTest(_) => {
            bevy.init_resource::<super::modes::PaceControl>();
        }
        WindowedMode::View(_) => {
            bevy.init_resource::<super::modes::PaceControl>()
                .init_resource::<super::modes::SeekRequest>()
                .add_systems(bevy::app::Update, super::modes::viewer_keys);
        }
    }
    bevy.insert_resource(Windowed {
        stepper: SyncCell::new(stepper),
        feed: run.feed,
        next_frame: 0,
        last_input: None,
        ticks: run.ticks,
        on_end: Some(SyncCell::new(run.on_end)),
        screenshot: run.screenshot,
        mode: run.mode,
        progress: ViewProgress::default(),
        failure: None,
        waited: 0,
        ended: run.ended,
    });
    bevy.init_schedule(EngineFrame);
    bevy.add_systems(EngineFrame, step_frame);
    bevy.world_mut()
        .resource_mut::<MainScheduleOrder>()
        .insert_after(PreUpdate, EngineFrame);
    bevy.add_systems(Last, end_frame);
}

/// The frame's real delta from the clock: the time since the last frame, at most
/// [`MAX_FRAME_DELTA`], zero on the first.
fn clock_delta(world: &mut World) -> Duration {
    let now = Instant::now();
    let mut clock = world.resource_mut::<FrameClock>();
    let delta = clock
        .last
        .map_or(Duration::ZERO, |last| now.saturating_duration_since(last));
    clock.last = Some(now);
    delta.min(MAX_FRAME_DELTA)
}

/// One frame's step (the [`EngineFrame`] schedule's system).
fn step_frame(world: &mut World) {
    world.resource_scope(|world, mut windowed: Mut<Windowed>| {
        let windowed = &mut *windowed;
        if windowed.on_end.is_none() {
            advance_bevy_time(world, Duration::ZERO);
            wait_for_screenshot(world, windowed);
            return;
        }
        let step = world.resource::<TickAccumulator>().step();
        let (mut delta, input) = match &windowed.feed {
            // The viewer plays recorded input only: the devices are not read.
            FrameFeed::Live => (
                clock_delta(world),
                (!matches!(windowed.mode, WindowedMode::View(_)))
                    .then(|| super::live_input::capture_devices(world)),
            ),
            FrameFeed::Script(frames) => match frames.get(windowed.next_frame) {
                Some((ticks, input)) => (step.mul_f64(*ticks), Some(input.clone())),
                None => (step, None),
            },
        };
        // The second frame starts once the first is on screen: the window takes keys from now.
        if windowed.next_frame == 1 && matches!(windowed.feed, FrameFeed::Live) {
            let hint = match windowed.mode {
                WindowedMode::View(_) => super::modes::VIEWER_KEYS_HINT,
                _ => super::live_input::TIME_KEYS_HINT,
            };
            bevy::log::info!("{hint}");
        }
        windowed.next_frame += 1;
        // F2 while paused, as asked in the last frame's `Update`.
        let asked_step = world
            .get_resource::<SingleStep>()
            .is_some_and(|asked| asked.0);
        let single_step = asked_step && world.resource::<TimeControl>().paused;
        let paced_single_step = asked_step
            && world
                .get_resource::<super::modes::PaceControl>()
                .is_some_and(|pace| pace.paused);
        let stepper = windowed.stepper.get();
        let outcome = match &mut windowed.mode {
            WindowedMode::Play => {
                play_frame(
                    world,
                    stepper,
                    input,
                    &mut windowed.last_input,
                    &mut delta,
                    single_step,
                    windowed.ticks,
                );
                Ok(())
            }
            WindowedMode::SyncTest(run) => {
                let input = input
                    .or_else(|| windowed.last_input.clone())
                    .unwrap_or_default();
                windowed.last_input = Some(input.clone());
                let paced = matches!(windowed.feed, FrameFeed::Live).then_some(delta);
                super::modes::synctest_frame(
                    world,
                    stepper,
                    run,
                    input,
                    paced,
                    paced_single_step,
                    windowed.ticks,
                )
                .map_err(ModeEnd::SyncTestFailed)
            }
            WindowedMode::View(state) => super::modes::view_frame(
                world,
                stepper,
                state,
                &mut windowed.progress,
                delta,
                paced_single_step,
                windowed.ticks,
            )
            .map_err(ModeEnd::ViewFailed),
        };
        if let Some(mut asked) = world.get_resource_mut::<SingleStep>() {
            asked.0 = false;
        }
        if let Err(failure) = outcome {
            windowed.failure = Some(failure);
            windowed.end(world, WindowedEnd::Finished);
            world.write_message(AppExit::Success);
            return;
        }
        advance_bevy_time(world, delta);
        let reached = windowed
            .ticks
            .is_some_and(|limit| world.resource::<FrameTime>().fixed_tick >= limit);
        // The viewer with a tick budget also ends where the recording does.
        let viewed_all = windowed.ticks.is_some()
            && matches!(&windowed.mode, WindowedMode::View(state) if state.at_end());
        if reached || viewed_all {
            windowed.end(world, WindowedEnd::Finished);
            match windowed.screenshot.clone() {
                Some(path) => {
                    world
                        .spawn(Screenshot::primary_window())
                        .observe(save_to_disk(path));
                }
                None => {
                    world.write_message(AppExit::Success);
                }
            }
        }
    });
}

/// One frame of plain play: the frame's input (when it changed), then the engine's frame step with
/// the ticks `delta` is worth (exactly one for F2 while paused, none past `limit`).
fn play_frame(
    world: &mut World,
    stepper: &mut FrameStepper,
    input: Option<RuntimeInput>,
    last_input: &mut Option<RuntimeInput>,
    delta: &mut Duration,
    single_step: bool,
    limit: Option<u64>,
) {
    if let Some(input) = input
        && last_input.as_ref() != Some(&input)
    {
        *world.resource_mut::<RuntimeInput>() = input.clone();
        *last_input = Some(input);
    }
    let cap = world.resource::<TimeControl>().max_ticks_per_frame;
    // F2 while paused: this frame runs exactly one tick, then the pause goes on.
    if single_step {
        *delta = world.resource::<TickAccumulator>().step();
        let mut control = world.resource_mut::<TimeControl>();
        control.paused = false;
        control.max_ticks_per_frame = 1;
    }
    if let Some(limit) = limit {
        let left = limit.saturating_sub(world.resource::<FrameTime>().fixed_tick);
        let mut control = world.resource_mut::<TimeControl>();
        control.max_ticks_per_frame = control
            .max_ticks_per_frame
            .min(left.min(u64::from(u32::MAX)) as u32);
    }
    stepper.run_frame(world, *delta);
    let mut control = world.resource_mut::<TimeControl>();
    control.max_ticks_per_frame = cap;
    control.paused |= single_step;
}

/// After the ticks are done: exits once the screenshot is on disk (or after
/// [`SCREENSHOT_FRAMES`] frames without it).
fn wait_for_screenshot(world: &mut World, windowed: &mut Windowed) {
    let Some(path) = &windowed.screenshot else {
        return;
    };
    windowed.waited += 1;
    if path.exists() || windowed.waited >= SCREENSHOT_FRAMES {
        if !path.exists() {
            bevy::log::warn!(
                "no screenshot after {SCREENSHOT_FRAMES} frames: {}",
                path.display()
            );
        }
        windowed.screenshot = None;
        world.write_message(AppExit::Success);
    }
}

/// Moves bevy's clocks on by the frame's delta (presentation: the renderer's and UI's time), and
/// empties the channel on which the render world sends the time it rendered (bevy's `TimePlugin`
/// would read it; the renderer fails when it finds the channel full).
fn advance_bevy_time(world: &mut World, delta: Duration) {
    if let Some(receiver) = world.get_resource::<bevy::time::TimeReceiver>() {
        while receiver.0.try_recv().is_ok() {}
    }
    world.resource_mut::<Time<Real>>().advance_by(delta);
    world.resource_mut::<Time<Virtual>>().advance_by(delta);
    world.resource_mut::<Time>().advance_by(delta);
}

/// The end of every windowed frame: counts it, and ends the run if the app is exiting (the window
/// was closed) before its ticks were done.
fn end_frame(world: &mut World) {
    world.resource_mut::<FrameTime>().frame += 1;
    let exiting = world
        .get_resource::<Messages<AppExit>>()
        .is_some_and(|messages| !messages.is_empty());
    if exiting {
        world.resource_scope(|world, mut windowed: Mut<Windowed>| {
            windowed.end(world, WindowedEnd::Closed);
        });
    }
}
