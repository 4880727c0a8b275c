//! [`Replay`]: a recorded session, and playing one back.
//!
//! `App::start_recording` keeps a [`Recorder`] in the engine `App` (never in the `World`: a new
//! resource would be a new entity and shift every later id). For every following frame it records
//! the real delta, the tick the frame started on, and the frame's `RuntimeInput` when it changed;
//! after every tick, the world-state hash. Recording the frames rather than one input per tick also
//! covers systems that read input in `Update` (a jump pressed during a frame first counts on the
//! next frame's first tick). [`play_replay`] sets the seed and feeds the same deltas and input into
//! an app holding the same scene, in place, checking every hash. This module must never read a
//! clock or a device.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::detail::{DetailDifference, StateDetail, compare_details};
use super::hash::StateHashes;
use super::report::hex;

use super::host::SimulationHost;
pub use super::recorder::Recorder;
use crate::json_file;
use crate::runtime::input_script::{INPUT_SCRIPT_VERSION, ScriptFrames};
use crate::runtime::{InputScript, RandomSeed, RuntimeInput, TickAccumulator, TimeControl};
use crate::scene::SceneIdentity;

/// The replay format version this engine writes and reads.
pub const REPLAY_FORMAT_VERSION: u32 = 1;

/// Frames a replay may hold beyond 64 a tick: about 28 minutes of 60 frames a second in which no
/// tick ran (a paused game).
pub const IDLE_FRAMES: u64 = 100_000;

/// The most frames a replay of `ticks` ticks may hold: 64 a tick plus [`IDLE_FRAMES`]. Bounds
/// what a file can make a reader allocate, whatever it claims.
pub fn max_frames(ticks: u64) -> u64 {
    ticks.saturating_mul(64).saturating_add(IDLE_FRAMES)
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
    /// Always [`REPLAY_FORMAT_VERSION`].
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
    /// `(tick, hash)` after every recorded tick, hashes as 16 hex digits.
    pub hashes: Vec<(u64, String)>,
    /// The state down to the field at sparse ticks (frame ends about every
    /// [`DETAIL_INTERVAL`] ticks), so a divergence found in playback is blamed on an entity,
    /// component and field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<StateDetail>,
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
    #[error("{file}: replay format_version {found} is not supported (this engine reads {supported})", file = file.display())]
    Version {
        /// The replay file.
        file: PathBuf,
        /// What the replay says.
        found: u32,
        /// What this engine reads.
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
    Snapshot(#[from] super::snapshot::SnapshotError),
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

    /// The compact binary form (about eight bytes a tick), or `None` when the hashes do not follow
    /// on tick by tick (see `replay_compact`).
    pub fn to_compact(&self) -> Option<Vec<u8>> {
        super::replay_compact::to_compact(self)
    }

    /// Reads a replay from `bytes` in any form (compact, a recording journal, or JSON) and checks
    /// it; `file` names it in errors.
    pub fn load_bytes(bytes: &[u8], file: &Path) -> Result<Replay, ReplayError> {
        let replay = if bytes.starts_with(super::replay_compact::COMPACT_MAGIC) {
            super::replay_compact::from_compact(bytes, file)?
        } else if super::replay_journal::is_journal(bytes) {
            super::replay_journal::from_journal(bytes, file)?
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

    /// Checks that the replay can be played: its version, hashes for every tick from its start on
    /// (no gaps), frames that start at its start tick and never go back or past its last hash, no
    /// more frames than [`max_frames`] allows, and input a game can use.
    fn check(&self, file: &Path) -> Result<(), ReplayError> {
        let invalid = |place: String, message: String| ReplayError::Invalid {
            file: file.to_owned(),
            place,
            message,
        };
        if self.format_version != REPLAY_FORMAT_VERSION {
            return Err(ReplayError::Version {
                file: file.to_owned(),
                found: self.format_version,
                supported: REPLAY_FORMAT_VERSION,
            });
        }
        for (k, (tick, hash)) in self.hashes.iter().enumerate() {
            let want = self.start_tick.checked_add(k as u64 + 1);
            if want != Some(*tick) {
                return Err(invalid(
                    format!("hashes[{k}]"),
                    format!(
                        "tick {tick}, but hashes follow on tick by tick from the start tick {}                          (expected tick {})",
                        self.start_tick,
                        want.map_or_else(|| "past the largest tick".to_owned(), |t| t.to_string())
                    ),
                ));
            }
            if hash.len() != 16 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(invalid(
                    format!("hashes[{k}]"),
                    format!("`{hash}` is not a hash of 16 hex digits"),
                ));
            }
        }
        let end = self.end_tick();
        let limit = max_frames(self.hashes.len() as u64);
        if self.frames.len() as u64 > limit {
            return Err(invalid(
                "frames".to_owned(),
                format!(
                    "{} frames for {} ticks; a replay holds at most {limit} (64 a tick, plus                      {IDLE_FRAMES} that run none)",
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
                        "{}, but frames start at the replay's start tick {}, never go back, and                          end by its last hashed tick {end}",
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
        Ok(())
    }
}

/// How far playback of a replay has got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlaybackCursor {
    /// The next frame to play.
    pub frame: usize,
    /// How many recorded hashes have been checked.
    pub checked: usize,
}

impl Replay {
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

    /// Checks that `app` (set up, at the replay's start tick) holds the recorded scene, and writes
    /// the recorded seed in place.
    pub fn prepare(&self, app: &mut impl SimulationHost) -> Result<(), ReplayError> {
        self.check(Path::new("(replay in memory)"))?;
        if app.ticks_done() != self.start_tick {
            return Err(ReplayError::StartTick {
                expected: self.start_tick,
                found: app.ticks_done(),
            });
        }
        if let (Some(recorded), Some(loaded)) =
            (&self.scene, app.world().get_resource::<SceneIdentity>())
            && recorded != loaded
        {
            return Err(ReplayError::Scene {
                recorded: recorded.clone(),
                loaded: loaded.clone(),
            });
        }
        app.world_mut().resource_mut::<RandomSeed>().0 = self.seed;
        Ok(())
    }

    /// Plays the frame at `cursor` into `app` and checks the hashes of its ticks. The frame runs
    /// exactly the ticks it ran when recorded, whatever pause, time scale or cap decided them then
    /// (the recording holds the real delta, not the speed). Leaves `TimeControl`'s cap at the
    /// frame's tick count, and its pause and time scale as they were.
    pub fn play_frame(
        &self,
        app: &mut impl SimulationHost,
        cursor: &mut PlaybackCursor,
    ) -> Result<(), ReplayError> {
        self.play_frame_checked(app, cursor, true)
    }

    /// [`Replay::play_frame`], checking the hashes only when `check`.
    fn play_frame_checked(
        &self,
        app: &mut impl SimulationHost,
        cursor: &mut PlaybackCursor,
        check: bool,
    ) -> Result<(), ReplayError> {
        let Some(frame) = self.frames.get(cursor.frame) else {
            return Ok(());
        };
        if let Some(input) = &frame.input {
            app.set_frame_input(input.clone());
        }
        let next = self
            .frames
            .get(cursor.frame + 1)
            .map_or(self.end_tick(), |f| f.start_tick);
        let recorded_ticks = next.saturating_sub(frame.start_tick).min(u32::MAX as u64) as u32;
        let delta = Duration::from_nanos(frame.real_delta_ns);
        // The recorded session may have been paused or running at another speed; playback runs
        // at normal speed and owes the accumulator what the frame's ticks need, so the frame runs
        // exactly its recorded ticks (the cap stops it running more).
        let (paused, time_scale) = {
            let world = app.world_mut();
            let step = world.resource::<TickAccumulator>().step();
            let mut control = world.resource_mut::<TimeControl>();
            let kept = (control.paused, control.time_scale);
            control.max_ticks_per_frame = recorded_ticks;
            control.paused = false;
            control.time_scale = 1.0;
            let adds = control.scaled(delta);
            let needed = step.saturating_mul(recorded_ticks);
            let mut accumulator = world.resource_mut::<TickAccumulator>();
            if accumulator.pending.saturating_add(adds) < needed {
                accumulator.pending = needed - adds;
            }
            kept
        };
        let before = app.ticks_done();
        app.step_frame(delta);
        {
            let mut control = app.world_mut().resource_mut::<TimeControl>();
            control.paused = paused;
            control.time_scale = time_scale;
        }
        cursor.frame += 1;
        if !check {
            return Ok(());
        }
        let hashes = app.world().resource::<StateHashes>();
        for tick in before + 1..=app.ticks_done() {
            let computed = hashes.get(tick).map(hex).unwrap_or_default();
            match self.hashes.get(cursor.checked) {
                Some((recorded_tick, recorded))
                    if *recorded_tick == tick && *recorded == computed => {}
                Some((_, recorded)) => {
                    return Err(ReplayError::Diverged {
                        tick,
                        recorded: recorded.clone(),
                        computed,
                        blame: None,
                    });
                }
                None => {
                    return Err(ReplayError::Length {
                        recorded: self.hashes.len(),
                        played: cursor.checked + 1,
                    });
                }
            }
            cursor.checked += 1;
        }
        Ok(())
    }
}

impl Replay {
    /// After a divergence at `tick`, plays on (without checking hashes) to the recording's first
    /// state detail at or after it, and compares playback's state there with it. `None` when the
    /// recording holds no such detail, or playback's frames do not end on its tick.
    fn blame(
        &self,
        app: &mut impl SimulationHost,
        cursor: &mut PlaybackCursor,
        tick: u64,
    ) -> Option<ReplayBlame> {
        let recorded = self.details.iter().find(|d| d.tick >= tick)?;
        while app.ticks_done() < recorded.tick && cursor.frame < self.frames.len() {
            self.play_frame_checked(app, cursor, false).ok()?;
        }
        if app.ticks_done() != recorded.tick {
            return None;
        }
        let played = StateDetail::capture(app.world_mut(), recorded.tick);
        Some(ReplayBlame {
            tick: recorded.tick,
            difference: compare_details(recorded, &played),
        })
    }
}

/// Plays `replay` into `app` (built with the same scene and set up, at the replay's start tick):
/// writes the seed in place, feeds every frame's delta and input, and checks every tick's hash.
pub fn play_replay(replay: &Replay, app: &mut impl SimulationHost) -> Result<(), ReplayError> {
    replay.prepare(app)?;
    let cap = app.world().resource::<TimeControl>().max_ticks_per_frame;
    let mut cursor = PlaybackCursor::default();
    while cursor.frame < replay.frames.len() {
        if let Err(error) = replay.play_frame(app, &mut cursor) {
            return Err(match error {
                ReplayError::Diverged {
                    tick,
                    recorded,
                    computed,
                    ..
                } => ReplayError::Diverged {
                    blame: replay.blame(app, &mut cursor, tick).map(Box::new),
                    tick,
                    recorded,
                    computed,
                },
                other => other,
            });
        }
    }
    app.world_mut()
        .resource_mut::<TimeControl>()
        .max_ticks_per_frame = cap;
    if cursor.checked != replay.hashes.len() {
        return Err(ReplayError::Length {
            recorded: replay.hashes.len(),
            played: cursor.checked,
        });
    }
    Ok(())
}
