//! The joints example (`examples/joints.rs`) runs, and does what it says: the drawbridge rises to
//! its motor's target, the rope snaps under the falling ball, the welded bracket stays on its post
//! when the swinging ball strikes it, and two runs give the same hashes.

use bevy::prelude::*;
use rusting_engine::prelude::*;
use rusting_engine::state::StateHashes;

#[allow(dead_code)]
#[path = "../examples/joints.rs"]
mod example;

fn hashes(app: &rusting_engine::App) -> Vec<u64> {
    app.world()
        .resource::<StateHashes>()
        .cpu
        .iter()
        .map(|h| h.1)
        .collect()
}

/// Where the example's box of these half extents stands.
fn box_with(app: &mut rusting_engine::App, half_extents: Vec3) -> Transform {
    let shape = rusting_engine::physics::Shape::Box { half_extents };
    let mut bodies = app.world_mut().query::<(&Transform, &Collider)>();
    *bodies
        .iter(app.world())
        .find(|(_, c)| c.shape == shape)
        .expect("the example's box")
        .0
}

/// Fails if a motor whose target changes does not wake its sleeping body (the drawbridge, asleep
/// by tick 115, then stays down at -0.015 rad), or if the weld is left out (the swinging ball
/// then knocks the bracket off its post).
#[test]
fn the_joints_example_does_what_it_says() {
    let mut app = example::run(600);
    let log = app.world().resource::<example::Log>().clone();
    let snapped = log.snapped.expect("the rope never snapped");
    assert!(
        snapped > 10 && snapped < 120,
        "the rope snapped on tick {snapped}"
    );
    assert!(log.welded);
    let deck = box_with(&mut app, Vec3::new(2.0, 0.1, 1.0)).rotation;
    let forward = deck * Vec3::X;
    let angle = forward.y.atan2(forward.x);
    assert!(
        (angle - example::RAISED).abs() < 0.02,
        "the drawbridge stands at {angle} rad"
    );
    let bracket = box_with(&mut app, Vec3::new(0.5, 0.1, 0.1)).translation;
    assert!(
        (bracket - Vec3::new(6.0, 2.1, 3.0)).length() < 0.05,
        "the bracket moved to {bracket}"
    );
    let again = example::run(600);
    assert_eq!(hashes(&app), hashes(&again));
}
