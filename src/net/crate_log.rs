//! [`CrateLog`]: what the rollback crate reports about itself, logged in the engine's words.
//!
//! fortress-rollback checks its own invariants as it runs and reports a broken one as a
//! violation, to the observer of the session it was made in (from the session's own calls:
//! adding input, advancing, polling; a report outside those goes to the crate's built-in logger).
//! That built-in observer logs each with the source location as the compiler saw it,
//! which for a crate from the registry is a path into the machine's cargo cache
//! (`/root/.cargo/registry/src/index.crates.io-.../src/sessions/p2p_session.rs:1229`): noise to a
//! player and a different line on every machine. This observer logs the same report as one line,
//! `rollback session: <message> (<kind>, frame <n>, <context>; fortress-rollback
//! sessions/p2p_session.rs:1229)`, with the location shortened to the crate's own file, at the
//! violation's severity. This module must never change the session: it only writes log lines.

use bevy::log::{error, warn};
use fortress_rollback::telemetry::{SpecViolation, ViolationObserver, ViolationSeverity};

/// Logs the rollback crate's violations (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct CrateLog;

impl ViolationObserver for CrateLog {
    fn on_violation(&self, violation: &SpecViolation) {
        let line = describe(violation);
        match violation.severity {
            ViolationSeverity::Warning => warn!("{line}"),
            _ => error!("{line}"),
        }
    }
}

/// The location inside the crate: the part after its `src/` folder.
fn crate_file(location: &str) -> &str {
    location
        .rsplit_once("/src/")
        .map_or(location, |(_, inside)| inside)
}

/// The one-line wording of a violation.
fn describe(violation: &SpecViolation) -> String {
    let mut details = vec![violation.kind.as_str().to_owned()];
    if let Some(frame) = violation.frame.filter(|frame| !frame.is_null()) {
        details.push(format!("frame {}", frame.as_i32()));
    }
    details.extend(
        violation
            .context
            .iter()
            .map(|(key, value)| format!("{key} {value}")),
    );
    format!(
        "rollback session: {} ({}; fortress-rollback {})",
        violation.message,
        details.join(", "),
        crate_file(violation.location)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use fortress_rollback::Frame;
    use fortress_rollback::telemetry::ViolationKind;

    /// A report from the registry reads without the cargo cache's path.
    #[test]
    fn a_violation_reads_without_the_registry_path() {
        let mut violation = SpecViolation::new(
            ViolationSeverity::Warning,
            ViolationKind::FrameSync,
            "the remote frame advantage is out of range",
            "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/fortress-rollback-0.13.0/src/sessions/p2p_session.rs:1229",
        );
        violation.frame = Some(Frame::new(42));
        violation.context.insert("player".into(), "1".into());
        assert_eq!(
            describe(&violation),
            "rollback session: the remote frame advantage is out of range (frame_sync, frame 42, \
             player 1; fortress-rollback sessions/p2p_session.rs:1229)"
        );
        assert_eq!(crate_file("src/lib.rs:3"), "src/lib.rs:3");
    }
}
