//! Scenes: the versioned JSON format, cooking it into canonical bytes, and loading it.
//!
//! - [`cook`](mod@cook): source scene → [`CookedScene`] (checked, defaults filled, sorted, canonical bytes).
//! - [`spawn`]: [`CookedScene`] → entities, in `SceneId` order.
//! - [`error`]: [`SceneError`], which names the file and the JSON pointer of every problem.
//! - [`level_mesh`]: `TriMesh` and `Heightfield` colliders, inline or in a file, read into
//!   checked level meshes that the cooked scene keeps.
//! - [`located`]: [`LocatedScene`], a cooked scene with the source JSON pointer of each entity.
//! - [`parts`]: which simulation parts each entity uses, for the determinism check.
//! - [`overlap`]: bodies the scene places inside each other.
//!
//! A source scene looks like this (every field but `format_version` and the entity `id`s is
//! optional):
//!
//! ```json
//! {
//!   "format_version": 1,
//!   "settings": { "gravity": [0, -9.81, 0] },
//!   "entities": [
//!     { "id": 1, "name": "Ground",
//!       "components": { "Collider": { "shape": { "HalfSpace": { "normal": [0, 1, 0] } } } } },
//!     { "id": 2, "name": "Crate",
//!       "transform": { "translation": [0, 2, 0], "euler_degrees": [45, 0, 0] },
//!       "components": {
//!         "RigidBody": { "mass": 2.0 },
//!         "Collider": { "shape": { "Box": { "half_extents": [0.5, 0.5, 0.5] } }, "friction": 0.6 }
//!       } }
//!   ]
//! }
//! ```

pub mod cook;
pub mod error;
pub mod game_types;
pub mod level_mesh;
pub mod located;
pub mod overlap;
pub mod parts;
pub mod presentation;
pub mod spawn;

use serde::{Deserialize, Serialize};

pub use cook::{
    CookedEntity, CookedScene, MAX_SCENE_ENTITIES, SCENE_FORMAT_VERSION, SceneComponents,
    SceneSettings, cook, cook_file,
};
pub use error::SceneError;
pub use game_types::{SceneSource, SceneTypesAppExt};
pub use located::LocatedScene;
pub use presentation::{Appearance, CameraSettings, ScenePresentation};
pub use spawn::spawn_scene;

/// An entity's id within its scene: it lives with the simulation's identities in `state`.
pub use crate::state::SceneId;

/// Which scene an app loaded: its name and the hash of its cooked bytes. Replays record it so that
/// playing one into an app holding another scene fails clearly instead of diverging.
#[derive(bevy::prelude::Resource, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SceneIdentity {
    /// The scene's name (its path inside the project).
    pub name: String,
    /// XXH3-64 of the cooked scene's bytes, 16 hex digits.
    pub cooked_hash: String,
}

impl SceneIdentity {
    /// The identity of `scene` under `name`: its presentation data (appearances, camera) is left
    /// out, so recolouring a scene keeps its replays valid.
    pub fn of(name: impl Into<String>, scene: &CookedScene) -> Self {
        let bytes = scene.without_presentation().to_bytes();
        SceneIdentity {
            name: name.into(),
            cooked_hash: format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes)),
        }
    }
}
