//! [`Replay`]: a recorded session, its checks, and its JSON and compact files.
//!
//! `RecordingAppExt::start_recording` puts a `Recorder` in the engine `App`'s frame stepper
//! (never in the `World`: a new resource would be a new entity and shift every later id). For
//! every following frame it records the real delta, the tick the frame started on, and the
//! frame's `RuntimeInput` when it changed; after every tick, the world-state hash. Recording the
//! frames rather than one input per tick also covers systems that read input in `Update` (a jump
//! pressed during a frame first counts on the next frame's first tick). Playing a replay back
//! drives an app, so it lives a layer up, in `determinism::playback`. This module must never read
//! a clock or a device, or drive an app.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::detail::{DetailDifference, StateDetail};

use crate::jobs::{MAX_OUTSIDE_PER_TICK, OutsideTick};
use crate::runtime::input_script::{INPUT_SCRIPT_VERSION, ScriptFrames};
use crate::runtime::{InputScript, RuntimeInput};
use crate::scene::SceneIdentity;
use crate::state::LayoutFingerprint;

/// The replay format version this engine writes. It reads every version from
/// [`FIRST_REPLAY_FORMAT_VERSION`] on.
///
/// Version 2 lets a replay keep each tick's hash short: the compact form holds the low 32 bits of
/// every tick's hash (8 hex digits) where version 1 held all 64 (16 digits), which halves its size.
/// A divergence is still found at its first tick unless the two hashes there agree in those 32 bits
/// (one chance in about four billion), and then at the next. The JSON form and the journal keep
/// whole hashes.
pub const REPLAY_FORMAT_VERSION: u32 = 2;

/// The oldest replay format version this engine reads (64-bit hashes only).
pub const FIRST_REPLAY_FORMAT_VERSION: u32 = 1;

/// Whether `recorded`, a hash as a replay holds it (16 hex digits, or the low 32 bits as 8),
/// is `computed`'s.
/// Compared as numbers, with nothing allocated: playback asks once a tick.
pub fn recorded_hash_matches(recorded: &str, computed: u64) -> bool {
    let kept = if recorded.len() == 8 {
        computed & 0xffff_ffff
    } else {
        computed
    };
    u64::from_str_radix(recorded, 16) == Ok(kept)
}

/// `computed` written as wide as `recorded` is: 16 hex digits, or the low 32 bits as 8.
pub fn recorded_form(recorded: &str, computed: u64) -> String {
    if recorded.len() == 8 {
        format!("{:08x}", computed as u32)
    } else {
        format!("{computed:016x}")
    }
}

/// The most ticks (hashes) a replay may hold: 19 days at 60 Hz, 27 hours at 1,000 Hz.
pub const MAX_REPLAY_TICKS: u64 = 100_000_000;

/// The most frames a replay may hold, whatever its ticks: 46 hours at 60 frames a second.
pub const MAX_REPLAY_FRAMES: u64 = 10_000_000;

/// The longest engine version a replay may name, in bytes.
pub const MAX_ENGINE_VERSION_BYTES: usize = 64;

/// The longest scene name (a path inside the project) a replay may hold, in bytes.
pub const MAX_SCENE_NAME_BYTES: usize = 4096;

/// The largest one frame's input may be in a compact replay or a journal, as JSON, in bytes.
pub const MAX_INPUT_JSON_BYTES: u64 = 64 * 1024;

/// The largest one state detail may be in a compact replay or a journal, as JSON, in bytes.
pub const MAX_DETAIL_JSON_BYTES: u64 = 256 * 1024 * 1024;

/// The largest a state layout may be in a compact replay, as JSON, in bytes.
pub const MAX_LAYOUT_JSON_BYTES: u64 = 16 * 1024 * 1024;

/// Frames a replay may hold beyond 64 a tick: about 28 minutes of 60 frames a second in which no
/// tick ran (a paused game).
pub const IDLE_FRAMES: u64 = 100_000;

/// The most frames a replay of `ticks` ticks may hold: 64 a tick plus [`IDLE_FRAMES`], and never
/// more than [`MAX_REPLAY_FRAMES`]. Bounds
/// what a file can make a reader allocate, whatever it claims.
pub fn max_frames(ticks: u64) -> u64 {
    ticks
        .saturating_mul(64)
        .saturating_add(IDLE_FRAMES)
        .min(MAX_REPLAY_FRAMES)
}

/// One recorded frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayFrame {
    /// The frame's real delta, in nanoseconds.
    pub real_delta_ns: u64,
    /// Ticks completed before the frame.
    pub start_tick: u64,
    /// The frame's input, when it changed since the previous frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<RuntimeInput>,
}

/// A recorded session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    /// The format version: [`REPLAY_FORMAT_VERSION`] when recorded by this engine, or an older
    /// one it reads (from [`FIRST_REPLAY_FORMAT_VERSION`]).
    pub format_version: u32,
    /// The engine version that recorded it.
    pub engine_version: String,
    /// The simulation's seed.
    pub seed: u64,
    /// Ticks completed when recording started.
    pub start_tick: u64,
    /// The scene the app held, if it loaded one through `SimpleGamePlugin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<SceneIdentity>,
    /// The frames, in order.
    pub frames: Vec<ReplayFrame>,
    /// `(tick, hash)` after every recorded tick, hashes as 16 hex digits, or as the low 32 bits in
    /// 8 (what the compact form keeps, from version 2; see [`recorded_hash_matches`]).
    pub hashes: Vec<(u64, String)>,
    /// The state down to the field at sparse ticks (frame ends about every
    /// [`DETAIL_INTERVAL`] ticks), so a divergence found in playback is blamed on an entity,
    /// component and field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<StateDetail>,
    /// The results from outside the simulation that entered ticks (`jobs::OutsideQueue`), by
    /// tick, in arrival order: playback feeds these and never calls out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside: Vec<OutsideTick>,
    /// The layout of the recording game's simulation state: playback refuses a game of another
    /// layout, naming the first type or field that differs (absent in replays from before it
    /// was recorded, which are played unchecked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<LayoutFingerprint>,
}

/// Ticks between two recorded [`StateDetail`]s: one every two minutes at 60 Hz (the starter's is
/// about 20 KB, so the compact form stays under 40 KB a minute).
pub const DETAIL_INTERVAL: u64 = 7200;

/// Where playback stood when it found the state that a divergence led to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayBlame {
    /// The recorded detail's tick: the first at or after the divergent tick.
    pub tick: u64,
    /// Where playback differs from the recording there (`None`: every field agrees, and the
    /// difference is in something the hash covers and no field shows).
    pub difference: Option<DetailDifference>,
}

impl std::fmt::Display for ReplayBlame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.difference {
            Some(difference) => write!(
                f,
                "; at tick {}, the recording's next state detail: {difference} (recorded vs played)",
                self.tick
            ),
            None => write!(
                f,
                "; at tick {}, the recording's next state detail agrees in every field",
                self.tick
            ),
        }
    }
}

/// Why a replay cannot be read, or where it stopped matching.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ReplayError {
    /// The file could not be read or written.
    #[error("{file}: {message}", file = file.display())]
    Io {
        /// The replay file.
        file: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// The file is not a replay (corrupt or truncated JSON, or unknown fields).
    #[error("{file}:{line}:{column}: not a replay: {message}", file = file.display())]
    Corrupt {
        /// The replay file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A replay of another format version.
    #[error("{file}: replay format_version {found} is not supported (this engine reads versions {FIRST_REPLAY_FORMAT_VERSION} to {supported})", file = file.display())]
    Version {
        /// The replay file.
        file: PathBuf,
        /// What the replay says.
        found: u32,
        /// The newest version this engine reads.
        supported: u32,
    },
    /// The replay parses but cannot be played: its frames and hashes disagree, or it claims more
    /// than it holds.
    #[error("{file}: {place}: {message}", file = file.display())]
    Invalid {
        /// The replay file.
        file: PathBuf,
        /// Where in the replay, e.g. `hashes[10]` or `frames[3].start_tick`.
        place: String,
        /// What is wrong.
        message: String,
    },
    /// The app was not at the tick the replay starts from.
    #[error("the replay starts at tick {expected}, but the app is at tick {found}")]
    StartTick {
        /// The replay's start tick.
        expected: u64,
        /// The app's tick.
        found: u64,
    },
    /// Playback computed a different hash than the recording.
    #[error("the replay diverged at tick {tick}: recorded {recorded}, got {computed}{}", blame.as_ref().map(|b| b.to_string()).unwrap_or_default())]
    Diverged {
        /// The first tick whose hash differs.
        tick: u64,
        /// The recorded hash.
        recorded: String,
        /// The hash playback computed.
        computed: String,
        /// Where playback and the recording differ at the recording's next state detail, when
        /// playback went on to one.
        blame: Option<Box<ReplayBlame>>,
    },
    /// The replay was recorded by a game whose simulation state has another layout.
    #[error(
        "the replay was recorded by a game whose simulation state has another layout: {difference}"
    )]
    Layout {
        /// The first type or field that differs.
        difference: String,
    },
    /// The replay was recorded with another scene than the app holds.
    #[error("the replay was recorded with scene `{}` ({}), but the app holds `{}` ({})", recorded.name, recorded.cooked_hash, loaded.name, loaded.cooked_hash)]
    Scene {
        /// The scene in the replay.
        recorded: SceneIdentity,
        /// The scene in the app.
        loaded: SceneIdentity,
    },
    /// A snapshot taken or restored while seeking failed.
    #[error(transparent)]
    Snapshot(#[from] crate::state::SnapshotError),
    /// Playback ran a different number of ticks than the recording.
    #[error("the replay recorded {recorded} ticks but playback ran {played}")]
    Length {
        /// Ticks in the recording.
        recorded: usize,
        /// Ticks playback ran.
        played: usize,
    },
}

impl Replay {
    /// Checks that the replay can be played: its version, hashes for every tick from its start on
    /// (no gaps), frames that start at its start tick and never go back or past its last hash, no
    /// more frames than [`max_frames`] allows, and input a game can use.
    pub(crate) fn check(&self, file: &Path) -> Result<(), ReplayError> {
        let invalid = |place: String, message: String| ReplayError::Invalid {
            file: file.to_owned(),
            place,
            message,
        };
        self.check_header(file, &invalid)?;
        if self.hashes.len() as u64 > MAX_REPLAY_TICKS {
            return Err(invalid(
                "hashes".to_owned(),
                format!(
                    "{} ticks; a replay holds at most {MAX_REPLAY_TICKS}",
                    self.hashes.len()
                ),
            ));
        }
        for (k, (tick, hash)) in self.hashes.iter().enumerate() {
            let want = self.start_tick.checked_add(k as u64 + 1);
            if want != Some(*tick) {
                return Err(invalid(
                    format!("hashes[{k}]"),
                    format!(
                        "tick {tick}, but hashes follow on tick by tick from the start tick {} (expected tick {})",
                        self.start_tick,
                        want.map_or_else(|| "past the largest tick".to_owned(), |t| t.to_string())
                    ),
                ));
            }
            // Every hash as wide as the first: 16 hex digits, or (from version 2) 8.
            let width = self.hashes[0].1.len();
            let widths_allowed = if self.format_version >= 2 {
                "16 or 8"
            } else {
                "16"
            };
            if !(width == 16 || (width == 8 && self.format_version >= 2)) {
                return Err(invalid(
                    format!("hashes[{k}]"),
                    format!("`{hash}` is not a hash of {widths_allowed} hex digits"),
                ));
            }
            if hash.len() != width || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(invalid(
                    format!("hashes[{k}]"),
                    format!("`{hash}` is not a hash of {width} hex digits, as hashes[0] is"),
                ));
            }
        }
        let end = self.end_tick();
        let limit = max_frames(self.hashes.len() as u64);
        if self.frames.len() as u64 > limit {
            return Err(invalid(
                "frames".to_owned(),
                format!(
                    "{} frames for {} ticks; a replay holds at most {limit} (64 a tick, plus {IDLE_FRAMES} that run none, and never more than {MAX_REPLAY_FRAMES})",
                    self.frames.len(),
                    self.hashes.len()
                ),
            ));
        }
        let mut previous = self.start_tick;
        for (k, frame) in self.frames.iter().enumerate() {
            let first = k == 0 && frame.start_tick != self.start_tick;
            if first || frame.start_tick < previous || frame.start_tick > end {
                return Err(invalid(
                    format!("frames[{k}].start_tick"),
                    format!(
                        "{}, but frames start at the replay's start tick {}, never go back, and end by its last hashed tick {end}",
                        frame.start_tick, self.start_tick
                    ),
                ));
            }
            previous = frame.start_tick;
            if let Some(input) = &frame.input
                && let Err(message) = crate::runtime::input_script::check_input(input)
            {
                return Err(invalid(format!("frames[{k}].input"), message));
            }
        }
        self.check_sparse(end, &invalid)
    }

    /// [`Replay::check`] for a replay whose frames and hashes were checked as they were read (a
    /// compact file read a window at a time): its header, and its details and outside entries
    /// against `end`, the last tick the file hashes.
    pub(crate) fn check_parts(&self, file: &Path, end: u64) -> Result<(), ReplayError> {
        let invalid = |place: String, message: String| ReplayError::Invalid {
            file: file.to_owned(),
            place,
            message,
        };
        self.check_header(file, &invalid)?;
        self.check_sparse(end, &invalid)
    }

    /// The format version, and the engine version's and scene name's lengths.
    fn check_header(
        &self,
        file: &Path,
        invalid: &dyn Fn(String, String) -> ReplayError,
    ) -> Result<(), ReplayError> {
        if !(FIRST_REPLAY_FORMAT_VERSION..=REPLAY_FORMAT_VERSION).contains(&self.format_version) {
            return Err(ReplayError::Version {
                file: file.to_owned(),
                found: self.format_version,
                supported: REPLAY_FORMAT_VERSION,
            });
        }
        if self.engine_version.len() > MAX_ENGINE_VERSION_BYTES {
            return Err(invalid(
                "engine_version".to_owned(),
                format!(
                    "{} bytes; at most {MAX_ENGINE_VERSION_BYTES}",
                    self.engine_version.len()
                ),
            ));
        }
        if let Some(scene) = &self.scene
            && scene.name.len() > MAX_SCENE_NAME_BYTES
        {
            return Err(invalid(
                "scene.name".to_owned(),
                format!("{} bytes; at most {MAX_SCENE_NAME_BYTES}", scene.name.len()),
            ));
        }
        Ok(())
    }

    /// State details and outside entries: in tick order after the start tick, by `end`.
    fn check_sparse(
        &self,
        end: u64,
        invalid: &dyn Fn(String, String) -> ReplayError,
    ) -> Result<(), ReplayError> {
        let mut after = self.start_tick;
        for (k, detail) in self.details.iter().enumerate() {
            if detail.tick <= after || detail.tick > end {
                return Err(invalid(
                    format!("details[{k}].tick"),
                    format!(
                        "{}, but details follow one another after the start tick {} and end by \
                         the last hashed tick {end}",
                        detail.tick, self.start_tick
                    ),
                ));
            }
            after = detail.tick;
        }
        self.check_outside(end, invalid)
    }

    /// Outside entries: ticks that follow one another within the recording, each holding 1 to
    /// `MAX_OUTSIDE_PER_TICK` entries within the entry limits.
    fn check_outside(
        &self,
        end: u64,
        invalid: &dyn Fn(String, String) -> ReplayError,
    ) -> Result<(), ReplayError> {
        let mut after = self.start_tick;
        for (k, tick) in self.outside.iter().enumerate() {
            if tick.tick <= after || tick.tick > end {
                return Err(invalid(
                    format!("outside[{k}].tick"),
                    format!(
                        "{}, but outside ticks follow one another after the start tick {} and \
                         end by the last hashed tick {end}",
                        tick.tick, self.start_tick
                    ),
                ));
            }
            after = tick.tick;
            if tick.entries.is_empty() || tick.entries.len() > MAX_OUTSIDE_PER_TICK {
                return Err(invalid(
                    format!("outside[{k}].entries"),
                    format!(
                        "{} entries; a tick takes 1 to {MAX_OUTSIDE_PER_TICK}",
                        tick.entries.len()
                    ),
                ));
            }
            for (e, entry) in tick.entries.iter().enumerate() {
                if let Err(error) = entry.check() {
                    return Err(invalid(
                        format!("outside[{k}].entries[{e}]"),
                        error.to_string(),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Replay {
    /// A replay recorded by this engine that holds nothing yet: no frames, hashes, details or
    /// outside entries.
    pub(crate) fn empty(
        seed: u64,
        start_tick: u64,
        scene: Option<SceneIdentity>,
        layout: Option<LayoutFingerprint>,
    ) -> Replay {
        Replay {
            format_version: REPLAY_FORMAT_VERSION,
            engine_version: env!("CARGO_PKG_VERSION").to_owned(),
            seed,
            start_tick,
            scene,
            frames: Vec::new(),
            hashes: Vec::new(),
            details: Vec::new(),
            outside: Vec::new(),
            layout,
        }
    }

    /// The replay's header alone: its versions, seed, start tick, scene and layout, with no
    /// frames, hashes, details or outside entries.
    pub(crate) fn clone_without_ticks(&self) -> Replay {
        Replay {
            format_version: self.format_version,
            engine_version: self.engine_version.clone(),
            ..Replay::empty(
                self.seed,
                self.start_tick,
                self.scene.clone(),
                self.layout.clone(),
            )
        }
    }

    /// The replay as the compact form keeps it: each hash's low 32 bits (8 hex digits), under
    /// this engine's format version. What `Replay::load` gives back after a `.rply` is written.
    pub fn with_short_hashes(mut self) -> Replay {
        for (_, hash) in &mut self.hashes {
            if let Ok(value) = u64::from_str_radix(hash, 16) {
                *hash = format!("{:08x}", value as u32);
            }
        }
        self.format_version = REPLAY_FORMAT_VERSION;
        self
    }

    /// The tick the recording ended on.
    pub fn end_tick(&self) -> u64 {
        self.hashes
            .last()
            .map_or(self.start_tick, |(tick, _)| *tick)
    }

    /// The replay's frames as an input script: every frame lasts exactly the ticks it ran and sees
    /// the recorded input, so a headless run of the script simulates the recorded session (the
    /// project's seed must be the replay's).
    pub fn to_input_script(&self) -> InputScript {
        let frames = self
            .frames
            .iter()
            .enumerate()
            .map(|(k, frame)| {
                let next = self
                    .frames
                    .get(k + 1)
                    .map_or(self.end_tick(), |f| f.start_tick);
                ScriptFrames {
                    repeat: 1,
                    ticks: next.saturating_sub(frame.start_tick) as f64,
                    input: frame.input.clone().map(Into::into),
                    hold: Default::default(),
                }
            })
            .collect();
        InputScript {
            format_version: INPUT_SCRIPT_VERSION,
            frames,
        }
    }
}
