//! Cooking: a source scene (hand-written JSON) into the canonical form that runs.
//!
//! Cooking parses the source, checks every value, fills defaults, turns Euler angles into
//! quaternions with `sim_math` (so the same angles give the same bits everywhere), and sorts the
//! entities by id. The cooked scene serializes with fixed key order and shortest round-trip float
//! formatting, so the same source gives the same bytes on every machine, whatever the source's key
//! order, entity order or number spelling. This module must never touch a `World`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

use bevy::math::{Quat, Vec3};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::SceneError;
use super::level_mesh::{CookedMesh, read_level_mesh};
use super::presentation::{Appearance, CameraSettings};
use crate::gameplay::{
    BurstEmitter, Counter, HudElement, MAX_BURST_PARTICLES, Pickup, PlatformerController,
    PlayerController, Tween,
};
use crate::physics::{
    BodyClass, BodyKind, Collider, CollisionLayers, LockedAxes, PhysicsBody, RigidBody, Shape,
};
use crate::runtime::sim_math::{self, EulerOrder};

/// The scene format version this engine reads and writes.
pub const SCENE_FORMAT_VERSION: u32 = 1;

/// The most entities a scene may hold (`/entities`); checked before any entity is cooked.
pub const MAX_SCENE_ENTITIES: usize = 1 << 20;

/// Scene-wide settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneSettings {
    /// Acceleration of gravity, m/s².
    pub gravity: Vec3,
    /// The window's follow camera (presentation: not part of the scene's identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<CameraSettings>,
}

impl Default for SceneSettings {
    fn default() -> Self {
        SceneSettings {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            camera: None,
        }
    }
}

/// The components an entity of a cooked scene carries, each optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneComponents {
    /// `RigidBody`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rigid_body: Option<RigidBody>,
    /// `Collider`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collider: Option<Collider>,
    /// `CollisionLayers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_layers: Option<CollisionLayers>,
    /// `PhysicsBody`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physics_body: Option<PhysicsBody>,
    /// `LockedAxes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locked_axes: Option<LockedAxes>,
    /// `Tween`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tween: Option<Tween>,
    /// `PlayerController`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_controller: Option<PlayerController>,
    /// `Pickup`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pickup: Option<Pickup>,
    /// `Counter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<Counter>,
    /// `PlatformerController`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platformer_controller: Option<PlatformerController>,
    /// `BurstEmitter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_emitter: Option<BurstEmitter>,
    /// `HudElement`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hud_element: Option<HudElement>,
    /// `GpuBehaviour`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_behaviour: Option<crate::physics::gpu::GpuBehaviour>,
    /// `Joint`: its `body_a` and `body_b` are the scene ids of the bodies it holds (`body_a`
    /// absent for the world); loading puts their simulation ids in their place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint: Option<crate::physics::Joint>,
    /// `Appearance` (presentation: not part of the scene's identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appearance: Option<Appearance>,
    /// The game's own components, by registered name, as canonical JSON (keys sorted): `cook`
    /// never builds the game, so it cannot know their types; the game checks them when it loads
    /// the scene (see `scene::game_types`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub game: std::collections::BTreeMap<String, Value>,
}

/// One entity of a cooked scene.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CookedEntity {
    /// Its stable id (`SceneId`).
    pub id: u64,
    /// Its `Name`.
    pub name: String,
    /// Position.
    pub translation: Vec3,
    /// Rotation (unit quaternion, `[x, y, z, w]`).
    pub rotation: Quat,
    /// Scale.
    pub scale: Vec3,
    /// Its components.
    pub components: SceneComponents,
}

/// A scene ready to load: checked, defaults filled, entities sorted by id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CookedScene {
    /// Always [`SCENE_FORMAT_VERSION`].
    pub format_version: u32,
    /// Scene-wide settings.
    pub settings: SceneSettings,
    /// The entities, sorted by id.
    pub entities: Vec<CookedEntity>,
    /// The level meshes the entities' `Mesh` colliders name, by id (absent when there are
    /// none, so a scene without meshes cooks to the bytes it always did).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub meshes: Vec<CookedMesh>,
}

impl CookedScene {
    /// The scene without its presentation data (appearances, camera): what its identity hashes,
    /// so that recolouring a scene keeps its replays valid.
    pub fn without_presentation(&self) -> CookedScene {
        let mut scene = self.clone();
        scene.settings.camera = None;
        for entity in &mut scene.entities {
            entity.components.appearance = None;
        }
        scene
    }

    /// The canonical bytes of the cooked scene: the same scene always gives the same bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a cooked scene always serializes");
        bytes.push(b'\n');
        bytes
    }
}

/// A place in the source, as a JSON pointer, for error messages.
#[derive(Clone)]
struct Place(String);

impl Place {
    fn at(&self, key: impl std::fmt::Display) -> Place {
        let key = key.to_string().replace('~', "~0").replace('/', "~1");
        Place(format!("{}/{}", self.0, key))
    }
}

/// Whether `name` can name a game's component: a Rust type name, `[A-Za-z_][A-Za-z0-9_]*`.
fn is_type_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Reads and cooks the source scene at `path`.
pub fn cook_file(path: &Path) -> Result<CookedScene, SceneError> {
    let text = std::fs::read_to_string(path).map_err(|e| SceneError::Io {
        file: path.to_owned(),
        message: e.to_string(),
    })?;
    cook(&text, path)
}

/// Cooks source scene text; `file` names it in errors.
pub fn cook(text: &str, file: &Path) -> Result<CookedScene, SceneError> {
    let root: Value = serde_json::from_str(text).map_err(|e| SceneError::Json {
        file: file.to_owned(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let cooker = Cooker {
        file,
        meshes: RefCell::new(Vec::new()),
    };
    cooker.scene(&root)
}

struct Cooker<'a> {
    file: &'a Path,
    /// The level meshes read so far.
    meshes: RefCell<Vec<CookedMesh>>,
}

impl Cooker<'_> {
    fn bad(&self, place: &Place, reason: impl Into<String>) -> SceneError {
        SceneError::BadValue {
            file: self.file.to_owned(),
            pointer: if place.0.is_empty() {
                "/".into()
            } else {
                place.0.clone()
            },
            reason: reason.into(),
        }
    }

    fn object<'v>(
        &self,
        value: &'v Value,
        place: &Place,
    ) -> Result<&'v serde_json::Map<String, Value>, SceneError> {
        value
            .as_object()
            .ok_or_else(|| self.bad(place, "expected an object"))
    }

    /// Rejects keys other than `allowed`.
    fn only_keys(
        &self,
        object: &serde_json::Map<String, Value>,
        place: &Place,
        allowed: &[&str],
    ) -> Result<(), SceneError> {
        match object.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(key) => Err(self.bad(
                &place.at(key),
                format!(
                    "unknown field `{key}` (expected one of {})",
                    allowed.join(", ")
                ),
            )),
            None => Ok(()),
        }
    }

    fn typed<T: serde::de::DeserializeOwned>(
        &self,
        value: &Value,
        place: &Place,
    ) -> Result<T, SceneError> {
        T::deserialize(value).map_err(|e| self.bad(place, e.to_string()))
    }

    fn finite(&self, values: &[f32], place: &Place) -> Result<(), SceneError> {
        if values.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(self.bad(place, "numbers must be finite (this one overflows f32)"))
        }
    }

    fn scene(&self, root: &Value) -> Result<CookedScene, SceneError> {
        let top = Place(String::new());
        let object = self.object(root, &top)?;
        self.only_keys(object, &top, &["format_version", "settings", "entities"])?;
        match object.get("format_version").and_then(Value::as_u64) {
            Some(v) if v == SCENE_FORMAT_VERSION as u64 => {}
            other => {
                return Err(SceneError::UnsupportedVersion {
                    file: self.file.to_owned(),
                    found: other
                        .map(|v| v.to_string())
                        .or_else(|| object.get("format_version").map(|v| v.to_string()))
                        .unwrap_or_else(|| "missing".into()),
                    supported: SCENE_FORMAT_VERSION,
                });
            }
        }
        let settings = match object.get("settings") {
            Some(value) => {
                let place = top.at("settings");
                let settings: SceneSettings = self.typed(value, &place)?;
                self.finite(&settings.gravity.to_array(), &place.at("gravity"))?;
                if let Some(camera) = &settings.camera {
                    self.finite(&camera.offset.to_array(), &place.at("camera").at("offset"))?;
                }
                settings
            }
            None => SceneSettings::default(),
        };
        let place = top.at("entities");
        let list = match object.get("entities") {
            Some(value) => value
                .as_array()
                .ok_or_else(|| self.bad(&place, "expected an array of entities"))?
                .as_slice(),
            None => &[],
        };
        if list.len() > MAX_SCENE_ENTITIES {
            return Err(self.bad(
                &place,
                format!(
                    "{} entities: a scene holds at most {MAX_SCENE_ENTITIES}",
                    list.len()
                ),
            ));
        }
        let mut seen: BTreeMap<u64, String> = BTreeMap::new();
        let mut entities = Vec::with_capacity(list.len());
        let mut joints = Vec::new();
        for (index, value) in list.iter().enumerate() {
            let here = place.at(index);
            let entity = self.entity(value, &here)?;
            if let Some(joint) = entity.components.joint {
                joints.push((joint, here.at("components").at("Joint")));
            }
            if let Some(first) = seen.get(&entity.id) {
                return Err(SceneError::DuplicateId {
                    file: self.file.to_owned(),
                    pointer: here.at("id").0,
                    id: entity.id,
                    first: first.clone(),
                });
            }
            seen.insert(entity.id, here.at("id").0);
            entities.push(entity);
        }
        entities.sort_by_key(|e| e.id);
        for (joint, here) in &joints {
            let ends = [("body_a", joint.body_a), ("body_b", Some(joint.body_b))];
            for (field, id) in ends {
                if let Some(id) = id {
                    self.joint_body(&entities, id.0, &here.at(field))?;
                }
            }
        }
        let mut meshes = self.meshes.take();
        meshes.sort_by_key(|mesh| mesh.id);
        meshes.dedup_by_key(|mesh| mesh.id);
        Ok(CookedScene {
            format_version: SCENE_FORMAT_VERSION,
            settings,
            entities,
            meshes,
        })
    }

    fn entity(&self, value: &Value, place: &Place) -> Result<CookedEntity, SceneError> {
        let object = self.object(value, place)?;
        self.only_keys(object, place, &["id", "name", "transform", "components"])?;
        let id = object.get("id").and_then(Value::as_u64).ok_or_else(|| {
            self.bad(
                &place.at("id"),
                "every entity needs an `id`: a whole number >= 0",
            )
        })?;
        let name = match object.get("name") {
            Some(Value::String(name)) => name.clone(),
            Some(_) => return Err(self.bad(&place.at("name"), "expected a string")),
            None => String::new(),
        };
        let (translation, rotation, scale) = match object.get("transform") {
            Some(value) => self.transform(value, &place.at("transform"))?,
            None => (Vec3::ZERO, Quat::IDENTITY, Vec3::ONE),
        };
        let components = match object.get("components") {
            Some(value) => self.components(value, &place.at("components"))?,
            None => SceneComponents::default(),
        };
        Ok(CookedEntity {
            id,
            name,
            translation,
            rotation,
            scale,
            components,
        })
    }

    fn transform(&self, value: &Value, place: &Place) -> Result<(Vec3, Quat, Vec3), SceneError> {
        let object = self.object(value, place)?;
        self.only_keys(
            object,
            place,
            &["translation", "rotation", "euler_degrees", "scale"],
        )?;
        let vector = |key: &str, default: Vec3| -> Result<Vec3, SceneError> {
            match object.get(key) {
                Some(value) => {
                    let v: Vec3 = self.typed(value, &place.at(key))?;
                    self.finite(&v.to_array(), &place.at(key))?;
                    Ok(v)
                }
                None => Ok(default),
            }
        };
        let translation = vector("translation", Vec3::ZERO)?;
        let scale = vector("scale", Vec3::ONE)?;
        let rotation = match (object.get("rotation"), object.get("euler_degrees")) {
            (Some(_), Some(_)) => {
                return Err(self.bad(place, "give `rotation` or `euler_degrees`, not both"));
            }
            (Some(value), None) => {
                let here = place.at("rotation");
                let q: Quat = self.typed(value, &here)?;
                self.finite(&q.to_array(), &here)?;
                let unit = sim_math::quat_normalize(q);
                if q.to_array().iter().all(|c| *c == 0.0) {
                    return Err(self.bad(&here, "a rotation quaternion cannot be zero"));
                }
                unit
            }
            (None, Some(value)) => {
                // Yaw about Y, pitch about X, roll about Z, in degrees.
                let here = place.at("euler_degrees");
                let angles: Vec3 = self.typed(value, &here)?;
                self.finite(&angles.to_array(), &here)?;
                let to_radians = std::f32::consts::PI / 180.0;
                sim_math::rotation_from_euler(
                    EulerOrder::YXZ,
                    angles.x * to_radians,
                    angles.y * to_radians,
                    angles.z * to_radians,
                )
            }
            (None, None) => Quat::IDENTITY,
        };
        Ok((translation, rotation, scale))
    }

    fn components(&self, value: &Value, place: &Place) -> Result<SceneComponents, SceneError> {
        let object = self.object(value, place)?;
        let mut out = SceneComponents::default();
        for (name, value) in object {
            let here = place.at(name);
            match name.as_str() {
                "RigidBody" => {
                    let body: RigidBody = self.typed(value, &here)?;
                    self.check_rigid_body(&body, &here)?;
                    out.rigid_body = Some(body);
                }
                "Collider" => {
                    let value = self.level_mesh(value, &here)?;
                    let collider: Collider = self.typed(&value, &here)?;
                    out.collider = Some(self.check_collider(collider, &here)?);
                }
                "CollisionLayers" => out.collision_layers = Some(self.typed(value, &here)?),
                "PhysicsBody" => out.physics_body = Some(self.typed(value, &here)?),
                "LockedAxes" => out.locked_axes = Some(self.typed(value, &here)?),
                "Tween" => {
                    let tween: Tween = self.typed(value, &here)?;
                    let mut numbers = vec![tween.duration, tween.played];
                    numbers.extend(tween.from.to_array());
                    numbers.extend(tween.to.to_array());
                    self.finite(&numbers, &here)?;
                    if tween.duration <= 0.0 {
                        return Err(self.bad(&here.at("duration"), "duration must be positive"));
                    }
                    if tween.played < 0.0 {
                        return Err(self.bad(&here.at("played"), "played cannot be negative"));
                    }
                    out.tween = Some(tween);
                }
                "PlayerController" => {
                    let player: PlayerController = self.typed(value, &here)?;
                    self.finite(&[player.speed, player.yaw, player.look_sensitivity], &here)?;
                    if player.speed < 0.0 {
                        return Err(self.bad(&here.at("speed"), "speed cannot be negative"));
                    }
                    out.player_controller = Some(player);
                }
                "Pickup" => out.pickup = Some(self.typed(value, &here)?),
                "Counter" => out.counter = Some(self.typed(value, &here)?),
                "PlatformerController" => {
                    let p: PlatformerController = self.typed(value, &here)?;
                    let numbers = [
                        p.move_speed,
                        p.jump_speed,
                        p.jump_buffer_time,
                        p.coyote_time,
                        p.vertical_speed,
                        p.jump_buffer,
                        p.air_time,
                    ];
                    self.finite(&numbers, &here)?;
                    if numbers[..4].iter().any(|v| *v < 0.0) {
                        return Err(self.bad(&here, "speeds and times cannot be negative"));
                    }
                    out.platformer_controller = Some(p);
                }
                "BurstEmitter" => {
                    let e: BurstEmitter = self.typed(value, &here)?;
                    self.finite(&[e.speed, e.lifetime], &here)?;
                    if e.particles > MAX_BURST_PARTICLES {
                        return Err(self.bad(
                            &here.at("particles"),
                            format!(
                                "{} particles a burst: at most {MAX_BURST_PARTICLES}",
                                e.particles
                            ),
                        ));
                    }
                    if e.lifetime <= 0.0 {
                        return Err(self.bad(&here.at("lifetime"), "lifetime must be positive"));
                    }
                    out.burst_emitter = Some(e);
                }
                "HudElement" => out.hud_element = Some(self.typed(value, &here)?),
                "GpuBehaviour" => {
                    use crate::physics::gpu::{GpuBehaviour, GpuRule};
                    let behaviour: GpuBehaviour = self.typed(value, &here)?;
                    self.finite(&behaviour.custom, &here.at("custom"))?;
                    let rule = here.at("rule");
                    match behaviour.rule {
                        GpuRule::None => {}
                        GpuRule::EmitEvery { period } => {
                            if !(period > 0.0 && period.is_finite()) {
                                return Err(self.bad(
                                    &rule.at("EmitEvery").at("period"),
                                    "an EmitEvery period must be positive and finite (seconds)",
                                ));
                            }
                        }
                        GpuRule::EmitBelow { height } => {
                            self.finite(&[height], &rule.at("EmitBelow").at("height"))?;
                        }
                    }
                    out.gpu_behaviour = Some(behaviour);
                }
                "Joint" => {
                    let joint: crate::physics::Joint = self.typed(value, &here)?;
                    if let Err(e) = joint.check() {
                        let mut at = here.clone();
                        for segment in joint.error_path(&e).split('/') {
                            at = at.at(segment);
                        }
                        return Err(self.bad(&at, e.to_string()));
                    }
                    out.joint = Some(joint);
                }
                "Appearance" => {
                    let appearance: Appearance = self.typed(value, &here)?;
                    self.finite(&appearance.color, &here.at("color"))?;
                    if appearance.color.iter().any(|c| !(0.0..=1.0).contains(c)) {
                        return Err(
                            self.bad(&here.at("color"), "each channel of a colour is from 0 to 1")
                        );
                    }
                    out.appearance = Some(appearance);
                }
                _ if is_type_name(name) => {
                    out.game.insert(name.clone(), value.clone());
                }
                _ => {
                    return Err(SceneError::UnknownComponent {
                        file: self.file.to_owned(),
                        pointer: here.0,
                        name: name.clone(),
                    });
                }
            }
        }
        if out.locked_axes.is_some() && out.physics_body.is_some_and(|b| b.class != BodyClass::Cpu)
        {
            return Err(self.bad(
                &place.at("LockedAxes"),
                "axis locks are read by the CPU solver only: remove LockedAxes from this GPU \
                 body or make it a CPU body",
            ));
        }
        if out
            .collider
            .is_some_and(|c| matches!(c.shape, Shape::Mesh { .. }))
        {
            if out.rigid_body.is_some_and(|b| b.kind != BodyKind::Static) {
                return Err(self.bad(
                    &place.at("RigidBody"),
                    "a level mesh (TriMesh or Heightfield) must be static: remove the RigidBody \
                     or make its kind Static",
                ));
            }
            if out.physics_body.is_some_and(|b| b.class != BodyClass::Cpu) {
                return Err(self.bad(
                    &place.at("PhysicsBody"),
                    "a level mesh is simulated on the CPU: GPU bodies cannot be meshes",
                ));
            }
        }
        Ok(out)
    }

    /// Checks that scene entity `id`, which a joint at `place` names, is a body the CPU solver
    /// simulates.
    fn joint_body(
        &self,
        entities: &[CookedEntity],
        id: u64,
        place: &Place,
    ) -> Result<(), SceneError> {
        let Ok(index) = entities.binary_search_by_key(&id, |e| e.id) else {
            return Err(self.bad(place, format!("no entity of this scene has id {id}")));
        };
        let c = &entities[index].components;
        if c.collider.is_none() {
            return Err(self.bad(
                place,
                format!("entity {id} has no Collider: a joint holds bodies, which need one"),
            ));
        }
        if c.physics_body.is_some_and(|b| b.class != BodyClass::Cpu) {
            return Err(self.bad(
                place,
                format!("entity {id} is a GPU body: joints hold bodies of the CPU solver"),
            ));
        }
        Ok(())
    }

    fn check_rigid_body(&self, body: &RigidBody, place: &Place) -> Result<(), SceneError> {
        let mut numbers = vec![body.mass, body.gravity_scale];
        numbers.extend(body.linear_velocity.to_array());
        numbers.extend(body.angular_velocity.to_array());
        self.finite(&numbers, place)?;
        if body.kind == BodyKind::Dynamic && body.mass <= 0.0 {
            return Err(self.bad(
                &place.at("mass"),
                format!("a dynamic body needs a positive mass, not {}", body.mass),
            ));
        }
        Ok(())
    }

    /// The collider's JSON with a `TriMesh` or `Heightfield` shape read into a level mesh and
    /// named by its id (`Mesh`); any other collider as it is.
    fn level_mesh(&self, value: &Value, place: &Place) -> Result<Value, SceneError> {
        let Some((kind, spec)) = value
            .get("shape")
            .and_then(Value::as_object)
            .and_then(|shape| {
                ["TriMesh", "Heightfield"]
                    .into_iter()
                    .find_map(|kind| shape.get(kind).map(|spec| (kind, spec)))
            })
        else {
            return Ok(value.clone());
        };
        let at = place.at("shape").at(kind);
        let mesh = read_level_mesh(kind, spec, self.file, &at.0)?;
        let id = mesh.id();
        self.meshes.borrow_mut().push(CookedMesh::of(&mesh));
        let mut cooked = value.clone();
        cooked["shape"] = serde_json::json!({ "Mesh": { "mesh": id } });
        Ok(cooked)
    }

    fn check_collider(
        &self,
        mut collider: Collider,
        place: &Place,
    ) -> Result<Collider, SceneError> {
        self.finite(&[collider.friction, collider.restitution], place)?;
        if collider.friction < 0.0 {
            return Err(self.bad(&place.at("friction"), "friction cannot be negative"));
        }
        if !(0.0..=1.0).contains(&collider.restitution) {
            return Err(self.bad(
                &place.at("restitution"),
                "restitution must be between 0 and 1",
            ));
        }
        let shape = place.at("shape");
        let positive = |value: f32, what: &str, at: Place| -> Result<(), SceneError> {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(self.bad(&at, format!("{what} must be positive, not {value}")))
            }
        };
        match &mut collider.shape {
            Shape::Sphere { radius } => {
                positive(*radius, "radius", shape.at("Sphere").at("radius"))?
            }
            Shape::Box { half_extents } => {
                let at = shape.at("Box").at("half_extents");
                for v in half_extents.to_array() {
                    positive(v, "every half extent", at.clone())?;
                }
            }
            Shape::Capsule {
                half_height,
                radius,
            } => {
                let at = shape.at("Capsule");
                positive(*radius, "radius", at.at("radius"))?;
                if !(half_height.is_finite() && *half_height >= 0.0) {
                    return Err(self.bad(&at.at("half_height"), "half_height must be zero or more"));
                }
            }
            Shape::Mesh { mesh } => {
                if !self.meshes.borrow().iter().any(|m| m.id == *mesh) {
                    return Err(self.bad(
                        &shape.at("Mesh"),
                        "a level mesh is declared with `TriMesh` or `Heightfield`, not by id",
                    ));
                }
            }
            Shape::HalfSpace { normal } => {
                let at = shape.at("HalfSpace").at("normal");
                self.finite(&normal.to_array(), &at)?;
                let unit = sim_math::normalize(*normal);
                if unit == Vec3::ZERO {
                    return Err(self.bad(&at, "the normal cannot be zero"));
                }
                *normal = unit;
            }
        }
        Ok(collider)
    }
}
