//! [`JobKind`]: a kind of deadline job, a pure function from an owned input to an output, and
//! [`JobId`], the number a request gets.
//!
//! This module must never run a job: it only says what one is.

use crate::state::SimState;

/// A kind of deadline job: a pure function from an input to an output, run off the simulation
/// thread and delivered a fixed number of ticks after it was asked for.
///
/// `run` must depend on its input only: no clock, no global, no thread-local, no randomness that
/// is not in the input. The input is owned (a copy, or an immutable snapshot such as an
/// `Arc<GridMap>`), never a reference into live state, and it is simulation state while the job
/// is pending: hashed, snapshotted and compared like any declared state.
pub trait JobKind: Send + Sync + 'static {
    /// The kind's stable name: what the hash tag, comparisons, reports and errors call it.
    const NAME: &'static str;
    /// What a request carries.
    type Input: SimState + Clone + PartialEq + Send + Sync + 'static;
    /// What the job computes.
    type Output: Clone + Send + Sync + 'static;
    /// Computes the output. It may take many ticks' time; it must never read anything but
    /// `input`.
    fn run(input: &Self::Input) -> Self::Output;
}

/// A request's number: assigned in request order, per kind, from 0; the same on every machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub u64);

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JobId {}", self.0)
    }
}

impl SimState for JobId {
    const NAME: &'static str = "JobId";
    fn hash_state(&self, hasher: &mut crate::state::StateHasher) {
        hasher.u64(self.0);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        out(path, self.0.to_string());
    }
}
