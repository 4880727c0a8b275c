//! Determinism tooling: the world-state hash after every tick, and its reports.
//!
//! - [`hasher`]: `StateHasher` (XXH3-64 over raw bits) and the `StateHash` trait.
//! - [`impls`]: `StateHash` for every simulation component and resource.
//! - [`hash`]: `world_state_hash`, `StateHashes`, per-entity states, the non-finite check.

pub mod hash;
pub mod hasher;
pub mod impls;

use bevy::app::{App, Plugin};

pub use hash::{
    EntityState, NonFiniteValue, STATE_HASH_HISTORY, StateHashes, entity_states, world_state_hash,
};
pub use hasher::{StateHash, StateHasher};

/// Inserts [`StateHashes`] when the app is built.
#[derive(Clone, Debug, Default)]
pub struct DeterminismPlugin;

impl Plugin for DeterminismPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(StateHashes::default());
    }
}
