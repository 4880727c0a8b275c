//! `rusting run <project>`: builds the game and runs it with the right `RUSTING_*` variables.
//!
//! Without `--headless`, the game is built with its default features (its window) and played in
//! a window (`--ticks N` ends the run after N ticks; `--script` feeds scripted frames instead of
//! the devices). With `--headless --ticks N` it is built without them and simulates N ticks.
//! Either way `--record FILE` records the session and `--synctest K` runs the game as a synctest
//! (every tick re-simulated K ticks back from a snapshot; in a window, live or scripted);
//! `--replay FILE` plays a recorded session headless and fails at the first tick that differs,
//! or, with the request's `view` (`rusting replay play --window`), shows it in the window's
//! replay viewer; a multiplayer session's replay (`rusting replay play`) plays headless
//! without the network. The game's log lines reach standard error as they come, its summary is
//! printed when it ends, and its failures map to stable codes. This
//! module must never write inside the project except through cargo's target directory.

use std::path::Path;

use rusting_engine::determinism::session_replay::SessionReplay;
use rusting_engine::record::Replay;

use crate::exit::Failure;
use crate::game_build::{Build, Profile, check_project, check_script, run_for_summary};

/// One `rusting run`.
pub struct Request<'a> {
    /// The project directory.
    pub project: &'a Path,
    /// Run without a window.
    pub headless: bool,
    /// Ticks to run headless.
    pub ticks: Option<u64>,
    /// An input script.
    pub script: Option<&'a Path>,
    /// Where to record the session.
    pub record: Option<&'a Path>,
    /// A replay to play instead.
    pub replay: Option<&'a Path>,
    /// A multiplayer session's replay to play instead, headless.
    pub session_replay: Option<&'a Path>,
    /// Show the replay in the window's viewer instead of playing it headless.
    pub view: bool,
    /// Roll back this many ticks after every tick.
    pub synctest: Option<usize>,
    /// Where to write the state-hash report.
    pub hashes_out: Option<&'a Path>,
    /// Ticks to detail in the report, `<from>-<to>`.
    pub detail_ticks: Option<&'a str>,
    /// In the window: where to save a screenshot when the ticks are done, after which the run
    /// ends.
    pub screenshot: Option<&'a Path>,
    /// In the window: the engine's debug views to draw (`velocities`).
    pub debug_draw: Option<&'a str>,
    /// Build in debug.
    pub debug: bool,
    /// The cargo target directory.
    pub target_dir: Option<&'a Path>,
}

/// Checks the request, builds the game and runs it; `Ok` with the game's summary.
pub fn run(request: &Request) -> Result<String, Failure> {
    check_project(request.project)?;
    if let Some(range) = request.detail_ticks
        && rusting_engine::game::parse_tick_range(range).is_none()
    {
        return Err(Failure::bad_input(
            "TICKS_INVALID",
            format!("--detail-ticks {range}: expected `<from>-<to>`, from 1, at most 600 ticks"),
        ));
    }
    if let Some(path) = request.replay {
        Replay::summarize(path).map_err(|e| Failure::bad_input("REPLAY_INVALID", e.to_string()))?;
    } else if let Some(path) = request.session_replay {
        SessionReplay::read(path)
            .map_err(|e| Failure::bad_input("REPLAY_INVALID", e.to_string()))?;
    } else if request.headless && request.ticks.is_none() {
        return Err(Failure::bad_input(
            "TICKS_REQUIRED",
            "a headless run needs --ticks <n>",
        ));
    }
    // Checked before anything builds: a broken script is bad input, not a failed run.
    check_script(request.script)?;
    let mut inputs = Vec::new();
    inputs.extend(request.script.map(|p| ("--script", p)));
    inputs.extend(request.replay.map(|p| ("--replay", p)));
    inputs.extend(request.session_replay.map(|p| ("FILE", p)));
    let mut outputs = Vec::new();
    outputs.extend(request.record.map(|p| ("--record", p)));
    outputs.extend(request.hashes_out.map(|p| ("--hashes-out", p)));
    outputs.extend(request.screenshot.map(|p| ("--screenshot", p)));
    crate::outputs::check(&inputs, &outputs)?;
    let profile = Profile::of(request.debug);
    let window = !request.headless
        && request.session_replay.is_none()
        && (request.replay.is_none() || request.view);
    let build = Build {
        project: request.project,
        target_dir: request.target_dir,
        window,
        net: false,
    };
    let executable = crate::game_identity::build(&build, profile)?;
    let mut env = Vec::new();
    let path = |p: &Path| p.display().to_string();
    if let Some(ticks) = request.ticks {
        let variable = if window {
            "RUSTING_WINDOW_TICKS"
        } else {
            "RUSTING_HEADLESS_TICKS"
        };
        env.push((variable, ticks.to_string()));
    }
    if let Some(script) = request.script {
        env.push(("RUSTING_INPUT_SCRIPT", path(script)));
    }
    if window {
        // The game starts with no `RUSTING_*` variable of this command's environment but the ones
        // named here; the window's own settings (docs/play.md) pass through.
        for name in [
            "RUSTING_SCREENSHOT",
            "RUSTING_WINDOW_SIZE",
            "RUSTING_DEBUG_DRAW",
        ] {
            if let Ok(value) = std::env::var(name) {
                env.push((name, value));
            }
        }
        if let Some(screenshot) = request.screenshot {
            env.retain(|(name, _)| *name != "RUSTING_SCREENSHOT");
            env.push(("RUSTING_SCREENSHOT", path(screenshot)));
        }
        if let Some(views) = request.debug_draw {
            env.retain(|(name, _)| *name != "RUSTING_DEBUG_DRAW");
            env.push(("RUSTING_DEBUG_DRAW", views.to_owned()));
        }
    }
    if let Some(record) = request.record {
        env.push(("RUSTING_REPLAY_OUT", path(record)));
    }
    if let Some(replay) = request.replay {
        env.push(("RUSTING_REPLAY_PLAY", path(replay)));
        // A long headless playback shows a bar on a terminal (from the game's progress lines).
        if !window && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            env.push(("RUSTING_PROGRESS", "1".to_owned()));
        }
        if request.view {
            env.push((rusting_engine::game::REPLAY_VIEW_VARIABLE, "1".to_owned()));
        }
    }
    if let Some(replay) = request.session_replay {
        env.push((rusting_engine::game::SESSION_REPLAY_VARIABLE, path(replay)));
    }
    if let Some(distance) = request.synctest {
        env.push(("RUSTING_SYNCTEST", distance.to_string()));
    }
    if let Some(out) = request.hashes_out {
        env.push(("RUSTING_STATE_HASH_OUT", path(out)));
    }
    if let Some(range) = request.detail_ticks {
        env.push(("RUSTING_DETAIL_TICKS", range.to_owned()));
    }
    run_for_summary(&executable, request.project, env, "run")
}
