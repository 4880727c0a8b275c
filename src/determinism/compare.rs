//! [`compare_runs`]: two apps built the same way, stepped in lockstep, compared after every tick.
//!
//! At the first tick whose world-state hash differs, it reports the tick, the first simulation
//! entity in `SimId` order whose own hash differs (with its `Name` and `SceneId`; none when only
//! resources differ), the first of its components that differs, and the first field of that
//! component that differs with both values, found by walking the two values' serialized trees.
//! Entities are paired across the two worlds by `SimId`, never by `Entity`, so presentation
//! spawned in one world only cannot shift the pairing. Contacts can spread a change to several
//! bodies within one tick, so the entity named is the first in `SimId` order, not always the one
//! where the change began. This module must never change either app's state.

use bevy::prelude::{Name, World};

use crate::engine::App;
use crate::record::detail::{FieldDifference, component_fields, first_difference};
use crate::scene::SceneId;
use crate::state::SimId;
use crate::state::hash::{EntityState, StateHashes, entity_states};

/// Where two runs first differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// The first tick (ticks completed) whose hash differs.
    pub tick: u64,
    /// The simulation id of the first entity in `SimId` order whose hash differs; `None` when
    /// only resources differ.
    pub entity: Option<SimId>,
    /// Its `Name`.
    pub name: Option<String>,
    /// Its `SceneId`.
    pub scene_id: Option<u64>,
    /// The first component that differs (or that one run lacks).
    pub component: Option<&'static str>,
    /// The first field of that component that differs, with both values.
    pub field: Option<FieldDifference>,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tick {}", self.tick)?;
        match self.entity {
            None => write!(f, ": only resources differ")?,
            Some(entity) => {
                write!(f, ", entity {entity}")?;
                if let Some(name) = &self.name {
                    write!(f, " `{name}`")?;
                }
                if let Some(id) = self.scene_id {
                    write!(f, " (scene id {id})")?;
                }
            }
        }
        if let Some(component) = self.component {
            write!(f, ", {component}")?;
            if let Some(field) = &self.field {
                write!(f, ".{}: {} vs {}", field.path, field.first, field.second)?;
            }
        }
        Ok(())
    }
}

/// Explains how `a` and `b` differ after `tick`.
pub fn explain(a: &mut World, b: &mut World, tick: u64) -> Divergence {
    let states_a = entity_states(a);
    let mut divergence = Divergence {
        tick,
        entity: None,
        name: None,
        scene_id: None,
        component: None,
        field: None,
    };
    let states_b = entity_states(b);
    let find = |states: &[EntityState], id: SimId| {
        states
            .binary_search_by_key(&id, |s| s.sim_id)
            .ok()
            .map(|i| states[i].clone())
    };
    let mut ids: Vec<SimId> = states_a.iter().map(|s| s.sim_id).collect();
    ids.extend(states_b.iter().map(|s| s.sim_id));
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let (sa, sb) = (find(&states_a, id), find(&states_b, id));
        if sa.as_ref().map(|s| s.hash) == sb.as_ref().map(|s| s.hash) {
            continue;
        }
        divergence.entity = Some(id);
        let entity_ref = match (&sa, &sb) {
            (Some(s), _) => a.entity(s.entity),
            (None, Some(s)) => b.entity(s.entity),
            (None, None) => unreachable!("an id comes from one of the two lists"),
        };
        divergence.name = entity_ref.get::<Name>().map(|n| n.as_str().to_owned());
        divergence.scene_id = entity_ref.get::<SceneId>().map(|id| id.0);
        let (entity_a, entity_b) = (sa.as_ref().map(|s| s.entity), sb.as_ref().map(|s| s.entity));
        let components_a = sa.map(|s| s.components).unwrap_or_default();
        let components_b = sb.map(|s| s.components).unwrap_or_default();
        let differing = components_a
            .iter()
            .find(|c| !components_b.contains(c))
            .or_else(|| components_b.iter().find(|c| !components_a.contains(c)))
            .map(|(name, _)| *name);
        divergence.component = differing;
        if let Some(component) = differing {
            let va = entity_a
                .and_then(|e| a.get_entity(e).ok())
                .and_then(|e| component_fields(a, &e, component));
            let vb = entity_b
                .and_then(|e| b.get_entity(e).ok())
                .and_then(|e| component_fields(b, &e, component));
            divergence.field = match (va, vb) {
                (Some(va), Some(vb)) => first_difference(&va, &vb),
                (va, vb) => Some(FieldDifference {
                    path: String::new(),
                    first: if va.is_some() {
                        "(present)"
                    } else {
                        "(absent)"
                    }
                    .to_owned(),
                    second: if vb.is_some() {
                        "(present)"
                    } else {
                        "(absent)"
                    }
                    .to_owned(),
                }),
            };
        }
        break;
    }
    divergence
}

/// Builds two apps with `make_app`, runs both `ticks` ticks one tick per frame, and compares their
/// world-state hashes after every tick. Returns the first divergence, explained.
pub fn compare_runs(make_app: impl Fn() -> App, ticks: u64) -> Result<(), Box<Divergence>> {
    let (mut a, mut b) = (make_app(), make_app());
    let step = a.fixed_step();
    for _ in 0..ticks {
        a.update(step);
        b.update(step);
        let last = |app: &App| app.world().resource::<StateHashes>().cpu.back().copied();
        let (ha, hb) = (last(&a), last(&b));
        if ha != hb {
            let tick = ha.or(hb).map(|(t, _)| t).unwrap_or(0);
            return Err(Box::new(explain(a.world_mut(), b.world_mut(), tick)));
        }
    }
    Ok(())
}
