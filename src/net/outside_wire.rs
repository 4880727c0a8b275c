//! The outside-entry exchange's datagrams: how one peer's outside entries travel to the others in
//! bounded parts, and how the receiver says what it holds.
//!
//! An outside datagram starts with [`OUTSIDE_MAGIC`] (whose first byte, like the desync detail's,
//! never starts a fortress-rollback message, so the socket tells them apart by their first four
//! bytes), then its kind, all little-endian:
//!
//! ```text
//! "RSOE"  1  seq: u32  part: u16  parts: u16  payload (at most OUTSIDE_PAYLOAD_BYTES)
//! "RSOE"  2  next: u32
//! ```
//!
//! Kind 1 is one part of the sender's entry number `seq` (its entries are numbered from 0 in the
//! order it announced them); the payloads of an entry's parts, joined in order, are the entry:
//! the channel name's length as one byte, the name, then the bytes. Kind 2 acknowledges: the
//! sender of the acknowledgement holds every entry of the receiver's below `next`.
//!
//! This module owns the framing and the entry encoding. It must never decide what is sent when,
//! or what an entry means: [`super::outside_link`] does.

use super::datagrams::MAX_DATAGRAM_BYTES;
use crate::jobs::{MAX_CHANNEL_BYTES, MAX_OUTSIDE_BYTES, OutsideEntry};

/// The first bytes of every outside datagram.
pub const OUTSIDE_MAGIC: [u8; 4] = *b"RSOE";

/// Bytes before a part's payload.
pub const OUTSIDE_HEADER_BYTES: usize = 4 + 1 + 4 + 2 + 2;

/// The most payload bytes one part carries.
pub const OUTSIDE_PAYLOAD_BYTES: usize = MAX_DATAGRAM_BYTES - OUTSIDE_HEADER_BYTES;

/// The most parts an entry may have: enough for the largest entry the queue takes.
pub const MAX_OUTSIDE_PARTS: u16 =
    (1 + MAX_CHANNEL_BYTES + MAX_OUTSIDE_BYTES).div_ceil(OUTSIDE_PAYLOAD_BYTES) as u16;

const PART: u8 = 1;
const ACK: u8 = 2;

/// One outside datagram, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutsideDatagram {
    /// A part of the sender's entry `seq`.
    Part {
        /// The entry's number in the sender's announcements.
        seq: u32,
        /// This part's number, from 0.
        part: u16,
        /// The entry's part count.
        parts: u16,
        /// This part's bytes of the encoded entry.
        payload: Vec<u8>,
    },
    /// The sender holds every entry of the receiver's below `next`.
    Ack {
        /// The first entry the sender does not hold.
        next: u32,
    },
}

/// Whether a datagram is an outside datagram (by its first bytes only).
pub fn is_outside(datagram: &[u8]) -> bool {
    datagram.starts_with(&OUTSIDE_MAGIC)
}

/// Decodes one outside datagram; `None` for one that is not whole and possible.
pub fn decode(datagram: &[u8]) -> Option<OutsideDatagram> {
    let body = datagram.strip_prefix(&OUTSIDE_MAGIC)?;
    let (&kind, body) = body.split_first()?;
    let u32_at = |at: usize| Some(u32::from_le_bytes(body.get(at..at + 4)?.try_into().ok()?));
    let u16_at = |at: usize| Some(u16::from_le_bytes(body.get(at..at + 2)?.try_into().ok()?));
    match kind {
        PART => {
            let (seq, part, parts) = (u32_at(0)?, u16_at(4)?, u16_at(6)?);
            let payload = body.get(8..)?;
            let possible = (1..=MAX_OUTSIDE_PARTS).contains(&parts)
                && part < parts
                && !payload.is_empty()
                && payload.len() <= OUTSIDE_PAYLOAD_BYTES;
            possible.then(|| OutsideDatagram::Part {
                seq,
                part,
                parts,
                payload: payload.to_vec(),
            })
        }
        ACK if body.len() == 4 => Some(OutsideDatagram::Ack { next: u32_at(0)? }),
        _ => None,
    }
}

/// The datagrams of entry `seq`.
pub fn encode_entry(seq: u32, entry: &OutsideEntry) -> Vec<Vec<u8>> {
    let mut whole = Vec::with_capacity(1 + entry.channel.len() + entry.bytes.len());
    // The queue checked the channel's length (1 to MAX_CHANNEL_BYTES) before the entry got here.
    whole.push(entry.channel.len().min(MAX_CHANNEL_BYTES) as u8);
    whole.extend_from_slice(entry.channel.as_bytes());
    whole.extend_from_slice(&entry.bytes);
    let chunks: Vec<&[u8]> = whole.chunks(OUTSIDE_PAYLOAD_BYTES).collect();
    let parts = chunks.len() as u16;
    chunks
        .iter()
        .enumerate()
        .map(|(part, chunk)| {
            let mut datagram = Vec::with_capacity(OUTSIDE_HEADER_BYTES + chunk.len());
            datagram.extend_from_slice(&OUTSIDE_MAGIC);
            datagram.push(PART);
            datagram.extend_from_slice(&seq.to_le_bytes());
            datagram.extend_from_slice(&(part as u16).to_le_bytes());
            datagram.extend_from_slice(&parts.to_le_bytes());
            datagram.extend_from_slice(chunk);
            datagram
        })
        .collect()
}

/// An acknowledgement of every entry below `next`.
pub fn encode_ack(next: u32) -> Vec<u8> {
    let mut datagram = OUTSIDE_MAGIC.to_vec();
    datagram.push(ACK);
    datagram.extend_from_slice(&next.to_le_bytes());
    datagram
}

/// An entry's joined parts as the entry; `None` for bytes that are not one within the limits.
pub fn decode_entry(whole: &[u8]) -> Option<OutsideEntry> {
    let (&length, rest) = whole.split_first()?;
    let channel = rest.get(..usize::from(length))?;
    let entry = OutsideEntry {
        channel: String::from_utf8(channel.to_vec()).ok()?,
        bytes: rest.get(usize::from(length)..)?.to_vec(),
    };
    entry.check().is_ok().then_some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::detail_wire::Assembly;

    fn entry(bytes: usize) -> OutsideEntry {
        OutsideEntry {
            channel: "asset:level-2".to_owned(),
            bytes: (0..bytes).map(|k| (k * 7 % 251) as u8).collect(),
        }
    }

    #[test]
    fn the_largest_entry_travels_in_parts_and_comes_back_whole() {
        let sent = entry(MAX_OUTSIDE_BYTES);
        let datagrams = encode_entry(9, &sent);
        assert_eq!(datagrams.len(), usize::from(MAX_OUTSIDE_PARTS));
        assert!(datagrams.iter().all(|d| d.len() <= MAX_DATAGRAM_BYTES));
        let mut assembly = Assembly::default();
        for datagram in datagrams.iter().rev().chain(&datagrams) {
            let Some(OutsideDatagram::Part {
                seq,
                part,
                parts,
                payload,
            }) = decode(datagram)
            else {
                panic!("not a part");
            };
            assert_eq!(seq, 9);
            assembly.add_part(part, parts, &payload).unwrap();
        }
        assert_eq!(decode_entry(&assembly.complete().unwrap()), Some(sent));
        assert_eq!(
            decode(&encode_ack(41)),
            Some(OutsideDatagram::Ack { next: 41 })
        );
    }

    #[test]
    fn impossible_datagrams_and_entries_are_refused() {
        let datagrams = encode_entry(0, &entry(10));
        let mut no_parts = datagrams[0].clone();
        no_parts[11] = 0;
        no_parts[12] = 0;
        assert_eq!(decode(&no_parts), None);
        let mut part_past = datagrams[0].clone();
        part_past[9] = 1;
        assert_eq!(decode(&part_past), None);
        let mut kind = datagrams[0].clone();
        kind[4] = 7;
        assert_eq!(decode(&kind), None);
        assert_eq!(decode(&datagrams[0][..OUTSIDE_HEADER_BYTES]), None);
        let mut long_ack = encode_ack(3);
        long_ack.push(0);
        assert_eq!(decode(&long_ack), None);
        // A channel name longer than the bytes, an empty name, a name that is not UTF-8.
        assert_eq!(decode_entry(&[20, b'a']), None);
        assert_eq!(decode_entry(&[0, 1, 2]), None);
        assert_eq!(decode_entry(&[1, 0xff, 2]), None);
        assert_eq!(decode_entry(&[]), None);
    }
}
