//! The compact binary form of a [`Replay`]: about four bytes a tick.
//!
//! Layout (integers little-endian, `varint` = LEB128):
//!
//! ```text
//! "RPLY" magic, u32 format version, varint length + engine version bytes, u64 seed,
//! varint start tick, u8 flags (1: a scene, 2: a layout), [varint length + name bytes, u64 cooked
//! hash] when it has a scene, [varint length + the LayoutFingerprint as JSON] when it has a layout,
//! varint group count, then per group of identical frames:
//!   varint repeat, varint real delta (ns), varint ticks each frame ran,
//!   u8 has_input, [varint length + RuntimeInput JSON] (only on the group's first frame)
//! then varint hash count and one u32 per tick, the low 32 bits of its hash (ticks follow on from
//! the start tick; version 1 held a whole u64 a tick, and is still read),
//! then, when the replay holds state details or outside entries, varint detail count and per
//! detail varint length + the StateDetail as JSON,
//! then, when it holds outside entries, varint outside tick count and per tick varint tick,
//! varint entry count, per entry varint length + channel bytes, varint length + entry bytes.
//! ```
//!
//! Frames that repeat (same delta, same tick count, no new input) collapse into one group, and the
//! ticks of the hashes are implied, so a minute at 60 Hz takes about 15 KB before its state
//! details, nearly all of it the 3600 hashes. This module must never accept a malformed file silently: every read is checked.

use std::path::Path;

use super::replay::{
    FIRST_REPLAY_FORMAT_VERSION, MAX_DETAIL_JSON_BYTES, MAX_ENGINE_VERSION_BYTES,
    MAX_INPUT_JSON_BYTES, MAX_LAYOUT_JSON_BYTES, MAX_REPLAY_TICKS, MAX_SCENE_NAME_BYTES,
    REPLAY_FORMAT_VERSION, Replay, ReplayError, ReplayFrame,
};
use crate::jobs::{
    MAX_CHANNEL_BYTES, MAX_OUTSIDE_BYTES, MAX_OUTSIDE_PER_TICK, OutsideEntry, OutsideTick,
};
use crate::runtime::RuntimeInput;
use crate::scene::SceneIdentity;

/// The first bytes of a compact replay.
pub const COMPACT_MAGIC: &[u8; 4] = b"RPLY";

/// Appends `v` to `out` as a LEB128 varint (seven bits a byte, low bits first), as the compact
/// replay and the recording journal write their numbers.
pub fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Writes `replay` in the compact form. Returns `None` when its hashes do not follow on tick by
/// tick from its start (only the JSON form can hold such a replay).
pub fn to_compact(replay: &Replay) -> Option<Vec<u8>> {
    let contiguous = replay
        .hashes
        .iter()
        .enumerate()
        .all(|(k, (tick, _))| *tick == replay.start_tick + k as u64 + 1);
    if !contiguous {
        return None;
    }
    let end_tick = replay.start_tick + replay.hashes.len() as u64;
    let mut out = compact_header(replay)?;
    out.reserve(replay.hashes.len() * 8);
    let mut grouping = FrameGroups::default();
    let mut groups = Vec::new();
    for frame in &replay.frames {
        groups.extend(grouping.push(frame.real_delta_ns, frame.start_tick, frame.input.as_ref()));
    }
    groups.extend(grouping.finish(end_tick).into_iter().flatten());
    write_varint(&mut out, groups.len() as u64);
    for group in &groups {
        write_group(&mut out, group);
    }
    write_varint(&mut out, replay.hashes.len() as u64);
    for (_, hash) in &replay.hashes {
        let value = u64::from_str_radix(hash, 16).ok()?;
        out.extend_from_slice(&short_hash(value));
    }
    if !replay.details.is_empty() || !replay.outside.is_empty() {
        write_varint(&mut out, replay.details.len() as u64);
        for detail in &replay.details {
            write_detail(&mut out, detail);
        }
    }
    if !replay.outside.is_empty() {
        write_varint(&mut out, replay.outside.len() as u64);
        for entered in &replay.outside {
            write_outside_tick(&mut out, entered);
        }
    }
    Some(out)
}

/// A tick's hash as the compact form (version 2) keeps it: its low 32 bits, little-endian.
pub(crate) fn short_hash(hash: u64) -> [u8; 4] {
    (hash as u32).to_le_bytes()
}

/// The compact form's header, up to the frames: magic, version (always this engine's: the hashes
/// that follow are short), engine, seed, start tick, scene and layout. `None` when the scene's cooked hash is not hex (only the JSON form holds that).
pub(crate) fn compact_header(replay: &Replay) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(COMPACT_MAGIC);
    out.extend_from_slice(&REPLAY_FORMAT_VERSION.to_le_bytes());
    write_varint(&mut out, replay.engine_version.len() as u64);
    out.extend_from_slice(replay.engine_version.as_bytes());
    out.extend_from_slice(&replay.seed.to_le_bytes());
    write_varint(&mut out, replay.start_tick);
    out.push(u8::from(replay.scene.is_some()) | (u8::from(replay.layout.is_some()) << 1));
    if let Some(scene) = &replay.scene {
        write_varint(&mut out, scene.name.len() as u64);
        out.extend_from_slice(scene.name.as_bytes());
        let hash = u64::from_str_radix(&scene.cooked_hash, 16).ok()?;
        out.extend_from_slice(&hash.to_le_bytes());
    }
    if let Some(layout) = &replay.layout {
        let json = serde_json::to_vec(layout).expect("a layout serializes");
        write_varint(&mut out, json.len() as u64);
        out.extend_from_slice(&json);
    }
    Some(out)
}

/// Frames that repeat, as the compact form writes them: `repeat` frames of `delta` ns running
/// `ticks` ticks each, the first with `input`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FrameGroup<I> {
    pub repeat: u64,
    pub delta: u64,
    pub ticks: u64,
    pub input: Option<I>,
}

/// Groups frames one at a time, as they come: a frame joins the group before it when it has the
/// same delta, runs the same number of ticks and brings no new input. A frame's ticks are known
/// only when the next frame starts, so it is held until then; the frames' order is never read
/// back, which is what lets a recording be finished without holding its frames.
#[derive(Debug)]
pub(crate) struct FrameGroups<I> {
    /// The frame whose ticks are not known yet: `(delta, start tick, input)`.
    waiting: Option<(u64, u64, Option<I>)>,
    /// The group the waiting frame may join.
    open: Option<FrameGroup<I>>,
}

impl<I> Default for FrameGroups<I> {
    fn default() -> Self {
        FrameGroups {
            waiting: None,
            open: None,
        }
    }
}

impl<I> FrameGroups<I> {
    /// Takes the next frame; returns the group it closed, if any.
    pub fn push(&mut self, delta: u64, start_tick: u64, input: Option<I>) -> Option<FrameGroup<I>> {
        let closed = self
            .waiting
            .take()
            .and_then(|waiting| self.settle(waiting, start_tick));
        self.waiting = Some((delta, start_tick, input));
        closed
    }

    /// Ends the frames at `end_tick` (the last hashed tick): the last groups, in order.
    pub fn finish(mut self, end_tick: u64) -> [Option<FrameGroup<I>>; 2] {
        let closed = self
            .waiting
            .take()
            .and_then(|waiting| self.settle(waiting, end_tick));
        [closed, self.open.take()]
    }

    /// Places the waiting frame, whose ticks end at `next`: into the open group, or into a new
    /// one, closing the open group.
    fn settle(
        &mut self,
        (delta, start, input): (u64, u64, Option<I>),
        next: u64,
    ) -> Option<FrameGroup<I>> {
        let ticks = next.saturating_sub(start);
        if let Some(open) = &mut self.open
            && input.is_none()
            && open.delta == delta
            && open.ticks == ticks
        {
            open.repeat += 1;
            return None;
        }
        self.open.replace(FrameGroup {
            repeat: 1,
            delta,
            ticks,
            input,
        })
    }
}

/// Appends a group of frames as the compact form holds it.
pub(crate) fn write_group<I: std::borrow::Borrow<RuntimeInput>>(
    out: &mut Vec<u8>,
    group: &FrameGroup<I>,
) {
    write_varint(out, group.repeat);
    write_varint(out, group.delta);
    write_varint(out, group.ticks);
    match &group.input {
        Some(input) => {
            out.push(1);
            let json = serde_json::to_vec(input.borrow()).expect("input always serializes");
            write_varint(out, json.len() as u64);
            out.extend_from_slice(&json);
        }
        None => out.push(0),
    }
}

/// Appends a state detail as the compact form holds it.
pub(crate) fn write_detail(out: &mut Vec<u8>, detail: &super::detail::StateDetail) {
    let json = serde_json::to_vec(detail).expect("a detail serializes");
    write_varint(out, json.len() as u64);
    out.extend_from_slice(&json);
}

/// Appends the outside entries of one tick as the compact form holds them.
pub(crate) fn write_outside_tick(out: &mut Vec<u8>, entered: &OutsideTick) {
    write_varint(out, entered.tick);
    write_outside_entries(out, &entered.entries);
}

/// Appends `entries` as the compact replay and the journal hold them: varint count, then per
/// entry varint length + channel bytes, varint length + bytes.
pub(crate) fn write_outside_entries(out: &mut Vec<u8>, entries: &[OutsideEntry]) {
    write_varint(out, entries.len() as u64);
    for entry in entries {
        write_varint(out, entry.channel.len() as u64);
        out.extend_from_slice(entry.channel.as_bytes());
        write_varint(out, entry.bytes.len() as u64);
        out.extend_from_slice(&entry.bytes);
    }
}

/// Reads one outside entry from `bytes` at `*at`, moving past it: `None` when the bytes end
/// first, `Some(Err)` when a length is over its limit (checked before anything is taken) or the
/// channel is not UTF-8.
pub(crate) fn read_outside_entry(
    bytes: &[u8],
    at: &mut usize,
) -> Option<Result<OutsideEntry, String>> {
    let length = varint_at(bytes, at)?;
    if length == 0 || length > MAX_CHANNEL_BYTES as u64 {
        return Some(Err(format!(
            "an outside channel name of {length} bytes (1 to {MAX_CHANNEL_BYTES})"
        )));
    }
    let Ok(channel) = String::from_utf8(take_at(bytes, at, length as usize)?.to_vec()) else {
        return Some(Err("an outside channel name that is not UTF-8".to_owned()));
    };
    let length = varint_at(bytes, at)?;
    if length > MAX_OUTSIDE_BYTES as u64 {
        return Some(Err(format!(
            "an outside entry of {length} bytes (at most {MAX_OUTSIDE_BYTES})"
        )));
    }
    let bytes = take_at(bytes, at, length as usize)?.to_vec();
    Some(Ok(OutsideEntry { channel, bytes }))
}

/// A checked reader over the bytes.
pub(super) struct Reader<'a> {
    pub bytes: &'a [u8],
    pub at: usize,
    pub file: &'a Path,
}

impl Reader<'_> {
    fn corrupt(&self, what: &str) -> ReplayError {
        ReplayError::Corrupt {
            file: self.file.to_owned(),
            line: 1,
            column: self.at + 1,
            message: format!("compact replay: {what} at byte {}", self.at),
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8], ReplayError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.corrupt("truncated"));
        };
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u64(&mut self) -> Result<u64, ReplayError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("eight bytes"),
        ))
    }

    fn varint(&mut self) -> Result<u64, ReplayError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.take(1)?[0];
            value |= ((byte & 0x7f) as u64) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.corrupt("overlong number"))
    }

    /// A length of at most `limit` bytes of `what`, inside the file; past the limit, the error
    /// names the byte where the length starts.
    fn length_within(&mut self, limit: u64, what: &str) -> Result<usize, ReplayError> {
        let at = self.at;
        let n = self.varint()?;
        if n > limit {
            self.at = at;
            return Err(self.corrupt(&format!("{what} of {n} bytes (at most {limit})")));
        }
        if n > (self.bytes.len() - self.at) as u64 {
            return Err(self.corrupt("a length past the end of the file"));
        }
        Ok(n as usize)
    }
}

/// Reads a compact replay; `file` names it in errors.
pub fn from_compact(bytes: &[u8], file: &Path) -> Result<Replay, ReplayError> {
    let Parsed {
        mut replay, groups, ..
    } = parse(bytes, file, true)?;
    let frame_total: u64 = groups.iter().map(|g| g.repeat).sum();
    let mut frames = Vec::with_capacity(frame_total as usize);
    let mut tick = replay.start_tick;
    for group in groups {
        let mut made = group.frames(tick);
        frames.extend(&mut made);
        tick = made.tick;
    }
    replay.frames = frames;
    Ok(replay)
}

/// Frames that repeat: `repeat` frames of `delta` ns running `ticks` ticks each, the first with
/// `input`.
pub(super) struct Group {
    pub repeat: u64,
    pub delta: u64,
    pub ticks: u64,
    pub input: Option<RuntimeInput>,
}

impl Group {
    /// The group's frames, the first starting at `tick`.
    pub(super) fn frames(self, tick: u64) -> GroupFrames {
        GroupFrames {
            left: self.repeat,
            delta: self.delta,
            ticks: self.ticks,
            input: self.input,
            tick,
        }
    }
}

/// A [`Group`]'s frames, made one at a time: what reading a compact replay whole and a
/// [`ReplayStream`](super::ReplayStream) window both expand groups with.
#[derive(Debug)]
pub(super) struct GroupFrames {
    left: u64,
    delta: u64,
    ticks: u64,
    /// The group's input, until its first frame takes it.
    input: Option<RuntimeInput>,
    /// The tick the next frame starts at (after the last: the tick the group ends at).
    pub tick: u64,
}

impl Iterator for GroupFrames {
    type Item = ReplayFrame;

    fn next(&mut self) -> Option<ReplayFrame> {
        self.left = self.left.checked_sub(1)?;
        let frame = ReplayFrame {
            real_delta_ns: self.delta,
            start_tick: self.tick,
            input: self.input.take(),
        };
        self.tick += self.ticks;
        Some(frame)
    }
}

/// What `rusting replay info` prints of a replay, read without making its frames.
#[derive(Clone, Debug)]
pub struct ReplaySummary {
    /// The replay without its frames (`frames` is empty): header, hashes, details, outside.
    pub replay: Replay,
    /// How many frames it holds.
    pub frames: u64,
    /// The frames' real time, summed, in nanoseconds.
    pub real_ns: u128,
    /// How many frames carry an input change.
    pub input_changes: u64,
}

impl ReplaySummary {
    /// The summary of a replay read whole (its frames counted, then dropped).
    pub fn of(mut replay: Replay) -> ReplaySummary {
        let frames = std::mem::take(&mut replay.frames);
        ReplaySummary {
            replay,
            frames: frames.len() as u64,
            real_ns: frames.iter().map(|f| u128::from(f.real_delta_ns)).sum(),
            input_changes: frames.iter().filter(|f| f.input.is_some()).count() as u64,
        }
    }
}

/// Reads and checks a compact replay as [`from_compact`] and `Replay::check` do, without making a
/// frame: the memory it takes grows with the file's size, never with the frames the file counts
/// (ten million frames in 1.2 MB took 875 MB as frames).
pub fn summarize(bytes: &[u8], file: &Path) -> Result<ReplaySummary, ReplayError> {
    let Parsed { replay, groups, .. } = parse(bytes, file, true)?;
    // The frames a compact file makes start at the start tick, never go back and start by the
    // last hashed tick by construction (their ticks sum to the hashes), and `parse` checked each
    // group's input: what is left is the replay's own checks.
    replay.check(file)?;
    let mut summary = ReplaySummary {
        replay,
        frames: 0,
        real_ns: 0,
        input_changes: 0,
    };
    for group in &groups {
        summary.input_changes += u64::from(group.input.is_some());
        summary.frames += group.repeat;
        summary.real_ns += u128::from(group.repeat) * u128::from(group.delta);
    }
    Ok(summary)
}

/// A compact replay as [`parse`] reads it.
pub(super) struct Parsed {
    /// The replay without frames (and without hashes unless they were kept).
    pub replay: Replay,
    /// The frame groups, when they were kept.
    pub groups: Vec<Group>,
    /// How many ticks (hashes) the file holds.
    pub total: u64,
    /// How many frame groups the file holds, and the byte where the first starts.
    pub group_count: u64,
    pub groups_at: usize,
    /// The byte where the hashes start, and the bytes each takes (8 in version 1, else 4).
    pub hashes_at: usize,
    pub hash_bytes: usize,
}

/// Reads and checks the whole compact replay in `bytes`, keeping its frame groups and hashes
/// only when `keep_frames` (the replay's `frames` stay empty either way): without them, what this
/// takes grows with the file's details and outside entries, never with the frames and hashes it
/// claims.
pub(super) fn parse(bytes: &[u8], file: &Path, keep_frames: bool) -> Result<Parsed, ReplayError> {
    let mut r = Reader { bytes, at: 0, file };
    if r.take(4)? != COMPACT_MAGIC {
        return Err(r.corrupt("not a compact replay"));
    }
    let format_version = u32::from_le_bytes(r.take(4)?.try_into().expect("four bytes"));
    if !(FIRST_REPLAY_FORMAT_VERSION..=REPLAY_FORMAT_VERSION).contains(&format_version) {
        return Err(ReplayError::Version {
            file: file.to_owned(),
            found: format_version,
            supported: REPLAY_FORMAT_VERSION,
        });
    }
    let length = r.length_within(MAX_ENGINE_VERSION_BYTES as u64, "an engine version")?;
    let engine_version = String::from_utf8(r.take(length)?.to_vec())
        .map_err(|_| r.corrupt("an engine version that is not UTF-8"))?;
    let seed = r.u64()?;
    let start_tick = r.varint()?;
    let flags = r.take(1)?[0];
    if flags > 3 {
        return Err(r.corrupt("a bad scene and layout flag"));
    }
    let scene = if flags & 1 != 0 {
        let length = r.length_within(MAX_SCENE_NAME_BYTES as u64, "a scene name")?;
        let name = String::from_utf8(r.take(length)?.to_vec())
            .map_err(|_| r.corrupt("a scene name that is not UTF-8"))?;
        Some(SceneIdentity {
            name,
            cooked_hash: format!("{:016x}", r.u64()?),
        })
    } else {
        None
    };
    let layout = if flags & 2 != 0 {
        let length = r.length_within(MAX_LAYOUT_JSON_BYTES, "a state layout")?;
        let json = r.take(length)?;
        Some(
            serde_json::from_slice(json)
                .map_err(|_| r.corrupt("a state layout that does not parse"))?,
        )
    } else {
        None
    };
    // Groups are read first and checked against the hashes before any frame is made, so a file
    // cannot make the reader allocate more than its own size allows.
    let group_count = r.varint()?;
    let groups_at = r.at;
    let mut read = Vec::new();
    let (mut frame_total, mut tick_total) = (0u64, 0u64);
    for _ in 0..group_count {
        let group = read_group(&mut r, frame_total)?;
        frame_total = frame_total
            .checked_add(group.repeat)
            .filter(|_| group.repeat > 0)
            .ok_or_else(|| r.corrupt("a bad repeat count"))?;
        tick_total = group
            .repeat
            .checked_mul(group.ticks)
            .and_then(|t| t.checked_add(tick_total))
            .ok_or_else(|| r.corrupt("a tick count that overflows"))?;
        if keep_frames {
            read.push(group);
        }
    }
    // Version 1 kept every hash whole; from version 2, its low 32 bits.
    let hash_bytes = if format_version == 1 { 8 } else { 4 };
    let count = r.varint()?;
    if count > MAX_REPLAY_TICKS {
        return Err(r.corrupt(&format!(
            "{count} hashes (a replay holds at most {MAX_REPLAY_TICKS} ticks)"
        )));
    }
    if count > ((bytes.len() - r.at) / hash_bytes) as u64 {
        return Err(r.corrupt("more hashes than bytes"));
    }
    if start_tick.checked_add(count).is_none() {
        return Err(r.corrupt("hash ticks that overflow"));
    }
    if tick_total != count {
        return Err(r.corrupt(&format!(
            "frames that run {tick_total} ticks, but {count} hashes"
        )));
    }
    if frame_total > super::replay::max_frames(count) {
        return Err(r.corrupt(&format!(
            "{frame_total} frames for {count} ticks (a replay holds at most 64 frames a tick plus \
             {} that run none)",
            super::replay::IDLE_FRAMES
        )));
    }
    let hashes_at = r.at;
    let kept = if keep_frames { count } else { 0 };
    let mut hashes = Vec::with_capacity(kept as usize);
    for k in 0..kept {
        hashes.push((start_tick + k + 1, read_hash(&mut r, hash_bytes)?));
    }
    // The hashes not kept: skipped (their number is checked against the bytes above).
    r.take(((count - kept) * hash_bytes as u64) as usize)?;
    let mut details = Vec::new();
    if r.at < bytes.len() {
        let count = r.varint()?;
        for _ in 0..count {
            let length = r.length_within(MAX_DETAIL_JSON_BYTES, "a state detail")?;
            let json = r.take(length)?;
            details.push(
                serde_json::from_slice(json)
                    .map_err(|_| r.corrupt("a state detail that does not parse"))?,
            );
        }
    }
    let mut outside = Vec::new();
    if r.at < bytes.len() {
        let count = r.varint()?;
        // Each outside tick takes at least four bytes: never allocate past what the file holds.
        if count > ((bytes.len() - r.at) / 4) as u64 {
            return Err(r.corrupt("more outside ticks than bytes"));
        }
        for _ in 0..count {
            let tick = r.varint()?;
            let entries = r.varint()?;
            if entries == 0 || entries > MAX_OUTSIDE_PER_TICK as u64 {
                return Err(r.corrupt(&format!(
                    "an outside tick with {entries} entries (1 to {MAX_OUTSIDE_PER_TICK})"
                )));
            }
            let mut read = Vec::new();
            for _ in 0..entries {
                match read_outside_entry(r.bytes, &mut r.at) {
                    Some(Ok(entry)) => read.push(entry),
                    Some(Err(message)) => return Err(r.corrupt(&message)),
                    None => return Err(r.corrupt("a cut outside entry")),
                }
            }
            outside.push(OutsideTick {
                tick,
                entries: read,
            });
        }
    }
    if r.at != bytes.len() {
        return Err(r.corrupt("trailing bytes"));
    }
    let replay = Replay {
        format_version,
        engine_version,
        seed,
        start_tick,
        scene,
        frames: Vec::new(),
        hashes,
        details,
        outside,
        layout,
    };
    Ok(Parsed {
        replay,
        groups: read,
        total: count,
        group_count,
        groups_at,
        hashes_at,
        hash_bytes,
    })
}

/// Reads one group of frames at the reader, the first of them frame `frame` of the replay: its
/// input is parsed and checked as a game takes it.
pub(super) fn read_group(r: &mut Reader<'_>, frame: u64) -> Result<Group, ReplayError> {
    let repeat = r.varint()?;
    let delta = r.varint()?;
    let ticks = r.varint()?;
    let input = match r.take(1)?[0] {
        0 => None,
        1 => {
            let length = r.length_within(MAX_INPUT_JSON_BYTES, "an input")?;
            let json = r.take(length)?;
            let input = serde_json::from_slice::<RuntimeInput>(json)
                .map_err(|_| r.corrupt("an input that does not parse"))?;
            if let Err(message) = crate::runtime::input_script::check_input(&input) {
                return Err(ReplayError::Invalid {
                    file: r.file.to_owned(),
                    place: format!("frames[{frame}].input"),
                    message,
                });
            }
            Some(input)
        }
        _ => return Err(r.corrupt("a bad input flag")),
    };
    Ok(Group {
        repeat,
        delta,
        ticks,
        input,
    })
}

/// Reads one tick's hash at the reader, `hash_bytes` wide, as hex digits: 16 for a whole hash
/// (version 1), 8 for its low 32 bits.
pub(super) fn read_hash(r: &mut Reader<'_>, hash_bytes: usize) -> Result<String, ReplayError> {
    Ok(if hash_bytes == 8 {
        format!("{:016x}", r.u64()?)
    } else {
        let low = u32::from_le_bytes(r.take(4)?.try_into().expect("four bytes"));
        format!("{low:08x}")
    })
}

/// A LEB128 varint at `*at`, moving past it; `None` past the end or over 64 bits.
fn varint_at(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// `n` bytes at `*at`, moving past them; `None` past the end.
fn take_at<'a>(bytes: &'a [u8], at: &mut usize, n: usize) -> Option<&'a [u8]> {
    let end = at.checked_add(n)?;
    let taken = bytes.get(*at..end)?;
    *at = end;
    Some(taken)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{COMPACT_MAGIC, from_compact, write_varint};
    use crate::record::replay::{REPLAY_FORMAT_VERSION, ReplayError};

    /// A compact replay's header (no engine version, no scene) followed by `groups` and `hashes`.
    fn crafted(start_tick: u64, groups: &[(u64, u64, u64)], hashes: u64) -> Vec<u8> {
        crafted_as(REPLAY_FORMAT_VERSION, start_tick, groups, hashes)
    }

    /// [`crafted`] in format `version`: whole hashes in version 1, their low 32 bits after.
    fn crafted_as(
        version: u32,
        start_tick: u64,
        groups: &[(u64, u64, u64)],
        hashes: u64,
    ) -> Vec<u8> {
        let mut out = COMPACT_MAGIC.to_vec();
        out.extend_from_slice(&version.to_le_bytes());
        write_varint(&mut out, 0);
        out.extend_from_slice(&7u64.to_le_bytes());
        write_varint(&mut out, start_tick);
        out.push(0);
        write_varint(&mut out, groups.len() as u64);
        for &(repeat, delta, ticks) in groups {
            write_varint(&mut out, repeat);
            write_varint(&mut out, delta);
            write_varint(&mut out, ticks);
            out.push(0);
        }
        write_varint(&mut out, hashes);
        for k in 0..hashes {
            let hash = (k << 40) | 0xabc0 | k;
            if version == 1 {
                out.extend_from_slice(&hash.to_le_bytes());
            } else {
                out.extend_from_slice(&(hash as u32).to_le_bytes());
            }
        }
        out
    }

    /// A version 1 file (whole hashes) still reads, its hashes whole; the same replay in this
    /// engine's version holds each hash's low 32 bits, and a version past it is refused naming
    /// both. Fails if the reader takes every version's hashes at one width.
    #[test]
    fn both_hash_widths_read() {
        let file = Path::new("old.rply");
        let old = from_compact(&crafted_as(1, 10, &[(3, 5, 1)], 3), file).unwrap();
        assert_eq!(old.format_version, 1);
        assert_eq!(
            old.hashes[2],
            (13, format!("{:016x}", (2u64 << 40) | 0xabc2))
        );
        let new = from_compact(&crafted(10, &[(3, 5, 1)], 3), file).unwrap();
        assert_eq!(new.hashes[2], (13, "0000abc2".to_owned()));
        assert_eq!(old.with_short_hashes(), new);
        let error = from_compact(&crafted_as(3, 10, &[(3, 5, 1)], 3), file).unwrap_err();
        assert!(
            error.to_string().contains("format_version 3")
                && error.to_string().contains("versions 1 to 2"),
            "{error}"
        );
    }

    /// Arithmetic a crafted file controls is checked: a repeat count near `u64::MAX` after other
    /// frames, and hash ticks past `u64::MAX`, are refused as corrupt instead of overflowing (a
    /// debug build panicked with "attempt to add with overflow"). Fails if either sum goes back to
    /// unchecked `+`.
    #[test]
    fn crafted_counts_are_refused_without_overflow() {
        let file = Path::new("crafted.rply");
        let repeat = crafted(0, &[(1, 1, 1), (u64::MAX, 1, 0)], 0);
        let error = from_compact(&repeat, file).unwrap_err();
        assert!(
            matches!(&error, ReplayError::Corrupt { message, .. } if message.contains("repeat count")),
            "{error}"
        );
        let ticks = crafted(u64::MAX - 1, &[], 3);
        let error = from_compact(&ticks, file).unwrap_err();
        assert!(
            matches!(&error, ReplayError::Corrupt { message, .. } if message.contains("overflow")),
            "{error}"
        );
    }
}
