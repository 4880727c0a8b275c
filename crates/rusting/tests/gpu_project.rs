//! A game project with GPU bodies through `rusting determinism`, on a Vulkan device (feature
//! `gpu-tests`; lavapipe in CI).

mod support;

use support::{determinism_in_shared_target, project_with};

/// Debug builds kick the rolling GPU ball on fixed tick 100 (through `GpuPhysicsCommands`).
const DEBUG_ONLY_GPU_KICK: &str = r#"use bevy::prelude::*;
use rusting_engine::physics::PhysicsId;
use rusting_engine::physics::gpu::{GpuCommand, GpuPhysicsCommands};
use rusting_engine::prelude::*;

pub struct Extra;

impl Plugin for Extra {
    fn build(&self, app: &mut bevy::app::App) {
        app.add_systems(FixedUpdate, kick.in_set(SimSet::Tweens));
    }
}

fn kick(
    time: Res<FrameTime>,
    mut commands: ResMut<GpuPhysicsCommands>,
    balls: Query<(&Name, &PhysicsId)>,
) {
    if !cfg!(debug_assertions) || time.fixed_tick != 100 {
        return;
    }
    for (name, id) in &balls {
        if name.as_str() == "Rolling Ball" {
            let impulse = Vec3::new(0.0, 2.0, 0.0);
            commands.push(&time, GpuCommand::ApplyImpulse { slot: id.0, impulse });
        }
    }
}
"#;

/// GPU bodies for the starter scene (`fixtures/gpu_bodies.json`): a crate that tips over, a ball
/// rolling with a timer rule, and a capsule that falls below a height.
fn add_gpu_bodies(dir: &std::path::Path) {
    let path = dir.join("scenes/main.scene.json");
    let mut scene: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Shared with tools/gpu-cross-check.sh.
    let bodies: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/gpu_bodies.json")).unwrap();
    scene["entities"]
        .as_array_mut()
        .unwrap()
        .extend(bodies.as_array().unwrap().iter().cloned());
    std::fs::write(&path, serde_json::to_string_pretty(&scene).unwrap()).unwrap();
}

/// `rusting determinism` on a project with GPU bodies compares every configuration's GPU state
/// tick by tick, and a debug-only GPU command is reported at the tick it changes: every
/// configuration (debug twice, release, release on one CPU, release in uneven frames) agrees on
/// ticks 1 to 100, and tick 101 (GPU tick 100, the kick's) differs between debug and release,
/// blamed on the GPU state with the CPU state agreeing. Fails if the lockstep check leaves the GPU
/// hash out of what runs announce (the difference then surfaces at tick 122, when a timer event's
/// pose reaches the CPU, blamed on the resource `GpuEvents`). Then `rusting run --synctest 4` over
/// the same project rolls the GPU bodies back with the world every tick and agrees (it fails if
/// snapshots leave the GPU state behind).
#[test]
fn a_debug_only_gpu_command_is_reported_at_its_tick() {
    let (root, dir) = project_with("gpu", DEBUG_ONLY_GPU_KICK);
    add_gpu_bodies(&dir);
    let out = determinism_in_shared_target(&dir, 150, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "DETERMINISM_DIVERGED: tick 101 differs between debug and release: the GPU physics \
             state differs after GPU tick 100, and the CPU state agrees in every field"
        ),
        "{stderr}"
    );

    // The same project as a synctest: every tick rolled back 4 ticks and re-simulated, GPU
    // bodies with it.
    let target = support::shared_target();
    let synctest = support::rusting(&[
        "run",
        dir.to_str().unwrap(),
        "--headless",
        "--ticks",
        "120",
        "--synctest",
        "4",
        "--target-dir",
        target.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&synctest.stdout);
    let stderr = String::from_utf8_lossy(&synctest.stderr);
    assert_eq!(synctest.status.code(), Some(0), "{stdout}\n{stderr}");
    println!("{stdout}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// An extra plugin that adds nothing: the starter game with GPU bodies as it is.
const NO_EXTRA: &str = r#"use bevy::prelude::*;

pub struct Extra;

impl Plugin for Extra {
    fn build(&self, _app: &mut bevy::app::App) {}
}
"#;

/// The Vulkan implementations installed here, by name, with their loader manifests: Mesa's
/// lavapipe and Google's SwiftShader (from the `chromium` package).
fn vulkan_implementations() -> Vec<(&'static str, std::path::PathBuf)> {
    let mut found = Vec::new();
    let lavapipe = std::fs::read_dir("/usr/share/vulkan/icd.d")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("lvp_icd"))
        });
    if let Some(path) = lavapipe {
        found.push(("lavapipe", path));
    }
    let swiftshader = ["/usr/lib/chromium", "/usr/lib/chromium-browser"]
        .iter()
        .map(|dir| std::path::Path::new(dir).join("vk_swiftshader_icd.json"))
        .find(|path| path.exists());
    if let Some(path) = swiftshader {
        found.push(("SwiftShader", path));
    }
    found
}

/// Runs `rusting` with `args` on the Vulkan implementation whose loader manifest is `icd`.
fn rusting_on(icd: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rusting"))
        .args(args)
        .env("VK_ICD_FILENAMES", icd)
        .env("VK_DRIVER_FILES", icd)
        .env_remove("RUSTING_VULKAN_DEVICE")
        .output()
        .expect("the rusting binary runs")
}

/// The same `CrossPlatform` project with GPU bodies on two independent Vulkan implementations
/// (lavapipe: Mesa and LLVM; SwiftShader: Subzero) passes `rusting determinism` on each (the
/// game's startup check accepts CrossPlatform because the conformance probe passes there), and
/// the two runs' state-hash reports, CPU and GPU hashes of every tick, agree under
/// `rusting hashes diff`. Skips, saying so, only when fewer than two implementations are
/// installed (CI installs both). Fails when the implementations' GPU bits part (the diff then
/// names the first tick), or when either one's conformance probe refuses CrossPlatform (seen
/// failing so with the probe's pinned physics checksum one off: the debug run refuses to start,
/// "`physics.gpu` supports only Local ...: the conformance probe differs at the physics checksum").
#[test]
fn gpu_hashes_agree_across_vulkan_implementations() {
    let implementations = vulkan_implementations();
    if implementations.len() < 2 {
        println!(
            "skipping: this needs two Vulkan implementations, found {:?} (install \
             mesa-vulkan-drivers and chromium)",
            implementations
        );
        return;
    }
    let (root, dir) = project_with("gpu-implementations", NO_EXTRA);
    add_gpu_bodies(&dir);
    let manifest = dir.join("rusting.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(
            "\"determinism\": \"Local\"",
            "\"determinism\": \"CrossPlatform\"",
        ),
    )
    .unwrap();
    let target = support::shared_target();
    let (dir_text, target_text) = (dir.to_str().unwrap(), target.to_str().unwrap());
    let mut reports = Vec::new();
    for (name, icd) in &implementations {
        let check = rusting_on(
            icd,
            &[
                "determinism",
                dir_text,
                "--ticks",
                "150",
                "--repeat",
                "1",
                "--target-dir",
                target_text,
            ],
        );
        let stdout = String::from_utf8_lossy(&check.stdout);
        let stderr = String::from_utf8_lossy(&check.stderr);
        assert_eq!(check.status.code(), Some(0), "{name}:\n{stdout}\n{stderr}");
        println!("{name}: {stdout}");
        let report = root.join(format!("{name}.hashes.json"));
        let run = rusting_on(
            icd,
            &[
                "run",
                dir_text,
                "--headless",
                "--ticks",
                "150",
                "--hashes-out",
                report.to_str().unwrap(),
                "--target-dir",
                target_text,
            ],
        );
        assert_eq!(
            run.status.code(),
            Some(0),
            "{name}:\n{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let text = std::fs::read_to_string(&report).unwrap();
        assert!(
            text.contains("\"gpu_hash\":\"") || text.contains("\"gpu_hash\": \""),
            "{name}: the report has no GPU hashes"
        );
        reports.push(report);
    }
    let diff = support::rusting(&[
        "hashes",
        "diff",
        reports[0].to_str().unwrap(),
        reports[1].to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&diff.stdout);
    let stderr = String::from_utf8_lossy(&diff.stderr);
    assert_eq!(diff.status.code(), Some(0), "{stdout}\n{stderr}");
    println!("{stdout}");
    std::fs::remove_dir_all(&root).unwrap();
}
