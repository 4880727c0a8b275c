//! `rusting determinism <project> --ticks N`: the same game, built and run three ways, must give
//! the same world-state hash after every tick.
//!
//! The configurations: a debug build, a release build, the release build again pinned to one CPU
//! with `taskset --cpu-list 0` (so bevy's task pool and rayon run one thread), and, without an input
//! script, the release build in uneven frames (3, 1/2, 1/2, 0 and 5 ticks). Each runs
//! headless with `RUSTING_HEADLESS_TICKS` and writes a state-hash report through
//! `RUSTING_STATE_HASH_OUT`; every tick is compared against the debug run. At the first mismatch the
//! two configurations run again up to that tick and their per-entity and per-component hashes name
//! the entity and component.

use std::path::{Path, PathBuf};
use std::process::Command;

use rusting_engine::determinism::{StateHashReport, compare_reports};
use rusting_engine::project::Project;

use crate::exit::{Failure, Outcome};

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
    /// Ticks to run.
    pub ticks: u64,
    /// An input script to feed every run.
    pub script: Option<&'a Path>,
    /// The target directory builds share (default: the project's `target`).
    pub target_dir: Option<&'a Path>,
    /// Print a JSON result.
    pub json: bool,
}

fn taskset_available() -> bool {
    Command::new("taskset")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Builds and runs one configuration for `ticks`; returns its report.
fn run(
    request: &Request,
    configuration: &Configuration,
    ticks: u64,
    out: &Path,
) -> Result<StateHashReport, Failure> {
    let manifest = request.project.join("Cargo.toml");
    let target = request
        .target_dir
        .map(Path::to_owned)
        .unwrap_or_else(|| request.project.join("target"));
    let mut command = if configuration.one_cpu {
        let mut c = Command::new("taskset");
        c.args(["--cpu-list", "0", "cargo"]);
        c
    } else {
        Command::new("cargo")
    };
    command
        .args(["run", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target);
    if configuration.release {
        command.arg("--release");
    }
    command
        .env("RUSTING_PROJECT_DIR", request.project)
        .env("RUSTING_HEADLESS_TICKS", ticks.to_string())
        .env("RUSTING_STATE_HASH_OUT", out)
        .env(
            "RUSTING_HEADLESS_PACING",
            if configuration.uneven {
                "uneven"
            } else {
                "steady"
            },
        )
        .env_remove("RUSTING_REPLAY_OUT")
        .env_remove("RUSTING_REPLAY_PLAY");
    match request.script {
        Some(script) => command.env("RUSTING_INPUT_SCRIPT", script),
        None => command.env_remove("RUSTING_INPUT_SCRIPT"),
    };
    let output = command.output().map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("{}: cannot start cargo: {e}", configuration.name),
        )
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("the {} build or run failed: {last}", configuration.name),
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

/// Runs the check; `Ok` with a summary when every configuration agrees.
pub fn check(request: &Request) -> Result<String, Failure> {
    let project = Project::open(request.project)
        .map_err(|e| Failure::new("PROJECT_INVALID", Outcome::BadInput, e.to_string()))?;
    if let Some(script) = request.script
        && !script.is_file()
    {
        return Err(Failure::new(
            "SCRIPT_INVALID",
            Outcome::BadInput,
            format!("{}: no such input script", script.display()),
        ));
    }
    let work = std::env::temp_dir().join(format!("rusting-determinism-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("{}: {e}", work.display()),
        )
    })?;
    let one_cpu = taskset_available();
    let configurations: Vec<&Configuration> = CONFIGURATIONS
        .iter()
        .filter(|c| one_cpu || !c.one_cpu)
        // Input scripts are frames of input; uneven pacing would change when input is seen.
        .filter(|c| request.script.is_none() || !c.uneven)
        .collect();
    let report_path = |c: &Configuration, suffix: &str| -> PathBuf {
        work.join(format!("{}{suffix}.json", c.name.replace(' ', "-")))
    };
    let mut reports = Vec::new();
    for configuration in &configurations {
        let report = run(
            request,
            configuration,
            request.ticks,
            &report_path(configuration, ""),
        )?;
        reports.push(report);
    }
    let reference = &reports[0];
    for (configuration, report) in configurations.iter().zip(&reports).skip(1) {
        let mismatch = reference
            .ticks
            .iter()
            .zip(&report.ticks)
            .find(|(a, b)| a.hash != b.hash)
            .map(|(a, _)| a.tick)
            .or((reference.ticks.len() != report.ticks.len()).then_some(0));
        let Some(tick) = mismatch else {
            continue;
        };
        // Run both up to the divergent tick and compare their entities there.
        let base = run(
            request,
            configurations[0],
            tick,
            &report_path(configurations[0], "-at"),
        )?;
        let other = run(
            request,
            configuration,
            tick,
            &report_path(configuration, "-at"),
        )?;
        let difference = compare_reports(&base, &other);
        let entity = difference.as_ref().and_then(|d| d.entity.clone());
        let component = difference.and_then(|d| d.component);
        let _ = std::fs::remove_dir_all(&work);
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
    let _ = std::fs::remove_dir_all(&work);
    let names: Vec<&str> = configurations.iter().map(|c| c.name).collect();
    Ok(if request.json {
        serde_json::json!({
            "result": "same",
            "project": project.manifest.name,
            "ticks": request.ticks,
            "configurations": names,
        })
        .to_string()
    } else {
        format!(
            "{}: {} agree on all {} ticks{}",
            project.manifest.name,
            names.join(", "),
            request.ticks,
            if one_cpu {
                ""
            } else {
                " (taskset is missing: no one-CPU run)"
            }
        )
    })
}
