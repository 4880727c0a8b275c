//! [`SessionReplay`]: a multiplayer session as one peer confirmed it, every player's input and
//! the state hash of each confirmed tick, played back headless without the network.
//!
//! A multiplayer session (`net::NetSession`, feature `net`) records a tick when it becomes
//! confirmed: the inputs the tick finally ran with (a disconnected player's as no input), the
//! outside entries that entered it (from every peer) and the hash after it. Every peer of a
//! deterministic game records the same replay. Playback writes each tick's inputs into
//! `PlayerInputs`, feeds its outside entries from the recording (never from the queue), and runs
//! one engine tick, checking the hash after every tick, so a desync seen in a match can be
//! reproduced and bisected on one machine.
//!
//! On disk it is JSON (`"format": 2`; format 1, from before outside entries, still reads),
//! written to a temporary file and renamed over the target. Reading checks the size, the format,
//! every tick's player count, outside entries and hash, and names the file and the tick of what
//! is wrong. Playback needs no network code, so any build of a game
//! plays a session replay (`rusting replay play`). This module must never touch the network.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::SimulationHost;
use crate::jobs::{MAX_OUTSIDE_PER_TICK, OutsideEntry, OutsideQueue, OutsideTick};
use crate::record::report::fold_gpu_hash;
use crate::runtime::{PlayerInputs, PlayerTickInput, TimeControl};
use crate::state::StateHashes;

/// The format number this engine writes (it also reads format 1, from before outside entries).
pub const SESSION_REPLAY_FORMAT: u32 = 2;

/// The largest session replay file read (an hour of four players is about 60 MB).
pub const MAX_SESSION_REPLAY_BYTES: u64 = 256 << 20;

/// One confirmed tick.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionTick {
    /// Every player's input, by handle.
    pub inputs: Vec<PlayerTickInput>,
    /// The state hash after the tick (CPU and GPU folded), as 16 hex digits.
    pub hash: String,
    /// The outside entries that entered the tick, in the order they entered (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside: Vec<OutsideEntry>,
}

/// A session's confirmed ticks from its first (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionReplay {
    /// [`SESSION_REPLAY_FORMAT`].
    pub format: u32,
    /// Players in the session.
    pub players: usize,
    /// Ticks 1, 2, ... in order.
    pub ticks: Vec<SessionTick>,
}

/// Why a session replay could not be read, written or played back.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionReplayError {
    /// The file could not be read or written.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's message.
        message: String,
    },
    /// The file is not JSON of a session replay.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The file is not a session replay.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line and column or the tick.
        message: String,
    },
    /// The app is not ready for the replay's players.
    #[error(
        "the app has no `PlayerInputs` for {players} players: call `net::prepare_app` while \
         building it"
    )]
    NotPrepared {
        /// Players in the replay.
        players: usize,
    },
    /// The app has already run ticks; a replay plays from the session's start.
    #[error("the app has run {ticks_done} ticks; a session replay plays from tick 0")]
    NotAtStart {
        /// The ticks the app has run.
        ticks_done: u64,
    },
    /// The host did not run the tick (paused, say).
    #[error("tick {tick} did not run: {message}")]
    Stopped {
        /// The tick (ticks done, from 1).
        tick: u64,
        /// Why.
        message: String,
    },
    /// A tick's hash differs from the recorded one.
    #[error(
        "tick {tick} hashes {computed:016x}, the session recorded {recorded:016x}: the game \
         computes another state from the same inputs"
    )]
    Diverged {
        /// The tick (ticks done, from 1).
        tick: u64,
        /// The recorded hash.
        recorded: u64,
        /// The hash now.
        computed: u64,
    },
}

impl SessionReplay {
    /// An empty replay of `players`.
    pub fn new(players: usize) -> Self {
        SessionReplay {
            format: SESSION_REPLAY_FORMAT,
            players,
            ticks: Vec::new(),
        }
    }

    /// Appends the next confirmed tick: its inputs, the hash after it and the outside entries
    /// that entered it.
    pub fn push(&mut self, inputs: Vec<PlayerTickInput>, hash: u64, outside: Vec<OutsideEntry>) {
        self.ticks.push(SessionTick {
            inputs,
            hash: format!("{hash:016x}"),
            outside,
        });
    }

    /// Writes the replay to `path` (a temporary file renamed over it).
    ///
    /// # Errors
    ///
    /// [`SessionReplayError::Io`] naming the file.
    pub fn write(&self, path: &Path) -> Result<(), SessionReplayError> {
        let io = |error: std::io::Error| SessionReplayError::Io {
            path: path.to_owned(),
            message: error.to_string(),
        };
        let text = serde_json::to_vec(self).map_err(|error| io(std::io::Error::other(error)))?;
        crate::runtime::json_file::write_atomically(path, &text).map_err(io)
    }

    /// Reads and checks the replay at `path`.
    ///
    /// # Errors
    ///
    /// [`SessionReplayError::Io`] when it cannot be read or is over
    /// [`MAX_SESSION_REPLAY_BYTES`], [`SessionReplayError::Json`] with the line and column of
    /// broken JSON, [`SessionReplayError::Invalid`] naming the tick of a wrong player count or
    /// hash, or another format.
    pub fn read(path: &Path) -> Result<Self, SessionReplayError> {
        let io = |message: String| SessionReplayError::Io {
            path: path.to_owned(),
            message,
        };
        let invalid = |message: String| SessionReplayError::Invalid {
            path: path.to_owned(),
            message,
        };
        let size = std::fs::metadata(path)
            .map_err(|error| io(error.to_string()))?
            .len();
        if size > MAX_SESSION_REPLAY_BYTES {
            return Err(io(format!(
                "{size} bytes is more than a session replay may hold \
                 ({MAX_SESSION_REPLAY_BYTES})"
            )));
        }
        let replay: SessionReplay = crate::runtime::json_file::read(path).map_err(|error| {
            error.into(io, |line, column, message| SessionReplayError::Json {
                path: path.to_owned(),
                line,
                column,
                message,
            })
        })?;
        if !(1..=SESSION_REPLAY_FORMAT).contains(&replay.format) {
            return Err(invalid(format!(
                "format {} is not a session replay this engine reads (it reads formats 1 to \
                 {SESSION_REPLAY_FORMAT})",
                replay.format
            )));
        }
        for (k, tick) in replay.ticks.iter().enumerate() {
            if tick.inputs.len() != replay.players {
                return Err(invalid(format!(
                    "tick {} has the inputs of {} players, the session has {}",
                    k + 1,
                    tick.inputs.len(),
                    replay.players
                )));
            }
            if tick.outside.len() > MAX_OUTSIDE_PER_TICK {
                return Err(invalid(format!(
                    "tick {}: {} outside entries entered it, at most {MAX_OUTSIDE_PER_TICK} may",
                    k + 1,
                    tick.outside.len()
                )));
            }
            for (e, entry) in tick.outside.iter().enumerate() {
                entry.check().map_err(|error| {
                    invalid(format!("tick {}: outside entry {e}: {error}", k + 1))
                })?;
            }
            if parse_hash(&tick.hash).is_none() {
                return Err(invalid(format!(
                    "tick {}: the hash `{}` is not 16 hex digits",
                    k + 1,
                    tick.hash
                )));
            }
        }
        Ok(replay)
    }

    /// Plays the replay in `host`, which must be built like the session's apps and not have run
    /// a tick: each tick's inputs, one engine tick, the hash checked. Returns the ticks played.
    ///
    /// # Errors
    ///
    /// [`SessionReplayError::NotPrepared`] for a host without the replay's `PlayerInputs`, and
    /// [`SessionReplayError::Diverged`] at the first tick whose hash differs.
    pub fn play(&self, host: &mut impl SimulationHost) -> Result<u64, SessionReplayError> {
        if !prepared_for(host, self.players) {
            return Err(SessionReplayError::NotPrepared {
                players: self.players,
            });
        }
        if host.ticks_done() != 0 {
            return Err(SessionReplayError::NotAtStart {
                ticks_done: host.ticks_done(),
            });
        }
        if let Some(queue) = host.world().get_resource::<OutsideQueue>() {
            let recorded: Vec<OutsideTick> = (1u64..)
                .zip(&self.ticks)
                .filter(|(_, tick)| !tick.outside.is_empty())
                .map(|(number, tick)| OutsideTick {
                    tick: number,
                    entries: tick.outside.clone(),
                })
                .collect();
            queue.play_recorded(&recorded);
        }
        for tick in &self.ticks {
            host.world_mut()
                .resource_mut::<PlayerInputs>()
                .advance(tick.inputs.clone());
            let done = step_one_tick(host).map_err(|ran| SessionReplayError::Stopped {
                tick: host.ticks_done() + 1,
                message: format!(
                    "the step ran {ran} engine ticks instead of one (is the app paused?)"
                ),
            })?;
            let computed = confirmed_hash(host, done);
            let recorded = parse_hash(&tick.hash).unwrap_or_default();
            if computed != Some(recorded) {
                return Err(SessionReplayError::Diverged {
                    tick: done,
                    recorded,
                    computed: computed.unwrap_or_default(),
                });
            }
        }
        Ok(self.ticks.len() as u64)
    }
}

/// A hash written as 16 hex digits.
fn parse_hash(text: &str) -> Option<u64> {
    if text.len() != 16 {
        return None;
    }
    u64::from_str_radix(text, 16).ok()
}

/// Whether `host` holds `PlayerInputs` for exactly `players` ([`prepare_players`] ran).
pub(crate) fn prepared_for(host: &impl SimulationHost, players: usize) -> bool {
    host.world()
        .get_resource::<PlayerInputs>()
        .is_some_and(|inputs| inputs.players.len() == players)
}

/// Makes an app ready for `players`' inputs: inserts [`PlayerInputs`] (simulation state: hashed and
/// in snapshots) with that many players. Call it while building the app, before its setup, on
/// every peer alike and before playing a session replay.
pub fn prepare_players(app: &mut crate::engine::App, players: usize) {
    app.register_sim_resource::<PlayerInputs>();
    app.world_mut().insert_resource(PlayerInputs {
        players: vec![PlayerTickInput::default(); players],
        previous: Vec::new(),
    });
}

/// The hash after `tick` ticks as a confirmed tick records it: the CPU hash folded with the GPU
/// hash of GPU tick `tick - 1` (simulated now if it is still queued). `None` once the tick is no
/// longer in `StateHashes`, and for tick 0.
pub(crate) fn confirmed_hash(host: &mut impl SimulationHost, tick: u64) -> Option<u64> {
    let world = host.world_mut();
    crate::physics::gpu::complete_gpu_ticks_before(world, tick);
    let cpu = world.resource::<StateHashes>().get(tick)?;
    let gpu = crate::physics::gpu::gpu_hash_of(world, tick.checked_sub(1)?);
    Some(fold_gpu_hash(cpu, gpu))
}

/// Runs exactly one engine tick on `host`; the ticks done after it, or the ticks the step ran
/// when it was not one (the host's time control stopped it).
pub(crate) fn step_one_tick(host: &mut impl SimulationHost) -> Result<u64, u64> {
    let before = host.ticks_done();
    let cap = std::mem::replace(
        &mut host
            .world_mut()
            .resource_mut::<TimeControl>()
            .max_ticks_per_frame,
        1,
    );
    let step = host.tick_length();
    host.step_frame(step);
    host.world_mut()
        .resource_mut::<TimeControl>()
        .max_ticks_per_frame = cap;
    match host.ticks_done() - before {
        1 => Ok(before + 1),
        ran => Err(ran),
    }
}
