//! The recording journal's marks: its magic, its version and the tag of each kind of record.
//!
//! The layout they mark is documented in `replay_journal`, which writes journals; `journal_read`
//! reads them. Both take the marks from here, so neither depends on the other. This module must
//! never hold code: a mark changed here changes the format (bump [`JOURNAL_VERSION`]).

/// The journal format version.
pub const JOURNAL_VERSION: u32 = 1;

/// The first bytes of every journal.
pub const JOURNAL_MAGIC: &[u8; 4] = b"RJNL";

/// A frame: delta, start tick, and its input when it changed.
pub(crate) const FRAME: u8 = 1;
/// A frame with the last frame's delta and no new input, starting at the current tick.
pub(crate) const SAME_FRAME: u8 = 2;
/// The hash of the next tick.
pub(crate) const HASH: u8 = 3;
/// A rollback to a tick.
pub(crate) const REWIND: u8 = 4;
/// A hash at a tick that does not follow on.
pub(crate) const HASH_AT: u8 = 5;
/// A state detail.
pub(crate) const DETAIL: u8 = 6;
/// The outside entries of a tick.
pub(crate) const OUTSIDE: u8 = 7;
