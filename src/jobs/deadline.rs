//! [`Jobs`]: deadline jobs of one kind, as simulation state: the requests a tick made, the tick
//! each is due, and the results delivered at the start of that tick.
//!
//! A request at tick T with latency K is due at T + K. At the start of every tick (in
//! [`SimSet::Jobs`](crate::runtime::SimSet::Jobs), before anything else of the tick) the due
//! results are delivered in request order; a job not done by then makes the simulation thread
//! help and wait, and is counted late ([`JobWorkers::stats`](super::JobWorkers::stats)). So a
//! result never depends on when a worker finished: it is always there at T + K, whatever the
//! machine.
//!
//! The pending requests, the id counter and the latency are hashed, snapshotted and compared;
//! the results being computed are not state but a cache keyed by the input's bytes, shared by
//! every copy of the resource, so re-simulating after a rollback asks again and finds the result
//! already computed. This module must never let a worker's timing reach a tick.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bevy::prelude::{Res, ResMut, Resource};

use super::error::{JobLabel, JobPanicked};
use super::kind::{JobId, JobKind};
use super::pool::{JobWorkers, WorkerPool};
use super::slot::{Outcome, Slot};
use crate::runtime::FrameTime;
use crate::state::sim_state::join;
use crate::state::{SimState, StateHasher};

/// Ticks a computed result stays cached after its due tick, for a rollback that asks again.
pub const RESULT_CACHE_TICKS: u64 = 600;

/// The longest latency a kind may have, in ticks.
pub const MAX_JOB_LATENCY: u64 = 3600;

/// One request waiting for its due tick.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingJob<I> {
    /// Its number.
    pub id: JobId,
    /// The tick that requested it.
    pub requested_at: u64,
    /// The tick whose start delivers it.
    pub due: u64,
    /// What it was asked with.
    pub input: I,
}

struct CacheEntry<K: JobKind> {
    slot: Arc<Slot<K>>,
    last_due: u64,
}

/// The computed results of one kind, by input hash: not state, shared by every copy.
struct KindCache<K: JobKind> {
    pool: Arc<WorkerPool>,
    by_input: Mutex<HashMap<u64, Vec<CacheEntry<K>>>>,
}

impl<K: JobKind> KindCache<K> {
    /// The slot computing `input`, queued now if no slot holds it; and whether one did.
    fn slot_for(&self, input: &K::Input, label: JobLabel, due: u64) -> (Arc<Slot<K>>, bool) {
        let key = input_hash(input);
        let Ok(mut by_input) = self.by_input.lock() else {
            return (Arc::new(Slot::new(input.clone(), label)), false);
        };
        let list = by_input.entry(key).or_default();
        if let Some(entry) = list.iter_mut().find(|entry| entry.slot.input == *input) {
            entry.last_due = entry.last_due.max(due);
            return (Arc::clone(&entry.slot), true);
        }
        let slot = Arc::new(Slot::new(input.clone(), label));
        list.push(CacheEntry {
            slot: Arc::clone(&slot),
            last_due: due,
        });
        drop(by_input);
        self.pool.submit(slot.clone());
        (slot, false)
    }

    /// Forgets results due more than [`RESULT_CACHE_TICKS`] before `tick`.
    fn prune(&self, tick: u64) {
        if let Ok(mut by_input) = self.by_input.lock() {
            by_input.retain(|_, list| {
                list.retain(|entry| entry.last_due.saturating_add(RESULT_CACHE_TICKS) >= tick);
                !list.is_empty()
            });
        }
    }
}

fn input_hash<I: SimState>(input: &I) -> u64 {
    let mut hasher = StateHasher::new();
    input.hash_state(&mut hasher);
    hasher.finish()
}

/// Deadline jobs of kind `K`: request from a fixed system, read the results due this tick.
///
/// ```
/// use bevy::prelude::*;
/// use rusting_engine::prelude::*;
///
/// struct Double;
/// impl JobKind for Double {
///     const NAME: &'static str = "Double";
///     type Input = u32;
///     type Output = u32;
///     fn run(input: &u32) -> u32 { input * 2 }
/// }
///
/// #[derive(Resource, Clone, Default, SimState)]
/// struct Sum(u32);
///
/// fn ask(mut jobs: ResMut<Jobs<Double>>, time: Res<FrameTime>) {
///     jobs.request(time.fixed_tick as u32);
/// }
/// fn take(jobs: Res<Jobs<Double>>, mut sum: ResMut<Sum>) {
///     for (_id, doubled) in jobs.results() {
///         sum.0 += doubled;
///     }
/// }
///
/// let mut app = rusting_engine::App::default();
/// app.add_job_kind::<Double>(2);
/// app.world_mut().insert_resource(Sum(0));
/// app.register_sim_resource::<Sum>();
/// app.add_systems(FixedUpdate, (ask, take).chain().after(SimSet::Tweens));
/// app.update(app.fixed_step() * 4);
/// // Ticks 1 and 2 asked to double 0 and 1 (their `fixed_tick`); ticks 3 and 4 took 0 and 2.
/// assert_eq!(app.world().resource::<Sum>().0, 2);
/// ```
#[derive(Resource)]
pub struct Jobs<K: JobKind> {
    latency: u64,
    next_id: u64,
    tick: u64,
    pending: Vec<PendingJob<K::Input>>,
    delivered: Vec<(JobId, K::Output)>,
    cache: Arc<KindCache<K>>,
}

impl<K: JobKind> Clone for Jobs<K> {
    fn clone(&self) -> Self {
        Jobs {
            latency: self.latency,
            next_id: self.next_id,
            tick: self.tick,
            pending: self.pending.clone(),
            delivered: self.delivered.clone(),
            cache: Arc::clone(&self.cache),
        }
    }
}

impl<K: JobKind> Jobs<K> {
    /// No requests yet, `latency` ticks from a request to its result, on `workers`' threads.
    pub fn new(latency: u64, workers: &JobWorkers) -> Self {
        Jobs {
            latency: latency.clamp(1, MAX_JOB_LATENCY),
            next_id: 0,
            tick: 0,
            pending: Vec::new(),
            delivered: Vec::new(),
            cache: Arc::new(KindCache {
                pool: Arc::clone(&workers.pool),
                by_input: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Asks for `K::run(&input)`, delivered at the start of the tick `latency` ticks after this
    /// one. Ids count up in request order.
    pub fn request(&mut self, input: K::Input) -> JobId {
        let id = JobId(self.next_id);
        self.next_id += 1;
        let due = self.tick + self.latency;
        let label = JobLabel {
            kind: K::NAME,
            id,
            requested_at: self.tick,
        };
        let (_slot, hit) = self.cache.slot_for(&input, label, due);
        self.cache.pool.count(|stats| {
            stats.requested += 1;
            stats.cache_hits += u64::from(hit);
        });
        self.pending.push(PendingJob {
            id,
            requested_at: self.tick,
            due,
            input,
        });
        id
    }

    /// The results delivered at the start of this tick, in request order.
    pub fn results(&self) -> impl ExactSizeIterator<Item = (JobId, &K::Output)> {
        self.delivered.iter().map(|(id, output)| (*id, output))
    }

    /// The result of request `id`, if it was delivered this tick.
    pub fn result(&self, id: JobId) -> Option<&K::Output> {
        self.delivered
            .iter()
            .find(|(delivered, _)| *delivered == id)
            .map(|(_, output)| output)
    }

    /// Requests not delivered yet, in request order.
    pub fn pending(&self) -> &[PendingJob<K::Input>] {
        &self.pending
    }

    /// Ticks from a request to its result.
    pub fn latency(&self) -> u64 {
        self.latency
    }

    /// Changes the latency for requests made from now on (1 to [`MAX_JOB_LATENCY`]). Call it
    /// from a fixed system, on a tick the simulation decides (a setting, an input): never from
    /// how fast this machine is.
    pub fn set_latency(&mut self, latency: u64) {
        self.latency = latency.clamp(1, MAX_JOB_LATENCY);
    }

    /// Delivers the results due at `tick`, in request order.
    ///
    /// # Panics
    ///
    /// With a [`JobPanicked`] payload when a due job's function panicked.
    pub(crate) fn deliver(&mut self, tick: u64) {
        self.tick = tick;
        self.delivered.clear();
        if !self.pending.iter().any(|job| job.due <= tick) {
            return;
        }
        let pool = Arc::clone(&self.cache.pool);
        let (due, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|job| job.due <= tick);
        self.pending = waiting;
        for job in due {
            let label = JobLabel {
                kind: K::NAME,
                id: job.id,
                requested_at: job.requested_at,
            };
            let (slot, _) = self.cache.slot_for(&job.input, label.clone(), job.due);
            // Diagnostics only: how long this machine waited, never read by a tick.
            // rusting: allow(LINT_WALL_CLOCK) reason: the stall time goes to JobStats, which no simulation state reads
            let started = std::time::Instant::now();
            match slot.wait(&pool) {
                Outcome::Done {
                    output,
                    late,
                    ran_here,
                } => {
                    let stalled = started.elapsed();
                    pool.count(|stats| {
                        stats.delivered += 1;
                        if late {
                            stats.late += 1;
                            stats.stall_ns = stats
                                .stall_ns
                                .saturating_add(u64::try_from(stalled.as_nanos()).unwrap_or(0));
                        }
                        stats.run_by_simulation += u64::from(ran_here);
                    });
                    self.delivered.push((job.id, K::Output::clone(&output)));
                }
                Outcome::Panicked(message, location) => {
                    std::panic::panic_any(JobPanicked {
                        job: label,
                        message,
                        location,
                    });
                }
            }
        }
        self.cache.prune(tick);
    }
}

impl<K: JobKind> SimState for Jobs<K> {
    const NAME: &'static str = K::NAME;

    fn hash_state(&self, hasher: &mut StateHasher) {
        hasher.u64(self.latency);
        hasher.u64(self.next_id);
        hasher.u64(self.pending.len() as u64);
        for job in &self.pending {
            hasher.u64(job.id.0);
            hasher.u64(job.requested_at);
            hasher.u64(job.due);
            job.input.hash_state(hasher);
        }
    }

    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        out(&join(path, "latency"), self.latency.to_string());
        out(&join(path, "next_id"), self.next_id.to_string());
        out(&join(path, "pending.len"), self.pending.len().to_string());
        for (k, job) in self.pending.iter().enumerate() {
            let at = join(path, &format!("pending.{k}"));
            out(&join(&at, "id"), job.id.0.to_string());
            out(&join(&at, "requested_at"), job.requested_at.to_string());
            out(&join(&at, "due"), job.due.to_string());
            job.input.visit_fields(&join(&at, "input"), out);
        }
    }
}

/// The system that delivers kind `K`'s due results at the start of each tick.
pub(crate) fn deliver_jobs<K: JobKind>(
    time: Res<FrameTime>,
    workers: Option<Res<JobWorkers>>,
    mut jobs: ResMut<Jobs<K>>,
) {
    // A snapshot of another app restored into this one brought that app's cache and workers:
    // run this app's jobs on its own workers (results are the same; the counts are this app's).
    if let Some(workers) = workers
        && !Arc::ptr_eq(&jobs.cache.pool, &workers.pool)
    {
        jobs.cache = Arc::new(KindCache {
            pool: Arc::clone(&workers.pool),
            by_input: Mutex::new(HashMap::new()),
        });
    }
    // Ticks completed, counting the one starting now: the number its hash is recorded under.
    jobs.deliver(time.fixed_tick + 1);
}
