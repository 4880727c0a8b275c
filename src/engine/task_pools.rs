//! [`TaskPoolsPlugin`]: bevy's compute, async-compute and I/O pools, and the main thread's share
//! of their work once a frame.
//!
//! bevy's own `TaskPoolPlugin` ticks the main thread's local executor 300 times every frame
//! (100 rounds over the three pools, which share that executor), whether or not anything is
//! queued. A headless game builds bevy without its `multi_threaded` feature, where every pool's
//! work runs on that executor, and a frame of the starter game is about 25 microseconds: those
//! empty ticks were an eighth of it. This plugin ticks the same executor until it has nothing left
//! to run, at most as many times as bevy's, so the tasks ready when the frame ends run as they did
//! and an idle frame pays one empty tick. One difference: a main-thread task that another thread
//! wakes after the executor was found empty runs in the next frame, where bevy's remaining empty
//! ticks might have caught it in this one.
//!
//! Tasks never touch simulation state (no fixed system may wait on one), so how often they are
//! ticked cannot change a hash. This module must never run a task from a fixed schedule.

use bevy::app::{App, Last, Plugin, TaskPoolOptions};
use bevy::ecs::system::NonSendMarker;
use bevy::tasks::ComputeTaskPool;

/// The most local tasks run on the main thread in one frame: bevy's own bound (100 rounds of
/// three pools).
pub const MAX_MAIN_THREAD_TICKS: usize = 300;

/// Starts bevy's task pools (unless [`limit_worker_threads`](super::threads::limit_worker_threads)
/// started them first) and runs the main thread's local tasks in `Last`, until none is ready.
#[derive(Debug, Default)]
pub struct TaskPoolsPlugin {
    /// How the pools are sized when this plugin starts them.
    pub options: TaskPoolOptions,
}

impl Plugin for TaskPoolsPlugin {
    fn build(&self, app: &mut App) {
        self.options.create_default_pools();
        app.add_systems(Last, run_main_thread_tasks);
    }
}

/// Runs the main thread's ready local tasks, at most [`MAX_MAIN_THREAD_TICKS`], and returns how
/// many ran. Every pool shares the thread's one local executor, so ticking it once ticks them all.
pub fn run_main_thread_tasks_now() -> usize {
    ComputeTaskPool::get().with_local_executor(|executor| {
        let mut ran = 0;
        while ran < MAX_MAIN_THREAD_TICKS && executor.try_tick() {
            ran += 1;
        }
        ran
    })
}

/// The `Last` system: [`run_main_thread_tasks_now`] on the main thread.
fn run_main_thread_tasks(_main_thread: NonSendMarker) {
    run_main_thread_tasks_now();
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use bevy::tasks::ComputeTaskPool;

    use super::*;

    /// Fails if the loop stops before the queue is empty (a spawned task left unrun for a frame),
    /// or if it runs past bevy's bound.
    #[test]
    fn ready_local_tasks_run_in_one_frame_up_to_the_bound() {
        let mut app = App::new();
        app.add_plugins(TaskPoolsPlugin::default());
        let ran = Arc::new(AtomicUsize::new(0));
        let spawn = |count: usize| {
            for _ in 0..count {
                let ran = ran.clone();
                // Queued on the executor itself: headless bevy's `spawn` runs a task at once.
                ComputeTaskPool::get().with_local_executor(|executor| {
                    executor
                        .spawn(async move {
                            ran.fetch_add(1, Ordering::Relaxed);
                        })
                        .detach();
                });
            }
        };
        spawn(5);
        app.update();
        assert_eq!(
            ran.load(Ordering::Relaxed),
            5,
            "every ready task runs in the frame"
        );
        spawn(MAX_MAIN_THREAD_TICKS + 20);
        app.update();
        assert_eq!(ran.load(Ordering::Relaxed), 5 + MAX_MAIN_THREAD_TICKS);
        app.update();
        assert_eq!(ran.load(Ordering::Relaxed), 5 + MAX_MAIN_THREAD_TICKS + 20);
        assert_eq!(
            run_main_thread_tasks_now(),
            0,
            "an idle executor runs nothing"
        );
    }
}
