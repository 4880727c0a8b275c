//! [`NetSession`]: a peer-to-peer rollback session (lockstep when the prediction window is zero)
//! that runs an engine simulation host.
//!
//! fortress-rollback decides what to do each frame; the session does it with the engine's own
//! tools:
//!
//! - **save** tick `n`: a [`WorldSnapshot`] kept in a ring of the last `max_prediction + 2`, and
//!   the world-state hash of tick `n` as the checksum (the CPU hash folded with the GPU hash of
//!   the same tick, as `rusting determinism` announces it);
//! - **load** tick `n`: that snapshot restored in place (a rollback);
//! - **advance**: every player's input for the tick written into [`PlayerInputs`] and the
//!   tick's outside entries supplied to the app's `OutsideQueue`, then exactly one engine tick.
//!
//! Outside results (`jobs::OutsideQueue`) are carried between the peers by an [`OutsideLink`]:
//! each peer announces its own in its input and sends their bytes beside the inputs; entries
//! announced in a confirmed input enter every peer on the same later tick (`outside_delay`
//! ticks later), and a tick whose entries have not all arrived waits
//! ([`NetSession::outside_stalls`]).
//!
//! A peer that sends [`MISBEHAVIOUR_LIMIT`] datagrams the socket refuses (or the session's own
//! `refusal_limit`), or floods it for [`FLOOD_LIMIT`] seconds (or its `flood_limit`), is
//! dropped (disconnected and banned, [`NetEvent::PeerDropped`] says
//! why) while the others go on.
//!
//! The crate compares the checksums of confirmed ticks between peers every `desync_interval`
//! ticks. The session keeps a snapshot of those ticks as it saves them, and when a checksum
//! differs it describes that tick down to the field and names the cause with the peer
//! ([`super::desync`]):
//! [`NetEvent::DesyncNamed`] gives the tick, entity, component and field with both values.
//!
//! The session also keeps
//! every confirmed tick's hash ([`NetSession::confirmed_hashes`]), which never changes once
//! recorded, unlike the hash of a predicted tick. Engine ticks and the crate's frames share their
//! numbers: frame `n` is the tick that runs with `FrameTime::fixed_tick == n`, and the state
//! saved for frame `n` is the state after `n` ticks.
//!
//! This module owns the session, its snapshot ring and its record of confirmed ticks. It must
//! never run a tick the crate did not ask for, or read input anywhere but the requests.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Instant;

use fortress_rollback::{
    Config, DesyncDetection, DisconnectBehavior, FortressError, FortressEvent, FortressRequest,
    Frame, InputStatus, P2PSession, PlayerHandle, PlayerType, SessionBuilder, SessionState,
    SyncTestSession,
};

use super::datagrams::Datagrams;
use super::desync::{DesyncReport, HELD_DETAILS, Investigations};
pub use super::error::NetError;
use super::input::SessionInput;
use super::outside_link::{OutsideLink, Readiness};
use super::socket::{PeerSocket, SharedCounts};
use super::wire_check::WireCheck;
use crate::determinism::session_replay::{
    SessionReplay, confirmed_hash, prepared_for, step_one_tick,
};
use crate::engine::SimulationHost;
use crate::jobs::OutsideQueue;
use crate::record::StateDetail;
use crate::record::report::fold_gpu_hash;
use crate::runtime::{PlayerInputs, PlayerTickInput};
use crate::state::{StateHashes, WorldSnapshot, world_state_hash};

/// Refused datagrams after which a peer is dropped. An honest peer runs the same code and sends
/// none (a datagram damaged on the way is caught by UDP's checksum almost always).
pub const MISBEHAVIOUR_LIMIT: u64 = 32;

/// Seconds of flooding from one peer after which it is dropped.
pub const FLOOD_LIMIT: u64 = 3;

/// The engine's session types for fortress-rollback: inputs are [`SessionInput`] (a
/// [`PlayerTickInput`] and the outside entries announced), a saved state is the tick whose
/// snapshot the session keeps, peers are UDP addresses.
#[derive(Debug)]
pub struct EngineSession;

impl Config for EngineSession {
    type Input = SessionInput;
    type State = u64;
    type Address = SocketAddr;
}

/// Who plays a session, and how it trades latency for rollbacks.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionSettings {
    /// Players, by handle `0..players`.
    pub players: usize,
    /// The handles played on this machine.
    pub local: Vec<usize>,
    /// The handles played elsewhere, with their peer's address.
    pub remote: Vec<(usize, SocketAddr)>,
    /// Ticks a local input waits before it applies (hides latency, costs responsiveness).
    pub input_delay: usize,
    /// Ticks the session may run ahead of the last confirmed input, predicting the rest; 0 is
    /// lockstep (every tick waits for every input).
    pub max_prediction: usize,
    /// Every how many ticks peers compare the checksum of a confirmed tick. In lockstep (a
    /// window of 0) the crate saves no state and compares no checksum: compare
    /// [`NetSession::confirmed_hashes`] between peers instead.
    pub desync_interval: u32,
    /// Refused datagrams after which a peer is dropped ([`MISBEHAVIOUR_LIMIT`] by default;
    /// `u64::MAX` never drops one for them, as a fuzzer needs).
    pub refusal_limit: u64,
    /// Seconds of flooding after which a peer is dropped ([`FLOOD_LIMIT`] by default; `u64::MAX`
    /// never drops one for it).
    pub flood_limit: u64,
    /// Ticks between the input that announces an outside entry and the tick it enters (at least
    /// 1; the same on every peer). The entry's bytes have that long to reach every peer; at
    /// `max_prediction + 2` or more a tick never waits for an announcement to be confirmed, only
    /// for bytes that are late.
    pub outside_delay: usize,
}

impl SessionSettings {
    /// A session of `players` with `local` played here and `remote` elsewhere: input delay 2,
    /// prediction window 8, checksums compared every 10 ticks, peers dropped after
    /// [`MISBEHAVIOUR_LIMIT`] refused datagrams.
    pub fn new(players: usize, local: Vec<usize>, remote: Vec<(usize, SocketAddr)>) -> Self {
        SessionSettings {
            players,
            local,
            remote,
            input_delay: 2,
            max_prediction: 8,
            desync_interval: 10,
            refusal_limit: MISBEHAVIOUR_LIMIT,
            flood_limit: FLOOD_LIMIT,
            outside_delay: 10,
        }
    }
}

/// Something the session saw happen, for the game to show or act on.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NetEvent {
    /// The peer at the address is connected and in step.
    Synchronized(SocketAddr),
    /// The peer at the address is gone.
    Disconnected(SocketAddr),
    /// A confirmed tick's checksum differs from the peer's.
    Desync {
        /// The tick.
        tick: u64,
        /// This machine's checksum.
        local: u128,
        /// The peer's.
        remote: u128,
        /// The peer.
        peer: SocketAddr,
    },
    /// What differs in a desync, found with the peer: tick, entity, component, field and both
    /// values (or why it could not be named). Made once per peer, for its first desync.
    DesyncNamed(DesyncReport),
    /// A peer was dropped for what it sent; the session goes on without it.
    PeerDropped {
        /// Its player handle.
        handle: usize,
        /// Its address.
        peer: SocketAddr,
        /// What it did.
        reason: String,
    },
    /// Anything else the crate reported, as it words it.
    Other(String),
}

/// What one call to [`NetSession::advance`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Advanced {
    /// Engine ticks run, re-simulated ones included.
    pub ticks: u64,
    /// Whether it rolled back.
    pub rolled_back: bool,
    /// Whether it had to wait (not yet synchronised, or too far ahead of the peers).
    pub waiting: bool,
}

/// The crate's session underneath: peers over the network, or every player on this machine.
enum Inner {
    Peers(Box<P2PSession<EngineSession>>),
    Local(Box<SyncTestSession<EngineSession>>),
}

/// A peer-to-peer session over an engine host, or its local mode, a synctest (see the module
/// docs).
pub struct NetSession {
    session: Inner,
    counts: SharedCounts,
    players: usize,
    refusal_limit: u64,
    flood_limit: u64,
    /// Remote players' handles and addresses, and whether each has been dropped.
    remote: Vec<(usize, SocketAddr, bool)>,
    /// `(tick, snapshot)`, oldest first.
    ring: VecDeque<(u64, WorldSnapshot)>,
    ring_len: usize,
    /// The tick and checksum last saved, while no tick has run or been loaded since: the crate
    /// asks to save it again when it waits, and the state is still the same.
    fresh_save: Option<(u64, u128)>,
    /// Every how many ticks the crate compares checksums.
    desync_interval: u64,
    /// `(tick, snapshot)` of the last [`HELD_DETAILS`] checked ticks, oldest first.
    checked: VecDeque<(u64, WorldSnapshot)>,
    investigations: Investigations,
    /// `(tick, hash)` of every confirmed tick, in order.
    confirmed: Vec<(u64, u64)>,
    /// The inputs each tick not yet confirmed last ran with, by tick (ticks done after it).
    pending_inputs: VecDeque<(u64, Vec<PlayerTickInput>)>,
    /// Every confirmed tick's inputs and hash.
    replay: SessionReplay,
    /// The local mode's `(tick, hash)` of each recent tick's first run, oldest first.
    first_runs: VecDeque<(u64, u64)>,
    /// The outside entries: announced, held, exchanged.
    outside: OutsideLink,
    rollbacks: u64,
    events: Vec<NetEvent>,
}

/// Makes an app ready for a session of `players`: inserts [`PlayerInputs`] (simulation state:
/// hashed and in snapshots) with that many players, and hands its `OutsideQueue` to the session
/// (what the game pushes there is carried to every peer and enters the same tick on all). Call it
/// while building the app, on every peer alike.
pub fn prepare_app(app: &mut crate::engine::App, players: usize) {
    crate::determinism::session_replay::prepare_players(app, players);
    if let Some(queue) = app.world().get_resource::<OutsideQueue>() {
        queue.feed_from_session();
    }
}

impl NetSession {
    /// Starts a session over `link`, which must be bound to the address the peers send to.
    ///
    /// # Errors
    ///
    /// [`NetError::Settings`] for settings the crate refuses (a handle out of range, a
    /// prediction window and input delay too large, a desync interval of 0) and an outside
    /// delay of 0.
    pub fn start<D: Datagrams + 'static>(
        settings: &SessionSettings,
        link: D,
    ) -> Result<Self, NetError> {
        let settings_error = |error: FortressError| NetError::Settings(error.to_string());
        if settings.outside_delay == 0 {
            return Err(NetError::Settings(
                "the outside delay must be at least 1 tick".to_owned(),
            ));
        }
        let mut builder = SessionBuilder::<EngineSession>::new()
            .with_num_players(settings.players)
            .map_err(settings_error)?
            .with_input_delay(settings.input_delay)
            .map_err(settings_error)?
            .with_max_prediction_window(settings.max_prediction)
            .with_desync_detection_mode(DesyncDetection::On {
                interval: settings.desync_interval,
            })
            // A peer that stops answering is dropped and the others play on; from the tick the
            // peers agree it left, its player gets no input (see `advance`).
            .with_disconnect_behavior(DisconnectBehavior::ContinueWithout)
            .with_violation_observer(std::sync::Arc::new(super::crate_log::CrateLog));
        for &handle in &settings.local {
            builder = builder
                .add_player(PlayerType::Local, PlayerHandle::new(handle))
                .map_err(settings_error)?;
        }
        for &(handle, address) in &settings.remote {
            builder = builder
                .add_player(PlayerType::Remote(address), PlayerHandle::new(handle))
                .map_err(settings_error)?;
        }
        let check = WireCheck {
            players: settings.players,
            local: settings.local.clone(),
            // A peer runs up to its window plus its delay ahead, and its inputs a delay further.
            ahead: (settings.max_prediction + 2 * settings.input_delay) as i64
                + super::wire_check::FRAME_MARGIN,
        };
        let socket = PeerSocket::new(link, settings.remote.iter().copied(), check);
        let counts = socket.counts();
        let session = builder.start_p2p_session(socket).map_err(settings_error)?;
        Ok(NetSession::over(
            Inner::Peers(Box::new(session)),
            counts,
            settings,
        ))
    }

    /// The same API's local mode: every one of `players` plays on this machine, and every tick
    /// is rolled back `check_distance` ticks and re-simulated, its checksum compared with the
    /// first run's (the crate's synctest). A tick that re-simulates otherwise is
    /// [`NetError::SyncTest`]. Give every player's input to [`NetSession::advance`].
    ///
    /// # Errors
    ///
    /// [`NetError::Settings`] for a session the crate refuses (no players, a check distance of
    /// 0).
    pub fn synctest(players: usize, check_distance: usize) -> Result<Self, NetError> {
        let settings_error = |error: FortressError| NetError::Settings(error.to_string());
        let mut builder = SessionBuilder::<EngineSession>::new()
            .with_num_players(players)
            .map_err(settings_error)?
            .with_input_delay(0)
            .map_err(settings_error)?
            .with_max_prediction_window(check_distance + 1)
            .with_check_distance(check_distance)
            .with_violation_observer(std::sync::Arc::new(super::crate_log::CrateLog));
        for handle in 0..players {
            builder = builder
                .add_player(PlayerType::Local, PlayerHandle::new(handle))
                .map_err(settings_error)?;
        }
        let session = builder.start_synctest_session().map_err(settings_error)?;
        let mut settings = SessionSettings::new(players, (0..players).collect(), Vec::new());
        settings.max_prediction = check_distance + 1;
        settings.outside_delay = check_distance + 3;
        // No peer to compare details with: none are kept.
        settings.desync_interval = u32::MAX;
        Ok(NetSession::over(
            Inner::Local(Box::new(session)),
            SharedCounts::default(),
            &settings,
        ))
    }

    fn over(session: Inner, counts: SharedCounts, settings: &SessionSettings) -> Self {
        NetSession {
            session,
            counts,
            players: settings.players,
            refusal_limit: settings.refusal_limit,
            flood_limit: settings.flood_limit,
            remote: settings
                .remote
                .iter()
                .map(|&(handle, address)| (handle, address, false))
                .collect(),
            ring: VecDeque::new(),
            ring_len: settings.max_prediction + 2,
            fresh_save: None,
            desync_interval: u64::from(settings.desync_interval.max(1)),
            checked: VecDeque::new(),
            investigations: Investigations::default(),
            confirmed: Vec::new(),
            pending_inputs: VecDeque::new(),
            first_runs: VecDeque::new(),
            replay: SessionReplay::new(settings.players),
            outside: OutsideLink::new(
                settings.players,
                &settings.local,
                &settings.remote,
                settings.outside_delay as u64,
            ),
            rollbacks: 0,
            events: Vec::new(),
        }
    }

    /// Reads what the peers sent, drops a peer that misbehaves, and notes what happened. Call it
    /// once a frame, before [`NetSession::advance`].
    pub fn poll(&mut self) {
        let Inner::Peers(session) = &mut self.session else {
            return;
        };
        session.poll_remote_clients();
        self.drop_misbehaving();
        let Inner::Peers(session) = &mut self.session else {
            return;
        };
        for event in session.events() {
            let event = match event {
                FortressEvent::Synchronized { addr } => NetEvent::Synchronized(addr),
                FortressEvent::Disconnected { addr } => NetEvent::Disconnected(addr),
                FortressEvent::DesyncDetected {
                    frame,
                    local_checksum,
                    remote_checksum,
                    addr,
                } => {
                    let tick = tick_of(frame);
                    self.events.push(NetEvent::Desync {
                        tick,
                        local: local_checksum,
                        remote: remote_checksum,
                        peer: addr,
                    });
                    self.investigations.want(tick, addr);
                    continue;
                }
                FortressEvent::PeerDropped { handle, addr } => {
                    let handle = handle.as_usize();
                    let Some(remote) = self.remote.iter_mut().find(|r| r.0 == handle) else {
                        continue;
                    };
                    if remote.2 {
                        continue;
                    }
                    remote.2 = true;
                    NetEvent::PeerDropped {
                        handle,
                        peer: addr,
                        reason: "it stopped answering (the disconnect timeout passed)".to_owned(),
                    }
                }
                other => NetEvent::Other(format!("{other:?}")),
            };
            self.events.push(event);
        }
        self.investigate();
        for (peer, datagram) in self.counts.take_outside() {
            if self.outside.receive(peer, &datagram).is_err() {
                self.counts.count_malformed(peer);
            }
        }
        self.send_outside();
    }

    /// Queues what the outside link sends now (to the peers still here).
    fn send_outside(&mut self) {
        let remote = &self.remote;
        let gone = |address: SocketAddr| remote.iter().any(|r| r.1 == address && r.2);
        let outgoing = self.outside.outgoing(Instant::now(), gone);
        self.counts.queue_outside(outgoing);
    }

    /// Lets the outside link read the announcements of every frame the app has run (below
    /// `ticks_done`) whose inputs are confirmed.
    fn announce_confirmed(&mut self, ticks_done: u64) -> Result<(), NetError> {
        let Inner::Peers(session) = &self.session else {
            // The local mode announces each frame as its inputs are given.
            return Ok(());
        };
        let confirmed = i64::from(session.confirmed_frame().as_i32());
        let end = ticks_done.min(u64::try_from(confirmed + 1).unwrap_or(0));
        while self.outside.frames_processed() < end {
            let frame = self.outside.frames_processed();
            let inputs = session.confirmed_inputs_for_frame(Frame::new(frame as i32))?;
            let counts: Vec<u32> = inputs.iter().map(|input| input.outside).collect();
            self.outside.announce(frame, &counts);
        }
        Ok(())
    }

    /// Moves the desync investigations on with the detail datagrams that came.
    fn investigate(&mut self) {
        for (peer, datagram) in self.counts.take_detail() {
            if self.investigations.receive(peer, &datagram).is_err() {
                self.counts.count_malformed(peer);
            }
        }
        let step = self.investigations.exchange(Instant::now());
        self.counts.queue_detail(step.outgoing);
        for peer in step.refused {
            self.counts.count_malformed(peer);
        }
        for report in step.reports {
            self.report(report);
        }
    }

    fn report(&mut self, report: DesyncReport) {
        bevy::log::warn!("{report}");
        self.events.push(NetEvent::DesyncNamed(report));
    }

    /// Starts the investigations waiting for this machine's detail of a tick: the tick's held
    /// snapshot described down to the field (see [`describe`]).
    fn describe_wanted(&mut self, host: &mut impl SimulationHost) -> Result<(), NetError> {
        for (peer, tick) in self.investigations.wanted() {
            let detail = match self.checked.iter().find(|(kept, _)| *kept == tick) {
                Some((_, snapshot)) => describe(host, snapshot)?,
                None => Err(format!(
                    "this machine no longer holds the state of tick {tick} (it keeps the last \
                     {HELD_DETAILS} checked ticks), so the difference cannot be named"
                )),
            };
            if let Some(report) = self
                .investigations
                .start(tick, peer, Instant::now(), detail)
            {
                self.report(report);
            }
        }
        Ok(())
    }

    /// Disconnects and bans every peer over [`MISBEHAVIOUR_LIMIT`] or [`FLOOD_LIMIT`].
    fn drop_misbehaving(&mut self) {
        let counts = self.counts.get();
        for (handle, address, dropped) in &mut self.remote {
            let Some(peer) = counts.peers.get(address) else {
                continue;
            };
            if *dropped || (peer.refused() < self.refusal_limit && peer.floods < self.flood_limit) {
                continue;
            }
            *dropped = true;
            self.counts.ban(*address);
            // A peer the crate has already removed needs no second removal.
            if let Inner::Peers(session) = &mut self.session {
                let _ = session.remove_player(PlayerHandle::new(*handle));
            }
            let reason = if peer.floods >= self.flood_limit {
                format!(
                    "it flooded the socket (more than {} datagrams a second, {} times)",
                    super::socket::FLOOD_DATAGRAMS_PER_SECOND,
                    peer.floods
                )
            } else {
                format!(
                    "it sent {} datagrams that are not session messages ({} malformed, {} \
                     impossible, {} over {} bytes)",
                    peer.refused(),
                    peer.malformed,
                    peer.impossible,
                    peer.oversized,
                    super::socket::MAX_DATAGRAM_BYTES
                )
            };
            bevy::log::warn!("player {handle} at {address} is dropped: {reason}");
            self.events.push(NetEvent::PeerDropped {
                handle: *handle,
                peer: *address,
                reason,
            });
        }
    }

    /// Whether every peer is connected and the session runs.
    pub fn is_running(&self) -> bool {
        match &self.session {
            Inner::Peers(session) => session.current_state() == SessionState::Running,
            Inner::Local(_) => true,
        }
    }

    /// Runs the next tick with `local` (each local handle's input), and whatever rollback the
    /// peers' inputs call for. Does nothing while the session synchronises or has run as far
    /// ahead as its prediction window allows.
    ///
    /// # Errors
    ///
    /// [`NetError::NotPrepared`] for a host without [`prepare_app`]'s resource, and the crate's,
    /// snapshots' and steps' failures.
    pub fn advance(
        &mut self,
        host: &mut impl SimulationHost,
        local: &[(usize, PlayerTickInput)],
    ) -> Result<Advanced, NetError> {
        if !prepared_for(host, self.players) {
            return Err(NetError::NotPrepared {
                players: self.players,
            });
        }
        self.describe_wanted(host)?;
        let waiting = Advanced {
            waiting: true,
            ..Advanced::default()
        };
        if !self.is_running() {
            return Ok(waiting);
        }
        // The next tick runs only with every outside entry due by it here.
        self.announce_confirmed(host.ticks_done())?;
        match self
            .outside
            .readiness(host.ticks_done() + 1, Instant::now())
        {
            Readiness::Ready => {}
            Readiness::Waiting => return Ok(waiting),
            Readiness::GaveUp { handle, seq, tick } => {
                return Err(NetError::OutsideMissing { handle, seq, tick });
            }
        }
        // This peer's outside entries are announced in its input and sent beside it.
        if let Some(queue) = host.world().get_resource::<OutsideQueue>() {
            let taken = queue.take_waiting(self.outside.per_frame_limit());
            if !taken.is_empty() {
                self.outside.publish(taken);
                self.send_outside();
            }
        }
        let (announcing, count) = (self.outside.announcing_handle(), self.outside.own_count());
        let carried = |handle: usize, player: PlayerTickInput| SessionInput {
            player,
            outside: if handle == announcing { count } else { 0 },
        };
        let advanced_frame = match &mut self.session {
            Inner::Peers(session) => {
                for &(handle, input) in local {
                    session.add_local_input(PlayerHandle::new(handle), carried(handle, input))?;
                }
                session.advance_frame()
            }
            Inner::Local(session) => {
                let mut counts = vec![0; self.players];
                for &(handle, input) in local {
                    let input = carried(handle, input);
                    session.add_local_input(PlayerHandle::new(handle), input)?;
                    if let Some(slot) = counts.get_mut(handle) {
                        *slot = input.outside;
                    }
                }
                // Every input is final at once: the frame announces now.
                self.outside.announce(host.ticks_done(), &counts);
                session.advance_frame()
            }
        };
        let requests = match advanced_frame {
            Ok(requests) => requests,
            Err(FortressError::PredictionThreshold | FortressError::NotSynchronized) => {
                return Ok(Advanced {
                    waiting: true,
                    ..Advanced::default()
                });
            }
            Err(FortressError::MismatchedChecksum {
                current_frame,
                mismatched_frames,
            }) => {
                return Err(NetError::SyncTest {
                    tick: mismatched_frames
                        .iter()
                        .map(|frame| tick_of(*frame))
                        .min()
                        .unwrap_or_else(|| tick_of(current_frame)),
                    at: tick_of(current_frame),
                });
            }
            Err(error) => return Err(error.into()),
        };
        // With the prediction window full the crate asks for no tick (only a save): waiting.
        let mut advanced = Advanced {
            waiting: !requests
                .iter()
                .any(|request| matches!(request, FortressRequest::AdvanceFrame { .. })),
            ..Advanced::default()
        };
        for request in requests {
            match request {
                FortressRequest::SaveGameState { cell, frame } => {
                    let tick = tick_of(frame);
                    if host.ticks_done() != tick {
                        return Err(NetError::Misaligned {
                            tick,
                            ticks_done: host.ticks_done(),
                        });
                    }
                    if let Some((saved, checksum)) = self.fresh_save
                        && saved == tick
                    {
                        cell.save(frame, Some(tick), Some(checksum));
                        continue;
                    }
                    let snapshot = host.take_snapshot()?;
                    let checksum = u128::from(state_hash(host, tick));
                    if tick.is_multiple_of(self.desync_interval) {
                        let kept = host.take_snapshot()?;
                        self.checked.retain(|(held, _)| *held != tick);
                        if self.checked.len() == HELD_DETAILS {
                            self.checked.pop_front();
                        }
                        self.checked.push_back((tick, kept));
                    }
                    self.keep(tick, snapshot);
                    self.fresh_save = Some((tick, checksum));
                    cell.save(frame, Some(tick), Some(checksum));
                }
                FortressRequest::LoadGameState { frame, .. } => {
                    let tick = tick_of(frame);
                    let snapshot = self
                        .ring
                        .iter()
                        .find(|(kept, _)| *kept == tick)
                        .map(|(_, snapshot)| snapshot)
                        .ok_or(NetError::Forgotten { tick })?;
                    host.restore_snapshot(snapshot)?;
                    self.fresh_save = None;
                    self.rollbacks += 1;
                    advanced.rolled_back = true;
                }
                FortressRequest::AdvanceFrame { inputs } => {
                    let players: Vec<PlayerTickInput> = inputs
                        .iter()
                        .map(|(input, status)| match status {
                            InputStatus::Disconnected => PlayerTickInput::default(),
                            _ => input.player,
                        })
                        .collect();
                    host.world_mut()
                        .resource_mut::<PlayerInputs>()
                        .advance(players.clone());
                    let next = host.ticks_done() + 1;
                    let entries = self.outside_entries(next)?;
                    if let Some(queue) = host.world().get_resource::<OutsideQueue>() {
                        queue.supply(next, entries);
                    }
                    self.fresh_save = None;
                    let tick = step_one_tick(host).map_err(|ran| NetError::Step { ran })?;
                    if matches!(self.session, Inner::Local(_)) {
                        self.check_first_run(host, tick)?;
                        // A synctest fails on a change of the floating-point environment too.
                        if let Some(change) = host.first_float_change() {
                            return Err(NetError::FloatEnv(change.clone()));
                        }
                    }
                    self.pending_inputs.retain(|(kept, _)| *kept < tick);
                    self.pending_inputs.push_back((tick, players));
                    advanced.ticks += 1;
                }
            }
        }
        self.record_confirmed(host)?;
        self.counts.set_frame(host.ticks_done());
        Ok(advanced)
    }

    /// In the local mode, compares the hash of a re-simulated tick with its first run's. The
    /// crate's synctest compares re-simulations with each other only (it first saves a tick's
    /// state after re-simulating it), so a tick whose first run differs from every re-run (state
    /// that a re-simulation does not put back, a system that only runs the first time) would
    /// pass it.
    fn check_first_run(
        &mut self,
        host: &mut impl SimulationHost,
        tick: u64,
    ) -> Result<(), NetError> {
        let hash = state_hash(host, tick);
        match self.first_runs.iter().find(|(kept, _)| *kept == tick) {
            Some(&(_, first)) if first != hash => Err(NetError::SyncTest {
                tick,
                at: self.first_runs.back().map_or(tick, |(newest, _)| *newest),
            }),
            Some(_) => Ok(()),
            None => {
                if self.first_runs.len() > self.ring_len {
                    self.first_runs.pop_front();
                }
                self.first_runs.push_back((tick, hash));
                Ok(())
            }
        }
    }

    /// Keeps `snapshot` of `tick` in the ring, replacing an older one of the same tick.
    fn keep(&mut self, tick: u64, snapshot: WorldSnapshot) {
        self.ring.retain(|(kept, _)| *kept != tick);
        if self.ring.len() == self.ring_len {
            self.ring.pop_front();
        }
        self.ring.push_back((tick, snapshot));
    }

    /// Records the hash and inputs of every tick confirmed since the last call.
    fn record_confirmed(&mut self, host: &mut impl SimulationHost) -> Result<(), NetError> {
        // Frame `c` confirmed: the inputs of ticks up to `c` are final, so the state after
        // `c + 1` ticks is.
        let confirmed = match &self.session {
            Inner::Peers(session) => session.confirmed_frame().as_i32(),
            // Every input is known at once, and a re-simulated tick that hashed otherwise
            // would have failed the step: every tick run is final.
            Inner::Local(session) => session.current_frame().as_i32() - 1,
        };
        if confirmed < 0 {
            return Ok(());
        }
        let last = (confirmed as u64 + 1).min(host.ticks_done());
        let next = self.confirmed.last().map_or(1, |(tick, _)| tick + 1);
        for tick in next..=last {
            let hash = confirmed_hash(host, tick).ok_or(NetError::Unrecorded { tick })?;
            self.confirmed.push((tick, hash));
            while let Some((kept, inputs)) = self.pending_inputs.pop_front() {
                if kept == tick {
                    let entries = self.outside_entries(tick)?;
                    self.replay.push(inputs, hash, entries);
                    break;
                }
            }
        }
        // Ticks older than the snapshot ring never run again (a confirmed tick still does in the
        // local mode, whose every tick is re-simulated): their entries are done with.
        self.outside
            .forget_through(last.saturating_sub(self.ring_len as u64));
        Ok(())
    }

    /// The outside entries that enter `tick`.
    fn outside_entries(&self, tick: u64) -> Result<Vec<crate::jobs::OutsideEntry>, NetError> {
        self.outside
            .entries_for(tick)
            .map_err(|(handle, seq)| NetError::OutsideMissing { handle, seq, tick })
    }

    /// Times the session waited for an outside entry (or for the input announcing it to be
    /// confirmed) before running a tick.
    pub fn outside_stalls(&self) -> u64 {
        self.outside.stalls()
    }

    /// Every confirmed tick so far with the inputs it ran with: the session's replay.
    pub fn replay(&self) -> &SessionReplay {
        &self.replay
    }

    /// `(tick, hash)` of every confirmed tick so far (ticks counted as done, from 1), in order:
    /// the same on every peer of a deterministic game.
    pub fn confirmed_hashes(&self) -> &[(u64, u64)] {
        &self.confirmed
    }

    /// Whether a desync is being named with a peer (its report has not come yet).
    pub fn investigating(&self) -> bool {
        self.investigations.active()
    }

    /// Rollbacks so far.
    pub fn rollbacks(&self) -> u64 {
        self.rollbacks
    }

    /// Takes the events noted since the last call.
    pub fn take_events(&mut self) -> Vec<NetEvent> {
        std::mem::take(&mut self.events)
    }

    /// What the socket has received, accepted and refused, by peer.
    pub fn socket_counts(&self) -> super::SocketCounts {
        self.counts.get()
    }
}

/// `snapshot`'s state down to the field: put in place, described, and the present state put back
/// (with its hash history, which a restore may shorten), without rewinding a running recording.
/// The inner error says why the tick could not be described (the session goes on and reports it
/// unnamed); the outer one that the present state could not be put back.
fn describe(
    host: &mut impl SimulationHost,
    snapshot: &WorldSnapshot,
) -> Result<Result<StateDetail, String>, NetError> {
    let present = host.take_snapshot()?;
    let hashes = host.world().resource::<StateHashes>().clone();
    let described = snapshot
        .restore(host.world_mut())
        .map(|()| StateDetail::capture(host.world_mut(), snapshot.tick()))
        .map_err(|error| {
            format!(
                "the state of tick {} could not be put back to describe it: {error}",
                snapshot.tick()
            )
        });
    // Whatever happened, the present comes back before the next tick.
    present.restore(host.world_mut())?;
    *host.world_mut().resource_mut::<StateHashes>() = hashes;
    Ok(described)
}

/// The engine tick count of a crate frame.
fn tick_of(frame: Frame) -> u64 {
    frame.as_i32().max(0) as u64
}

/// The hash of the state after `tick` ticks: the CPU hash folded with the GPU hash of GPU tick
/// `tick - 1` (completing queued GPU ticks first), as lockstep runs announce it.
fn state_hash(host: &mut impl SimulationHost, tick: u64) -> u64 {
    // Tick 0 (no tick has run, so none recorded a hash): the world as it is, with no GPU tick.
    confirmed_hash(host, tick)
        .unwrap_or_else(|| fold_gpu_hash(world_state_hash(host.world_mut()), None))
}
