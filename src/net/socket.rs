//! [`PeerSocket`]: the session's socket: fortress-rollback's messages over any [`Datagrams`]
//! transport, with every datagram from the network checked before the crate sees it.
//!
//! Peers are untrusted. A datagram is handed on only if it comes from a peer of the session, is
//! at most [`MAX_DATAGRAM_BYTES`] long, decodes with the crate's own bounded decoder into
//! exactly one message with no bytes left over, and says nothing impossible ([`WireCheck`]: a
//! player still here reported gone, a frame no peer has reached); everything else is refused and
//! counted by
//! sender and reason in [`SocketCounts`], which the session owner reads through a shared handle.
//! One poll reads at most [`MAX_DATAGRAMS_PER_POLL`] datagrams, so a flood costs a bounded amount
//! of work per frame (the rest waits in the system's buffer, which drops what does not fit); a
//! peer whose datagrams arrive faster than [`FLOOD_DATAGRAMS_PER_SECOND`] over a second is
//! counted as flooding (an honest peer sends a few a frame, and what piles up while this machine
//! stalls for a moment stays well under it). The
//! session bans a peer it drops ([`SharedCounts::ban`]): from then on its datagrams count as a
//! stranger's.
//!
//! Datagrams that start with the desync-detail magic ([`super::detail_wire`]) or the
//! outside-entry magic ([`super::outside_wire`]) are the engine's own: they are put aside, at
//! most [`MAX_DETAIL_INBOX`] and [`MAX_OUTSIDE_INBOX`] of them, for the session
//! ([`SharedCounts::take_detail`], [`SharedCounts::take_outside`]), which sends its own through
//! the same handle ([`SharedCounts::queue_detail`], [`SharedCounts::queue_outside`]; they leave
//! at the next poll).
//!
//! This module owns the checks, the counts and the engine datagrams' queues. It must never
//! interpret a message's contents beyond decoding it: the protocol is the crate's, the detail
//! exchange's is the investigations', and the outside entries' is the outside link's.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use fortress_rollback::network::codec::{decode_message, encode};
use fortress_rollback::{Message, NonBlockingSocket};

use super::datagrams::Datagrams;
pub use super::datagrams::MAX_DATAGRAM_BYTES;
use super::detail_wire::is_detail;
use super::outside_wire::is_outside;
use super::wire_check::WireCheck;

/// The most datagrams one poll reads.
pub const MAX_DATAGRAMS_PER_POLL: usize = 256;

/// More datagrams than this from one peer within one second is a flood: an honest peer sends a
/// few a frame, a few hundred a second at most.
pub const FLOOD_DATAGRAMS_PER_SECOND: u64 = 2000;

/// The most desync-detail datagrams held for the session between two polls; more are dropped.
pub const MAX_DETAIL_INBOX: usize = 1024;

/// The most outside-entry datagrams held for the session between two polls; more are dropped (the
/// sender sends them again).
pub const MAX_OUTSIDE_INBOX: usize = 4096;

/// What one peer has sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerCounts {
    /// Datagrams handed to the session.
    pub accepted: u64,
    /// Refused: longer than [`MAX_DATAGRAM_BYTES`].
    pub oversized: u64,
    /// Refused: not one whole message in the crate's encoding.
    pub malformed: u64,
    /// Refused: a whole message that says what cannot be ([`WireCheck`]).
    pub impossible: u64,
    /// Seconds in which it sent more than [`FLOOD_DATAGRAMS_PER_SECOND`] datagrams.
    pub floods: u64,
    /// Desync-detail datagrams put aside for the session (the session counts the ones it then
    /// refuses as malformed).
    pub detail: u64,
    /// Outside-entry datagrams put aside for the session (the session counts the ones it then
    /// refuses as malformed).
    pub outside: u64,
}

impl PeerCounts {
    /// Datagrams refused, for any reason.
    pub fn refused(&self) -> u64 {
        self.oversized + self.malformed + self.impossible
    }
}

/// What a [`PeerSocket`] has received and sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SocketCounts {
    /// By peer.
    pub peers: BTreeMap<SocketAddr, PeerCounts>,
    /// Datagrams from an address that is not a peer of the session, refused.
    pub strangers: u64,
    /// Polls that stopped at [`MAX_DATAGRAMS_PER_POLL`] with datagrams still waiting.
    pub full_polls: u64,
    /// Messages that could not be encoded or sent (a local fault; logged).
    pub send_failures: u64,
    /// Desync-detail datagrams dropped because [`MAX_DETAIL_INBOX`] were already waiting.
    pub detail_overflow: u64,
    /// Outside-entry datagrams dropped because [`MAX_OUTSIDE_INBOX`] were already waiting.
    pub outside_overflow: u64,
}

/// One kind of the engine's own datagrams: those received and not yet taken, with their senders,
/// and those to send at the next poll.
#[derive(Debug, Default)]
struct SideChannel {
    inbox: Vec<(SocketAddr, Vec<u8>)>,
    outbox: Vec<(SocketAddr, Vec<u8>)>,
}

/// What the socket and the session owner share: the counts and the banned peers.
#[derive(Debug, Default)]
struct Shared {
    counts: SocketCounts,
    banned: BTreeSet<SocketAddr>,
    /// Each peer's current one-second window: when it began and the datagrams in it.
    windows: BTreeMap<SocketAddr, (Instant, u64)>,
    /// Desync-detail datagrams.
    detail: SideChannel,
    /// Outside-entry datagrams.
    outside: SideChannel,
    /// The session's current frame, for [`WireCheck`].
    frame: u64,
}

/// A handle on a socket's counts and bans that stays with the session owner while the session
/// owns the socket.
#[derive(Clone, Debug, Default)]
pub struct SharedCounts(Arc<Mutex<Shared>>);

impl SharedCounts {
    /// The counts now.
    pub fn get(&self) -> SocketCounts {
        self.lock().counts.clone()
    }

    /// Stops accepting datagrams from `peer`: they are counted as a stranger's from now on.
    pub fn ban(&self, peer: SocketAddr) {
        self.lock().banned.insert(peer);
    }

    /// The desync-detail datagrams received since the last call, with their senders.
    pub fn take_detail(&self) -> Vec<(SocketAddr, Vec<u8>)> {
        std::mem::take(&mut self.lock().detail.inbox)
    }

    /// Queues desync-detail datagrams to send at the socket's next poll.
    pub fn queue_detail(&self, datagrams: impl IntoIterator<Item = (SocketAddr, Vec<u8>)>) {
        self.lock().detail.outbox.extend(datagrams);
    }

    /// The outside-entry datagrams received since the last call, with their senders.
    pub fn take_outside(&self) -> Vec<(SocketAddr, Vec<u8>)> {
        std::mem::take(&mut self.lock().outside.inbox)
    }

    /// Queues outside-entry datagrams to send at the socket's next poll.
    pub fn queue_outside(&self, datagrams: impl IntoIterator<Item = (SocketAddr, Vec<u8>)>) {
        self.lock().outside.outbox.extend(datagrams);
    }

    /// Tells the checks the session's current frame.
    pub fn set_frame(&self, frame: u64) {
        self.lock().frame = frame;
    }

    /// Counts a datagram from `peer` that the session refused after the socket let it through.
    pub fn count_malformed(&self, peer: SocketAddr) {
        self.lock().counts.peers.entry(peer).or_default().malformed += 1;
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // Counts stay meaningful even if a holder panicked mid-update.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// fortress-rollback's socket over `D` (see the module docs).
pub struct PeerSocket<D: Datagrams> {
    link: D,
    peers: BTreeSet<SocketAddr>,
    /// Each peer's player handle.
    handles: BTreeMap<SocketAddr, usize>,
    check: WireCheck,
    /// One byte longer than the longest datagram accepted, to see one that is longer.
    buffer: Vec<u8>,
    counts: SharedCounts,
}

impl<D: Datagrams> PeerSocket<D> {
    /// A socket over `link` that accepts datagrams from `peers` only (each with its player
    /// handle), judged by `check`.
    pub fn new(
        link: D,
        peers: impl IntoIterator<Item = (usize, SocketAddr)>,
        check: WireCheck,
    ) -> Self {
        let handles: BTreeMap<SocketAddr, usize> = peers
            .into_iter()
            .map(|(handle, address)| (address, handle))
            .collect();
        PeerSocket {
            link,
            peers: handles.keys().copied().collect(),
            handles,
            check,
            buffer: vec![0; MAX_DATAGRAM_BYTES + 1],
            counts: SharedCounts::default(),
        }
    }

    /// A handle on the socket's counts.
    pub fn counts(&self) -> SharedCounts {
        self.counts.clone()
    }

    /// Checks one datagram from `from`: the message it holds, or `None` (counted).
    fn check(&self, length: usize, from: SocketAddr) -> Option<Message> {
        let mut guard = self.counts.lock();
        let shared = &mut *guard;
        if !self.peers.contains(&from) || shared.banned.contains(&from) {
            shared.counts.strangers += 1;
            return None;
        }
        let peer = shared.counts.peers.entry(from).or_default();
        if length > MAX_DATAGRAM_BYTES {
            peer.oversized += 1;
            return None;
        }
        let datagram = &self.buffer[..length];
        if is_detail(datagram) {
            if shared.detail.inbox.len() < MAX_DETAIL_INBOX {
                peer.detail += 1;
                shared.detail.inbox.push((from, datagram.to_vec()));
            } else {
                shared.counts.detail_overflow += 1;
            }
            return None;
        }
        if is_outside(datagram) {
            if shared.outside.inbox.len() < MAX_OUTSIDE_INBOX {
                peer.outside += 1;
                shared.outside.inbox.push((from, datagram.to_vec()));
            } else {
                shared.counts.outside_overflow += 1;
            }
            return None;
        }
        match decode_message(datagram) {
            Ok((message, used)) if used == length => {
                let sender = self.handles.get(&from).copied().unwrap_or(usize::MAX);
                if let Some(reason) = self.check.impossible(datagram, sender, shared.frame) {
                    let peer = shared.counts.peers.entry(from).or_default();
                    peer.impossible += 1;
                    bevy::log::debug!("refused a message from {from}: {reason}");
                    return None;
                }
                let peer = shared.counts.peers.entry(from).or_default();
                peer.accepted += 1;
                Some(message)
            }
            _ => {
                peer.malformed += 1;
                None
            }
        }
    }
}

impl<D: Datagrams> NonBlockingSocket<SocketAddr> for PeerSocket<D> {
    fn send_to(&mut self, message: &Message, to: &SocketAddr) {
        let sent = encode(message)
            .map_err(|error| error.to_string())
            .and_then(|bytes| {
                self.link
                    .send(&bytes, *to)
                    .map_err(|error| error.to_string())
            });
        if let Err(error) = sent {
            self.counts.lock().counts.send_failures += 1;
            bevy::log::warn!("a session message to {to} was not sent: {error}");
        }
    }

    fn receive_all_messages(&mut self) -> Vec<(SocketAddr, Message)> {
        let (detail, outside) = {
            let mut shared = self.counts.lock();
            (
                std::mem::take(&mut shared.detail.outbox),
                std::mem::take(&mut shared.outside.outbox),
            )
        };
        let engine = detail
            .into_iter()
            .map(|sent| ("desync-detail", sent))
            .chain(outside.into_iter().map(|sent| ("outside-entry", sent)));
        for (kind, (to, datagram)) in engine {
            if let Err(error) = self.link.send(&datagram, to) {
                self.counts.lock().counts.send_failures += 1;
                bevy::log::warn!("a {kind} datagram to {to} was not sent: {error}");
            }
        }
        let mut messages = Vec::new();
        let mut by_sender: BTreeMap<SocketAddr, u64> = BTreeMap::new();
        let mut full = true;
        for _ in 0..MAX_DATAGRAMS_PER_POLL {
            match self.link.receive(&mut self.buffer) {
                Ok(Some((length, from))) => {
                    *by_sender.entry(from).or_default() += 1;
                    if let Some(message) = self.check(length, from) {
                        messages.push((from, message));
                    }
                }
                Ok(None) => {
                    full = false;
                    break;
                }
                Err(error) => {
                    bevy::log::warn!("the session's socket failed to receive: {error}");
                    full = false;
                    break;
                }
            }
        }
        let mut shared = self.counts.lock();
        shared.counts.full_polls += u64::from(full);
        let now = Instant::now();
        for (sender, count) in by_sender {
            if !self.peers.contains(&sender) {
                continue;
            }
            let window = shared.windows.entry(sender).or_insert((now, 0));
            if now.duration_since(window.0) >= Duration::from_secs(1) {
                *window = (now, 0);
            }
            window.1 += count;
            if window.1 > FLOOD_DATAGRAMS_PER_SECOND {
                *window = (now, 0);
                shared.counts.peers.entry(sender).or_default().floods += 1;
            }
        }
        messages
    }
}
