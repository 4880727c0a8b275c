//! [`LocatedScene`]: a cooked scene that remembers where each entity is in its source file.
//!
//! Cooking sorts entities by id, so a cooked entity no longer knows its index in the source's
//! `entities` array. Messages about an entity (the startup determinism check, `rusting validate`)
//! point into the source with a JSON pointer, so this module keeps the `SceneId` → pointer map
//! next to the cooked scene. It must never change what cooking produces: the cooked bytes and their
//! hash stay those of [`cook`](fn@super::cook).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::cook::{CookedEntity, CookedScene, cook};
use super::error::SceneError;
use crate::runtime::PartUser;

/// A cooked scene, its project-relative name, and the source place of each entity.
#[derive(Clone, Debug, PartialEq)]
pub struct LocatedScene {
    /// The scene's path inside the project, with `/` separators (`scenes/main.scene.json`).
    pub name: String,
    /// The file it was read from.
    pub file: PathBuf,
    /// The cooked scene.
    pub cooked: CookedScene,
    /// `SceneId` → JSON pointer of the entity in the source (`/entities/3`).
    pointers: BTreeMap<u64, String>,
}

impl LocatedScene {
    /// Reads and cooks `root/relative`.
    pub fn load(root: &Path, relative: &Path) -> Result<LocatedScene, SceneError> {
        let file = root.join(relative);
        let text = std::fs::read_to_string(&file).map_err(|e| SceneError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
        let cooked = cook(&text, &file)?;
        // Cooking succeeded, so the text is JSON with an `entities` array (or none) of objects
        // with whole-number ids.
        let source: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let pointers = source
            .get("entities")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .enumerate()
                    .filter_map(|(index, entity)| {
                        let id = entity.get("id").and_then(Value::as_u64)?;
                        Some((id, format!("/entities/{index}")))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(LocatedScene {
            name: relative.to_string_lossy().replace('\\', "/"),
            file,
            cooked,
            pointers,
        })
    }

    /// The JSON pointer of the entity with `SceneId` `id` in the source.
    pub fn pointer(&self, id: u64) -> &str {
        self.pointers.get(&id).map_or("", String::as_str)
    }

    /// `entity` (of this scene) as messages name it: scene, pointer, `SceneId` and name.
    pub fn user(&self, entity: &CookedEntity) -> PartUser {
        PartUser {
            scene: self.name.clone(),
            pointer: self.pointer(entity.id).to_owned(),
            scene_id: entity.id,
            name: entity.name.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_follow_the_source_order_not_the_id_order() {
        let dir = std::env::temp_dir().join(format!("rusting-located-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("scenes")).unwrap();
        std::fs::write(
            dir.join("scenes/a.scene.json"),
            r#"{"format_version": 1, "entities": [{"id": 9, "name": "Late"}, {"id": 2}]}"#,
        )
        .unwrap();
        let scene = LocatedScene::load(&dir, Path::new("scenes/a.scene.json")).unwrap();
        assert_eq!(scene.cooked.entities[0].id, 2);
        assert_eq!(scene.pointer(2), "/entities/1");
        let user = scene.user(&scene.cooked.entities[1]);
        assert_eq!(
            user.to_string(),
            "entity 9 `Late` at scenes/a.scene.json#/entities/0"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
