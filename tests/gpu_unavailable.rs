//! An app holding GPU bodies refuses to start where no Vulkan device works, instead of leaving
//! them still. Runs in the default test suite: it hides every Vulkan driver from this process.

use bevy::prelude::*;
use rusting_engine::physics::{BodyClass, Collider, PhysicsBody, RigidBody};
use rusting_engine::runtime::RuntimeSettings;
use rusting_engine::{App, AppError};

/// Fails if an app with a GPU body starts without a device, or if an app without GPU bodies
/// needs one.
#[test]
fn gpu_bodies_without_a_device_refuse_to_start() {
    // SAFETY: the only test in this binary, and no other thread reads the environment yet.
    unsafe {
        std::env::set_var("VK_ICD_FILENAMES", "/nonexistent/rusting-no-driver.json");
        std::env::set_var("VK_DRIVER_FILES", "/nonexistent/rusting-no-driver.json");
    }
    let mut cpu_only = App::new(RuntimeSettings::default());
    cpu_only.world_mut().spawn((
        Transform::default(),
        RigidBody::dynamic(1.0),
        Collider::sphere(0.5),
    ));
    cpu_only.setup().expect("CPU bodies need no device");

    let mut app = App::new(RuntimeSettings::default());
    app.world_mut().spawn((
        Transform::default(),
        RigidBody::dynamic(1.0),
        Collider::sphere(0.5),
        PhysicsBody {
            class: BodyClass::Gpu,
        },
    ));
    match app.setup() {
        Err(AppError::Gpu(reason)) => assert!(
            reason.contains("GPU bodies") && reason.contains("cannot run here"),
            "{reason}"
        ),
        other => panic!("expected AppError::Gpu, got {other:?}"),
    }
}
