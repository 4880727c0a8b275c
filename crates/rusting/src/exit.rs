//! Exit codes and stable error codes: the table scripts and CI rely on (see `docs/cli.md`).

use std::process::ExitCode;

/// How a subcommand ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Exit code 0: the check passed.
    Success,
    /// Exit code 1: the check ran and found a difference.
    Failed,
    /// Exit code 3: an input (project, report) could not be read.
    BadInput,
    /// Exit code 4: building or running the game failed.
    BuildOrRun,
}

impl Outcome {
    /// The process exit code.
    pub fn code(self) -> ExitCode {
        ExitCode::from(match self {
            Outcome::Success => 0,
            Outcome::Failed => 1,
            Outcome::BadInput => 3,
            Outcome::BuildOrRun => 4,
        })
    }
}

/// A failure with its stable code, printed as one line: `CODE: message`.
#[derive(Debug)]
pub struct Failure {
    /// The stable error code, e.g. `DETERMINISM_DIVERGED`.
    pub code: &'static str,
    /// What happened.
    pub message: String,
    /// The exit code it maps to.
    pub outcome: Outcome,
}

impl Failure {
    /// Bad input (`Outcome::BadInput`) with a code and message: what a command refuses before it
    /// builds or runs anything.
    pub fn bad_input(code: &'static str, message: impl Into<String>) -> Self {
        Failure::new(code, Outcome::BadInput, message)
    }

    /// A failure with a code, message and outcome.
    pub fn new(code: &'static str, outcome: Outcome, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
            outcome,
        }
    }
}
