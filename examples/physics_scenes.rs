//! Runs the engine's GPU-free physics scenes headless and writes a state-hash report for each, its
//! first [`DETAILED_TICKS`] ticks detailed down to the field: the scenes the engine's CI runs on every operating system
//! and CPU of its matrix (`.github/workflows/determinism.yml`) and compares with
//! `rusting hashes diff`, and that `tools/compare-cpu-builds.sh` compares across CPU targets.
//!
//! Usage: `cargo run --release --example physics_scenes -- <out-dir> [ticks]` (default 300, at
//! most 600). Writes `<out-dir>/<scene>.json` for each scene:
//!
//! - `crates`: `tests/scenes/crates.scene.json`, the solver tests' scene (a crate, a ball, a pill,
//!   a moving lift);
//! - `pyramid-rain`: a ten-row pyramid of boxes, and sixty spheres, capsules and tumbling boxes
//!   raining onto it;
//! - `body-heap`: 1000 spheres, boxes and capsules dropped in a heap onto the ground, with the
//!   positions and shapes of the CPU solver's thread-count test: from its first ticks, its largest
//!   colours have 40 to 50 batches the solver spreads over threads. Its report details no tick (a
//!   detailed tick of 1000 bodies takes about 7 MB); a difference there is named by its first tick
//!   and, after the last tick, by entity and component.
//! - `queries`: the pyramid and its rain, eight balls fired at 300 m/s at a 0.1 m wall (the
//!   solver's continuous sweep), and every tick a fan of rays, swept spheres, boxes and capsules,
//!   and box and shape overlaps across the scene, their answers kept in a hashed resource, so the
//!   spatial queries' bits are compared like the solver's.
//! - `joints`: every kind of joint, declared in the scene: a bridge of hinged planks with crates
//!   dropped on it, a swinging chain with cone limits, a motorised door, a slider driven into its
//!   limit with a block welded on, a spring, and a rope that breaks.
//!
//! The generated scenes go through the scene cooker like any game's, so every body has a
//! `SceneId` and a name the reports pair and blame by. `RUSTING_THREADS` limits the worker threads
//! as in a game. Exits 0 when every report is written, 2 on bad arguments, 1 when a scene or a
//! report fails.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bevy::prelude::IntoScheduleConfigs;
use rusting_engine::App;
use rusting_engine::game::SimpleGamePlugin;
use rusting_engine::game::headless;
use rusting_engine::physics::Shape;
use rusting_engine::physics::query::{QueryFilter, Ray, ShapeCast, SpatialQuery};
use rusting_engine::prelude::SimSet;
use rusting_engine::record::{StateDetail, StateHashReport};
use rusting_engine::runtime::RuntimeSettings;
use rusting_engine::scene::{CookedScene, SceneIdentity, cook, cook_file};
use serde_json::{Value, json};

/// The most ticks a run simulates.
const MAX_TICKS: u64 = 600;

/// How many ticks, from the first, the crates' and the pyramid's reports detail down to the field.
/// Both scenes have bodies in contact from the first ticks, so a platform difference in the solver's arithmetic shows in
/// them, where `rusting hashes diff` can name the field; a detailed tick of the pyramid takes
/// about 800 KB, so detailing every tick would make reports of hundreds of megabytes.
const DETAILED_TICKS: u64 = 20;

/// The layout generator the solver's thread-count test uses, so the heap is its heap.
#[path = "../tests/support/splitmix.rs"]
mod splitmix;
use splitmix::unit;

/// The ground every generated scene stands on.
fn ground() -> Value {
    json!({ "id": 1, "name": "Ground",
        "components": { "Collider": { "shape": { "HalfSpace": { "normal": [0, 1, 0] } } } } })
}

/// The pyramid and the rain falling on it.
fn pyramid_rain() -> Value {
    let mut entities = vec![ground()];
    let mut id = 100;
    for row in 0..10 {
        for k in 0..(10 - row) {
            let x = (k as f32 - (10 - row - 1) as f32 * 0.5) * 1.05;
            entities.push(json!({ "id": id, "name": format!("Box r{row} k{k}"),
                "transform": { "translation": [x, 0.5 + row as f32, 0.0] },
                "components": {
                    "RigidBody": { "mass": 1.0 },
                    "Collider": { "shape": { "Box": { "half_extents": [0.5, 0.5, 0.5] } } } } }));
            id += 1;
        }
    }
    for i in 0..60u32 {
        let f = i as f32;
        let shape = match i % 3 {
            0 => json!({ "shape": { "Sphere": { "radius": 0.35 } }, "restitution": 0.3 }),
            1 => json!({ "shape": { "Capsule": { "half_height": 0.2, "radius": 0.3 } } }),
            _ => json!({ "shape": { "Box": { "half_extents": [0.3, 0.2, 0.4] } } }),
        };
        entities.push(json!({ "id": 1000 + i, "name": format!("Rain {i}"),
            "transform": {
                "translation": [(f * 0.37) % 6.0 - 3.0, 12.0 + f * 0.6, (f * 0.53) % 2.0 - 1.0],
                "euler_degrees": [f * 6.0, f * 11.0, f * 17.0] },
            "components": {
                "RigidBody": { "mass": 0.5, "angular_velocity": [f * 0.1, 1.0, -0.5] },
                "Collider": shape } }));
    }
    json!({ "format_version": 1, "settings": { "gravity": [0, -9.81, 0] }, "entities": entities })
}

/// The pyramid and its rain, with a thin wall across X = 8 and eight balls fired at it.
fn queries_scene() -> Value {
    let mut scene = pyramid_rain();
    let entities = scene["entities"]
        .as_array_mut()
        .expect("a scene's entities");
    entities.push(json!({ "id": 2000, "name": "Wall",
        "transform": { "translation": [8.0, 3.0, 0.0] },
        "components": { "Collider": { "shape": { "Box": { "half_extents": [0.05, 3.0, 3.0] } } } } }));
    for i in 0..8u32 {
        let f = i as f32;
        entities.push(json!({ "id": 2100 + i, "name": format!("Shot {i}"),
            "transform": { "translation": [5.0, 1.0 + f * 0.5, f * 0.3 - 1.0] },
            "components": {
                "RigidBody": { "mass": 0.05,
                    "linear_velocity": [300.0 - f * 20.0, f * 15.0, 40.0 - f * 10.0] },
                "Collider": { "shape": { "Sphere": { "radius": 0.025 } } } } }));
    }
    scene
}

/// A joint's JSON frame: an anchor, and the joint's axis along Z when `across`.
fn frame(anchor: [f32; 3], across: bool) -> Value {
    let rotation = if across {
        [
            0.0,
            -std::f32::consts::FRAC_1_SQRT_2,
            0.0,
            std::f32::consts::FRAC_1_SQRT_2,
        ]
    } else {
        [0.0, 0.0, 0.0, 1.0]
    };
    json!({ "anchor": anchor, "rotation": rotation })
}

/// Every kind of joint, declared in the scene: a bridge of hinged planks with crates dropped on
/// it, a chain of ball-jointed capsules swinging down, a motorised door, a slider driven into its
/// limit, a weld, a spring, and a rope that breaks under a falling weight.
fn joints_scene() -> Value {
    let mut entities = vec![ground()];
    let mut joint_id = 5000;
    let mut joint = |entities: &mut Vec<Value>, name: String, spec: Value| {
        entities.push(json!({ "id": joint_id, "name": name, "components": { "Joint": spec } }));
        joint_id += 1;
    };
    let body = |id: u32, name: String, at: [f32; 3], mass: f32, shape: Value| {
        json!({ "id": id, "name": name, "transform": { "translation": at },
            "components": { "RigidBody": { "mass": mass }, "Collider": { "shape": shape } } })
    };
    // The bridge: 16 planks from x = -4 to 4 at a height of 4, its ends hinged to the world.
    let plank = json!({ "Box": { "half_extents": [0.25, 0.05, 1.0] } });
    for i in 0..16u32 {
        let x = -4.0 + 0.25 + 0.5 * i as f32;
        entities.push(body(
            100 + i,
            format!("Plank {i}"),
            [x, 4.0, 0.0],
            1.0,
            plank.clone(),
        ));
        let (body_a, anchor_a) = if i == 0 {
            (Value::Null, [-4.0, 4.0, 0.0])
        } else {
            (json!(99 + i), [0.25, 0.0, 0.0])
        };
        joint(
            &mut entities,
            format!("Hinge {i}"),
            json!({ "body_a": body_a, "body_b": 100 + i,
            "frame_a": frame(anchor_a, true), "frame_b": frame([-0.25, 0.0, 0.0], true),
            "kind": { "Revolute": {} } }),
        );
    }
    joint(
        &mut entities,
        "Hinge 16".into(),
        json!({ "body_b": 115,
        "frame_a": frame([4.0, 4.0, 0.0], true), "frame_b": frame([0.25, 0.0, 0.0], true),
        "kind": { "Revolute": {} } }),
    );
    for k in 0..6u32 {
        let f = k as f32;
        entities.push(body(
            200 + k,
            format!("Crate {k}"),
            [f * 1.2 - 3.0, 6.0 + f * 0.7, 0.1 * f],
            1.5,
            json!({ "Box": { "half_extents": [0.25, 0.25, 0.25] } }),
        ));
    }
    // The chain: ten capsules from a hook, laid out sideways to swing down.
    for i in 0..10u32 {
        let at = [8.0 + 0.5 * i as f32 + 0.25, 9.0, 0.0];
        entities.push(json!({ "id": 300 + i, "name": format!("Link {i}"),
            "transform": { "translation": at, "euler_degrees": [0.0, 0.0, 90.0] },
            "components": { "RigidBody": { "mass": 0.5 },
                "Collider": { "shape": { "Capsule": { "half_height": 0.17, "radius": 0.08 } } } } }));
        let (body_a, anchor_a) = if i == 0 {
            (Value::Null, [8.0, 9.0, 0.0])
        } else {
            (json!(299 + i), [0.0, -0.25, 0.0])
        };
        joint(
            &mut entities,
            format!("Link joint {i}"),
            json!({ "body_a": body_a, "body_b": 300 + i,
            "frame_a": frame(anchor_a, false), "frame_b": frame([0.0, 0.25, 0.0], false),
            "kind": { "Spherical": { "cone": 1.2 } } }),
        );
    }
    // A door on a vertical hinge, driven to 1 rad.
    entities.push(body(
        400,
        "Door".into(),
        [-8.5, 1.0, 3.0],
        10.0,
        json!({ "Box": { "half_extents": [0.5, 1.0, 0.05] } }),
    ));
    joint(
        &mut entities,
        "Door hinge".into(),
        json!({ "body_b": 400,
        "frame_a": { "anchor": [-9.0, 1.0, 3.0], "rotation": [0.0, 0.0, 0.70710677, 0.70710677] },
        "frame_b": { "anchor": [-0.5, 0.0, 0.0], "rotation": [0.0, 0.0, 0.70710677, 0.70710677] },
        "kind": { "Revolute": { "limits": { "lower": -1.5, "upper": 1.5 },
            "motor": { "Position": { "target": 1.0, "stiffness": 2.0, "damping": 1.0,
                                     "max_force": 200.0 } } } } }),
    );
    // A slider driven along X into its upper limit, a block welded to it.
    entities.push(body(
        410,
        "Slider".into(),
        [-8.0, 0.5, -3.0],
        2.0,
        json!({ "Box": { "half_extents": [0.3, 0.3, 0.3] } }),
    ));
    joint(
        &mut entities,
        "Rail".into(),
        json!({ "body_b": 410,
        "frame_a": frame([-8.0, 0.5, -3.0], false), "frame_b": frame([0.0, 0.0, 0.0], false),
        "kind": { "Prismatic": { "limits": { "lower": -1.0, "upper": 2.0 },
            "motor": { "Velocity": { "speed": 1.5, "max_force": 50.0 } } } } }),
    );
    entities.push(body(
        411,
        "Welded block".into(),
        [-8.0, 1.0, -3.0],
        0.5,
        json!({ "Box": { "half_extents": [0.2, 0.2, 0.2] } }),
    ));
    joint(
        &mut entities,
        "Weld".into(),
        json!({ "body_a": 410, "body_b": 411,
        "frame_a": frame([0.0, 0.5, 0.0], false), "frame_b": frame([0.0, 0.0, 0.0], false),
        "kind": "Fixed" }),
    );
    // A ball on a spring, and a crate on a rope that a falling weight snaps.
    entities.push(body(
        420,
        "Bob".into(),
        [-12.0, 3.0, 0.0],
        1.0,
        json!({ "Sphere": { "radius": 0.2 } }),
    ));
    joint(
        &mut entities,
        "Spring".into(),
        json!({ "body_b": 420,
        "frame_a": frame([-12.0, 5.0, 0.0], false),
        "kind": { "Distance": { "min": 0.5, "max": 3.0,
            "spring": { "rest_length": 1.5, "hertz": 1.5, "damping_ratio": 0.1 } } } }),
    );
    entities.push(body(
        430,
        "Hanging crate".into(),
        [-15.0, 3.0, 0.0],
        2.0,
        json!({ "Box": { "half_extents": [0.3, 0.3, 0.3] } }),
    ));
    joint(
        &mut entities,
        "Rope".into(),
        json!({ "body_b": 430,
        "frame_a": frame([-15.0, 5.3, 0.0], false), "frame_b": frame([0.0, 0.3, 0.0], false),
        "kind": { "Distance": { "min": 0.0, "max": 2.0 } }, "break_force": 150.0 }),
    );
    entities.push(body(
        431,
        "Weight".into(),
        [-15.0, 7.0, 0.0],
        20.0,
        json!({ "Sphere": { "radius": 0.3 } }),
    ));
    json!({ "format_version": 1, "settings": { "gravity": [0, -9.81, 0] }, "entities": entities })
}

/// What the `queries` scene's questions answered, tick by tick: `(kind, sim id, distance bits)`
/// for every hit, and the sim ids every overlap found.
#[derive(bevy::prelude::Resource, Clone, Default, rusting_engine::prelude::SimState)]
struct Answers(Vec<(u8, u64, u32)>);

/// Rays, shape casts and overlaps across the pyramid every tick, after the physics step.
fn ask(query: SpatialQuery, mut answers: bevy::prelude::ResMut<Answers>) {
    use bevy::math::{Quat, Vec3};
    let filter = QueryFilter::default();
    let shapes = [
        Shape::Sphere { radius: 0.3 },
        Shape::Box {
            half_extents: Vec3::new(0.3, 0.2, 0.25),
        },
        Shape::Capsule {
            half_height: 0.3,
            radius: 0.2,
        },
    ];
    let mut keep = |kind: u8, hits: Vec<rusting_engine::physics::query::QueryHit>| {
        answers.0.extend(
            hits.iter()
                .map(|h| (kind, h.sim_id.0, h.distance.to_bits())),
        );
    };
    for k in 0..8 {
        let from = Vec3::new(-8.0, 0.5 + k as f32 * 1.2, 0.2 * k as f32 - 0.7);
        let direction = Vec3::new(1.0, -0.05 * k as f32, 0.03);
        if let Ok(hits) = query.ray_hits(&Ray::new(from, direction, 30.0), &filter) {
            keep(0, hits);
        }
        let cast = ShapeCast::new(shapes[k % 3], from, direction, 30.0)
            .with_rotation(Quat::from_rotation_y(0.2 * k as f32));
        if let Ok(hits) = query.shape_hits(&cast, &filter) {
            keep(1, hits);
        }
    }
    let found = query
        .aabb_overlaps(
            Vec3::new(-2.0, 0.0, -1.0),
            Vec3::new(2.0, 4.0, 1.0),
            &filter,
        )
        .unwrap_or_default()
        .into_iter()
        .chain(
            query
                .shape_overlaps(
                    &shapes[2],
                    Vec3::new(0.0, 2.0, 0.0),
                    Quat::IDENTITY,
                    &filter,
                )
                .unwrap_or_default(),
        );
    answers.0.extend(found.map(|(_, id)| (2, id.0, 0)));
}

/// A heap of `count` mixed bodies falling onto the ground.
fn body_heap(count: u32) -> Value {
    let mut entities = vec![ground()];
    for i in 1..=count {
        let s = i as u64 * 7;
        let shape = match i % 3 {
            0 => json!({ "Sphere": { "radius": 0.3 + unit(s + 3) * 0.2 } }),
            1 => json!({ "Box": { "half_extents": [0.3, 0.25, 0.4] } }),
            _ => json!({ "Capsule": { "half_height": 0.25, "radius": 0.2 } }),
        };
        entities.push(json!({ "id": 10 + i, "name": format!("Body {i}"),
            "transform": {
                "translation": [
                    unit(s) * 6.0 - 3.0,
                    0.6 + (i / 16) as f32 * 1.1 + unit(s + 1) * 0.2,
                    unit(s + 2) * 6.0 - 3.0],
                "euler_degrees": [unit(s + 4) * 90.0, unit(s + 5) * 90.0, unit(s + 6) * 90.0] },
            "components": {
                "RigidBody": { "angular_velocity": [unit(s + 7), 0.0, unit(s + 8)] },
                "Collider": { "shape": shape, "restitution": 0.2 } } }));
    }
    json!({ "format_version": 1, "settings": { "gravity": [0, -9.81, 0] }, "entities": entities })
}

/// Every scene, cooked, by the name its report takes, with the ticks its report details.
fn scenes() -> Result<Vec<(&'static str, CookedScene, u64)>, String> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenes/crates.scene.json");
    let generated = |name: &str, source: Value| {
        cook(
            &source.to_string(),
            Path::new(&format!("{name}.scene.json")),
        )
        .map_err(|e| e.to_string())
    };
    Ok(vec![
        (
            "crates",
            cook_file(&crates).map_err(|e| e.to_string())?,
            DETAILED_TICKS,
        ),
        (
            "pyramid-rain",
            generated("pyramid-rain", pyramid_rain())?,
            DETAILED_TICKS,
        ),
        ("body-heap", generated("body-heap", body_heap(1000))?, 0),
        (
            "queries",
            generated("queries", queries_scene())?,
            DETAILED_TICKS,
        ),
        (
            "joints",
            generated("joints", joints_scene())?,
            DETAILED_TICKS,
        ),
    ])
}

/// Runs `scene` for `ticks` ticks and returns its report, the first `detailed` ticks detailed.
fn run(
    name: &str,
    scene: CookedScene,
    ticks: u64,
    detailed: u64,
) -> Result<StateHashReport, String> {
    let identity = SceneIdentity::of(name, &scene);
    let mut app = App::new(RuntimeSettings {
        fixed_rate_hz: 60.0,
        seed: 11,
        ..Default::default()
    });
    app.add_plugins(SimpleGamePlugin { scene, identity });
    if name == "queries" {
        app.world_mut().insert_resource(Answers::default());
        app.register_sim_resource::<Answers>();
        app.add_systems(
            bevy::prelude::FixedUpdate,
            ask.after(SimSet::Physics).before(SimSet::Player),
        );
    }
    let hashes = headless::collect_hashes(&mut app);
    let details = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = details.clone();
    app.add_tick_hook(move |world: &mut bevy::prelude::World, tick| {
        if tick <= detailed
            && let Ok(mut details) = sink.lock()
        {
            details.push(StateDetail::capture(world, tick));
        }
    });
    app.setup().map_err(|e| format!("{name}: {e}"))?;
    rusting_engine::game::run_headless(&mut app, ticks, None);
    let hashes = hashes.lock().map(|h| h.clone()).unwrap_or_default();
    let mut report = StateHashReport::capture(app.world_mut(), &hashes);
    report.details = details.lock().map(|d| d.clone()).unwrap_or_default();
    Ok(report)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let usage = "usage: physics_scenes <out-dir> [ticks]   (ticks: 1 to 600, default 300)";
    let Some(out) = args.next().map(PathBuf::from) else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    let ticks = match args.next().map(|t| t.parse::<u64>()) {
        None => 300,
        Some(Ok(t)) if (1..=MAX_TICKS).contains(&t) => t,
        Some(_) => {
            eprintln!("{usage}");
            return ExitCode::from(2);
        }
    };
    if !out.is_dir() {
        eprintln!("{}: not a directory", out.display());
        return ExitCode::from(2);
    }
    if let Err(error) = rusting_engine::engine::threads::apply_thread_limit_from_environment() {
        eprintln!("{error}");
        return ExitCode::from(2);
    }
    let written = scenes().and_then(|scenes| {
        scenes
            .into_iter()
            .map(|(name, scene, detailed)| {
                let report = run(name, scene, ticks, detailed)?;
                let file = out.join(format!("{name}.json"));
                report.write(&file).map_err(|e| e.to_string())?;
                let last = report.ticks.last().map_or("none", |t| t.hash.as_str());
                Ok(format!(
                    "{name}: {ticks} ticks, last hash {last} -> {}",
                    file.display()
                ))
            })
            .collect::<Result<Vec<_>, String>>()
    });
    match written {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
