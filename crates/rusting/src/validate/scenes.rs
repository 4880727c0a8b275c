//! The scene checks of `rusting validate`: every scene cooks (`SCENE_INVALID`), no bodies overlap
//! at the start (`SCENE_BODIES_OVERLAP`), and every simulation part the scenes use supports the
//! project's determinism mode (`DETERMINISM_UNSUPPORTED`).
//!
//! Cooking, overlap and the mode check are the engine's own (`scene::cook`,
//! `scene::overlap`, `DeterminismSupport::check_uses`, the last one shared with the game's startup
//! check); this module turns their results into findings. It must never write into the project.

use std::path::{Path, PathBuf};

use rusting_engine::game::project::{PROJECT_FILE, Project};
use rusting_engine::physics::PhysicsSettings;
use rusting_engine::runtime::DeterminismError;
use rusting_engine::scene::level_mesh::lexically_normal;
use rusting_engine::scene::{LocatedScene, SceneError, overlap, parts};

use super::finding::{Finding, Place, SceneEntity};

/// The project's scenes, relative to its directory: the main scene first, then every
/// `scenes/*.scene.json` in name order.
pub fn scene_paths(project: &Project) -> Vec<PathBuf> {
    let mut paths = vec![project.manifest.main_scene.clone()];
    let mut others: Vec<PathBuf> = std::fs::read_dir(project.root.join("scenes"))
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok())
                .map(|entry| Path::new("scenes").join(entry.file_name()))
                .filter(|path| path.to_string_lossy().ends_with(".scene.json"))
                .collect()
        })
        .unwrap_or_default();
    others.sort();
    for path in others {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

/// The name of `relative` in findings.
fn name(relative: &Path) -> String {
    relative.to_string_lossy().replace('\\', "/")
}

/// Cooks every scene; the ones that cook come back, the others become `SCENE_INVALID` findings.
pub fn load_scenes(project: &Project, findings: &mut Vec<Finding>) -> Vec<LocatedScene> {
    let mut scenes = Vec::new();
    for relative in scene_paths(project) {
        match LocatedScene::load(&project.root, &relative) {
            Ok(scene) => scenes.push(scene),
            Err(error) => {
                // A mesh file a scene references is named itself, relative to the project.
                let root = lexically_normal(&project.root);
                let file = error_file(&error)
                    .map(lexically_normal)
                    .and_then(|file| file.strip_prefix(&root).ok().map(name))
                    .unwrap_or_else(|| name(&relative));
                findings.push(scene_error(&file, &error))
            }
        }
    }
    scenes
}

/// The file a cook error names.
fn error_file(error: &SceneError) -> Option<&Path> {
    match error {
        SceneError::Io { file, .. }
        | SceneError::Json { file, .. }
        | SceneError::UnsupportedVersion { file, .. }
        | SceneError::UnknownComponent { file, .. }
        | SceneError::BadValue { file, .. }
        | SceneError::DuplicateId { file, .. } => Some(file),
        _ => None,
    }
}

/// A cook error as a finding at its place: the JSON pointer, or the line and column of a syntax
/// error, or the file.
fn scene_error(file: &str, error: &SceneError) -> Finding {
    let place = match error {
        SceneError::Json { line, column, .. } => Place::Text {
            file: file.to_owned(),
            line: *line,
            column: *column,
        },
        SceneError::UnknownComponent { pointer, .. }
        | SceneError::BadValue { pointer, .. }
        | SceneError::DuplicateId { pointer, .. } => Place::Scene {
            file: file.to_owned(),
            pointer: pointer.clone(),
            entity: None,
        },
        _ => Place::File {
            file: file.to_owned(),
        },
    };
    Finding::error("SCENE_INVALID", place, error.to_string())
}

/// `SCENE_BODIES_OVERLAP`: one finding per pair of bodies that overlap deeper than
/// `PhysicsSettings::linear_slop` before the first tick.
pub fn overlaps(scenes: &[LocatedScene], findings: &mut Vec<Finding>) {
    let settings = PhysicsSettings::default();
    for scene in scenes {
        for pair in overlap::bodies_overlapping_at_start(scene, &settings) {
            let describe = |user: &rusting_engine::runtime::PartUser| {
                let mut text = format!("entity {}", user.scene_id);
                if !user.name.is_empty() {
                    text.push_str(&format!(" `{}`", user.name));
                }
                format!("{text} ({})", user.pointer)
            };
            findings.push(Finding {
                other: Some(SceneEntity::from(&pair.b)),
                ..Finding::error(
                    "SCENE_BODIES_OVERLAP",
                    Place::Scene {
                        file: scene.name.clone(),
                        pointer: pair.a.pointer.clone(),
                        entity: Some(SceneEntity::from(&pair.a)),
                    },
                    format!(
                        "{} and {} overlap by {:.4} m at the start (more than the {} m the solver \
                         leaves alone); the solver would push them apart on the first ticks",
                        describe(&pair.a),
                        describe(&pair.b),
                        pair.depth,
                        settings.linear_slop
                    ),
                )
            });
        }
    }
}

/// `DETERMINISM_UNSUPPORTED`: one finding per simulation part of the engine whose supported mode
/// is below the project's, at the first entity of the scenes that uses it (or at `rusting.json`
/// when no scene entity does). The check and its message are the game's startup check's.
pub fn unsupported_parts(project: &Project, scenes: &[LocatedScene], findings: &mut Vec<Finding>) {
    let support = rusting_engine::engine::engine_determinism_support(project.runtime_settings());
    let users = parts::first_users(scenes);
    if let Err(error) = support.check_uses(project.manifest.determinism, &users) {
        findings.extend(part_findings(&error));
    }
}

/// The findings of a failed mode check: one per part.
fn part_findings(error: &DeterminismError) -> Vec<Finding> {
    let project_file = Place::File {
        file: PROJECT_FILE.to_owned(),
    };
    match error {
        DeterminismError::Unsupported { parts, .. } => parts
            .iter()
            .map(|part| {
                let place = match &part.first_user {
                    Some(user) => Place::entity(user),
                    None => project_file.clone(),
                };
                Finding::error("DETERMINISM_UNSUPPORTED", place, part.to_string())
            })
            .collect(),
        other => vec![Finding::error(
            "DETERMINISM_UNSUPPORTED",
            project_file,
            other.to_string(),
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusting_engine::runtime::{DeterminismMode, DeterminismSupport, PartUser, PartUsers};

    /// Each part below the mode is one finding at its first user, with the part's own message;
    /// a part no entity uses is reported at `rusting.json`.
    #[test]
    fn each_part_below_the_mode_is_one_finding_at_its_first_user() {
        let mut support = DeterminismSupport::default();
        support.declare("physics.cpu", DeterminismMode::Local);
        support.declare("audio", DeterminismMode::Off);
        support.declare("gameplay", DeterminismMode::CrossPlatform);
        let mut users = PartUsers::new();
        users.insert(
            "physics.cpu".into(),
            PartUser {
                scene: "scenes/main.scene.json".into(),
                pointer: "/entities/2".into(),
                scene_id: 30,
                name: "Crate".into(),
            },
        );
        let error = support
            .check_uses(DeterminismMode::CrossPlatform, &users)
            .unwrap_err();
        let findings = part_findings(&error);
        assert_eq!(findings.len(), 2);
        assert_eq!(
            findings[0].line(),
            "rusting.json: error DETERMINISM_UNSUPPORTED: the project requires CrossPlatform determinism, but `audio` supports only Off"
        );
        assert_eq!(
            findings[1].line(),
            "scenes/main.scene.json#/entities/2: error DETERMINISM_UNSUPPORTED: the project \
             requires CrossPlatform determinism, but `physics.cpu` supports only Local (first used \
             by entity 30 `Crate` at scenes/main.scene.json#/entities/2)"
        );
        assert_eq!(findings[1].to_json()["scene_id"], 30);
    }
}
