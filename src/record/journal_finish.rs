//! Finishing a recording: its journal written as the compact replay at its target, streamed, so
//! the replay is never in memory.
//!
//! The compact form (`replay_compact`) puts every frame group before every hash and counts each
//! section before it; the journal interleaves frames and hashes, and a rewind voids what it
//! recorded before for later ticks. So the journal is read in passes: one for its rewinds, one to
//! count what survives them, then one per section to write it. What is held at any time: the
//! rewinds (two numbers each; none unless the game rolled back), one group of frames, one record,
//! and the reader's and writer's buffers. An hour of the starter (216,000 ticks) finishes within
//! 2 MB of what the game held (`finishing_a_long_recording_stays_in_bounded_memory`), where
//! reading it whole took about 40 MB.
//!
//! A replay the compact form cannot hold (hashes that do not follow on tick by tick, a scene
//! hash that is not hex) is left to the whole-replay path, which writes JSON. This module must
//! never collect a replay's frames or hashes.

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use super::journal_read::{JournalReader, Record};
use super::replay::{Replay, ReplayError, max_frames};
use super::replay_compact::{
    FrameGroups, compact_header, short_hash, write_detail, write_group, write_outside_tick,
    write_varint,
};
use crate::runtime::RuntimeInput;
use crate::runtime::json_file::write_atomically_with;

/// A finished recording: where its replay is and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenReplay {
    /// The replay file.
    pub path: PathBuf,
    /// The frames it holds.
    pub frames: u64,
    /// The ticks it holds (one hash each).
    pub ticks: u64,
    /// The file's size in bytes.
    pub bytes: u64,
}

impl WrittenReplay {
    /// What `replay`, written at `path`, holds.
    pub(crate) fn of(replay: &Replay, path: &Path) -> WrittenReplay {
        WrittenReplay {
            path: path.to_owned(),
            frames: replay.frames.len() as u64,
            ticks: replay.hashes.len() as u64,
            bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
        }
    }
}

/// The journal's rewinds, in journal order: `(record index, the earliest tick it or any later
/// rewind goes back to)`. A record survives when no rewind after it goes back past its tick, so
/// the running minimum from the end is all that is kept of each.
struct Rewinds(Vec<(u64, u64)>);

impl Rewinds {
    fn scan(journal: &Path) -> Result<Rewinds, ReplayError> {
        let mut reader = open(journal)?;
        let mut rewinds = Vec::new();
        let mut index = 0u64;
        while let Some(record) = reader.next_record()? {
            if let Record::Rewind(to) = record {
                rewinds.push((index, to));
            }
            index += 1;
        }
        for k in (1..rewinds.len()).rev() {
            rewinds[k - 1].1 = rewinds[k - 1].1.min(rewinds[k].1);
        }
        Ok(Rewinds(rewinds))
    }
}

/// Opens the journal at `path` for one pass.
fn open(path: &Path) -> Result<JournalReader<BufReader<std::fs::File>>, ReplayError> {
    let file = std::fs::File::open(path).map_err(|e| ReplayError::Io {
        file: path.to_owned(),
        message: e.to_string(),
    })?;
    JournalReader::open(BufReader::with_capacity(64 * 1024, file), path)
}

/// One pass over the records of a journal that no later rewind voids, in order (the rewinds
/// themselves left out): the records a replay read whole would keep.
struct Survivors<'r> {
    reader: JournalReader<BufReader<std::fs::File>>,
    rewinds: &'r [(u64, u64)],
    /// The index of the next record.
    index: u64,
    /// The first rewind after the record read last.
    next_rewind: usize,
}

impl<'r> Survivors<'r> {
    fn open(journal: &Path, rewinds: &'r Rewinds) -> Result<Survivors<'r>, ReplayError> {
        Ok(Survivors {
            reader: open(journal)?,
            rewinds: &rewinds.0,
            index: 0,
            next_rewind: 0,
        })
    }

    fn next(&mut self) -> Result<Option<Record>, ReplayError> {
        while let Some(record) = self.reader.next_record()? {
            let index = self.index;
            self.index += 1;
            while self
                .rewinds
                .get(self.next_rewind)
                .is_some_and(|&(at, _)| at <= index)
            {
                self.next_rewind += 1;
            }
            let back_to = self.rewinds.get(self.next_rewind).map(|&(_, to)| to);
            let kept = |tick: u64, starts: bool| {
                back_to.is_none_or(|to| if starts { tick < to } else { tick <= to })
            };
            let survives = match &record {
                Record::Frame(frame) => kept(frame.start_tick, true),
                Record::Hash { tick, .. } => kept(*tick, false),
                Record::Detail(detail) => kept(detail.tick, false),
                Record::Outside(entered) => kept(entered.tick, false),
                Record::Rewind(_) => false,
            };
            if survives {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }
}

/// What survives in a journal, counted.
#[derive(Default)]
struct Counts {
    frames: u64,
    groups: u64,
    ticks: u64,
    details: u64,
    outside: u64,
}

/// Writes the journal at `journal` as a compact replay at `target` (atomically), reading it in
/// passes (see the module docs). `Ok(None)` when the compact form cannot hold the replay.
pub(crate) fn finish_compact(
    journal: &Path,
    target: &Path,
) -> Result<Option<WrittenReplay>, ReplayError> {
    let rewinds = Rewinds::scan(journal)?;
    let mut pass = Survivors::open(journal, &rewinds)?;
    let header = pass.reader.header().clone();
    let Some(head) = compact_header(&header) else {
        return Ok(None);
    };
    let mut counts = Counts::default();
    let mut groups = FrameGroups::<()>::default();
    let mut outside_seen = false;
    while let Some(record) = pass.next()? {
        match record {
            Record::Frame(frame) => {
                counts.frames += 1;
                let closed = groups.push(
                    frame.real_delta_ns,
                    frame.start_tick,
                    frame.input.map(|_| ()),
                );
                counts.groups += u64::from(closed.is_some());
            }
            Record::Hash { tick, .. } => {
                if header.start_tick.checked_add(counts.ticks + 1) != Some(tick) {
                    return Ok(None);
                }
                counts.ticks += 1;
            }
            Record::Detail(_) => counts.details += 1,
            Record::Outside(_) => outside_seen = true,
            Record::Rewind(_) => {}
        }
    }
    let end = header.start_tick + counts.ticks;
    counts.groups += groups.finish(end).iter().flatten().count() as u64;
    if counts.frames > max_frames(counts.ticks) {
        let reader = &pass.reader;
        return Err(reader.corrupt(
            reader.record_start(),
            "more frames than a replay of its ticks may hold",
        ));
    }
    if outside_seen {
        // Outside results are written before their tick runs: a journal cut during that tick
        // holds them without the tick's hash, and they never counted.
        let mut pass = Survivors::open(journal, &rewinds)?;
        while let Some(record) = pass.next()? {
            if let Record::Outside(entered) = record
                && entered.tick <= end
            {
                counts.outside += 1;
            }
        }
    }
    let io = |e: std::io::Error| ReplayError::Io {
        file: target.to_owned(),
        message: e.to_string(),
    };
    write_atomically_with(target, io, |out| {
        out.write_all(&head).map_err(io)?;
        write_sections(journal, &rewinds, &counts, end, out)
    })?;
    Ok(Some(WrittenReplay {
        path: target.to_owned(),
        frames: counts.frames,
        ticks: counts.ticks,
        bytes: std::fs::metadata(target).map_err(io)?.len(),
    }))
}

/// Writes the compact form's sections after the header: the frame groups, the hashes, the
/// details and the outside entries, each counted first, each from a pass of its own.
fn write_sections(
    journal: &Path,
    rewinds: &Rewinds,
    counts: &Counts,
    end: u64,
    out: &mut dyn Write,
) -> Result<(), ReplayError> {
    let mut bytes = Vec::with_capacity(256);
    let mut emit = |bytes: &mut Vec<u8>| {
        let written = out.write_all(bytes);
        bytes.clear();
        written.map_err(|e| ReplayError::Io {
            file: journal.to_owned(),
            message: format!("writing the replay: {e}"),
        })
    };
    let changed = |what: &str| ReplayError::Io {
        file: journal.to_owned(),
        message: format!("the journal's {what} changed while the replay was written"),
    };
    write_varint(&mut bytes, counts.groups);
    emit(&mut bytes)?;
    let mut groups = FrameGroups::<RuntimeInput>::default();
    let mut written = 0u64;
    let mut pass = Survivors::open(journal, rewinds)?;
    while let Some(record) = pass.next()? {
        if let Record::Frame(frame) = record
            && let Some(group) = groups.push(frame.real_delta_ns, frame.start_tick, frame.input)
        {
            write_group(&mut bytes, &group);
            emit(&mut bytes)?;
            written += 1;
        }
    }
    for group in groups.finish(end).iter().flatten() {
        write_group(&mut bytes, group);
        emit(&mut bytes)?;
        written += 1;
    }
    if written != counts.groups {
        return Err(changed("frames"));
    }
    write_varint(&mut bytes, counts.ticks);
    emit(&mut bytes)?;
    let mut written = 0u64;
    let mut pass = Survivors::open(journal, rewinds)?;
    while let Some(record) = pass.next()? {
        if let Record::Hash { hash, .. } = record {
            bytes.extend_from_slice(&short_hash(hash));
            emit(&mut bytes)?;
            written += 1;
        }
    }
    if written != counts.ticks {
        return Err(changed("hashes"));
    }
    if counts.details > 0 || counts.outside > 0 {
        write_varint(&mut bytes, counts.details);
        emit(&mut bytes)?;
        let mut written = 0u64;
        let mut pass = Survivors::open(journal, rewinds)?;
        while let Some(record) = pass.next()? {
            if let Record::Detail(detail) = record {
                write_detail(&mut bytes, &detail);
                emit(&mut bytes)?;
                written += 1;
            }
        }
        if written != counts.details {
            return Err(changed("details"));
        }
    }
    if counts.outside > 0 {
        write_varint(&mut bytes, counts.outside);
        emit(&mut bytes)?;
        let mut written = 0u64;
        let mut pass = Survivors::open(journal, rewinds)?;
        while let Some(record) = pass.next()? {
            if let Record::Outside(entered) = record
                && entered.tick <= end
            {
                write_outside_tick(&mut bytes, &entered);
                emit(&mut bytes)?;
                written += 1;
            }
        }
        if written != counts.outside {
            return Err(changed("outside entries"));
        }
    }
    Ok(())
}
