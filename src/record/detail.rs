//! [`StateDetail`]: one tick's simulation state down to the field, and where two of them differ.
//!
//! A state-hash report holds one hash a tick; blaming a divergence needs more: every simulation
//! entity's components with their hashes and field values, and every simulation resource's. A
//! run writes a detail of the tick it is asked about (`rusting determinism` asks the very runs
//! that diverged, at the tick they diverged), and [`compare_details`] names the first entity in
//! `SimId` order that differs, its first differing component and field with both values, or, when
//! every entity agrees, the first differing resource and field. This module must never change the
//! world.

use std::path::{Path, PathBuf};

use bevy::ecs::world::EntityRef;
use bevy::prelude::{Name, Transform, World};
use serde::{Deserialize, Serialize};

use crate::runtime::json_file;
use crate::state::SceneId;
use crate::state::hash::entity_states;
use crate::state::hasher::{StateHasher, hex};
use crate::state::registry::{SimEntry, SimKind, sim_registry};
use crate::state::sim_state::fields_of;

/// The first differing field of a component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDifference {
    /// The path inside the component, e.g. `linear_velocity.y`.
    pub path: String,
    /// The value in the first run.
    pub first: String,
    /// The value in the second run.
    pub second: String,
}

/// One component or resource: its registered name, hash and fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentDetail {
    /// The registered name.
    pub name: String,
    /// Its hash, 16 hex digits.
    pub hash: String,
    /// Every leaf field as `(path, value)`, in declaration order.
    pub fields: Vec<(String, String)>,
}

/// One simulation entity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityDetail {
    /// Its simulation id.
    pub sim_id: u64,
    /// Its `Name`, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its `SceneId`, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene_id: Option<u64>,
    /// The hash of all its simulation components.
    pub hash: String,
    /// Its simulation components, in the order the hash feeds them.
    pub components: Vec<ComponentDetail>,
}

/// The simulation state after one tick, down to the field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateDetail {
    /// The tick (ticks completed).
    pub tick: u64,
    /// Every simulation entity, in `SimId` order.
    pub entities: Vec<EntityDetail>,
    /// Every simulation resource, in registered-name order.
    pub resources: Vec<ComponentDetail>,
    /// The GPU physics state's hash after the GPU tick this tick completed, when the app has GPU
    /// bodies and that GPU tick has run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuDetail>,
}

/// The GPU physics state after one GPU tick (the device's state is compared by its hash: it has
/// no fields on the CPU).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuDetail {
    /// The GPU tick.
    pub tick: u64,
    /// Its hash, hexadecimal.
    pub hash: String,
}

/// The simulation resources of `world` that `keep` picks, each with its hash and fields, in
/// registered-name order.
fn resource_details(world: &World, keep: impl Fn(&SimEntry) -> bool) -> Vec<ComponentDetail> {
    sim_registry(world)
        .entries()
        .iter()
        .filter(|e| e.kind == SimKind::Resource && keep(e))
        .filter_map(|entry| {
            let id = world.components().get_id(entry.type_id)?;
            let ptr = world.get_resource_by_id(id)?;
            let mut hasher = StateHasher::new();
            // SAFETY: `id` is the component id of the entry's type in this world.
            unsafe { entry.hash(ptr, &mut hasher) };
            Some(ComponentDetail {
                name: entry.name.to_owned(),
                hash: hex(hasher.finish()),
                // SAFETY: as above.
                fields: unsafe { entry.fields(ptr) },
            })
        })
        .collect()
}

/// Why a detail cannot be read or written.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DetailError {
    /// The file could not be read or written, or is not a state detail.
    #[error("{file}: {message}", file = file.display())]
    File {
        /// The detail file.
        file: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// The fields of a simulation component (by its registered name) on `entity`.
pub(crate) fn component_fields(
    world: &World,
    entity: &EntityRef,
    component: &str,
) -> Option<Vec<(String, String)>> {
    if component == "Transform" {
        return entity.get::<Transform>().map(fields_of);
    }
    let registry = sim_registry(world);
    let entry = registry.by_name(component)?;
    let id = world.components().get_id(entry.type_id)?;
    let ptr = entity.get_by_id(id).ok()?;
    // SAFETY: `id` is the component id of the entry's type in this world.
    Some(unsafe { entry.fields(ptr) })
}

/// The first field at which two field lists differ.
pub(crate) fn first_difference(
    a: &[(String, String)],
    b: &[(String, String)],
) -> Option<FieldDifference> {
    for (k, (path, first)) in a.iter().enumerate() {
        match b.get(k) {
            Some((other_path, second)) if other_path == path => {
                if first != second {
                    return Some(FieldDifference {
                        path: path.clone(),
                        first: first.clone(),
                        second: second.clone(),
                    });
                }
            }
            other => {
                return Some(FieldDifference {
                    path: path.clone(),
                    first: first.clone(),
                    second: other
                        .map_or_else(|| "(absent)".to_owned(), |(p, v)| format!("{p} = {v}")),
                });
            }
        }
    }
    b.get(a.len()).map(|(path, second)| FieldDifference {
        path: path.clone(),
        first: "(absent)".to_owned(),
        second: second.clone(),
    })
}

impl StateDetail {
    /// The detail of `world` as it is now, after tick `tick`.
    pub fn capture(world: &mut World, tick: u64) -> StateDetail {
        let states = entity_states(world);
        let world: &World = world;
        let entities = states
            .iter()
            .map(|state| {
                let entity = world.entity(state.entity);
                EntityDetail {
                    sim_id: state.sim_id.0,
                    name: entity.get::<Name>().map(|n| n.as_str().to_owned()),
                    scene_id: entity.get::<SceneId>().map(|id| id.0),
                    hash: hex(state.hash),
                    components: state
                        .components
                        .iter()
                        .map(|(name, hash)| ComponentDetail {
                            name: (*name).to_owned(),
                            hash: hex(*hash),
                            fields: component_fields(world, &entity, name).unwrap_or_default(),
                        })
                        .collect(),
                }
            })
            .collect();
        let resources = resource_details(world, |_| true);
        let gpu = tick.checked_sub(1).and_then(|gpu_tick| {
            let hash = crate::physics::gpu::gpu_hash_of(world, gpu_tick)?;
            Some(GpuDetail {
                tick: gpu_tick,
                hash: hex(hash),
            })
        });
        StateDetail {
            tick,
            entities,
            resources,
            gpu,
        }
    }

    /// The game's own simulation resources (those it declares; none of the engine's), with their
    /// fields, in registered-name order: what a run's end summary shows.
    pub fn game_resources(world: &World) -> Vec<ComponentDetail> {
        resource_details(world, |entry| !entry.engine_owned)
    }

    /// Writes the detail to `path` atomically.
    pub fn write(&self, path: &Path) -> Result<(), DetailError> {
        let bytes = serde_json::to_vec(self).expect("a detail always serializes");
        json_file::write_atomically(path, &bytes).map_err(|e| DetailError::File {
            file: path.to_owned(),
            message: e.to_string(),
        })
    }

    /// Reads the detail at `path`.
    pub fn load(path: &Path) -> Result<StateDetail, DetailError> {
        let text = std::fs::read_to_string(path).map_err(|e| DetailError::File {
            file: path.to_owned(),
            message: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| DetailError::File {
            file: path.to_owned(),
            message: format!("not a state detail: {e}"),
        })
    }
}

/// How many differences [`compare_details`] lists at most; the rest are counted
/// (`DetailDifference::unlisted`).
pub const MAX_LISTED_DIFFERENCES: usize = 16;

/// One thing that differs at the tick: a field of an entity's component or of a resource, or an
/// entity or component that only one run holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Differing {
    /// The entity's simulation id; `None` for a resource.
    pub sim_id: Option<u64>,
    /// The entity as messages name it ([`entity_label`]); `None` for a resource.
    pub entity: Option<String>,
    /// The component or resource; `None` when the entity is in one run only.
    pub component: Option<String>,
    /// The differing field with both values; `None` when the component is in one run only.
    pub field: Option<FieldDifference>,
}

/// `entity `Enemy` (scene id 31), component Health, field value: 3 vs 2`, `resource Score,
/// field hits: 5 vs 4`, or what only one run holds.
impl std::fmt::Display for Differing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.entity, &self.component) {
            (Some(entity), Some(component)) => write!(f, "entity {entity}, component {component}")?,
            (Some(entity), None) => return write!(f, "entity {entity}, which only one run holds"),
            (None, Some(resource)) => write!(f, "resource {resource}")?,
            (None, None) => return f.write_str("(nothing)"),
        }
        match &self.field {
            Some(field) => write!(
                f,
                ", field {}: {} vs {}",
                field.path, field.first, field.second
            ),
            None => f.write_str(", which only one run holds"),
        }
    }
}

/// Where two details first differ, and every difference between them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DetailDifference {
    /// The first entity (in `SimId` order) that differs or that one side lacks; `None` when every
    /// entity agrees and a resource differs.
    pub entity: Option<EntityDetail>,
    /// The differing component or resource.
    pub component: Option<String>,
    /// Its first differing field, with both values.
    pub field: Option<FieldDifference>,
    /// The GPU tick after which the GPU physics state differs, when the CPU state agrees.
    pub gpu_tick: Option<u64>,
    /// Every difference at the tick, at most [`MAX_LISTED_DIFFERENCES`]: each differing field of
    /// each entity in `SimId` order (components in hash order), then of each resource in name
    /// order. The first one is what `entity`, `component` and `field` name.
    pub listed: Vec<Differing>,
    /// How many more differences there are past `listed`.
    pub unlisted: usize,
}

impl DetailDifference {
    /// How many differences there are in all.
    pub fn count(&self) -> usize {
        self.listed.len() + self.unlisted
    }

    /// The entity whose position is worth plotting: the first listed one whose `Transform`
    /// differs (it moved differently), else the first listed entity.
    pub fn plotted_entity(&self) -> Option<(u64, String)> {
        self.plotted_entities(1).into_iter().next()
    }

    /// The entities whose positions are worth plotting, at most `limit`, as `(SimId, label)`:
    /// every listed entity whose `Transform` differs, in listing order; when none does, the first
    /// listed entity.
    pub fn plotted_entities(&self, limit: usize) -> Vec<(u64, String)> {
        let entity = |d: &Differing| Some((d.sim_id?, d.entity.clone()?));
        let mut moved: Vec<(u64, String)> = Vec::new();
        for (sim_id, label) in self
            .listed
            .iter()
            .filter(|d| d.component.as_deref() == Some("Transform"))
            .filter_map(entity)
        {
            if moved.len() < limit && !moved.iter().any(|(seen, _)| *seen == sim_id) {
                moved.push((sim_id, label));
            }
        }
        if moved.is_empty() && limit > 0 {
            moved.extend(self.listed.iter().filter_map(entity).take(1));
        }
        moved
    }
}

/// An entity as messages name it: `` `Player` (scene id 10) `` for a scene's entity, `` `Coin`
/// (sim id 7) `` for one spawned during play (its `SimId`, the same in every run).
pub fn entity_label(name: Option<&str>, scene_id: Option<u64>, sim_id: u64) -> String {
    format!(
        "`{}` ({})",
        name.unwrap_or("(unnamed)"),
        scene_id.map_or_else(|| format!("sim id {sim_id}"), |id| format!("scene id {id}"))
    )
}

/// `entity `Player` (scene id 10), component Transform, field translation.x: 0.0001 vs 0.0`, or
/// `only resources differ, resource ...` when every entity agrees: the one wording every command
/// and error uses.
impl std::fmt::Display for DetailDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(gpu_tick) = self.gpu_tick {
            return write!(
                f,
                "the GPU physics state differs after GPU tick {gpu_tick}, and the CPU state \
                 agrees in every field: look at the GPU commands, bodies and spawns of fixed \
                 tick {gpu_tick}"
            );
        }
        match &self.entity {
            Some(entity) => write!(
                f,
                "entity {}",
                entity_label(entity.name.as_deref(), entity.scene_id, entity.sim_id)
            )?,
            None => f.write_str("only resources differ")?,
        }
        if let Some(component) = &self.component {
            let kind = if self.entity.is_some() {
                "component"
            } else {
                "resource"
            };
            write!(f, ", {kind} {component}")?;
        } else if self.entity.is_some() {
            f.write_str(", which only one of the runs holds")?;
        }
        if let Some(field) = &self.field {
            write!(
                f,
                ", field {}: {} vs {}",
                field.path, field.first, field.second
            )?;
        }
        write_listing(f, &self.listed, self.unlisted, "")
    }
}

/// The list under a blame's first line, the one wording for every command and report:
/// `every difference at this tick (N in all{note}):`, a `  - ...` line each, then `... and K
/// more`; nothing when there is at most one difference.
pub fn write_listing(
    f: &mut std::fmt::Formatter<'_>,
    listed: &[impl std::fmt::Display],
    unlisted: usize,
    note: &str,
) -> std::fmt::Result {
    let count = listed.len() + unlisted;
    if count <= 1 {
        return Ok(());
    }
    write!(f, "\nevery difference at this tick ({count} in all{note}):")?;
    for differing in listed {
        write!(f, "\n  - {differing}")?;
    }
    if unlisted > 0 {
        write!(f, "\n  ... and {unlisted} more")?;
    }
    Ok(())
}

/// Every field at which two field lists differ (a field only one list holds counts as one).
fn every_field_difference(a: &[(String, String)], b: &[(String, String)]) -> Vec<FieldDifference> {
    if a.len() == b.len() && a.iter().zip(b).all(|((pa, _), (pb, _))| pa == pb) {
        return a
            .iter()
            .zip(b)
            .filter(|((_, va), (_, vb))| va != vb)
            .map(|((path, first), (_, second))| FieldDifference {
                path: path.clone(),
                first: first.clone(),
                second: second.clone(),
            })
            .collect();
    }
    // Different shapes: as much as the first difference can tell.
    first_difference(a, b).into_iter().collect()
}

/// Collects differences, keeping the first [`MAX_LISTED_DIFFERENCES`] and counting the rest.
#[derive(Default)]
struct Listing {
    listed: Vec<Differing>,
    unlisted: usize,
}

impl Listing {
    /// How many differences were found, listed or not.
    fn count(&self) -> usize {
        self.listed.len() + self.unlisted
    }

    fn push(&mut self, differing: Differing) {
        if self.listed.len() < MAX_LISTED_DIFFERENCES {
            self.listed.push(differing);
        } else {
            self.unlisted += 1;
        }
    }

    /// Every difference between two component (or resource) lists, under `entity`.
    fn components(
        &mut self,
        entity: Option<(u64, &str)>,
        a: &[ComponentDetail],
        b: &[ComponentDetail],
    ) {
        let differing = |component: &str, field: Option<FieldDifference>| Differing {
            sim_id: entity.map(|(id, _)| id),
            entity: entity.map(|(_, label)| label.to_owned()),
            component: Some(component.to_owned()),
            field,
        };
        for ca in a {
            match b.iter().find(|cb| cb.name == ca.name) {
                Some(cb) if cb.hash == ca.hash => {}
                Some(cb) => {
                    let fields = every_field_difference(&ca.fields, &cb.fields);
                    if fields.is_empty() {
                        // The hash covers something no field shows.
                        self.push(differing(&ca.name, None));
                    }
                    for field in fields {
                        self.push(differing(&ca.name, Some(field)));
                    }
                }
                None => self.push(differing(&ca.name, None)),
            }
        }
        for cb in b.iter().filter(|cb| !a.iter().any(|ca| ca.name == cb.name)) {
            self.push(differing(&cb.name, None));
        }
    }
}

/// Where two details of the same tick differ, or `None` when they agree: the first difference
/// (the first entity in `SimId` order, else the first resource, else the GPU state) and the list
/// of every difference.
pub fn compare_details(a: &StateDetail, b: &StateDetail) -> Option<DetailDifference> {
    let mut ids: Vec<u64> = a.entities.iter().map(|e| e.sim_id).collect();
    ids.extend(b.entities.iter().map(|e| e.sim_id));
    ids.sort_unstable();
    ids.dedup();
    fn find(detail: &StateDetail, id: u64) -> Option<&EntityDetail> {
        detail.entities.iter().find(|e| e.sim_id == id)
    }
    // The first differing entity; the first difference is the listing's first entry.
    let mut first_entity: Option<&EntityDetail> = None;
    let mut listing = Listing::default();
    for id in ids {
        let (ea, eb) = (find(a, id), find(b, id));
        if let (Some(ea), Some(eb)) = (ea, eb)
            && ea.hash == eb.hash
        {
            continue;
        }
        let either = ea.or(eb).expect("an id comes from one of the two details");
        let label = entity_label(either.name.as_deref(), either.scene_id, either.sim_id);
        let before = listing.count();
        if let (Some(ea), Some(eb)) = (ea, eb) {
            listing.components(Some((id, &label)), &ea.components, &eb.components);
        }
        if listing.count() == before {
            // Held by one run only, or no component tells why its hash differs.
            listing.push(Differing {
                sim_id: Some(id),
                entity: Some(label),
                component: None,
                field: None,
            });
        }
        first_entity.get_or_insert(ea.unwrap_or(either));
    }
    listing.components(None, &a.resources, &b.resources);
    if let Some(first) = listing.listed.first() {
        return Some(DetailDifference {
            entity: first_entity.cloned(),
            component: first.component.clone(),
            field: first.field.clone(),
            gpu_tick: None,
            listed: listing.listed,
            unlisted: listing.unlisted,
        });
    }
    // The device's state, compared only where both runs had simulated the GPU tick.
    match (&a.gpu, &b.gpu) {
        (Some(ga), Some(gb)) if ga != gb => Some(DetailDifference {
            entity: None,
            component: None,
            field: None,
            gpu_tick: Some(ga.tick),
            listed: Vec::new(),
            unlisted: 0,
        }),
        _ => None,
    }
}
