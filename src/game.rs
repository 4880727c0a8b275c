//! The game entry point: [`rusting_game!`](crate::rusting_game), [`SimpleGamePlugin`] and headless runs.
//!
//! A game made with Rusting is a Cargo binary with a `rusting.json`, its scenes, and a plugin of its
//! own systems. `rusting_game!(MyPlugin)` writes its `main`: open the project, build the engine
//! `App` with the project's seed, tick rate and determinism mode, load the main scene, add the
//! game's plugin, and run. There is no renderer yet, so a game runs headless:
//!
//! - `RUSTING_HEADLESS_TICKS=<n>` runs `n` fixed ticks with no window and prints a summary;
//! - `RUSTING_INPUT_SCRIPT=<file>` feeds a scripted session ([`InputScript`]) to that run;
//! - `RUSTING_HEADLESS_PACING=uneven` runs it in frames of 3, 1/2, 1/2, 0 and 5 ticks instead of
//!   one tick a frame (without a script: the bits must not change);
//! - `RUSTING_STATE_HASH_OUT=<file>` writes that run's `StateHashReport` there (atomically);
//! - `RUSTING_DETAIL_TICKS=<from>-<to>` adds those ticks' state, down to the field, to the report
//!   (at most 600 ticks), so comparing reports from two machines names the field that differs;
//! - `RUSTING_REPLAY_OUT=<file>` records that run and writes its `Replay` there when it ends;
//! - `RUSTING_REPLAY_PLAY=<file>` plays a replay headless instead and fails, naming the tick, when
//!   a hash differs;
//! - `RUSTING_SYNCTEST=<k>` runs the headless ticks one a frame as a synctest instead: after every
//!   tick, a new app restores the snapshot from `k` ticks back and re-simulates, and the run fails
//!   at the first tick whose hash differs (state kept outside the snapshot);
//! - `RUSTING_PROJECT_DIR=<dir>` opens a project elsewhere than the crate that was built;
//! - `RUSTING_LOCKSTEP=1` steps the headless run one tick at a time for `rusting determinism`
//!   (see `determinism::lockstep`);
//! - `RUSTING_CHECK_UNDECLARED=1` (or `0`) turns the check for state nobody declared on (or off);
//! - `RUSTING_THREADS=<n>` runs rayon's and bevy's worker pools with `n` threads (see
//!   [`crate::threads`]; `rusting determinism`'s one-CPU run sets it to 1);
//! - `RUSTING_RESULT_OUT=<file>` writes why the run stopped there as a `RunResult` (see
//!   `game_result`; panics included), for tools to read instead of standard error.
//!
//! Without `RUSTING_HEADLESS_TICKS` the game says so and exits with code 2 instead of pretending to
//! open a window. This module must never read a clock.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bevy::app::{App as BevyApp, Plugin};

use crate::app::{App, AppError};
use crate::game_result::{RESULT_VARIABLE, ResultChannel, RunResult};
use crate::project::{Project, ProjectError};
use crate::runtime::{InputScript, InputScriptError, RuntimeInput, TimeControl};
use crate::scene::{self, SceneError};

/// Why `path` cannot be written as an output: its directory is missing, or it exists and is not
/// a regular file.
fn output_problem(path: &Path) -> Result<(), &'static str> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !directory.is_dir() {
        return Err("the output's directory does not exist");
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_file() => {
            Err("the output exists and is not a regular file; writing would replace it")
        }
        _ => Ok(()),
    }
}

/// A replay error with the replay's file named once: reading errors name it already.
fn replay_in_message(file: &Path, error: &crate::determinism::ReplayError) -> String {
    let text = error.to_string();
    let name = file.display().to_string();
    if text.starts_with(&name) {
        text
    } else {
        format!("{name}: {text}")
    }
}

/// The session replay a game plays headless, without the network (`rusting replay play` sets it
/// for a session replay).
pub const SESSION_REPLAY_VARIABLE: &str = "RUSTING_SESSION_REPLAY_PLAY";

/// Why a game cannot start.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum GameError {
    /// `rusting.json` is missing or wrong.
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// The main scene cannot be cooked.
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// The app does not start (schedule or determinism check).
    #[error(transparent)]
    App(#[from] AppError),
    /// The input script cannot be used.
    #[error(transparent)]
    Script(#[from] InputScriptError),
    /// The state-hash report cannot be written.
    #[error(transparent)]
    Report(#[from] crate::determinism::ReportError),
    /// A replay cannot be written.
    #[error(transparent)]
    Replay(#[from] crate::determinism::ReplayError),
    /// The replay to play (`RUSTING_REPLAY_PLAY`) cannot be read, or playing it diverged.
    #[error("{}", replay_in_message(file, error))]
    ReplayIn {
        /// The replay file.
        file: PathBuf,
        /// What went wrong.
        error: crate::determinism::ReplayError,
    },
    /// A synctest found state outside the snapshot (`RUSTING_SYNCTEST`).
    #[error(transparent)]
    SyncTest(#[from] crate::determinism::SyncTestError),
    /// A tick changed state nobody declared (the check runs in debug builds, and wherever
    /// `RUSTING_CHECK_UNDECLARED=1` asks for it).
    #[error(transparent)]
    Undeclared(#[from] crate::determinism::UndeclaredState),
    /// A windowed run was asked for where no window can open (no display).
    #[error("{0}")]
    NoDisplay(String),
    /// The session replay to play (`RUSTING_SESSION_REPLAY_PLAY`) cannot be read, or playing it
    /// diverged.
    #[error(transparent)]
    SessionReplay(#[from] crate::determinism::session_replay::SessionReplayError),
    /// A multiplayer session failed (`NET_FAILED`: it could not start, no peer answered, the
    /// session broke) or found a desync (`NET_DESYNC`, with the report naming the field).
    #[error("{message}")]
    Net {
        /// `NET_FAILED` or `NET_DESYNC`.
        code: &'static str,
        /// What happened.
        message: String,
    },
    /// `RUSTING_THREADS` is not a thread count, or a worker pool already ran another count
    /// (`ENVIRONMENT_INVALID`).
    #[error(transparent)]
    Threads(#[from] crate::threads::ThreadsError),
    /// An environment variable has a value the game cannot use.
    #[error("{name}={value}: {reason}")]
    Environment {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What is wrong.
        reason: &'static str,
    },
}

/// What every game needs besides the engine's own plugins: the main scene, loaded when the app is
/// built (before any tick, in `SceneId` order).
pub struct SimpleGamePlugin {
    /// The cooked main scene.
    pub scene: scene::CookedScene,
    /// Its name and cooked hash, kept as a resource for replays.
    pub identity: scene::SceneIdentity,
}

impl Plugin for SimpleGamePlugin {
    fn build(&self, app: &mut BevyApp) {
        use crate::determinism::{SimStateAppExt, SnapshotAppExt};
        app.insert_resource(self.identity.clone())
            .copy_in_snapshots::<scene::SceneIdentity>()
            .insert_resource(scene::ScenePresentation {
                camera: self.scene.settings.camera.unwrap_or_default(),
            })
            .register_presentation_component::<scene::Appearance>("Appearance");
        scene::spawn_scene(app.world_mut(), &self.scene);
    }
}

/// Builds the app a project runs: engine plugins with the project's settings, then its main scene.
/// Add the game's own plugin to the result, then call `setup`. The startup determinism check names
/// the main scene's first entity that uses each part below the project's mode.
pub fn build_app(project: &Project) -> Result<App, GameError> {
    let located = scene::LocatedScene::load(&project.root, &project.manifest.main_scene)?;
    let identity = scene::SceneIdentity::of(located.name.clone(), &located.cooked);
    let users = scene::parts::first_users([&located]);
    let mut app = App::new(project.runtime_settings());
    app.set_part_users(users);
    app.world_mut()
        .insert_resource(project.manifest.input.clone());
    app.world_mut().insert_resource(scene::SceneSource {
        file: project.root.join(&project.manifest.main_scene),
        pointers: located
            .cooked
            .entities
            .iter()
            .map(|e| (e.id, located.pointer(e.id).to_owned()))
            .collect(),
    });
    app.add_plugins(SimpleGamePlugin {
        scene: located.cooked,
        identity,
    });
    Ok(app)
}

/// Runs `ticks` fixed ticks without a window, feeding `script`'s frames (then one tick per frame
/// with the script's last input). Stops exactly at `ticks`: a frame that would pass it runs only
/// the ticks left, and the rest of its time waits. GPU ticks still queued at the end are
/// simulated before it returns.
pub fn run_headless(app: &mut App, ticks: u64, script: Option<&InputScript>) {
    run_headless_with(app, ticks, script, |_, _| {});
}

/// [`run_headless`], calling `after_frame(app, frames_run)` after every frame.
pub fn run_headless_with(
    app: &mut App,
    ticks: u64,
    script: Option<&InputScript>,
    mut after_frame: impl FnMut(&mut App, u64),
) {
    let step = app.fixed_step();
    let mut frames_run = 0u64;
    let mut frames = script.into_iter().flat_map(|s| s.frames());
    let mut last_input: Option<RuntimeInput> = None;
    while app.ticks() < ticks {
        let (frame_ticks, input) = match frames.next() {
            Some((frame_ticks, input)) => (frame_ticks, Some(input)),
            None => (1.0, None),
        };
        if let Some(input) = input
            && last_input.as_ref() != Some(&input)
        {
            app.set_input(input.clone());
            last_input = Some(input);
        }
        let left = ticks - app.ticks();
        let world = app.world_mut();
        let mut control = world.resource_mut::<TimeControl>();
        let cap = control.max_ticks_per_frame;
        control.max_ticks_per_frame = cap.min(left.min(u32::MAX as u64) as u32);
        app.update(step.mul_f64(frame_ticks));
        app.world_mut()
            .resource_mut::<TimeControl>()
            .max_ticks_per_frame = cap;
        frames_run += 1;
        after_frame(app, frames_run);
    }
    // GPU ticks the frame budget left queued: simulate them, so the run ends with every tick's
    // GPU hash and the GPU bodies where the last tick left them.
    crate::physics::gpu::finish_gpu_ticks(app.world_mut());
}

/// Frames of 3, 1/2, 1/2, 0 and 5 ticks, repeated to cover `ticks`, with no input: the same
/// simulation must come out as with one tick a frame.
pub fn uneven_frames(ticks: u64) -> InputScript {
    let pattern = [3.0, 0.5, 0.5, 0.0, 5.0];
    let cycles = ticks / 9 + 1;
    InputScript {
        format_version: crate::runtime::input_script::INPUT_SCRIPT_VERSION,
        frames: (0..cycles)
            .flat_map(|_| pattern)
            .map(|ticks| crate::runtime::input_script::ScriptFrames {
                repeat: 1,
                ticks,
                input: None,
                hold: Default::default(),
            })
            .collect(),
    }
}

/// The environment variable asking a run to detail some ticks in its report, `<from>-<to>`.
pub const DETAIL_TICKS_VARIABLE: &str = "RUSTING_DETAIL_TICKS";

/// The most ticks one run details (each detail holds every simulation entity's fields).
pub const MAX_DETAIL_TICKS: u64 = 600;

/// `<from>-<to>` as an inclusive range of ticks, from 1, at most [`MAX_DETAIL_TICKS`] long.
pub fn parse_tick_range(text: &str) -> Option<(u64, u64)> {
    let (from, to) = text.split_once('-')?;
    let (from, to): (u64, u64) = (from.trim().parse().ok()?, to.trim().parse().ok()?);
    (from >= 1 && to >= from && to - from < MAX_DETAIL_TICKS).then_some((from, to))
}

/// The environment variable that shows the replay `RUSTING_REPLAY_PLAY` names in the window's
/// replay viewer instead of playing it back headless (`1`; a build with the `window` feature).
pub const REPLAY_VIEW_VARIABLE: &str = "RUSTING_REPLAY_VIEW";

fn environment(name: &'static str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// What `rusting_game!` calls: opens the project, runs it as the environment asks, and turns the
/// outcome into an exit code and, with `RUSTING_RESULT_OUT`, a [`RunResult`] file (see
/// [`crate::game_result`] for both).
pub fn run_game(crate_dir: &Path, add_game: impl Fn(&mut App)) -> ExitCode {
    crate::logging::init_logging();
    let channel = ResultChannel::new(environment(RESULT_VARIABLE).map(PathBuf::from));
    // With a result file, the caller (the `rusting` command line) reports failures itself, so the
    // game prints them only when run on its own.
    let caller_reports = environment(RESULT_VARIABLE).is_some();
    if caller_reports {
        channel.install_panic_hook();
    }
    let result = match try_run_game(crate_dir, add_game, &channel) {
        Ok(Some(summary)) => {
            println!("{summary}");
            RunResult::new("OK", summary)
        }
        Ok(None) => {
            let message = "this build of the game has no renderer or window yet; run it headless \
                           with RUSTING_HEADLESS_TICKS=<ticks> (and RUSTING_INPUT_SCRIPT=<file> \
                           for scripted input)";
            if !caller_reports {
                eprintln!("{message}");
            }
            RunResult::new("NOTHING_TO_RUN", message)
        }
        Err(error) => {
            if !caller_reports {
                eprintln!("error: {error}");
            }
            let mut result = RunResult::of_error(&error);
            result.tick = result.tick.or(Some(channel.tick()));
            result
        }
    };
    let code = result.exit_code();
    channel.finish(&result);
    ExitCode::from(code)
}

/// Adds the hook that keeps `channel`'s tick up to date.
fn track_ticks(app: &mut App, channel: &ResultChannel) {
    let channel = channel.clone();
    app.add_tick_hook(move |_: &mut bevy::prelude::World, tick| channel.completed(tick));
}

fn try_run_game(
    crate_dir: &Path,
    add_game: impl Fn(&mut App),
    channel: &ResultChannel,
) -> Result<Option<String>, GameError> {
    let root = environment("RUSTING_PROJECT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate_dir.to_owned());
    crate::threads::apply_thread_limit_from_environment()?;
    let project = Project::open(&root)?;
    let ticks = match environment("RUSTING_HEADLESS_TICKS") {
        Some(value) => Some(value.parse::<u64>().map_err(|_| GameError::Environment {
            name: "RUSTING_HEADLESS_TICKS",
            value: value.clone(),
            reason: "expected a whole number of ticks",
        })?),
        None => None,
    };
    let mut script = environment("RUSTING_INPUT_SCRIPT")
        .map(|path| InputScript::load(Path::new(&path)))
        .transpose()?;
    match environment("RUSTING_HEADLESS_PACING").as_deref() {
        None | Some("steady") => {}
        Some("uneven") if script.is_none() => script = Some(uneven_frames(ticks.unwrap_or(0))),
        Some(value) => {
            return Err(GameError::Environment {
                name: "RUSTING_HEADLESS_PACING",
                value: value.to_owned(),
                reason: "expected `steady`, or `uneven` without an input script",
            });
        }
    }
    let report_path = environment("RUSTING_STATE_HASH_OUT").map(PathBuf::from);
    let detail_ticks = environment(DETAIL_TICKS_VARIABLE)
        .map(|value| {
            parse_tick_range(&value).ok_or(GameError::Environment {
                name: DETAIL_TICKS_VARIABLE,
                value,
                reason: "expected ticks `<from>-<to>` (from 1, at most 600 of them)",
            })
        })
        .transpose()?;
    let replay_out = environment("RUSTING_REPLAY_OUT").map(PathBuf::from);
    // Outputs are checked before the run, not found unwritable at its end.
    for (name, path) in [
        ("RUSTING_STATE_HASH_OUT", &report_path),
        ("RUSTING_REPLAY_OUT", &replay_out),
    ] {
        if let Some(path) = path
            && let Err(reason) = output_problem(path)
        {
            return Err(GameError::Environment {
                name,
                value: path.display().to_string(),
                reason,
            });
        }
    }
    if let Some(file) = environment(SESSION_REPLAY_VARIABLE) {
        let file = PathBuf::from(file);
        let replay = crate::determinism::session_replay::SessionReplay::read(&file)?;
        let mut app = build_app(&project)?;
        crate::determinism::session_replay::prepare_players(&mut app, replay.players);
        add_game(&mut app);
        track_ticks(&mut app, channel);
        app.setup()?;
        channel.started();
        let ticks = replay.play(&mut app)?;
        return Ok(Some(format!(
            "{}: the session replay matched all {ticks} confirmed ticks of its {} players",
            project.manifest.name, replay.players
        )));
    }
    #[cfg(feature = "net")]
    if let Some(net) = crate::net::game_run::NetRun::from_environment()? {
        let Some(ticks) = ticks else {
            return Err(GameError::Environment {
                name: crate::net::game_run::PEERS_VARIABLE,
                value: environment(crate::net::game_run::PEERS_VARIABLE).unwrap_or_default(),
                reason: "a networked run is headless for now: set RUSTING_HEADLESS_TICKS",
            });
        };
        let mut app = build_app(&project)?;
        net.prepare(&mut app);
        add_game(&mut app);
        track_ticks(&mut app, channel);
        app.setup()?;
        channel.started();
        return net
            .play(
                &project,
                &mut app,
                ticks,
                script.as_ref(),
                report_path.as_deref(),
            )
            .map(Some);
    }
    #[cfg(not(feature = "net"))]
    if let Some(value) = environment("RUSTING_NET_PEERS") {
        return Err(GameError::Environment {
            name: "RUSTING_NET_PEERS",
            value,
            reason: "this build of the game has no multiplayer: build it with the engine's `net` \
                     feature (`rusting run --net` does)",
        });
    }
    let replay_in = environment("RUSTING_REPLAY_PLAY")
        .map(|path| {
            let file = PathBuf::from(path);
            crate::determinism::Replay::load(&file)
                .map(|replay| (file.clone(), replay))
                .map_err(|error| GameError::ReplayIn { file, error })
        })
        .transpose()?;
    let synctest = environment("RUSTING_SYNCTEST")
        .map(|value| match value.parse::<usize>() {
            Ok(distance) if distance > 0 => Ok(distance),
            _ => Err(GameError::Environment {
                name: "RUSTING_SYNCTEST",
                value,
                reason: "expected how many ticks to roll back, at least 1",
            }),
        })
        .transpose()?;
    if let (Some(distance), Some(ticks)) = (synctest, ticks) {
        let synctest_hashes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let make_app = || {
            let mut app = build_app(&project).expect("the project built once already");
            add_game(&mut app);
            track_ticks(&mut app, channel);
            crate::determinism::headless::collect_hashes_into(&mut app, synctest_hashes.clone());
            app
        };
        // Check the app builds and starts before the synctest builds more of them.
        let mut first = build_app(&project)?;
        add_game(&mut first);
        first.setup()?;
        channel.started();
        let summary = run_synctest(
            &project,
            make_app,
            distance,
            ticks,
            script.as_ref(),
            |app| match report_path.as_deref() {
                Some(path) => {
                    let hashes = synctest_hashes
                        .lock()
                        .map(|h| h.clone())
                        .unwrap_or_default();
                    crate::determinism::StateHashReport::capture(app.world_mut(), &hashes)
                        .write(path)
                }
                None => Ok(()),
            },
        )?;
        return Ok(summary);
    }
    let mut app = build_app(&project)?;
    add_game(&mut app);
    track_ticks(&mut app, channel);
    let hashes = crate::determinism::headless::collect_hashes(&mut app);
    let details = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    if let Some((from, to)) = detail_ticks {
        let details = details.clone();
        app.add_tick_hook(move |world: &mut bevy::prelude::World, tick| {
            if (from..=to).contains(&tick)
                && let Ok(mut details) = details.lock()
            {
                details.push(crate::determinism::StateDetail::capture(world, tick));
            }
        });
    }
    if environment(crate::determinism::lockstep::LOCKSTEP_VARIABLE).as_deref() == Some("1") {
        let mut lockstep = crate::determinism::lockstep::Lockstep::default();
        app.add_tick_hook(move |world: &mut bevy::prelude::World, tick| {
            lockstep.after_tick(world, tick);
        });
    }
    let view = environment(REPLAY_VIEW_VARIABLE).is_some();
    if view && replay_in.is_none() {
        return Err(GameError::Environment {
            name: REPLAY_VIEW_VARIABLE,
            value: "1".to_owned(),
            reason: "the viewer shows the replay RUSTING_REPLAY_PLAY names, and none is set",
        });
    }
    #[cfg(not(feature = "window"))]
    if view || (synctest.is_some() && ticks.is_none()) {
        return Err(GameError::NoDisplay(
            "this build of the game has no window (the engine's `window` feature is off): \
             build it with its `window` feature, or run headless with a tick count"
                .to_owned(),
        ));
    }
    #[cfg(feature = "window")]
    if ticks.is_none() && (replay_in.is_none() || view) {
        let window_ticks = environment(crate::windowed_game::WINDOW_TICKS_VARIABLE)
            .map(|value| {
                value.parse::<u64>().map_err(|_| GameError::Environment {
                    name: crate::windowed_game::WINDOW_TICKS_VARIABLE,
                    value: value.clone(),
                    reason: "expected a whole number of ticks",
                })
            })
            .transpose()?;
        let mode = match (replay_in, synctest) {
            (Some((file, replay)), _) => {
                crate::windowed_game::WindowedModeChoice::View(file, replay)
            }
            (None, Some(distance)) => crate::windowed_game::WindowedModeChoice::SyncTest(distance),
            (None, None) => crate::windowed_game::WindowedModeChoice::Play,
        };
        return crate::windowed_game::play_windowed(
            crate::windowed_game::WindowedPlay {
                mode,
                project,
                app,
                script,
                ticks: window_ticks,
                replay_out,
                report_path,
                hashes,
                details,
                screenshot: environment(crate::windowed_game::SCREENSHOT_VARIABLE)
                    .map(PathBuf::from),
            },
            channel,
        );
    }
    app.setup()?;
    channel.started();
    if let Some((file, replay)) = replay_in {
        crate::determinism::play_replay(&replay, &mut app)
            .map_err(|error| GameError::ReplayIn { file, error })?;
        if let Some(path) = report_path.as_deref() {
            let hashes = hashes.lock().map(|h| h.clone()).unwrap_or_default();
            crate::determinism::StateHashReport::capture(app.world_mut(), &hashes).write(path)?;
        }
        return Ok(Some(format!(
            "{}: replay matched all {} recorded ticks",
            project.manifest.name,
            replay.hashes.len()
        )));
    }
    let Some(ticks) = ticks else {
        return Ok(None);
    };
    let Some(replay_path) = replay_out else {
        run_headless(&mut app, ticks, script.as_ref());
        return finish_run(
            &project,
            &mut app,
            report_path.as_deref(),
            &hashes,
            &details,
        );
    };
    // Recording: every frame and hash is appended to a journal beside the replay as the run goes
    // (see `replay_journal`); at the end, or when the game panics, it becomes the replay.
    app.start_recording_to(&replay_path)?;
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_headless(&mut app, ticks, script.as_ref());
    }));
    app.finish_recording()?;
    if let Err(panic) = run {
        std::panic::resume_unwind(panic);
    }
    finish_run(
        &project,
        &mut app,
        report_path.as_deref(),
        &hashes,
        &details,
    )
}

/// Runs `ticks` ticks one a frame under a [`SyncTest`](crate::determinism::SyncTest) that rolls
/// back `distance` ticks after every frame, feeding the script's inputs one frame each.
fn run_synctest(
    project: &Project,
    make_app: impl FnMut() -> App,
    distance: usize,
    ticks: u64,
    script: Option<&InputScript>,
    report: impl FnOnce(&mut App) -> Result<(), crate::determinism::ReportError>,
) -> Result<Option<String>, GameError> {
    let mut synctest = crate::determinism::SyncTest::new(make_app, distance);
    let mut inputs = script.into_iter().flat_map(|s| s.frames());
    let mut input = RuntimeInput::default();
    while synctest.app().ticks() < ticks {
        if let Some((_, next)) = inputs.next() {
            input = next;
        }
        synctest.advance(input.clone())?;
    }
    report(synctest.app_mut())?;
    Ok(Some(format!(
        "{}: synctest passed: {ticks} ticks, each re-simulated {distance} ticks back from a snapshot",
        project.manifest.name
    )))
}

/// Writes the state-hash report if asked and sums the run up.
fn finish_run(
    project: &Project,
    app: &mut App,
    report_path: Option<&Path>,
    hashes: &std::sync::Mutex<Vec<(u64, u64)>>,
    details: &std::sync::Mutex<Vec<crate::determinism::StateDetail>>,
) -> Result<Option<String>, GameError> {
    let undeclared = app.undeclared_state().cloned();
    let run = RunRecord {
        report_path,
        hashes,
        details,
    };
    run.finish(project, app.world_mut(), undeclared, "headless")
}

/// What a run collected for its end: where the state-hash report goes, the tick hashes and the
/// detailed ticks.
pub(crate) struct RunRecord<'a> {
    /// `RUSTING_STATE_HASH_OUT`.
    pub report_path: Option<&'a Path>,
    /// Every tick's hash.
    pub hashes: &'a std::sync::Mutex<Vec<(u64, u64)>>,
    /// `RUSTING_DETAIL_TICKS`' details.
    pub details: &'a std::sync::Mutex<Vec<crate::determinism::StateDetail>>,
}

impl RunRecord<'_> {
    /// Fails on undeclared state, writes the state-hash report if asked, and sums the run up:
    /// `<game>: ran <n> ticks <how> (<k> colliders); world-state hash <hash>`.
    pub(crate) fn finish(
        &self,
        project: &Project,
        world: &mut bevy::prelude::World,
        undeclared: Option<crate::determinism::UndeclaredState>,
        how: &str,
    ) -> Result<Option<String>, GameError> {
        if let Some(found) = undeclared {
            return Err(found.into());
        }
        if let Some(path) = self.report_path {
            let hashes = self.hashes.lock().map(|h| h.clone()).unwrap_or_default();
            let mut report = crate::determinism::StateHashReport::capture(world, &hashes);
            report.details = self.details.lock().map(|d| d.clone()).unwrap_or_default();
            report.write(path)?;
        }
        let mut summary = String::new();
        let bodies = world
            .query::<&crate::physics::Collider>()
            .iter(world)
            .count();
        let hash = world
            .resource::<crate::determinism::StateHashes>()
            .cpu
            .back()
            .map_or(0, |&(_, hash)| hash);
        let ticks = world.resource::<crate::runtime::FrameTime>().fixed_tick;
        let _ = write!(
            summary,
            "{}: ran {ticks} ticks {how} ({bodies} colliders); world-state hash {hash:016x}",
            project.manifest.name,
        );
        Ok(Some(summary))
    }
}

/// Writes a game's `main`: `rusting_game!(MyGamePlugin);` runs the project in the crate's directory
/// with the engine, its main scene and `MyGamePlugin`. List the game's own component and resource
/// types to have snapshots copy them (with `Clone`) or leave them alone:
/// `rusting_game!(MyGamePlugin, snapshot: [Score, Lap], ignore_in_snapshots: [AudioCache]);`.
#[macro_export]
macro_rules! rusting_game {
    ($plugin:expr $(, snapshot: [$($copied:ty),* $(,)?])? $(, ignore_in_snapshots: [$($ignored:ty),* $(,)?])? $(,)?) => {
        fn main() -> ::std::process::ExitCode {
            $crate::game::run_game(::std::path::Path::new(env!("CARGO_MANIFEST_DIR")), |app| {
                app.add_plugins($plugin);
                $($(app.register_snapshot_component::<$copied>();)*)?
                $($(app.ignore_in_snapshots::<$ignored>();)*)?
            })
        }
    };
}
