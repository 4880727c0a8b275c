//! [`Datagrams`]: the one thing a session needs from its transport, sending and receiving whole
//! datagrams without blocking, so the same session runs over a plain UDP socket and over the
//! lossy loopback link tests use ([`LossySocket`](super::LossySocket)).
//!
//! This module owns the trait and its impl for `std::net::UdpSocket`. It must never decode what
//! it carries.

use std::io;
use std::net::{SocketAddr, UdpSocket};

/// The longest datagram accepted: what fits one packet on any path without fragments.
pub const MAX_DATAGRAM_BYTES: usize = 1200;

/// A non-blocking datagram transport.
pub trait Datagrams {
    /// Sends `bytes` as one datagram to `to`. A datagram that cannot be sent now is dropped, as
    /// the network may drop any datagram; only a local fault is an error.
    fn send(&mut self, bytes: &[u8], to: SocketAddr) -> io::Result<()>;

    /// The next datagram that has arrived, copied into `buffer`, with its length and sender;
    /// `None` when none waits. A datagram longer than `buffer` arrives cut to `buffer.len()`, so a
    /// caller gives a buffer one byte longer than the largest datagram it accepts and refuses one
    /// that fills it.
    fn receive(&mut self, buffer: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>>;

    /// The address peers send to.
    fn local_addr(&self) -> io::Result<SocketAddr>;
}

/// Binds a non-blocking UDP socket to `address` (port 0 picks a free port).
///
/// # Errors
///
/// The socket's errors: the address is taken, or not this machine's.
pub fn bind_udp(address: SocketAddr) -> io::Result<UdpSocket> {
    let socket = UdpSocket::bind(address)?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

impl Datagrams for UdpSocket {
    fn send(&mut self, bytes: &[u8], to: SocketAddr) -> io::Result<()> {
        match self.send_to(bytes, to) {
            Ok(_) => Ok(()),
            // A full send buffer or an unreachable peer loses this datagram, like the network.
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::ConnectionRefused
                        | io::ErrorKind::ConnectionReset
                ) =>
            {
                Ok(())
            }
            Err(error) => Err(error),
        }
    }

    fn receive(&mut self, buffer: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>> {
        loop {
            return match self.recv_from(buffer) {
                Ok((length, from)) => Ok(Some((length, from))),
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => Ok(None),
                // On some systems an earlier send to a closed port reports here; not this
                // datagram's fault, so go on to the next.
                Err(error)
                    if matches!(
                        error.kind(),
                        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
                    ) =>
                {
                    continue;
                }
                Err(error) => Err(error),
            };
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        UdpSocket::local_addr(self)
    }
}
