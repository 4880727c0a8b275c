//! What the environment asks a game's run for: the `RUSTING_*` variables read and checked once,
//! before anything is built, so a bad value fails with its name before a tick runs.
//!
//! This module must never build an app or run anything.

use std::path::{Path, PathBuf};

use super::error::GameError;
use crate::record::ReplayStream;
use crate::runtime::InputScript;

/// The session replay a game plays headless, without the network (`rusting replay play` sets it
/// for a session replay).
pub const SESSION_REPLAY_VARIABLE: &str = "RUSTING_SESSION_REPLAY_PLAY";

/// The environment variable asking a run to detail some ticks in its report, `<from>-<to>`.
pub const DETAIL_TICKS_VARIABLE: &str = "RUSTING_DETAIL_TICKS";

/// The most ticks one run details (each detail holds every simulation entity's fields).
pub const MAX_DETAIL_TICKS: u64 = crate::record::report::MAX_REPORT_DETAILS;

/// `<from>-<to>` as an inclusive range of ticks, from 1, at most [`MAX_DETAIL_TICKS`] long.
pub fn parse_tick_range(text: &str) -> Option<(u64, u64)> {
    let (from, to) = text.split_once('-')?;
    let (from, to): (u64, u64) = (from.trim().parse().ok()?, to.trim().parse().ok()?);
    (from >= 1 && to >= from && to - from < MAX_DETAIL_TICKS).then_some((from, to))
}

/// The environment variable that shows the replay `RUSTING_REPLAY_PLAY` names in the window's
/// replay viewer instead of playing it back headless (`1`; a build with the `window` feature).
pub const REPLAY_VIEW_VARIABLE: &str = "RUSTING_REPLAY_VIEW";

/// The environment variable asking a run for the world-state hash after every fixed system of
/// one tick, `<tick>:<file>` (see `runtime::system_hashes`); `rusting determinism` sets it when it
/// re-runs two configurations to the tick where they parted.
pub const SYSTEM_HASHES_VARIABLE: &str = "RUSTING_SYSTEM_HASHES";

/// A variable's value, when it is set and not empty.
pub(crate) fn environment(name: &'static str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

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

/// The project's directory: `RUSTING_PROJECT_DIR`, or the crate that was built.
pub(crate) fn project_root(crate_dir: &Path) -> PathBuf {
    environment("RUSTING_PROJECT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate_dir.to_owned())
}

/// The run's options that every mode reads, checked before any mode is chosen.
pub(crate) struct RunOptions {
    /// `RUSTING_HEADLESS_TICKS`.
    pub ticks: Option<u64>,
    /// `RUSTING_INPUT_SCRIPT`.
    pub script: Option<InputScript>,
    /// `RUSTING_HEADLESS_PACING=uneven`: headless ticks in uneven frames, the script's input
    /// stamped by tick.
    pub uneven: bool,
    /// `RUSTING_STATE_HASH_OUT`.
    pub report_path: Option<PathBuf>,
    /// `RUSTING_DETAIL_TICKS`.
    pub detail_ticks: Option<(u64, u64)>,
    /// `RUSTING_REPLAY_OUT`.
    pub replay_out: Option<PathBuf>,
    /// `RUSTING_SYSTEM_HASHES`: the tick whose systems to hash, and the file to write them to.
    pub system_hashes: Option<(u64, PathBuf)>,
}

impl RunOptions {
    /// Reads and checks the options; outputs are checked now, not found unwritable at the end.
    pub(crate) fn from_environment() -> Result<RunOptions, GameError> {
        let ticks = match environment("RUSTING_HEADLESS_TICKS") {
            Some(value) => Some(value.parse::<u64>().map_err(|_| GameError::Environment {
                name: "RUSTING_HEADLESS_TICKS",
                value: value.clone(),
                reason: "expected a whole number of ticks",
            })?),
            None => None,
        };
        let script = environment("RUSTING_INPUT_SCRIPT")
            .map(|path| InputScript::load(Path::new(&path)))
            .transpose()?;
        let uneven = match environment("RUSTING_HEADLESS_PACING").as_deref() {
            None | Some("steady") => false,
            Some("uneven") => true,
            Some(value) => {
                return Err(GameError::Environment {
                    name: "RUSTING_HEADLESS_PACING",
                    value: value.to_owned(),
                    reason: "expected `steady` or `uneven`",
                });
            }
        };
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
        let system_hashes = environment(SYSTEM_HASHES_VARIABLE)
            .map(|value| {
                value
                    .split_once(':')
                    .and_then(|(tick, file)| {
                        let tick = tick.parse::<u64>().ok().filter(|t| *t >= 1)?;
                        (!file.is_empty()).then(|| (tick, PathBuf::from(file)))
                    })
                    .ok_or(GameError::Environment {
                        name: SYSTEM_HASHES_VARIABLE,
                        value,
                        reason: "expected `<tick>:<file>` (a tick from 1, then the output file)",
                    })
            })
            .transpose()?;
        let system_hashes_out = system_hashes.as_ref().map(|(_, file)| file.clone());
        for (name, path) in [
            ("RUSTING_STATE_HASH_OUT", &report_path),
            ("RUSTING_REPLAY_OUT", &replay_out),
            (SYSTEM_HASHES_VARIABLE, &system_hashes_out),
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
        Ok(RunOptions {
            ticks,
            script,
            uneven,
            report_path,
            detail_ticks,
            replay_out,
            system_hashes,
        })
    }
}

/// What a long headless run reports as it goes when `RUSTING_PROGRESS=1` (the command line sets
/// it when its standard error is a terminal, and draws a bar from the lines): a line
/// `rusting-progress <done> <total>` on standard error every [`PROGRESS_EVERY`] ticks done and at
/// the end. Without the variable, nothing.
pub(crate) fn progress_lines(total: usize) -> impl FnMut(usize) {
    let wanted = environment("RUSTING_PROGRESS").is_some_and(|v| v == "1");
    let mut shown = 0;
    move |done: usize| {
        if wanted && (done >= shown + PROGRESS_EVERY || (done >= total && shown < total)) {
            shown = done;
            eprintln!("{PROGRESS_PREFIX}{done} {total}");
        }
    }
}

/// Ticks between two progress lines (ten seconds of play at 60 Hz).
pub const PROGRESS_EVERY: usize = 600;

/// How a progress line starts.
pub const PROGRESS_PREFIX: &str = "rusting-progress ";

/// The replay `RUSTING_REPLAY_PLAY` names, opened and checked whole; its frames and hashes are
/// made a window at a time as playback reaches them (see `ReplayStream`).
pub(crate) fn replay_in() -> Result<Option<ReplayIn>, GameError> {
    environment("RUSTING_REPLAY_PLAY")
        .map(|path| {
            let file = PathBuf::from(path);
            ReplayStream::open(&file)
                .map(|stream| ReplayIn {
                    file: file.clone(),
                    stream,
                })
                .map_err(|error| GameError::ReplayIn { file, error })
        })
        .transpose()
}

/// The replay a run plays.
pub(crate) struct ReplayIn {
    /// Its file.
    pub file: PathBuf,
    /// The replay, read a window at a time.
    pub stream: ReplayStream,
}

/// How many ticks `RUSTING_SYNCTEST` rolls back.
pub(crate) fn synctest_distance() -> Result<Option<usize>, GameError> {
    environment("RUSTING_SYNCTEST")
        .map(|value| match value.parse::<usize>() {
            Ok(distance) if distance > 0 => Ok(distance),
            _ => Err(GameError::Environment {
                name: "RUSTING_SYNCTEST",
                value,
                reason: "expected how many ticks to roll back, at least 1",
            }),
        })
        .transpose()
}
