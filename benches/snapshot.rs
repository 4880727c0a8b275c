//! Snapshots and seeking, measured against the targets: snapshot plus restore of 10,000 entities
//! within 10 ms, and any tick of a 10-minute replay of the starter game within 0.25 s. Run with
//! `cargo bench --bench snapshot` (or `-- spawn`, say, for one case: `same`, `spawn`, `in-place`,
//! `seek`).

use std::time::{Duration, Instant};

use bevy::input::keyboard::KeyCode;
use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::determinism::ReplaySeeker;
use rusting_engine::physics::{Collider, RigidBody};
use rusting_engine::runtime::{RuntimeInput, RuntimeSettings};

#[path = "../tests/support/starter.rs"]
mod support;

use rusting_engine::record::RecordingAppExt;
use support::starter_app as starter;

const BODIES: usize = 10_000;

/// An app with 10,000 resting spheres spawned at build time (so an app built the same way holds
/// them too) or, with `late`, spawned after setup (so a restore has to spawn them all).
fn bodies(late: bool) -> App {
    let mut app = App::new(RuntimeSettings::default());
    let spawn = |world: &mut World| {
        for i in 0..BODIES {
            let (x, z) = ((i % 100) as f32, (i / 100) as f32);
            world.spawn((
                Transform::from_xyz(x * 2.0, 0.5, z * 2.0),
                RigidBody::dynamic(1.0),
                Collider::sphere(0.5),
            ));
        }
    };
    if !late {
        spawn(app.world_mut());
    }
    app.setup().unwrap();
    if late {
        spawn(app.world_mut());
    }
    let step = app.fixed_step();
    app.update(step);
    app
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn snapshot_and_restore(late: bool) {
    let mut source = bodies(late);
    let (mut taken, mut restored) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        let start = Instant::now();
        let snapshot = source.snapshot().unwrap();
        taken.push(start.elapsed());
        let mut target = bodies(false);
        if late {
            target = App::new(RuntimeSettings::default());
            target.setup().unwrap();
        }
        let start = Instant::now();
        target.restore(&snapshot).unwrap();
        restored.push(start.elapsed());
    }
    let (taken, restored) = (median(taken), median(restored));
    println!(
        "{BODIES} bodies{}: snapshot {:.2} ms, restore {:.2} ms, together {:.2} ms (target 10 ms)",
        if late {
            " (restore spawns them all)"
        } else {
            " (restore into an app built the same way)"
        },
        taken.as_secs_f64() * 1e3,
        restored.as_secs_f64() * 1e3,
        (taken + restored).as_secs_f64() * 1e3
    );
}

/// Snapshot, then despawn 1,000 of the bodies, spawn 1,000 others and run a tick, then restore in
/// place: the rollback case (the restore despawns the newcomers and spawns the 1,000 back).
fn restore_in_place() {
    let mut app = bodies(false);
    let (mut taken, mut restored) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        let start = Instant::now();
        let snapshot = app.snapshot().unwrap();
        taken.push(start.elapsed());
        let world = app.world_mut();
        let gone: Vec<Entity> = world
            .query_filtered::<Entity, With<RigidBody>>()
            .iter(world)
            .step_by(10)
            .collect();
        for entity in gone {
            world.despawn(entity);
        }
        for i in 0..BODIES / 10 {
            world.spawn((
                Transform::from_xyz(i as f32 * 2.0, 5.0, -10.0),
                RigidBody::dynamic(1.0),
                Collider::sphere(0.5),
            ));
        }
        let step = app.fixed_step();
        app.update(step);
        let start = Instant::now();
        app.restore(&snapshot).unwrap();
        restored.push(start.elapsed());
    }
    let (taken, restored) = (median(taken), median(restored));
    println!(
        "{BODIES} bodies (restore in place after 1,000 despawns and 1,000 spawns): snapshot {:.2} \
         ms, restore {:.2} ms, together {:.2} ms (target 10 ms)",
        taken.as_secs_f64() * 1e3,
        restored.as_secs_f64() * 1e3,
        (taken + restored).as_secs_f64() * 1e3
    );
}

fn seeking() {
    let ticks = 36_000u64; // ten minutes at 60 Hz
    let mut app = starter();
    let step = app.fixed_step();
    app.start_recording();
    let mut frame = 0usize;
    while app.ticks() < ticks {
        let mut input = RuntimeInput::default();
        input.set_axis(
            "move_y",
            if (frame / 300).is_multiple_of(2) {
                1.0
            } else {
                -1.0
            },
        );
        input.set_axis(
            "move_x",
            if (frame / 170).is_multiple_of(2) {
                0.6
            } else {
                -0.6
            },
        );
        if frame % 90 == 30 {
            input.press(KeyCode::Space);
        }
        app.set_input(input);
        app.update(step * (1 + frame.is_multiple_of(4) as u32));
        frame += 1;
    }
    let replay = app.stop_recording().unwrap();
    let interval = 600;
    let mut seeker = ReplaySeeker::new(replay, interval, starter).unwrap();
    let start = Instant::now();
    let end = seeker.scan().unwrap();
    let scan = start.elapsed();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut samples = Vec::new();
    for _ in 0..40 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let target = state % end;
        let start = Instant::now();
        seeker.seek(target).unwrap();
        samples.push(start.elapsed());
    }
    let worst = *samples.iter().max().unwrap();
    println!(
        "starter, {end} ticks (10 min), a snapshot every {interval} ticks ({} taken): first scan \
         {:.2} s; 40 random seeks: median {:.1} ms, worst {:.1} ms (target 250 ms)",
        seeker.snapshot_ticks().len(),
        scan.as_secs_f64(),
        median(samples).as_secs_f64() * 1e3,
        worst.as_secs_f64() * 1e3
    );
}

/// All cases, or only those named on the command line (`same`, `spawn`, `in-place`, `seek`).
fn main() {
    let asked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wants = |case: &str| asked.is_empty() || asked.iter().any(|a| a == case);
    if wants("same") {
        snapshot_and_restore(false);
    }
    if wants("spawn") {
        snapshot_and_restore(true);
    }
    if wants("in-place") {
        restore_in_place();
    }
    if wants("seek") {
        seeking();
    }
}
