//! [`Recorder`]: what the engine `App` records as it runs, into memory or into a journal on disk
//! (see `replay_journal`): every frame's delta and changed input, every tick's hash, rollbacks,
//! and the state down to the field at sparse frame ends (about every
//! [`super::replay::DETAIL_INTERVAL`] ticks) so that a later divergence can be
//! blamed. This module must never read a clock or change the world.

use std::path::Path;
use std::time::Duration;

use super::detail::StateDetail;
use super::replay::{DETAIL_INTERVAL, REPLAY_FORMAT_VERSION, Replay, ReplayError, ReplayFrame};
use super::report::hex;
use crate::runtime::RuntimeInput;
use crate::scene::SceneIdentity;

/// Where a recorder puts what it records.
#[derive(Clone)]
enum Sink {
    /// A replay held in memory.
    Memory(Replay),
    /// A journal on disk (see `replay_journal`), in constant memory.
    Journal(super::replay_journal::SharedJournal),
}

/// Records frames as the engine `App` runs them (lives in the `App`, outside the `World`).
#[derive(Clone)]
pub struct Recorder {
    sink: Sink,
    last_input: Option<RuntimeInput>,
    /// The tick of the last state detail (the start tick before the first).
    last_detail: u64,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.sink {
            Sink::Memory(replay) => f.debug_tuple("Recorder").field(replay).finish(),
            Sink::Journal(_) => f.write_str("Recorder(journal)"),
        }
    }
}

/// An empty replay starting at `start_tick` with `seed`, in an app holding `scene`.
fn empty_replay(seed: u64, start_tick: u64, scene: Option<SceneIdentity>) -> Replay {
    Replay {
        format_version: REPLAY_FORMAT_VERSION,
        engine_version: env!("CARGO_PKG_VERSION").to_owned(),
        seed,
        start_tick,
        scene,
        frames: Vec::new(),
        hashes: Vec::new(),
        details: Vec::new(),
    }
}

impl Recorder {
    /// A recorder into memory starting at `start_tick` with `seed`, in an app holding `scene`.
    pub fn new(seed: u64, start_tick: u64, scene: Option<SceneIdentity>) -> Self {
        Recorder {
            sink: Sink::Memory(empty_replay(seed, start_tick, scene)),
            last_input: None,
            last_detail: start_tick,
        }
    }

    /// A recorder into a journal beside `target` (see `replay_journal`), which finishing turns
    /// into the replay at `target`.
    pub fn journal(
        seed: u64,
        start_tick: u64,
        scene: Option<SceneIdentity>,
        target: &Path,
    ) -> Result<Self, ReplayError> {
        let header = empty_replay(seed, start_tick, scene);
        Ok(Recorder {
            sink: Sink::Journal(super::replay_journal::Journal::create(target, &header)?),
            last_input: None,
            last_detail: start_tick,
        })
    }

    /// Records a frame about to run.
    pub fn frame(&mut self, real_delta: Duration, start_tick: u64, input: &RuntimeInput) {
        let changed = self.last_input.as_ref() != Some(input);
        if changed {
            self.last_input = Some(input.clone());
        }
        let frame = ReplayFrame {
            real_delta_ns: real_delta.as_nanos().min(u64::MAX as u128) as u64,
            start_tick,
            input: changed.then(|| input.clone()),
        };
        match &mut self.sink {
            Sink::Memory(replay) => replay.frames.push(frame),
            Sink::Journal(journal) => {
                if let Ok(mut journal) = journal.lock() {
                    journal.frame(frame);
                }
            }
        }
    }

    /// Whether the frame ending at `tick` should record a state detail: the first frame end at
    /// least [`DETAIL_INTERVAL`] ticks after the last.
    pub fn detail_due(&self, tick: u64) -> bool {
        tick >= self.last_detail.saturating_add(DETAIL_INTERVAL)
    }

    /// Records the state down to the field at a frame end.
    pub fn detail(&mut self, detail: StateDetail) {
        self.last_detail = detail.tick;
        match &mut self.sink {
            Sink::Memory(replay) => replay.details.push(detail),
            Sink::Journal(journal) => {
                if let Ok(mut journal) = journal.lock() {
                    journal.detail(&detail);
                }
            }
        }
    }

    /// Ends a frame: a journal hands the frame's records to the operating system, so a kill
    /// loses at most the frame that is running.
    pub fn end_frame(&mut self) {
        if let Sink::Journal(journal) = &self.sink
            && let Ok(mut journal) = journal.lock()
        {
            journal.flush();
        }
    }

    /// Records a tick's hash.
    pub fn tick(&mut self, tick: u64, hash: u64) {
        match &mut self.sink {
            Sink::Memory(replay) => replay.hashes.push((tick, hex(hash))),
            Sink::Journal(journal) => {
                if let Ok(mut journal) = journal.lock() {
                    journal.hash(tick, hash);
                }
            }
        }
    }

    /// Forgets every frame that started at or after `tick` and every hash after it: the app was
    /// rolled back to `tick`, and what it runs next replaces them.
    pub fn rewind(&mut self, tick: u64) {
        self.last_detail = self.last_detail.min(tick);
        match &mut self.sink {
            Sink::Memory(replay) => {
                replay.frames.retain(|frame| frame.start_tick < tick);
                replay.hashes.retain(|&(t, _)| t <= tick);
                replay.details.retain(|d| d.tick <= tick);
                self.last_input = replay
                    .frames
                    .iter()
                    .rev()
                    .find_map(|frame| frame.input.clone());
            }
            Sink::Journal(journal) => {
                if let Ok(mut journal) = journal.lock() {
                    journal.rewind(tick);
                }
                // The next frame records its input in full.
                self.last_input = None;
            }
        }
    }

    /// The replay so far, when recording into memory.
    pub fn replay(&self) -> Option<&Replay> {
        match &self.sink {
            Sink::Memory(replay) => Some(replay),
            Sink::Journal(_) => None,
        }
    }

    /// The finished replay: the one in memory, or the journal's, written to its target and the
    /// journal removed.
    pub fn finish(self) -> Result<Replay, ReplayError> {
        match self.sink {
            Sink::Memory(replay) => Ok(replay),
            Sink::Journal(journal) => match journal.lock() {
                Ok(mut journal) => journal.finalize(),
                Err(poisoned) => poisoned.into_inner().finalize(),
            },
        }
    }
}
