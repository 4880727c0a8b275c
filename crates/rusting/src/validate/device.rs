//! The device check: a `CrossPlatform` project with GPU bodies needs a Vulkan device whose float
//! controls keep bits the same across devices (32-bit subnormals preserved, round-to-nearest-even,
//! signed zeros, infinities and NaNs preserved).
//!
//! The check opens the machine's Vulkan device the way the game does (`GpuContext::new`: a
//! discrete GPU first, lavapipe accepted) and reports `DEVICE_NOT_CROSS_PLATFORM` with the device's
//! name and each missing float control, at the first GPU body. No Vulkan here is a warning
//! (`DEVICE_UNCHECKED`): the machine that validates is not always the one that plays. Projects in
//! `Local` or `Off`, and scenes without GPU bodies, need nothing from the device. This module must
//! never dispatch work on the device.

use rusting_engine::physics::BodyClass;
use rusting_engine::physics::gpu::GpuContext;
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
    match GpuContext::new() {
        Ok(context) => {
            if let Err(refusal) = context.info().cross_platform() {
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
                 device could be opened here to check its float controls: {error}"
            ),
        )),
    }
}
