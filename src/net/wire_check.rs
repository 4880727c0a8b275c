//! [`WireCheck`]: what no honest peer sends, in the crate's input messages that decode.
//!
//! The crate's own decoder bounds every length and refuses what does not parse, but a message
//! that parses can still say what cannot be: a connection status for another number of players,
//! a player who is plainly still here reported as gone, or a frame far beyond any this session
//! has reached. fortress-rollback 0.13 trusts those fields; fuzzing showed that such a message
//! can leave it unable to serve synchronized inputs, which ends the session for everyone. So the
//! socket reads them against the pinned wire format (`"=0.13.0"` in the manifest) and refuses
//! the message:
//!
//! ```text
//! header: sentinel [u8; 2], version u8, flags u8, connection id u32; then the kind, u32
//! Input (2):    statuses: u64 count, each { disconnected u8, last_frame i32, epoch u16 },
//!               start_frame i32, ack_frame i32, bytes: u64 count + bytes
//! InputAck (3): ack_frame i32
//! ```
//!
//! A frame is impossible past the session's current frame plus the prediction window, twice the
//! input delay and [`FRAME_MARGIN`] (a peer cannot run further ahead than its window and delay let
//! it before it has this peer's inputs, and its own inputs go a delay further), or below -1 (the
//! crate's "no frame"). A status may say a player left
//! only for a third player: the sender itself and the players of this machine are plainly still
//! here. This module owns those rules. It must never change a message, only judge one the crate's
//! decoder already accepted.

/// Frames beyond the prediction window and input delays a peer may be ahead (messages in
/// flight while this machine stalls for a moment).
pub const FRAME_MARGIN: i64 = 16;

/// Bytes before a message's body: the header and the kind.
const BODY_AT: usize = 12;

/// The kind of an input message.
const INPUT: u32 = 2;

/// The kind of an input acknowledgement.
const INPUT_ACK: u32 = 3;

/// Bytes of one connection status.
const STATUS_BYTES: usize = 7;

/// What the checks know of the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireCheck {
    /// Players in the session.
    pub players: usize,
    /// The handles played on this machine.
    pub local: Vec<usize>,
    /// Frames a peer may be ahead of this machine's current one: the prediction window plus
    /// twice the input delay plus [`FRAME_MARGIN`].
    pub ahead: i64,
}

impl WireCheck {
    /// Why the message (whole, decoded by the crate already) from the peer playing `sender` is
    /// impossible while this machine is at `frame`; `None` when it is possible.
    pub fn impossible(&self, message: &[u8], sender: usize, frame: u64) -> Option<&'static str> {
        let kind = u32::from_le_bytes(message.get(8..BODY_AT)?.try_into().ok()?);
        let limit = i64::try_from(frame).unwrap_or(i64::MAX) + self.ahead;
        let frame_ok = |at: usize| {
            let value = read_i32(message, at).map_or(-1, i64::from);
            (-1..=limit).contains(&value)
        };
        match kind {
            INPUT => {
                let count = usize::try_from(u64::from_le_bytes(
                    message.get(BODY_AT..BODY_AT + 8)?.try_into().ok()?,
                ))
                .ok()?;
                if count != self.players {
                    return Some(
                        "its input message has the connection status of another number of players",
                    );
                }
                let statuses = BODY_AT + 8;
                for player in 0..count {
                    let at = statuses + player * STATUS_BYTES;
                    let gone = *message.get(at)? != 0;
                    if gone && (player == sender || self.local.contains(&player)) {
                        return Some("its input message says a player who is still here has left");
                    }
                    if !frame_ok(at + 1) {
                        return Some("its input message has a frame no peer has reached");
                    }
                }
                let frames = statuses + count * STATUS_BYTES;
                if !frame_ok(frames) || !frame_ok(frames + 4) {
                    return Some("its input message has a frame no peer has reached");
                }
                None
            }
            INPUT_ACK if !frame_ok(BODY_AT) => {
                Some("its input acknowledgement has a frame no peer has reached")
            }
            _ => None,
        }
    }
}

fn read_i32(message: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_le_bytes(
        message.get(at..at + 4)?.try_into().ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An input message: statuses `(gone, last_frame)`, then start and ack frames.
    fn input(statuses: &[(bool, i32)], start: i32, ack: i32) -> Vec<u8> {
        let mut message = vec![0xf5, 0x52, 2, 0, 1, 2, 3, 4];
        message.extend_from_slice(&INPUT.to_le_bytes());
        message.extend_from_slice(&(statuses.len() as u64).to_le_bytes());
        for &(gone, frame) in statuses {
            message.push(u8::from(gone));
            message.extend_from_slice(&frame.to_le_bytes());
            message.extend_from_slice(&0u16.to_le_bytes());
        }
        message.extend_from_slice(&start.to_le_bytes());
        message.extend_from_slice(&ack.to_le_bytes());
        message.extend_from_slice(&2u64.to_le_bytes());
        message.extend_from_slice(&[0x11, 0x02]);
        message
    }

    #[test]
    fn impossible_input_messages_are_named() {
        let check = WireCheck {
            players: 3,
            local: vec![0],
            ahead: 26,
        };
        let honest = input(&[(false, 40), (false, 41), (true, 12)], 41, 40);
        assert_eq!(check.impossible(&honest, 1, 40), None);
        let us_gone = input(&[(true, 40), (false, 41), (false, 12)], 41, 40);
        assert!(check.impossible(&us_gone, 1, 40).is_some());
        let sender_gone = input(&[(false, 40), (true, 41), (false, 12)], 41, 40);
        assert!(check.impossible(&sender_gone, 1, 40).is_some());
        let ahead = input(&[(false, 40), (false, 41), (false, 12)], 41 + 26, 40);
        assert!(check.impossible(&ahead, 1, 40).is_some());
        let below = input(&[(false, -2), (false, 41), (false, 12)], 41, 40);
        assert!(check.impossible(&below, 1, 40).is_some());
        let players = input(&[(false, 40), (false, 41)], 41, 40);
        assert!(check.impossible(&players, 1, 40).is_some());
        let mut ack = vec![0xf5, 0x52, 2, 0, 1, 2, 3, 4];
        ack.extend_from_slice(&INPUT_ACK.to_le_bytes());
        ack.extend_from_slice(&(40 + 27i32).to_le_bytes());
        assert!(check.impossible(&ack, 1, 40).is_some());
    }
}
