//! [`GameError`]: why a game cannot start or its run failed, whatever the mode. Every mode returns
//! it, and `result` turns it into the run's stable code and exit code.
//!
//! This module must never run anything: it only describes what went wrong.

use std::path::{Path, PathBuf};

use super::project::ProjectError;
use crate::engine::AppError;
use crate::runtime::InputScriptError;
use crate::scene::SceneError;

/// A replay error with the replay's file named once: reading errors name it already.
fn replay_in_message(file: &Path, error: &crate::record::ReplayError) -> String {
    let text = error.to_string();
    let name = file.display().to_string();
    if text.starts_with(&name) {
        text
    } else {
        format!("{name}: {text}")
    }
}

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
    Report(#[from] crate::record::ReportError),
    /// A replay cannot be written.
    #[error(transparent)]
    Replay(#[from] crate::record::ReplayError),
    /// The replay to play (`RUSTING_REPLAY_PLAY`) cannot be read, or playing it diverged.
    #[error("{}", replay_in_message(file, error))]
    ReplayIn {
        /// The replay file.
        file: PathBuf,
        /// What went wrong.
        error: crate::record::ReplayError,
    },
    /// A synctest found state outside the snapshot (`RUSTING_SYNCTEST`).
    #[error(transparent)]
    SyncTest(#[from] crate::determinism::SyncTestError),
    /// A tick changed state nobody declared (the check runs in debug builds, and wherever
    /// `RUSTING_CHECK_UNDECLARED=1` asks for it).
    #[error(transparent)]
    Undeclared(#[from] crate::state::UndeclaredState),
    /// The floating-point environment changed on a thread that simulates (the run fails on it in
    /// debug builds, `rusting determinism` runs and wherever `RUSTING_FLOAT_ENV=error` asks).
    #[error(transparent)]
    FloatEnv(#[from] crate::runtime::FloatEnvChanged),
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
    Threads(#[from] crate::engine::threads::ThreadsError),
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
