//! What every run of `rusting determinism` is fed: an input script as given, or a replay's frames
//! and input written as one, checked against the project before anything builds; and the replay's
//! recorded hashes to hold the runs to.
//!
//! This module must never run the game.

use std::path::{Path, PathBuf};

use rusting_engine::game::project::Project;
use rusting_engine::record::replay::{recorded_form, recorded_hash_matches};
use rusting_engine::record::{Replay, StateHashReport};
use rusting_engine::runtime::InputScript;
use rusting_engine::scene::{LocatedScene, SceneIdentity};

use super::Request;
use crate::exit::{Failure, Outcome};

/// What every run is fed: an input script (as given, or a replay's frames written as one into
/// `work`), how many ticks to run, and the replay when there is one.
pub struct Input {
    pub script: Option<PathBuf>,
    pub ticks: u64,
    pub replay: Option<Replay>,
}

/// The input every run gets, checked: a replay must be of this project's seed and main scene.
pub fn input(request: &Request, project: &Project, work: &Path) -> Result<Input, Failure> {
    let bad = |code: &'static str, message: String| Failure::bad_input(code, message);
    if let Some(script) = request.script {
        // Checked here, before anything builds: a broken script is bad input, not a failed run.
        InputScript::load(script).map_err(|e| bad("SCRIPT_INVALID", e.to_string()))?;
        return Ok(Input {
            script: Some(script.to_owned()),
            ticks: request.ticks.unwrap_or(DEFAULT_TICKS),
            replay: None,
        });
    }
    let Some(path) = request.replay else {
        return Ok(Input {
            script: None,
            ticks: request.ticks.unwrap_or(DEFAULT_TICKS),
            replay: None,
        });
    };
    let replay = Replay::load(path).map_err(|e| bad("REPLAY_INVALID", e.to_string()))?;
    if replay.seed != project.manifest.seed || replay.start_tick != 0 {
        return Err(bad(
            "REPLAY_INVALID",
            format!(
                "{}: recorded with seed {} from tick {}, but the project starts from tick 0 with seed {}",
                path.display(),
                replay.seed,
                replay.start_tick,
                project.manifest.seed
            ),
        ));
    }
    // The scene the replay was recorded with must be the project's main scene as it is now.
    if let Some(recorded) = &replay.scene {
        let located = LocatedScene::load(&project.root, &project.manifest.main_scene)
            .map_err(|e| bad("SCENE_INVALID", e.to_string()))?;
        let loaded = SceneIdentity::of(located.name.clone(), &located.cooked);
        if *recorded != loaded {
            return Err(bad(
                "REPLAY_INVALID",
                format!(
                    "{}: recorded with scene `{}` ({}), but the project's main scene is `{}` ({})",
                    path.display(),
                    recorded.name,
                    recorded.cooked_hash,
                    loaded.name,
                    loaded.cooked_hash
                ),
            ));
        }
    }
    // The runs are fed the replay as an input script, which carries frames and input only.
    if let Some(first) = replay.outside.first() {
        return Err(bad(
            "REPLAY_INVALID",
            format!(
                "{}: the replay holds results from outside the simulation (the first entered tick \
                 {}), which `rusting determinism --replay` cannot feed to its runs yet; check it \
                 with `rusting replay play`, which feeds them from the recording",
                path.display(),
                first.tick
            ),
        ));
    }
    let script = work.join("replay-input.json");
    let bytes = serde_json::to_vec(&replay.to_input_script()).expect("a script serializes");
    std::fs::write(&script, bytes).map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("{}: {e}", script.display()),
        )
    })?;
    let recorded = replay.end_tick() - replay.start_tick;
    let bound = crate::replay::Bound {
        ticks: request.ticks,
        until: request.until,
    };
    let ticks = bound
        .ticks_of(path, replay.start_tick, recorded)?
        .unwrap_or(recorded);
    Ok(Input {
        script: Some(script),
        ticks,
        replay: Some(replay),
    })
}

/// The first tick at which `report` disagrees with the hashes `replay` recorded: `(tick,
/// recorded, computed)`, the computed hash as wide as the recorded one (a compact replay keeps
/// the low 32 bits).
pub fn against_recording(
    replay: &Replay,
    report: &StateHashReport,
) -> Option<(u64, String, String)> {
    let recorded: std::collections::BTreeMap<u64, &String> = replay
        .hashes
        .iter()
        .map(|(tick, hash)| (*tick, hash))
        .collect();
    report.ticks.iter().find_map(|tick| {
        let want = recorded.get(&tick.tick)?;
        let computed = match u64::from_str_radix(&tick.hash, 16) {
            Ok(computed) if recorded_hash_matches(want, computed) => return None,
            Ok(computed) => recorded_form(want, computed),
            Err(_) => tick.hash.clone(),
        };
        Some((tick.tick, (*want).clone(), computed))
    })
}

/// Ticks to run when neither `--ticks` nor a replay says.
pub const DEFAULT_TICKS: u64 = 120;
