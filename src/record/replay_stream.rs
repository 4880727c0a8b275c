//! A replay read a window of ticks at a time: [`ReplayStream`], what a headless playback plays
//! from.
//!
//! A compact replay keeps an hour of the starter in about 1.6 MB, but as frames and hashes in
//! memory the same hour takes tens of megabytes. Playback only ever looks at the next frame and
//! the hashes of the ticks it runs, so the stream keeps the file's bytes and makes frames and
//! hashes one window at a time from them; what it holds beside the bytes is the replay's header,
//! its state details (a divergence is blamed on the next one) and its outside entries (fed to the
//! game as their ticks come). The whole file is checked when the stream opens, as
//! [`Replay::load`] checks it, so a window is never refused halfway through a playback. The
//! other forms (JSON, a recording journal) are read whole and given as one window.
//!
//! This module reads; it must never play a replay or step an app (`determinism` does).

use std::path::{Path, PathBuf};

use super::replay::{Replay, ReplayError, ReplayFrame};
use super::replay_compact::{self, COMPACT_MAGIC, GroupFrames, Parsed, Reader};

/// A replay read a window of ticks at a time; see the module docs.
#[derive(Debug)]
pub struct ReplayStream {
    header: Replay,
    total: u64,
    windows: ReplayWindows,
}

/// Where a [`ReplayStream`] makes its next window from.
#[derive(Debug)]
pub struct ReplayWindows {
    source: Source,
}

#[derive(Debug)]
enum Source {
    /// A compact file's bytes and the place the next window starts.
    Compact(Box<CompactCursor>),
    /// A replay read whole: its one window (frames and hashes), until it is taken.
    Whole(Option<Box<Replay>>),
}

/// The next frame and hash of a compact replay's bytes.
#[derive(Debug)]
struct CompactCursor {
    bytes: Vec<u8>,
    file: PathBuf,
    /// The header every window repeats (no frames, hashes, details or outside entries).
    frame_header: Replay,
    /// Frame groups not started yet, and the byte where the next starts.
    groups_left: u64,
    group_at: usize,
    /// The group being played out.
    group: Option<GroupFrames>,
    /// Frames made so far (the index of the next).
    frames_made: u64,
    /// The byte of the next hash, and its width.
    hash_at: usize,
    hash_bytes: usize,
    /// The tick the next frame starts at.
    next_tick: u64,
}

impl ReplayStream {
    /// Opens the replay at `path` in any form and checks all of it, as [`Replay::load`] does.
    pub fn open(path: &Path) -> Result<ReplayStream, ReplayError> {
        let bytes = std::fs::read(path).map_err(|e| ReplayError::Io {
            file: path.to_owned(),
            message: e.to_string(),
        })?;
        ReplayStream::from_bytes(bytes, path)
    }

    /// [`ReplayStream::open`] on a file's `bytes`; `file` names it in errors.
    pub fn from_bytes(bytes: Vec<u8>, file: &Path) -> Result<ReplayStream, ReplayError> {
        if !bytes.starts_with(COMPACT_MAGIC) {
            let mut replay = Replay::load_bytes(&bytes, file)?;
            let window = Replay {
                frames: std::mem::take(&mut replay.frames),
                hashes: std::mem::take(&mut replay.hashes),
                ..replay.clone_without_ticks()
            };
            return Ok(ReplayStream {
                header: replay,
                total: window.hashes.len() as u64,
                windows: ReplayWindows {
                    source: Source::Whole(Some(Box::new(window))),
                },
            });
        }
        let Parsed {
            replay: header,
            total,
            group_count,
            groups_at,
            hashes_at,
            hash_bytes,
            ..
        } = replay_compact::parse(&bytes, file, false)?;
        // The frames and hashes were checked as they were read (a compact file's frames follow
        // from its groups, and its hashes from its start tick); the rest is the replay's own.
        header.check_parts(file, header.start_tick + total)?;
        let frame_header = header.clone_without_ticks();
        Ok(ReplayStream {
            windows: ReplayWindows {
                source: Source::Compact(Box::new(CompactCursor {
                    bytes,
                    file: file.to_owned(),
                    frame_header,
                    groups_left: group_count,
                    group_at: groups_at,
                    group: None,
                    frames_made: 0,
                    hash_at: hashes_at,
                    hash_bytes,
                    next_tick: header.start_tick,
                })),
            },
            header,
            total,
        })
    }

    /// The replay without its frames and hashes: its seed, start tick, scene and layout, and
    /// all its state details and outside entries.
    pub fn header(&self) -> &Replay {
        &self.header
    }

    /// How many ticks the replay holds.
    pub fn total_ticks(&self) -> u64 {
        self.total
    }

    /// The header and the windows apart, so that a player can read one while taking the other.
    pub fn split(&mut self) -> (&Replay, &mut ReplayWindows) {
        (&self.header, &mut self.windows)
    }

    /// The whole replay, as [`Replay::load`] gives it (for what seeks anywhere in it).
    pub fn into_replay(mut self) -> Result<Replay, ReplayError> {
        if let Some(rest) = self.windows.next_window(u64::MAX)? {
            self.header.frames = rest.frames;
            self.header.hashes = rest.hashes;
        }
        Ok(self.header)
    }
}

impl ReplayWindows {
    /// The next window: the frames from where the last window ended that start within `ticks`
    /// ticks of it (whole frames, so a window may run a frame's ticks past the bound), and the
    /// hashes of every tick they run, as a [`Replay`] whose start tick is its first frame's
    /// (without state details or outside entries: those are the header's). `None` once every
    /// frame has been given.
    pub fn next_window(&mut self, ticks: u64) -> Result<Option<Replay>, ReplayError> {
        match &mut self.source {
            Source::Whole(whole) => Ok(whole.take().map(|window| *window)),
            Source::Compact(cursor) => cursor.next_window(ticks),
        }
    }
}

impl CompactCursor {
    fn next_window(&mut self, ticks: u64) -> Result<Option<Replay>, ReplayError> {
        let start = self.next_tick;
        let bound = start.saturating_add(ticks);
        let mut frames = Vec::new();
        while self.next_tick < bound || frames.is_empty() {
            let Some(frame) = self.next_frame()? else {
                break;
            };
            frames.push(frame);
        }
        if frames.is_empty() {
            return Ok(None);
        }
        let ran = self.next_tick - start;
        let mut reader = Reader {
            bytes: &self.bytes,
            at: self.hash_at,
            file: &self.file,
        };
        let mut hashes = Vec::with_capacity(usize::try_from(ran).unwrap_or(0));
        for k in 0..ran {
            hashes.push((
                start + k + 1,
                replay_compact::read_hash(&mut reader, self.hash_bytes)?,
            ));
        }
        self.hash_at = reader.at;
        Ok(Some(Replay {
            start_tick: start,
            frames,
            hashes,
            ..self.frame_header.clone_without_ticks()
        }))
    }

    /// The next frame, from the group being played out or the next group.
    fn next_frame(&mut self) -> Result<Option<ReplayFrame>, ReplayError> {
        loop {
            if let Some(group) = &mut self.group
                && let Some(frame) = group.next()
            {
                self.next_tick = group.tick;
                self.frames_made += 1;
                return Ok(Some(frame));
            }
            if self.groups_left == 0 {
                return Ok(None);
            }
            let mut reader = Reader {
                bytes: &self.bytes,
                at: self.group_at,
                file: &self.file,
            };
            let group = replay_compact::read_group(&mut reader, self.frames_made)?;
            self.group_at = reader.at;
            self.groups_left -= 1;
            self.group = Some(group.frames(self.next_tick));
        }
    }
}
