//! How many worker threads a game's process runs: every CPU by default, or the number
//! `RUSTING_THREADS` asks for, in rayon's global pool and bevy's task pools alike.
//!
//! The simulation must not care: the engine's own parallel work (the CPU solver's contact batches)
//! gives the same bits on one thread as on many, and `rusting determinism` proves it for a game by
//! running its release build once more with `RUSTING_THREADS=1`. A variable the game reads itself,
//! rather than an operating-system tool pinning the process (`taskset` exists on Linux only), makes
//! that configuration the same on Linux, macOS and Windows, so the same check runs on every machine
//! of a CI matrix.
//!
//! Both pools are process-wide and start once: the limit must be set before anything uses rayon
//! or builds an engine `App` ([`run_game`](crate::game::run_game) applies it first thing). A pool
//! that already runs another number of threads is an error, never a silent no-op. This module must
//! never change simulation state.

use std::num::NonZeroUsize;

use bevy::tasks::{AsyncComputeTaskPool, ComputeTaskPool, IoTaskPool};

/// The environment variable holding the number of worker threads (a whole number from 1).
pub const THREADS_VARIABLE: &str = "RUSTING_THREADS";

/// Why the worker-thread limit cannot be applied.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThreadsError {
    /// `RUSTING_THREADS` is not a whole number of at least 1.
    #[error("{THREADS_VARIABLE}={value}: expected a whole number of worker threads, at least 1")]
    Invalid {
        /// The variable's value.
        value: String,
    },
    /// A pool was started before the limit was applied, with another number of threads.
    #[error(
        "{pool} already runs {running} threads, so {THREADS_VARIABLE}={wanted} cannot apply; set \
         the limit before anything uses rayon or builds an engine App"
    )]
    AlreadyStarted {
        /// Which pool.
        pool: &'static str,
        /// The threads it runs.
        running: usize,
        /// The threads asked for.
        wanted: usize,
    },
}

/// The limit `RUSTING_THREADS` asks for, or `None` when it is unset or empty.
pub fn threads_from_environment() -> Result<Option<NonZeroUsize>, ThreadsError> {
    match std::env::var(THREADS_VARIABLE) {
        Ok(value) if !value.trim().is_empty() => parse_threads(&value).map(Some),
        _ => Ok(None),
    }
}

/// `text` as a number of worker threads.
pub fn parse_threads(text: &str) -> Result<NonZeroUsize, ThreadsError> {
    text.trim()
        .parse::<NonZeroUsize>()
        .map_err(|_| ThreadsError::Invalid {
            value: text.to_owned(),
        })
}

/// Starts rayon's global pool and bevy's compute, async-compute and I/O pools with `threads`
/// threads each (bevy's pools run on the calling thread when bevy is built without its
/// `multi_threaded` feature, as headless games are). Idempotent for the same count.
pub fn limit_worker_threads(threads: NonZeroUsize) -> Result<(), ThreadsError> {
    let wanted = threads.get();
    // An error here means the global pool exists already; what it runs decides.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(wanted)
        .build_global();
    let running = rayon::current_num_threads();
    if running != wanted {
        return Err(ThreadsError::AlreadyStarted {
            pool: "rayon's global pool",
            running,
            wanted,
        });
    }
    // Each pool is created on first use; creating it here fixes its size for the process. A pool
    // created earlier is checked instead.
    let created = std::cell::Cell::new(0);
    let build = |name: &str| {
        created.set(created.get() + 1);
        bevy::tasks::TaskPoolBuilder::new()
            .num_threads(wanted)
            .thread_name(format!("{name} (RUSTING_THREADS={wanted})"))
            .build()
    };
    let pools = [
        (
            "bevy's compute pool",
            ComputeTaskPool::get_or_init(|| build("Compute Task Pool")).thread_num(),
        ),
        (
            "bevy's async compute pool",
            AsyncComputeTaskPool::get_or_init(|| build("Async Compute Task Pool")).thread_num(),
        ),
        (
            "bevy's I/O pool",
            IoTaskPool::get_or_init(|| build("IO Task Pool")).thread_num(),
        ),
    ];
    if created.get() == pools.len() {
        return Ok(());
    }
    // A pool started before: it must run the threads asked for, unless bevy is built without its
    // `multi_threaded` feature, where every pool runs on the calling thread and reports 1.
    let single_threaded_bevy = || {
        bevy::tasks::TaskPoolBuilder::new()
            .num_threads(2)
            .build()
            .thread_num()
            == 1
    };
    for (pool, running) in pools {
        if running != wanted && !(running == 1 && single_threaded_bevy()) {
            return Err(ThreadsError::AlreadyStarted {
                pool,
                running,
                wanted,
            });
        }
    }
    Ok(())
}

/// Applies `RUSTING_THREADS` if it is set: what [`run_game`](crate::game::run_game) calls before
/// building the app. Returns the limit applied.
pub fn apply_thread_limit_from_environment() -> Result<Option<NonZeroUsize>, ThreadsError> {
    let limit = threads_from_environment()?;
    if let Some(threads) = limit {
        limit_worker_threads(threads)?;
    }
    Ok(limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_parse_from_one() {
        assert_eq!(parse_threads(" 4 ").map(NonZeroUsize::get), Ok(4));
        for bad in ["0", "-1", "two", "1.5", ""] {
            let error = parse_threads(bad).unwrap_err();
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("RUSTING_THREADS={bad}: expected")),
                "{error}"
            );
        }
    }
}
