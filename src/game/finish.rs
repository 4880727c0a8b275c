//! The end of a run, in every mode: the undeclared-state verdict, the state-hash report and the
//! one-line summary.
//!
//! This module must never run a tick.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::error::GameError;
use super::project::Project;
use crate::engine::App;

/// Every tick's `(tick, hash)`, shared with the tick hook that collects them.
pub type SharedHashes = Arc<Mutex<Vec<(u64, u64)>>>;

/// The ticks detailed down to the field, shared with the tick hook that captures them.
pub type SharedDetails = Arc<Mutex<Vec<crate::record::StateDetail>>>;

/// A copy of what a tick hook collected so far (nothing, if the hook panicked while holding it).
pub(crate) fn taken<T: Clone>(shared: &Mutex<Vec<T>>) -> Vec<T> {
    shared.lock().map(|v| v.clone()).unwrap_or_default()
}

/// Writes the state-hash report if asked and sums the run up.
pub(crate) fn finish_run(
    project: &Project,
    app: &mut App,
    run: &RunRecord<'_>,
) -> Result<Option<String>, GameError> {
    let failed = failed_check(app.undeclared_state(), app.float_env_failure());
    run.finish(project, app.world_mut(), failed, "headless")
}

/// The check that fails the run, if one found something: state nobody declared, else a change of
/// the floating-point environment (under the policy that fails on it).
pub(crate) fn failed_check(
    undeclared: Option<&crate::state::UndeclaredState>,
    float: Option<&crate::runtime::FloatEnvChanged>,
) -> Option<GameError> {
    undeclared
        .cloned()
        .map(GameError::from)
        .or_else(|| float.cloned().map(GameError::from))
}

/// The most fields of one resource a summary line shows.
const SUMMARY_FIELDS: usize = 8;

/// One of the game's resources as its run's summary shows it: `Score: points 50, missed 2`, at
/// most [`SUMMARY_FIELDS`] fields, then how many there are in all.
fn resource_line(resource: &crate::record::ComponentDetail) -> String {
    let shown: Vec<String> = resource
        .fields
        .iter()
        .take(SUMMARY_FIELDS)
        .map(|(path, value)| {
            if path.is_empty() {
                value.clone()
            } else {
                format!("{path} {value}")
            }
        })
        .collect();
    let mut line = format!("{}: {}", resource.name, shown.join(", "));
    if resource.fields.is_empty() {
        line.push_str("(no fields)");
    } else if resource.fields.len() > SUMMARY_FIELDS {
        let _ = write!(line, ", ... ({} fields in all)", resource.fields.len());
    }
    line
}

/// What a run collected for its end: where the state-hash report goes, the tick hashes and the
/// detailed ticks.
pub(crate) struct RunRecord<'a> {
    /// `RUSTING_STATE_HASH_OUT`.
    pub report_path: Option<&'a Path>,
    /// Every tick's hash.
    pub hashes: &'a Mutex<Vec<(u64, u64)>>,
    /// `RUSTING_DETAIL_TICKS`' details.
    pub details: &'a Mutex<Vec<crate::record::StateDetail>>,
}

impl RunRecord<'_> {
    /// Fails with a failed check (`failed`), writes the state-hash report if asked, and sums the
    /// run up:
    /// `<game>: ran <n> ticks <how> (<k> colliders); world-state hash <hash>`, a line for each
    /// simulation resource the game declares (its fields as the run left them), and a line of
    /// deadline-job counts when the game requested any.
    pub(crate) fn finish(
        &self,
        project: &Project,
        world: &mut bevy::prelude::World,
        failed: Option<GameError>,
        how: &str,
    ) -> Result<Option<String>, GameError> {
        if let Some(failed) = failed {
            return Err(failed);
        }
        if let Some(path) = self.report_path {
            let mut report = crate::record::StateHashReport::capture(world, &taken(self.hashes));
            report.details = taken(self.details);
            report.write(path)?;
        }
        let mut summary = String::new();
        let bodies = world
            .query::<&crate::physics::Collider>()
            .iter(world)
            .count();
        let hash = world
            .resource::<crate::state::StateHashes>()
            .cpu
            .back()
            .map_or(0, |&(_, hash)| hash);
        let ticks = world.resource::<crate::runtime::FrameTime>().fixed_tick;
        let _ = write!(
            summary,
            "{}: ran {ticks} ticks {how} ({bodies} colliders); world-state hash {hash:016x}",
            project.manifest.name,
        );
        for resource in crate::record::StateDetail::game_resources(world) {
            let _ = write!(
                summary,
                "\n{}: {}",
                project.manifest.name,
                resource_line(&resource)
            );
        }
        if let Some(jobs) = crate::jobs::JobStats::of(world) {
            let _ = write!(summary, "\n{}: {jobs}", project.manifest.name);
        }
        Ok(Some(summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::ComponentDetail;

    fn resource(fields: &[(&str, &str)]) -> ComponentDetail {
        ComponentDetail {
            name: "Score".to_owned(),
            hash: "0".repeat(16),
            fields: fields
                .iter()
                .map(|(path, value)| ((*path).to_owned(), (*value).to_owned()))
                .collect(),
        }
    }

    /// A resource reads as its fields, at most eight of them, then how many there are.
    #[test]
    fn a_resource_line_names_its_fields() {
        assert_eq!(
            resource_line(&resource(&[("points", "50"), ("missed", "2")])),
            "Score: points 50, missed 2"
        );
        assert_eq!(resource_line(&resource(&[("", "7")])), "Score: 7");
        assert_eq!(resource_line(&resource(&[])), "Score: (no fields)");
        let many: Vec<(String, String)> = (0..10)
            .map(|k| (format!("slots[{k}]"), k.to_string()))
            .collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(p, v)| (p.as_str(), v.as_str())).collect();
        assert_eq!(
            resource_line(&resource(&many)),
            "Score: slots[0] 0, slots[1] 1, slots[2] 2, slots[3] 3, slots[4] 4, slots[5] 5, \
             slots[6] 6, slots[7] 7, ... (10 fields in all)"
        );
    }
}
