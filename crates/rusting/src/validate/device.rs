//! The device check: a `CrossPlatform` project with GPU bodies needs a Vulkan device that computes
//! the simulation shaders' bits as the CPU reference does.
//!
//! The check opens the machine's Vulkan device the way the game does (`GpuContext::new`: a
//! discrete GPU first, lavapipe accepted, `RUSTING_VULKAN_DEVICE` obeyed), runs the conformance
//! probe on it (`sim_math` and a physics scene against pinned checksums, a few hundred
//! milliseconds) and reports `DEVICE_NOT_CROSS_PLATFORM` with the device's name and the first
//! differing routine or tick, at the first GPU body. No Vulkan here is a warning
//! (`DEVICE_UNCHECKED`): the machine that validates is not always the one that plays. Projects in
//! `Local` or `Off`, and scenes without GPU bodies, need nothing from the device. This module must
//! never dispatch anything but the probe.

use rusting_engine::physics::BodyClass;
use rusting_engine::physics::gpu::{GpuContext, probe};
use rusting_engine::runtime::DeterminismMode;
use rusting_engine::scene::LocatedScene;

use super::finding::{Finding, Place};

/// The first GPU body of `scenes`, as a place.
fn first_gpu_body(scenes: &[LocatedScene]) -> Option<Place> {
    scenes.iter().find_map(|scene| {
        scene.cooked.entities.iter().find_map(|entity| {
            let components = &entity.components;
            let gpu = components.collider.is_some()
                && components
                    .physics_body
                    .is_some_and(|b| b.class == BodyClass::Gpu);
            gpu.then(|| Place::entity(&scene.user(entity)))
        })
    })
}

/// Checks the device when the project needs `CrossPlatform` and has GPU bodies.
pub fn check(mode: DeterminismMode, scenes: &[LocatedScene], findings: &mut Vec<Finding>) {
    if mode < DeterminismMode::CrossPlatform {
        return;
    }
    let Some(place) = first_gpu_body(scenes) else {
        return;
    };
    match GpuContext::new().and_then(|context| probe(&context)) {
        Ok(report) => {
            if let Err(refusal) = report.cross_platform() {
                findings.push(Finding::error(
                    "DEVICE_NOT_CROSS_PLATFORM",
                    place,
                    format!(
                        "the project requires CrossPlatform determinism and has GPU bodies, but \
                         {refusal}"
                    ),
                ));
            }
        }
        Err(error) => findings.push(Finding::warning(
            "DEVICE_UNCHECKED",
            place,
            format!(
                "the project requires CrossPlatform determinism and has GPU bodies, but no Vulkan \
                 device could be opened and probed here: {error}"
            ),
        )),
    }
}
