//! [`Recorder`]: what an engine `App` records as it runs, into memory or into a journal on disk
//! (see `replay_journal`): every frame's delta and changed input, every tick's hash, rollbacks,
//! and the state down to the field at sparse frame ends (about every
//! [`super::replay::DETAIL_INTERVAL`] ticks) so that a later divergence can be blamed.
//!
//! The engine knows the recorder only as a [`FrameRecorder`] in its frame stepper;
//! [`RecordingAppExt`] is how an app is recorded (`app.start_recording()`, in the prelude); a
//! windowed game takes its recording back with `FrameStepper::take_recorder::<Recorder>()`. This module must
//! never read a clock or change the world.

use std::any::Any;
use std::path::Path;
use std::time::Duration;

use bevy::prelude::World;

use super::detail::StateDetail;
use super::journal_finish::WrittenReplay;
use super::replay::{DETAIL_INTERVAL, Replay, ReplayError, ReplayFrame};
use crate::engine::{App, FrameRecorder};
use crate::jobs::{OutsideEntry, OutsideTick};
use crate::runtime::{FrameTime, RandomSeed, RuntimeInput};
use crate::scene::SceneIdentity;
use crate::state::LayoutFingerprint;
use crate::state::hasher::hex;

/// Where a recorder puts what it records.
#[derive(Clone)]
enum Sink {
    /// A replay held in memory.
    Memory(Box<Replay>),
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

impl Recorder {
    /// A recorder into memory starting at `start_tick` with `seed`, in an app holding `scene`
    /// whose state has `layout` (playback refuses a game of another layout).
    pub fn new(
        seed: u64,
        start_tick: u64,
        scene: Option<SceneIdentity>,
        layout: Option<LayoutFingerprint>,
    ) -> Self {
        Recorder {
            sink: Sink::Memory(Box::new(Replay::empty(seed, start_tick, scene, layout))),
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
        layout: Option<LayoutFingerprint>,
        target: &Path,
    ) -> Result<Self, ReplayError> {
        let header = Replay::empty(seed, start_tick, scene, layout);
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

    /// Records the outside entries that entered `tick`.
    pub fn outside(&mut self, tick: u64, entries: &[OutsideEntry]) {
        let entered = OutsideTick {
            tick,
            entries: entries.to_vec(),
        };
        match &mut self.sink {
            Sink::Memory(replay) => replay.outside.push(entered),
            Sink::Journal(journal) => {
                if let Ok(mut journal) = journal.lock() {
                    journal.outside(&entered);
                }
            }
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
                replay.outside.retain(|o| o.tick <= tick);
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

    /// The finished replay: the one in memory, or the journal's, written to its target, the
    /// journal removed, and the target read back (use [`Recorder::finish_file`] to finish a
    /// recording into a file without holding its replay).
    pub fn finish(self) -> Result<Replay, ReplayError> {
        match self.sink {
            Sink::Memory(replay) => Ok(*replay),
            Sink::Journal(journal) => {
                let written = finalize(&journal)?;
                Replay::load(&written.path)
            }
        }
    }

    /// Finishes a recording into a file: the journal written to its target (in memory that does
    /// not grow with the recording, for a compact target) and removed. `None` for a recording
    /// into memory, which is dropped.
    pub fn finish_file(self) -> Result<Option<WrittenReplay>, ReplayError> {
        match self.sink {
            Sink::Memory(_) => Ok(None),
            Sink::Journal(journal) => finalize(&journal).map(Some),
        }
    }
}

/// Finalizes a shared journal, even one whose lock a panic poisoned.
fn finalize(journal: &super::replay_journal::SharedJournal) -> Result<WrittenReplay, ReplayError> {
    match journal.lock() {
        Ok(mut journal) => journal.finalize(),
        Err(poisoned) => poisoned.into_inner().finalize(),
    }
}

impl FrameRecorder for Recorder {
    fn on_frame(&mut self, real_delta: Duration, first_tick: u64, input: &RuntimeInput) {
        self.frame(real_delta, first_tick, input);
    }

    fn on_outside(&mut self, tick: u64, entries: &[OutsideEntry]) {
        self.outside(tick, entries);
    }

    fn on_tick(&mut self, tick: u64, hash: u64) {
        self.tick(tick, hash);
    }

    fn on_frame_end(&mut self, world: &mut World, tick: u64, ticks: u32) {
        if ticks > 0 && self.detail_due(tick) {
            self.detail(StateDetail::capture(world, tick));
        }
        self.end_frame();
    }

    fn on_rewind(&mut self, tick: u64) {
        self.rewind(tick);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Recording an engine [`App`] into a [`Replay`]: the replay tools' part of an app, in the
/// prelude. The recorder lives in the app's frame stepper, outside the `World`.
pub trait RecordingAppExt {
    /// Starts recording every following frame into a `Replay` in memory (replacing any recording
    /// in progress).
    ///
    /// # Panics
    ///
    /// If the app's set-up (`App::setup`) fails; call it first to handle its error.
    fn start_recording(&mut self);

    /// Starts recording every following frame into a journal beside `target`, appended as the
    /// app runs in constant memory; [`RecordingAppExt::finish_recording`] turns it into the replay
    /// at `target` (compact when its name ends in `.rply`). A crash leaves the journal, which
    /// every replay reader accepts. Fails when the journal cannot be created, or one is left from
    /// an earlier run.
    ///
    /// # Panics
    ///
    /// If the app's set-up (`App::setup`) fails; call it first to handle its error.
    fn start_recording_to(&mut self, target: &Path) -> Result<(), ReplayError>;

    /// The recording so far, if one is running into memory.
    fn recording(&self) -> Option<&Replay>;

    /// Stops recording and returns the replay (a journal's is written to its target first, then
    /// read back whole: see [`RecordingAppExt::finish_recording_file`] for a long recording).
    fn finish_recording(&mut self) -> Result<Option<Replay>, ReplayError>;

    /// Stops a recording into a file ([`RecordingAppExt::start_recording_to`]) and finishes the
    /// file without reading its replay into memory: a compact target is streamed from the
    /// journal, so finishing an hour takes no more memory than a minute. Returns where the replay
    /// is and what it holds; `None`, leaving it running, when the recording is into memory or
    /// there is none.
    fn finish_recording_file(&mut self) -> Result<Option<WrittenReplay>, ReplayError>;

    /// Stops recording and returns the replay, or `None` when there was no recording or its
    /// journal could not be finished (see [`RecordingAppExt::finish_recording`] for the error).
    fn stop_recording(&mut self) -> Option<Replay>;
}

/// The seed, tick and scene a recording of `app` starts from.
fn recording_start(app: &mut App) -> (u64, u64, Option<SceneIdentity>, Option<LayoutFingerprint>) {
    if let Err(error) = app.setup() {
        panic!("the Rusting app cannot start: {error}");
    }
    let world = app.world();
    let seed = world.resource::<RandomSeed>().0;
    let tick = world.resource::<FrameTime>().fixed_tick;
    let scene = world.get_resource::<SceneIdentity>().cloned();
    let layout = crate::state::registry::sim_registry(world).layout();
    (seed, tick, scene, Some(LayoutFingerprint::clone(&layout)))
}

impl RecordingAppExt for App {
    fn start_recording(&mut self) {
        let (seed, tick, scene, layout) = recording_start(self);
        self.set_frame_recorder(Box::new(Recorder::new(seed, tick, scene, layout)));
    }

    fn start_recording_to(&mut self, target: &Path) -> Result<(), ReplayError> {
        let (seed, tick, scene, layout) = recording_start(self);
        let recorder = Recorder::journal(seed, tick, scene, layout, target)?;
        self.set_frame_recorder(Box::new(recorder));
        Ok(())
    }

    fn recording(&self) -> Option<&Replay> {
        self.frame_recorder::<Recorder>()?.replay()
    }

    fn finish_recording(&mut self) -> Result<Option<Replay>, ReplayError> {
        self.take_frame_recorder::<Recorder>()
            .map(Recorder::finish)
            .transpose()
    }

    fn finish_recording_file(&mut self) -> Result<Option<WrittenReplay>, ReplayError> {
        let into_file = self
            .frame_recorder::<Recorder>()
            .is_some_and(|recorder| recorder.replay().is_none());
        if !into_file {
            return Ok(None);
        }
        self.take_frame_recorder::<Recorder>()
            .map_or(Ok(None), Recorder::finish_file)
    }

    fn stop_recording(&mut self) -> Option<Replay> {
        self.finish_recording().ok().flatten()
    }
}
