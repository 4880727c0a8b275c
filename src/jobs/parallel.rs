//! Parallel work inside a tick that gives the same bits on 1, 2 and N threads: a fixed number of
//! jobs (never "one per thread"), job `k` writing only its own buffer, the buffers merged and the
//! partial results combined in job order afterwards.
//!
//! Pushing into a shared `Mutex<Vec>` from a parallel iterator orders the items by which thread
//! got the lock first, and summing floats into one accumulator rounds in the order threads
//! finish: both differ from run to run. Here the order is the job index, always, so the thread
//! count changes only how fast it goes. The jobs run on rayon's global pool (`RUSTING_THREADS`).
//!
//! This module must never order anything by thread or by time.

use std::ops::Range;

use rayon::prelude::*;

/// The most jobs one parallel call may split its work into.
pub const MAX_PARALLEL_JOBS: usize = 65_536;

/// The items of job `k` when `len` items are split into `jobs` jobs: contiguous ranges, in order,
/// whose sizes differ by at most one (the first `len % jobs` jobs take one more). The split
/// depends on `len` and `jobs` only.
pub fn job_range(len: usize, jobs: usize, k: usize) -> Range<usize> {
    let jobs = jobs.max(1);
    let base = len / jobs;
    let extra = len % jobs;
    let start = k * base + k.min(extra);
    let size = base + usize::from(k < extra);
    start.min(len)..(start + size).min(len)
}

/// Runs `work(k, &mut buffer)` for every job `k` in `0..jobs`, in parallel, each with a buffer of
/// its own, and returns the buffers' items concatenated in job order.
pub fn parallel_jobs<T, F>(jobs: usize, work: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize, &mut Vec<T>) + Sync,
{
    let jobs = jobs.min(MAX_PARALLEL_JOBS);
    let buffers: Vec<Vec<T>> = (0..jobs)
        .into_par_iter()
        .map(|k| {
            let mut buffer = Vec::new();
            work(k, &mut buffer);
            buffer
        })
        .collect();
    let total = buffers.iter().map(Vec::len).sum();
    let mut merged = Vec::with_capacity(total);
    for buffer in buffers {
        merged.extend(buffer);
    }
    merged
}

/// `items` split into `jobs` jobs ([`job_range`]), `work(k, slice, &mut buffer)` run for each
/// in parallel, the buffers concatenated in job order.
pub fn parallel_chunks<I, T, F>(items: &[I], jobs: usize, work: F) -> Vec<T>
where
    I: Sync,
    T: Send,
    F: Fn(usize, &[I], &mut Vec<T>) + Sync,
{
    let jobs = jobs.clamp(1, MAX_PARALLEL_JOBS);
    parallel_jobs(jobs, |k, out| {
        work(k, &items[job_range(items.len(), jobs, k)], out)
    })
}

/// A reduction in job order: `part(k)` for every job `k` in `0..jobs` in parallel, then
/// `combine` folded over the parts from job 0 up, on the calling thread. With floats, the sum
/// rounds the same way on every thread count because the parts and their order are fixed.
/// `None` when `jobs` is 0.
pub fn parallel_reduce<P, F, C>(jobs: usize, part: F, combine: C) -> Option<P>
where
    P: Send,
    F: Fn(usize) -> P + Sync + Send,
    C: FnMut(P, P) -> P,
{
    let jobs = jobs.min(MAX_PARALLEL_JOBS);
    let parts: Vec<P> = (0..jobs).into_par_iter().map(part).collect();
    parts.into_iter().reduce(combine)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if the ranges overlap, leave a gap or go out of order.
    #[test]
    fn job_ranges_cover_the_items_in_order() {
        for len in [0, 1, 7, 100, 101] {
            for jobs in [1, 2, 3, 8, 200] {
                let mut next = 0;
                for k in 0..jobs {
                    let range = job_range(len, jobs, k);
                    assert_eq!(range.start, next, "len {len} jobs {jobs} k {k}");
                    next = range.end;
                }
                assert_eq!(next, len);
            }
        }
    }
}
