//! Deterministic jobs: work that outlasts a tick, parallel work inside a tick, and results from
//! outside the simulation, each in a form whose result never depends on this machine's speed.
//!
//! - [`Jobs`]: deadline jobs. A [`JobKind`] is a pure function from an owned input to an output,
//!   registered with a latency of K ticks; a request at tick T is computed on the
//!   [`JobWorkers`] whenever they can and delivered at the start of tick T + K, in request order.
//!   A job not done by then makes the simulation thread help and wait: it is counted late, never
//!   skipped or applied a tick later.
//! - [`Sliced`]: a resumable task whose state is simulation state, advanced a fixed number of
//!   work units a tick.
//! - [`parallel_jobs`], [`parallel_chunks`], [`parallel_reduce`]: a fixed number of jobs, each
//!   with its own output, merged in job order.
//! - [`OutsideQueue`] and [`OutsideInputs`]: the one way in for results from outside, recorded
//!   in replays.
//!
//! docs/jobs.md tells the whole story. The layer stands on `state` and `runtime`; it must never
//! read a clock into simulation state, or let a worker's timing decide what a tick sees.

pub mod deadline;
pub mod error;
pub mod kind;
pub mod outside;
pub mod parallel;
pub mod plugin;
pub mod pool;
pub mod sliced;
mod slot;

pub use deadline::{Jobs, MAX_JOB_LATENCY, PendingJob, RESULT_CACHE_TICKS};
pub use error::{JobLabel, JobPanicked, OutsideError};
pub use kind::{JobId, JobKind};
pub use outside::{
    MAX_CHANNEL_BYTES, MAX_OUTSIDE_BYTES, MAX_OUTSIDE_PER_TICK, OutsideEntry, OutsideInputs,
    OutsideQueue, OutsideTick, enter_tick,
};
pub use parallel::{MAX_PARALLEL_JOBS, job_range, parallel_chunks, parallel_jobs, parallel_reduce};
pub use plugin::{JobsAppExt, JobsPlugin};
pub use pool::{JOB_WORKERS_VARIABLE, JobStats, JobWorkers};
pub use sliced::{Progress, SliceStatus, Sliced, SlicedTask};
pub use slot::{note_job_panic_location, running_job};
