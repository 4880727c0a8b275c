//! [`Slot`]: one requested job's result as it is computed: queued, running, done or panicked.
//!
//! A slot is claimed once, by a worker or by the simulation thread, whichever comes first; the
//! other never runs it. The simulation thread waiting for a due slot first helps (runs other
//! queued jobs), then waits on the slot's condition variable: it never sleeps for a time. A
//! panic inside a job is caught where the job ran and kept in the slot, so the simulation thread
//! can name the job when it is due. This module must never look at simulation state.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex};

use super::error::JobLabel;
use super::kind::JobKind;
use super::pool::{Runnable, WorkerPool};

thread_local! {
    /// The job this thread is running, for a panic hook that wants to name it.
    static RUNNING: RefCell<Option<JobLabel>> = const { RefCell::new(None) };
    /// Where the running job panicked, as a panic hook noted it.
    static PANICKED_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The job the calling thread is running right now, if it is running one (a panic hook calls it
/// to name the job that panicked).
pub fn running_job() -> Option<JobLabel> {
    RUNNING.with(|running| running.borrow().clone())
}

/// Notes where the job this thread runs panicked (`file:line:column`), from a panic hook, so
/// the [`JobPanicked`](super::JobPanicked) raised at the job's due tick names the place.
pub fn note_job_panic_location(location: String) {
    PANICKED_AT.with(|at| *at.borrow_mut() = Some(location));
}

enum State<O> {
    Queued,
    Running,
    Done(Arc<O>),
    Panicked(String, Option<String>),
}

/// One job's input and, once computed, its result.
pub(crate) struct Slot<K: JobKind> {
    pub(crate) input: K::Input,
    label: JobLabel,
    state: Mutex<State<K::Output>>,
    finished: Condvar,
}

/// What waiting for a slot found.
pub(crate) enum Outcome<O> {
    /// The result, and whether the slot had to be waited for.
    Done {
        output: Arc<O>,
        late: bool,
        ran_here: bool,
    },
    /// The job panicked with this message, at this place when a panic hook noted it.
    Panicked(String, Option<String>),
}

impl<K: JobKind> Slot<K> {
    pub(crate) fn new(input: K::Input, label: JobLabel) -> Self {
        Slot {
            input,
            label,
            state: Mutex::new(State::Queued),
            finished: Condvar::new(),
        }
    }

    /// Claims the slot if nobody has: `true` means the caller must run it.
    fn claim(&self) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        if matches!(*state, State::Queued) {
            *state = State::Running;
            true
        } else {
            false
        }
    }

    fn run_claimed(&self) {
        RUNNING.with(|running| *running.borrow_mut() = Some(self.label.clone()));
        PANICKED_AT.with(|at| *at.borrow_mut() = None);
        crate::runtime::guard_worker(|| {
            format!(
                "before {} (after this thread's earlier work, outside the simulation)",
                self.label
            )
        });
        let result = catch_unwind(AssertUnwindSafe(|| K::run(&self.input)));
        crate::runtime::guard_worker(|| format!("while running {}", self.label));
        RUNNING.with(|running| *running.borrow_mut() = None);
        let finished = match result {
            Ok(output) => State::Done(Arc::new(output)),
            Err(payload) => State::Panicked(
                panic_message(payload.as_ref()),
                PANICKED_AT.with(|at| at.borrow_mut().take()),
            ),
        };
        if let Ok(mut state) = self.state.lock() {
            *state = finished;
        }
        self.finished.notify_all();
    }

    fn finished(&self) -> Option<Outcome<K::Output>> {
        let state = self.state.lock().ok()?;
        match &*state {
            State::Done(output) => Some(Outcome::Done {
                output: Arc::clone(output),
                late: false,
                ran_here: false,
            }),
            State::Panicked(message, location) => {
                Some(Outcome::Panicked(message.clone(), location.clone()))
            }
            State::Queued | State::Running => None,
        }
    }

    /// The result, waiting for it (and running queued jobs meanwhile) if it is not done.
    pub(crate) fn wait(&self, pool: &WorkerPool) -> Outcome<K::Output> {
        if let Some(done) = self.finished() {
            return done;
        }
        let mut ran_here = false;
        loop {
            if self.claim() {
                self.run_claimed();
                ran_here = true;
            }
            if let Some(done) = self.finished() {
                return late(done, ran_here);
            }
            // Running on a worker: help with the queue, then wait for the worker.
            if pool.run_one() {
                continue;
            }
            let Ok(state) = self.state.lock() else {
                return Outcome::Panicked(
                    "the job's result was lost to a poisoned lock".into(),
                    None,
                );
            };
            let state = self
                .finished
                .wait_while(state, |s| matches!(s, State::Running))
                .ok();
            drop(state);
            if let Some(done) = self.finished() {
                return late(done, ran_here);
            }
        }
    }
}

fn late<O>(done: Outcome<O>, ran_here: bool) -> Outcome<O> {
    match done {
        Outcome::Done { output, .. } => Outcome::Done {
            output,
            late: true,
            ran_here,
        },
        panicked => panicked,
    }
}

impl<K: JobKind> Runnable for Slot<K> {
    fn run_if_queued(&self) {
        if self.claim() {
            self.run_claimed();
        }
    }
}

/// A panic payload's message, as `std` prints it.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(a panic without a message)".to_owned()
    }
}
