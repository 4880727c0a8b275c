//! Reading a recording journal (its layout is in `replay_journal`, its marks in `journal_format`) one record at a time, from its
//! bytes or straight from its file.
//!
//! [`JournalReader`] is what a crashed recording's journal is read with ([`from_journal`]) and
//! what finishing a recording streams through (`journal_finish`), so neither holds more than one
//! record and its own buffer. A record cut short at the end is what a kill interrupted: reading
//! stops before it and everything before it stands. A length is read as its bytes arrive, never
//! allocated from the number the file claims. This module must never write.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use super::detail::StateDetail;
use super::journal_format::{
    DETAIL, FRAME, HASH, HASH_AT, JOURNAL_MAGIC, JOURNAL_VERSION, OUTSIDE, REWIND, SAME_FRAME,
};
use super::replay::{
    MAX_DETAIL_JSON_BYTES, MAX_INPUT_JSON_BYTES, Replay, ReplayError, ReplayFrame,
};
use crate::jobs::{
    MAX_CHANNEL_BYTES, MAX_OUTSIDE_BYTES, MAX_OUTSIDE_PER_TICK, OutsideEntry, OutsideTick,
};
use crate::runtime::RuntimeInput;

/// One record of a journal, as the recording meant it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Record {
    /// A frame (a repeated frame made whole: the frame before's delta, starting at the tick the
    /// recording stands at, with no new input).
    Frame(ReplayFrame),
    /// The hash after `tick`.
    Hash { tick: u64, hash: u64 },
    /// A state detail.
    Detail(StateDetail),
    /// The outside entries that entered a tick.
    Outside(OutsideTick),
    /// A rollback to the tick: frames recorded before that started at or after it, and hashes,
    /// details and outside entries recorded before for ticks after it, are void.
    Rewind(u64),
}

/// Reads a journal's records in order (see the module docs).
pub(crate) struct JournalReader<R> {
    input: R,
    file: PathBuf,
    /// The journal's header: a replay with no frames, hashes, details or outside entries.
    header: Replay,
    /// Bytes read so far.
    at: u64,
    /// Where the record read last started.
    record_start: u64,
    /// The tick the recording stands at.
    tick: u64,
    /// The last frame's delta (`None` after a rewind).
    last_delta: Option<u64>,
    /// The bytes of the last length-prefixed field read.
    buffer: Vec<u8>,
}

/// What reading one field found: its value, or the end of the bytes (a record cut short).
type Field<T> = Result<Option<T>, ReplayError>;

impl<R: BufRead> JournalReader<R> {
    /// Reads the journal's header from `input`; `file` names the journal in errors.
    pub fn open(input: R, file: &Path) -> Result<Self, ReplayError> {
        let mut reader = JournalReader {
            input,
            file: file.to_owned(),
            header: Replay::empty(0, 0, None, None),
            at: 0,
            record_start: 0,
            tick: 0,
            last_delta: None,
            buffer: Vec::new(),
        };
        let mut magic = [0u8; 4];
        let mut version = [0u8; 4];
        let whole = reader.exact(&mut magic)?
            && &magic == JOURNAL_MAGIC
            && reader.exact(&mut version)?
            && match reader.varint()? {
                Some(length) => reader.take(length)?,
                None => false,
            };
        if !whole {
            return Err(reader.corrupt(reader.at, "no complete header"));
        }
        let version = u32::from_le_bytes(version);
        if version != JOURNAL_VERSION {
            return Err(reader.corrupt(
                4,
                &format!("journal version {version} (this engine reads {JOURNAL_VERSION})"),
            ));
        }
        let mut header: Replay = serde_json::from_slice(&reader.buffer)
            .map_err(|e| reader.corrupt(reader.at, &format!("a bad header: {e}")))?;
        header.frames.clear();
        header.hashes.clear();
        header.details.clear();
        header.outside.clear();
        reader.tick = header.start_tick;
        reader.header = header;
        Ok(reader)
    }

    /// The journal's header: the replay's version, engine, seed, start tick, scene and layout.
    pub fn header(&self) -> &Replay {
        &self.header
    }

    /// Where the record read last started, in bytes from the journal's start.
    pub fn record_start(&self) -> u64 {
        self.record_start
    }

    /// A corrupt-journal error at byte `at`.
    pub fn corrupt(&self, at: u64, message: &str) -> ReplayError {
        ReplayError::Corrupt {
            file: self.file.clone(),
            line: 1,
            column: usize::try_from(at).unwrap_or(usize::MAX).saturating_add(1),
            message: format!("recording journal: {message} at byte {at}"),
        }
    }

    fn io(&self, error: &std::io::Error) -> ReplayError {
        ReplayError::Io {
            file: self.file.clone(),
            message: error.to_string(),
        }
    }

    /// Fills `out`; `false` when the bytes end first.
    fn exact(&mut self, out: &mut [u8]) -> Result<bool, ReplayError> {
        let mut filled = 0;
        while filled < out.len() {
            match self.input.read(&mut out[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io(&e)),
            }
        }
        self.at += filled as u64;
        Ok(filled == out.len())
    }

    fn byte(&mut self) -> Field<u8> {
        let mut byte = [0u8];
        Ok(self.exact(&mut byte)?.then_some(byte[0]))
    }

    fn u64(&mut self) -> Field<u64> {
        let mut bytes = [0u8; 8];
        Ok(self.exact(&mut bytes)?.then(|| u64::from_le_bytes(bytes)))
    }

    /// A LEB128 number; an overlong one reads as a cut record, which stops reading.
    fn varint(&mut self) -> Field<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(byte) = self.byte()? else {
                return Ok(None);
            };
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(Some(value));
            }
        }
        Ok(None)
    }

    /// Reads `length` bytes into the buffer as they arrive; `false` when the bytes end first.
    fn take(&mut self, length: u64) -> Result<bool, ReplayError> {
        self.buffer.clear();
        let read = (&mut self.input)
            .take(length)
            .read_to_end(&mut self.buffer)
            .map_err(|e| self.io(&e))?;
        self.at += read as u64;
        Ok(read as u64 == length)
    }

    /// The next record, `None` at the end of the journal or before a record cut short.
    pub fn next_record(&mut self) -> Field<Record> {
        /// The field's value, or the end of reading when the bytes ended inside the record.
        macro_rules! field {
            ($read:expr) => {
                match $read? {
                    Some(value) => value,
                    None => return Ok(None),
                }
            };
        }
        let start = self.at;
        self.record_start = start;
        let tag = field!(self.byte());
        let record = match tag {
            FRAME => {
                let delta = field!(self.varint());
                let start_tick = field!(self.varint());
                let input = match field!(self.byte()) {
                    0 => None,
                    1 => {
                        let length = field!(self.varint());
                        if length > MAX_INPUT_JSON_BYTES {
                            return Err(self.corrupt(
                                start,
                                &format!(
                                    "an input of {length} bytes (at most {MAX_INPUT_JSON_BYTES})"
                                ),
                            ));
                        }
                        if !self.take(length)? {
                            return Ok(None);
                        }
                        match serde_json::from_slice::<RuntimeInput>(&self.buffer) {
                            Ok(input) => Some(input),
                            Err(_) => {
                                return Err(self.corrupt(start, "an input that does not parse"));
                            }
                        }
                    }
                    _ => return Err(self.corrupt(start, "a bad input flag")),
                };
                self.last_delta = Some(delta);
                self.tick = start_tick;
                Record::Frame(ReplayFrame {
                    real_delta_ns: delta,
                    start_tick,
                    input,
                })
            }
            SAME_FRAME => match self.last_delta {
                Some(delta) => Record::Frame(ReplayFrame {
                    real_delta_ns: delta,
                    start_tick: self.tick,
                    input: None,
                }),
                None => return Err(self.corrupt(start, "a repeated frame with none before it")),
            },
            HASH | HASH_AT => {
                let at = if tag == HASH {
                    self.tick.checked_add(1)
                } else {
                    Some(field!(self.varint()))
                };
                let hash = field!(self.u64());
                let Some(at) = at else {
                    return Err(self.corrupt(start, "a tick that overflows"));
                };
                self.tick = at;
                Record::Hash { tick: at, hash }
            }
            DETAIL => {
                let length = field!(self.varint());
                if length > MAX_DETAIL_JSON_BYTES {
                    return Err(self.corrupt(
                        start,
                        &format!(
                            "a state detail of {length} bytes (at most {MAX_DETAIL_JSON_BYTES})"
                        ),
                    ));
                }
                if !self.take(length)? {
                    return Ok(None);
                }
                match serde_json::from_slice(&self.buffer) {
                    Ok(detail) => Record::Detail(detail),
                    Err(_) => return Err(self.corrupt(start, "a state detail that does not parse")),
                }
            }
            OUTSIDE => {
                let tick = field!(self.varint());
                let count = field!(self.varint());
                if count == 0 || count > MAX_OUTSIDE_PER_TICK as u64 {
                    return Err(self.corrupt(start, "an outside tick with a bad entry count"));
                }
                let mut entries = Vec::new();
                for _ in 0..count {
                    entries.push(field!(self.outside_entry(start)));
                }
                Record::Outside(OutsideTick { tick, entries })
            }
            REWIND => {
                let to = field!(self.varint());
                self.tick = to;
                self.last_delta = None;
                Record::Rewind(to)
            }
            _ => return Err(self.corrupt(start, &format!("an unknown record {tag:#04x}"))),
        };
        Ok(Some(record))
    }

    /// One outside entry of the record that started at `start`, its lengths checked against
    /// their limits before anything is read.
    fn outside_entry(&mut self, start: u64) -> Field<OutsideEntry> {
        let Some(length) = self.varint()? else {
            return Ok(None);
        };
        if length == 0 || length > MAX_CHANNEL_BYTES as u64 {
            return Err(self.corrupt(
                start,
                &format!("an outside channel name of {length} bytes (1 to {MAX_CHANNEL_BYTES})"),
            ));
        }
        if !self.take(length)? {
            return Ok(None);
        }
        let Ok(channel) = String::from_utf8(self.buffer.clone()) else {
            return Err(self.corrupt(start, "an outside channel name that is not UTF-8"));
        };
        let Some(length) = self.varint()? else {
            return Ok(None);
        };
        if length > MAX_OUTSIDE_BYTES as u64 {
            return Err(self.corrupt(
                start,
                &format!("an outside entry of {length} bytes (at most {MAX_OUTSIDE_BYTES})"),
            ));
        }
        if !self.take(length)? {
            return Ok(None);
        }
        Ok(Some(OutsideEntry {
            channel,
            bytes: self.buffer.clone(),
        }))
    }
}

/// Reads the journal at `path` into a replay, up to its last complete record.
pub fn read_journal(path: &Path) -> Result<Replay, ReplayError> {
    let file = std::fs::File::open(path).map_err(|e| ReplayError::Io {
        file: path.to_owned(),
        message: e.to_string(),
    })?;
    read_records(JournalReader::open(
        std::io::BufReader::with_capacity(64 * 1024, file),
        path,
    )?)
}

/// Reads a journal; `file` names it in errors. A last record cut short is what a kill interrupted
/// and is left out.
pub fn from_journal(bytes: &[u8], file: &Path) -> Result<Replay, ReplayError> {
    read_records(JournalReader::open(bytes, file)?)
}

/// Every record of `reader` made into one replay, rewinds applied.
fn read_records<R: BufRead>(mut reader: JournalReader<R>) -> Result<Replay, ReplayError> {
    let mut replay = reader.header().clone();
    while let Some(record) = reader.next_record()? {
        match record {
            Record::Frame(frame) => replay.frames.push(frame),
            Record::Hash { tick, hash } => replay.hashes.push((tick, format!("{hash:016x}"))),
            Record::Detail(detail) => replay.details.push(detail),
            Record::Outside(entered) => replay.outside.push(entered),
            Record::Rewind(to) => {
                replay.frames.retain(|frame| frame.start_tick < to);
                replay.hashes.retain(|&(t, _)| t <= to);
                replay.details.retain(|d| d.tick <= to);
                replay.outside.retain(|o| o.tick <= to);
            }
        }
        if replay.frames.len() as u64 > super::replay::max_frames(replay.hashes.len() as u64) {
            return Err(reader.corrupt(
                reader.record_start(),
                "more frames than a replay of its ticks may hold",
            ));
        }
    }
    // Outside results are written before their tick runs: a journal cut during that tick holds
    // them without the tick's hash. The tick never finished, so they never counted.
    let end = replay.end_tick();
    replay.outside.retain(|entered| entered.tick <= end);
    Ok(replay)
}
