//! Outside results: everything that comes from outside the simulation (a leaderboard or login
//! reply, an asset loaded on demand, a platform callback) enters through one [`OutsideQueue`]
//! that any thread may push to, and reaches the simulation as [`OutsideInputs`].
//!
//! At the start of every tick, before any fixed system, the engine's frame stepper moves what
//! waits in the queue into [`OutsideInputs`], in arrival order, stamped with the tick it entered.
//! That is the only way in: a fixed system that polled a channel or a thread itself would see an
//! answer on whichever tick it happened to arrive, which differs between machines and runs. The
//! entries that entered are simulation input: the replay recorder writes them with their tick,
//! playback and seeking feed them back from the replay (never from the queue, so nothing calls
//! out), and a tick re-simulated after a rollback gets the entries it got the first time. In a
//! multiplayer session the session takes what waits in the queue to carry to every peer and
//! supplies each tick's entries from every peer ([`OutsideQueue::feed_from_session`]).
//!
//! Entries are bytes on a named channel, at most [`MAX_OUTSIDE_BYTES`] each and
//! [`MAX_OUTSIDE_PER_TICK`] a tick; the queue refuses more with an [`OutsideError`]. This module
//! must never let an entry in anywhere but the start of a tick.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use bevy::prelude::{Resource, World};
use serde::{Deserialize, Serialize};

use super::error::OutsideError;
use crate::state::sim_state::join;
use crate::state::{SimState, StateHasher};

/// The most bytes one outside entry may hold.
pub const MAX_OUTSIDE_BYTES: usize = 64 * 1024;
/// The most bytes an outside channel's name may have.
pub const MAX_CHANNEL_BYTES: usize = 64;
/// The most outside entries that may enter one tick.
pub const MAX_OUTSIDE_PER_TICK: usize = 256;
/// Ticks whose entries are kept for re-simulating them after a rollback.
pub const OUTSIDE_HISTORY_TICKS: u64 = 7200;

/// One result from outside the simulation: bytes on a named channel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutsideEntry {
    /// Which kind of result (`"leaderboard"`, `"asset:level-2"`): the game's own names.
    pub channel: String,
    /// The result, encoded as the game likes (JSON, bincode, raw bytes).
    pub bytes: Vec<u8>,
}

impl OutsideEntry {
    /// Checks the entry against the limits.
    pub fn check(&self) -> Result<(), OutsideError> {
        if self.channel.is_empty() || self.channel.len() > MAX_CHANNEL_BYTES {
            return Err(OutsideError::Channel {
                channel: self.channel.chars().take(80).collect(),
                limit: MAX_CHANNEL_BYTES,
            });
        }
        if self.bytes.len() > MAX_OUTSIDE_BYTES {
            return Err(OutsideError::TooLarge {
                channel: self.channel.clone(),
                bytes: self.bytes.len(),
                limit: MAX_OUTSIDE_BYTES,
            });
        }
        Ok(())
    }
}

/// The entries of one tick, as a replay records them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutsideTick {
    /// The tick they entered (ticks completed, counting it).
    pub tick: u64,
    /// The entries, in arrival order.
    pub entries: Vec<OutsideEntry>,
}

/// Where the entries of each tick come from.
enum Feed {
    /// The live queue (and, for re-simulated ticks, what entered them the first time).
    Live,
    /// A recording: the queue is never read.
    Recorded(BTreeMap<u64, Vec<OutsideEntry>>),
    /// A multiplayer session: it takes what waits in the queue to carry to its peers, and supplies
    /// every tick's entries (from every peer) before the tick runs.
    Session(BTreeMap<u64, Vec<OutsideEntry>>),
}

struct QueueState {
    waiting: Vec<OutsideEntry>,
    feed: Feed,
    /// What entered each recent tick, for re-simulation.
    history: BTreeMap<u64, Vec<OutsideEntry>>,
    /// The newest tick that took entries from the live queue.
    newest: u64,
}

/// The one way into the simulation from outside: clone it into any thread, push results there.
///
/// A resource every engine app holds; not simulation state (what waits has not entered yet).
#[derive(Resource, Clone)]
pub struct OutsideQueue {
    state: Arc<Mutex<QueueState>>,
}

impl Default for OutsideQueue {
    fn default() -> Self {
        OutsideQueue {
            state: Arc::new(Mutex::new(QueueState {
                waiting: Vec::new(),
                feed: Feed::Live,
                history: BTreeMap::new(),
                newest: 0,
            })),
        }
    }
}

impl std::fmt::Debug for OutsideQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutsideQueue")
            .field("waiting", &self.waiting())
            .finish()
    }
}

impl OutsideQueue {
    /// Queues `bytes` on `channel` for the start of the next tick. Refused (and not queued) when
    /// over a limit.
    pub fn push(&self, channel: impl Into<String>, bytes: Vec<u8>) -> Result<(), OutsideError> {
        let entry = OutsideEntry {
            channel: channel.into(),
            bytes,
        };
        entry.check()?;
        let Ok(mut state) = self.state.lock() else {
            return Ok(());
        };
        if state.waiting.len() >= MAX_OUTSIDE_PER_TICK {
            return Err(OutsideError::Full {
                channel: entry.channel,
                limit: MAX_OUTSIDE_PER_TICK,
            });
        }
        state.waiting.push(entry);
        Ok(())
    }

    /// Hands every following tick's entries to a multiplayer session: what waits in the queue is
    /// taken by the session ([`OutsideQueue::take_waiting`]) to carry to every peer, and each tick
    /// gets what the session supplies for it ([`OutsideQueue::supply`]), the same on every peer.
    pub fn feed_from_session(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.feed = Feed::Session(BTreeMap::new());
        }
    }

    /// Takes at most `limit` entries waiting in the queue, oldest first (a session carries them to
    /// its peers; the rest wait).
    pub fn take_waiting(&self, limit: usize) -> Vec<OutsideEntry> {
        let Ok(mut state) = self.state.lock() else {
            return Vec::new();
        };
        let taken = limit.min(state.waiting.len());
        state.waiting.drain(..taken).collect()
    }

    /// Sets the entries that enter `tick` in a session fed app (nothing happens otherwise). The
    /// session supplies them before every run of the tick, a re-simulated one included.
    pub fn supply(&self, tick: u64, entries: Vec<OutsideEntry>) {
        if let Ok(mut state) = self.state.lock()
            && let Feed::Session(supplied) = &mut state.feed
        {
            supplied.insert(tick, entries);
        }
    }

    /// Entries waiting for the next tick.
    pub fn waiting(&self) -> usize {
        self.state.lock().map(|s| s.waiting.len()).unwrap_or(0)
    }

    /// Feeds every following tick from `recorded` (a replay's entries) instead of the queue: what
    /// playback and seeking do, so they never call out. Entries pushed meanwhile are dropped.
    pub fn play_recorded(&self, recorded: &[OutsideTick]) {
        if let Ok(mut state) = self.state.lock() {
            let mut by_tick = BTreeMap::new();
            for tick in recorded {
                by_tick.insert(tick.tick, tick.entries.clone());
            }
            state.feed = Feed::Recorded(by_tick);
            state.waiting.clear();
        }
    }

    /// Moves the entries for `tick` (ticks completed, counting it) out of the feed.
    fn take_for(&self, tick: u64) -> Vec<OutsideEntry> {
        let Ok(mut state) = self.state.lock() else {
            return Vec::new();
        };
        let state = &mut *state;
        match &mut state.feed {
            Feed::Recorded(recorded) => {
                state.waiting.clear();
                return recorded.get(&tick).cloned().unwrap_or_default();
            }
            Feed::Session(supplied) => {
                // Whatever was supplied for this tick or before it has been used.
                let later = supplied.split_off(&(tick + 1));
                let entries = supplied.remove(&tick).unwrap_or_default();
                *supplied = later;
                return entries;
            }
            Feed::Live => {}
        }
        if tick <= state.newest {
            // Re-simulating: the tick gets what entered it the first time; what waits now waits
            // for the first new tick.
            return state.history.get(&tick).cloned().unwrap_or_default();
        }
        let entries = std::mem::take(&mut state.waiting);
        state.newest = tick;
        if !entries.is_empty() {
            state.history.insert(tick, entries.clone());
        }
        let oldest = tick.saturating_sub(OUTSIDE_HISTORY_TICKS);
        while let Some((&first, _)) = state.history.first_key_value() {
            if first >= oldest {
                break;
            }
            state.history.remove(&first);
        }
        entries
    }
}

/// The outside entries that entered this tick, in arrival order (a simulation resource: hashed,
/// snapshotted, compared).
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct OutsideInputs {
    entered_at: u64,
    entries: Vec<OutsideEntry>,
}

impl OutsideInputs {
    /// Every entry that entered this tick, in arrival order.
    pub fn entries(&self) -> &[OutsideEntry] {
        &self.entries
    }

    /// The bytes of this tick's entries on `channel`, in arrival order.
    pub fn on<'a>(&'a self, channel: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.entries
            .iter()
            .filter(move |entry| entry.channel == channel)
            .map(|entry| entry.bytes.as_slice())
    }

    /// The tick the entries entered (0 before any entered).
    pub fn entered_at(&self) -> u64 {
        self.entered_at
    }
}

impl SimState for OutsideInputs {
    const NAME: &'static str = "OutsideInputs";

    fn hash_state(&self, hasher: &mut StateHasher) {
        hasher.u64(self.entered_at);
        hasher.u64(self.entries.len() as u64);
        for entry in &self.entries {
            entry.channel.hash_state(hasher);
            hasher.u64(entry.bytes.len() as u64);
            hasher.bytes(&entry.bytes);
        }
    }

    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        out(&join(path, "entered_at"), self.entered_at.to_string());
        out(&join(path, "entries.len"), self.entries.len().to_string());
        for (k, entry) in self.entries.iter().enumerate() {
            let at = join(path, &format!("entries.{k}"));
            out(&join(&at, "channel"), format!("{:?}", entry.channel));
            out(&join(&at, "bytes"), format!("{} bytes", entry.bytes.len()));
        }
    }
}

/// Lets the outside entries for `tick` (ticks completed, counting the one about to run) into
/// [`OutsideInputs`], and returns them (for the replay recorder). Called by the frame stepper
/// before each tick's schedules run.
pub fn enter_tick(world: &mut World, tick: u64) -> Vec<OutsideEntry> {
    let Some(queue) = world.get_resource::<OutsideQueue>().cloned() else {
        return Vec::new();
    };
    let entries = queue.take_for(tick);
    if let Some(mut inputs) = world.get_resource_mut::<OutsideInputs>() {
        if !entries.is_empty() {
            inputs.entered_at = tick;
            inputs.entries = entries.clone();
        } else if !inputs.entries.is_empty() {
            inputs.entries.clear();
        }
    }
    entries
}
