//! Lockstep: a headless run that `rusting determinism` steps one tick at a time, so that blame for
//! a divergence comes from the very processes that diverged.
//!
//! With `RUSTING_LOCKSTEP=1`, a game's headless run announces every tick's world-state hash on
//! standard output as a line `rusting-tick <tick> <hash, 16 hex digits>` (with GPU bodies, the
//! GPU tick the fixed tick queued is simulated first and its hash folded in, see
//! `report::fold_gpu_hash`), then reads command lines on standard input until one lets it go on:
//!
//! - `next`: run on to the next tick;
//! - `detail <file>`: write the [`StateDetail`] of this tick (every simulation entity and resource
//!   down to the field) to `<file>`, atomically, and wait for the next command;
//! - `track <sim id> <file>`: write that entity's position over the last [`TRACK_TICKS`] ticks (a
//!   [`Track`]) to `<file>`, atomically, and wait for the next command;
//! - `stop`: exit with code 0;
//! - end of input: run on without waiting (the checker has gone).
//!
//! The checker reads every configuration's line for a tick, compares the hashes, and either lets
//! them all go on or asks the first two that differ for their detail of that tick: no rerun decides
//! the blame, so a race that differs from process to process is blamed as reliably as a build
//! difference. To plot the blamed entity around the divergence, every lockstep run keeps the
//! positions of all simulation entities over the last [`TRACK_TICKS`] ticks in a ring (16 bytes an
//! entity a tick, reused: nothing is allocated once the ring is full); the checker asks for the
//! blamed entity's track at the divergent tick and again a few ticks later. The protocol's lines
//! are the only output on standard output that starts with `rusting-tick `. This module must
//! never change simulation state.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use bevy::prelude::{QueryState, Transform, World};
use serde::{Deserialize, Serialize};

use crate::record::detail::StateDetail;
use crate::runtime::json_file;
use crate::state::SimId;
use crate::state::hash::StateHashes;

/// The environment variable that turns lockstep on.
pub const LOCKSTEP_VARIABLE: &str = "RUSTING_LOCKSTEP";

/// The prefix of the line announcing a tick.
pub const TICK_LINE: &str = "rusting-tick";

/// How many ticks of positions a lockstep run keeps.
pub const TRACK_TICKS: usize = 90;

/// What the checker asked after a tick.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Run on.
    Next,
    /// Write this tick's detail to the file.
    Detail(String),
    /// Write this entity's recent positions to the file.
    Track(u64, String),
    /// Exit.
    Stop,
    /// The checker has gone: run on without asking again.
    Gone,
}

impl Command {
    /// Parses a command line (without its newline); `None` for anything else.
    pub fn parse(line: &str) -> Option<Command> {
        let line = line.trim_end();
        match line.split_once(' ') {
            None if line == "next" => Some(Command::Next),
            None if line == "stop" => Some(Command::Stop),
            Some(("detail", file)) if !file.is_empty() => Some(Command::Detail(file.to_owned())),
            Some(("track", rest)) => {
                let (id, file) = rest.split_once(' ')?;
                (!file.is_empty()).then_some(())?;
                Some(Command::Track(id.parse().ok()?, file.to_owned()))
            }
            _ => None,
        }
    }
}

/// One entity's position over recent ticks, as a lockstep run writes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Track {
    /// The entity's simulation id.
    pub sim_id: u64,
    /// `(tick, translation)` for every kept tick the entity existed at, in tick order.
    pub positions: Vec<(u64, [f32; 3])>,
}

impl Track {
    /// Reads a track written by a lockstep run.
    pub fn load(path: &Path) -> Result<Track, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: not a track: {e}", path.display()))
    }
}

/// The positions of every simulation entity with a `Transform` over the last [`TRACK_TICKS`]
/// ticks. The buffers are reused once the ring is full.
#[derive(Default)]
struct PositionRing {
    ticks: VecDeque<(u64, Positions)>,
}

/// Every entity's `(sim id, translation)` after one tick.
type Positions = Vec<(u64, [f32; 3])>;

impl PositionRing {
    fn record(
        &mut self,
        world: &mut World,
        query: &mut QueryState<(&SimId, &Transform)>,
        tick: u64,
    ) {
        let mut positions = if self.ticks.len() >= TRACK_TICKS {
            self.ticks.pop_front().map(|(_, v)| v).unwrap_or_default()
        } else {
            Vec::new()
        };
        positions.clear();
        positions.extend(
            query
                .iter(world)
                .map(|(id, transform)| (id.0, transform.translation.to_array())),
        );
        self.ticks.push_back((tick, positions));
    }

    fn track(&self, sim_id: u64) -> Track {
        Track {
            sim_id,
            positions: self
                .ticks
                .iter()
                .filter_map(|(tick, positions)| {
                    let (_, at) = positions.iter().find(|(id, _)| *id == sim_id)?;
                    Some((*tick, *at))
                })
                .collect(),
        }
    }
}

/// The tick hook of a lockstep run (see the module docs).
#[derive(Default)]
pub struct Lockstep {
    gone: bool,
    ring: PositionRing,
    query: Option<QueryState<(&'static SimId, &'static Transform)>>,
}

/// Writes `bytes` to `file` atomically, or ends the run: the checker is waiting for the file.
fn write_or_exit(file: &str, bytes: &[u8]) {
    if let Err(error) = json_file::write_atomically(&PathBuf::from(file), bytes) {
        eprintln!("error: lockstep: {file}: {error}");
        std::process::exit(1);
    }
}

impl Lockstep {
    /// Announces tick `tick` and answers the checker's commands until one lets the run go on;
    /// returns that one.
    pub fn after_tick(&mut self, world: &mut World, tick: u64) -> Command {
        if self.gone {
            return Command::Gone;
        }
        let query = self.query.get_or_insert_with(|| world.query());
        self.ring.record(world, query, tick);
        // The GPU state of this tick joins its hash (folded as reports fold it), so a run whose
        // GPU bodies part is stopped at that tick, not when their events reach the CPU.
        let gpu = crate::physics::gpu::complete_gpu_ticks_before(world, tick);
        let cpu = world
            .resource::<StateHashes>()
            .get(tick)
            .unwrap_or_default();
        let hash = crate::record::report::fold_gpu_hash(cpu, gpu);
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, "{TICK_LINE} {tick} {hash:016x}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            self.gone = true;
            return Command::Gone;
        }
        drop(stdout);
        loop {
            let mut line = String::new();
            let command = match std::io::stdin().lock().read_line(&mut line) {
                Ok(0) | Err(_) => Command::Gone,
                Ok(_) => Command::parse(&line).unwrap_or_else(|| {
                    bevy::log::error!("lockstep: unknown command {line:?}; running on");
                    Command::Gone
                }),
            };
            match &command {
                Command::Gone => {
                    self.gone = true;
                    return command;
                }
                Command::Next => return command,
                Command::Stop => std::process::exit(0),
                Command::Detail(file) => {
                    let detail = StateDetail::capture(world, tick);
                    let bytes = serde_json::to_vec(&detail).expect("a detail always serializes");
                    write_or_exit(file, &bytes);
                }
                Command::Track(sim_id, file) => {
                    let bytes = serde_json::to_vec(&self.ring.track(*sim_id))
                        .expect("a track always serializes");
                    write_or_exit(file, &bytes);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Command;

    #[test]
    fn commands_parse_and_nothing_else_does() {
        assert_eq!(Command::parse("next\n"), Some(Command::Next));
        assert_eq!(
            Command::parse("detail /tmp/a b.json\n"),
            Some(Command::Detail("/tmp/a b.json".into()))
        );
        assert_eq!(Command::parse("detail \n"), None);
        assert_eq!(Command::parse("stop\n"), Some(Command::Stop));
        assert_eq!(
            Command::parse("track 12 /tmp/t.json\n"),
            Some(Command::Track(12, "/tmp/t.json".into()))
        );
        assert_eq!(Command::parse("track x /tmp/t.json"), None);
        assert_eq!(Command::parse("track 12"), None);
        assert_eq!(Command::parse("nex"), None);
    }
}
