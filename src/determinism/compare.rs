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

use bevy::ecs::world::EntityRef;
use bevy::prelude::{Component, Name, Transform, World};
use serde::Serialize;
use serde_json::Value;

use super::hash::{EntityState, StateHashes, entity_states};
use crate::app::App;
use crate::gameplay::{
    BurstEmitter, Counter, Pickup, PlatformerController, PlayerController, Tween,
};
use crate::physics::{Collider, CollisionLayers, PhysicsBody, PhysicsId, RigidBody, Sleeping};
use crate::runtime::SimId;
use crate::scene::SceneId;

/// The first differing field of a component.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDifference {
    /// The path inside the component, e.g. `linear_velocity.y`.
    pub path: String,
    /// The value in the first run.
    pub first: String,
    /// The value in the second run.
    pub second: String,
}

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

fn json<T: Component + Serialize>(entity: &EntityRef) -> Option<Value> {
    entity.get::<T>().and_then(|v| serde_json::to_value(v).ok())
}

/// The serialized value of a simulation component, by the name the hash uses.
fn component_value(entity: &EntityRef, component: &str) -> Option<Value> {
    match component {
        "Transform" => entity.get::<Transform>().map(|t| {
            serde_json::json!({
                "translation": [t.translation.x, t.translation.y, t.translation.z],
                "rotation": [t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w],
                "scale": [t.scale.x, t.scale.y, t.scale.z],
            })
        }),
        "RigidBody" => json::<RigidBody>(entity),
        "Collider" => json::<Collider>(entity),
        "CollisionLayers" => json::<CollisionLayers>(entity),
        "PhysicsBody" => json::<PhysicsBody>(entity),
        "Sleeping" => json::<Sleeping>(entity),
        "PhysicsId" => json::<PhysicsId>(entity),
        "PlayerController" => json::<PlayerController>(entity),
        "PlatformerController" => json::<PlatformerController>(entity),
        "Tween" => json::<Tween>(entity),
        "Pickup" => json::<Pickup>(entity),
        "Counter" => json::<Counter>(entity),
        "BurstEmitter" => json::<BurstEmitter>(entity),
        _ => None,
    }
}

/// A leaf value as people read it: floats in their shortest `f32` form.
fn show(value: &Value) -> String {
    match value {
        Value::Number(n) if n.is_f64() => format!("{:?}", n.as_f64().unwrap_or(f64::NAN) as f32),
        other => other.to_string(),
    }
}

/// The first path at which two trees differ.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<FieldDifference> {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, va) in x {
                match y.get(key) {
                    Some(vb) => {
                        if let Some(d) = first_difference(va, vb, &join(key)) {
                            return Some(d);
                        }
                    }
                    None => {
                        return Some(FieldDifference {
                            path: join(key),
                            first: show(va),
                            second: "(absent)".into(),
                        });
                    }
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            const AXES: [&str; 4] = ["x", "y", "z", "w"];
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                let key = if x.len() <= 4 {
                    AXES[i].to_owned()
                } else {
                    i.to_string()
                };
                if let Some(d) = first_difference(va, vb, &join(&key)) {
                    return Some(d);
                }
            }
            None
        }
        _ if a == b => None,
        _ => Some(FieldDifference {
            path: path.to_owned(),
            first: show(a),
            second: show(b),
        }),
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
                .and_then(|e| component_value(&e, component));
            let vb = entity_b
                .and_then(|e| b.get_entity(e).ok())
                .and_then(|e| component_value(&e, component));
            divergence.field = match (va, vb) {
                (Some(va), Some(vb)) => first_difference(&va, &vb, ""),
                (va, vb) => Some(FieldDifference {
                    path: String::new(),
                    first: va
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "(absent)".into()),
                    second: vb
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "(absent)".into()),
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
