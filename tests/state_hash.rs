//! The world-state hash after every tick covers the simulation state and nothing else.

use std::time::Duration;

use bevy::prelude::*;
use rusting_engine::gameplay::HudElement;
use rusting_engine::physics::{BodyClass, PhysicsBody};
use rusting_engine::prelude::*;
use rusting_engine::state::StateHashes;

struct Scene {
    app: rusting_engine::App,
    flyer: Entity,
    decoration: Entity,
}

fn scene() -> Scene {
    let mut app = rusting_engine::App::default();
    let world = app.world_mut();
    world.spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    for level in 0..3 {
        world.spawn((
            Transform::from_xyz(0.0, 0.5 + level as f32, 0.0),
            RigidBody::dynamic(1.0),
            Collider::cuboid(Vec3::splat(0.5)),
        ));
    }
    let flyer = world
        .spawn((
            Transform::from_xyz(-20.0, 5.0, 0.0),
            RigidBody {
                gravity_scale: 0.0,
                ..RigidBody::dynamic(1.0).with_velocity(Vec3::new(3.0, 0.0, 0.0), Vec3::ZERO)
            },
            Collider::sphere(0.3),
        ))
        .id();
    world.spawn((
        Transform::default(),
        Tween {
            mode: TweenMode::PingPong,
            ..Tween::new(Vec3::ZERO, Vec3::new(0.0, 2.0, 9.0), 1.1)
        },
        BurstEmitter {
            fire: true,
            lifetime: 0.4,
            ..BurstEmitter::default()
        },
    ));
    let decoration = world
        .spawn((Transform::from_xyz(1.0, 2.0, 3.0), Name::new("Lamp")))
        .id();
    world.spawn(HudElement {
        label: "Score: ".into(),
        counter: 1,
        text: String::new(),
    });
    app.setup().unwrap();
    Scene {
        app,
        flyer,
        decoration,
    }
}

fn hashes(app: &rusting_engine::App) -> Vec<(u64, u64)> {
    app.world()
        .resource::<StateHashes>()
        .cpu
        .iter()
        .copied()
        .collect()
}

/// One hash per tick, tagged with the ticks completed; the same sequence however frames batch
/// ticks; one ULP of one body's velocity changes every hash from its tick on; and presentation
/// (a decoration's `Transform`, `FrameTime::frame`, the HUD text, burst particles) changes none.
/// Needs no Vulkan device: a GPU body's read-back `Transform` is checked on its own below. Fails if the hash skips `RigidBody` velocities, hashes
/// `FrameTime` whole (with `frame`), or hashes the `Transform` of every entity.
#[test]
fn state_hashes_cover_every_tick_and_only_simulation_state() {
    let mut steady = scene();
    let step = steady.app.fixed_step();
    for _ in 0..120 {
        steady.app.update(step);
    }
    let reference = hashes(&steady.app);
    assert_eq!(reference.len(), 120);
    assert_eq!(reference.first().unwrap().0, 1);
    assert_eq!(reference.last().unwrap().0, 120);

    // Frame pacing.
    let mut uneven = scene();
    let pattern = [
        step * 3,
        step / 2,
        step - step / 2,
        Duration::ZERO,
        step * 5,
    ];
    let mut k = 0;
    while uneven.app.ticks() < 120 {
        uneven.app.update(pattern[k % pattern.len()]);
        k += 1;
    }
    assert_eq!(
        hashes(&uneven.app),
        reference,
        "frame pacing changed the hashes"
    );

    // Presentation, changed every frame.
    let mut dressed = scene();
    for frame in 0..120 {
        let world = dressed.app.world_mut();
        world
            .get_mut::<Transform>(dressed.decoration)
            .unwrap()
            .rotation = Quat::from_rotation_y(frame as f32);
        world.resource_mut::<FrameTime>().frame += 1000;
        dressed.app.update(step);
    }
    assert_eq!(
        hashes(&dressed.app),
        reference,
        "presentation changed the hashes"
    );

    // One ULP of one velocity, after tick 40.
    let mut nudged = scene();
    for _ in 0..40 {
        nudged.app.update(step);
    }
    let mut body = nudged
        .app
        .world_mut()
        .get_mut::<RigidBody>(nudged.flyer)
        .unwrap();
    body.linear_velocity.x = f32::from_bits(body.linear_velocity.x.to_bits() + 1);
    for _ in 40..120 {
        nudged.app.update(step);
    }
    let nudged = hashes(&nudged.app);
    for (tick, (a, b)) in reference.iter().zip(&nudged).enumerate() {
        if tick < 40 {
            assert_eq!(a, b, "tick {} changed before the nudge", tick + 1);
        } else {
            assert_ne!(a.1, b.1, "tick {} did not see the nudge", tick + 1);
        }
    }
}

/// A NaN in a tween's played time turns its translation into NaN on the next tick, and the hash
/// pass reports the tick, the entity, the component and the field.
#[test]
fn non_finite_simulation_values_are_reported_where_they_are() {
    let mut s = scene();
    let step = s.app.fixed_step();
    s.app.update(step);
    assert!(
        s.app
            .world()
            .resource::<StateHashes>()
            .first_non_finite
            .is_none()
    );
    let world = s.app.world_mut();
    let tweened = world
        .query_filtered::<Entity, With<Tween>>()
        .iter(world)
        .next()
        .unwrap();
    let tweened_id = *world.get::<SimId>(tweened).unwrap();
    world.get_mut::<Tween>(tweened).unwrap().played = f32::NAN;
    s.app.update(step);
    let report = s
        .app
        .world()
        .resource::<StateHashes>()
        .first_non_finite
        .clone()
        .expect("the NaN must be reported");
    assert_eq!(report.tick, 2);
    assert_eq!(report.component, "Transform");
    assert_eq!(report.field, "translation.x");
    assert_eq!(report.entity, Some(tweened_id));
}

/// The per-tick pass (one sweep over the archetypes) and the per-entity states that reports and
/// `compare_runs` use feed the same bytes, so their world hashes agree. Fails if a component is
/// added to one of the two lists in `state::hash` and not the other, or fed in another order.
#[test]
fn the_tick_hash_and_the_report_states_agree() {
    use rusting_engine::state::{entity_states, world_state_hash};
    let mut s = scene();
    let step = s.app.fixed_step();
    for _ in 0..20 {
        s.app.update(step);
    }
    let world = s.app.world_mut();
    let fast = world_state_hash(world);
    let states = entity_states(world);
    let recorded = world.resource::<StateHashes>().cpu.back().unwrap().1;
    assert_eq!(fast, recorded);
    assert_eq!(
        rusting_engine::state::hash::combine_states(&states, world),
        fast
    );
}

/// A GPU-class ball at (9, 1, 9), whose `Transform` is a read-back copy of device state.
fn spawn_gpu_body(world: &mut World) -> Entity {
    world
        .spawn((
            Transform::from_xyz(9.0, 1.0, 9.0),
            Collider::sphere(0.5),
            PhysicsBody {
                class: BodyClass::Gpu,
            },
        ))
        .id()
}

/// A GPU-class body's `Transform` is a read-back copy of state kept on the device, so moving it
/// changes no hash, while moving a CPU body does; checked on the world without starting the app,
/// so no Vulkan device is needed. Fails if the registered `transform_is_copy_when` rule for
/// `PhysicsBody` is dropped.
#[test]
fn a_gpu_bodys_read_back_transform_is_not_hashed() {
    use rusting_engine::state::world_state_hash;
    let mut app = rusting_engine::App::default();
    let world = app.world_mut();
    let gpu_body = spawn_gpu_body(world);
    let cpu_body = world
        .spawn((Transform::from_xyz(2.0, 1.0, 0.0), Collider::sphere(0.5)))
        .id();
    let before = world_state_hash(world);
    world.get_mut::<Transform>(gpu_body).unwrap().translation.y += 0.25;
    assert_eq!(
        world_state_hash(world),
        before,
        "a read-back copy moved the hash"
    );
    world.get_mut::<Transform>(cpu_body).unwrap().translation.y += 0.25;
    assert_ne!(
        world_state_hash(world),
        before,
        "a CPU body's Transform is simulation state"
    );
}

/// A game's own component, for the large world below.
#[derive(Component, Clone, SimState)]
struct Charge {
    value: f32,
}

/// A large world (three archetypes, 7,000 bodies: past the size at which the hash is split into
/// pieces hashed on the pool) hashes to the same value on one, two and four threads, equal to the
/// per-entity states' hash; with NaNs planted in two pieces, the one reported is the body with the
/// lower `SimId` on every thread count, although its piece comes later in archetype order. Fails
/// if the pieces' non-finite findings are merged first-found-wins instead of lowest-`SimId`-wins,
/// or if a piece skips or repeats a row.
#[test]
fn a_large_worlds_hash_is_the_same_on_every_thread_count() {
    use rusting_engine::state::hash::{combine_states, record_state_hash};
    use rusting_engine::state::{entity_states, world_state_hash};
    let mut app = rusting_engine::App::default();
    app.register_sim_component::<Charge>();
    let world = app.world_mut();
    let mut charged = Vec::new();
    let mut plain = Vec::new();
    for i in 0..7_000u32 {
        let at = Transform::from_xyz((i % 70) as f32 * 2.0, (i / 70) as f32 * 2.0, 0.0);
        let body = RigidBody::dynamic(1.0 + (i % 7) as f32);
        match i % 3 {
            0 => plain.push(world.spawn((at, body, Collider::sphere(0.5))).id()),
            1 => charged.push(
                world
                    .spawn((at, body, Collider::sphere(0.5), Charge { value: i as f32 }))
                    .id(),
            ),
            _ => {
                world.spawn((at, body, Collider::cuboid(Vec3::splat(0.5))));
            }
        }
    }
    let in_pool = |threads: usize, world: &mut World| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| world_state_hash(world))
    };
    let reference = combine_states(&entity_states(world), world);
    for threads in [1, 2, 4] {
        assert_eq!(
            in_pool(threads, world),
            reference,
            "the hash on {threads} threads differs from the per-entity states' hash"
        );
    }
    // `plain`'s archetype is hashed first, so its NaN (in a late piece) is found first; the
    // `charged` body was spawned earlier and holds the lower `SimId`, so it is the one reported.
    let early = charged[40];
    let late = plain[2_000];
    let early_id = *world.get::<SimId>(early).unwrap();
    assert!(early_id < *world.get::<SimId>(late).unwrap());
    world.get_mut::<Charge>(early).unwrap().value = f32::NAN;
    world.get_mut::<Transform>(late).unwrap().translation.y = f32::INFINITY;
    for threads in [1, 2, 4] {
        world.insert_resource(StateHashes::default());
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| record_state_hash(world, 1, true));
        let found = world
            .resource::<StateHashes>()
            .first_non_finite
            .clone()
            .expect("a NaN is planted");
        assert_eq!(
            (found.entity, found.component),
            (Some(early_id), "Charge"),
            "on {threads} threads"
        );
    }
}

/// Another game component, which only entities spawned after the first hash hold.
#[derive(Component, Clone, SimState)]
struct Fuel {
    litres: f32,
}

/// A third, registered straight in the registry, so that the world first sees the type when an
/// entity holding it is spawned.
#[derive(Component, Clone, SimState)]
struct Heat {
    kelvin: f32,
}

/// A fourth, which the world holds from the start and the registry learns of only at the end.
#[derive(Component, Clone, SimState)]
struct Wear {
    level: f32,
}

/// The hash keeps what it works out of a world's shape (component ids, which archetypes hold
/// simulation entities) between ticks. A world hashed once, then changed so that new archetypes
/// and a component type the world had not seen come into play, hashes the same as a fresh world
/// built in its final shape and hashed once. Fails if the kept plans are not extended with
/// archetypes made after a hash (the body that gains `Fuel` last, an archetype of types the world
/// already knew, goes unhashed), are kept after the world registers a new component type
/// (`Heat`, which had no id at the first hash, is left out), or are kept after a registration
/// (`Wear`, registered last, is left out).
#[test]
fn the_hash_follows_a_world_whose_shape_changes() {
    use rusting_engine::state::world_state_hash;
    let build = |warm: bool| {
        let mut app = rusting_engine::App::default();
        app.register_sim_component::<Charge>()
            .register_sim_component::<Fuel>();
        let world = app.world_mut();
        world
            .resource_mut::<rusting_engine::state::SimRegistry>()
            .register::<Heat>(rusting_engine::state::SimKind::Component);
        assert!(
            world
                .components()
                .get_id(std::any::TypeId::of::<Heat>())
                .is_none()
        );
        let first = world
            .spawn((Transform::from_xyz(1.0, 2.0, 0.0), RigidBody::dynamic(2.0)))
            .id();
        world.spawn((Transform::from_xyz(4.0, 1.0, 0.0), Collider::sphere(0.5)));
        world.spawn((
            Transform::from_xyz(5.0, 5.0, 0.0),
            RigidBody::dynamic(1.0),
            Wear { level: 0.25 },
        ));
        let charged_from_the_start = !warm;
        if charged_from_the_start {
            world.entity_mut(first).insert(Charge { value: 3.5 });
        }
        if warm {
            world_state_hash(world);
            world.entity_mut(first).insert(Charge { value: 3.5 });
        }
        world.spawn((
            Transform::from_xyz(7.0, 3.0, 0.0),
            RigidBody::dynamic(1.0),
            Fuel { litres: 40.0 },
        ));
        world.spawn((
            Transform::from_xyz(2.0, 6.0, 0.0),
            RigidBody::dynamic(1.0),
            Heat { kelvin: 300.0 },
        ));
        let gpu = spawn_gpu_body(world);
        if warm {
            world_state_hash(world);
        }
        world.get_mut::<Transform>(gpu).unwrap().translation.y += 0.5;
        // A new archetype of types the world already knows: only the kept plans' extension
        // covers it.
        world.entity_mut(first).insert(Fuel { litres: 2.5 });
        // A registration of a type the world already holds: only a fresh registry slot covers it.
        world
            .resource_mut::<rusting_engine::state::SimRegistry>()
            .register::<Wear>(rusting_engine::state::SimKind::Component);
        world_state_hash(world)
    };
    assert_eq!(
        build(true),
        build(false),
        "a world hashed while it grew differs from the same world hashed once"
    );
}
