//! [`JobWorkers`]: the threads that run deadline jobs, their queue, and the counts of jobs that
//! were late.
//!
//! The workers are a rayon pool of their own, apart from the global pool the CPU solver's batches
//! use, so a long path search never delays a tick's contacts. A job waits in one first-in,
//! first-out queue; each worker task takes the oldest, and the simulation thread takes from the
//! same queue when it has to wait for a due job (it helps rather than sleeps). With no workers
//! (`RUSTING_JOB_WORKERS=0`) every job runs on the simulation thread when it is due.
//!
//! Nothing here is simulation state: which thread ran a job, and when, must never change what a
//! tick computes. The counts ([`JobStats`]) say how fast this machine was; read them in `Update`,
//! or after a run, never in a fixed system. This module must never decide a result.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bevy::prelude::Resource;

/// The environment variable holding the number of job worker threads (0 or more).
pub const JOB_WORKERS_VARIABLE: &str = "RUSTING_JOB_WORKERS";

/// The most job worker threads a process may ask for.
pub const MAX_JOB_WORKERS: usize = 256;

/// Work a worker or the simulation thread can run once: a queued job.
pub(crate) trait Runnable: Send + Sync {
    /// Runs the job if nobody has started it yet.
    fn run_if_queued(&self);
}

/// How this machine kept up with the deadlines: counts since the app started, never hashed.
/// Runs report them in their result (`RunResult::jobs`) and state-hash report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JobStats {
    /// Jobs requested (a request answered from the cache counts too).
    pub requested: u64,
    /// Requests answered from the cache: the same kind and input bytes as a job still held,
    /// typically the same request made again while re-simulating after a rollback.
    pub cache_hits: u64,
    /// Results delivered at their due tick.
    pub delivered: u64,
    /// Jobs not finished by their due tick: the simulation thread waited for them (and helped).
    pub late: u64,
    /// The time the simulation thread spent waiting for late jobs, in nanoseconds.
    pub stall_ns: u64,
    /// Jobs run on the simulation thread because no worker had started them by their due tick.
    pub run_by_simulation: u64,
}

impl std::fmt::Display for JobStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} deadline jobs delivered, {} late (the simulation waited {:.1} ms for them, ran {} \
             itself), {} answered from the cache",
            self.delivered,
            self.late,
            self.stall_ns as f64 / 1.0e6,
            self.run_by_simulation,
            self.cache_hits
        )
    }
}

impl JobStats {
    /// The stats of `world`'s job workers, when it requested any job.
    pub fn of(world: &bevy::prelude::World) -> Option<JobStats> {
        let stats = world.get_resource::<JobWorkers>()?.stats();
        (stats.requested > 0).then_some(stats)
    }

    /// The stall time as a duration.
    pub fn stall(&self) -> Duration {
        Duration::from_nanos(self.stall_ns)
    }
}

/// The shared part: the queue, the pool, the counts.
pub(crate) struct WorkerPool {
    queue: Mutex<VecDeque<Arc<dyn Runnable>>>,
    threads: Mutex<Option<Arc<rayon::ThreadPool>>>,
    workers: AtomicU64,
    delay_ns: AtomicU64,
    pub(crate) stats: Mutex<JobStats>,
}

impl WorkerPool {
    /// With workers, queues `job` and asks one to take the oldest queued job. With none, the job
    /// waits in its slot for the simulation thread to claim it at its due tick (queueing it
    /// would keep every job alive in the queue).
    pub(crate) fn submit(self: &Arc<Self>, job: Arc<dyn Runnable>) {
        let threads = self.threads.lock().ok().and_then(|t| t.clone());
        if let Some(threads) = threads {
            if let Ok(mut queue) = self.queue.lock() {
                queue.push_back(job);
            }
            let pool = Arc::clone(self);
            threads.spawn(move || {
                let delay = pool.delay_ns.load(Ordering::Relaxed);
                if delay > 0 {
                    std::thread::sleep(Duration::from_nanos(delay));
                }
                pool.run_one();
            });
        }
    }

    /// Runs the oldest queued job; `false` when the queue is empty.
    pub(crate) fn run_one(&self) -> bool {
        let next = self
            .queue
            .lock()
            .ok()
            .and_then(|mut queue| queue.pop_front());
        match next {
            Some(job) => {
                job.run_if_queued();
                true
            }
            None => false,
        }
    }

    pub(crate) fn count(&self, update: impl FnOnce(&mut JobStats)) {
        if let Ok(mut stats) = self.stats.lock() {
            update(&mut stats);
        }
    }
}

/// The job workers (a resource every engine app holds): how many threads run deadline jobs, and
/// how this machine kept up ([`JobWorkers::stats`]).
///
/// Not simulation state: snapshots leave it alone and the hash never sees it.
#[derive(Resource, Clone)]
pub struct JobWorkers {
    pub(crate) pool: Arc<WorkerPool>,
}

impl std::fmt::Debug for JobWorkers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobWorkers")
            .field("workers", &self.workers())
            .field("stats", &self.stats())
            .finish()
    }
}

impl JobWorkers {
    /// `workers` job threads (0: every job runs on the simulation thread at its due tick).
    pub fn new(workers: usize) -> Self {
        let pool = Arc::new(WorkerPool {
            queue: Mutex::new(VecDeque::new()),
            threads: Mutex::new(None),
            workers: AtomicU64::new(0),
            delay_ns: AtomicU64::new(0),
            stats: Mutex::new(JobStats::default()),
        });
        let workers_resource = JobWorkers { pool };
        workers_resource.set_workers(workers);
        workers_resource
    }

    /// The workers `RUSTING_JOB_WORKERS` asks for; by default one thread fewer than the CPUs the
    /// process may use (`RUSTING_THREADS`, or every CPU), so the simulation thread keeps one.
    pub fn from_environment() -> Result<Self, String> {
        Ok(JobWorkers::new(workers_from_environment()?))
    }

    /// Runs deadline jobs on `workers` threads from now on (jobs already queued stay queued and
    /// are taken by the new threads or, when due, by the simulation thread).
    pub fn set_workers(&self, workers: usize) {
        let workers = workers.min(MAX_JOB_WORKERS);
        let threads = (workers > 0)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(workers)
                    .thread_name(|k| format!("rusting-job-{k}"))
                    .build()
                    .ok()
            })
            .flatten()
            .map(Arc::new);
        let started = threads.is_some();
        if let Ok(mut slot) = self.pool.threads.lock() {
            *slot = threads;
        }
        let running = if started { workers } else { 0 };
        self.pool.workers.store(running as u64, Ordering::Relaxed);
        // Jobs queued while there were no workers: hand them to the new threads.
        let queued = self.pool.queue.lock().map(|q| q.len()).unwrap_or(0);
        if started && let Some(threads) = self.pool.threads.lock().ok().and_then(|t| t.clone()) {
            for _ in 0..queued {
                let pool = Arc::clone(&self.pool);
                threads.spawn(move || {
                    pool.run_one();
                });
            }
        }
    }

    /// The job threads running.
    pub fn workers(&self) -> usize {
        self.pool.workers.load(Ordering::Relaxed) as usize
    }

    /// Makes every worker wait `delay` before each job it takes: for tests that prove a result
    /// never depends on how fast the workers are. Never use it in a game.
    pub fn slow_down_for_tests(&self, delay: Duration) {
        let nanos = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
        self.pool.delay_ns.store(nanos, Ordering::Relaxed);
    }

    /// How this machine kept up so far.
    pub fn stats(&self) -> JobStats {
        self.pool.stats.lock().map(|s| *s).unwrap_or_default()
    }
}

/// The worker count the environment asks for (see [`JobWorkers::from_environment`]).
pub fn workers_from_environment() -> Result<usize, String> {
    if let Ok(value) = std::env::var(JOB_WORKERS_VARIABLE)
        && !value.trim().is_empty()
    {
        return match value.trim().parse::<usize>() {
            Ok(n) if n <= MAX_JOB_WORKERS => Ok(n),
            _ => Err(format!(
                "{JOB_WORKERS_VARIABLE}={value}: expected a whole number of job worker threads \
                 from 0 to {MAX_JOB_WORKERS}"
            )),
        };
    }
    let cpus = std::env::var("RUSTING_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1);
    Ok(cpus.saturating_sub(1).min(MAX_JOB_WORKERS))
}
