//! The tools that drive an engine `App` (or any [`SimulationHost`](crate::engine::SimulationHost))
//! to prove or find a difference:
//!
//! - `playback` plays a `Replay` back ([`play_replay`]), checking every tick's hash;
//! - `seek` holds [`ReplaySeeker`], which jumps to any tick of a replay through snapshots;
//! - `synctest` holds [`SyncTest`], which rolls back in place and re-simulates every tick;
//! - `compare` holds [`compare_runs`], which goes down to the first differing field;
//! - `lockstep` lets `rusting determinism` step a game's headless run tick by tick;
//! - `session_replay` holds [`SessionReplay`](session_replay::SessionReplay), a multiplayer
//!   session's confirmed ticks (every player's input and the hash), played back without the
//!   network.
//!
//! This layer stands on the engine and the record formats; the network and the window stand on
//! it. It never opens a window or a socket.

pub mod compare;
pub mod lockstep;
pub mod playback;
pub mod seek;
pub mod session_replay;
pub mod synctest;

pub use compare::{Divergence, compare_runs};
pub use playback::{
    PlaybackCursor, STREAM_WINDOW, play_replay, play_replay_reporting, play_replay_stream,
};
pub use seek::{DEFAULT_SNAPSHOT_INTERVAL, ReplaySeeker, SeekState, snapshot_points};
pub use synctest::{SyncTest, SyncTestError, SyncTestRun};
