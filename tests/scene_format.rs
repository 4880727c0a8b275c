//! The scene format: cooking gives canonical bytes, loading gives the same entity ids every time,
//! and every kind of bad input gets a typed error naming the file and the place.

use std::path::Path;

use bevy::prelude::*;
use rusting_engine::physics::{RigidBody, Shape};
use rusting_engine::scene::{self, SceneError, SceneId};

const FIXTURE: &str = "tests/scenes/crates.scene.json";

fn fixture() -> String {
    std::fs::read_to_string(FIXTURE).unwrap()
}

/// FNV-1a of bytes.
fn fnv(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        hash ^= b as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The same scene written differently (keys in another order, entities in another order, numbers
/// spelled `2` or `2.0` or `2e0`, extra whitespace) cooks to the same bytes, and those bytes are
/// pinned. Fails if cooking keeps the source's entity order or key order, formats floats by the
/// locale or with a fixed number of digits, or converts Euler angles with platform trigonometry
/// (the pin catches any bit of the quaternion changing).
#[test]
fn cooking_gives_the_same_bytes_however_the_source_is_written() {
    let cooked = scene::cook(&fixture(), Path::new(FIXTURE)).unwrap();
    let bytes = cooked.to_bytes();

    let mut value: serde_json::Value = serde_json::from_str(&fixture()).unwrap();
    value["entities"].as_array_mut().unwrap().reverse();
    // Keys come out sorted here, unlike the fixture; respell a number and add whitespace too.
    let respelled = serde_json::to_string(&value)
        .unwrap()
        .replace("\"mass\":2", "\"mass\":2.0e0")
        .replace(",", " ,\n ");
    assert!(respelled.contains("2.0e0"));
    let recooked = scene::cook(&respelled, Path::new("respelled.json")).unwrap();
    assert_eq!(recooked.to_bytes(), bytes);

    let ids: Vec<u64> = cooked.entities.iter().map(|e| e.id).collect();
    assert_eq!(ids, [1, 20, 25, 30, 40]);
    let ground = &cooked.entities[0];
    assert_eq!(
        ground.components.collider.unwrap().shape,
        Shape::HalfSpace { normal: Vec3::Y },
        "normals are normalized when cooking"
    );
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(
        text.contains("\"friction\": 0.5"),
        "defaults are filled in:\n{text}"
    );
    assert_eq!(
        fnv(&bytes),
        PINNED_COOKED,
        "cooked bytes changed ({:#x}):\n{text}",
        fnv(&bytes)
    );
}

const PINNED_COOKED: u64 = 0x0afe_b2ba_f905_835b;

/// Loading spawns entities in `SceneId` order, so two loads into fresh apps give the same entity
/// for every id, and the bodies simulate. Fails if loading spawns in file order.
#[test]
fn loading_gives_the_same_entity_ids_every_time() {
    let cooked = scene::cook(&fixture(), Path::new(FIXTURE)).unwrap();
    let load = || {
        let mut app = rusting_engine::App::default();
        app.setup().unwrap();
        let spawned = scene::spawn_scene(app.world_mut(), &cooked);
        let mut pairs: Vec<(u64, Entity)> = spawned
            .iter()
            .map(|&e| (app.world().get::<SceneId>(e).unwrap().0, e))
            .collect();
        pairs.sort();
        (app, pairs)
    };
    let (mut first, ids) = load();
    let (_, again) = load();
    assert_eq!(ids, again);
    let by_order: Vec<Entity> = ids.iter().map(|(_, e)| *e).collect();
    let mut sorted = by_order.clone();
    sorted.sort_by_key(|e| e.index());
    assert_eq!(
        by_order, sorted,
        "entities must be spawned in SceneId order"
    );

    let ball = ids.iter().find(|(id, _)| *id == 30).unwrap().1;
    assert_eq!(first.world().get::<Name>(ball).unwrap().as_str(), "Ball");
    let start = first.world().get::<Transform>(ball).unwrap().translation;
    for _ in 0..30 {
        let step = first.fixed_step();
        first.update(step);
    }
    let now = first.world().get::<Transform>(ball).unwrap().translation;
    assert!(
        now.y < start.y && now.x > start.x,
        "the ball should fly: {start} -> {now}"
    );
    assert_eq!(first.world().get::<RigidBody>(ball).unwrap().mass, 0.5);
}

fn cook_error(text: &str) -> SceneError {
    scene::cook(text, Path::new("levels/bad.scene.json")).unwrap_err()
}

fn with_entity(entity: &str) -> String {
    format!("{{\"format_version\": 1, \"entities\": [{{\"id\": 1}}, {entity}]}}")
}

/// Malformed JSON names the file, line and column.
#[test]
fn malformed_json_names_the_line_and_column() {
    let error = cook_error("{\n  \"format_version\": 1,\n  \"entities\": [ { \"id\": 1, } ]\n}");
    let SceneError::Json {
        file, line, column, ..
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(file, Path::new("levels/bad.scene.json"));
    assert_eq!((*line, *column), (3, 28));
    assert!(
        error
            .to_string()
            .starts_with("levels/bad.scene.json:3:28: ")
    );
}

/// A component name that cannot be a type is refused by cook with its pointer; one that can (a
/// misspelling such as `Colider`, or a game's own type) is kept for the game to check when it loads
/// the scene (`game_components_load_from_scenes` covers that check).
#[test]
fn unknown_components_are_named() {
    let error = cook_error(&with_entity(r#"{"id": 2, "components": {"Coli-der": {}}}"#));
    assert_eq!(
        error,
        SceneError::UnknownComponent {
            file: "levels/bad.scene.json".into(),
            pointer: "/entities/1/components/Coli-der".into(),
            name: "Coli-der".into(),
        }
    );
    let kept = scene::cook(
        &with_entity(r#"{"id": 2, "components": {"Colider": {}}}"#),
        Path::new("levels/bad.scene.json"),
    )
    .unwrap();
    assert!(kept.entities[1].components.game.contains_key("Colider"));
}

/// Bad values (negative mass, zero radius, overflowing numbers, unknown fields, wrong types) point
/// at the value.
#[test]
fn bad_values_point_at_the_value() {
    let cases = [
        (
            r#"{"id": 2, "components": {"RigidBody": {"mass": -1}}}"#,
            "/entities/1/components/RigidBody/mass",
        ),
        (
            r#"{"id": 2, "components": {"Collider": {"shape": {"Sphere": {"radius": 0}}}}}"#,
            "/entities/1/components/Collider/shape/Sphere/radius",
        ),
        (
            r#"{"id": 2, "transform": {"translation": [0, 1e39, 0]}}"#,
            "/entities/1/transform/translation",
        ),
        (
            r#"{"id": 2, "components": {"RigidBody": {"mas": 1}}}"#,
            "/entities/1/components/RigidBody",
        ),
        (r#"{"id": 2, "name": 7}"#, "/entities/1/name"),
        (
            r#"{"id": 2, "components": {"Tween": {"from": [0, 0, 0], "to": [1, 0, 0], "duration": 0}}}"#,
            "/entities/1/components/Tween/duration",
        ),
        (r#"{"id": -2}"#, "/entities/1/id"),
        (
            r#"{"id": 2, "transform": {"rotation": [0, 0, 0, 0]}}"#,
            "/entities/1/transform/rotation",
        ),
        (
            r#"{"id": 2, "components": {"Collider": {"shape": {"Box": {"half_extents": [1, 0, 1]}}, "restitution": 2}}}"#,
            "/entities/1/components/Collider/restitution",
        ),
    ];
    for (entity, pointer) in cases {
        match cook_error(&with_entity(entity)) {
            SceneError::BadValue {
                file,
                pointer: got,
                reason,
            } => {
                assert_eq!(file, Path::new("levels/bad.scene.json"));
                assert_eq!(got, pointer, "{entity}: {reason}");
            }
            other => panic!("{entity}: {other:?}"),
        }
    }
}

/// A duplicate id names both places.
#[test]
fn duplicate_ids_name_both_places() {
    let error = cook_error(&with_entity(r#"{"id": 1}"#));
    assert_eq!(
        error,
        SceneError::DuplicateId {
            file: "levels/bad.scene.json".into(),
            pointer: "/entities/1/id".into(),
            id: 1,
            first: "/entities/0/id".into(),
        }
    );
}

/// A missing or newer format version is refused, and a missing file is an I/O error naming it.
#[test]
fn versions_and_missing_files_are_refused_clearly() {
    assert!(matches!(
        cook_error(r#"{"entities": []}"#),
        SceneError::UnsupportedVersion { .. }
    ));
    assert!(matches!(
        cook_error(r#"{"format_version": 2}"#),
        SceneError::UnsupportedVersion { .. }
    ));
    assert!(matches!(
        cook_error(r#"{"format_version": 1.5}"#),
        SceneError::UnsupportedVersion { .. }
    ));
    let error = scene::cook_file(Path::new("no/such.scene.json")).unwrap_err();
    assert!(matches!(error, SceneError::Io { .. }));
    assert!(error.to_string().starts_with("no/such.scene.json: "));
}

/// Colours and the camera are presentation: a scene that gains an `Appearance` on an entity and a
/// camera offset in its settings cooks to other bytes (the window needs them) but keeps its
/// identity, so replays recorded before the recolouring still play; changing a simulated value
/// changes the identity. A colour outside 0 to 1 is refused at its pointer. Fails if
/// `SceneIdentity::of` hashes the presentation data (recolouring would invalidate every replay) or
/// if it leaves anything simulated out.
#[test]
fn recolouring_a_scene_keeps_its_identity() {
    let plain = scene::cook(&fixture(), Path::new(FIXTURE)).unwrap();
    let mut source: serde_json::Value = serde_json::from_str(&fixture()).unwrap();
    source["settings"]["camera"] = serde_json::json!({"offset": [0, 12, 14]});
    source["entities"][0]["components"]["Appearance"] =
        serde_json::json!({"color": [0.9, 0.2, 0.6]});
    let recoloured = scene::cook(&source.to_string(), Path::new(FIXTURE)).unwrap();
    assert_ne!(plain.to_bytes(), recoloured.to_bytes());
    assert!(
        recoloured
            .entities
            .iter()
            .any(|e| e.components.appearance.is_some())
    );
    let identity = |s: &scene::CookedScene| scene::SceneIdentity::of("crates", s).cooked_hash;
    assert_eq!(identity(&plain), identity(&recoloured));

    let mut moved = source.clone();
    moved["settings"]["gravity"] = serde_json::json!([0, -9.0, 0]);
    let moved = scene::cook(&moved.to_string(), Path::new(FIXTURE)).unwrap();
    assert_ne!(identity(&plain), identity(&moved));

    match cook_error(&with_entity(
        r#"{"id": 2, "components": {"Appearance": {"color": [1.5, 0, 0]}}}"#,
    )) {
        SceneError::BadValue { pointer, .. } => {
            assert_eq!(pointer, "/entities/1/components/Appearance/color")
        }
        other => panic!("{other:?}"),
    }
}

/// A GPU body's rule and custom values come from the scene: `GpuBehaviour` cooks into the
/// entity's components (and so into the scene's identity), and a period that is not positive or a
/// custom value that overflows is refused at its pointer. Fails if the cook drops the component
/// (the game then runs every GPU body without its rule) or skips the period check (the GPU would
/// be handed a rule it refuses mid-run).
#[test]
fn gpu_behaviour_comes_from_the_scene() {
    use rusting_engine::physics::gpu::{GpuBehaviour, GpuRule};
    let source = with_entity(
        r#"{"id": 2, "components": {"GpuBehaviour": {"rule": {"EmitEvery": {"period": 0.5}}, "custom": [1, 2, 3, 4]}}}"#,
    );
    let cooked = scene::cook(&source, Path::new(FIXTURE)).unwrap();
    let behaviour = cooked
        .entities
        .iter()
        .find_map(|e| e.components.gpu_behaviour)
        .expect("the behaviour is cooked");
    assert_eq!(
        behaviour,
        GpuBehaviour {
            rule: GpuRule::EmitEvery { period: 0.5 },
            custom: [1.0, 2.0, 3.0, 4.0],
        }
    );
    let plain = scene::cook(&fixture(), Path::new(FIXTURE)).unwrap();
    let identity = |s: &scene::CookedScene| scene::SceneIdentity::of("crates", s).cooked_hash;
    assert_ne!(identity(&plain), identity(&cooked));

    for (component, pointer) in [
        (
            r#"{"rule": {"EmitEvery": {"period": 0}}}"#,
            "/entities/1/components/GpuBehaviour/rule/EmitEvery/period",
        ),
        (
            r#"{"custom": [0, 1e39, 0, 0]}"#,
            "/entities/1/components/GpuBehaviour/custom",
        ),
    ] {
        match cook_error(&with_entity(&format!(
            r#"{{"id": 2, "components": {{"GpuBehaviour": {component}}}}}"#
        ))) {
            SceneError::BadValue { pointer: at, .. } => assert_eq!(at, pointer, "{component}"),
            other => panic!("{component}: {other:?}"),
        }
    }
}

/// Counts in a scene are limited before anything is spawned or looped over: a burst emitter
/// asking for `u32::MAX` particles (which `rusting run` would otherwise spend hours spawning) is
/// refused at `/entities/1/components/BurstEmitter/particles` naming the limit, the limit itself
/// is accepted, and a scene of more than `MAX_SCENE_ENTITIES` entities is refused at `/entities`.
/// Fails when either check goes (seen failing so: the emitter cooks).
#[test]
fn a_scene_over_a_count_limit_is_refused_with_its_pointer() {
    use rusting_engine::gameplay::MAX_BURST_PARTICLES;
    use rusting_engine::scene::MAX_SCENE_ENTITIES;

    let emitter = |particles: u64| {
        format!(r#"{{"id": 2, "components": {{"BurstEmitter": {{"particles": {particles}}}}}}}"#)
    };
    match cook_error(&with_entity(&emitter(u64::from(u32::MAX)))) {
        SceneError::BadValue {
            file,
            pointer,
            reason,
        } => {
            assert_eq!(file, Path::new("levels/bad.scene.json"));
            assert_eq!(pointer, "/entities/1/components/BurstEmitter/particles");
            assert!(
                reason.contains(&u32::MAX.to_string())
                    && reason.contains(&MAX_BURST_PARTICLES.to_string()),
                "{reason}"
            );
        }
        other => panic!("expected BadValue, got {other:?}"),
    }
    scene::cook(
        &with_entity(&emitter(u64::from(MAX_BURST_PARTICLES))),
        Path::new("levels/ok.scene.json"),
    )
    .expect("the limit itself is allowed");

    let entities: Vec<String> = (0..=MAX_SCENE_ENTITIES as u64)
        .map(|id| format!(r#"{{"id": {}}}"#, id + 1))
        .collect();
    let text = format!(
        r#"{{"format_version": 1, "entities": [{}]}}"#,
        entities.join(",")
    );
    match cook_error(&text) {
        SceneError::BadValue {
            pointer, reason, ..
        } => {
            assert_eq!(pointer, "/entities");
            assert!(reason.contains(&MAX_SCENE_ENTITIES.to_string()), "{reason}");
        }
        other => panic!("expected BadValue, got {other:?}"),
    }
}

/// A scene's `LockedAxes` cooks onto its entity and spawns with it; on a GPU body (which the CPU
/// solver does not step) it is refused with its pointer, as is an unknown lock name. Fails if the
/// cook drops the component or lets a GPU body keep locks it would silently ignore.
#[test]
fn locked_axes_load_from_scenes_and_gpu_bodies_refuse_them() {
    use rusting_engine::physics::LockedAxes;
    let upright = r#"{"id": 2, "components": {"RigidBody": {"mass": 70},
        "Collider": {"shape": {"Capsule": {"half_height": 0.5, "radius": 0.4}}},
        "LockedAxes": {"rotation_x": true, "rotation_z": true}}}"#;
    let cooked = scene::cook(&with_entity(upright), Path::new("levels/ok.scene.json")).unwrap();
    assert_eq!(
        cooked.entities[1].components.locked_axes,
        Some(LockedAxes::UPRIGHT)
    );
    let mut app = rusting_engine::App::default();
    app.setup().unwrap();
    let spawned = scene::spawn_scene(app.world_mut(), &cooked);
    let body = spawned
        .iter()
        .copied()
        .find(|&e| app.world().get::<SceneId>(e) == Some(&SceneId(2)))
        .unwrap();
    assert_eq!(
        app.world().get::<LockedAxes>(body),
        Some(&LockedAxes::UPRIGHT)
    );

    let gpu = r#"{"id": 2, "components": {"RigidBody": {"mass": 1},
        "Collider": {"shape": {"Sphere": {"radius": 0.5}}},
        "PhysicsBody": {"class": "Gpu"}, "LockedAxes": {"rotation_x": true}}}"#;
    let error = cook_error(&with_entity(gpu)).to_string();
    assert!(
        error.contains("/entities/1/components/LockedAxes") && error.contains("CPU solver only"),
        "{error}"
    );
    let misspelt = r#"{"id": 2, "components": {"LockedAxes": {"rotate_x": true}}}"#;
    let error = cook_error(&with_entity(misspelt)).to_string();
    assert!(
        error.contains("/entities/1/components/LockedAxes") && error.contains("rotate_x"),
        "{error}"
    );
}
