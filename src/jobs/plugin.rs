//! [`JobsPlugin`] (the job workers, the outside queue and its inputs, inserted when the app is
//! built) and [`JobsAppExt`], which registers job kinds and sliced tasks.
//!
//! Every resource here is inserted while the app is built, never later: in bevy 0.19 a resource
//! is an entity, and one inserted mid-run would shift every later entity's id. This module must
//! never run a job.

use bevy::app::{App, Plugin};
use bevy::prelude::{FixedUpdate, IntoScheduleConfigs};

use super::deadline::{Jobs, deliver_jobs};
use super::kind::JobKind;
use super::outside::{OutsideInputs, OutsideQueue};
use super::pool::JobWorkers;
use super::sliced::{Sliced, SlicedTask, advance_sliced};
use crate::runtime::SimSet;
use crate::state::{SimStateAppExt, SnapshotAppExt};

/// Inserts [`JobWorkers`] (as `RUSTING_JOB_WORKERS` asks), the [`OutsideQueue`] and
/// [`OutsideInputs`].
#[derive(Clone, Copy, Debug, Default)]
pub struct JobsPlugin;

impl Plugin for JobsPlugin {
    fn build(&self, app: &mut App) {
        let workers = JobWorkers::from_environment().unwrap_or_else(|message| {
            bevy::log::error!("{message}; running deadline jobs on one worker thread");
            JobWorkers::new(1)
        });
        app.insert_resource(workers)
            .insert_resource(OutsideQueue::default())
            .insert_resource(OutsideInputs::default())
            .register_sim_resource::<OutsideInputs>()
            .ignore_in_snapshots::<JobWorkers>()
            .ignore_in_snapshots::<OutsideQueue>();
    }
}

/// Registering deadline-job kinds and sliced tasks, from `Plugin::build` (the engine `App` has
/// the same methods).
pub trait JobsAppExt {
    /// Registers job kind `K` with `latency` ticks from a request to its result (1 to
    /// [`MAX_JOB_LATENCY`](super::MAX_JOB_LATENCY)): inserts [`Jobs<K>`] as simulation state and
    /// delivers its results at the start of every tick ([`SimSet::Jobs`]).
    fn add_job_kind<K: JobKind>(&mut self, latency: u64) -> &mut Self;
    /// Registers sliced task `T`, advanced `units_per_tick` units at the start of every tick
    /// (after the deadline results): inserts an idle [`Sliced<T>`] as simulation state.
    fn add_sliced_task<T: SlicedTask>(&mut self, units_per_tick: u32) -> &mut Self;
}

impl JobsAppExt for App {
    fn add_job_kind<K: JobKind>(&mut self, latency: u64) -> &mut Self {
        let workers = self
            .world_mut()
            .get_resource_or_insert_with(|| JobWorkers::new(0))
            .clone();
        self.insert_resource(Jobs::<K>::new(latency, &workers))
            .register_sim_resource::<Jobs<K>>()
            .add_systems(
                FixedUpdate,
                deliver_jobs::<K>
                    .in_set(SimSet::Jobs)
                    .in_set(JobStage::Deliver),
            );
        order_stages(self);
        self
    }

    fn add_sliced_task<T: SlicedTask>(&mut self, units_per_tick: u32) -> &mut Self {
        self.insert_resource(Sliced::<T>::new(units_per_tick))
            .register_sim_resource::<Sliced<T>>()
            .add_systems(
                FixedUpdate,
                advance_sliced::<T>
                    .in_set(SimSet::Jobs)
                    .in_set(JobStage::Advance),
            );
        order_stages(self);
        self
    }
}

/// The two stages of [`SimSet::Jobs`]: deadline results first, then sliced tasks, so a task
/// started from a result delivered this tick waits for the next tick's units, on every machine.
#[derive(bevy::ecs::schedule::SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum JobStage {
    Deliver,
    Advance,
}

fn order_stages(app: &mut App) {
    app.configure_sets(FixedUpdate, JobStage::Advance.after(JobStage::Deliver));
}
