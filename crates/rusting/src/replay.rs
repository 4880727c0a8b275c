//! `rusting replay info <FILE>` and `rusting replay play <project> <FILE>`.

use std::path::Path;

use rusting_engine::determinism::Replay;

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
    let replay = load(file)?;
    crate::run::run(&crate::run::Request {
        project: project_dir,
        headless: true,
        ticks: None,
        script: None,
        record: None,
        replay: Some(file),
        synctest: None,
        hashes_out: None,
        detail_ticks: None,
        debug: false,
        target_dir,
    })
    .map(|_| {
        format!(
            "the replay matched all {} recorded ticks",
            replay.hashes.len()
        )
    })
}
