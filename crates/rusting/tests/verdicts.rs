//! What `rusting determinism` says about a divergence, as a user reads it: the system that first
//! differs, a race never called a build difference, a rare race caught by the default number of
//! runs, and never another project's binary.

mod support;

use std::path::Path;

use support::{DEBUG_ONLY_NUDGE, determinism_in_shared_target, project_with, rusting};

/// The lines a verdict blaming the build, the thread count or the pacing starts with.
const BUILD_VERDICTS: [&str; 3] = [
    "debug and release differ",
    "the one-CPU run differs",
    "the run in uneven frames differs",
];

/// On a project made by `rusting new`, a debug-only `1e-4` nudge to the player's position during
/// tick 30 is reported as `DETERMINISM_DIVERGED` at tick 31 (the first hash after it), against the
/// release build, naming `Player` and its `Transform`, the system that nudged it (the re-runs to
/// tick 31 hash the world after every fixed system), and the build as the cause (each build
/// reproduces its own result). Fails if the re-runs stop asking for per-system hashes or compare
/// them from the wrong end (the line then names no system or the one after `nudge`), or if the
/// self-check re-runs disagree with their own first runs (the verdict then says race).
#[test]
fn the_diverging_system_is_named() {
    let (root, dir) = project_with("nudged", DEBUG_ONLY_NUDGE);
    let out = determinism_in_shared_target(&dir, 60, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "DETERMINISM_DIVERGED: tick 31 differs between debug and release: entity `Player` \
             (scene id 10), component Transform"
        ),
        "{stderr}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines[1].starts_with("`nudged::extra::nudge` (FixedUpdate, after `")
            && lines[1].ends_with(") is the first system whose output differs"),
        "{stderr}"
    );
    assert!(
        lines[2].starts_with(
            "debug and release differ, and each reproduces its own result in 5 more runs; usual \
             causes: code generation"
        ),
        "{stderr}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// The extra plugin of a game whose first release process to start (claimed with a directory
/// under `slots`, which only one process can create) nudges the player during tick 5: in the
/// first round the two debug runs agree and one release configuration differs, which looks like
/// a build difference and is a race.
fn first_release_nudges(slots: &Path) -> String {
    format!(
        r#"use bevy::prelude::*;
use rusting_engine::prelude::*;

pub struct Extra;

impl Plugin for Extra {{
    fn build(&self, app: &mut bevy::app::App) {{
        app.add_systems(FixedUpdate, nudge.after(SimSet::Tweens));
    }}
}}

fn nudge(time: Res<FrameTime>, mut first: Local<Option<bool>>, mut bodies: Query<(&Name, &mut Transform)>) {{
    let first = *first.get_or_insert_with(|| {{
        !cfg!(debug_assertions) && std::fs::create_dir({slots:?}).is_ok()
    }});
    if first && time.fixed_tick == 4 {{
        for (name, mut transform) in &mut bodies {{
            if name.as_str() == "Player" {{
                transform.translation.x += 1.0e-4;
            }}
        }}
    }}
}}
"#
    )
}

/// A race that makes one release configuration differ from two agreeing debug runs (the first
/// release process to start nudges the player, see [`first_release_nudges`]) is called a race:
/// the re-runs of that configuration do not reproduce its result. The verdict names neither the
/// build, the thread count nor the pacing, and says the re-runs did not differ again. Fails if the
/// re-runs' lanes are not compared with their configuration's own first run (the verdict then
/// blames the release, one-CPU or uneven run, as it did before the re-runs).
#[test]
fn a_race_is_never_called_a_build_difference() {
    let slots = std::env::temp_dir().join(format!("rusting-first-release-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&slots);
    let (root, dir) = project_with("firstrelease", &first_release_nudges(&slots));
    let out = determinism_in_shared_target(&dir, 20, &["--repeat", "1"]);
    let _ = std::fs::remove_dir_all(&slots);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("DETERMINISM_DIVERGED: tick 5 differs between debug and release")
            && stderr.contains("entity `Player` (scene id 10), component Transform"),
        "{stderr}"
    );
    assert!(
        stderr.contains("re-run to tick 5, the two configurations did not differ again (a race)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "the same build gives different results from run to run (a re-run of release"
        ),
        "{stderr}"
    );
    for build in BUILD_VERDICTS {
        assert!(!stderr.contains(build), "{stderr}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// The extra plugin of a game with a race that shows in about one run in four, late: each
/// process draws from std's per-process hash seed at start-up, and one in four nudges the player
/// at tick 100.
const ONE_RUN_IN_FOUR: &str = r#"use std::hash::BuildHasher;

use bevy::prelude::*;
use rusting_engine::prelude::*;

pub struct Extra;

impl Plugin for Extra {
    fn build(&self, app: &mut bevy::app::App) {
        app.add_systems(FixedUpdate, nudge.after(SimSet::Tweens));
    }
}

fn nudge(time: Res<FrameTime>, mut drawn: Local<Option<bool>>, mut bodies: Query<(&Name, &mut Transform)>) {
    let unlucky = *drawn.get_or_insert_with(|| {
        std::collections::hash_map::RandomState::new().hash_one(7u64) % 4 == 0
    });
    if unlucky && time.fixed_tick == 100 {
        for (name, mut transform) in &mut bodies {
            if name.as_str() == "Player" {
                transform.translation.x += 1.0e-4;
            }
        }
    }
}
"#;

/// A race that shows in about one run in four, at tick 101 of 120, is caught by `rusting
/// determinism` with its default number of runs every time, and called a race. Eight checks by
/// default; `RUSTING_RACE_TRIALS=100` measures the rate over 100 (at least 99 must catch it).
/// Fails if the default goes back to one round of runs (about one check in four then passes, so
/// one of eight passes nine times in ten).
#[test]
fn a_rare_race_is_caught_by_default() {
    let trials: u32 = std::env::var("RUSTING_RACE_TRIALS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(8);
    let (root, dir) = project_with("rarerace", ONE_RUN_IN_FOUR);
    let mut caught = 0;
    for _ in 0..trials {
        let out = determinism_in_shared_target(&dir, 120, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(0) {
            eprintln!("missed: {}", String::from_utf8_lossy(&out.stdout));
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("tick 101 differs between "), "{stderr}");
        assert!(
            stderr.contains("the same build gives different results from run to run"),
            "{stderr}"
        );
        caught += 1;
    }
    eprintln!("caught {caught} of {trials}");
    let needed = if trials >= 100 {
        trials * 99 / 100
    } else {
        trials
    };
    assert!(caught >= needed, "caught {caught} of {trials}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// Two projects with the same package name, built one after the other into one target directory:
/// each `rusting determinism` runs its own binary, never the other's (cargo leaves the binary of
/// the project built last where both projects' binaries go, and a build that finds its own
/// artifacts fresh does not always put its own back). The second project differs from the first
/// by a debug-only nudge, so running the first one's binary for it would pass. Fails if the CLI
/// stops asking the binary which project it was built from.
#[test]
fn a_binary_of_another_project_is_never_run() {
    let (root_a, a) = project_with(
        "twin",
        "use bevy::prelude::*;\n\npub struct Extra;\n\nimpl Plugin for Extra {\n    fn build(&self, _app: &mut bevy::app::App) {}\n}\n",
    );
    let root_b = std::env::temp_dir().join(format!("rusting-cli-twin-b-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root_b);
    std::fs::create_dir_all(&root_b).unwrap();
    let b = root_b.join("twin");
    copy_project(&a, &b);
    std::fs::write(b.join("src/extra.rs"), DEBUG_ONLY_NUDGE).unwrap();
    for (dir, passes) in [(&a, true), (&b, false), (&a, true), (&b, false)] {
        let out = determinism_in_shared_target(dir, 40, &["--repeat", "1"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if passes {
            assert_eq!(out.status.code(), Some(0), "{}: {stderr}", dir.display());
        } else {
            assert_eq!(out.status.code(), Some(1), "{}: {stderr}", dir.display());
            assert!(
                stderr.contains("tick 31 differs between debug and release"),
                "{stderr}"
            );
        }
    }
    // `rusting run` checks its binary too: the release build the second project left is its.
    let target = support::shared_target();
    let run = rusting(&[
        "run",
        a.to_str().unwrap(),
        "--headless",
        "--ticks",
        "5",
        "--target-dir",
        target.to_str().unwrap(),
    ]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    std::fs::remove_dir_all(&root_a).unwrap();
    std::fs::remove_dir_all(&root_b).unwrap();
}

/// Copies project `from` to `to`, leaving out its build folder.
fn copy_project(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().unwrap().is_dir() {
            copy_project(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
