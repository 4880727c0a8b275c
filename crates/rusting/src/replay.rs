//! `rusting replay info <FILE>` and `rusting replay play <project> <FILE>`.

use std::path::Path;
use std::process::Command;

use rusting_engine::determinism::Replay;
use rusting_engine::project::Project;

use crate::exit::{Failure, Outcome};

fn load(file: &Path) -> Result<Replay, Failure> {
    Replay::load(file).map_err(|e| Failure::new("REPLAY_INVALID", Outcome::BadInput, e.to_string()))
}

/// What a replay holds.
pub fn info(file: &Path, json: bool) -> Result<String, Failure> {
    let replay = load(file)?;
    let seconds: f64 = replay
        .frames
        .iter()
        .map(|f| f.real_delta_ns as f64)
        .sum::<f64>()
        / 1e9;
    let inputs = replay.frames.iter().filter(|f| f.input.is_some()).count();
    let scene = replay
        .scene
        .as_ref()
        .map(|s| format!("{} ({})", s.name, s.cooked_hash))
        .unwrap_or_else(|| "(none recorded)".into());
    Ok(if json {
        serde_json::json!({
            "format_version": replay.format_version,
            "engine_version": replay.engine_version,
            "seed": replay.seed,
            "start_tick": replay.start_tick,
            "frames": replay.frames.len(),
            "ticks": replay.hashes.len(),
            "input_changes": inputs,
            "seconds": seconds,
            "scene": replay.scene,
        })
        .to_string()
    } else {
        format!(
            "{}: format {}, engine {}, seed {}, scene {scene}; {} frames ({seconds:.2} s), {} ticks from tick {}, {inputs} input changes",
            file.display(),
            replay.format_version,
            replay.engine_version,
            replay.seed,
            replay.frames.len(),
            replay.hashes.len(),
            replay.start_tick,
        )
    })
}

/// Builds the game in `project` and plays `file` into it headless.
pub fn play(project_dir: &Path, file: &Path, target_dir: Option<&Path>) -> Result<String, Failure> {
    Project::open(project_dir)
        .map_err(|e| Failure::new("PROJECT_INVALID", Outcome::BadInput, e.to_string()))?;
    let replay = load(file)?;
    let target = target_dir
        .map(Path::to_owned)
        .unwrap_or_else(|| project_dir.join("target"));
    let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_owned());
    let output = Command::new("cargo")
        .args(["run", "--quiet", "--release", "--manifest-path"])
        .arg(project_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env("RUSTING_PROJECT_DIR", project_dir)
        .env("RUSTING_REPLAY_PLAY", &file)
        .env_remove("RUSTING_HEADLESS_TICKS")
        .env_remove("RUSTING_REPLAY_OUT")
        .output()
        .map_err(|e| {
            Failure::new(
                "RUN_FAILED",
                Outcome::BuildOrRun,
                format!("cannot start cargo: {e}"),
            )
        })?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_owned();
    match output.status.code() {
        Some(0) => Ok(format!(
            "the replay matched all {} recorded ticks",
            replay.hashes.len()
        )),
        Some(1) if last.contains("diverged") || last.contains("scene") => Err(Failure::new(
            "REPLAY_DIVERGED",
            Outcome::Failed,
            last.trim_start_matches("error: ").to_owned(),
        )),
        _ => Err(Failure::new("RUN_FAILED", Outcome::BuildOrRun, last)),
    }
}
