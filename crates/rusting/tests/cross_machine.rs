//! Comparing machines: the one-CPU configuration without `taskset`, the CI workflows that run the
//! determinism check on several operating systems and CPUs, and their final job's comparison run
//! here on reports made by different configurations of this machine.

mod support;

use std::path::Path;
use std::process::Command;

use support::{project_with, shared_target};

/// A `PATH` holding every program of this one except `taskset`: symbolic links in `bin`.
#[cfg(unix)]
fn path_without_taskset(bin: &Path) -> std::ffi::OsString {
    std::fs::create_dir_all(bin).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for directory in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&directory) else {
            continue;
        };
        for entry in entries.flatten() {
            let link = bin.join(entry.file_name());
            if entry.file_name() != "taskset" && std::fs::symlink_metadata(&link).is_err() {
                std::os::unix::fs::symlink(entry.path(), &link).unwrap();
            }
        }
    }
    bin.as_os_str().to_owned()
}

/// With `taskset` absent from `PATH`, `rusting determinism` still runs its one-CPU configuration
/// (the game itself applies `RUSTING_THREADS=1` to rayon and bevy's pools), and a system whose
/// result depends on rayon's thread count is blamed on that run at tick 1, naming `Player`. Fails
/// if the one-CPU configuration is skipped without `taskset` (every run then agrees) or if the game
/// does not apply `RUSTING_THREADS` to rayon's global pool (the same). Needs two CPUs; on one it
/// says so and passes.
#[cfg(unix)]
#[test]
fn the_one_cpu_configuration_needs_no_taskset() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        eprintln!("skipped: needs two CPUs (found {cpus})");
        return;
    }
    let (root, dir) = project_with(
        "rayon-threads",
        r#"use bevy::prelude::*;
use rusting_engine::prelude::*;

pub struct Extra;

impl Plugin for Extra {
    fn build(&self, app: &mut bevy::app::App) {
        app.add_systems(FixedUpdate, lean_by_threads.after(SimSet::Tweens));
    }
}

/// Moves the player by the number of threads rayon runs: a thread-count-dependent result.
fn lean_by_threads(mut bodies: Query<(&Name, &mut Transform)>) {
    let threads = rayon::current_num_threads();
    for (name, mut transform) in &mut bodies {
        if name.as_str() == "Player" {
            transform.translation.x += 1.0e-4 * threads as f32;
        }
    }
}
"#,
    );
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("[dependencies]\n", "[dependencies]\nrayon = \"1\"\n"),
    )
    .unwrap();
    let target = shared_target();
    let out = Command::new(env!("CARGO_BIN_EXE_rusting"))
        .args(["determinism", dir.to_str().unwrap(), "--ticks", "20"])
        .arg("--target-dir")
        .arg(&target)
        .env("PATH", path_without_taskset(&root.join("bin")))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "DETERMINISM_DIVERGED: tick 1 differs between debug and release on one CPU: entity \
             `Player` (scene id 10), component Transform"
        ),
        "{stderr}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}
