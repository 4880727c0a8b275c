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

use super::replay::{PlaybackCursor, Replay, ReplayError};
use super::snapshot::WorldSnapshot;
use crate::app::App;

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

/// Seeks through a replay (see the module docs).
pub struct ReplaySeeker<F: FnMut() -> App> {
    replay: Replay,
    interval: u64,
    /// Kept for API compatibility: the app is built once and every seek restores in place.
    _make_app: F,
    app: App,
    cursor: PlaybackCursor,
    /// The tick the seeker left `app` at (an app run further by hand is restored on the next seek).
    position: u64,
    /// Ordered by tick; the first one is the replay's start.
    checkpoints: Vec<Checkpoint>,
}

impl<F: FnMut() -> App> ReplaySeeker<F> {
    /// A seeker at the replay's start, in an app from `make_app`, that will snapshot every
    /// `interval` ticks (at least 1).
    pub fn new(replay: Replay, interval: u64, mut make_app: F) -> Result<Self, ReplayError> {
        let mut app = make_app();
        replay.prepare(&mut app)?;
        let snapshot = app.snapshot()?;
        Ok(ReplaySeeker {
            replay,
            interval: interval.max(1),
            _make_app: make_app,
            position: app.ticks(),
            app,
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
    pub fn seek(&mut self, tick: u64) -> Result<u64, ReplayError> {
        let target = tick.clamp(self.replay.start_tick, self.replay.end_tick());
        let nearest = self
            .checkpoints
            .iter()
            .rposition(|c| c.snapshot.tick() <= target)
            .unwrap_or(0);
        let here = self.app.ticks();
        let nearest_tick = self.checkpoints[nearest].snapshot.tick();
        if here != self.position || here > target || nearest_tick > here {
            let checkpoint = &self.checkpoints[nearest];
            self.app.restore(&checkpoint.snapshot)?;
            self.cursor = checkpoint.cursor;
        }
        while self.app.ticks() < target && self.cursor.frame < self.replay.frames.len() {
            self.replay.play_frame(&mut self.app, &mut self.cursor)?;
            self.checkpoint_if_due()?;
        }
        self.position = self.app.ticks();
        Ok(self.position)
    }

    /// Plays to the end of the recording, taking every snapshot on the way.
    pub fn scan(&mut self) -> Result<u64, ReplayError> {
        self.seek(self.replay.end_tick())
    }

    /// Takes a snapshot when playback has gone `interval` ticks past the last one.
    fn checkpoint_if_due(&mut self) -> Result<(), ReplayError> {
        let last = self.checkpoints.last().map_or(0, |c| c.snapshot.tick());
        let tick = self.app.ticks();
        if tick >= last.saturating_add(self.interval) {
            let snapshot = self.app.snapshot()?;
            self.checkpoints.push(Checkpoint {
                cursor: self.cursor,
                snapshot,
            });
        }
        Ok(())
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
        self.checkpoints.iter().map(|c| c.snapshot.tick()).collect()
    }

    /// The replay being sought through.
    pub fn replay(&self) -> &Replay {
        &self.replay
    }
}
