//! A game's windowed run: what `run_game` does in a build with the `window` feature when no
//! headless run, replay playback or synctest is asked for.
//!
//! The run is the headless run's in a window: the same app, hooks, state-hash report and
//! recording, with frames from the real clock and the devices (or from `RUSTING_INPUT_SCRIPT`),
//! until the window closes or `RUSTING_WINDOW_TICKS` ticks have run. This module must never
//! change what the simulation computes: it only chooses where frames come from.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::error::GameError;
use super::finish::{RunRecord, SharedDetails, SharedHashes};
use super::project::Project;
use super::result::ResultChannel;
use crate::determinism::{SeekState, SyncTestRun};
use crate::engine::App;
use crate::record::{RecordingAppExt, Replay};
use crate::runtime::InputScript;
use crate::window::{FrameFeed, ModeEnd, WindowSettings, WindowedEnd, WindowedMode, WindowedRun};

/// The environment variable that ends a windowed run after this many ticks.
pub const WINDOW_TICKS_VARIABLE: &str = "RUSTING_WINDOW_TICKS";

/// The environment variable giving the window's size, `<width>x<height>` (default 1280x720).
pub const WINDOW_SIZE_VARIABLE: &str = "RUSTING_WINDOW_SIZE";

/// The snapshot interval of the replay viewer: two seconds at 60 Hz, so a seek re-simulates at
/// most that much.
const VIEWER_SNAPSHOT_INTERVAL: u64 = 120;

/// Which kind of windowed run `run_game` asks for.
pub(crate) enum WindowedModeChoice {
    /// Play the game.
    Play,
    /// A synctest rolling back this many ticks after every tick (`RUSTING_SYNCTEST`).
    SyncTest(usize),
    /// Show this replay in the viewer (`RUSTING_REPLAY_PLAY` with `RUSTING_REPLAY_VIEW`).
    View(PathBuf, Box<Replay>),
}

/// The environment variable naming a PNG file for a screenshot of the window when a windowed run's
/// ticks are done.
pub const SCREENSHOT_VARIABLE: &str = "RUSTING_SCREENSHOT";

/// The environment variable naming the engine's debug views to draw in the window,
/// comma-separated (`velocities`; see `gameplay::DebugView`).
pub const DEBUG_DRAW_VARIABLE: &str = "RUSTING_DEBUG_DRAW";

/// What a windowed run needs from `run_game`.
pub(crate) struct WindowedPlay {
    /// Play, synctest or replay viewer.
    pub mode: WindowedModeChoice,
    /// The project.
    pub project: Project,
    /// The game's app, with its hooks, not yet set up.
    pub app: App,
    /// Scripted frames instead of live input.
    pub script: Option<InputScript>,
    /// Stop after this many ticks.
    pub ticks: Option<u64>,
    /// Record the session here.
    pub replay_out: Option<PathBuf>,
    /// Write the state-hash report here.
    pub report_path: Option<PathBuf>,
    /// Every tick's hash, from the app's hook.
    pub hashes: SharedHashes,
    /// Detailed ticks, from the app's hook.
    pub details: SharedDetails,
    /// Save a screenshot here when the ticks are done.
    pub screenshot: Option<PathBuf>,
}

type Ending = Arc<Mutex<Option<Result<Option<String>, GameError>>>>;

/// Plays the game in a window and sums the run up as a headless run would.
pub(crate) fn play_windowed(
    play: WindowedPlay,
    channel: &ResultChannel,
) -> Result<Option<String>, GameError> {
    if let Some(reason) = crate::window::missing_display() {
        return Err(GameError::NoDisplay(reason));
    }
    let WindowedPlay {
        mode,
        project,
        mut app,
        script,
        ticks,
        replay_out,
        report_path,
        hashes,
        details,
        screenshot,
    } = play;
    let size = match std::env::var(WINDOW_SIZE_VARIABLE) {
        Ok(value) if !value.is_empty() => parse_size(&value).ok_or(GameError::Environment {
            name: WINDOW_SIZE_VARIABLE,
            value,
            reason: "expected `<width>x<height>`, each from 64 to 8192",
        })?,
        _ => (1280, 720),
    };
    let view = match std::env::var(DEBUG_DRAW_VARIABLE) {
        Ok(value) if !value.is_empty() => {
            crate::gameplay::DebugView::parse(&value).ok_or(GameError::Environment {
                name: DEBUG_DRAW_VARIABLE,
                value,
                reason: "expected debug views, comma-separated: `velocities`",
            })?
        }
        _ => crate::gameplay::DebugView::default(),
    };
    crate::window::prepare_window(
        &mut app,
        &WindowSettings {
            title: project.manifest.name.clone(),
            size,
        },
    );
    *app.world_mut().resource_mut::<crate::gameplay::DebugView>() = view;
    app.setup()?;
    let (mode, viewed) = match mode {
        WindowedModeChoice::Play => (WindowedMode::Play, None),
        WindowedModeChoice::SyncTest(distance) => {
            app.check_undeclared_state(true);
            (WindowedMode::SyncTest(SyncTestRun::new(distance)), None)
        }
        WindowedModeChoice::View(file, replay) => {
            let state =
                SeekState::new(*replay, VIEWER_SNAPSHOT_INTERVAL, &mut app).map_err(|error| {
                    GameError::ReplayIn {
                        file: file.clone(),
                        error,
                    }
                })?;
            (WindowedMode::View(state), Some(file))
        }
    };
    if let Some(path) = &replay_out
        && viewed.is_none()
    {
        app.start_recording_to(path)?;
    }
    channel.started();
    let feed = match &script {
        Some(script) => FrameFeed::Script(script.frames().collect()),
        None => FrameFeed::Live,
    };
    let ending: Ending = Arc::new(Mutex::new(None));
    let on_end = {
        let ending = ending.clone();
        let project = project.clone();
        Box::new(
            move |world: &mut bevy::prelude::World,
                  stepper: &mut crate::engine::frame_step::FrameStepper,
                  mode_end: ModeEnd| {
                crate::physics::gpu::finish_gpu_ticks(world);
                let recorded = stepper
                    .take_recorder::<crate::record::Recorder>()
                    .map(|r| r.finish())
                    .transpose();
                let failed = super::finish::failed_check(
                    stepper.undeclared_state(),
                    stepper.float_env_failure(),
                );
                let finished = |world: &mut bevy::prelude::World| match recorded {
                    Err(error) => Err(error.into()),
                    Ok(_) => RunRecord {
                        report_path: report_path.as_deref(),
                        hashes: &hashes,
                        details: &details,
                    }
                    .finish(&project, world, failed, "in a window"),
                };
                let name = &project.manifest.name;
                let result = match mode_end {
                    ModeEnd::Played => finished(world),
                    ModeEnd::SyncTestFailed(error) => Err(error.into()),
                    ModeEnd::ViewFailed(error) => Err(GameError::ReplayIn {
                        file: viewed.clone().unwrap_or_default(),
                        error,
                    }),
                    ModeEnd::SyncTested { distance, .. } => finished(world).map(|_| {
                        let ticks = world.resource::<crate::runtime::FrameTime>().fixed_tick;
                        Some(format!(
                            "{name}: synctest passed in a window: {ticks} ticks, each re-simulated \
                             {distance} ticks back from a snapshot"
                        ))
                    }),
                    ModeEnd::Viewed {
                        tick,
                        end_tick,
                        seeks,
                    } => finished(world).map(|_| {
                        Some(format!(
                            "{name}: viewed the replay to tick {tick} of {end_tick} ({seeks} \
                             seeks); every tick shown matched its recorded hash"
                        ))
                    }),
                };
                if let Ok(mut ending) = ending.lock() {
                    *ending = Some(result);
                }
            },
        )
    };
    let run = WindowedRun::new(feed, ticks, on_end)
        .with_screenshot(screenshot)
        .with_mode(mode);
    match crate::window::run_in_window(app, run) {
        WindowedEnd::Failed(reason) => Err(GameError::NoDisplay(reason)),
        WindowedEnd::Finished | WindowedEnd::Closed => ending
            .lock()
            .ok()
            .and_then(|mut ending| ending.take())
            .unwrap_or(Ok(None)),
    }
}

/// `<width>x<height>`, each from 64 to 8192.
fn parse_size(text: &str) -> Option<(u32, u32)> {
    let (width, height) = text.split_once('x')?;
    let (width, height): (u32, u32) = (width.trim().parse().ok()?, height.trim().parse().ok()?);
    let fits = |n: u32| (64..=8192).contains(&n);
    (fits(width) && fits(height)).then_some((width, height))
}
