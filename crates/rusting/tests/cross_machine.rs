//! Comparing machines: the one-CPU configuration without `taskset`, the CI workflows that run the
//! determinism check on several operating systems and CPUs, and their final job's comparison run
//! here on reports made by different configurations of this machine.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{project_with, shared_target, workflow, workflow_runs as runs};

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

/// The machines of the matrix, as `(name, runner)`.
const MACHINES: [(&str, &str); 4] = [
    ("linux-x86-64", "ubuntu-24.04"),
    ("linux-arm64", "ubuntu-24.04-arm"),
    ("macos-arm64", "macos-15"),
    ("windows-x86-64", "windows-2025"),
];

/// The engine's workflow.
fn engine_workflow() -> serde_json::Value {
    workflow(&support::engine_checkout().join(".github/workflows/determinism.yml"))
}

/// The command that compares the machines: the final job's last.
fn final_command(workflow: &serde_json::Value) -> String {
    runs(workflow, "compare")
        .pop()
        .expect("the final job runs a command")
}

/// The engine's CI workflows and the one `rusting new` writes parse as YAML, and the determinism
/// workflows run the matrix: a job on each of Linux x86-64 and ARM64, macOS ARM64 and Windows x86-64
/// in bash, each uploading its reports under its machine's name, then a final job, after them all
/// (and even when one failed), comparing every machine's reports with `rusting hashes diff`. Fails
/// if a workflow stops parsing (a bad indent, a tab) or a machine, the upload or the comparison is
/// dropped.
#[test]
fn the_workflows_parse_and_cover_every_machine() {
    let ci = workflow(&support::engine_checkout().join(".github/workflows/ci.yml"));
    assert_eq!(runs(&ci, "test"), [".ci/run"]);
    let root = std::env::temp_dir().join(format!("rusting-workflow-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let game = root.join("game");
    assert!(
        support::rusting(&["new", game.to_str().unwrap()])
            .status
            .success()
    );
    let generated = workflow(&game.join(".github/workflows/determinism.yml"));
    for (name, workflow) in [("engine", engine_workflow()), ("game", generated)] {
        let machine = &workflow["jobs"]["machine"];
        let matrix: Vec<(&str, &str)> = machine["strategy"]["matrix"]["include"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no matrix"))
            .iter()
            .map(|m| (m["name"].as_str().unwrap(), m["os"].as_str().unwrap()))
            .collect();
        assert_eq!(matrix, MACHINES, "{name}");
        assert_eq!(machine["strategy"]["fail-fast"], false, "{name}");
        assert_eq!(machine["runs-on"], "${{ matrix.os }}", "{name}");
        assert_eq!(machine["defaults"]["run"]["shell"], "bash", "{name}");
        let steps = machine["steps"].as_array().unwrap();
        let upload = steps
            .iter()
            .find(|s| s["uses"] == "actions/upload-artifact@v4")
            .unwrap_or_else(|| panic!("{name}: no upload"));
        assert_eq!(
            upload["with"]["name"], "reports-${{ matrix.name }}",
            "{name}"
        );
        assert_eq!(upload["with"]["path"], "reports/", "{name}");
        // Reports are uploaded even when the machine's own check failed.
        assert_eq!(upload["if"], "${{ !cancelled() }}", "{name}");
        let machine_runs = runs(&workflow, "machine");
        assert!(
            machine_runs
                .iter()
                .any(|r| r.starts_with("rusting determinism ")),
            "{name}: {machine_runs:?}"
        );
        assert!(
            machine_runs
                .iter()
                .any(|r| r.contains("rusting run ") && r.contains("--hashes-out reports/")),
            "{name}: {machine_runs:?}"
        );
        let compare = &workflow["jobs"]["compare"];
        assert_eq!(compare["needs"], "machine", "{name}");
        assert_eq!(compare["if"], "${{ !cancelled() }}", "{name}");
        let download = compare["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["uses"] == "actions/download-artifact@v4")
            .unwrap_or_else(|| panic!("{name}: no download"));
        assert_eq!(download["with"]["pattern"], "reports-*", "{name}");
        assert_eq!(download["with"]["path"], "reports", "{name}");
        assert_eq!(
            final_command(&workflow),
            format!(
                "rusting hashes diff {}",
                MACHINES
                    .map(|(m, _)| format!("reports/reports-{m}"))
                    .join(" ")
            ),
            "{name}"
        );
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// Runs the final job's command with bash in `dir` (holding `reports/`), with this build's
/// `rusting` first on `PATH`.
fn run_final_command(dir: &Path) -> std::process::Output {
    let rusting = Path::new(env!("CARGO_BIN_EXE_rusting"));
    Command::new("bash")
        .arg("-c")
        .arg(final_command(&engine_workflow()))
        .current_dir(dir)
        .env("PATH", support::path_with_first(rusting.parent().unwrap()))
        .output()
        .unwrap()
}

/// Builds `examples/physics_scenes.rs` in the shared target directory and returns it.
fn physics_scenes() -> PathBuf {
    let target = shared_target();
    let out = Command::new(env!("CARGO"))
        .args([
            "build",
            "--locked",
            "--quiet",
            "--example",
            "physics_scenes",
        ])
        .arg("--manifest-path")
        .arg(support::engine_checkout().join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target
        .join("debug/examples")
        .join(format!("physics_scenes{}", std::env::consts::EXE_SUFFIX))
}

/// Writes the physics scenes' reports (`ticks` ticks) into `out`, with `threads` worker threads.
fn scene_reports(example: &Path, out: &Path, ticks: u64, threads: Option<usize>) {
    std::fs::create_dir_all(out).unwrap();
    let mut command = Command::new(example);
    command.arg(out).arg(ticks.to_string());
    if let Some(threads) = threads {
        command.env("RUSTING_THREADS", threads.to_string());
    }
    let run = command.output().unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// The final job's command, run on reports this machine made in different configurations, laid
/// out as the job downloads them (`reports/reports-<machine>/`):
///
/// - the GPU-free physics scenes with rayon's default thread count and with one, two and three
///   threads agree ("all 4 machines agree");
/// - a starter whose debug build nudges the player in tick 30, run in release for three machines
///   and in debug for a fourth: the command fails with `HASHES_DIFFER`, naming the debug
///   machine's report, tick 31 (the nudge lands in the tick after tick 30), `Player`, `Transform`
///   and `translation.x`, and names a physics report one machine lacks;
/// - with the starters agreeing again, the missing report alone fails it with `REPORT_MISSING`,
///   and so does a machine that uploaded nothing (its directory absent).
///
/// Fails if the solver's bits depend on the thread count, if the comparison across directories
/// pairs reports by anything but their file name, if a differing or missing report or machine
/// passes, or if the blame stops reaching the field.
#[test]
fn the_final_job_compares_reports_made_by_different_configurations() {
    let root = std::env::temp_dir().join(format!("rusting-final-job-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let reports = root.join("reports");
    let machine = |name: &str| reports.join(format!("reports-{name}"));
    let example = physics_scenes();
    for (name, threads) in [
        ("linux-x86-64", None),
        ("linux-arm64", Some(1)),
        ("macos-arm64", Some(2)),
        ("windows-x86-64", Some(3)),
    ] {
        scene_reports(&example, &machine(name), 30, threads);
    }
    let agreed = run_final_command(&root);
    let stdout = String::from_utf8_lossy(&agreed.stdout);
    assert!(
        agreed.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&agreed.stderr)
    );
    for scene in ["body-heap", "crates", "pyramid-rain"] {
        assert!(
            stdout.contains(&format!(
                "{scene}.json: all 4 machines agree on all 30 ticks"
            )),
            "{stdout}"
        );
    }

    let (project_root, project) = project_with("machines", support::DEBUG_ONLY_NUDGE);
    let target = shared_target();
    for (profile, name) in [(None, "linux-x86-64"), (Some("--debug"), "linux-arm64")] {
        let file = machine(name).join("starter.json");
        let mut args = vec![
            "run",
            project.to_str().unwrap(),
            "--headless",
            "--ticks",
            "40",
            "--hashes-out",
            file.to_str().unwrap(),
            "--detail-ticks",
            "25-35",
            "--target-dir",
            target.to_str().unwrap(),
        ];
        args.extend(profile);
        let run = support::rusting(&args);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let release = machine("linux-x86-64").join("starter.json");
    for name in ["macos-arm64", "windows-x86-64"] {
        std::fs::copy(&release, machine(name).join("starter.json")).unwrap();
    }
    std::fs::remove_file(machine("macos-arm64").join("body-heap.json")).unwrap();
    let differed = run_final_command(&root);
    let stderr = String::from_utf8_lossy(&differed.stderr);
    assert_eq!(differed.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("HASHES_DIFFER: reference: reports/reports-linux-x86-64"),
        "{stderr}"
    );
    assert!(
        stderr.contains("body-heap.json: all 3 machines agree"),
        "{stderr}"
    );
    assert!(
        stderr.contains("starter.json: 1 of 3 machines differ"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "reports/reports-linux-arm64/starter.json: first divergent tick 31: entity `Player`"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("component Transform, field translation.x"),
        "{stderr}"
    );
    assert!(
        stderr.contains("reports/reports-macos-arm64/starter.json: agrees"),
        "{stderr}"
    );
    assert!(
        stderr.contains("missing: reports/reports-macos-arm64/body-heap.json"),
        "{stderr}"
    );

    std::fs::copy(&release, machine("linux-arm64").join("starter.json")).unwrap();
    let lacking = run_final_command(&root);
    let stderr = String::from_utf8_lossy(&lacking.stderr);
    assert_eq!(lacking.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("REPORT_MISSING: "), "{stderr}");
    assert!(
        stderr.contains("starter.json: all 4 machines agree"),
        "{stderr}"
    );
    std::fs::copy(
        machine("linux-x86-64").join("body-heap.json"),
        machine("macos-arm64").join("body-heap.json"),
    )
    .unwrap();
    std::fs::remove_dir_all(machine("windows-x86-64")).unwrap();
    let absent = run_final_command(&root);
    let stderr = String::from_utf8_lossy(&absent.stderr);
    assert_eq!(absent.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("REPORT_MISSING: "), "{stderr}");
    assert!(
        stderr
            .contains("missing: reports/reports-windows-x86-64 (that machine uploaded no reports)"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::remove_dir_all(&project_root).unwrap();
}
