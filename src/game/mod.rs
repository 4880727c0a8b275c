//! The game entry point: [`rusting_game!`](crate::rusting_game) and [`run_game`], which reads
//! what the environment asks for and runs the game in that mode, one file a mode.
//!
//! A game made with Rusting is a Cargo binary with a `rusting.json`, its scenes, and a plugin of its
//! own systems. `rusting_game!(MyPlugin)` writes its `main`: open the project, build the engine
//! `App` with the project's seed, tick rate and determinism mode, load the main scene, add the
//! game's plugin, and run. There is no renderer yet, so a game runs headless:
//!
//! - `RUSTING_HEADLESS_TICKS=<n>` runs `n` fixed ticks with no window and prints a summary;
//! - `RUSTING_INPUT_SCRIPT=<file>` feeds a scripted session ([`InputScript`]) to that run;
//! - `RUSTING_HEADLESS_PACING=uneven` runs it in frames of 3, 1/2, 1/2, 0 and 5 ticks instead of
//!   one tick a frame, a script's input stamped by tick so every tick sees what it sees in the
//!   script's own frames (the bits must not change);
//! - `RUSTING_STATE_HASH_OUT=<file>` writes that run's `StateHashReport` there (atomically);
//! - `RUSTING_DETAIL_TICKS=<from>-<to>` adds those ticks' state, down to the field, to the report
//!   (at most 600 ticks), so comparing reports from two machines names the field that differs;
//! - `RUSTING_REPLAY_OUT=<file>` records that run and writes its `Replay` there when it ends;
//! - `RUSTING_REPLAY_PLAY=<file>` plays a replay headless instead (only its first `n` ticks with
//!   `RUSTING_HEADLESS_TICKS=<n>`) and fails, naming the tick, when a hash differs;
//! - `RUSTING_PROGRESS=1` has a replay's headless playback write `rusting-progress <done> <total>`
//!   to standard error every `PROGRESS_EVERY` ticks (the command line draws a bar from them);
//! - `RUSTING_SYNCTEST=<k>` runs the headless ticks one a frame as a synctest instead: after every
//!   tick, a new app restores the snapshot from `k` ticks back and re-simulates, and the run fails
//!   at the first tick whose hash differs (state kept outside the snapshot);
//! - `RUSTING_PROJECT_DIR=<dir>` opens a project elsewhere than the crate that was built;
//! - `RUSTING_SYSTEM_HASHES=<tick>:<file>` writes the world-state hash after every fixed system
//!   of that tick to the file (see [`crate::runtime::system_hashes`]);
//! - `RUSTING_LOCKSTEP=1` steps the headless run one tick at a time for `rusting determinism`
//!   (see `determinism::lockstep`);
//! - `RUSTING_CHECK_UNDECLARED=1` (or `0`) turns the check for state nobody declared on (or off);
//! - `RUSTING_THREADS=<n>` runs rayon's and bevy's worker pools with `n` threads (see
//!   [`crate::engine::threads`]; `rusting determinism`'s one-CPU run sets it to 1);
//! - `RUSTING_IDENTIFY=1` only writes which crate the binary was built from to the result file
//!   (code `IDENTIFIED`) and exits, so tools never run another project's binary;
//! - `RUSTING_RESULT_OUT=<file>` writes why the run stopped there as a `RunResult` (see
//!   `result`; panics included), for tools to read instead of standard error.
//!
//! Without `RUSTING_HEADLESS_TICKS` the game says so and exits with code 2 instead of pretending to
//! open a window (a build with the `window` feature opens one).
//!
//! The room, file by file: `error` ([`GameError`]), `result` ([`RunResult`], the typed channel to
//! the CLI), `project` (`rusting.json`), `options` (the environment, read once), `build_app`
//! ([`build_app`], [`SimpleGamePlugin`]), `finish` (the end of a run), and one file a mode:
//! `headless`, `windowed` (feature `window`), `net_run` (feature `net`). This file only
//! dispatches. Nothing here may read a clock.

mod build_app;
pub mod error;
mod finish;
pub mod headless;
#[cfg(feature = "net")]
pub mod net_run;
mod options;
pub mod project;
pub mod result;
mod system_source;
#[cfg(feature = "window")]
mod windowed;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub use build_app::{SimpleGamePlugin, build_app};
pub use error::GameError;
pub use headless::{
    UNEVEN_PACING, collect_hashes, collect_hashes_into, run_headless, run_headless_uneven,
    run_headless_with, simulate_project_headless, uneven_frames,
};
pub use options::{
    DETAIL_TICKS_VARIABLE, MAX_DETAIL_TICKS, PROGRESS_EVERY, PROGRESS_PREFIX, REPLAY_VIEW_VARIABLE,
    SESSION_REPLAY_VARIABLE, SYSTEM_HASHES_VARIABLE, parse_tick_range,
};

use crate::engine::App;
use finish::RunRecord;
use options::{RunOptions, environment};
use project::Project;
use result::{RESULT_VARIABLE, ResultChannel, RunResult};

/// What `rusting_game!` calls: opens the project, runs it as the environment asks, and turns the
/// outcome into an exit code and, with `RUSTING_RESULT_OUT`, a [`RunResult`] file (see
/// [`crate::game::result`] for both).
pub fn run_game(crate_dir: &Path, add_game: impl Fn(&mut App)) -> ExitCode {
    crate::engine::logging::init_logging();
    let channel = ResultChannel::new(environment(RESULT_VARIABLE).map(PathBuf::from));
    // With a result file, the caller (the `rusting` command line) reports failures itself, so the
    // game prints them only when run on its own.
    let caller_reports = environment(RESULT_VARIABLE).is_some();
    if caller_reports {
        channel.install_panic_hook(crate_dir);
    }
    if environment(result::IDENTIFY_VARIABLE).as_deref() == Some("1") {
        let mut result =
            RunResult::new("IDENTIFIED", format!("built from {}", crate_dir.display()));
        result.built_from = Some(crate_dir.display().to_string());
        channel.finish(&result);
        return ExitCode::SUCCESS;
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
    let mut result = result;
    result.built_from = Some(crate_dir.display().to_string());
    let code = result.exit_code();
    channel.finish(&result);
    ExitCode::from(code)
}

fn try_run_game(
    crate_dir: &Path,
    add_game: impl Fn(&mut App),
    channel: &ResultChannel,
) -> Result<Option<String>, GameError> {
    let root = options::project_root(crate_dir);
    crate::engine::threads::apply_thread_limit_from_environment()?;
    let project = Project::open(&root)?;
    let RunOptions {
        ticks,
        script,
        uneven,
        report_path,
        detail_ticks,
        replay_out,
        system_hashes,
    } = RunOptions::from_environment()?;
    if let Some(file) = environment(SESSION_REPLAY_VARIABLE) {
        return headless::play_session_replay(&project, &add_game, channel, Path::new(&file));
    }
    #[cfg(feature = "net")]
    if let Some(net) = net_run::NetRun::from_environment()? {
        let Some(ticks) = ticks else {
            return Err(GameError::Environment {
                name: net_run::PEERS_VARIABLE,
                value: environment(net_run::PEERS_VARIABLE).unwrap_or_default(),
                reason: "a networked run is headless for now: set RUSTING_HEADLESS_TICKS",
            });
        };
        let mut app = build_app(&project)?;
        net.prepare(&mut app);
        add_game(&mut app);
        channel.track_ticks(&mut app);
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
    let replay_in = options::replay_in()?;
    let synctest = options::synctest_distance()?;
    if let (Some(distance), Some(ticks)) = (synctest, ticks) {
        return headless::run_synctest_mode(
            &project,
            &add_game,
            channel,
            (distance, ticks),
            script.as_ref(),
            report_path.as_deref(),
        );
    }
    let mut app = build_app(&project)?;
    add_game(&mut app);
    channel.track_ticks(&mut app);
    let lockstep =
        environment(crate::determinism::lockstep::LOCKSTEP_VARIABLE).as_deref() == Some("1");
    let (hashes, details) = headless::add_run_hooks(&mut app, detail_ticks, lockstep);
    if let Some((tick, file)) = system_hashes {
        headless::write_system_hashes(&mut app, tick, file);
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
        let window_ticks = environment(windowed::WINDOW_TICKS_VARIABLE)
            .map(|value| {
                value.parse::<u64>().map_err(|_| GameError::Environment {
                    name: windowed::WINDOW_TICKS_VARIABLE,
                    value: value.clone(),
                    reason: "expected a whole number of ticks",
                })
            })
            .transpose()?;
        let mode = match (replay_in, synctest) {
            // The viewer seeks anywhere in the replay: it holds all of it.
            (Some(played), _) => {
                let file = played.file;
                let replay = played
                    .stream
                    .into_replay()
                    .map_err(|error| GameError::ReplayIn {
                        file: file.clone(),
                        error,
                    })?;
                windowed::WindowedModeChoice::View(file, Box::new(replay))
            }
            (None, Some(distance)) => windowed::WindowedModeChoice::SyncTest(distance),
            (None, None) => windowed::WindowedModeChoice::Play,
        };
        return windowed::play_windowed(
            windowed::WindowedPlay {
                mode,
                project,
                app,
                script,
                ticks: window_ticks,
                replay_out,
                report_path,
                hashes,
                details,
                screenshot: environment(windowed::SCREENSHOT_VARIABLE).map(PathBuf::from),
            },
            channel,
        );
    }
    app.setup()?;
    channel.started();
    let run = RunRecord {
        report_path: report_path.as_deref(),
        hashes: &hashes,
        details: &details,
    };
    if let Some(replay) = replay_in {
        return headless::play_replay_file(&project, &mut app, replay, ticks, &run);
    }
    let Some(ticks) = ticks else {
        return Ok(None);
    };
    headless::run_ticks(
        &project,
        &mut app,
        (ticks, uneven),
        script.as_ref(),
        replay_out.as_deref(),
        &run,
    )
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
