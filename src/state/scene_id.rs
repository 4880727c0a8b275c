//! [`SceneId`]: the id a scene's author gives an entity, beside the simulation's own [`SimId`].
//!
//! It keys random streams and names entities in reports, and snapshots copy it; it is never an
//! order (that is `SimId`'s job) and the hash never sees it. It lives here, with the identities,
//! because the state layer copies it and the gameplay layer reads it, and both stand below
//! `scene`, which assigns it when it spawns a scene's entities.
//!
//! This module must never assign ids: the scene loader does.

use bevy::prelude::Component;
use serde::{Deserialize, Serialize};

use super::sim_id::SimId;

/// An entity's stable id within its scene (simulation state: it keys random streams and names
/// entities in reports).
#[derive(
    Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[require(SimId)]
pub struct SceneId(pub u64);
