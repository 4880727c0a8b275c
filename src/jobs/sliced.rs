//! [`Sliced`]: a resumable task whose whole state is simulation state, advanced by a fixed number
//! of work units every tick (a flow field, a navmesh rebuild, a planner that thinks for a while).
//!
//! The engine advances every registered task at one point of the chain, in
//! [`SimSet::Jobs`](crate::runtime::SimSet::Jobs) after the deadline results, by the units per
//! tick it was registered with: never by time. A budget in milliseconds would do more work on a
//! fast machine than on a slow one, and the two would diverge; a budget in units does the same
//! work everywhere. The task, its progress and its units per tick are hashed, snapshotted and
//! compared like any declared resource, so a rollback resumes it exactly where it stood.
//!
//! This module must never read a clock.

use bevy::prelude::{ResMut, Resource};

use crate::state::SimState;
use crate::state::sim_state::join;

/// What one unit of work left to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// More units are needed.
    More,
    /// The task is finished.
    Done,
}

/// A task done in units: each call of [`SlicedTask::work`] does one unit, and all its state is in
/// `self` (so it is hashed, snapshotted and compared).
pub trait SlicedTask: SimState + Clone + Send + Sync + 'static {
    /// Does one unit of work.
    fn work(&mut self) -> Progress;
}

/// Where a sliced task stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceStatus {
    /// No task started, or the last one was taken.
    Idle,
    /// Started and not finished.
    Running,
    /// Finished: the result is in [`Sliced::task`] until the next start.
    Done,
}

/// A sliced task of type `T` (a resource every app that registered `T` holds).
#[derive(Resource, Clone, Debug)]
pub struct Sliced<T: SlicedTask> {
    task: Option<T>,
    status: SliceStatus,
    units_per_tick: u32,
    units_done: u64,
    finished_at: u64,
}

impl<T: SlicedTask> Sliced<T> {
    /// An idle slot for tasks of type `T`, advanced `units_per_tick` units a tick (at least 1).
    pub fn new(units_per_tick: u32) -> Self {
        Sliced {
            task: None,
            status: SliceStatus::Idle,
            units_per_tick: units_per_tick.max(1),
            units_done: 0,
            finished_at: 0,
        }
    }

    /// Starts `task`, replacing any task running or finished; the first units run at the start
    /// of the next tick.
    pub fn start(&mut self, task: T) {
        self.task = Some(task);
        self.status = SliceStatus::Running;
        self.units_done = 0;
    }

    /// Where the task stands.
    pub fn status(&self) -> SliceStatus {
        self.status
    }

    /// The task, running or finished.
    pub fn task(&self) -> Option<&T> {
        self.task.as_ref()
    }

    /// The finished task, taken (the slot goes back to idle); `None` while it runs.
    pub fn take_finished(&mut self) -> Option<T> {
        if self.status != SliceStatus::Done {
            return None;
        }
        self.status = SliceStatus::Idle;
        self.task.take()
    }

    /// Units done since the task started.
    pub fn units_done(&self) -> u64 {
        self.units_done
    }

    /// The tick that did the task's last unit, once it is done.
    pub fn finished_at(&self) -> Option<u64> {
        (self.status == SliceStatus::Done).then_some(self.finished_at)
    }

    /// Units done each tick.
    pub fn units_per_tick(&self) -> u32 {
        self.units_per_tick
    }

    /// Changes the units done each tick, from the next tick on (at least 1). Call it from a
    /// fixed system, never from how fast this machine is.
    pub fn set_units_per_tick(&mut self, units: u32) {
        self.units_per_tick = units.max(1);
    }

    /// Does this tick's units (`tick`: ticks completed, counting this one).
    pub(crate) fn do_units(&mut self, tick: u64) {
        if self.status != SliceStatus::Running {
            return;
        }
        let Some(task) = &mut self.task else {
            self.status = SliceStatus::Idle;
            return;
        };
        for _ in 0..self.units_per_tick {
            self.units_done += 1;
            if task.work() == Progress::Done {
                self.status = SliceStatus::Done;
                self.finished_at = tick;
                return;
            }
        }
    }
}

impl<T: SlicedTask> SimState for Sliced<T> {
    const NAME: &'static str = T::NAME;

    fn hash_state(&self, hasher: &mut crate::state::StateHasher) {
        hasher.u32(self.status as u32);
        hasher.u32(self.units_per_tick);
        hasher.u64(self.units_done);
        hasher.u64(self.finished_at);
        self.task.hash_state(hasher);
    }

    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        out(&join(path, "status"), format!("{:?}", self.status));
        out(
            &join(path, "units_per_tick"),
            self.units_per_tick.to_string(),
        );
        out(&join(path, "units_done"), self.units_done.to_string());
        out(&join(path, "finished_at"), self.finished_at.to_string());
        self.task.visit_fields(&join(path, "task"), out);
    }
}

/// The system that advances task `T` at the start of each tick.
pub(crate) fn advance_sliced<T: SlicedTask>(
    time: bevy::prelude::Res<crate::runtime::FrameTime>,
    mut sliced: ResMut<Sliced<T>>,
) {
    if sliced.status == SliceStatus::Running {
        sliced.do_units(time.fixed_tick + 1);
    }
}
