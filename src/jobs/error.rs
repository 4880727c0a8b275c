//! The jobs' errors: [`JobPanicked`] (a job's function panicked) and [`OutsideError`] (an
//! outside entry was refused at the queue).
//!
//! This module must never run anything: it only describes what went wrong.

/// Which job: its kind, number and the tick that asked for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobLabel {
    /// The kind's [`JobKind::NAME`](super::JobKind::NAME).
    pub kind: &'static str,
    /// The request's number.
    pub id: super::JobId,
    /// The tick that requested it (ticks completed, counting it).
    pub requested_at: u64,
}

impl std::fmt::Display for JobLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "job `{}` ({}, requested at tick {})",
            self.kind, self.id, self.requested_at
        )
    }
}

/// A deadline job's function panicked. The simulation thread panics with this value as the
/// payload at the job's due tick (`std::panic::panic_any`), so the run stops there, never hangs
/// and never goes on without the result; a run through `rusting` reports it as `JOB_PANICKED`.
///
/// In a game built with `panic = "abort"` nothing can catch the job's panic: the process stops
/// where the job ran, at once, naming the job (`rusting_game!`'s panic hook does).
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{job} panicked{}: {message}", location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default())]
pub struct JobPanicked {
    /// The job.
    pub job: JobLabel,
    /// What the panic said.
    pub message: String,
    /// Where it panicked (`file:line:column`), when a panic hook noted it
    /// ([`note_job_panic_location`](super::note_job_panic_location)).
    pub location: Option<String>,
}

/// Why an outside entry was refused.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutsideError {
    /// The entry's bytes are over [`MAX_OUTSIDE_BYTES`](super::MAX_OUTSIDE_BYTES).
    #[error(
        "outside entry on channel `{channel}` is {bytes} bytes, over the limit of {limit} bytes \
         an entry may have (split it, or send a reference the game can load)"
    )]
    TooLarge {
        /// The entry's channel.
        channel: String,
        /// Its size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The channel name is empty or over [`MAX_CHANNEL_BYTES`](super::MAX_CHANNEL_BYTES).
    #[error("outside channel name `{channel}` must be 1 to {limit} bytes")]
    Channel {
        /// The channel asked for.
        channel: String,
        /// The limit.
        limit: usize,
    },
    /// More entries are waiting for the next tick than
    /// [`MAX_OUTSIDE_PER_TICK`](super::MAX_OUTSIDE_PER_TICK).
    #[error(
        "{limit} outside entries are already waiting for the next tick; entry on channel \
         `{channel}` refused"
    )]
    Full {
        /// The refused entry's channel.
        channel: String,
        /// The limit.
        limit: usize,
    },
}
