//! What the `rusting` binary's tests share: running the binary, game projects made by
//! `rusting new` with an extra plugin, built in this workspace's target directory, and reading
//! the CI workflows' commands.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the `rusting` binary with `args`.
pub fn rusting(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rusting"))
        .args(args)
        .output()
        .expect("the rusting binary runs")
}

/// The starter template.
pub fn starter() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("templates/starter")
}

/// A project made by `rusting new` under a fresh temporary root, with `extra` as `src/extra.rs`
/// adding the plugin `extra::Extra` to the starter game. Returns the root and the project.
pub fn project_with(tag: &str, extra: &str) -> (PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!("rusting-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join(tag);
    let engine = engine_checkout();
    assert_eq!(
        rusting(&[
            "new",
            dir.to_str().unwrap(),
            "--engine-path",
            engine.to_str().unwrap()
        ])
        .status
        .code(),
        Some(0)
    );
    std::fs::write(dir.join("src/extra.rs"), extra).unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "mod extra;\nmod game;\n\nrusting_engine::rusting_game!((game::StarterGame, extra::Extra));\n",
    )
    .unwrap();
    (root, dir)
}

/// The GitHub Actions workflow file at `path`, parsed from YAML (a panic naming the file when it
/// does not parse).
pub fn workflow(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The shell commands of `job`'s steps in `workflow`, in order.
pub fn workflow_runs(workflow: &serde_json::Value, job: &str) -> Vec<String> {
    workflow["jobs"][job]["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no job `{job}`"))
        .iter()
        .filter_map(|step| step["run"].as_str().map(str::to_owned))
        .collect()
}

/// This process's `PATH` with `first` ahead of it, so a workflow's `rusting` is the one meant.
pub fn path_with_first(first: &Path) -> std::ffi::OsString {
    let mut path = vec![first.to_owned()];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(path).unwrap()
}

/// This engine checkout (the workspace root).
pub fn engine_checkout() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// This workspace's target directory, which the projects' builds share.
pub fn shared_target() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// Removes from `target` every build (fingerprints, outputs and build-script folders) in
/// `profiles` of the packages whose output names `forget` picks, so the next build compiles
/// them from their sources again. Cargo names a dependency's build by name, version and
/// settings, not by its source's contents, and takes a registry or git crate of a version it
/// built before as unchanged.
pub fn forget_builds(target: &Path, profiles: &[&str], forget: impl Fn(&str) -> bool) {
    for profile in profiles {
        for dir in [".fingerprint", "deps", "build"] {
            let Ok(entries) = std::fs::read_dir(target.join(profile).join(dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                if forget(&entry.file_name().to_string_lossy()) {
                    let path = entry.path();
                    let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
                }
            }
        }
    }
}

/// `rusting determinism <dir> --ticks <ticks>` and `more` arguments, building in the shared
/// target directory.
pub fn determinism_in_shared_target(dir: &Path, ticks: u64, more: &[&str]) -> std::process::Output {
    let target = shared_target();
    let ticks = ticks.to_string();
    let mut args = vec![
        "determinism",
        dir.to_str().unwrap(),
        "--ticks",
        &ticks,
        "--target-dir",
        target.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    rusting(&args)
}

/// An extra plugin that nudges the player by `1e-4` along x during tick 30, in debug builds only.
pub const DEBUG_ONLY_NUDGE: &str = r#"use bevy::prelude::*;
use rusting_engine::prelude::*;

pub struct Extra;

impl Plugin for Extra {
    fn build(&self, app: &mut bevy::app::App) {
        app.add_systems(FixedUpdate, nudge.after(SimSet::Tweens));
    }
}

fn nudge(time: Res<FrameTime>, mut bodies: Query<(&Name, &mut Transform)>) {
    if cfg!(debug_assertions) && time.fixed_tick == 30 {
        for (name, mut transform) in &mut bodies {
            if name.as_str() == "Player" {
                transform.translation.x += 1.0e-4;
            }
        }
    }
}
"#;
