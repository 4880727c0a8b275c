//! The desync-detail exchange's datagrams: how a state detail travels between two peers in
//! bounded parts, and how the parts that arrive are checked and put back together.
//!
//! A detail datagram starts with [`DETAIL_MAGIC`] (whose first byte never starts a
//! fortress-rollback message, so the socket tells the two apart by it), then its kind, the tick
//! it is about, and its part number and part count, all little-endian:
//!
//! ```text
//! "RSDD"  kind: u8  tick: u64  part: u16  parts: u16  payload (at most DETAIL_PAYLOAD_BYTES)
//! ```
//!
//! The payloads of a message's parts, joined in order, are its JSON. A message has at most
//! [`MAX_DETAIL_PARTS`] parts, so one costs a receiver at most about 150 KB however the peer
//! words it; a part that contradicts the parts already held (another part count, another payload
//! for the same part) is refused.
//!
//! This module owns the framing and the reassembly. It must never act on what a message says:
//! the investigation in [`super::desync`] does.

use crate::record::StateDetail;

use super::datagrams::MAX_DATAGRAM_BYTES;

/// The first bytes of every detail datagram.
pub const DETAIL_MAGIC: [u8; 4] = *b"RSDD";

/// Bytes before a part's payload.
pub const DETAIL_HEADER_BYTES: usize = 4 + 1 + 8 + 2 + 2;

/// The most payload bytes one part carries.
pub const DETAIL_PAYLOAD_BYTES: usize = MAX_DATAGRAM_BYTES - DETAIL_HEADER_BYTES;

/// The most parts a message may have.
pub const MAX_DETAIL_PARTS: u16 = 128;

/// What a detail message carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DetailKind {
    /// Every simulation entity's and resource's hash after the tick, without fields.
    Summary,
    /// The first differing entity or resource with all its fields.
    Target,
    /// The sender holds the receiver's target: it may stop sending.
    Done,
}

impl DetailKind {
    fn byte(self) -> u8 {
        match self {
            DetailKind::Summary => 1,
            DetailKind::Target => 2,
            DetailKind::Done => 3,
        }
    }

    fn from_byte(byte: u8) -> Option<DetailKind> {
        match byte {
            1 => Some(DetailKind::Summary),
            2 => Some(DetailKind::Target),
            3 => Some(DetailKind::Done),
            _ => None,
        }
    }
}

/// One detail datagram, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DetailPart {
    /// What the message carries.
    pub kind: DetailKind,
    /// The tick it is about.
    pub tick: u64,
    /// This part's number, from 0.
    pub part: u16,
    /// The message's part count.
    pub parts: u16,
    /// This part's bytes of the message's JSON.
    pub payload: Vec<u8>,
}

/// Whether a datagram is a detail datagram (by its first bytes only).
pub fn is_detail(datagram: &[u8]) -> bool {
    datagram.starts_with(&DETAIL_MAGIC)
}

/// Decodes one detail datagram; `None` for one that is not a whole, possible part.
pub fn decode_part(datagram: &[u8]) -> Option<DetailPart> {
    if !is_detail(datagram) || datagram.len() < DETAIL_HEADER_BYTES {
        return None;
    }
    let kind = DetailKind::from_byte(datagram[4])?;
    let tick = u64::from_le_bytes(datagram[5..13].try_into().ok()?);
    let part = u16::from_le_bytes(datagram[13..15].try_into().ok()?);
    let parts = u16::from_le_bytes(datagram[15..17].try_into().ok()?);
    let payload = &datagram[DETAIL_HEADER_BYTES..];
    let possible = (1..=MAX_DETAIL_PARTS).contains(&parts)
        && part < parts
        && payload.len() <= DETAIL_PAYLOAD_BYTES
        && (kind != DetailKind::Done || (parts == 1 && payload.is_empty()))
        && tick <= i32::MAX as u64;
    possible.then(|| DetailPart {
        kind,
        tick,
        part,
        parts,
        payload: payload.to_vec(),
    })
}

/// The datagrams of one message about `tick` with JSON `json`; `None` when it needs more than
/// [`MAX_DETAIL_PARTS`].
pub fn encode_message(kind: DetailKind, tick: u64, json: &[u8]) -> Option<Vec<Vec<u8>>> {
    let chunks: Vec<&[u8]> = if json.is_empty() {
        vec![&[]]
    } else {
        json.chunks(DETAIL_PAYLOAD_BYTES).collect()
    };
    let parts = u16::try_from(chunks.len())
        .ok()
        .filter(|&parts| parts <= MAX_DETAIL_PARTS)?;
    Some(
        chunks
            .iter()
            .enumerate()
            .map(|(part, chunk)| {
                let mut datagram = Vec::with_capacity(DETAIL_HEADER_BYTES + chunk.len());
                datagram.extend_from_slice(&DETAIL_MAGIC);
                datagram.push(kind.byte());
                datagram.extend_from_slice(&tick.to_le_bytes());
                datagram.extend_from_slice(&(part as u16).to_le_bytes());
                datagram.extend_from_slice(&parts.to_le_bytes());
                datagram.extend_from_slice(chunk);
                datagram
            })
            .collect(),
    )
}

/// A message's parts as they arrive, in any order and any number of times.
#[derive(Clone, Debug, Default)]
pub struct Assembly {
    parts: Vec<Option<Vec<u8>>>,
}

/// Why a part was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contradiction {
    /// Its part count differs from the message's.
    PartCount,
    /// It repeats a part with other bytes.
    Payload,
}

impl Assembly {
    /// Adds a detail part; a part already held with the same bytes is a harmless resend.
    pub fn add(&mut self, part: &DetailPart) -> Result<(), Contradiction> {
        self.add_part(part.part, part.parts, &part.payload)
    }

    /// Adds part `part` of `parts` (`part < parts`, checked by the datagram's decoder); a part
    /// already held with the same bytes is a harmless resend.
    pub fn add_part(&mut self, part: u16, parts: u16, payload: &[u8]) -> Result<(), Contradiction> {
        if self.parts.is_empty() {
            self.parts = vec![None; usize::from(parts)];
        }
        if self.parts.len() != usize::from(parts) {
            return Err(Contradiction::PartCount);
        }
        let Some(slot) = self.parts.get_mut(usize::from(part)) else {
            return Err(Contradiction::PartCount);
        };
        match slot {
            Some(held) if held.as_slice() != payload => Err(Contradiction::Payload),
            Some(_) => Ok(()),
            None => {
                *slot = Some(payload.to_vec());
                Ok(())
            }
        }
    }

    /// The whole message (a detail's JSON) once every part is held.
    pub fn complete(&self) -> Option<Vec<u8>> {
        if self.parts.is_empty() || self.parts.iter().any(Option::is_none) {
            return None;
        }
        Some(self.parts.iter().flatten().flatten().copied().collect())
    }
}

/// A state detail as a message's JSON.
pub fn detail_json(detail: &StateDetail) -> Vec<u8> {
    serde_json::to_vec(detail).expect("a state detail always serializes")
}

/// A message's JSON as a state detail about `tick`; `None` for anything else.
pub fn parse_detail(json: &[u8], tick: u64) -> Option<StateDetail> {
    serde_json::from_slice::<StateDetail>(json)
        .ok()
        .filter(|detail| detail.tick == tick)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_survives_parts_in_any_order_and_resends() {
        let json: Vec<u8> = (0..3000u32).map(|k| b'a' + (k % 26) as u8).collect();
        let datagrams = encode_message(DetailKind::Summary, 40, &json).unwrap();
        assert_eq!(datagrams.len(), 3);
        assert!(datagrams.iter().all(|d| d.len() <= MAX_DATAGRAM_BYTES));
        let mut assembly = Assembly::default();
        for datagram in datagrams.iter().rev().chain(&datagrams) {
            let part = decode_part(datagram).unwrap();
            assert_eq!((part.kind, part.tick), (DetailKind::Summary, 40));
            assembly.add(&part).unwrap();
        }
        assert_eq!(assembly.complete().unwrap(), json);
    }

    #[test]
    fn impossible_and_contradicting_parts_are_refused() {
        let datagrams = encode_message(DetailKind::Target, 7, b"{}").unwrap();
        let mut bad_count = datagrams[0].clone();
        bad_count[15] = 0;
        assert_eq!(decode_part(&bad_count), None);
        let mut bad_kind = datagrams[0].clone();
        bad_kind[4] = 9;
        assert_eq!(decode_part(&bad_kind), None);
        assert_eq!(decode_part(&datagrams[0][..10]), None);
        let mut assembly = Assembly::default();
        assembly.add(&decode_part(&datagrams[0]).unwrap()).unwrap();
        let mut other = decode_part(&datagrams[0]).unwrap();
        other.payload = b"[]".to_vec();
        assert_eq!(assembly.add(&other), Err(Contradiction::Payload));
        let long = vec![b'x'; DETAIL_PAYLOAD_BYTES * usize::from(MAX_DETAIL_PARTS) + 1];
        assert_eq!(encode_message(DetailKind::Summary, 1, &long), None);
    }
}
