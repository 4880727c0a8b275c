//! A game's multiplayer run: what `rusting run <project> --net ...` asks of the game through
//! its `RUSTING_NET_*` variables. The game plays one peer of a session, headless, for a number of
//! confirmed ticks, with every player's input carried by the session and its own from the input
//! script (one script frame a tick; no script is no input).
//!
//! - `RUSTING_NET_PEERS`: every player's address in handle order, comma-separated
//!   (`127.0.0.1:7000,127.0.0.1:7001`);
//! - `RUSTING_NET_PLAYER`: the handle played here (its address is the one bound);
//! - `RUSTING_NET_SESSION_OUT`: where to write the session replay (optional);
//! - `RUSTING_HEADLESS_TICKS`: the confirmed ticks to play; `RUSTING_STATE_HASH_OUT` gets their
//!   hashes, so two peers' reports compare with `rusting hashes diff`.
//!
//! A desync ends the run with `NET_DESYNC` and the report naming the field; a peer that never
//! answers, or a session that stops confirming ticks, with `NET_FAILED`. This module owns the
//! run's loop. It must never run a tick itself: the session runs them all.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::error::GameError;
use super::options::environment;
use super::project::Project;
use crate::engine::{App, SimulationHost};
use crate::net::{NetEvent, NetSession, SessionSettings, bind_udp, prepare_app};
use crate::record::StateHashReport;
use crate::runtime::{InputBindings, InputScript, PlayerTickInput, RuntimeInput, TickInput};

/// Every player's address, in handle order.
pub const PEERS_VARIABLE: &str = "RUSTING_NET_PEERS";
/// The handle played here.
pub const PLAYER_VARIABLE: &str = "RUSTING_NET_PLAYER";
/// Where the session replay goes.
pub const SESSION_OUT_VARIABLE: &str = "RUSTING_NET_SESSION_OUT";

/// How long the peers may take to connect.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the session may go without confirming a tick once it runs.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a peer goes on after its last confirmed tick, so the others get its last inputs.
pub const LINGER: Duration = Duration::from_secs(2);

/// One peer's part in a session, from the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetRun {
    /// Every player's address, by handle.
    pub peers: Vec<SocketAddr>,
    /// The handle played here.
    pub player: usize,
    /// Where to write the session replay.
    pub session_out: Option<PathBuf>,
}

impl NetRun {
    /// The run the `RUSTING_NET_*` variables ask for; `None` when they ask for none.
    ///
    /// # Errors
    ///
    /// [`GameError::Environment`] for a variable the run cannot use.
    pub fn from_environment() -> Result<Option<NetRun>, GameError> {
        let (peers, player) = match (environment(PEERS_VARIABLE), environment(PLAYER_VARIABLE)) {
            (None, None) => return Ok(None),
            (Some(peers), Some(player)) => (peers, player),
            (Some(peers), None) => {
                return Err(GameError::Environment {
                    name: PEERS_VARIABLE,
                    value: peers,
                    reason: "RUSTING_NET_PLAYER must say which of the players is played here",
                });
            }
            (None, Some(player)) => {
                return Err(GameError::Environment {
                    name: PLAYER_VARIABLE,
                    value: player,
                    reason: "RUSTING_NET_PEERS must list every player's address",
                });
            }
        };
        let addresses: Option<Vec<SocketAddr>> = peers
            .split(',')
            .map(|address| address.trim().parse().ok())
            .collect();
        let addresses = match addresses {
            Some(addresses) if (2..=8).contains(&addresses.len()) => addresses,
            _ => {
                return Err(GameError::Environment {
                    name: PEERS_VARIABLE,
                    value: peers,
                    reason: "expected 2 to 8 addresses `ip:port`, comma-separated, in player order",
                });
            }
        };
        let handle = match player.parse::<usize>() {
            Ok(handle) if handle < addresses.len() => handle,
            _ => {
                return Err(GameError::Environment {
                    name: PLAYER_VARIABLE,
                    value: player,
                    reason: "expected a player handle, from 0, below the number of peers",
                });
            }
        };
        Ok(Some(NetRun {
            peers: addresses,
            player: handle,
            session_out: environment(SESSION_OUT_VARIABLE).map(PathBuf::from),
        }))
    }

    /// Readies `app` (not yet set up) for the session: every player's input in `PlayerInputs`.
    pub fn prepare(&self, app: &mut App) {
        prepare_app(app, self.peers.len());
    }

    /// Plays the session until `ticks` ticks are confirmed (see the module docs); the summary.
    ///
    /// # Errors
    ///
    /// `NET_FAILED` and `NET_DESYNC` ([`GameError::Net`]), and the report's and replay's write
    /// failures.
    pub fn play(
        &self,
        project: &Project,
        app: &mut App,
        ticks: u64,
        script: Option<&InputScript>,
        report_path: Option<&std::path::Path>,
    ) -> Result<String, GameError> {
        let failed = |message: String| GameError::Net {
            code: "NET_FAILED",
            message,
        };
        // Every declared action and axis reaches the other players, or the session does not start.
        PlayerTickInput::check_fits(app.world().resource::<InputBindings>()).map_err(|error| {
            failed(format!(
                "{}: {error}",
                project.root.join("rusting.json").display()
            ))
        })?;
        // Every player's input drives an entity, or the peers would agree while one plays nothing.
        if let Some(handle) = crate::gameplay::unseated_players(app.world_mut()).first() {
            return Err(failed(format!(
                "player {handle}'s input would drive nothing: no entity has `PlayerSlot {{ handle: \
                 {handle} }}`. Give the scene's hero a `PlatformerController` (the engine seats it \
                 and a copy of it for each other player) or insert `PlayerSlot::new({handle})` on \
                 the entity player {handle} plays, at startup"
            )));
        }
        let here = self.peers[self.player];
        let socket = bind_udp(here)
            .map_err(|error| failed(format!("cannot bind this peer's address {here}: {error}")))?;
        let remote = self
            .peers
            .iter()
            .enumerate()
            .filter(|(handle, _)| *handle != self.player)
            .map(|(handle, address)| (handle, *address))
            .collect();
        let settings = SessionSettings::new(self.peers.len(), vec![self.player], remote);
        let mut session = NetSession::start(&settings, socket)
            .map_err(|error| failed(format!("the session cannot start: {error}")))?;
        let bindings = app.world().resource::<InputBindings>().clone();
        let frames: Vec<RuntimeInput> = script
            .map(|script| script.frames().map(|(_, input)| input).collect())
            .unwrap_or_default();
        let frame = app.tick_length();
        let started = Instant::now();
        let mut last_progress = Instant::now();
        let mut confirmed_at: Option<Instant> = None;
        let mut desync = None;
        // A checksum mismatch, named or not, and a peer lost before the last tick.
        let mut mismatch: Option<(u64, SocketAddr)> = None;
        let mut lost: Option<String> = None;
        let mut next = Instant::now();
        loop {
            session.poll();
            let tick = app.ticks_done();
            let input = frames
                .get(tick as usize)
                .map_or_else(PlayerTickInput::default, |frame| {
                    tick_input(&bindings, frame)
                });
            let before = session.confirmed_hashes().len();
            session
                .advance(app, &[(self.player, input)])
                .map_err(|error| failed(format!("the session broke at tick {tick}: {error}")))?;
            for event in session.take_events() {
                match event {
                    NetEvent::DesyncNamed(report) => {
                        desync.get_or_insert(report);
                    }
                    NetEvent::Desync { tick, peer, .. } => {
                        mismatch.get_or_insert((tick, peer));
                    }
                    NetEvent::PeerDropped { reason, peer, .. } => {
                        bevy::log::warn!("the peer at {peer} was dropped: {reason}");
                        if confirmed_at.is_none() {
                            lost.get_or_insert(format!("the peer at {peer} was dropped: {reason}"));
                        }
                    }
                    NetEvent::Disconnected(peer) if confirmed_at.is_none() => {
                        lost.get_or_insert(format!("the peer at {peer} disconnected"));
                    }
                    _ => {}
                }
            }
            let confirmed = session.confirmed_hashes().len();
            if confirmed > before {
                last_progress = Instant::now();
            }
            if !session.is_running() && started.elapsed() > CONNECT_TIMEOUT {
                return Err(failed(format!(
                    "no answer from the other peers ({}) within {} s: start every peer of the \
                     session, each with its own RUSTING_NET_PLAYER",
                    self.others(),
                    CONNECT_TIMEOUT.as_secs()
                )));
            }
            if session.is_running() && last_progress.elapsed() > STALL_TIMEOUT {
                return Err(failed(format!(
                    "the session confirmed no tick for {} s after {confirmed}: the other peers \
                     ({}) stopped",
                    STALL_TIMEOUT.as_secs(),
                    self.others()
                )));
            }
            if confirmed as u64 >= ticks {
                let at = *confirmed_at.get_or_insert_with(Instant::now);
                // A desync still being named is waited for, as long as an exchange may take.
                let waited = at.elapsed();
                if waited >= LINGER
                    && (!session.investigating() || waited >= LINGER + crate::net::GIVE_UP_AFTER)
                {
                    break;
                }
            }
            next += frame;
            match next.checked_duration_since(Instant::now()) {
                Some(wait) => std::thread::sleep(wait),
                None => next = Instant::now(),
            }
        }
        let confirmed = &session.confirmed_hashes()[..ticks as usize];
        if let Some(path) = &self.session_out {
            session.replay().write(path).map_err(|error| {
                failed(format!("the session replay cannot be written: {error}"))
            })?;
        }
        if let Some(path) = report_path {
            StateHashReport::capture(app.world_mut(), confirmed).write(path)?;
        }
        if let Some(report) = desync {
            return Err(GameError::Net {
                code: "NET_DESYNC",
                message: report.to_string(),
            });
        }
        if let Some((tick, peer)) = mismatch {
            return Err(GameError::Net {
                code: "NET_DESYNC",
                message: format!(
                    "the state after tick {tick} hashes otherwise than on the peer at {peer}, and \
                     the difference was not named in time"
                ),
            });
        }
        if let Some(lost) = lost {
            return Err(failed(format!(
                "{lost} before tick {ticks} was confirmed; the session went on without it"
            )));
        }
        let last = confirmed.last().map_or(0, |(_, hash)| *hash);
        let stalls = match session.outside_stalls() {
            0 => String::new(),
            stalls => format!(", {stalls} waits for outside entries"),
        };
        Ok(format!(
            "{}: player {} of {}: {ticks} confirmed ticks, no desync with {} ({} rollbacks{stalls}), \
             last hash {last:016x}",
            project.manifest.name,
            self.player,
            self.peers.len(),
            self.others(),
            session.rollbacks()
        ))
    }

    fn others(&self) -> String {
        let others: Vec<String> = self
            .peers
            .iter()
            .enumerate()
            .filter(|(handle, _)| *handle != self.player)
            .map(|(_, address)| address.to_string())
            .collect();
        others.join(", ")
    }
}

/// The plain-data input of one script frame played as one tick.
fn tick_input(bindings: &InputBindings, frame: &RuntimeInput) -> PlayerTickInput {
    let mut tick = TickInput::default();
    tick.pressed = frame.pressed.clone();
    tick.look_delta = frame.look_delta;
    PlayerTickInput::capture(bindings, &tick, frame)
}
