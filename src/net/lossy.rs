//! [`LossySocket`]: a UDP socket on the loopback interface that delays, jitters and drops the
//! datagrams it sends, so tests can run sessions through a bad network on one machine.
//!
//! Each datagram sent is dropped with probability `loss`, otherwise held for `latency` plus a
//! uniform share of `jitter` and then sent for real; datagrams whose delays cross arrive out of
//! order, as on the internet. The choices come from a seeded generator (SplitMix64), so the share
//! of losses is the same every run; which datagram meets which draw follows the session's timing
//! (resends, keep-alives), and arrival times follow the wall clock. Held datagrams go
//! out whenever the socket is used (`send` or `receive`) or [`LossySocket::pump`] is called.
//!
//! This module owns the conditions, the held datagrams and their counts. It must never send to
//! or bind anything but a loopback address: it is a test tool, not a transport.

use std::collections::BinaryHeap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::datagrams::{Datagrams, bind_udp};

/// How a [`LossySocket`] treats what it sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkConditions {
    /// The delay every datagram has at least.
    pub latency: Duration,
    /// The most added on top of `latency`, uniformly.
    pub jitter: Duration,
    /// The share of datagrams dropped, from 0 to 1.
    pub loss: f64,
    /// Seeds the drop and delay choices.
    pub seed: u64,
}

impl LinkConditions {
    /// No delay, no loss.
    pub fn perfect() -> Self {
        LinkConditions {
            latency: Duration::ZERO,
            jitter: Duration::ZERO,
            loss: 0.0,
            seed: 0,
        }
    }
}

/// What a [`LossySocket`] has done with the datagrams given to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCounts {
    /// Datagrams given to `send`.
    pub offered: u64,
    /// Dropped on purpose.
    pub dropped: u64,
    /// Sent on after their delay.
    pub sent: u64,
}

/// A handle on a [`LossySocket`]'s counts that stays with the test while a session owns the
/// socket.
#[derive(Clone, Debug, Default)]
pub struct LinkWatch(Arc<Mutex<LinkCounts>>);

impl LinkWatch {
    /// The counts now.
    pub fn get(&self) -> LinkCounts {
        *self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn update(&self, change: impl FnOnce(&mut LinkCounts)) {
        change(
            &mut self
                .0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
    }
}

/// A datagram waiting for its time.
#[derive(PartialEq, Eq)]
struct Held {
    due: Instant,
    /// Send order, to keep the heap's order total.
    sequence: u64,
    to: SocketAddr,
    bytes: Vec<u8>,
}

impl Ord for Held {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // The earliest due first (a max-heap, so reversed).
        (other.due, other.sequence).cmp(&(self.due, self.sequence))
    }
}

impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A loopback UDP socket under [`LinkConditions`] (see the module docs).
pub struct LossySocket {
    socket: UdpSocket,
    conditions: LinkConditions,
    random: u64,
    held: BinaryHeap<Held>,
    sequence: u64,
    counts: LinkWatch,
}

impl LossySocket {
    /// Binds a socket on `127.0.0.1` at a free port.
    ///
    /// # Errors
    ///
    /// The socket's errors, and `InvalidInput` for a loss outside `0..=1`.
    pub fn bind_loopback(conditions: LinkConditions) -> io::Result<Self> {
        if !(0.0..=1.0).contains(&conditions.loss) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a link's loss is a share from 0 to 1",
            ));
        }
        Ok(LossySocket {
            socket: bind_udp(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))?,
            conditions,
            random: conditions.seed,
            held: BinaryHeap::new(),
            sequence: 0,
            counts: LinkWatch::default(),
        })
    }

    /// What has been dropped and sent so far.
    pub fn counts(&self) -> LinkCounts {
        self.counts.get()
    }

    /// A handle on the counts, to read them after the socket is handed to a session.
    pub fn watch(&self) -> LinkWatch {
        self.counts.clone()
    }

    /// Sends every held datagram whose time has come.
    ///
    /// # Errors
    ///
    /// The socket's errors.
    pub fn pump(&mut self) -> io::Result<()> {
        let now = Instant::now();
        while self.held.peek().is_some_and(|held| held.due <= now) {
            let held = self.held.pop().expect("peeked");
            self.counts.update(|counts| counts.sent += 1);
            Datagrams::send(&mut self.socket, &held.bytes, held.to)?;
        }
        Ok(())
    }

    /// The next number of SplitMix64.
    fn next_random(&mut self) -> u64 {
        self.random = self.random.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.random;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform number in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_random() >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Datagrams for LossySocket {
    fn send(&mut self, bytes: &[u8], to: SocketAddr) -> io::Result<()> {
        if !to.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a lossy test link sends on the loopback interface only, not to {to}"),
            ));
        }
        let dropped = self.unit() < self.conditions.loss;
        self.counts.update(|counts| {
            counts.offered += 1;
            counts.dropped += u64::from(dropped);
        });
        if dropped {
            return self.pump();
        }
        let delay = self.conditions.latency + self.conditions.jitter.mul_f64(self.unit());
        self.sequence += 1;
        self.held.push(Held {
            due: Instant::now() + delay,
            sequence: self.sequence,
            to,
            bytes: bytes.to_vec(),
        });
        self.pump()
    }

    fn receive(&mut self, buffer: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>> {
        self.pump()?;
        Datagrams::receive(&mut self.socket, buffer)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }
}
