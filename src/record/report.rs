//! [`StateHashReport`]: a run's hashes on disk, and comparing two of them.
//!
//! A report holds every tick's world-state hash and, after the last tick, each simulation entity's
//! `SimId`, hash, `Name`, `SceneId` and per-component hashes. Hashes are written as 16-digit hex strings so
//! that every JSON reader keeps all 64 bits. Reports are written atomically (a temporary file in the
//! same directory, then a rename), so a crash never leaves half a report where a good one was.
//! Comparing two reports pairs entities by `SimId`, which is the same in every run of the same
//! scene and input whatever presentation either run had, so an entity added in one run does not
//! make every later entity differ.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bevy::prelude::{Name, World};
use serde::{Deserialize, Serialize};

use super::detail::{DetailDifference, StateDetail, compare_details};
use crate::runtime::json_file;
use crate::scene::SceneId;
use crate::state::hash::{EntityState, entity_states};
use crate::state::hasher::hex;

/// The report format version this engine writes and reads. Version 2 names entities by their
/// `SimId` (version 1 held `Entity` bits, which presentation could shift).
pub const REPORT_FORMAT_VERSION: u32 = 2;

/// One tick's hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TickHash {
    /// Ticks completed.
    pub tick: u64,
    /// The world-state hash, 16 hex digits.
    pub hash: String,
    /// The hash of the GPU bodies after the same tick, when the run simulated GPU bodies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_hash: Option<String>,
}

/// A tick's CPU hash with its GPU hash folded in (the CPU hash alone without GPU bodies): one
/// value per tick for checks and plots that compare runs tick by tick.
pub fn fold_gpu_hash(cpu: u64, gpu: Option<u64>) -> u64 {
    gpu.map_or(cpu, |gpu| cpu ^ gpu.rotate_left(1))
}

/// One entity's state after the last tick.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityReport {
    /// The entity's simulation id (`SimId`).
    pub sim_id: u64,
    /// Its `Name`, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its `SceneId`, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene_id: Option<u64>,
    /// The hash of all its simulation components.
    pub hash: String,
    /// Each simulation component's hash, by component name.
    pub components: BTreeMap<String, String>,
}

/// A run's hashes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateHashReport {
    /// Always [`REPORT_FORMAT_VERSION`].
    pub format_version: u32,
    /// Every tick's hash, in order.
    pub ticks: Vec<TickHash>,
    /// Every simulation entity after the last tick, in `SimId` order.
    pub entities: Vec<EntityReport>,
    /// The state of the ticks the run was asked to detail (`RUSTING_DETAIL_TICKS`), down to the
    /// field, so that comparing two reports names the field that differs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<StateDetail>,
    /// How this run's machine kept up with its deadline jobs (never part of any comparison: a
    /// slower machine stalls more and computes the same bits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<crate::jobs::JobStats>,
    /// The layout of the run's simulation state: two reports of different layouts are not
    /// compared tick by tick, their first differing type or field is named instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<crate::state::LayoutFingerprint>,
}

/// The most ticks a state-hash report may hold, as a replay may: 19 days at 60 Hz.
pub const MAX_REPORT_TICKS: u64 = super::replay::MAX_REPLAY_TICKS;

/// The most ticks a report may detail down to the field (what a run may be asked to detail:
/// `game::MAX_DETAIL_TICKS` is this).
pub const MAX_REPORT_DETAILS: u64 = 600;

/// Why a report cannot be read or written.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ReportError {
    /// The file could not be read or written.
    #[error("{file}: {message}", file = file.display())]
    Io {
        /// The report file.
        file: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// Not a valid report.
    #[error("{file}:{line}:{column}: not a state-hash report: {message}", file = file.display())]
    Json {
        /// The report file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A report over one of the format's limits: the JSON pointer of the part that is, and what
    /// the limit is.
    #[error("{file}: {pointer}: {message}", file = file.display())]
    Limit {
        /// The report file.
        file: PathBuf,
        /// The JSON pointer of the part over the limit.
        pointer: String,
        /// How large it is and the limit.
        message: String,
    },
    /// A report of another format version.
    #[error("{file}: report format_version {found} is not supported (this engine reads {supported})", file = file.display())]
    Version {
        /// The report file.
        file: PathBuf,
        /// What the file says.
        found: u32,
        /// What this engine reads.
        supported: u32,
    },
}

fn entity_report(world: &World, state: &EntityState) -> EntityReport {
    let entity = world.entity(state.entity);
    EntityReport {
        sim_id: state.sim_id.0,
        name: entity.get::<Name>().map(|n| n.as_str().to_owned()),
        scene_id: entity.get::<SceneId>().map(|id| id.0),
        hash: hex(state.hash),
        components: state
            .components
            .iter()
            .map(|(name, hash)| ((*name).to_owned(), hex(*hash)))
            .collect(),
    }
}

impl StateHashReport {
    /// A report of `ticks` (every tick's `(tick, hash)`) and the world as it is now, with each
    /// tick's GPU hash when the app simulated GPU bodies: the entry for `tick` (ticks completed)
    /// carries the hash of GPU tick `tick - 1`, which ran alongside that fixed tick.
    pub fn capture(world: &mut World, ticks: &[(u64, u64)]) -> StateHashReport {
        let gpu: BTreeMap<u64, u64> = crate::physics::gpu::gpu_hashes(world)
            .into_iter()
            .map(|(gpu_tick, hash)| (gpu_tick + 1, hash))
            .collect();
        let states = entity_states(world);
        StateHashReport {
            format_version: REPORT_FORMAT_VERSION,
            ticks: ticks
                .iter()
                .map(|&(tick, hash)| TickHash {
                    tick,
                    hash: hex(hash),
                    gpu_hash: gpu.get(&tick).copied().map(hex),
                })
                .collect(),
            entities: states.iter().map(|s| entity_report(world, s)).collect(),
            details: Vec::new(),
            jobs: crate::jobs::JobStats::of(world),
            layout: Some(crate::state::LayoutFingerprint::clone(
                &crate::state::registry::sim_registry(world).layout(),
            )),
        }
    }

    /// Writes the report to `path` atomically.
    pub fn write(&self, path: &Path) -> Result<(), ReportError> {
        let io = |e: std::io::Error| ReportError::Io {
            file: path.to_owned(),
            message: e.to_string(),
        };
        let mut bytes = serde_json::to_vec_pretty(self).expect("a report always serializes");
        bytes.push(b'\n');
        json_file::write_atomically(path, &bytes).map_err(io)
    }

    /// Reads the report at `path`.
    pub fn load(path: &Path) -> Result<StateHashReport, ReportError> {
        let report: StateHashReport = json_file::read(path).map_err(|e| {
            // A report of another version fails to parse as this one: name the version instead.
            #[derive(Deserialize)]
            struct Version {
                format_version: u32,
            }
            if let Ok(Version { format_version }) = json_file::read::<Version>(path)
                && format_version != REPORT_FORMAT_VERSION
            {
                return ReportError::Version {
                    file: path.to_owned(),
                    found: format_version,
                    supported: REPORT_FORMAT_VERSION,
                };
            }
            e.into(
                |message| ReportError::Io {
                    file: path.to_owned(),
                    message,
                },
                |line, column, message| ReportError::Json {
                    file: path.to_owned(),
                    line,
                    column,
                    message,
                },
            )
        })?;
        if report.format_version != REPORT_FORMAT_VERSION {
            return Err(ReportError::Version {
                file: path.to_owned(),
                found: report.format_version,
                supported: REPORT_FORMAT_VERSION,
            });
        }
        let limit = |pointer: &str, message: String| ReportError::Limit {
            file: path.to_owned(),
            pointer: pointer.to_owned(),
            message,
        };
        if report.ticks.len() as u64 > MAX_REPORT_TICKS {
            return Err(limit(
                "/ticks",
                format!(
                    "{} ticks; a report holds at most {MAX_REPORT_TICKS}",
                    report.ticks.len()
                ),
            ));
        }
        if report.details.len() as u64 > MAX_REPORT_DETAILS {
            return Err(limit(
                "/details",
                format!(
                    "{} details; a run details at most {MAX_REPORT_DETAILS} ticks",
                    report.details.len()
                ),
            ));
        }
        Ok(report)
    }
}

/// Where two reports first differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportDifference {
    /// The first tick whose hash (or GPU hash) differs (`None` when every common tick matches but
    /// the runs have different lengths or final entities).
    pub tick: Option<u64>,
    /// The first entity (in the first report's order) that differs after the last tick, or is
    /// missing from the second report.
    pub entity: Option<EntityReport>,
    /// The first component of that entity whose hash differs, or that one side lacks.
    pub component: Option<String>,
    /// When both reports detail the first divergent tick: where that tick differs, down to the
    /// field (entity, component or resource, field and both values).
    pub at_tick: Option<DetailDifference>,
    /// When the reports come from games whose simulation state has different layouts: the first
    /// type or field that differs (the ticks are then not compared).
    pub layout: Option<String>,
}

/// The first difference between two reports, or `None` when they match.
pub fn compare_reports(a: &StateHashReport, b: &StateHashReport) -> Option<ReportDifference> {
    if let (Some(first), Some(second)) = (&a.layout, &b.layout)
        && let Some(difference) = first.first_difference(second, "the second report")
    {
        return Some(ReportDifference {
            tick: None,
            entity: None,
            component: None,
            at_tick: None,
            layout: Some(difference.replace("this game", "the first report")),
        });
    }
    let tick = a
        .ticks
        .iter()
        .zip(&b.ticks)
        .find(|(x, y)| x != y)
        .map(|(x, _)| x.tick);
    fn index(report: &StateHashReport) -> BTreeMap<u64, &EntityReport> {
        report.entities.iter().map(|e| (e.sim_id, e)).collect()
    }
    let (ia, ib) = (index(a), index(b));
    let mut entity_difference = None;
    for (id, ea) in &ia {
        match ib.get(id) {
            Some(eb) if eb.hash == ea.hash => continue,
            Some(eb) => {
                let component = ea
                    .components
                    .iter()
                    .find(|(name, hash)| eb.components.get(*name) != Some(hash))
                    .map(|(name, _)| name.clone())
                    .or_else(|| {
                        eb.components
                            .keys()
                            .find(|name| !ea.components.contains_key(*name))
                            .cloned()
                    });
                entity_difference = Some(((*ea).clone(), component));
                break;
            }
            None => {
                entity_difference = Some(((*ea).clone(), None));
                break;
            }
        }
    }
    if entity_difference.is_none() {
        let extra = ib
            .iter()
            .find(|(id, _)| !ia.contains_key(*id))
            .map(|(_, e)| (*e).clone());
        entity_difference = extra.map(|e| (e, None));
    }
    let length_differs = a.ticks.len() != b.ticks.len();
    if tick.is_none() && entity_difference.is_none() && !length_differs {
        return None;
    }
    let (entity, component) = match entity_difference {
        Some((e, c)) => (Some(e), c),
        None => (None, None),
    };
    let at_tick = tick.and_then(|tick| {
        let first = a.details.iter().find(|d| d.tick == tick)?;
        let second = b.details.iter().find(|d| d.tick == tick)?;
        compare_details(first, second)
    });
    Some(ReportDifference {
        tick,
        entity,
        component,
        at_tick,
        layout: None,
    })
}
