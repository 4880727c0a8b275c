//! The recording journal: a replay written as the session runs, in constant memory and time.
//!
//! While a game records to `session.rply`, every frame, hash and rollback is appended to
//! `session.rply.journal` as a small binary record, and the records of a frame reach the file (a
//! `write` to the operating system) when the frame ends. Nothing is rewritten and nothing
//! grows in memory; a frame like the one before it takes one byte and a hash nine, so an hour
//! writes little more than the compact replay it becomes. When recording ends, the journal is written
//! atomically in the form the target's name asks for and removed: `.rply` by streaming the journal
//! through in passes (`journal_finish`, in memory that does not grow with the recording), JSON by
//! reading it back into a [`Replay`] first.
//!
//! A journal left by a crash or a `kill -9` is itself a replay: [`Replay::load`] reads it up to its
//! last complete record (an unfinished last record is what a kill interrupted), so it loses at most
//! the frame that was running. Nothing deletes such a journal; a new recording refuses to start
//! over one. A panic hook finalizes the journal before the process aborts
//! ([`finalize_after_panic`]), which is how a game built with `panic = "abort"` still leaves its
//! replay. Once finalized, a journal takes no more records: a recording that goes on after a
//! panic someone caught ends at the panic.
//!
//! Layout (integers little-endian, `varint` = LEB128): `"RJNL"`, u32 journal version, varint
//! length + the header as JSON (a `Replay` with no frames or hashes); then records, each a tag
//! byte and its fields. The tick the recording stands at starts at the start tick, moves on one
//! with every hash and back with every rewind:
//!
//! ```text
//! 0x01 frame        varint real delta (ns), varint start tick, u8 has_input, [varint length + input JSON]
//! 0x02 same frame   a frame with the last frame's delta and no new input, starting at the current tick
//! 0x03 hash         u64 hash of the next tick
//! 0x04 rewind       varint tick: frames that started at or after it, and hashes after it, are void
//! 0x05 hash at      varint tick, u64 hash (a hash that does not follow on)
//! 0x06 detail       varint length + the StateDetail as JSON
//! 0x07 outside      varint tick, varint entry count, per entry varint length + channel bytes,
//!                   varint length + entry bytes
//! ```
//!
//! This module must never hold more than one frame in memory while recording.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::journal_finish::{WrittenReplay, finish_compact};
use super::replay::{Replay, ReplayError, ReplayFrame};
use super::replay_compact::{write_outside_entries, write_varint};
use crate::jobs::OutsideTick;

use super::journal_format::{DETAIL, FRAME, HASH, HASH_AT, OUTSIDE, REWIND, SAME_FRAME};
pub use super::journal_format::{JOURNAL_MAGIC, JOURNAL_VERSION};

/// The journal beside a recording's target: the target's name with `.journal` added.
pub fn journal_path(target: &Path) -> PathBuf {
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(".journal");
    target.with_file_name(name)
}

/// An open journal (see the module docs).
pub struct Journal {
    path: PathBuf,
    target: PathBuf,
    out: BufWriter<File>,
    /// The record being built (reused).
    record: Vec<u8>,
    /// The tick the recording stands at.
    tick: u64,
    /// The last frame's delta.
    last_delta: Option<u64>,
    /// The first write error; recording goes on and finalizing reports it.
    error: Option<String>,
    /// What was written to the target, once it was (the journal is removed then).
    written: Option<WrittenReplay>,
}

/// A journal shared with the panic hook.
pub type SharedJournal = Arc<Mutex<Journal>>;

/// The journal a panic hook finalizes, if one is recording.
static ACTIVE: Mutex<Option<std::sync::Weak<Mutex<Journal>>>> = Mutex::new(None);

impl Journal {
    /// Starts the journal of a recording into `target`, with `header`'s version, engine, seed,
    /// start tick and scene. Refuses to start over a journal an earlier run left.
    pub fn create(target: &Path, header: &Replay) -> Result<SharedJournal, ReplayError> {
        let path = journal_path(target);
        let io = |message: String| ReplayError::Io {
            file: path.clone(),
            message,
        };
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => io(
                    "an unfinished recording from an earlier run is here; play it (`rusting \
                     replay info` reads it), move it away, then record again"
                        .to_owned(),
                ),
                _ => io(e.to_string()),
            })?;
        let mut empty = header.clone();
        empty.frames.clear();
        empty.hashes.clear();
        empty.details.clear();
        let json = serde_json::to_vec(&empty).expect("a replay serializes");
        let mut bytes = JOURNAL_MAGIC.to_vec();
        bytes.extend_from_slice(&JOURNAL_VERSION.to_le_bytes());
        write_varint(&mut bytes, json.len() as u64);
        bytes.extend_from_slice(&json);
        let mut out = BufWriter::with_capacity(64 * 1024, file);
        out.write_all(&bytes)
            .and_then(|()| out.flush())
            .map_err(|e| io(e.to_string()))?;
        let journal = Arc::new(Mutex::new(Journal {
            path,
            target: target.to_owned(),
            out,
            record: Vec::with_capacity(64),
            tick: header.start_tick,
            last_delta: None,
            error: None,
            written: None,
        }));
        if let Ok(mut active) = ACTIVE.lock() {
            *active = Some(Arc::downgrade(&journal));
        }
        install_panic_hook();
        Ok(journal)
    }

    /// Appends the record built in `self.record`.
    fn append(&mut self) {
        if self.written.is_some() {
            self.record.clear();
            return;
        }
        if let Err(e) = self.out.write_all(&self.record)
            && self.error.is_none()
        {
            self.error = Some(e.to_string());
        }
        self.record.clear();
    }

    /// Hands everything appended so far to the operating system: the end of a frame.
    pub fn flush(&mut self) {
        if let Err(e) = self.out.flush()
            && self.error.is_none()
        {
            self.error = Some(e.to_string());
        }
    }

    /// Appends a frame.
    pub fn frame(&mut self, frame: ReplayFrame) {
        let same = frame.input.is_none()
            && frame.start_tick == self.tick
            && self.last_delta == Some(frame.real_delta_ns);
        if same {
            self.record.push(SAME_FRAME);
        } else {
            self.record.push(FRAME);
            write_varint(&mut self.record, frame.real_delta_ns);
            write_varint(&mut self.record, frame.start_tick);
            match &frame.input {
                Some(input) => {
                    self.record.push(1);
                    let json = serde_json::to_vec(input).expect("input serializes");
                    write_varint(&mut self.record, json.len() as u64);
                    self.record.extend_from_slice(&json);
                }
                None => self.record.push(0),
            }
        }
        self.last_delta = Some(frame.real_delta_ns);
        self.tick = frame.start_tick;
        self.append();
    }

    /// Appends a tick's hash.
    pub fn hash(&mut self, tick: u64, hash: u64) {
        if Some(tick) == self.tick.checked_add(1) {
            self.record.push(HASH);
        } else {
            self.record.push(HASH_AT);
            write_varint(&mut self.record, tick);
        }
        self.record.extend_from_slice(&hash.to_le_bytes());
        self.tick = tick;
        self.append();
    }

    /// Appends a state detail.
    pub fn detail(&mut self, detail: &super::detail::StateDetail) {
        let json = serde_json::to_vec(detail).expect("a detail serializes");
        self.record.push(DETAIL);
        write_varint(&mut self.record, json.len() as u64);
        self.record.extend_from_slice(&json);
        self.append();
    }

    /// Appends the outside entries that entered a tick.
    pub fn outside(&mut self, entered: &OutsideTick) {
        self.record.push(OUTSIDE);
        write_varint(&mut self.record, entered.tick);
        write_outside_entries(&mut self.record, &entered.entries);
        self.append();
    }

    /// Appends a rollback to `tick`.
    pub fn rewind(&mut self, tick: u64) {
        self.record.push(REWIND);
        write_varint(&mut self.record, tick);
        self.tick = tick;
        self.last_delta = None;
        self.append();
    }

    /// Writes the replay to the target atomically and removes the journal. A compact target is
    /// written by streaming the journal through in passes (`journal_finish`: memory does not grow
    /// with the recording's length); a JSON target, or a replay the compact form cannot hold, is
    /// read whole first. Once finalized, returns what was written again.
    pub fn finalize(&mut self) -> Result<WrittenReplay, ReplayError> {
        if let Some(written) = &self.written {
            return Ok(written.clone());
        }
        self.flush();
        if let Some(message) = self.error.clone() {
            return Err(ReplayError::Io {
                file: self.path.clone(),
                message: format!("the recording journal could not be written: {message}"),
            });
        }
        let compact = self.target.extension().is_some_and(|e| e == "rply");
        let streamed = if compact {
            finish_compact(&self.path, &self.target)?
        } else {
            None
        };
        let written = match streamed {
            Some(written) => written,
            None => {
                let replay = read_journal(&self.path)?;
                replay.write(&self.target)?;
                WrittenReplay::of(&replay, &self.target)
            }
        };
        self.written = Some(written.clone());
        std::fs::remove_file(&self.path).map_err(|e| ReplayError::Io {
            file: self.path.clone(),
            message: e.to_string(),
        })?;
        if let Ok(mut active) = ACTIVE.try_lock() {
            *active = None;
        }
        Ok(written)
    }
}

/// Installs, once per process, a panic hook that runs [`finalize_after_panic`] and then the hook
/// that was there before: a game built with `panic = "abort"` never unwinds back to the code that
/// finishes its recording.
fn install_panic_hook() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // A deadline job's panic is caught where the job ran, and the run goes on to the
            // job's due tick (where it stops): the recording is finished then, not now.
            if !(cfg!(panic = "unwind") && crate::jobs::running_job().is_some()) {
                finalize_after_panic();
            }
            previous(info);
        }));
    });
}

/// Finalizes the recording in progress, if any, from a panic hook: flushes its journal, writes
/// the replay to its target and removes the journal. Never blocks: a journal locked by the panicking
/// thread is left as it is on disk (still a readable replay).
pub fn finalize_after_panic() {
    let Some(journal) = ACTIVE
        .try_lock()
        .ok()
        .and_then(|active| active.as_ref().and_then(std::sync::Weak::upgrade))
    else {
        return;
    };
    let Ok(mut journal) = journal.try_lock() else {
        return;
    };
    if let Err(error) = journal.finalize() {
        eprintln!("error: the recording could not be finalized after the panic: {error}");
    }
}

/// Whether `bytes` start like a journal.
pub fn is_journal(bytes: &[u8]) -> bool {
    bytes.starts_with(JOURNAL_MAGIC)
}

pub use super::journal_read::{from_journal, read_journal};

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if a journal cut inside a record is refused, if the cut record is read, if rewinds
    /// are not applied, or if repeated frames lose their start tick.
    #[test]
    fn a_cut_journal_reads_up_to_its_last_whole_record() {
        let dir = std::env::temp_dir().join(format!("rusting-journal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("s.rply");
        let header = Replay {
            engine_version: "x".into(),
            ..Replay::empty(7, 0, None, None)
        };
        let journal = Journal::create(&target, &header).unwrap();
        {
            let mut j = journal.lock().unwrap();
            let frame = |start_tick| ReplayFrame {
                real_delta_ns: 5,
                start_tick,
                input: None,
            };
            j.frame(frame(0));
            j.hash(1, 0xaa);
            j.frame(frame(1));
            j.hash(2, 0xbb);
            j.rewind(1);
            j.frame(frame(1));
            j.hash(2, 0xcc);
            j.frame(frame(2));
            j.hash(3, 0xdd);
            j.flush();
        }
        assert!(
            Journal::create(&target, &header).is_err(),
            "a second journal over the first"
        );
        let bytes = std::fs::read(journal_path(&target)).unwrap();
        let whole = from_journal(&bytes, Path::new("s.rply.journal")).unwrap();
        let ticks: Vec<u64> = whole.frames.iter().map(|f| f.start_tick).collect();
        assert_eq!(ticks, [0, 1, 2]);
        assert_eq!(
            whole.hashes,
            [
                (1, "00000000000000aa"),
                (2, "00000000000000cc"),
                (3, "00000000000000dd")
            ]
            .map(|(t, h)| (t, h.to_owned()))
        );
        // Every cut is a replay up to its last whole record.
        for cut in (bytes.len() - 30)..bytes.len() {
            let part = from_journal(&bytes[..cut], Path::new("s.rply.journal")).unwrap();
            assert!(part.hashes.len() <= 3 && part.frames.len() <= 3);
        }
        let mut broken = bytes.clone();
        let last_record = broken.len() - 10;
        broken[last_record] = 0x7f;
        let error = from_journal(&broken, Path::new("s.rply.journal")).unwrap_err();
        assert!(
            error.to_string().contains("an unknown record 0x7f"),
            "{error}"
        );
        let written = journal.lock().unwrap().finalize().unwrap();
        assert_eq!((written.frames, written.ticks), (3, 3));
        assert!(!journal_path(&target).exists());
        assert_eq!(Replay::load(&target).unwrap(), whole.with_short_hashes());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
