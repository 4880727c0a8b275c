//! [`SessionInput`]: what a session carries for one player on one frame: the player's input and
//! how many outside entries its peer has announced.
//!
//! The count is cumulative, so an input that is lost, repeated by a prediction or sent again says
//! nothing new; only a confirmed input that raises it announces entries
//! ([`super::outside_link`]). Only the lowest handle played on a peer carries the peer's count;
//! its other handles carry 0. This module owns the type. It must never hold anything whose
//! encoded size varies: the rollback crate needs every value to encode to the same length.

use serde::{Deserialize, Serialize};

use crate::runtime::PlayerTickInput;

/// One player's input for one frame, as the session carries it (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SessionInput {
    /// The player's input, which the tick runs with.
    pub player: PlayerTickInput,
    /// Outside entries the player's peer has announced so far.
    pub outside: u32,
}
