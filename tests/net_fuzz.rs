//! Fuzzing a session's receive path (feature `net`): datagrams made by mutating a real peer's
//! traffic reach a running session as if from that peer, through `PeerSocket`'s checks into
//! fortress-rollback, beside the real traffic. The rule for every input: no panic, no frame over
//! [`FRAME_LIMIT`], and no broken session (`NetError::Session`: before the socket's `WireCheck`,
//! datagrams that decode but say what cannot be, such as a player still here reported gone, left
//! the crate without synchronized inputs about once in 10,000; see docs/multiplayer.md).
//!
//! The seeds include a desync-detail exchange's datagrams (a summary, a target and a done), so
//! the mutations reach the engine's own decoder as well as the crate's.
//!
//! `RUSTING_FUZZ_SECONDS` sets the budget (default 2, as for the file parsers); the inputs come
//! from a seeded generator (`RUSTING_FUZZ_SEED`), so a failure is reproduced by running again
//! with the printed seed. Peers run over in-memory links here, so the fuzzer's speed does not
//! depend on the network.

#[path = "support/fuzzing.rs"]
mod fuzzing;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::net::detail_wire::{DetailKind, detail_json, encode_message};
use rusting_engine::net::{Datagrams, NetSession, SessionSettings, prepare_app};
use rusting_engine::physics::{Collider, RigidBody};
use rusting_engine::record::StateDetail;
use rusting_engine::runtime::{PlayerTickInput, RuntimeSettings};

use fuzzing::{Rng, budget, seed};

/// The longest one frame (a poll and an advance) may take.
const FRAME_LIMIT: Duration = Duration::from_secs(1);

/// A datagram with its sender.
type Datagram = (SocketAddr, Vec<u8>);

/// Every datagram one side has sent.
type SentLog = Rc<RefCell<Vec<Vec<u8>>>>;

/// Datagrams waiting at one address.
#[derive(Clone, Default)]
struct Inbox(Rc<RefCell<VecDeque<Datagram>>>);

/// An in-memory link: sends go straight into the other side's inbox, and are logged.
struct MemoryLink {
    me: SocketAddr,
    inbox: Inbox,
    peer: (SocketAddr, Inbox),
    sent: SentLog,
}

impl Datagrams for MemoryLink {
    fn send(&mut self, bytes: &[u8], to: SocketAddr) -> io::Result<()> {
        if to == self.peer.0 {
            self.peer
                .1
                .0
                .borrow_mut()
                .push_back((self.me, bytes.to_vec()));
            self.sent.borrow_mut().push(bytes.to_vec());
        }
        Ok(())
    }

    fn receive(&mut self, buffer: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>> {
        Ok(self.inbox.0.borrow_mut().pop_front().map(|(from, bytes)| {
            let length = bytes.len().min(buffer.len());
            buffer[..length].copy_from_slice(&bytes[..length]);
            (length, from)
        }))
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.me)
    }
}

fn app() -> App {
    let mut app = App::new(RuntimeSettings::default());
    prepare_app(&mut app, 2);
    app.world_mut().spawn((
        Transform::default(),
        Collider::half_space(Vec3::Y),
        Name::new("Ground"),
    ));
    app.world_mut().spawn((
        Transform::from_xyz(0.0, 1.0, 0.0),
        RigidBody::dynamic(1.0),
        Collider::sphere(0.5),
    ));
    app.setup().unwrap();
    app
}

/// A peer over a memory link.
struct Peer {
    app: App,
    session: NetSession,
    handle: usize,
}

impl Peer {
    fn frame(&mut self) -> Result<(), rusting_engine::net::NetError> {
        self.session.poll();
        let input = PlayerTickInput {
            actions: (self.app.ticks() / 7 % 3) as u32,
            axes: {
                let mut axes = [0; rusting_engine::runtime::MAX_SESSION_AXES];
                axes[0] = (self.app.ticks() as i16).wrapping_mul(97);
                axes
            },
            look: [0, 0],
        };
        self.session
            .advance(&mut self.app, &[(self.handle, input)])
            .map(|_| ())
    }
}

/// Two peers on memory links, A's inbox, B's address and what B has sent.
fn pair() -> (Peer, Peer, Inbox, SocketAddr, SentLog) {
    let addresses: [SocketAddr; 2] = [
        "10.0.0.1:7000".parse().unwrap(),
        "10.0.0.2:7000".parse().unwrap(),
    ];
    let inboxes = [Inbox::default(), Inbox::default()];
    let logs = [Rc::default(), Rc::default()];
    let peer = |handle: usize| {
        let link = MemoryLink {
            me: addresses[handle],
            inbox: inboxes[handle].clone(),
            peer: (addresses[1 - handle], inboxes[1 - handle].clone()),
            sent: Rc::clone(&logs[handle]),
        };
        let settings = SessionSettings {
            players: 2,
            local: vec![handle],
            remote: vec![(1 - handle, addresses[1 - handle])],
            input_delay: 1,
            max_prediction: 8,
            desync_interval: 10,
            // Keep the fuzzed peer: what it sends must reach the crate.
            refusal_limit: u64::MAX,
            flood_limit: u64::MAX,
            outside_delay: 10,
        };
        Peer {
            app: app(),
            session: NetSession::start(&settings, link).unwrap(),
            handle,
        }
    };
    let (a, b) = (peer(0), peer(1));
    (a, b, inboxes[0].clone(), addresses[1], Rc::clone(&logs[1]))
}

/// `bytes` mutated: bit flips, boundary values over 1 to 8 bytes, truncation, extension,
/// duplication, a splice with `other`, or a huge length prefix.
fn mutate(rng: &mut Rng, bytes: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(out.len().max(1));
        match rng.below(7) {
            0 if !out.is_empty() => out[at] ^= 1 << rng.below(8),
            1 if !out.is_empty() => {
                let width = [1, 2, 4, 8][rng.below(4)];
                let value: u64 =
                    [0, u64::MAX, i32::MAX as u64, i32::MIN as u64, 1 << 31][rng.below(5)];
                for (k, byte) in value.to_le_bytes().iter().take(width).enumerate() {
                    if let Some(slot) = out.get_mut(at + k) {
                        *slot = *byte;
                    }
                }
            }
            2 => out.truncate(at),
            3 => out.extend((0..rng.below(64)).map(|_| rng.next() as u8)),
            4 => {
                let copy = out.clone();
                out.extend(copy);
            }
            5 => {
                out.truncate(at);
                out.extend_from_slice(&other[rng.below(other.len().max(1))..]);
            }
            _ => {
                for slot in out.iter_mut().skip(at).take(8) {
                    *slot = 0xff;
                }
            }
        }
    }
    out
}

/// A running pair: A, B, A's inbox, B's address and B's real datagrams.
type Running = (Peer, Peer, Inbox, SocketAddr, Vec<Vec<u8>>);

/// A pair synchronised and run for 120 frames, so the sessions are in their running state.
fn running_pair() -> Running {
    let (mut a, mut b, a_inbox, b_address, b_sent) = pair();
    for _ in 0..120 {
        a.frame().unwrap();
        b.frame().unwrap();
    }
    assert!(a.session.is_running() && b.session.is_running());
    let mut corpus = b_sent.borrow().clone();
    assert!(corpus.len() > 100, "only {} real datagrams", corpus.len());
    corpus.extend(detail_datagrams(&mut b));
    (a, b, a_inbox, b_address, corpus)
}

/// What B would send A in a desync-detail exchange about the last tick both checked (a summary,
/// a target and a done), as seeds for the mutations: a whole summary makes A start an exchange.
fn detail_datagrams(peer: &mut Peer) -> Vec<Vec<u8>> {
    let tick = peer.app.ticks() / 10 * 10;
    let detail = StateDetail::capture(peer.app.world_mut(), tick);
    let mut target = detail.clone();
    target.entities.truncate(1);
    target.resources.clear();
    let mut summary = detail;
    for entity in &mut summary.entities {
        entity.components.clear();
    }
    [
        (DetailKind::Summary, detail_json(&summary)),
        (DetailKind::Target, detail_json(&target)),
        (DetailKind::Done, Vec::new()),
    ]
    .into_iter()
    .flat_map(|(kind, json)| encode_message(kind, tick, &json).unwrap())
    .collect()
}

/// Mutated copies of a real peer's datagrams reach a running session beside the real ones: the
/// session never panics, never breaks and no frame takes [`FRAME_LIMIT`]; refusals are counted,
/// and the fuzzed peer is never banned (its datagrams would then stop at the socket). Fails if the
/// receive path panics on what a peer sends, or when the socket hands the crate an input message
/// that reports a connected player gone (without `WireCheck` the crate's "failed to get
/// synchronized inputs" comes within the first 10 seconds).
#[test]
fn fuzz_session_datagrams() {
    let (mut a, mut b, a_inbox, b_address, corpus) = running_pair();
    let mut rng = Rng(seed() | 1);
    let deadline = Instant::now() + budget();
    let mut inputs = 0u64;
    while Instant::now() < deadline {
        for _ in 0..1 + rng.below(4) {
            let base = &corpus[rng.below(corpus.len())];
            let other = &corpus[rng.below(corpus.len())];
            let datagram = mutate(&mut rng, base, other);
            a_inbox.0.borrow_mut().push_back((b_address, datagram));
            inputs += 1;
        }
        let began = Instant::now();
        let outcome = a.frame();
        assert!(
            began.elapsed() < FRAME_LIMIT,
            "a frame took {:?} after fuzz input {inputs} (seed {})",
            began.elapsed(),
            seed()
        );
        if let Err(error) = outcome.and(b.frame()) {
            panic!(
                "the session broke after fuzz input {inputs} (seed {}): {error}",
                seed()
            );
        }
    }
    let counts = a.session.socket_counts();
    assert_eq!(
        counts.strangers, 0,
        "the fuzzed peer was banned, so its datagrams stopped reaching the session: {counts:?}"
    );
    let refused = counts.peers[&b_address].refused();
    println!(
        "{inputs} fuzz datagrams (seed {}): {refused} refused by the socket ({} of them whole \
         messages saying what cannot be), {} ticks confirmed",
        seed(),
        counts.peers[&b_address].impossible,
        a.session.confirmed_hashes().len()
    );
    assert!(inputs > 100, "only {inputs} inputs in the budget");
    assert!(refused > 0, "the socket refused nothing");
}
