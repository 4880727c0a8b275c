//! GPU bodies that do not fit the GPU solver's hash grid.
//!
//! The GPU finds contact pairs through a hash grid of `GpuPhysicsConfig::cell_size` cells; a body
//! whose bounding diameter is wider than `GRID_FIT_FRACTION` of a cell cannot be placed in one
//! cell, so it goes to a fallback list that every body scans every tick. The results stay correct
//! but the work grows with the square of such bodies, which is not what a game puts on the GPU
//! for. Each such body is an error (`GPU_BODY_TOO_LARGE`) naming its diameter and the limit. This
//! module must never open a device.

use rusting_engine::physics::BodyClass;
use rusting_engine::physics::gpu::{GpuPhysicsConfig, bounding_diameter};
use rusting_engine::scene::LocatedScene;

use super::finding::{Finding, Place};

/// Reports every GPU body of `scenes` wider than the engine's grid allows.
pub fn check(scenes: &[LocatedScene], findings: &mut Vec<Finding>) {
    let config = GpuPhysicsConfig::default();
    let widest = config.widest_grid_body();
    for scene in scenes {
        for entity in &scene.cooked.entities {
            let components = &entity.components;
            let gpu = components
                .physics_body
                .is_some_and(|b| b.class == BodyClass::Gpu);
            let Some(collider) = components.collider.as_ref().filter(|_| gpu) else {
                continue;
            };
            let Some(diameter) = bounding_diameter(&collider.shape) else {
                continue;
            };
            if diameter <= widest {
                continue;
            }
            findings.push(Finding::error(
                "GPU_BODY_TOO_LARGE",
                Place::entity(&scene.user(entity)),
                format!(
                    "this GPU body is {diameter} m across (its bounding sphere), wider than the \
                     {widest} m that fits the GPU's {} m grid cells, so every GPU body would scan \
                     it every tick; make it smaller, split it, or make it a CPU body",
                    config.cell_size
                ),
            ));
        }
    }
}
