//! `rusting cook <project>`: every scene of a project into its canonical cooked bytes.
//!
//! Each `scenes/*.scene.json` is cooked (checked, defaults filled, canonical order and number
//! formatting) and written, atomically, to `cooked/<name>.json` in the project. The same sources
//! give the same bytes on every machine.

use std::path::Path;

use rusting_engine::json_file;
use rusting_engine::project::Project;
use rusting_engine::scene;

use crate::exit::{Failure, Outcome};

/// Cooks every scene; returns one line per scene with the hash of its cooked bytes.
pub fn cook(project_dir: &Path, json: bool) -> Result<String, Failure> {
    Project::open(project_dir)
        .map_err(|e| Failure::new("PROJECT_INVALID", Outcome::BadInput, e.to_string()))?;
    let scenes_dir = project_dir.join("scenes");
    let mut sources: Vec<_> = std::fs::read_dir(&scenes_dir)
        .map_err(|e| {
            Failure::new(
                "PROJECT_INVALID",
                Outcome::BadInput,
                format!("{}: {e}", scenes_dir.display()),
            )
        })?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.to_string_lossy().ends_with(".scene.json"))
        .collect();
    sources.sort();
    let out_dir = project_dir.join("cooked");
    std::fs::create_dir_all(&out_dir).map_err(|e| {
        Failure::new(
            "COOK_FAILED",
            Outcome::BuildOrRun,
            format!("{}: {e}", out_dir.display()),
        )
    })?;
    let mut lines = Vec::new();
    let mut results = Vec::new();
    for source in &sources {
        let cooked = scene::cook_file(source)
            .map_err(|e| Failure::new("SCENE_INVALID", Outcome::BadInput, e.to_string()))?;
        let bytes = cooked.to_bytes();
        let name = source
            .file_name()
            .map(|n| n.to_string_lossy().replace(".scene.json", ".json"))
            .unwrap_or_default();
        let target = out_dir.join(&name);
        json_file::write_atomically(&target, &bytes).map_err(|e| {
            Failure::new(
                "COOK_FAILED",
                Outcome::BuildOrRun,
                format!("{}: {e}", target.display()),
            )
        })?;
        let identity = scene::SceneIdentity::of(name.clone(), &cooked);
        lines.push(format!(
            "{} -> {} ({} entities, {})",
            source.display(),
            target.display(),
            cooked.entities.len(),
            identity.cooked_hash
        ));
        results.push(serde_json::json!({
            "source": source.display().to_string(),
            "cooked": target.display().to_string(),
            "entities": cooked.entities.len(),
            "hash": identity.cooked_hash,
        }));
    }
    Ok(if json {
        serde_json::json!({ "result": "cooked", "scenes": results }).to_string()
    } else if lines.is_empty() {
        format!("{}: no scenes to cook", scenes_dir.display())
    } else {
        lines.join("\n")
    })
}
