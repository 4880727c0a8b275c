//! [`RunResult`]: why a game run stopped, as a small JSON file and an exit code, for the `rusting`
//! CLI (or any other tool) to read instead of the game's standard error text.
//!
//! With `RUSTING_RESULT_OUT=<file>`, a game started through `rusting_game!` writes one result
//! there (atomically) before it exits, also when it panics (from a panic hook, which runs before
//! unwinding, so it works with `panic = "abort"` too). The exit code says the same in brief:
//!
//! | Exit code | Codes | Meaning |
//! |-----------|-------|---------|
//! | 0 | `OK`, `IDENTIFIED` | the run did what it was asked (`IDENTIFIED`: with `RUSTING_IDENTIFY=1`, it only wrote which crate it was built from, [`RunResult::built_from`], and ran nothing) |
//! | 1 | `REPLAY_DIVERGED`, `SYNCTEST_FAILED`, `UNDECLARED_STATE`, `FLOAT_ENV_CHANGED` | a check ran and failed |
//! | 2 | `NOTHING_TO_RUN` | no headless ticks were asked for and the build has no window |
//! | 3 | `PROJECT_INVALID`, `SCENE_INVALID`, `SCRIPT_INVALID`, `REPLAY_INVALID`, `ENVIRONMENT_INVALID` | bad input |
//! | 4 | `START_FAILED`, `OUTPUT_FAILED` | the app does not start (its schedules, the determinism check, GPU), or an output cannot be written |
//! | 101 | `PANIC`, `JOB_PANICKED` | the game panicked (Rust's own exit code for a panic); `JOB_PANICKED`: a deadline job's function did, and the message names the job kind, its `JobId` and the tick that requested it |
//!
//! This module owns the format and the mapping from errors; it must never print.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::error::GameError;
use crate::determinism::session_replay::SessionReplayError;
use crate::record::ReplayError;

/// The environment variable naming the result file.
pub const RESULT_VARIABLE: &str = "RUSTING_RESULT_OUT";

/// The environment variable asking a game only to say which crate it was built from: with `1`, it
/// writes a result with code `IDENTIFIED` and [`RunResult::built_from`] and exits without opening
/// its project.
pub const IDENTIFY_VARIABLE: &str = "RUSTING_IDENTIFY";

/// The result format this engine writes and reads.
pub const RESULT_FORMAT_VERSION: u32 = 1;

/// Where a panic happened and what it said.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PanicReport {
    /// The panic message.
    pub message: String,
    /// `file:line:column`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The system that panicked (its function's path, as bevy names systems), when the stack
    /// shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
}

/// The system a panic's backtrace `text` (as `std::backtrace::Backtrace` prints it) went through:
/// the outermost frame of the game's own code just inside the first frame of `bevy_ecs`, which is
/// the function bevy runs as the system. `None` when no such frame is left (an optimised build may
/// inline the system into bevy's code) or the panic did not happen in a system.
pub fn system_in_backtrace(text: &str) -> Option<String> {
    let symbols: Vec<String> = text
        .lines()
        .filter_map(|line| {
            let (index, symbol) = line.trim_start().split_once(": ")?;
            index.parse::<usize>().ok()?;
            Some(plain_symbol(symbol.trim()))
        })
        .collect();
    let bevy = symbols.iter().position(|s| s.starts_with("bevy_ecs::"))?;
    let library = |s: &str| {
        [
            "std::",
            "core::",
            "alloc::",
            "__rustc::",
            "bevy",
            "<",
            "rusting_engine::game::result::",
        ]
        .iter()
        .any(|prefix| s.starts_with(prefix))
    };
    let own = symbols[..bevy].iter().rev().find(|s| !library(s))?;
    let system = own
        .trim_end_matches("::{{closure}}")
        .trim_end_matches("::{closure#0}");
    (!system.is_empty()).then(|| system.to_owned())
}

/// A symbol without crate disambiguators (`std[e28293b1aa0f68bd]::`) or a trailing legacy hash
/// (`::h0123456789abcdef`).
fn plain_symbol(symbol: &str) -> String {
    let mut plain = String::with_capacity(symbol.len());
    let mut depth = 0;
    for c in symbol.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    match plain.rsplit_once("::h") {
        Some((path, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            path.to_owned()
        }
        _ => plain,
    }
}

/// Why a game run stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunResult {
    /// Always [`RESULT_FORMAT_VERSION`].
    pub format_version: u32,
    /// A stable code (see the module docs).
    pub code: String,
    /// The whole message, every line of it (a schedule error lists every conflicting pair).
    pub message: String,
    /// The tick the run was on: the last tick completed, or for a panic the tick being run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<u64>,
    /// The panic, for `PANIC`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub panic: Option<PanicReport>,
    /// How the machine kept up with the game's deadline jobs, when it requested any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<crate::jobs::JobStats>,
    /// The directory of the crate this binary was built from (its `CARGO_MANIFEST_DIR`, as
    /// `rusting_game!` passes it): tools check it is the project they meant to run, since two
    /// projects with the same package name in one target directory share cargo's output path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub built_from: Option<String>,
}

impl RunResult {
    /// A result with `code` and `message`.
    pub fn new(code: &str, message: impl Into<String>) -> RunResult {
        RunResult {
            format_version: RESULT_FORMAT_VERSION,
            code: code.to_owned(),
            message: message.into(),
            tick: None,
            panic: None,
            jobs: None,
            built_from: None,
        }
    }

    /// The result of a run that stopped with `error`.
    pub fn of_error(error: &GameError) -> RunResult {
        let code = match error {
            GameError::Project(_) => "PROJECT_INVALID",
            GameError::Scene(_) => "SCENE_INVALID",
            GameError::Script(_) => "SCRIPT_INVALID",
            GameError::Environment { .. } | GameError::Threads(_) => "ENVIRONMENT_INVALID",
            GameError::NoDisplay(_) => "NO_DISPLAY",
            GameError::Replay(
                ReplayError::Diverged { .. }
                | ReplayError::Scene { .. }
                | ReplayError::Length { .. }
                | ReplayError::StartTick { .. },
            ) => "REPLAY_DIVERGED",
            GameError::ReplayIn {
                error:
                    ReplayError::Diverged { .. }
                    | ReplayError::Scene { .. }
                    | ReplayError::Length { .. }
                    | ReplayError::StartTick { .. },
                ..
            } => "REPLAY_DIVERGED",
            GameError::ReplayIn { .. } => "REPLAY_INVALID",
            GameError::Replay(ReplayError::Io { .. }) => "OUTPUT_FAILED",
            GameError::Replay(_) => "REPLAY_INVALID",
            GameError::SyncTest(_) => "SYNCTEST_FAILED",
            GameError::Undeclared(_) => "UNDECLARED_STATE",
            GameError::FloatEnv(_) => "FLOAT_ENV_CHANGED",
            GameError::App(crate::engine::AppError::Scene(_)) => "SCENE_INVALID",
            GameError::App(_) => "START_FAILED",
            GameError::Report(_) => "OUTPUT_FAILED",
            GameError::Net { code, .. } => code,
            GameError::SessionReplay(SessionReplayError::Diverged { .. }) => "REPLAY_DIVERGED",
            GameError::SessionReplay(
                SessionReplayError::Io { .. }
                | SessionReplayError::Json { .. }
                | SessionReplayError::Invalid { .. },
            ) => "REPLAY_INVALID",
            GameError::SessionReplay(_) => "START_FAILED",
        };
        let mut result = RunResult::new(code, error.to_string());
        if let GameError::Undeclared(found) = error {
            result.tick = Some(found.tick);
        }
        if let GameError::FloatEnv(change) = error {
            result.tick = Some(change.tick);
        }
        result
    }

    /// The exit code that goes with the result's code.
    pub fn exit_code(&self) -> u8 {
        match self.code.as_str() {
            "OK" | "IDENTIFIED" => 0,
            "REPLAY_DIVERGED" | "SYNCTEST_FAILED" | "UNDECLARED_STATE" | "FLOAT_ENV_CHANGED"
            | "NET_DESYNC" => 1,
            "NOTHING_TO_RUN" => 2,
            "PROJECT_INVALID"
            | "SCENE_INVALID"
            | "SCRIPT_INVALID"
            | "REPLAY_INVALID"
            | "ENVIRONMENT_INVALID" => 3,
            "PANIC" | "JOB_PANICKED" => 101,
            _ => 4,
        }
    }

    /// Writes the result to `path` atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a result always serializes");
        bytes.push(b'\n');
        crate::runtime::json_file::write_atomically(path, &bytes)
    }

    /// Reads the result at `path`; `None` when it is missing or not a result of this version.
    pub fn load(path: &Path) -> Option<RunResult> {
        let text = std::fs::read_to_string(path).ok()?;
        let result: RunResult = serde_json::from_str(&text).ok()?;
        (result.format_version == RESULT_FORMAT_VERSION).then_some(result)
    }
}

/// Where a run's result goes, and the tick it is on (kept up to date by a tick hook, read by the
/// panic hook).
#[derive(Clone, Default)]
pub struct ResultChannel {
    path: Arc<Mutex<Option<std::path::PathBuf>>>,
    tick: Arc<AtomicU64>,
    /// Whether the app has started (set up) and ticks may be running.
    started: Arc<std::sync::atomic::AtomicBool>,
    /// The app's job workers, once a tick ran (for the result's job counts).
    workers: Arc<Mutex<Option<crate::jobs::JobWorkers>>>,
}

impl ResultChannel {
    /// Adds the tick hook to `app` that keeps this channel's tick up to date.
    pub fn track_ticks(&self, app: &mut crate::engine::App) {
        let channel = self.clone();
        if let (Ok(mut slot), Some(workers)) = (
            self.workers.lock(),
            app.world().get_resource::<crate::jobs::JobWorkers>(),
        ) {
            *slot = Some(workers.clone());
        }
        app.add_tick_hook(move |_: &mut bevy::prelude::World, tick| channel.completed(tick));
    }

    /// How the tracked app kept up with its deadline jobs, when it requested any.
    pub fn jobs(&self) -> Option<crate::jobs::JobStats> {
        let stats = self.workers.lock().ok()?.as_ref()?.stats();
        (stats.requested > 0).then_some(stats)
    }

    /// A channel writing to `path` (nothing is written when `None`).
    pub fn new(path: Option<std::path::PathBuf>) -> ResultChannel {
        ResultChannel {
            path: Arc::new(Mutex::new(path)),
            tick: Arc::default(),
            started: Arc::default(),
            workers: Arc::default(),
        }
    }

    /// Notes that the app is set up: a panic from now on happens during a tick.
    pub fn started(&self) {
        self.started.store(true, Ordering::Relaxed);
    }

    /// Notes that tick `tick` completed.
    pub fn completed(&self, tick: u64) {
        self.tick.store(tick, Ordering::Relaxed);
    }

    /// The last tick completed.
    pub fn tick(&self) -> u64 {
        self.tick.load(Ordering::Relaxed)
    }

    /// Writes `result` once: later results (a panic after an error was written) are dropped.
    pub fn finish(&self, result: &RunResult) {
        let mut result = result.clone();
        result.jobs = result.jobs.or_else(|| self.jobs());
        let result = &result;
        let path = self.path.lock().map(|mut p| p.take()).unwrap_or(None);
        if let Some(path) = path
            && let Err(error) = result.write(&path)
        {
            eprintln!("warning: {}: {error}", path.display());
        }
    }

    /// Installs a panic hook that writes a `PANIC` result (with the message, location and the
    /// tick being run), then runs the hook that was there before.
    pub fn install_panic_hook(&self, crate_dir: &Path) {
        let channel = self.clone();
        let crate_dir = crate_dir.to_owned();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .or_else(|| {
                    let job = info.payload().downcast_ref::<crate::jobs::JobPanicked>()?;
                    Some(job.message.clone())
                })
                .unwrap_or_else(|| "(a panic without a message)".to_owned());
            let message = super::system_source::explained(&message);
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            // A deadline job's function panicking (on a worker, or on the simulation thread
            // helping) is caught where it ran: the run stops at the job's due tick, where the
            // simulation thread panics with a `JobPanicked` naming it, so what the result says
            // never depends on when a worker got to the job. Only note the place for then. (With
            // `panic = "abort"` nothing is caught: the result is written now.)
            let running = crate::jobs::running_job();
            if running.is_some() && cfg!(panic = "unwind") {
                if let Some(location) = &location {
                    crate::jobs::note_job_panic_location(location.clone());
                }
                previous(info);
                return;
            }
            let due = info.payload().downcast_ref::<crate::jobs::JobPanicked>();
            let job = running.or_else(|| Some(due?.job.clone()));
            // The job's own place, not the simulation thread's `panic_any`.
            let location = due.map_or(location, |due| due.location.clone());
            let tick = channel
                .started
                .load(Ordering::Relaxed)
                .then(|| channel.tick() + 1);
            let when = tick.map_or_else(
                || "while the app was being built".to_owned(),
                |tick| format!("during tick {tick}"),
            );
            let system = tick.and_then(|_| {
                system_in_backtrace(&std::backtrace::Backtrace::force_capture().to_string())
                    .or_else(|| super::system_source::system_in_message(&message))
            });
            // A panic in a dependency's file on a system's behalf (bevy's error handler, for a
            // parameter that failed validation) is shown at the system's own function.
            let location = match (&location, &system) {
                (Some(at), Some(system))
                    if Path::new(at.split(':').next().unwrap_or("")).is_absolute() =>
                {
                    super::system_source::source_of_system(&crate_dir, system).or(location)
                }
                _ => location,
            };
            let place = location
                .as_deref()
                .map(|l| format!(" at {l}"))
                .unwrap_or_default();
            let in_system = system
                .as_deref()
                .map(|s| format!(" in system `{s}`"))
                .unwrap_or_default();
            let mut result = match &job {
                Some(job) => {
                    RunResult::new("JOB_PANICKED", format!("{job} panicked{place}: {message}"))
                }
                None => RunResult::new(
                    "PANIC",
                    format!("the game panicked {when}{in_system}{place}: {message}"),
                ),
            };
            result.tick = tick;
            result.panic = Some(PanicReport {
                message,
                location,
                system,
            });
            channel.finish(&result);
            previous(info);
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::system_in_backtrace;

    /// Fails if the system is no longer found past the panic machinery and `core`'s call shims, or
    /// if a stack with no frame of the game's own (an inlined release system) names something.
    #[test]
    fn the_system_is_read_from_the_stack() {
        let debug = "   0: __rustc::rust_begin_unwind
             at /rustc/x/library/std/src/panicking.rs:697:5
   1: core::panicking::panic_fmt
   2: panics::extra::topple
             at ./src/extra.rs:14:9
   3: core::ops::function::FnMut::call_mut
   4: <Func as bevy_ecs::system::function_system::SystemParamFunction<fn(F0) .> Out>>::run
   5: bevy_ecs::system::system::System::run_without_applying_deferred
   6: rusting_engine::engine::App::update";
        assert_eq!(
            system_in_backtrace(debug).as_deref(),
            Some("panics::extra::topple")
        );
        let release = "   8: __rustc[b7974e8690430dd9]::rust_begin_unwind
   9: core[c1f1a4ba060b9bfa]::panicking::panic_fmt
  10: bevy_ecs::system::system::System::run_without_applying_deferred::hc8fcd8e4874b69b1
  11: rusting_engine::engine::App::update::h0f50b6743ac9bfe7";
        assert_eq!(system_in_backtrace(release), None);
        let hashed = "   2: game[0a1b]::hud::draw::{closure#0}::h0123456789abcdef
   3: bevy_ecs::system::system::System::run_without_applying_deferred";
        assert_eq!(
            system_in_backtrace(hashed).as_deref(),
            Some("game::hud::draw")
        );
        assert_eq!(system_in_backtrace("no stack here"), None);
    }
}
