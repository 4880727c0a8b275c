//! [`NetError`]: why a multiplayer session could not start or go on.
//!
//! This module owns the error type. It must never decide what is an error: the session does.

use fortress_rollback::FortressError;

use crate::state::SnapshotError;

/// Why a session could not start or go on.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum NetError {
    /// The settings are not a session the crate can run.
    #[error("the session's settings are refused: {0}")]
    Settings(String),
    /// The host was not made ready for a session of this size.
    #[error(
        "the app has no `PlayerInputs` for {players} players: call `net::prepare_app` while \
         building it"
    )]
    NotPrepared {
        /// Players in the session.
        players: usize,
    },
    /// The rollback crate failed.
    #[error("the rollback session failed: {0}")]
    Session(String),
    /// A snapshot could not be taken or restored.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The crate asked to load a tick whose snapshot the ring no longer holds.
    #[error("the session asked to roll back to tick {tick}, which is no longer kept")]
    Forgotten {
        /// The tick.
        tick: u64,
    },
    /// The host's ticks and the session's do not line up: the session must start on a host
    /// that has run no tick, and only the session may run its ticks.
    #[error(
        "the session is at tick {tick} and the app has run {ticks_done} ticks: start the session \
         before the app's first tick, and run ticks only through the session"
    )]
    Misaligned {
        /// The session's tick.
        tick: u64,
        /// The ticks the host has run.
        ticks_done: u64,
    },
    /// A confirmed tick's hash is no longer in `StateHashes` (it lagged more than
    /// `STATE_HASH_HISTORY` ticks behind), so the record would have a gap.
    #[error("the hash of confirmed tick {tick} is no longer kept, so the session cannot record it")]
    Unrecorded {
        /// The tick.
        tick: u64,
    },
    /// A local session (a synctest) re-simulated a tick to another checksum: state outside the
    /// snapshot, or a system that does not depend on its inputs alone.
    #[error(
        "synctest: tick {tick} re-simulated from a snapshot hashes otherwise than when it first \
         ran (at tick {at}): some state is kept outside the snapshot"
    )]
    SyncTest {
        /// The first tick whose checksums differ.
        tick: u64,
        /// The tick the session had reached.
        at: u64,
    },
    /// An outside entry due at a tick has not come from its peer in
    /// [`OUTSIDE_GIVE_UP_AFTER`](super::outside_link::OUTSIDE_GIVE_UP_AFTER) (its peer has gone,
    /// or sends nothing of it), so the tick cannot run the same on every peer.
    #[error(
        "player {handle}'s outside entry #{seq}, due at tick {tick}, has not arrived: its peer \
         announced it and never sent it"
    )]
    OutsideMissing {
        /// The player whose peer announced it.
        handle: usize,
        /// The entry's number in that peer's announcements.
        seq: u32,
        /// The tick it is due.
        tick: u64,
    },
    /// The local mode (a synctest) found the floating-point environment changed on a thread that
    /// simulates.
    #[error("synctest: {0}")]
    FloatEnv(crate::runtime::FloatEnvChanged),
    /// A frame step did not run exactly one tick (the host's time control stopped it).
    #[error("a session tick ran {ran} engine ticks instead of one (is the host paused?)")]
    Step {
        /// Ticks the step ran.
        ran: u64,
    },
}

impl From<FortressError> for NetError {
    fn from(error: FortressError) -> Self {
        NetError::Session(error.to_string())
    }
}
