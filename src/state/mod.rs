//! Simulation state: what it is, how it is declared, hashed and copied. The bottom layer: it
//! imports nothing of the engine, and every other layer stands on it.
//!
//! - `sim_id` holds [`SimId`] (the simulation's stable identity of an entity) and
//!   [`SimIdAllocator`]; `scene_id` holds [`SceneId`], the id a scene's author gives an entity;
//! - `sim_state` holds the [`SimState`] trait (what `#[derive(SimState)]` writes) and its impls
//!   for the building blocks; `hasher` holds [`StateHasher`] (XXH3-64 over raw bits);
//! - `registry` holds [`SimRegistry`], the one declaration of every simulation type, and the
//!   [`Simulated`] marker; `registration` the `App` extensions that declare types from
//!   `Plugin::build` ([`SimStateAppExt`], [`SnapshotAppExt`]);
//! - `hash` holds [`world_state_hash`], [`StateHashes`], per-entity states and the non-finite
//!   check; `hash_plan` what the hash works out once per archetype (component ids) and keeps;
//! - `snapshot` holds [`WorldSnapshot`] (simulation entities by `SimId`, registered resources) and
//!   the [`SnapshotRegistry`] of what it copies; `snapshot_external` the hooks that hold state
//!   outside the ECS (GPU bodies); `snapshot_error` their [`SnapshotError`];
//! - `undeclared` finds state a tick changed that nobody declared;
//! - `plugin` holds [`StatePlugin`], which inserts the hash history and registers the bevy types
//!   simulation entities share with presentation.
//!
//! Whatever this layer needs of the running app (the tick a snapshot or a hash belongs to,
//! whether the project checks for non-finite values) its callers pass in: it never reads the
//! runtime's resources, and it never names a physics, gameplay or scene type.

mod change_ticks;
pub mod hash;
mod hash_plan;
pub mod hasher;
pub mod layout;
mod plugin;
pub mod registration;
pub mod registry;
pub mod scene_id;
pub mod sim_id;
pub mod sim_state;
pub mod snapshot;
mod snapshot_error;
pub mod snapshot_external;
mod snapshot_store;
pub mod undeclared;

pub use hash::{
    EntityState, NonFiniteValue, STATE_HASH_HISTORY, StateHashes, entity_states, world_state_hash,
};
pub use hasher::StateHasher;
pub use layout::{FieldLayout, LayoutFingerprint, TypeLayout};
pub use plugin::StatePlugin;
pub use registration::{SimStateAppExt, SnapshotAppExt};
pub use registry::{SimEntry, SimKind, SimRegistry, Simulated};
pub use scene_id::SceneId;
pub use sim_id::{SimId, SimIdAllocator};
pub use sim_state::SimState;
pub use snapshot::{SnapshotRegistry, WorldSnapshot};
pub use snapshot_error::SnapshotError;
pub use snapshot_external::{ExternalState, ExternalValue, RestoredEntities};
pub use undeclared::{UndeclaredCheck, UndeclaredState};
