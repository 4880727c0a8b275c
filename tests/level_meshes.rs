//! Level colliders: static triangle meshes and height grids, declared in code or in scenes (inline
//! or in a file beside the scene), that spheres, boxes and capsules rest on, the same on every
//! thread count; bad mesh data is refused with the file and the place.

use std::path::Path;

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::physics::geometry::mesh::TriangleMesh;
use rusting_engine::physics::{LevelMeshes, Shape};
use rusting_engine::prelude::*;
use rusting_engine::scene::{SceneError, cook, spawn_scene};

#[path = "support/tick_hashes.rs"]
mod tick_hashes;
use tick_hashes::run;

/// The lowest point of a resting body's shape, by its current rotation.
fn lowest(shape: &Shape, at: &Transform) -> f32 {
    let axes = [
        at.rotation * Vec3::X,
        at.rotation * Vec3::Y,
        at.rotation * Vec3::Z,
    ];
    let below = match *shape {
        Shape::Sphere { radius } => radius,
        Shape::Box { half_extents: h } => {
            axes[0].y.abs() * h.x + axes[1].y.abs() * h.y + axes[2].y.abs() * h.z
        }
        Shape::Capsule {
            half_height,
            radius,
        } => axes[1].y.abs() * half_height + radius,
        _ => 0.0,
    };
    at.translation.y - below
}

/// A sphere, a box or a capsule lying down, by `k`.
fn body(k: usize) -> (Collider, Quat) {
    match k % 3 {
        0 => (Collider::sphere(0.3), Quat::IDENTITY),
        1 => (
            Collider::cuboid(Vec3::new(0.35, 0.25, 0.3)),
            Quat::from_rotation_y(0.3 * k as f32),
        ),
        _ => (
            Collider::capsule(0.3, 0.2),
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
        ),
    }
}

/// Drops bodies at `spots` from 1 m above `floor(x, z)`, runs 300 ticks, and checks each one came
/// to rest on the floor: slower than 5 cm/s, its lowest point within 2 cm of the floor under it.
/// Returns the tick hashes.
fn drop_and_settle(
    mut app: App,
    spots: &[(f32, f32)],
    floor: impl Fn(f32, f32) -> f32,
) -> Vec<u64> {
    let bodies: Vec<Entity> = spots
        .iter()
        .enumerate()
        .map(|(k, &(x, z))| {
            let (collider, rotation) = body(k);
            app.world_mut()
                .spawn((
                    Transform::from_xyz(x, floor(x, z) + 1.0, z).with_rotation(rotation),
                    collider,
                    RigidBody::dynamic(1.0),
                ))
                .id()
        })
        .collect();
    app.setup().unwrap();
    let hashes = run(&mut app, 300);
    for (k, &entity) in bodies.iter().enumerate() {
        let at = *app.world().get::<Transform>(entity).unwrap();
        let shape = app.world().get::<Collider>(entity).unwrap().shape;
        let speed = app
            .world()
            .get::<RigidBody>(entity)
            .unwrap()
            .linear_velocity
            .length();
        let under = floor(at.translation.x, at.translation.z);
        let gap = lowest(&shape, &at) - under;
        assert!(
            gap.abs() < 0.02 && speed < 0.05,
            "body {k} ({shape:?}) did not come to rest on the floor: {gap} m above it at {}, \
             moving at {speed} m/s",
            at.translation
        );
    }
    hashes
}

/// A floor at height 0.5 of irregular triangles: a 12 m square cut into a fan around an off-centre
/// point, then each fan triangle split in two at its long edge's middle.
fn irregular_floor() -> TriangleMesh {
    let hub = Vec3::new(1.3, 0.0, -0.7);
    let mut rim = Vec::new();
    for k in 0..6 {
        let t = -6.0 + 2.0 * k as f32;
        rim.push(Vec3::new(t, 0.0, -6.0));
    }
    for k in 0..6 {
        let t = -6.0 + 2.0 * k as f32;
        rim.push(Vec3::new(6.0, 0.0, t));
    }
    for k in 0..6 {
        let t = 6.0 - 2.0 * k as f32;
        rim.push(Vec3::new(t, 0.0, 6.0));
    }
    for k in 0..6 {
        let t = 6.0 - 2.0 * k as f32;
        rim.push(Vec3::new(-6.0, 0.0, t));
    }
    let mut vertices = vec![hub];
    let mut triangles = Vec::new();
    let n = rim.len();
    for k in 0..n {
        let (a, b) = (rim[k], rim[(k + 1) % n]);
        let middle = (a + b) * 0.5;
        let base = vertices.len() as u32;
        vertices.extend([a, middle, b]);
        // Seen from above (+Y), counter-clockwise: the rim runs clockwise, so hub, next, this.
        triangles.push([0, base + 1, base]);
        triangles.push([0, base + 2, base + 1]);
    }
    TriangleMesh::new(vertices, triangles).unwrap()
}

/// Spheres, boxes and capsules dropped on a level of irregular triangles (placed at 0.5 m and
/// turned a quarter about Y, so the mesh's frame is not the world's) come to rest on it, each
/// within 2 cm of the floor and below 5 cm/s; the run's hashes are the same on 1 and 4 threads.
///
/// Fails if bodies fall through or sink into a mesh, or if mesh contacts depend on the thread
/// count (seen failing with each body feature's contact taken from the first triangle it met
/// instead of the deepest: bodies over shared edges kept sliding at 0.1 to 0.2 m/s).
#[test]
fn bodies_rest_on_a_triangle_mesh_level() {
    let spots: Vec<(f32, f32)> = (0..24)
        .map(|k| {
            let f = k as f32;
            ((f * 2.37) % 9.0 - 4.5, (f * 1.61) % 9.0 - 4.5)
        })
        .collect();
    let mut hashes = Vec::new();
    for threads in [1, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        hashes.push(pool.install(|| {
            let mut app = App::default();
            let id = app
                .world_mut()
                .resource_mut::<LevelMeshes>()
                .insert(irregular_floor());
            app.world_mut().spawn((
                Transform::from_xyz(0.0, 0.5, 0.0)
                    .with_rotation(Quat::from_rotation_y(std::f32::consts::FRAC_PI_2)),
                Collider::mesh(id),
            ));
            drop_and_settle(app, &spots, |_, _| 0.5)
        }));
    }
    assert_eq!(hashes[0], hashes[1], "the thread count changed the run");
}

/// The heights of the scene's grid: 0 on the west half and 0.4 m on the east, joined by a ramp.
fn step_height(column: usize) -> f32 {
    if column >= 11 { 0.4 } else { 0.0 }
}

/// Spheres, boxes and capsules dropped on a height grid declared in a scene (21 by 21 heights a
/// metre apart, a flat step of 0.4 m across the middle) come to rest on it, on both levels.
///
/// Fails if the grid's triangles face down (seen failing so: the bodies fell through, a box 122 m
/// below the grid after 300 ticks), if its heights are read column for row (the step would run the
/// other way), or if bodies sink into it.
#[test]
fn bodies_rest_on_a_heightfield() {
    let heights: Vec<f32> = (0..21 * 21).map(|i| step_height(i % 21)).collect();
    let scene = serde_json::json!({
        "format_version": 1,
        "entities": [{ "id": 1, "name": "Hills", "components": { "Collider": { "shape": {
            "Heightfield": { "rows": 21, "columns": 21, "cell_size": [1, 1], "heights": heights }
        } } } }]
    });
    let cooked = cook(&scene.to_string(), Path::new("hills.scene.json")).unwrap();
    assert_eq!(cooked.meshes.len(), 1);
    let mut app = App::default();
    spawn_scene(app.world_mut(), &cooked);
    // Away from the ramp between x = 0 and x = 1: on the low west and the high east.
    let spots: Vec<(f32, f32)> = (0..18)
        .map(|k| {
            let f = k as f32;
            let x = if k % 2 == 0 {
                -7.0 + (f * 0.77) % 5.0
            } else {
                2.5 + (f * 0.61) % 5.0
            };
            (x, (f * 1.93) % 14.0 - 7.0)
        })
        .collect();
    drop_and_settle(app, &spots, |x, _| if x > 0.5 { 0.4 } else { 0.0 });
}

/// Bad mesh data is refused when the scene is cooked (so by `rusting validate` and at load),
/// naming the file and the JSON pointer of the vertex, triangle or height at fault, also when
/// the mesh is in a file beside the scene.
///
/// Fails if any of them is accepted, panics, or names the wrong file or place.
#[test]
fn bad_mesh_data_is_refused_with_file_and_place() {
    let scene = |shape: serde_json::Value| {
        serde_json::json!({ "format_version": 1, "entities": [
            { "id": 1, "name": "Level", "components": { "Collider": { "shape": shape } } }
        ] })
        .to_string()
    };
    let file = Path::new("level.scene.json");
    let at = "/entities/0/components/Collider/shape";
    let cases = [
        (
            serde_json::json!({ "TriMesh": { "vertices": [[0, 0, 0], [1, 0, 0], [0, 0, 1]],
                "indices": [[0, 2, 1], [0, 1, 3]] } }),
            format!("{at}/TriMesh/indices/1"),
            "names vertex 3",
        ),
        (
            serde_json::json!({ "TriMesh": { "vertices": [[0, 0, 0], [1, 0, 0], [2, 0, 0]],
                "indices": [[0, 1, 2]] } }),
            format!("{at}/TriMesh/indices/0"),
            "degenerate",
        ),
        (
            serde_json::json!({ "TriMesh": { "vertices": [[0, 0, 0], [1, 1e39, 0], [0, 0, 1]],
                "indices": [[0, 2, 1]] } }),
            format!("{at}/TriMesh/vertices/1/1"),
            "finite",
        ),
        (
            serde_json::json!({ "Heightfield": { "rows": 3, "columns": 3, "cell_size": [1, 1],
                "heights": [0, 0, 0, 0, 0, 0, 0, 0] } }),
            format!("{at}/Heightfield/heights"),
            "needs 9 heights",
        ),
        (
            serde_json::json!({ "Heightfield": { "rows": 2, "columns": 2, "cell_size": [1, 0],
                "heights": [0, 0, 0, 0] } }),
            format!("{at}/Heightfield"),
            "positive size",
        ),
        (
            serde_json::json!({ "Mesh": { "mesh": 7 } }),
            format!("{at}/Mesh"),
            "TriMesh",
        ),
    ];
    for (shape, pointer, says) in cases {
        let error = cook(&scene(shape.clone()), file).expect_err("bad mesh data was accepted");
        match &error {
            SceneError::BadValue {
                file: named,
                pointer: found,
                reason,
            } => {
                assert_eq!(named, file, "{shape}");
                assert_eq!(found, &pointer, "{shape}: {error}");
                assert!(reason.contains(says), "{shape}: {error}");
            }
            other => panic!("{shape}: {other:?}"),
        }
    }
    // A mesh in a file beside the scene: the mesh file and the place in it.
    let dir = std::env::temp_dir().join(format!("rusting-level-meshes-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("levels")).unwrap();
    std::fs::write(
        dir.join("levels/cave.mesh.json"),
        r#"{ "vertices": [[0, 0, 0], [1, 0, 0], [0, 0, 1]], "indices": [[0, 2, 1], [2, 2, 1]] }"#,
    )
    .unwrap();
    let text = scene(serde_json::json!({ "TriMesh": { "file": "levels/cave.mesh.json" } }));
    let error = cook(&text, &dir.join("cave.scene.json")).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("cave.mesh.json: /indices/1") && message.contains("degenerate"),
        "{message}"
    );
    // A dynamic body cannot be a mesh.
    let good = serde_json::json!({ "file": "levels/cave.mesh.json" });
    std::fs::write(
        dir.join("levels/cave.mesh.json"),
        r#"{ "vertices": [[0, 0, 0], [1, 0, 0], [0, 0, 1]], "indices": [[0, 2, 1]] }"#,
    )
    .unwrap();
    let moving = serde_json::json!({ "format_version": 1, "entities": [
        { "id": 1, "name": "Level", "components": {
            "RigidBody": { "mass": 1.0 },
            "Collider": { "shape": { "TriMesh": good } } } }
    ] });
    let error = cook(&moving.to_string(), &dir.join("cave.scene.json")).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("/entities/0/components/RigidBody"),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
