//! `rusting determinism <project> --ticks N`: the same game, built and run three ways, must give
//! the same world-state hash after every tick.
//!
//! The configurations: a debug build, a release build, the release build again pinned to one CPU
//! with `taskset --cpu-list 0` (so bevy's task pool and rayon run one thread), and, without an input
//! script, the release build in uneven frames (3, 1/2, 1/2, 0 and 5 ticks). The two builds share
//! one target directory and run one after the other; then the configurations run at the same time
//! (only one of them is pinned, so none shares a pin with another), each headless with
//! `RUSTING_HEADLESS_TICKS`, writing a state-hash report through `RUSTING_STATE_HASH_OUT`. Every
//! tick is compared against the debug run. At the first mismatch the two configurations run again
//! up to that tick and their per-entity and per-component hashes name the entity and component.
//! With `--replay`, every run is fed the replay's frames and input (as an input script), so
//! gameplay is exercised the way a player did.

use std::path::{Path, PathBuf};

use rusting_engine::determinism::{Replay, StateHashReport, compare_reports};
use rusting_engine::project::Project;

use crate::exit::{Failure, Outcome};
use crate::game_build::{Build, GameRun, Profile, last_line, taskset_available};

/// One way of building and running the game.
struct Configuration {
    name: &'static str,
    release: bool,
    one_cpu: bool,
    uneven: bool,
}

const CONFIGURATIONS: [Configuration; 4] = [
    Configuration {
        name: "debug",
        release: false,
        one_cpu: false,
        uneven: false,
    },
    Configuration {
        name: "release",
        release: true,
        one_cpu: false,
        uneven: false,
    },
    Configuration {
        name: "release on one CPU",
        release: true,
        one_cpu: true,
        uneven: false,
    },
    Configuration {
        name: "release in uneven frames",
        release: true,
        one_cpu: false,
        uneven: true,
    },
];

/// What to check.
pub struct Request<'a> {
    /// The project directory.
    pub project: &'a Path,
    /// Ticks to run (default: 120, or the whole replay).
    pub ticks: Option<u64>,
    /// An input script to feed every run.
    pub script: Option<&'a Path>,
    /// A replay whose frames and input to feed every run.
    pub replay: Option<&'a Path>,
    /// The target directory builds share (default: the project's `target`).
    pub target_dir: Option<&'a Path>,
    /// Print a JSON result.
    pub json: bool,
}

/// The two builds every configuration runs one of.
struct Binaries {
    debug: PathBuf,
    release: PathBuf,
}

/// Runs one configuration for `ticks` with the input script at `script`; returns its report.
fn run(
    request: &Request,
    binaries: &Binaries,
    configuration: &Configuration,
    ticks: u64,
    script: Option<&Path>,
    out: &Path,
) -> Result<StateHashReport, Failure> {
    let mut env = vec![
        ("RUSTING_HEADLESS_TICKS", ticks.to_string()),
        ("RUSTING_STATE_HASH_OUT", out.display().to_string()),
        // Every configuration names state a tick changed that nobody declared, release too.
        ("RUSTING_CHECK_UNDECLARED", "1".to_owned()),
        (
            "RUSTING_HEADLESS_PACING",
            if configuration.uneven {
                "uneven"
            } else {
                "steady"
            }
            .to_owned(),
        ),
    ];
    if let Some(script) = script {
        env.push(("RUSTING_INPUT_SCRIPT", script.display().to_string()));
    }
    let executable = if configuration.release {
        &binaries.release
    } else {
        &binaries.debug
    };
    let output = GameRun {
        executable,
        project: request.project,
        env,
        one_cpu: configuration.one_cpu,
    }
    .command()
    .output()
    .map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("{}: cannot start the game: {e}", configuration.name),
        )
    })?;
    if !output.status.success() {
        return Err(Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!(
                "the {} run failed: {}",
                configuration.name,
                last_line(&output.stderr)
            ),
        ));
    }
    StateHashReport::load(out).map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!(
                "{}: the run wrote no usable report: {e}",
                configuration.name
            ),
        )
    })
}

/// Runs every configuration at once (none shares a CPU pin with another) and returns their
/// reports in order.
fn run_all(
    request: &Request,
    binaries: &Binaries,
    configurations: &[&Configuration],
    ticks: u64,
    script: Option<&Path>,
    out: impl Fn(&Configuration) -> PathBuf + Sync,
) -> Result<Vec<StateHashReport>, Failure> {
    std::thread::scope(|scope| {
        let runs: Vec<_> = configurations
            .iter()
            .map(|configuration| {
                let out = &out;
                scope.spawn(move || {
                    run(
                        request,
                        binaries,
                        configuration,
                        ticks,
                        script,
                        &out(configuration),
                    )
                })
            })
            .collect();
        runs.into_iter()
            .map(|run| run.join().expect("a run thread does not panic"))
            .collect()
    })
}

/// The input every run gets, and how many ticks to run: a script as given, or a replay's frames
/// written as a script into `work`.
fn input(
    request: &Request,
    project: &Project,
    work: &Path,
) -> Result<(Option<PathBuf>, u64), Failure> {
    let bad = |code: &'static str, message: String| Failure::new(code, Outcome::BadInput, message);
    if let Some(script) = request.script {
        if !script.is_file() {
            return Err(bad(
                "SCRIPT_INVALID",
                format!("{}: no such input script", script.display()),
            ));
        }
        return Ok((
            Some(script.to_owned()),
            request.ticks.unwrap_or(DEFAULT_TICKS),
        ));
    }
    let Some(path) = request.replay else {
        return Ok((None, request.ticks.unwrap_or(DEFAULT_TICKS)));
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
    Ok((
        Some(script),
        request.ticks.unwrap_or(recorded).min(recorded),
    ))
}

/// Ticks to run when neither `--ticks` nor a replay says.
const DEFAULT_TICKS: u64 = 120;

/// Runs the check; `Ok` with a summary when every configuration agrees.
pub fn check(request: &Request) -> Result<String, Failure> {
    let project = Project::open(request.project)
        .map_err(|e| Failure::new("PROJECT_INVALID", Outcome::BadInput, e.to_string()))?;
    let work = std::env::temp_dir().join(format!("rusting-determinism-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("{}: {e}", work.display()),
        )
    })?;
    let result = check_in(request, &project, &work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn check_in(request: &Request, project: &Project, work: &Path) -> Result<String, Failure> {
    let (script, ticks) = input(request, project, work)?;
    let script = script.as_deref();
    let build = Build {
        project: request.project,
        target_dir: request.target_dir,
    };
    let binaries = Binaries {
        debug: build.build(Profile::Debug)?,
        release: build.build(Profile::Release)?,
    };
    let one_cpu = taskset_available();
    let configurations: Vec<&Configuration> = CONFIGURATIONS
        .iter()
        .filter(|c| one_cpu || !c.one_cpu)
        // Scripted input is frames of input; uneven pacing would change when input is seen.
        .filter(|c| script.is_none() || !c.uneven)
        .collect();
    let report_path = |c: &Configuration, suffix: &str| -> PathBuf {
        work.join(format!("{}{suffix}.json", c.name.replace(' ', "-")))
    };
    let reports = run_all(request, &binaries, &configurations, ticks, script, |c| {
        report_path(c, "")
    })?;
    let reference = &reports[0];
    for (configuration, report) in configurations.iter().zip(&reports).skip(1) {
        let mismatch = reference
            .ticks
            .iter()
            .zip(&report.ticks)
            .find(|(a, b)| a != b)
            .map(|(a, _)| a.tick)
            .or((reference.ticks.len() != report.ticks.len()).then_some(0));
        let Some(tick) = mismatch else {
            continue;
        };
        // Run both up to the divergent tick and compare their entities there.
        let pair = [configurations[0], *configuration];
        let at = run_all(request, &binaries, &pair, tick, script, |c| {
            report_path(c, "-at")
        })?;
        let difference = compare_reports(&at[0], &at[1]);
        let entity = difference.as_ref().and_then(|d| d.entity.clone());
        let component = difference.and_then(|d| d.component);
        let mut message = format!(
            "tick {tick} differs between debug and {}",
            configuration.name
        );
        if let Some(entity) = &entity {
            message.push_str(&format!(
                ": entity `{}`{}",
                entity.name.as_deref().unwrap_or("(unnamed)"),
                entity
                    .scene_id
                    .map(|id| format!(" (scene id {id})"))
                    .unwrap_or_default()
            ));
            if let Some(component) = &component {
                message.push_str(&format!(", component {component}"));
            }
        } else {
            message.push_str(": only resources differ");
        }
        if request.json {
            message = serde_json::json!({
                "result": "diverged",
                "code": "DETERMINISM_DIVERGED",
                "tick": tick,
                "configuration": configuration.name,
                "entity": entity.as_ref().and_then(|e| e.name.clone()),
                "scene_id": entity.as_ref().and_then(|e| e.scene_id),
                "sim_id": entity.as_ref().map(|e| e.sim_id),
                "component": component,
            })
            .to_string();
        }
        return Err(Failure::new(
            "DETERMINISM_DIVERGED",
            Outcome::Failed,
            message,
        ));
    }
    let names: Vec<&str> = configurations.iter().map(|c| c.name).collect();
    Ok(if request.json {
        serde_json::json!({
            "result": "same",
            "project": project.manifest.name,
            "ticks": ticks,
            "configurations": names,
        })
        .to_string()
    } else {
        format!(
            "{}: {} agree on all {} ticks{}",
            project.manifest.name,
            names.join(", "),
            ticks,
            if one_cpu {
                ""
            } else {
                " (taskset is missing: no one-CPU run)"
            }
        )
    })
}
