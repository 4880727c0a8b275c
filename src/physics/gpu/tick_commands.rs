//! [`GpuPhysicsCommands`]: CPU-to-GPU commands, each stamped with the GPU tick it applies before.
//!
//! A command pushed while fixed tick `n` runs (when `FrameTime::fixed_tick` is `n`) applies before
//! GPU tick `n`; one pushed in `Update` right after that tick (when `fixed_tick` has become `n + 1`)
//! applies before GPU tick `n + 1`. Both are `FrameTime::fixed_tick` at the time of the push, so
//! the stamp never depends on how many ticks a frame batches. Within a tick, commands apply in the
//! order they were pushed, which the fixed system order makes deterministic.
//!
//! The queue is simulation state: it is hashed and copied by snapshots. This module must never
//! talk to the device; the GPU runtime takes each tick's commands when the tick ends.

use std::collections::VecDeque;

use bevy::prelude::Resource;

use super::physics_commands::GpuCommand;
use crate::runtime::FrameTime;

/// Commands waiting for their GPU tick (simulation state).
#[derive(Resource, Clone, Debug, Default, PartialEq, rusting_macros::SimState)]
pub struct GpuPhysicsCommands {
    /// `(tick, command)` in push order; ticks never decrease.
    queued: VecDeque<(u64, GpuCommand)>,
}

impl GpuPhysicsCommands {
    /// Queues `command` for the GPU tick `time.fixed_tick`: the tick running now when called from
    /// a fixed system, the next one when called from `Update`.
    pub fn push(&mut self, time: &FrameTime, command: GpuCommand) {
        self.queued.push_back((time.fixed_tick, command));
    }

    /// Takes, in push order, every command for GPU tick `tick` or earlier.
    pub fn take_through(&mut self, tick: u64) -> Vec<GpuCommand> {
        let count = self.queued.iter().take_while(|(t, _)| *t <= tick).count();
        self.queued.drain(..count).map(|(_, c)| c).collect()
    }

    /// The queued commands with their ticks, in push order.
    pub fn queued(&self) -> impl Iterator<Item = &(u64, GpuCommand)> {
        self.queued.iter()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.queued.is_empty()
    }
}
