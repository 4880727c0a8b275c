//! A [`Replay`]'s files: JSON, the compact `.rply` form and a recording journal, read whole by
//! what they start with and written atomically (`replay_stream` reads one a window at a time).
//!
//! Its own file so that the replay's definition, its compact form and its journal stand on one
//! another in one direction: this module names all three, and none of them names it. It must
//! never write anywhere but the target's directory.

use std::path::Path;

use super::replay::{Replay, ReplayError};
use super::replay_compact::ReplaySummary;
use super::{replay_compact, replay_journal};
use crate::runtime::json_file;

impl Replay {
    /// The replay as JSON.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a replay always serializes")
    }

    /// Parses a replay from JSON; `file` names it in errors.
    pub fn from_json(bytes: &[u8], file: &Path) -> Result<Replay, ReplayError> {
        let replay: Replay = serde_json::from_slice(bytes).map_err(|e| ReplayError::Corrupt {
            file: file.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        replay.check(file)?;
        Ok(replay)
    }

    /// The compact binary form (about four bytes a tick), or `None` when the hashes do not follow
    /// on tick by tick (see `replay_compact`).
    pub fn to_compact(&self) -> Option<Vec<u8>> {
        replay_compact::to_compact(self)
    }

    /// Reads a replay from `bytes` in any form (compact, a recording journal, or JSON) and checks
    /// it; `file` names it in errors.
    pub fn load_bytes(bytes: &[u8], file: &Path) -> Result<Replay, ReplayError> {
        let replay = if bytes.starts_with(replay_compact::COMPACT_MAGIC) {
            replay_compact::from_compact(bytes, file)?
        } else if replay_journal::is_journal(bytes) {
            replay_journal::from_journal(bytes, file)?
        } else {
            return Replay::from_json(bytes, file);
        };
        replay.check(file)?;
        Ok(replay)
    }

    /// Reads the replay at `path`, in either form, or a recording journal (see
    /// `replay_journal`) up to its last complete record.
    pub fn load(path: &Path) -> Result<Replay, ReplayError> {
        let bytes = std::fs::read(path).map_err(|e| ReplayError::Io {
            file: path.to_owned(),
            message: e.to_string(),
        })?;
        Replay::load_bytes(&bytes, path)
    }

    /// What `rusting replay info` prints of the replay at `path`, checked as [`Replay::load`]
    /// checks it. A compact replay is read without making its frames, so the memory this takes
    /// grows with the file's size and never with the frames it counts; the other forms are read
    /// whole.
    pub fn summarize(path: &Path) -> Result<ReplaySummary, ReplayError> {
        let bytes = std::fs::read(path).map_err(|e| ReplayError::Io {
            file: path.to_owned(),
            message: e.to_string(),
        })?;
        if bytes.starts_with(replay_compact::COMPACT_MAGIC) {
            return replay_compact::summarize(&bytes, path);
        }
        Replay::load_bytes(&bytes, path).map(ReplaySummary::of)
    }

    /// Writes the replay to `path` atomically: compact when the file name ends in `.rply`, else
    /// JSON.
    pub fn write(&self, path: &Path) -> Result<(), ReplayError> {
        let compact = path.extension().is_some_and(|e| e == "rply");
        let bytes = match compact.then(|| self.to_compact()).flatten() {
            Some(bytes) => bytes,
            None => self.to_json(),
        };
        json_file::write_atomically(path, &bytes).map_err(|e| ReplayError::Io {
            file: path.to_owned(),
            message: e.to_string(),
        })
    }
}
