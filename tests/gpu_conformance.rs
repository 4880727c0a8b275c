//! The conformance probe decides whether a device keeps `CrossPlatform` bits, and the Khronos
//! validation layer finds nothing to say about the engine's Vulkan use. Feature `gpu-tests`; in CI
//! on lavapipe and on SwiftShader, with the validation layer.
//!
//! Run with `--test-threads=1` (one device per test at a time, see `docs/gpu.md`).

use rusting_engine::physics::gpu::compile::compile_source;
use rusting_engine::physics::gpu::conformance::{
    ConformanceDifference, PROBE_CONFIG, probe, probe_with,
};
use rusting_engine::physics::gpu::probe_cases::Routine;
use rusting_engine::physics::gpu::shaders::{SIM_MATH_PROBE, include};
use rusting_engine::physics::gpu::{
    GPU_PHYSICS_PART, GpuContext, GpuError, GpuPhysicsConfig, GpuPhysicsWorld,
};
use rusting_engine::runtime::mode::{DeterminismMode, DeterminismSupport};

fn context(validation: bool) -> GpuContext {
    let wanted = std::env::var("RUSTING_VULKAN_DEVICE").ok();
    GpuContext::with_settings(wanted.as_deref(), validation)
        .unwrap_or_else(|err| panic!("the GPU tests need a Vulkan device: {err}"))
}

/// The probe, not the declared float controls, decides: the device in CI (lavapipe, or
/// SwiftShader) declares no `DenormPreserve` (SwiftShader no round-to-nearest-even either), yet it
/// computes every compared `sim_math` case and every probe tick as the CPU reference does, so it
/// supports `CrossPlatform`, and the startup check accepts a `CrossPlatform` project on it. Fails
/// if the mode comes from the declarations again (lavapipe is then `Local` only), if the probe
/// compares too little, or if the device leaves the pinned checksums (seen failing with the pinned
/// physics checksum one off: "differs at the physics checksum").
#[test]
fn the_conformance_probe_decides_cross_platform_support() {
    let context = context(false);
    let info = context.info();
    let report = probe(&context).unwrap_or_else(|err| panic!("the probe could not run: {err}"));
    println!("{}", report.summary());
    println!(
        "declared float controls: {:?}",
        info.declared_float_controls()
    );
    assert!(report.cases > 3000, "{} cases", report.cases);
    assert_eq!(report.ticks, 40);
    assert_eq!(report.difference, None, "{}", report.summary());
    assert_eq!(report.supported_mode(), DeterminismMode::CrossPlatform);
    let mut support = DeterminismSupport::default();
    report.declare_support(&mut support);
    assert_eq!(
        support.supported(GPU_PHYSICS_PART),
        Some(DeterminismMode::CrossPlatform)
    );
    support
        .check(DeterminismMode::CrossPlatform)
        .expect("a matching device runs CrossPlatform");
}

/// A device whose `sim_dot(vec3)` sums in another order (`a.x*b.x + (a.y*b.y + a.z*b.z)`, as a
/// driver's `dot` may) is refused `CrossPlatform`, and the refusal names the routine, the case
/// and both results; the startup check then says it. The planted shader is the committed probe
/// with that one routine changed, compiled here. Fails if the probe stops comparing `sim_dot`,
/// or compares checksums without naming where they part (seen failing so: "differs at the
/// sim_math checksum").
#[test]
fn a_device_that_differs_is_refused_with_the_routine_named() {
    let context = context(false);
    let sim_math = include("sim_math.glsl")
        .expect("sim_math.glsl is an engine include")
        .source;
    let planted = sim_math.replace(
        "precise float r = (a.x * b.x + a.y * b.y) + a.z * b.z;",
        "precise float r = a.x * b.x + (a.y * b.y + a.z * b.z);",
    );
    assert_ne!(planted, sim_math, "the planted change must apply");
    let source = SIM_MATH_PROBE
        .source
        .replace("#include \"sim_math.glsl\"", &planted);
    let words = compile_source("planted_sim_math_probe.comp", &source)
        .unwrap_or_else(|err| panic!("{err}"));
    let world = GpuPhysicsWorld::new(&context, PROBE_CONFIG).expect("world");
    let (report, _) = probe_with(world, &words).expect("the probe runs");
    println!("{}", report.summary());
    let Some(ConformanceDifference::Routine {
        routine,
        expected,
        device,
        ..
    }) = &report.difference
    else {
        panic!("expected a routine to be named: {}", report.summary());
    };
    assert_eq!(*routine, Routine::Dot3);
    assert_ne!(expected, device);
    assert_eq!(report.supported_mode(), DeterminismMode::Local);
    let refusal = report.cross_platform().unwrap_err().to_string();
    assert!(refusal.contains("`sim_dot(vec3)` case"), "{refusal}");
    assert!(refusal.contains(&context.info().name), "{refusal}");

    let mut support = DeterminismSupport::default();
    report.declare_support(&mut support);
    let error = support
        .check(DeterminismMode::CrossPlatform)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`physics.gpu` supports only Local") && error.contains("sim_dot(vec3)"),
        "{error}"
    );
}

/// With the Khronos validation layer on, opening the device, the probe (the `sim_math` pipeline,
/// buffers, dispatches, a physics world stepped 40 ticks) and a world grown and loaded from an
/// image raise no validation message; and a message the layer raises reaches the next dispatch
/// as `GpuError::Validation` naming it (so the quiet result means something). Fails when the
/// layer is missing (install `vulkan-validationlayers`), when the engine's Vulkan use draws a
/// warning or an error, or when a dispatch stops checking the messages (seen failing so).
#[test]
fn gpu_tests_raise_no_validation_message() {
    let context = context(true);
    assert!(context.validating());
    let report = probe(&context).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(report.difference, None, "{}", report.summary());
    let config = GpuPhysicsConfig {
        capacity: 16,
        cell_size: 2.0,
        grid_cells: 64,
        max_events: 8,
    };
    let mut world = GpuPhysicsWorld::new(&context, config).unwrap_or_else(|err| panic!("{err}"));
    let (bodies, colliders) = rusting_engine::physics::gpu::conformance::probe_scene();
    world
        .set_bodies(&bodies)
        .unwrap_or_else(|err| panic!("{err}"));
    world
        .set_cpu_colliders(&colliders)
        .unwrap_or_else(|err| panic!("{err}"));
    world.grow(32).unwrap_or_else(|err| panic!("{err}"));
    let params = rusting_engine::physics::gpu::GpuStepParams {
        tick: 0,
        fixed_delta: 1.0 / 60.0,
        gravity: bevy::math::Vec3::new(0.0, -9.81, 0.0),
    };
    world
        .step(&params, &[])
        .unwrap_or_else(|err| panic!("{err}"));
    let image = world.image().unwrap_or_else(|err| panic!("{err}"));
    let mut again = GpuPhysicsWorld::new(&context, config).unwrap_or_else(|err| panic!("{err}"));
    again
        .load_image(&image)
        .unwrap_or_else(|err| panic!("{err}"));
    again
        .step(&params, &[])
        .unwrap_or_else(|err| panic!("{err}"));

    context.submit_validation_message(c"planted message");
    match world.step(&params, &[]) {
        Err(GpuError::Validation { messages, .. }) => {
            assert!(
                messages.iter().any(|m| m.contains("planted message")),
                "{messages:?}"
            );
        }
        other => panic!("a validation message must fail the next dispatch: {other:?}"),
    }
}
