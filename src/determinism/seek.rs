//! [`ReplaySeeker`]: go to any tick of a replay, back or forth, through snapshots.
//!
//! The seeker plays its replay forward as far as it has been asked to go, checking every recorded
//! hash, and takes a [`WorldSnapshot`] at the first frame boundary of every `interval` ticks. A
//! seek backward, or forward past a later snapshot, restores the nearest snapshot at or before the
//! target in place, into the seeker's one app, and plays on from there; the re-simulated ticks are
//! checked against the recording too, so a seek can never silently show a state the recording
//! did not have.
//!
//! Playback moves in whole frames, the unit the player saw: `seek(tick)` stops at the end of the
//! frame that ran `tick` (the first frame boundary at or after it), and returns that boundary's
//! tick. This module must never read a clock.

use super::playback::PlaybackCursor;
use crate::engine::App;
use crate::engine::host::SimulationHost;
use crate::record::replay::{Replay, ReplayError};
use crate::state::snapshot::WorldSnapshot;

/// The snapshot interval a report assumes when none is given: 10 s at 60 Hz.
pub const DEFAULT_SNAPSHOT_INTERVAL: u64 = 600;

/// The ticks a [`ReplaySeeker`] with `interval` snapshots `replay` at once it has played it all:
/// the start, then the first frame boundary at least `interval` ticks after the last snapshot.
pub fn snapshot_points(replay: &Replay, interval: u64) -> Vec<u64> {
    let interval = interval.max(1);
    let mut points = vec![replay.start_tick];
    for (k, _) in replay.frames.iter().enumerate() {
        let boundary = replay
            .frames
            .get(k + 1)
            .map_or_else(|| replay.end_tick(), |next| next.start_tick);
        if points
            .last()
            .is_some_and(|last| boundary >= last.saturating_add(interval))
        {
            points.push(boundary);
        }
    }
    points
}

/// A snapshot and where playback stood when it was taken.
struct Checkpoint {
    cursor: PlaybackCursor,
    snapshot: WorldSnapshot,
}

/// A seek's own state, apart from the simulation it drives: the replay, where playback stands in
/// it, and the snapshots taken so far. [`ReplaySeeker`] pairs it with an engine [`App`]; a windowed
/// replay viewer keeps one and drives the world inside each window frame with it.
pub struct SeekState {
    replay: Replay,
    interval: u64,
    cursor: PlaybackCursor,
    /// The tick the seeker left the host at (a host run further by hand is restored on the next
    /// seek).
    position: u64,
    /// Ordered by tick; the first one is the replay's start.
    checkpoints: Vec<Checkpoint>,
}

impl SeekState {
    /// Playback of `replay` at its start in `host` (set up, at the replay's start tick), snapshotting
    /// every `interval` ticks (at least 1).
    pub fn new(
        replay: Replay,
        interval: u64,
        host: &mut impl SimulationHost,
    ) -> Result<Self, ReplayError> {
        replay.prepare(host)?;
        let snapshot = host.take_snapshot()?;
        Ok(SeekState {
            replay,
            interval: interval.max(1),
            position: host.ticks_done(),
            cursor: PlaybackCursor::default(),
            checkpoints: vec![Checkpoint {
                cursor: PlaybackCursor::default(),
                snapshot,
            }],
        })
    }

    /// Goes to the end of the frame that ran `tick` (clamped to the recording) and returns the tick
    /// reached. Fails with [`ReplayError::Diverged`] if a re-simulated tick does not match its
    /// recorded hash.
    pub fn seek(&mut self, host: &mut impl SimulationHost, tick: u64) -> Result<u64, ReplayError> {
        let target = tick.clamp(self.replay.start_tick, self.replay.end_tick());
        let nearest = self
            .checkpoints
            .iter()
            .rposition(|c| c.snapshot.tick() <= target)
            .unwrap_or(0);
        let here = host.ticks_done();
        let nearest_tick = self.checkpoints[nearest].snapshot.tick();
        if here != self.position || here > target || nearest_tick > here {
            let checkpoint = &self.checkpoints[nearest];
            host.restore_snapshot(&checkpoint.snapshot)?;
            self.cursor = checkpoint.cursor;
        }
        while host.ticks_done() < target && self.cursor.frame < self.replay.frames.len() {
            self.play_next_frame(host)?;
        }
        self.position = host.ticks_done();
        Ok(self.position)
    }

    /// Plays the next recorded frame (checking its hashes, snapshotting when due) and returns the
    /// tick reached; at the end of the recording, stays there. The host must be where the last
    /// seek or frame left it.
    pub fn play_next_frame(&mut self, host: &mut impl SimulationHost) -> Result<u64, ReplayError> {
        if self.cursor.frame < self.replay.frames.len() {
            self.replay.play_frame(host, &mut self.cursor)?;
            self.checkpoint_if_due(host)?;
        }
        self.position = host.ticks_done();
        Ok(self.position)
    }

    /// Whether playback has reached the end of the recording.
    pub fn at_end(&self) -> bool {
        self.cursor.frame >= self.replay.frames.len()
    }

    /// The real time the next recorded frame took (none at the end of the recording).
    pub fn next_frame_delta(&self) -> Option<std::time::Duration> {
        self.replay
            .frames
            .get(self.cursor.frame)
            .map(|frame| std::time::Duration::from_nanos(frame.real_delta_ns))
    }

    /// Takes a snapshot when playback has gone `interval` ticks past the last one.
    fn checkpoint_if_due(&mut self, host: &mut impl SimulationHost) -> Result<(), ReplayError> {
        let last = self.checkpoints.last().map_or(0, |c| c.snapshot.tick());
        let tick = host.ticks_done();
        if tick >= last.saturating_add(self.interval) {
            let snapshot = host.take_snapshot()?;
            self.checkpoints.push(Checkpoint {
                cursor: self.cursor,
                snapshot,
            });
        }
        Ok(())
    }

    /// The ticks snapshots were taken at so far.
    pub fn snapshot_ticks(&self) -> Vec<u64> {
        self.checkpoints.iter().map(|c| c.snapshot.tick()).collect()
    }

    /// The replay being sought through.
    pub fn replay(&self) -> &Replay {
        &self.replay
    }
}

/// Seeks through a replay (see the module docs).
pub struct ReplaySeeker<F: FnMut() -> App> {
    /// Kept for API compatibility: the app is built once and every seek restores in place.
    _make_app: F,
    app: App,
    state: SeekState,
}

impl<F: FnMut() -> App> ReplaySeeker<F> {
    /// A seeker at the replay's start, in an app from `make_app`, that will snapshot every
    /// `interval` ticks (at least 1).
    pub fn new(replay: Replay, interval: u64, mut make_app: F) -> Result<Self, ReplayError> {
        let mut app = make_app();
        let state = SeekState::new(replay, interval, &mut app)?;
        Ok(ReplaySeeker {
            _make_app: make_app,
            app,
            state,
        })
    }

    /// Goes to the end of the frame that ran `tick` (clamped to the recording) and returns the tick
    /// reached. Fails with [`ReplayError::Diverged`] if a re-simulated tick does not match its
    /// recorded hash.
    pub fn seek(&mut self, tick: u64) -> Result<u64, ReplayError> {
        self.state.seek(&mut self.app, tick)
    }

    /// Plays to the end of the recording, taking every snapshot on the way.
    pub fn scan(&mut self) -> Result<u64, ReplayError> {
        let end = self.state.replay().end_tick();
        self.seek(end)
    }

    /// The app at the current position.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The app at the current position, mutably (to inspect it with queries). Running it further
    /// is allowed: the next seek then starts again from a snapshot.
    pub fn app_mut(&mut self) -> &mut App {
        &mut self.app
    }

    /// The current tick.
    pub fn tick(&self) -> u64 {
        self.app.ticks()
    }

    /// The ticks snapshots were taken at so far.
    pub fn snapshot_ticks(&self) -> Vec<u64> {
        self.state.snapshot_ticks()
    }

    /// The replay being sought through.
    pub fn replay(&self) -> &Replay {
        self.state.replay()
    }
}
