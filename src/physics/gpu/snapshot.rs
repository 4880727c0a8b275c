//! GPU physics in world snapshots: the [`ExternalState`] hooks the GPU plugin registers.
//!
//! A capture first simulates every queued GPU tick (recording their hashes, as the frame would
//! have), so the device holds the state after the snapshot's tick and nothing is pending but the
//! commands stamped for later ticks, which are ECS state (`GpuPhysicsCommands`). Then it reads
//! back the [`GpuRuntimeImage`]: every slot's body record (rule state included), which entity
//! each slot belongs to, the ticks done and the events not yet handed to CPU simulation.
//!
//! A restore puts the image back after the ECS: into the app's runtime when it has one (queued
//! ticks dropped, the world resized to the image's configuration), or into a runtime it opens on
//! the process's one Vulkan device (an app built for seeking, or one whose first GPU body had not
//! appeared yet). A snapshot taken before an app's first GPU body removes the runtime, and the
//! body opens it again on the same tick as before.
//!
//! This module must never step a GPU tick that is not queued, or restore a body into a slot the
//! image does not name.

use bevy::prelude::{Mut, World};

use super::error::GpuError;
use super::runtime::{GpuPhysicsStatus, GpuRuntime, GpuRuntimeImage, open_runtime};
use crate::state::{ExternalState, ExternalValue, RestoredEntities, SnapshotError, StateHashes};

/// What the state is called in snapshot errors.
const WHAT: &str = "GPU physics bodies";

/// The GPU plugin's snapshot hooks.
pub(super) const GPU_STATE: ExternalState = ExternalState {
    what: WHAT,
    capture,
    restore,
};

fn failed(action: &'static str) -> impl Fn(GpuError) -> SnapshotError {
    move |error| SnapshotError::External {
        what: WHAT,
        action,
        reason: error.to_string(),
    }
}

/// Simulates the queued GPU ticks and reads the runtime back; `None` without GPU bodies.
fn capture(world: &mut World) -> Result<Option<ExternalValue>, SnapshotError> {
    if !world.contains_non_send::<GpuRuntime>() {
        return Ok(None);
    }
    world.resource_scope(|world, mut hashes: Mut<StateHashes>| {
        let mut runtime = world.non_send_mut::<GpuRuntime>();
        while let Some((tick, hash)) = runtime.step_one().map_err(failed("captured"))? {
            hashes.push_gpu(tick, hash);
        }
        let image = runtime.image().map_err(failed("captured"))?;
        let image = image.expect("every queued GPU tick was simulated");
        Ok(Some(Box::new(image) as ExternalValue))
    })
}

/// Puts the image back (see the module docs).
fn restore(
    world: &mut World,
    value: Option<&ExternalValue>,
    entities: &RestoredEntities,
) -> Result<(), SnapshotError> {
    let Some(value) = value else {
        world.remove_non_send::<GpuRuntime>();
        return Ok(());
    };
    let image = value
        .downcast_ref::<GpuRuntimeImage>()
        .ok_or_else(|| SnapshotError::External {
            what: WHAT,
            action: "restored",
            reason: "the snapshot's GPU state is of another type".to_owned(),
        })?;
    if !world.contains_non_send::<GpuRuntime>() {
        open_runtime(world, *image.world().config(), &[], Vec::new()).map_err(|reason| {
            SnapshotError::External {
                what: WHAT,
                action: "restored",
                reason,
            }
        })?;
    }
    let mut runtime = world.non_send_mut::<GpuRuntime>();
    runtime
        .load_image(image, |entity| entities.get(entity))
        .map_err(failed("restored"))?;
    let bodies = runtime.tracked().len();
    world.resource_mut::<GpuPhysicsStatus>().bodies = bodies;
    Ok(())
}
