//! The `rusting` binary as a user runs it.

mod support;

#[path = "../templates/starter/src/game.rs"]
mod starter_game;

use std::path::PathBuf;
use std::process::Command;

use rusting_engine::game::project::Project;
use rusting_engine::game::simulate_project_headless;
use rusting_engine::record::{RecordingAppExt, StateHashReport};

use support::{determinism_in_shared_target, project_with, rusting, shared_target, starter};

#[test]
fn help_and_version_succeed_and_no_arguments_is_a_usage_error() {
    let help = rusting(&["--help"]);
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("Usage: rusting"));
    assert!(text.contains("determinism") && text.contains("hashes"));

    let version = rusting(&["--version"]);
    assert!(version.status.success());
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("rusting {}", env!("CARGO_PKG_VERSION"))
    );

    let bare = rusting(&[]);
    assert_eq!(bare.status.code(), Some(2));
}

/// Writes a report of the starter run for `ticks`, with an extra entity when `visitor` is set.
fn report(ticks: u64, visitor: bool, path: &std::path::Path) {
    let project = Project::open(&starter()).unwrap();
    let (mut app, hashes) = simulate_project_headless(&project, ticks, None, |app| {
        app.add_plugins(starter_game::StarterGame);
        if visitor {
            app.world_mut().spawn((
                bevy::prelude::Transform::default(),
                rusting_engine::prelude::Counter { value: 3 },
                bevy::prelude::Name::new("Visitor"),
            ));
        }
    })
    .unwrap();
    StateHashReport::capture(app.world_mut(), &hashes)
        .write(path)
        .unwrap();
}

/// `hashes diff` exits 0 on equal reports, 1 with `HASHES_DIFFER` naming the tick and entity on
/// different ones, and 3 with `REPORT_INVALID` on a file that is not a report; `--json` gives the
/// same answer as JSON.
#[test]
fn hashes_diff_names_the_first_difference_with_exit_codes() {
    let dir = std::env::temp_dir().join(format!("rusting-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    report(30, false, &a);
    report(30, true, &b);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());

    let same = rusting(&["hashes", "diff", a, a]);
    assert_eq!(same.status.code(), Some(0));

    let differ = rusting(&["hashes", "diff", a, b]);
    assert_eq!(differ.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&differ.stderr);
    assert!(
        stderr.starts_with("HASHES_DIFFER: first divergent tick 1; entity `Visitor`"),
        "{stderr}"
    );

    let json = rusting(&["--json", "hashes", "diff", a, b]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["code"], "HASHES_DIFFER");
    assert_eq!(value["tick"], 1);
    assert_eq!(value["entity"], "Visitor");

    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let broken = rusting(&["hashes", "diff", a, bad.to_str().unwrap()]);
    assert_eq!(broken.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&broken.stderr).starts_with("REPORT_INVALID: "));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Nudges the player along x by 1e-3 on the tick that starts with `NudgeAt` ticks done.
#[derive(bevy::prelude::Resource)]
struct NudgeAt(u64);

fn nudge_player(
    at: bevy::prelude::Res<NudgeAt>,
    time: bevy::prelude::Res<rusting_engine::runtime::FrameTime>,
    mut bodies: bevy::prelude::Query<(&bevy::prelude::Name, &mut bevy::prelude::Transform)>,
) {
    if time.fixed_tick != at.0 {
        return;
    }
    for (name, mut transform) in &mut bodies {
        if name.as_str() == "Player" {
            transform.translation.x += 1.0e-3;
        }
    }
}

/// Writes a report of 120 starter ticks detailing ticks 35 to 45 and 85 to 95, its player
/// nudged on the tick after `nudge` ticks when given.
fn detailed_report(nudge: Option<u64>, path: &std::path::Path) {
    use bevy::prelude::IntoScheduleConfigs;
    let project = Project::open(&starter()).unwrap();
    let details = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = details.clone();
    let (mut app, hashes) = simulate_project_headless(&project, 120, None, |app| {
        app.add_plugins(starter_game::StarterGame);
        if let Some(at) = nudge {
            app.world_mut().insert_resource(NudgeAt(at));
            app.add_systems(
                bevy::prelude::FixedUpdate,
                nudge_player.after(rusting_engine::runtime::SimSet::Tweens),
            );
        }
        let kept = kept.clone();
        app.add_tick_hook(move |world: &mut bevy::prelude::World, tick| {
            if (35..=45).contains(&tick) || (85..=95).contains(&tick) {
                kept.lock()
                    .unwrap()
                    .push(rusting_engine::record::StateDetail::capture(world, tick));
            }
        });
    })
    .unwrap();
    let mut report = StateHashReport::capture(app.world_mut(), &hashes);
    report.details = details.lock().unwrap().clone();
    report.write(path).unwrap();
}

/// Five reports as five machines would upload them: three alike, one whose player was nudged
/// during tick 40 and one during tick 90. `hashes diff` over all five names both, each with its
/// first divergent tick and the entity, component and field with both values, and exits 1 with
/// `HASHES_DIFFER` (`--json` lists every report); the three alike agree with exit code 0, and
/// `--reference` picks the report the others are compared with. Fails if only the first
/// differing report is named, or if reports are compared with each other instead of with the
/// reference.
#[test]
fn hashes_diff_compares_many_reports() {
    let dir = std::env::temp_dir().join(format!("rusting-cli-many-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths: Vec<PathBuf> = ["linux-x86", "linux-arm", "macos-arm", "windows", "one-cpu"]
        .iter()
        .map(|name| dir.join(format!("{name}.json")))
        .collect();
    for (path, nudge) in paths.iter().zip([None, Some(39), None, Some(89), None]) {
        detailed_report(nudge, path);
    }
    let names: Vec<&str> = paths.iter().map(|p| p.to_str().unwrap()).collect();
    let mut args = vec!["hashes", "diff"];
    args.extend(&names);
    let out = rusting(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("HASHES_DIFFER: 2 of 4 reports differ from "),
        "{stderr}"
    );
    for (name, tick) in [("linux-arm", 40), ("windows", 90)] {
        let line = stderr
            .lines()
            .find(|line| line.contains(&format!("{name}.json: ")))
            .unwrap_or_else(|| panic!("{name} is not named: {stderr}"));
        assert!(
            line.contains(&format!("first divergent tick {tick}"))
                && line.contains(
                    "entity `Player` (scene id 10), component Transform, field translation.x"
                ),
            "{line}"
        );
    }
    assert!(
        stderr.contains("macos-arm.json: agrees on all 120 ticks"),
        "{stderr}"
    );

    let mut json_args = vec!["--json", "hashes", "diff"];
    json_args.extend(&names);
    let json = rusting(&json_args);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["result"], "different");
    let reports = value["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 4);
    assert_eq!(reports[0]["tick"], 40);
    assert_eq!(reports[0]["at_tick"]["field"], "translation.x");
    assert_eq!(reports[2]["tick"], 90);

    let alike = rusting(&["hashes", "diff", names[0], names[2], names[4]]);
    assert_eq!(alike.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&alike.stdout).contains("all 2 reports agree with"));

    let against = rusting(&[
        "hashes",
        "diff",
        names[0],
        names[1],
        "--reference",
        names[1],
    ]);
    let stderr = String::from_utf8_lossy(&against.stderr);
    assert_eq!(against.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("1 of 1 reports differ from"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `determinism` on a directory that is not a project fails at once with `PROJECT_INVALID` and
/// exit code 3, before building anything.
#[test]
fn determinism_refuses_a_missing_project() {
    let out = rusting(&["determinism", "/no/such/project", "--ticks", "10"]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("PROJECT_INVALID: /no/such/project/rusting.json: "),
        "{stderr}"
    );
}

/// A copy of the starter's project file and scenes in a fresh temporary directory.
fn scratch_project(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rusting-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scenes")).unwrap();
    std::fs::copy(starter().join("rusting.json"), dir.join("rusting.json")).unwrap();
    std::fs::copy(
        starter().join("scenes/main.scene.json"),
        dir.join("scenes/main.scene.json"),
    )
    .unwrap();
    dir
}

/// `cook` writes the same bytes every time; a broken scene fails with `SCENE_INVALID`, exit code
/// 3, naming the file and the JSON pointer.
#[test]
fn cook_is_repeatable_and_names_broken_scenes() {
    let dir = scratch_project("cook");
    let project = dir.to_str().unwrap();
    assert_eq!(rusting(&["cook", project]).status.code(), Some(0));
    let first = std::fs::read(dir.join("cooked/main.json")).unwrap();
    assert_eq!(rusting(&["cook", project]).status.code(), Some(0));
    assert_eq!(std::fs::read(dir.join("cooked/main.json")).unwrap(), first);

    std::fs::write(
        dir.join("scenes/broken.scene.json"),
        r#"{"format_version": 1, "entities": [{"id": 1, "components": {"RigidBody": {"mass": -2}}}]}"#,
    )
    .unwrap();
    let broken = rusting(&["cook", project]);
    assert_eq!(broken.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert!(stderr.starts_with("SCENE_INVALID: "), "{stderr}");
    assert!(
        stderr.contains("broken.scene.json: /entities/0/components/RigidBody/mass"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `replay info` reads both forms and reports frames and ticks; a damaged file is
/// `REPLAY_INVALID` with exit code 3.
#[test]
fn replay_info_reads_both_forms() {
    let project = Project::open(&starter()).unwrap();
    let mut app = rusting_engine::game::build_app(&project).unwrap();
    app.add_plugins(starter_game::StarterGame);
    app.setup().unwrap();
    app.start_recording();
    rusting_engine::game::run_headless(&mut app, 45, None);
    let replay = app.stop_recording().unwrap();
    let dir = std::env::temp_dir().join(format!("rusting-cli-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["session.json", "session.rply"] {
        let path = dir.join(name);
        replay.write(&path).unwrap();
        let out = rusting(&["--json", "replay", "info", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{name}");
        let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(value["ticks"], 45, "{name}");
        assert_eq!(value["seed"], 7, "{name}");
    }
    let damaged = dir.join("damaged.rply");
    let bytes = std::fs::read(dir.join("session.rply")).unwrap();
    std::fs::write(&damaged, &bytes[..bytes.len() - 5]).unwrap();
    let out = rusting(&["replay", "info", damaged.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("REPLAY_INVALID: "));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `new` writes a project (manifest with the engine dependency, lock file, project file, scene,
/// script, sources, CI workflow) and refuses a directory that holds anything.
#[test]
fn new_writes_a_project_and_refuses_a_non_empty_directory() {
    let root = std::env::temp_dir().join(format!("rusting-cli-new-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("space-game");
    let out = rusting(&["new", dir.to_str().unwrap(), "--engine-version", "0.1.0"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        "rust-toolchain.toml",
        "rusting.json",
        "scenes/main.scene.json",
        "input/walkthrough.json",
        "src/main.rs",
        "src/game.rs",
        ".github/workflows/determinism.yml",
    ] {
        assert!(dir.join(file).is_file(), "{file} is missing");
    }
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"space_game\""), "{manifest}");
    assert!(
        manifest.contains(
            "rusting_engine = { package = \"rusting_game_engine\", version = \"=0.1.0\" }"
        ),
        "{manifest}"
    );
    let project = Project::open(&dir).unwrap();
    assert_eq!(project.manifest.name, "space_game");
    let workflow = std::fs::read_to_string(dir.join(".github/workflows/determinism.yml")).unwrap();
    assert!(workflow.contains("rusting determinism"));

    let again = rusting(&["new", dir.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&again.stderr).starts_with("DIRECTORY_NOT_EMPTY: "));
    std::fs::remove_dir_all(&root).unwrap();
}

/// A system that moves the player by the number of CPUs the process may use is blamed on the run
/// pinned to one CPU, at tick 1, naming `Player`. Fails if `determinism` drops the one-CPU
/// configuration or compares it against itself. Needs two CPUs and `taskset`; elsewhere it says so
/// and passes.
#[test]
fn determinism_blames_a_thread_count_dependent_system_on_the_one_cpu_run() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let taskset = Command::new("taskset").arg("--version").output();
    if cpus < 2 || !taskset.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: needs two CPUs and taskset (found {cpus} CPUs)");
        return;
    }
    let (root, dir) = project_with(
        "threads",
        r#"use bevy::prelude::*;
use rusting_engine::prelude::*;

pub struct Extra;

impl Plugin for Extra {
    fn build(&self, app: &mut bevy::app::App) {
        app.add_systems(FixedUpdate, lean_by_cpus.after(SimSet::Tweens));
    }
}

fn lean_by_cpus(mut bodies: Query<(&Name, &mut Transform)>) {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (name, mut transform) in &mut bodies {
        if name.as_str() == "Player" {
            transform.translation.x += 1.0e-4 * cpus as f32;
        }
    }
}
"#,
    );
    let out = determinism_in_shared_target(&dir, 20, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("DETERMINISM_DIVERGED: tick 1 differs between debug and release on one CPU: entity `Player` (scene id 10), component Transform"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// On a project made by `rusting new`, a game component registered with one call whose value
/// comes from a heap address (different in every process) fails `rusting determinism`, naming the
/// component, with the verdict that two runs of the same build differ (a race, not a build
/// difference; the debug-only nudge below gets the debug/release verdict). Fails if
/// game-registered components stop reaching the hash or the per-entity report (the
/// configurations then agree, or the blame says only resources differ), or if the debug build is
/// not run twice (the verdict then blames debug and release).
#[test]
fn a_race_is_told_apart_from_a_build_difference() {
    let (root, dir) = project_with(
        "heap",
        r#"use bevy::prelude::*;
use rusting_engine::prelude::*;

pub struct Extra;

/// A value taken from where the allocator put a box: differs from process to process.
#[derive(Component, Clone, SimState)]
pub struct Wobble {
    address: u64,
}

impl Plugin for Extra {
    fn build(&self, app: &mut bevy::app::App) {
        app.register_sim_component::<Wobble>()
            .add_systems(Startup, |mut commands: Commands| {
                commands.spawn((Name::new("Wobbler"), Transform::default(), Wobble { address: 0 }));
            })
            .add_systems(FixedUpdate, wobble.after(SimSet::Tweens));
    }
}

fn wobble(time: Res<FrameTime>, mut wobbles: Query<&mut Wobble>) {
    if time.fixed_tick == 4 {
        let boxed = Box::new(7u64);
        for mut wobble in &mut wobbles {
            wobble.address = &*boxed as *const u64 as u64;
        }
    }
}
"#,
    );
    let out = determinism_in_shared_target(&dir, 20, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "DETERMINISM_DIVERGED: tick 5 differs between two runs of the same debug build: \
             entity `Wobbler` (sim id 15), component Wobble"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "the same build gives different results from run to run (two runs of the debug build \
             differ); usual causes: process-dependent"
        ),
        "{stderr}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// A game whose `HashMap` iteration order (seeded anew in every process) moves the player: 20
/// checks name the player and its `Transform` field every time they diverge, and never say that
/// only resources differ. Fails if blame comes from a rerun (a rerun of a race often agrees, and
/// the blame then falls on resources or nothing) instead of from the runs that diverged.
#[test]
fn blame_comes_from_the_runs_that_diverged() {
    let (root, dir) = project_with(
        "hashorder",
        r#"use std::collections::HashMap;

use bevy::prelude::*;
use rusting_engine::prelude::*;

pub struct Extra;

impl Plugin for Extra {
    fn build(&self, app: &mut bevy::app::App) {
        app.add_systems(FixedUpdate, drift_by_hash_order.after(SimSet::Tweens));
    }
}

fn drift_by_hash_order(time: Res<FrameTime>, mut bodies: Query<(&Name, &mut Transform)>) {
    if time.fixed_tick != 10 {
        return;
    }
    let weights: HashMap<u32, f32> = (0..16).map(|k| (k, 1.0 + k as f32 * 0.37)).collect();
    let mut mixed = 0.0f32;
    for weight in weights.values() {
        mixed = mixed * 0.5 + weight;
    }
    for (name, mut transform) in &mut bodies {
        if name.as_str() == "Player" {
            transform.translation.x += mixed * 1.0e-3;
        }
    }
}
"#,
    );
    let mut diverged = 0;
    for _ in 0..20 {
        let out = determinism_in_shared_target(&dir, 20, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(0) {
            continue;
        }
        diverged += 1;
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with("DETERMINISM_DIVERGED: tick 11 differs between ")
                && stderr.contains(
                    "entity `Player` (scene id 10), component Transform, field translation.x: "
                ),
            "{stderr}"
        );
        assert!(!stderr.contains("only resources differ"), "{stderr}");
    }
    assert!(
        diverged >= 10,
        "hash order should differ in most checks ({diverged} of 20)"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// A configuration whose game panics shows the panic's own message, the system, where it happened
/// and the tick, read from the result file the game wrote (`RUSTING_RESULT_OUT`), not bevy's
/// wrapper line from standard error. Fails if the CLI goes back to the last line of standard error
/// (it then shows "Encountered a panic in system ..." or the panic hook's "note:" line), or if the
/// panic hook stops reading the system from the stack.
#[test]
fn a_panicking_configuration_shows_its_panic_and_system() {
    let (root, dir) = project_with(
        "panics",
        r#"use bevy::prelude::*;
use rusting_engine::prelude::*;

pub struct Extra;

impl Plugin for Extra {
    fn build(&self, app: &mut bevy::app::App) {
        app.add_systems(FixedUpdate, topple.after(SimSet::Tweens));
    }
}

fn topple(time: Res<FrameTime>) {
    if time.fixed_tick == 7 {
        panic!("the crate stack fell over");
    }
}
"#,
    );
    let out = determinism_in_shared_target(&dir, 20, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.starts_with(
            "RUN_FAILED: the debug run: the game panicked during tick 8 in system \
             `panics::extra::topple` at src/extra.rs:"
        ) && stderr.contains(": the crate stack fell over"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// `determinism --replay` refuses a replay recorded with another scene (`REPLAY_INVALID`, before
/// anything runs) and fails a replay whose recorded hashes disagree with what every configuration
/// computes (`REPLAY_DIVERGED` at that tick), even though the configurations agree with each
/// other. Fails if `--replay` only feeds the replay's input and never looks at its scene or hashes.
#[test]
fn determinism_refuses_a_replay_of_another_scene() {
    let target = shared_target();
    let target = target.to_str().unwrap();
    let starter = starter();
    let starter = starter.to_str().unwrap();
    let root = std::env::temp_dir().join(format!("rusting-cli-scene-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let session = root.join("session.replay.json");
    let recorded = rusting(&[
        "run",
        starter,
        "--headless",
        "--ticks",
        "30",
        "--record",
        session.to_str().unwrap(),
        "--target-dir",
        target,
    ]);
    assert_eq!(
        recorded.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    let replay = rusting_engine::record::Replay::load(&session).unwrap();

    let mut other_scene = replay.clone();
    other_scene.scene.as_mut().unwrap().cooked_hash = "0123456789abcdef".into();
    let other = root.join("other-scene.replay.json");
    other_scene.write(&other).unwrap();
    let refused = rusting(&[
        "determinism",
        starter,
        "--replay",
        other.to_str().unwrap(),
        "--target-dir",
        target,
    ]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.starts_with("REPLAY_INVALID: ") && stderr.contains("0123456789abcdef"),
        "{stderr}"
    );

    let mut tampered = replay;
    tampered.hashes[11].1 = "00000000deadbeef".into();
    let wrong = root.join("wrong-hashes.replay.json");
    tampered.write(&wrong).unwrap();
    let diverged = rusting(&[
        "determinism",
        starter,
        "--replay",
        wrong.to_str().unwrap(),
        "--target-dir",
        target,
    ]);
    let stderr = String::from_utf8_lossy(&diverged.stderr);
    assert_eq!(diverged.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("REPLAY_DIVERGED: tick 12: every configuration computed "),
        "{stderr}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// `run` records a headless session of the starter, `replay play` plays it back, a tampered copy
/// is reported as `REPLAY_DIVERGED` at its tick, and `determinism --replay` feeds the session to
/// every configuration. `replay play --ticks 30` plays the tampered copy's first 30 ticks and
/// passes; `--until 50` still finds tick 41; `run --replay --until 30` and `determinism --replay
/// --until 30` pass on it too, and `determinism --until 50` names tick 41 with the recording's
/// 32-bit hash (the compact form's). A headless synctest without `--ticks` is refused with
/// `TICKS_REQUIRED` (before anything builds). Fails if `run` drops a `RUSTING_*` variable on the
/// way to the game, or if playback ignores the bound (seen: `REPLAY_DIVERGED` at tick 41 with
/// `--ticks 30`).
#[test]
fn run_records_and_replay_plays_back_and_determinism_takes_a_replay() {
    let target = shared_target();
    let target = target.to_str().unwrap();
    let starter = starter();
    let starter = starter.to_str().unwrap();
    let no_ticks = rusting(&["run", starter, "--headless", "--synctest", "4"]);
    assert_eq!(no_ticks.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&no_ticks.stderr).starts_with("TICKS_REQUIRED: "));

    let root = std::env::temp_dir().join(format!("rusting-cli-run-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let session = root.join("session.rply");
    let script = format!("{starter}/input/walkthrough.json");
    let recorded = rusting(&[
        "run",
        starter,
        "--headless",
        "--ticks",
        "90",
        "--script",
        &script,
        "--record",
        session.to_str().unwrap(),
        "--target-dir",
        target,
    ]);
    assert_eq!(
        recorded.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    assert!(String::from_utf8_lossy(&recorded.stdout).contains("ran 90 ticks"));

    let played = rusting(&[
        "replay",
        "play",
        starter,
        session.to_str().unwrap(),
        "--target-dir",
        target,
    ]);
    assert_eq!(
        played.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&played.stderr)
    );

    let mut replay = rusting_engine::record::Replay::load(&session).unwrap();
    // A compact recording keeps the low 32 bits of each hash: 8 hex digits.
    replay.hashes[40].1 = "deadbeef".into();
    let tampered = root.join("tampered.replay.json");
    replay.write(&tampered).unwrap();
    let diverged = rusting(&[
        "replay",
        "play",
        starter,
        tampered.to_str().unwrap(),
        "--target-dir",
        target,
    ]);
    let stderr = String::from_utf8_lossy(&diverged.stderr);
    assert_eq!(diverged.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("REPLAY_DIVERGED: ") && stderr.contains("tick 41"),
        "{stderr}"
    );
    // A bound before the tampered tick passes; one past it still finds it.
    let bounded = |bound: &[&str]| {
        let mut args = vec!["replay", "play", starter, tampered.to_str().unwrap()];
        args.extend_from_slice(bound);
        args.extend_from_slice(&["--target-dir", target]);
        rusting(&args)
    };
    let first = bounded(&["--ticks", "30"]);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(
        stdout.contains("replay matched its first 30 recorded ticks (to tick 30; it holds 90)"),
        "{stdout}"
    );
    let past = bounded(&["--until", "50"]);
    let stderr = String::from_utf8_lossy(&past.stderr);
    assert_eq!(past.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("tick 41"), "{stderr}");
    // `run --replay` and `determinism --replay` take the same bound; the recording's hashes are
    // its low 32 bits, and `determinism` compares its runs' whole hashes with them as such.
    let run = rusting(&[
        "run",
        starter,
        "--replay",
        tampered.to_str().unwrap(),
        "--until",
        "30",
        "--target-dir",
        target,
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("its first 30 recorded ticks"), "{stdout}");
    let determinism = |until: &str| {
        rusting(&[
            "determinism",
            starter,
            "--replay",
            tampered.to_str().unwrap(),
            "--until",
            until,
            "--repeat",
            "1",
            "--target-dir",
            target,
        ])
    };
    let before = determinism("30");
    let stdout = String::from_utf8_lossy(&before.stdout);
    assert_eq!(
        before.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&before.stderr)
    );
    assert!(stdout.contains("agree on all 30 ticks"), "{stdout}");
    let past = determinism("50");
    let stderr = String::from_utf8_lossy(&past.stderr);
    assert_eq!(past.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("REPLAY_DIVERGED: tick 41: ") && stderr.contains("recorded deadbeef"),
        "{stderr}"
    );

    let checked = rusting(&[
        "determinism",
        starter,
        "--replay",
        session.to_str().unwrap(),
        "--target-dir",
        target,
    ]);
    let stdout = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(stdout.contains("agree on all 90 ticks"), "{stdout}");
    std::fs::remove_dir_all(&root).unwrap();
}
