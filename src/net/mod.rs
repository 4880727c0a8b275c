//! Multiplayer sessions (feature `net`): peer-to-peer rollback and lockstep over UDP, with
//! fortress-rollback underneath and the engine's snapshots, ticks and hashes on top.
//!
//! - [`session`]: [`NetSession`], one peer's session over an engine simulation host: saves are
//!   snapshots, loads are rollbacks in place, a tick runs with every player's input in
//!   `PlayerInputs`, the checksum is the world-state hash; [`prepare_app`] readies an app.
//! - [`socket`]: [`PeerSocket`], the crate's messages over a datagram transport, every datagram
//!   checked (sender, size, a whole message) and refusals counted by peer before the crate sees
//!   it.
//! - [`desync`]: [`DesyncReport`], a desync named to the field by a bounded exchange between the
//!   two peers ([`detail_wire`]: its datagrams, parts and reassembly).
//! - [`outside_link`]: [`OutsideLink`], outside results carried between the peers: announced in
//!   the inputs ([`input`]: [`SessionInput`]), their bytes beside them ([`outside_wire`]), entering
//!   every peer on the same tick.
//! - [`NetError`] (in [`error`]): why a session could not start or go on.
//! - One peer of a session as `rusting run --net` starts it is a game mode: `game::net_run`.
//! - [`wire_check`]: [`wire_check::WireCheck`], what the crate's decodable input messages must
//!   not say (a player still here reported gone, a frame no peer has reached).
//! - [`SessionReplay`] (in `determinism::session_replay`, so any build plays one): every
//!   confirmed tick's inputs and hash, played back headless without the network.
//! - [`crate_log`]: [`crate_log::CrateLog`], the rollback crate's own reports logged in one line
//!   each, without the cargo cache's paths.
//! - [`datagrams`]: [`Datagrams`], what a session needs of a transport (a UDP socket).
//! - [`lossy`]: [`LossySocket`], a loopback UDP socket with latency, jitter and loss, for tests.
//!
//! See docs/multiplayer.md for why fortress-rollback, and what a session does each frame. This
//! module must never be needed by a game without netcode: it is compiled only with `net`.

pub mod crate_log;
pub mod datagrams;
pub mod desync;
pub mod detail_wire;
pub mod error;
pub mod input;
pub mod lossy;
pub mod outside_link;
pub mod outside_wire;
pub mod session;
pub mod socket;
pub mod wire_check;

pub use crate::determinism::session_replay::{
    MAX_SESSION_REPLAY_BYTES, SESSION_REPLAY_FORMAT, SessionReplay, SessionReplayError, SessionTick,
};
pub use datagrams::{Datagrams, bind_udp};
pub use desync::{DesyncReport, GIVE_UP_AFTER, HELD_DETAILS, RESEND_EVERY};
pub use input::SessionInput;
pub use lossy::{LinkConditions, LinkCounts, LinkWatch, LossySocket};
pub use outside_link::{OUTSIDE_GIVE_UP_AFTER, OUTSIDE_RESEND_EVERY, OutsideLink};
pub use session::{
    Advanced, EngineSession, FLOOD_LIMIT, MISBEHAVIOUR_LIMIT, NetError, NetEvent, NetSession,
    SessionSettings, prepare_app,
};
pub use socket::{
    FLOOD_DATAGRAMS_PER_SECOND, MAX_DATAGRAM_BYTES, MAX_DATAGRAMS_PER_POLL, MAX_DETAIL_INBOX,
    MAX_OUTSIDE_INBOX, PeerCounts, PeerSocket, SharedCounts, SocketCounts,
};
