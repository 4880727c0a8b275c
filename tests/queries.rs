//! Spatial queries from fixed systems: rays and point overlaps against every shape, ordered by
//! (distance bits, `SimId`), the same on every thread count and after a rollback, and bad input
//! refused.

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::physics::geometry::mesh::TriangleMesh;
use rusting_engine::physics::query::{QueryError, QueryFilter, Ray, ShapeCast, SpatialQuery};
use rusting_engine::physics::{BodyClass, LevelMeshes, PhysicsBody, Shape};
use rusting_engine::prelude::*;

#[path = "support/tick_hashes.rs"]
mod tick_hashes;
use tick_hashes::run;

/// `(tick, sim id, distance bits)` of every hit.
type Seen = Vec<(u64, u64, u32)>;

/// What the fan of rays saw each tick: `(tick, sim id, distance bits)` of every hit.
#[derive(Resource, Clone, Default, SimState)]
struct Sightings(Seen);

/// Sixteen rays in a fan across the pile, every tick, after the physics step.
fn look(time: Res<FrameTime>, query: SpatialQuery, mut seen: ResMut<Sightings>) {
    for k in 0..16 {
        let direction = Vec3::new(1.0, -0.2 + 0.025 * k as f32, 0.1 * (k as f32 - 8.0));
        let ray = Ray::new(Vec3::new(-12.0, 2.0, 0.0), direction, 40.0);
        for hit in query.ray_hits(&ray, &QueryFilter::default()).unwrap() {
            seen.0
                .push((time.fixed_tick, hit.sim_id.0, hit.distance.to_bits()));
        }
    }
}

/// A ground and a pile of spheres, boxes and capsules falling onto it.
fn pile() -> App {
    let mut app = App::new(RuntimeSettings {
        seed: 36,
        ..default()
    });
    app.world_mut().insert_resource(Sightings::default());
    app.register_sim_resource::<Sightings>();
    app.add_systems(
        FixedUpdate,
        look.after(SimSet::Physics).before(SimSet::Player),
    );
    let world = app.world_mut();
    world.spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    for k in 0..24 {
        let x = (k % 6) as f32 * 1.1 - 3.0;
        let y = 1.0 + (k / 6) as f32 * 1.2;
        let collider = match k % 3 {
            0 => Collider::sphere(0.45),
            1 => Collider::cuboid(Vec3::splat(0.4)),
            _ => Collider::capsule(0.3, 0.3),
        };
        world.spawn((
            Transform::from_xyz(x, y, (k % 4) as f32 * 0.3 - 0.45)
                .with_rotation(Quat::from_rotation_z(0.1 * k as f32)),
            collider,
            RigidBody::dynamic(1.0),
        ));
    }
    app
}

fn spawn_static(app: &mut App, transform: Transform, collider: Collider) -> SimId {
    let entity = app.world_mut().spawn((transform, collider)).id();
    *app.world().get::<SimId>(entity).unwrap()
}

/// Answers a question with the app's `SpatialQuery`, outside any schedule.
fn ask<T: 'static>(
    app: &mut App,
    question: impl Fn(&SpatialQuery) -> T + Send + Sync + 'static,
) -> T {
    let mut state = bevy::ecs::system::SystemState::<SpatialQuery>::new(app.world_mut());
    let query = state.get(app.world()).unwrap();
    question(&query)
}

/// A ray through a row of shapes hits each once, nearest first, and two colliders at exactly
/// the same distance come in `SimId` order whatever order they were spawned in; the first hit is
/// the nearest, an excluded body and a sensor are left out, a layer filter keeps only its layer,
/// and a point inside two colliders lists both in `SimId` order.
///
/// Fails if hits come in query (storage) order, if equal distances are ordered by anything but
/// `SimId`, or if a filter is ignored (seen failing by sorting on distance alone: the two boxes at
/// 7 m came out in storage order, the higher `SimId` first).
#[test]
fn ray_hits_are_ordered_by_distance_then_sim_id() {
    let mut app = App::default();
    // Two boxes the ray meets at the same distance, stored higher `SimId` first: despawning the
    // first of three colliders of one archetype moves the last into its row.
    let gone = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 50.0, 0.0),
            Collider::cuboid(Vec3::splat(0.5)),
        ))
        .id();
    let first_box = spawn_static(
        &mut app,
        Transform::from_xyz(6.5, 0.0, 0.25),
        Collider::cuboid(Vec3::splat(0.5)),
    );
    let second_box = spawn_static(
        &mut app,
        Transform::from_xyz(6.5, 0.0, -0.25),
        Collider::cuboid(Vec3::splat(0.5)),
    );
    app.world_mut().despawn(gone);
    let stored: Vec<SimId> = app
        .world_mut()
        .query::<&SimId>()
        .iter(app.world())
        .copied()
        .collect();
    assert_eq!(
        stored[..2],
        [second_box, first_box],
        "the storage order is not the reverse"
    );
    let sphere = spawn_static(
        &mut app,
        Transform::from_xyz(2.0, 0.0, 0.0),
        Collider::sphere(0.5),
    );
    let capsule = spawn_static(
        &mut app,
        Transform::from_xyz(4.0, 0.0, 0.0),
        Collider::capsule(0.5, 0.25),
    );
    let sensor = spawn_static(
        &mut app,
        Transform::from_xyz(9.0, 0.0, 0.0),
        Collider::sphere(0.5).as_sensor(),
    );
    let wall = app
        .world_mut()
        .spawn((
            Transform::from_xyz(12.0, 0.0, 0.0),
            Collider::half_space(Vec3::NEG_X),
            CollisionLayers {
                memberships: 0b10,
                filters: u32::MAX,
            },
        ))
        .id();
    let wall = *app.world().get::<SimId>(wall).unwrap();
    app.setup().unwrap();
    let row = ask(&mut app, |q| {
        q.ray_hits(
            &Ray::new(-Vec3::X, Vec3::X, f32::INFINITY),
            &QueryFilter::default(),
        )
        .unwrap()
    });
    let seen: Vec<(SimId, f32)> = row.iter().map(|h| (h.sim_id, h.distance)).collect();
    assert_eq!(
        seen,
        vec![
            (sphere, 2.5),
            (capsule, 4.75),
            (first_box, 7.0),
            (second_box, 7.0),
            (wall, 13.0)
        ],
        "{row:?}"
    );
    assert_eq!(row[0].normal, Vec3::NEG_X);
    assert_eq!(row[4].point, Vec3::new(12.0, 0.0, 0.0));
    // The first hit, with the sphere excluded; sensors in; only layer 2.
    let first = ask(&mut app, move |q| {
        q.cast_ray(
            &Ray::new(-Vec3::X, Vec3::X, 100.0),
            &QueryFilter::default().excluding(sphere),
        )
        .unwrap()
    });
    assert_eq!(first.map(|h| h.sim_id), Some(capsule));
    let with_sensors = ask(&mut app, |q| {
        q.ray_hits(
            &Ray::new(-Vec3::X, Vec3::X, 100.0),
            &QueryFilter::default().with_sensors(),
        )
        .unwrap()
    });
    assert!(with_sensors.iter().any(|h| h.sim_id == sensor));
    // Layer 1 only: the wall is on layer 2 alone; colliders with no `CollisionLayers` are on every
    // layer.
    let layer = ask(&mut app, |q| {
        q.ray_hits(
            &Ray::new(-Vec3::X, Vec3::X, 100.0),
            &QueryFilter::default().on_layers(0b01),
        )
        .unwrap()
    });
    assert_eq!(
        layer.iter().map(|h| h.sim_id).collect::<Vec<_>>(),
        vec![sphere, capsule, first_box, second_box]
    );
    let predicate = ask(&mut app, move |q| {
        q.cast_ray_where(
            &Ray::new(-Vec3::X, Vec3::X, 100.0),
            &QueryFilter::default(),
            |h| h.sim_id != capsule && h.sim_id != sphere,
        )
        .unwrap()
    });
    assert_eq!(predicate.map(|h| h.sim_id), Some(first_box));
    // Inside: distance 0, normal against the ray; and the point overlap lists both.
    let inside = ask(&mut app, |q| {
        q.cast_ray(
            &Ray::new(Vec3::new(2.0, 0.0, 0.0), Vec3::Y, 0.0),
            &QueryFilter::default(),
        )
        .unwrap()
    })
    .unwrap();
    assert_eq!(
        (inside.sim_id, inside.distance, inside.normal),
        (sphere, 0.0, Vec3::NEG_Y)
    );
    let point = ask(&mut app, |q| {
        q.point_overlaps(Vec3::new(12.5, 0.0, 0.0), &QueryFilter::default())
            .unwrap()
    });
    assert_eq!(
        point.iter().map(|(_, id)| *id).collect::<Vec<_>>(),
        vec![wall]
    );
}

/// The pile under a fan of rays every tick gives the same hits and hashes on 1, 2 and 4 threads.
///
/// Fails if a query's answer, or the physics step under it, depends on the thread count: a query
/// that collected its hits from a parallel iterator without ordering them, say.
#[test]
fn queries_do_not_depend_on_thread_count() {
    let mut reference: Option<(Vec<u64>, Seen)> = None;
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let (hashes, seen) = pool.install(|| {
            let mut app = pile();
            let hashes = run(&mut app, 90);
            (hashes, app.world().resource::<Sightings>().0.clone())
        });
        assert!(
            seen.len() > 90,
            "the rays saw almost nothing: {}",
            seen.len()
        );
        match &reference {
            None => reference = Some((hashes, seen)),
            Some((h, s)) => {
                assert_eq!(&hashes, h, "{threads} threads: the hashes differ");
                assert_eq!(&seen, s, "{threads} threads: the rays saw something else");
            }
        }
    }
}

/// Rays cast after `restore` see what they saw in the original run, tick for tick, while the
/// pile falls and settles.
///
/// Fails if a query reads state that a restore does not put back (such as a query structure kept
/// between ticks outside the snapshot), or if the hits after the restore are recorded at other
/// ticks.
#[test]
fn queries_after_restore_match_the_original_run() {
    let mut app = pile();
    run(&mut app, 20);
    let snapshot = app.snapshot().unwrap();
    let before = app.world().resource::<Sightings>().0.len();
    let first = run(&mut app, 40);
    let seen_first = app.world().resource::<Sightings>().0[before..].to_vec();
    app.restore(&snapshot).unwrap();
    let again = run(&mut app, 40);
    let seen_again = app.world().resource::<Sightings>().0[before..].to_vec();
    assert_eq!(first, again);
    assert!(!seen_first.is_empty());
    assert_eq!(seen_first, seen_again);
}

/// The shapes a query can cast or overlap, each with its half width along X when unturned.
fn probes() -> [(Shape, f32); 3] {
    [
        (Shape::Sphere { radius: 0.5 }, 0.5),
        (
            Shape::Box {
                half_extents: Vec3::new(0.5, 0.3, 0.4),
            },
            0.5,
        ),
        (
            Shape::Capsule {
                half_height: 0.5,
                radius: 0.25,
            },
            0.25,
        ),
    ]
}

/// An 8 m square wall of two triangles in the plane X = 0, facing -X.
fn mesh_wall() -> TriangleMesh {
    let vertices = vec![
        Vec3::new(0.0, -4.0, -4.0),
        Vec3::new(0.0, -4.0, 4.0),
        Vec3::new(0.0, 4.0, -4.0),
        Vec3::new(0.0, 4.0, 4.0),
    ];
    TriangleMesh::new(vertices, vec![[0, 1, 2], [1, 3, 2]]).unwrap()
}

/// Every collider shape, centred at the origin, with the distance from its centre to its face
/// towards -X (and the level mesh a mesh collider names).
fn targets() -> [(Collider, Quat, f32, Option<TriangleMesh>); 6] {
    let wall = mesh_wall();
    [
        (Collider::sphere(1.0), Quat::IDENTITY, 1.0, None),
        (
            Collider::cuboid(Vec3::splat(1.0)),
            Quat::IDENTITY,
            1.0,
            None,
        ),
        (
            Collider::cuboid(Vec3::splat(1.0)),
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_4),
            std::f32::consts::SQRT_2,
            None,
        ),
        (Collider::capsule(1.0, 0.5), Quat::IDENTITY, 0.5, None),
        (Collider::half_space(Vec3::NEG_X), Quat::IDENTITY, 0.0, None),
        (Collider::mesh(wall.id()), Quat::IDENTITY, 0.0, Some(wall)),
    ]
}

/// Every query shape (sphere, box, capsule, and a capsule turned to lie along its path) cast along
/// +X at every collider shape (sphere, box, a box turned to meet it with an edge, capsule,
/// half-space, a wall of mesh triangles) stops where their surfaces meet, to within 0.2 mm, with the collider's normal
/// towards it and a point on the collider's surface; the same shape just off the path misses; a
/// shape placed 1 cm into the collider overlaps it and 1 cm short does not, and so does the box
/// around it; a ball of radius 0 agrees with a ray; a half-space is refused as a query shape.
///
/// Fails if any pair is missing or wrong: seen failing when the box support mapping took the
/// corner on the far side of a face (`>= 0.0` turned to `< 0.0`), and when the advance ignored
/// the shapes' radii.
#[test]
fn shape_casts_cover_every_shape_pair() {
    let turned = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    for (collider, rotation, face, mesh) in targets() {
        let mut app = App::default();
        if let Some(mesh) = mesh {
            app.world_mut().resource_mut::<LevelMeshes>().insert(mesh);
        }
        let target = spawn_static(&mut app, Transform::from_rotation(rotation), collider);
        app.setup().unwrap();
        let mut shapes: Vec<(Shape, Quat, f32)> = probes()
            .iter()
            .map(|&(s, w)| (s, Quat::IDENTITY, w))
            .collect();
        shapes.push((probes()[2].0, turned, 0.75));
        for (shape, spin, width) in shapes {
            let what = format!("{shape:?} turned {spin:?} at {collider:?} turned {rotation:?}");
            let from = Vec3::new(-5.0, 0.0, 0.0);
            let cast = ShapeCast::new(shape, from, Vec3::X, 20.0).with_rotation(spin);
            let hit = ask(&mut app, move |q| {
                q.cast_shape(&cast, &QueryFilter::default())
            })
            .unwrap()
            .unwrap_or_else(|| panic!("{what}: missed"));
            let expected = 5.0 - width - face;
            assert_eq!(hit.sim_id, target, "{what}");
            assert!(
                (hit.distance - expected).abs() < 2.0e-4,
                "{what}: {} against {expected}",
                hit.distance
            );
            assert!(
                (hit.normal - Vec3::NEG_X).length() < 1.0e-3,
                "{what}: normal {}",
                hit.normal
            );
            assert!(
                (hit.point.x + face).abs() < 2.0e-4,
                "{what}: point {}",
                hit.point
            );
            let short = ShapeCast {
                max_distance: expected - 0.01,
                ..cast
            };
            let none = ask(&mut app, move |q| {
                q.cast_shape(&short, &QueryFilter::default())
            });
            assert_eq!(none, Ok(None), "{what}: hit beyond its reach");
            if face > 0.0 {
                let beside = ShapeCast {
                    position: Vec3::new(-5.0, 0.0, 3.0),
                    ..cast
                };
                let none = ask(&mut app, move |q| {
                    q.shape_hits(&beside, &QueryFilter::default())
                });
                assert_eq!(none, Ok(vec![]), "{what}: hit from beside");
            }
            for (gap, meets) in [(-0.01, true), (0.01, false)] {
                let at = Vec3::new(-(face + width + gap), 0.0, 0.0);
                let found = ask(&mut app, move |q| {
                    q.shape_overlaps(&shape, at, spin, &QueryFilter::default())
                })
                .unwrap();
                assert_eq!(found.len(), usize::from(meets), "{what}: overlap at {at}");
                let (min, max) = (at - Vec3::splat(width), at + Vec3::splat(width));
                let found = ask(&mut app, move |q| {
                    q.aabb_overlaps(min, max, &QueryFilter::default())
                })
                .unwrap();
                assert_eq!(
                    found.len(),
                    usize::from(meets),
                    "{what}: box overlap at {at}"
                );
            }
        }
        // A ball of radius 0 is a ray.
        let point = ShapeCast::new(
            Shape::Sphere { radius: 0.0 },
            Vec3::new(-5.0, 0.1, 0.2),
            Vec3::X,
            20.0,
        );
        let swept = ask(&mut app, move |q| {
            q.cast_shape(&point, &QueryFilter::default())
        })
        .unwrap()
        .unwrap();
        let ray = ask(&mut app, |q| {
            q.cast_ray(
                &Ray::new(Vec3::new(-5.0, 0.1, 0.2), Vec3::X, 20.0),
                &QueryFilter::default(),
            )
        })
        .unwrap()
        .unwrap();
        assert!(
            (swept.distance - ray.distance).abs() < 2.0e-4,
            "{swept:?} against {ray:?}"
        );
    }
    let mut app = App::default();
    spawn_static(&mut app, Transform::default(), Collider::sphere(1.0));
    app.setup().unwrap();
    let plane = ShapeCast::new(
        Shape::HalfSpace { normal: Vec3::Y },
        Vec3::ZERO,
        Vec3::X,
        1.0,
    );
    let refused = ask(&mut app, move |q| {
        q.cast_shape(&plane, &QueryFilter::default())
    });
    assert_eq!(refused, Err(QueryError::Unbounded));
    let mesh = ShapeCast::new(Shape::Mesh { mesh: 1 }, Vec3::ZERO, Vec3::X, 1.0);
    let refused = ask(&mut app, move |q| {
        q.cast_shape(&mesh, &QueryFilter::default())
    });
    assert_eq!(refused, Err(QueryError::MeshShape));
}

/// A scattered collider that moves every tick (before the physics step), to a place that is a
/// function of the tick.
#[derive(Component, Clone, SimState)]
struct Wander(u64);

fn wander(time: Res<FrameTime>, mut colliders: Query<(&Wander, &mut Transform)>) {
    for (seed, mut at) in &mut colliders {
        let phase = (time.fixed_tick + seed.0) as f32 * 0.37;
        at.translation = Vec3::new(
            (seed.0 % 17) as f32 * 1.3 + 2.0 * (phase * 0.5 % 1.0),
            (seed.0 % 5) as f32 * 1.1 + 1.5 * (phase % 1.0),
            (seed.0 % 11) as f32 * 1.2 - 6.0,
        );
    }
}

/// Every answer a fixed set of questions gets: rays, shape casts, box and point overlaps.
fn answers(query: &SpatialQuery) -> Seen {
    let filter = QueryFilter::default();
    let mut seen = Seen::new();
    for k in 0..40u64 {
        let f = k as f32;
        let ray = Ray::new(
            Vec3::new(-4.0, 0.3 * f % 6.0, 0.7 * f % 12.0 - 6.0),
            Vec3::new(1.0, 0.02 * (f - 20.0), 0.01 * f),
            40.0,
        );
        for hit in query.ray_hits(&ray, &filter).unwrap() {
            seen.push((k, hit.sim_id.0, hit.distance.to_bits()));
        }
        if k % 4 == 0 {
            let shape = probes()[(k / 4) as usize % 3].0;
            let cast = ShapeCast::new(shape, ray.origin, ray.direction, 40.0);
            for hit in query.shape_hits(&cast, &filter).unwrap() {
                seen.push((100 + k, hit.sim_id.0, hit.distance.to_bits()));
            }
            let at = Vec3::new(f * 0.5, f * 0.1, f * 0.3 - 6.0);
            let boxed = query.aabb_overlaps(at - Vec3::ONE, at + Vec3::ONE, &filter);
            let pointed = query.point_overlaps(at, &filter);
            for (_, id) in boxed.unwrap().into_iter().chain(pointed.unwrap()) {
                seen.push((200 + k, id.0, 0));
            }
        }
    }
    seen
}

/// A system's queries see the colliders as they stand at each tick, whatever its query tree
/// kept from the tick before: with 150 colliders moving every tick, some spawned, despawned and
/// reshaped between ticks, the answers of a query state kept across ticks (its tree refitted or
/// rebuilt) equal those of a new one, tick after tick.
///
/// Fails if the tree is kept without being read again on a new run (seen failing when it was
/// refreshed only on its first run: from the second tick on, the kept state answered from the
/// first tick's places), or if its boxes are not refitted to moved colliders (seen failing with
/// the refit left out: colliders that had moved out of their old boxes were missed).
#[test]
fn queries_see_colliders_as_they_stand() {
    let mut app = App::default();
    app.add_systems(FixedUpdate, wander.before(SimSet::Physics));
    for seed in 0..150u64 {
        let shape = match seed % 4 {
            0 => Collider::sphere(0.3 + (seed % 3) as f32 * 0.1),
            1 => Collider::cuboid(Vec3::new(0.3, 0.4, 0.5)),
            2 => Collider::capsule(0.4, 0.2),
            _ => Collider::cuboid(Vec3::splat(0.2)),
        };
        app.world_mut().spawn((
            Transform::from_rotation(Quat::from_rotation_y(seed as f32)),
            shape,
            Wander(seed),
        ));
    }
    app.setup().unwrap();
    let mut kept = bevy::ecs::system::SystemState::<SpatialQuery>::new(app.world_mut());
    let step = app.fixed_step();
    let mut compared = 0;
    for tick in 0..30u64 {
        app.update(step);
        let world = app.world_mut();
        if tick % 7 == 3 {
            let gone = world
                .query_filtered::<Entity, With<Wander>>()
                .iter(world)
                .nth(tick as usize)
                .unwrap();
            world.despawn(gone);
        }
        if tick % 5 == 2 {
            world.spawn((
                Transform::default(),
                Collider::sphere(0.5),
                Wander(1000 + tick),
            ));
        }
        if tick == 12 {
            let mut reshaped = world.query::<&mut Collider>();
            for mut collider in reshaped.iter_mut(world).take(20) {
                collider.shape = rusting_engine::physics::Shape::Sphere { radius: 0.9 };
            }
        }
        let persistent = answers(&kept.get(app.world()).unwrap());
        let fresh = answers(
            &bevy::ecs::system::SystemState::<SpatialQuery>::new(app.world_mut())
                .get(app.world())
                .unwrap(),
        );
        assert!(fresh.len() > 40, "tick {tick}: the questions found little");
        assert_eq!(persistent, fresh, "tick {tick}");
        compared += fresh.len();
    }
    assert!(compared > 1000);
}

/// GPU bodies are never seen by queries (docs/queries.md, GPU bodies): a ray, a shape cast and
/// the overlaps pass through a GPU ball and meet the CPU ball behind it.
///
/// Fails if queries stop skipping `PhysicsBody::class == Gpu` (their `Transform` is a read-back
/// copy from an earlier tick, so an answer from it would be from another tick than the rest).
#[test]
fn gpu_bodies_are_not_seen_by_queries() {
    let mut app = App::default();
    app.world_mut().spawn((
        Transform::from_xyz(2.0, 0.0, 0.0),
        Collider::sphere(0.5),
        RigidBody::dynamic(1.0),
        PhysicsBody {
            class: BodyClass::Gpu,
        },
    ));
    let cpu = spawn_static(
        &mut app,
        Transform::from_xyz(5.0, 0.0, 0.0),
        Collider::sphere(0.5),
    );
    let ray = ask(&mut app, |q| {
        q.ray_hits(
            &Ray::new(Vec3::ZERO, Vec3::X, 10.0),
            &QueryFilter::default(),
        )
        .unwrap()
    });
    assert_eq!(ray.iter().map(|h| h.sim_id).collect::<Vec<_>>(), vec![cpu]);
    let cast = ShapeCast::new(Shape::Sphere { radius: 0.2 }, Vec3::ZERO, Vec3::X, 10.0);
    let swept = ask(&mut app, move |q| {
        q.shape_hits(&cast, &QueryFilter::default()).unwrap()
    });
    assert_eq!(
        swept.iter().map(|h| h.sim_id).collect::<Vec<_>>(),
        vec![cpu]
    );
    let inside = ask(&mut app, |q| {
        q.point_overlaps(Vec3::new(2.0, 0.0, 0.0), &QueryFilter::default())
            .unwrap()
    });
    assert!(inside.is_empty(), "{inside:?}");
    let boxed = ask(&mut app, |q| {
        q.aabb_overlaps(
            Vec3::splat(-1.0),
            Vec3::new(6.0, 1.0, 1.0),
            &QueryFilter::default(),
        )
        .unwrap()
    });
    assert_eq!(
        boxed.iter().map(|(_, id)| *id).collect::<Vec<_>>(),
        vec![cpu]
    );
}

/// NaN and infinite origins, directions and points, a zero direction and a negative or NaN
/// maximum distance are errors naming the input; 0 and infinity are valid maximum distances.
///
/// Fails if any of them panics or answers.
#[test]
fn bad_query_input_is_an_error() {
    let mut app = App::default();
    spawn_static(&mut app, Transform::default(), Collider::sphere(1.0));
    app.setup().unwrap();
    let filter = QueryFilter::default();
    let cases = [
        (
            Ray::new(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::X, 1.0),
            "ray origin",
        ),
        (
            Ray::new(Vec3::ZERO, Vec3::new(0.0, f32::INFINITY, 0.0), 1.0),
            "ray direction",
        ),
        (Ray::new(Vec3::ZERO, Vec3::ZERO, 1.0), "no length"),
        (Ray::new(Vec3::ZERO, Vec3::X, -1.0), "maximum distance"),
        (Ray::new(Vec3::ZERO, Vec3::X, f32::NAN), "maximum distance"),
    ];
    for (ray, named) in cases {
        let answer = ask(&mut app, move |q| q.cast_ray(&ray, &QueryFilter::default()));
        let error = answer.expect_err("a bad ray was answered");
        assert!(error.to_string().contains(named), "{error}");
    }
    let point = ask(&mut app, move |q| {
        q.point_overlaps(Vec3::splat(f32::NEG_INFINITY), &filter)
    });
    assert!(matches!(
        point,
        Err(QueryError::NonFinite { what: "point", .. })
    ));
    for max in [0.0, f32::INFINITY] {
        let hit = ask(&mut app, move |q| {
            q.cast_ray(
                &Ray::new(Vec3::new(-3.0, 0.0, 0.0), Vec3::X, max),
                &QueryFilter::default(),
            )
            .unwrap()
        });
        assert_eq!(hit.is_some(), max > 0.0);
    }
}
