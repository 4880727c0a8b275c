//! `rusting cook <project>`: every scene of a project into its canonical cooked bytes.
//!
//! Each `scenes/*.scene.json` is cooked (checked, defaults filled, canonical order and number
//! formatting) and written, atomically, to `cooked/<name>.json` in the project. The same sources
//! give the same bytes on every machine. Cooking is all or nothing: every scene is cooked, then
//! every cooked file written beside its target, and only then are they all renamed into place; a
//! broken scene, or a project whose main scene is missing, writes nothing.

use std::path::Path;

use rusting_engine::game::project::Project;
use rusting_engine::runtime::json_file;
use rusting_engine::scene;

use crate::exit::{Failure, Outcome};

/// Cooks every scene; returns one line per scene with the hash of its cooked bytes.
pub fn cook(project_dir: &Path, json: bool) -> Result<String, Failure> {
    let project = Project::open(project_dir)
        .map_err(|e| Failure::bad_input("PROJECT_INVALID", e.to_string()))?;
    let main_scene = project.root.join(&project.manifest.main_scene);
    if !main_scene.is_file() {
        return Err(Failure::bad_input(
            "SCENE_INVALID",
            format!(
                "{}: the main scene named in rusting.json does not exist",
                main_scene.display()
            ),
        ));
    }
    let scenes_dir = project_dir.join("scenes");
    let mut sources: Vec<_> = std::fs::read_dir(&scenes_dir)
        .map_err(|e| {
            Failure::bad_input("PROJECT_INVALID", format!("{}: {e}", scenes_dir.display()))
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
    let cooked = sources
        .iter()
        .map(|source| {
            scene::cook_file(source).map_err(|e| Failure::bad_input("SCENE_INVALID", e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let failed = |path: &Path, e: std::io::Error| {
        Failure::new(
            "COOK_FAILED",
            Outcome::BuildOrRun,
            format!("{}: {e}", path.display()),
        )
    };
    // Every file is written beside its target first; only when all are written do they replace
    // the cooked files, so a failure leaves the cooked directory as it was.
    let mut staged: Vec<(std::path::PathBuf, std::path::PathBuf)> = Vec::new();
    let mut lines = Vec::new();
    let mut results = Vec::new();
    for (source, cooked) in sources.iter().zip(&cooked) {
        let name = source
            .file_name()
            .map(|n| n.to_string_lossy().replace(".scene.json", ".json"))
            .unwrap_or_default();
        let target = out_dir.join(&name);
        let temporary = out_dir.join(format!(".{name}.{}.tmp", std::process::id()));
        if let Err(e) = std::fs::write(&temporary, cooked.to_bytes()) {
            let _ = std::fs::remove_file(&temporary);
            for (written, _) in &staged {
                let _ = std::fs::remove_file(written);
            }
            return Err(failed(&temporary, e));
        }
        staged.push((temporary, target.clone()));
        let identity = scene::SceneIdentity::of(name.clone(), cooked);
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
    for (k, (temporary, target)) in staged.iter().enumerate() {
        if let Err(e) = json_file::replace_with(temporary, target) {
            for (left, _) in &staged[k..] {
                let _ = std::fs::remove_file(left);
            }
            return Err(failed(target, e));
        }
    }
    Ok(if json {
        serde_json::json!({ "result": "cooked", "scenes": results }).to_string()
    } else if lines.is_empty() {
        format!("{}: no scenes to cook", scenes_dir.display())
    } else {
        lines.join("\n")
    })
}
