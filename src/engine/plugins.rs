//! [`RustingPlugins`]: the engine's plugin group, one plugin per layer below the engine.
//!
//! This module must never add a plugin that reads a clock: the engine runs every fixed tick
//! itself.

use bevy::app::{PluginGroup, PluginGroupBuilder};
use bevy::transform::TransformPlugin;

/// The engine's plugins: bevy's task pools (through [`TaskPoolsPlugin`](super::TaskPoolsPlugin),
/// which ticks the main thread's tasks only while some are ready) and transform propagation, the
/// state layer, the runtime, jobs, physics, gameplay and scenes.
///
/// `TimePlugin` is left out on purpose: the engine runs fixed ticks itself, from the deltas passed
/// to [`App::update`](super::App::update). The task pools start with one thread per CPU unless
/// [`limit_worker_threads`](super::threads::limit_worker_threads) started them first
/// (`RUSTING_THREADS`).
#[derive(Clone, Debug, Default)]
pub struct RustingPlugins {
    /// What the runtime resources start from.
    pub settings: crate::runtime::RuntimeSettings,
}

impl PluginGroup for RustingPlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(super::TaskPoolsPlugin::default())
            .add(TransformPlugin)
            .add(crate::runtime::RuntimePlugin {
                settings: self.settings,
            })
            .add(crate::jobs::JobsPlugin)
            .add(crate::physics::PhysicsPlugin::default())
            .add(crate::physics::gpu::GpuPhysicsPlugin)
            .add(crate::gameplay::GameplayPlugin)
            .add(crate::state::StatePlugin)
    }
}
