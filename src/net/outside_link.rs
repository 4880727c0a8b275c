//! [`OutsideLink`]: outside results (`jobs::OutsideQueue`) in a multiplayer session, entering
//! every peer's simulation on the same tick in the same order.
//!
//! Each peer numbers the entries its own queue receives (0, 1, 2, ...) and **announces** them in
//! its input: [`SessionInput::outside`](super::SessionInput) is how many it has announced so far.
//! The rollback crate carries inputs to every peer, so every peer sees the same announcements on
//! the same frames. Entries announced in the confirmed input of frame `f` enter at tick
//! `f + 1 + delay` (the session's `outside_delay`), ordered by player handle, then number. Only
//! confirmed inputs announce: a predicted input repeats the last one and announces nothing, so
//! an entry's tick never changes once it is known, and a rollback re-simulates ticks with the
//! same entries as their first run.
//!
//! The bytes travel beside the inputs on the session's socket ([`super::outside_wire`]): sent as
//! the entry is announced, sent again every [`OUTSIDE_RESEND_EVERY`] until the peer
//! acknowledges them. The delay gives them that long to arrive; a tick whose entries have not all
//! arrived does not run ([`Readiness::Waiting`]: the session stalls, counted), and a session that
//! waits for one longer than [`OUTSIDE_GIVE_UP_AFTER`] stops with a typed error naming the
//! player, the entry and its tick.
//!
//! Peers are untrusted: a peer's entries are held at most [`OUTSIDE_RECEIVE_WINDOW`] ahead of the
//! first one missing, a part that is impossible or contradicts the parts held is refused (the
//! session counts it against the peer), and an announcement of more than the per-frame limit
//! enters only up to the limit (the same on every peer: the announcement is confirmed input).
//!
//! This module owns the announcements, the entries held and their exchange. It must never touch
//! the world or the queue: the session takes what waits and supplies each tick's entries.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::detail_wire::Assembly;
use super::outside_wire::{OutsideDatagram, decode, decode_entry, encode_ack, encode_entry};
use crate::jobs::{MAX_OUTSIDE_PER_TICK, OutsideEntry};

/// How often entries a peer has not acknowledged are sent again.
pub const OUTSIDE_RESEND_EVERY: Duration = Duration::from_millis(100);

/// Entries of one peer held beyond the first one missing; parts of later ones are dropped (the
/// sender sends them again).
pub const OUTSIDE_RECEIVE_WINDOW: u32 = 64;

/// How long a session waits for a due entry's bytes before it stops.
pub const OUTSIDE_GIVE_UP_AFTER: Duration = Duration::from_secs(10);

/// The most outside datagrams sent to one peer in one poll (a socket's receive buffer holds
/// about this many whole datagrams).
pub const OUTSIDE_DATAGRAMS_PER_POLL: usize = 128;

/// A datagram that is not a possible outside datagram from this peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused;

/// Whether a tick may run now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// Every entry due by the tick is here.
    Ready,
    /// Something the tick needs has not come yet: the session waits.
    Waiting,
    /// An entry has been missing for longer than [`OUTSIDE_GIVE_UP_AFTER`].
    GaveUp {
        /// The player whose entry is missing.
        handle: usize,
        /// Its number.
        seq: u32,
        /// The tick it is due.
        tick: u64,
    },
}

/// One of this peer's own entries, as it travels.
struct Outgoing {
    datagrams: Vec<Vec<u8>>,
}

/// Another peer, as the exchange sees it.
struct Remote {
    address: SocketAddr,
    /// The handle whose input announces its entries (its lowest).
    handle: usize,
    /// It holds every one of our entries below this.
    acked: u32,
    /// We hold every one of its entries below this.
    next: u32,
    assembling: BTreeMap<u32, Assembly>,
    ack_due: bool,
    sent_at: Option<Instant>,
}

/// The session's outside entries (see the module docs).
pub struct OutsideLink {
    delay: u64,
    per_frame: u32,
    /// The handle whose input announces this peer's entries.
    own: usize,
    own_count: u32,
    outgoing: BTreeMap<u32, Outgoing>,
    remotes: Vec<Remote>,
    /// Entries held, by player handle and number.
    held: BTreeMap<(usize, u32), OutsideEntry>,
    /// How many each player has announced, by handle, as far as frames are processed.
    announced: Vec<u32>,
    /// Frames whose confirmed inputs have been processed: every frame below this.
    next_frame: u64,
    /// Entries by the tick they enter, in entering order.
    due: BTreeMap<u64, Vec<(usize, u32)>>,
    stalled_since: Option<Instant>,
    stalls: u64,
}

impl OutsideLink {
    /// The link of a session of `players` with `local` handles here and `remote` ones elsewhere,
    /// whose entries enter `delay` ticks after the tick whose input announced them.
    pub fn new(
        players: usize,
        local: &[usize],
        remote: &[(usize, SocketAddr)],
        delay: u64,
    ) -> Self {
        let mut remotes: Vec<Remote> = Vec::new();
        for &(handle, address) in remote {
            match remotes.iter_mut().find(|r| r.address == address) {
                Some(known) => known.handle = known.handle.min(handle),
                None => remotes.push(Remote {
                    address,
                    handle,
                    acked: 0,
                    next: 0,
                    assembling: BTreeMap::new(),
                    ack_due: false,
                    sent_at: None,
                }),
            }
        }
        OutsideLink {
            delay,
            per_frame: (MAX_OUTSIDE_PER_TICK / players.max(1)).max(1) as u32,
            own: local.iter().copied().min().unwrap_or(0),
            own_count: 0,
            outgoing: BTreeMap::new(),
            remotes,
            held: BTreeMap::new(),
            announced: vec![0; players],
            next_frame: 0,
            due: BTreeMap::new(),
            stalled_since: None,
            stalls: 0,
        }
    }

    /// The handle whose input announces this peer's entries.
    pub fn announcing_handle(&self) -> usize {
        self.own
    }

    /// The most entries one player's input may announce: the queue's per-tick limit shared among
    /// the players.
    pub fn per_frame_limit(&self) -> usize {
        self.per_frame as usize
    }

    /// How many entries this peer has announced: what its input carries.
    pub fn own_count(&self) -> u32 {
        self.own_count
    }

    /// Numbers `entries` (taken from this peer's queue) after the ones before, holds them and
    /// starts sending them.
    pub fn publish(&mut self, entries: Vec<OutsideEntry>) {
        for entry in entries {
            let seq = self.own_count;
            self.own_count += 1;
            self.outgoing.insert(
                seq,
                Outgoing {
                    datagrams: encode_entry(seq, &entry),
                },
            );
            self.held.insert((self.own, seq), entry);
        }
        for remote in &mut self.remotes {
            // Sent at the next poll.
            remote.sent_at = None;
        }
    }

    /// Frames processed: every frame below this one has announced its entries.
    pub fn frames_processed(&self) -> u64 {
        self.next_frame
    }

    /// Processes the confirmed input of `frame` (`counts[handle]` is what each player's input
    /// announces). Frames must come in order; one already processed is ignored.
    pub fn announce(&mut self, frame: u64, counts: &[u32]) {
        if frame != self.next_frame {
            return;
        }
        self.next_frame += 1;
        let tick = frame + 1 + self.delay;
        for (handle, (&count, announced)) in counts.iter().zip(&mut self.announced).enumerate() {
            let until = count.min(announced.saturating_add(self.per_frame));
            for seq in *announced..until {
                self.due.entry(tick).or_default().push((handle, seq));
            }
            *announced = (*announced).max(until);
        }
    }

    /// Whether tick `tick` may run: the frame that announces its entries processed and every
    /// entry due by then here. Counts a stall each time it says to wait.
    pub fn readiness(&mut self, tick: u64, now: Instant) -> Readiness {
        let announcing = (tick + 1).checked_sub(2 + self.delay);
        let missing = if announcing.is_some_and(|frame| frame >= self.next_frame) {
            Some(None)
        } else {
            self.due
                .range(..=tick)
                .flat_map(|(&due, entries)| entries.iter().map(move |&(h, s)| (due, h, s)))
                .find(|&(_, handle, seq)| !self.held.contains_key(&(handle, seq)))
                .map(Some)
        };
        let Some(missing) = missing else {
            self.stalled_since = None;
            return Readiness::Ready;
        };
        self.stalls += 1;
        let since = *self.stalled_since.get_or_insert(now);
        match missing {
            Some((due, handle, seq)) if now.duration_since(since) > OUTSIDE_GIVE_UP_AFTER => {
                Readiness::GaveUp {
                    handle,
                    seq,
                    tick: due,
                }
            }
            _ => Readiness::Waiting,
        }
    }

    /// Times [`OutsideLink::readiness`] said to wait.
    pub fn stalls(&self) -> u64 {
        self.stalls
    }

    /// The entries that enter `tick`, in order.
    ///
    /// # Errors
    ///
    /// The handle and number of one that is not here (the session checks
    /// [`OutsideLink::readiness`] before a tick first runs, so only a broken promise gets here).
    pub fn entries_for(&self, tick: u64) -> Result<Vec<OutsideEntry>, (usize, u32)> {
        let Some(entries) = self.due.get(&tick) else {
            return Ok(Vec::new());
        };
        entries
            .iter()
            .map(|key| self.held.get(key).cloned().ok_or(*key))
            .collect()
    }

    /// Forgets the entries of ticks up to `tick` (confirmed: never run again).
    pub fn forget_through(&mut self, tick: u64) {
        let later = self.due.split_off(&(tick + 1));
        for (handle, seq) in std::mem::replace(&mut self.due, later)
            .into_values()
            .flatten()
        {
            self.held.remove(&(handle, seq));
        }
    }

    /// Takes one outside datagram from `peer`.
    ///
    /// # Errors
    ///
    /// [`Refused`] for a datagram that is not a possible one, from a peer of the session, that
    /// agrees with what is held.
    pub fn receive(&mut self, peer: SocketAddr, datagram: &[u8]) -> Result<(), Refused> {
        let message = decode(datagram).ok_or(Refused)?;
        let remote = self
            .remotes
            .iter_mut()
            .find(|r| r.address == peer)
            .ok_or(Refused)?;
        match message {
            OutsideDatagram::Ack { next } => {
                if next > self.own_count {
                    return Err(Refused);
                }
                remote.acked = remote.acked.max(next);
            }
            OutsideDatagram::Part {
                seq,
                part,
                parts,
                payload,
            } => {
                remote.ack_due = true;
                if seq < remote.next
                    || self.held.contains_key(&(remote.handle, seq))
                    || seq - remote.next >= OUTSIDE_RECEIVE_WINDOW
                {
                    // Held already (a resend), or beyond the window (sent again later).
                    return Ok(());
                }
                let assembly = remote.assembling.entry(seq).or_default();
                assembly
                    .add_part(part, parts, &payload)
                    .map_err(|_| Refused)?;
                if let Some(whole) = assembly.complete() {
                    remote.assembling.remove(&seq);
                    let entry = decode_entry(&whole).ok_or(Refused)?;
                    self.held.insert((remote.handle, seq), entry);
                }
                // Entries before `next` may since have entered and been forgotten, so the held
                // run is counted on from `next` only.
                while self.held.contains_key(&(remote.handle, remote.next)) {
                    remote.next += 1;
                }
            }
        }
        Ok(())
    }

    /// The datagrams to send now: acknowledgements owed, and entries a peer has not acknowledged
    /// (again every [`OUTSIDE_RESEND_EVERY`]). `gone` says which peers were dropped.
    pub fn outgoing(
        &mut self,
        now: Instant,
        gone: impl Fn(SocketAddr) -> bool,
    ) -> Vec<(SocketAddr, Vec<u8>)> {
        let mut datagrams = Vec::new();
        for remote in &mut self.remotes {
            if gone(remote.address) {
                continue;
            }
            if std::mem::take(&mut remote.ack_due) {
                datagrams.push((remote.address, encode_ack(remote.next)));
            }
            let resend = remote
                .sent_at
                .is_none_or(|at| now.duration_since(at) >= OUTSIDE_RESEND_EVERY);
            if !resend || remote.acked >= self.own_count {
                continue;
            }
            remote.sent_at = Some(now);
            let unacked = self
                .outgoing
                .range(remote.acked..)
                .flat_map(|(_, o)| &o.datagrams);
            for datagram in unacked.take(OUTSIDE_DATAGRAMS_PER_POLL) {
                datagrams.push((remote.address, datagram.clone()));
            }
        }
        // What every peer still here holds is sent no more.
        let acked = self
            .remotes
            .iter()
            .filter(|remote| !gone(remote.address))
            .map(|remote| remote.acked)
            .min()
            .unwrap_or(self.own_count);
        self.outgoing = self.outgoing.split_off(&acked);
        datagrams
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> OutsideEntry {
        OutsideEntry {
            channel: "reply".to_owned(),
            bytes: text.as_bytes().to_vec(),
        }
    }

    fn address(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    /// Two links (handles 0 and 1) that pass `a`'s datagrams to `b` and back.
    fn exchange(a: &mut OutsideLink, b: &mut OutsideLink, now: Instant) {
        for (to, datagram) in a.outgoing(now, |_| false) {
            assert_eq!(to, address(2));
            b.receive(address(1), &datagram).unwrap();
        }
        for (to, datagram) in b.outgoing(now, |_| false) {
            assert_eq!(to, address(1));
            a.receive(address(2), &datagram).unwrap();
        }
    }

    #[test]
    fn announced_entries_enter_after_the_delay_in_handle_order() {
        let mut a = OutsideLink::new(2, &[0], &[(1, address(2))], 3);
        let mut b = OutsideLink::new(2, &[1], &[(0, address(1))], 3);
        a.publish(vec![entry("a0"), entry("a1")]);
        b.publish(vec![entry("b0")]);
        let now = Instant::now();
        exchange(&mut a, &mut b, now);
        for link in [&mut a, &mut b] {
            link.announce(0, &[0, 0]);
            link.announce(1, &[2, 1]);
            // Tick 5 needs frame 1's announcements: processed.
            assert_eq!(link.readiness(5, now), Readiness::Ready);
            assert_eq!(link.entries_for(4), Ok(Vec::new()));
            let order: Vec<_> = link.entries_for(5).unwrap();
            assert_eq!(order, vec![entry("a0"), entry("a1"), entry("b0")]);
            // Tick 7 needs frame 3's: not yet.
            assert_eq!(link.readiness(7, now), Readiness::Waiting);
        }
        // Both acknowledged: nothing left to send.
        exchange(&mut a, &mut b, now + OUTSIDE_RESEND_EVERY);
        assert!(
            a.outgoing(now + 2 * OUTSIDE_RESEND_EVERY, |_| false)
                .is_empty()
        );
        a.forget_through(5);
        assert_eq!(a.entries_for(5), Ok(Vec::new()));
        assert!(a.held.is_empty());
    }

    #[test]
    fn a_missing_entry_stalls_then_gives_up() {
        let mut b = OutsideLink::new(2, &[1], &[(0, address(1))], 2);
        b.announce(0, &[1, 0]);
        let now = Instant::now();
        assert_eq!(b.readiness(3, now), Readiness::Waiting);
        assert_eq!(b.stalls(), 1);
        assert_eq!(
            b.readiness(3, now + OUTSIDE_GIVE_UP_AFTER + Duration::from_millis(1)),
            Readiness::GaveUp {
                handle: 0,
                seq: 0,
                tick: 3
            }
        );
        let mut a = OutsideLink::new(2, &[0], &[(1, address(2))], 2);
        a.publish(vec![entry("late")]);
        exchange(&mut a, &mut b, now);
        assert_eq!(b.readiness(3, now), Readiness::Ready);
    }

    #[test]
    fn announcements_over_the_limit_and_impossible_datagrams_are_refused() {
        let mut b = OutsideLink::new(2, &[1], &[(0, address(1))], 1);
        b.announce(0, &[u32::MAX, 0]);
        assert_eq!(b.due[&2].len(), b.per_frame_limit());
        assert_eq!(b.receive(address(1), b"RSOE\x02\x05\0\0\0"), Err(Refused));
        assert_eq!(b.receive(address(9), &encode_ack(0)), Err(Refused));
        assert_eq!(b.receive(address(1), b"RSOE\x01"), Err(Refused));
        // Two parts of one entry that disagree.
        let long = |fill: u8| OutsideEntry {
            channel: "asset".to_owned(),
            bytes: vec![fill; 2000],
        };
        let first = encode_entry(0, &long(1));
        b.receive(address(1), &first[0]).unwrap();
        assert_eq!(
            b.receive(address(1), &encode_entry(0, &long(2))[0]),
            Err(Refused)
        );
        b.receive(address(1), &first[1]).unwrap();
        assert_eq!(b.held[&(0, 0)], long(1));
        // A resend of a held entry is no contradiction.
        assert_eq!(b.receive(address(1), &encode_entry(0, &long(2))[0]), Ok(()));
        // A part of one far ahead is dropped.
        let far = encode_entry(OUTSIDE_RECEIVE_WINDOW + 1, &entry("z"));
        assert_eq!(b.receive(address(1), &far[0]), Ok(()));
        assert!(!b.held.contains_key(&(0, OUTSIDE_RECEIVE_WINDOW + 1)));
    }
}
