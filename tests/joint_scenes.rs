//! Joints declared in scenes: cooked, loaded with their bodies' simulation ids, refused with the
//! file and JSON pointer of a bad value, and left out of the start-overlap check.

use bevy::math::Vec3;
use bevy::prelude::*;
use rusting_engine::prelude::*;
use rusting_engine::state::SimId;

#[path = "support/joint_apps.rs"]
mod joint_apps;
use joint_apps::*;

/// A scene of a hinged gate and a chain of two links on ropes.
const JOINT_SCENE: &str = r#"{
  "format_version": 1,
  "entities": [
    { "id": 10, "name": "Gate",
      "transform": { "translation": [0.5, 1, 0] },
      "components": { "RigidBody": { "mass": 5 },
                      "Collider": { "shape": { "Box": { "half_extents": [0.5, 1, 0.05] } } } } },
    { "id": 11, "name": "Gate hinge",
      "components": { "Joint": {
        "body_b": 10,
        "frame_a": { "anchor": [0, 1, 0], "rotation": [0, 0, 0.70710677, 0.70710677] },
        "frame_b": { "anchor": [-0.5, 0, 0], "rotation": [0, 0, 0.70710677, 0.70710677] },
        "kind": { "Revolute": { "limits": { "lower": -1.5, "upper": 1.5 },
                                "motor": { "Position": { "target": 0.8, "stiffness": 2,
                                                         "damping": 1, "max_force": 200 } } } }
      } } },
    { "id": 20, "name": "Lamp",
      "transform": { "translation": [3, 2, 0] },
      "components": { "RigidBody": { "mass": 1 }, "Collider": { "shape": { "Sphere": { "radius": 0.2 } } } } },
    { "id": 21, "name": "Lamp rope",
      "components": { "Joint": {
        "body_b": 20, "frame_a": { "anchor": [3, 3, 0] },
        "kind": { "Distance": { "min": 0, "max": 1 } } } } }
  ]
}"#;

/// Joints declared in a scene cook, load with their bodies' simulation ids in place of the scene
/// ids, and hold: the gate's motor turns it to 0.8 rad about Y and the lamp hangs 1 m under its
/// hook. Fails if loading keeps the scene ids (the joints then name the wrong bodies: the gate
/// hinge names the lamp rope's entity, which is no body, and the gate falls).
#[test]
fn joints_load_from_scenes() {
    use rusting_engine::scene;
    let cooked = scene::cook(JOINT_SCENE, std::path::Path::new("gate.scene.json")).unwrap();
    let mut app = app();
    let spawned = scene::spawn_scene(app.world_mut(), &cooked);
    let gate = *app.world().get::<SimId>(spawned[0]).unwrap();
    let lamp = *app.world().get::<SimId>(spawned[2]).unwrap();
    let hinge = app.world().get::<Joint>(spawned[1]).unwrap();
    assert_eq!((hinge.body_a, hinge.body_b), (None, gate));
    for _ in 0..300 {
        tick(&mut app);
    }
    let angle = door_angle(transform(&mut app, gate).rotation);
    assert!((angle - 0.8).abs() < 0.01, "the gate stands at {angle} rad");
    let at = transform(&mut app, lamp).translation;
    assert!(
        (at - Vec3::new(3.0, 2.0, 0.0)).length() < 0.02,
        "the lamp hangs at {at}"
    );
}

/// A bad joint in a scene is refused with the file and the JSON pointer of the value at fault.
/// Fails if the scene checks skip `Joint::check` or the bodies' existence (the scene then cooks).
#[test]
fn bad_joints_in_scenes_name_the_place() {
    use rusting_engine::scene;
    let cases = [
        (
            "\"body_b\": 20,",
            "\"body_b\": 99,",
            "/entities/3/components/Joint/body_b",
            "no entity",
        ),
        (
            "\"body_b\": 20,",
            "\"body_b\": 21,",
            "/entities/3/components/Joint/body_b",
            "no Collider",
        ),
        (
            "\"min\": 0, \"max\": 1",
            "\"min\": 2, \"max\": 1",
            "/entities/3/components/Joint/kind/Distance:",
            "lower bound",
        ),
        (
            "\"body_b\": 10,",
            "\"body_a\": 10, \"body_b\": 10,",
            "/entities/1/components/Joint/body_b",
            "to itself",
        ),
        (
            "\"lower\": -1.5",
            "\"lower\": -4",
            "/entities/1/components/Joint/kind/Revolute/limits:",
            "pi",
        ),
    ];
    for (from, to, pointer, words) in cases {
        assert!(JOINT_SCENE.contains(from), "{from}");
        let text = JOINT_SCENE.replacen(from, to, 1);
        let error = scene::cook(&text, std::path::Path::new("levels/gate.scene.json"))
            .expect_err(to)
            .to_string();
        assert!(error.contains("levels/gate.scene.json"), "{error}");
        assert!(error.contains(pointer), "{to}: {error}");
        assert!(error.contains(words), "{to}: {error}");
    }
}

/// A scene's bodies that a joint holds may overlap at the start (a ragdoll's limbs at their
/// joints): `rusting validate`'s overlap check leaves them out, and still reports the same bodies
/// without the joint. Fails if the check runs without the scene's joints.
#[test]
fn joined_bodies_may_overlap_in_a_scene() {
    use rusting_engine::physics::PhysicsSettings;
    use rusting_engine::scene::LocatedScene;
    use rusting_engine::scene::overlap::bodies_overlapping_at_start;
    let dir = std::env::temp_dir().join(format!("rusting-joint-overlap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let limb = |id: u32, y: f32| {
        format!(
            r#"{{ "id": {id}, "transform": {{ "translation": [0, {y}, 0] }},
                 "components": {{ "RigidBody": {{ "mass": 1 }},
                   "Collider": {{ "shape": {{ "Capsule": {{ "half_height": 0.3, "radius": 0.1 }} }} }} }} }}"#
        )
    };
    let joint = r#"{ "id": 3, "components": { "Joint": { "body_a": 1, "body_b": 2,
        "frame_a": { "anchor": [0, 0.3, 0] }, "frame_b": { "anchor": [0, -0.3, 0] },
        "kind": { "Spherical": {} } } } }"#;
    let scene = |with_joint: bool| {
        let mut entities = vec![limb(1, 1.0), limb(2, 1.6)];
        if with_joint {
            entities.push(joint.to_string());
        }
        format!(
            r#"{{ "format_version": 1, "entities": [{}] }}"#,
            entities.join(",")
        )
    };
    let settings = PhysicsSettings::default();
    for (with_joint, expected) in [(true, 0), (false, 1)] {
        std::fs::write(dir.join("limbs.scene.json"), scene(with_joint)).unwrap();
        let located = LocatedScene::load(&dir, std::path::Path::new("limbs.scene.json")).unwrap();
        let found = bodies_overlapping_at_start(&located, &settings);
        assert_eq!(
            found.len(),
            expected,
            "with the joint: {with_joint}: {found:?}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
