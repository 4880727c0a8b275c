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

/// GPU bodies for the starter scene: a crate that tips over, a ball rolling with a timer rule,
/// and a capsule that falls below a height.
fn add_gpu_bodies(dir: &std::path::Path) {
    let path = dir.join("scenes/main.scene.json");
    let mut scene: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let bodies = serde_json::json!([
        { "id": 100, "name": "Tipping Crate",
          "transform": { "translation": [3, 1.2, 2], "rotation": [0, 0, 0.2955, 0.9553] },
          "components": { "RigidBody": { "mass": 2 },
                          "Collider": { "shape": { "Box": { "half_extents": [0.5, 0.5, 0.5] } } },
                          "PhysicsBody": { "class": "Gpu" } } },
        { "id": 101, "name": "Rolling Ball", "transform": { "translation": [-3, 0.4, 2] },
          "components": { "RigidBody": { "mass": 1, "linear_velocity": [2.5, 0, 0] },
                          "Collider": { "shape": { "Sphere": { "radius": 0.4 } } },
                          "PhysicsBody": { "class": "Gpu" },
                          "GpuBehaviour": { "rule": { "EmitEvery": { "period": 0.5 } } } } },
        { "id": 102, "name": "Capsule",
          "transform": { "translation": [0, 1.5, 4], "rotation": [0.3, 0, 0, 0.954] },
          "components": { "RigidBody": { "mass": 1 },
                          "Collider": { "shape": { "Capsule": { "half_height": 0.4, "radius": 0.25 } } },
                          "PhysicsBody": { "class": "Gpu" },
                          "GpuBehaviour": { "rule": { "EmitBelow": { "height": 0.5 } } } } }
    ]);
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
