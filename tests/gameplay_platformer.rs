//! The platformer controller jumps as high as physics says, buffers presses, and lands with one
//! sound and a seeded burst.

use bevy::input::keyboard::KeyCode;
use bevy::prelude::*;
use rusting_engine::gameplay::{BurstParticle, SoundEvents};
use rusting_engine::prelude::*;
use rusting_engine::runtime::RuntimeSettings;
use rusting_engine::scene::SceneId;

fn app(seed: u64) -> rusting_engine::App {
    let mut app = rusting_engine::App::new(RuntimeSettings {
        seed,
        ..RuntimeSettings::default()
    });
    app.setup().unwrap();
    // The hero jumps on the `jump` action, bound to Space as in the starter's rusting.json.
    app.world_mut()
        .resource_mut::<rusting_engine::runtime::InputBindings>()
        .actions
        .insert("jump".to_owned(), [KeyCode::Space].into());
    app.world_mut()
        .spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    app
}

fn hero(app: &mut rusting_engine::App, height: f32) -> Entity {
    app.world_mut()
        .spawn((
            Transform::from_xyz(0.0, height, 0.0),
            RigidBody::dynamic(1.0),
            Collider::capsule(0.4, 0.3).with_friction(0.0),
            PlatformerController::default(),
            BurstEmitter {
                fire_on_landing: true,
                particles: 6,
                ..BurstEmitter::default()
            },
        ))
        .id()
}

fn frame(app: &mut rusting_engine::App, space: bool) {
    let mut input = RuntimeInput::default();
    if space {
        input.press(KeyCode::Space);
    }
    app.set_input(input);
    let step = app.fixed_step();
    app.update(step);
}

fn bottom(app: &rusting_engine::App, e: Entity) -> f32 {
    app.world().get::<Transform>(e).unwrap().translation.y - 0.7
}

/// Standing, a jump at `jump_speed` rises `v^2 / 2g` (within 4%: the jump starts on a tick
/// boundary). Fails if the jump speed is applied twice or the buffer fires on every frame the key
/// is held.
#[test]
fn a_jump_reaches_the_expected_apex() {
    let mut app = app(1);
    let hero = hero(&mut app, 0.7);
    for _ in 0..30 {
        frame(&mut app, false);
    }
    let start = bottom(&app, hero);
    let mut apex = start;
    for k in 0..120 {
        frame(&mut app, k < 10);
        apex = apex.max(bottom(&app, hero));
    }
    let v = PlatformerController::default().jump_speed;
    let expected = v * v / (2.0 * 9.81);
    let rise = apex - start;
    assert!(
        ((rise - expected) / expected).abs() < 0.04,
        "rose {rise}, expected {expected}"
    );
}

/// Drops the hero from 3 m, pressing jump `before` ticks before it lands; returns whether it jumped
/// within 10 ticks of landing.
fn jumps_with_press_before_landing(before: u32) -> bool {
    // Where does it land without pressing?
    let mut probe = app(1);
    let h = hero(&mut probe, 3.0);
    let mut landing = 0;
    for t in 0..200 {
        frame(&mut probe, false);
        if probe
            .world()
            .get::<PlatformerController>(h)
            .unwrap()
            .grounded
        {
            landing = t;
            break;
        }
    }
    let mut app = app(1);
    let h = hero(&mut app, 3.0);
    for t in 0..landing + 10 {
        frame(&mut app, t + before == landing);
        if t > landing && app.world().get::<RigidBody>(h).unwrap().linear_velocity.y > 3.0 {
            return true;
        }
    }
    false
}

/// A press made a few ticks before landing is buffered and jumps on landing; one made well before
/// the buffer time is forgotten. Fails if the buffer is cleared while airborne or never expires.
#[test]
fn a_buffered_press_just_before_landing_jumps() {
    assert!(
        jumps_with_press_before_landing(4),
        "a press 4 ticks early must jump"
    );
    assert!(
        !jumps_with_press_before_landing(30),
        "a press 30 ticks early must not jump"
    );
}

fn particle_velocities(app: &mut rusting_engine::App) -> Vec<Vec3> {
    let world = app.world_mut();
    let mut v: Vec<(Entity, Vec3)> = world
        .query::<(Entity, &BurstParticle)>()
        .iter(world)
        .map(|(e, p)| (e, p.velocity))
        .collect();
    v.sort_by_key(|(e, _)| *e);
    v.into_iter().map(|(_, v)| v).collect()
}

fn drop_and_land(seed: u64) -> (rusting_engine::App, Vec<Vec3>, u32) {
    let mut app = app(seed);
    let h = hero(&mut app, 2.0);
    let mut land_sounds = 0;
    for _ in 0..120 {
        frame(&mut app, false);
        let sounds = &app.world().resource::<SoundEvents>().events;
        land_sounds += sounds.iter().filter(|s| s.cue == "land").count() as u32;
        if app.world().get::<BurstEmitter>(h).unwrap().fired > 0 {
            break;
        }
    }
    let velocities = particle_velocities(&mut app);
    (app, velocities, land_sounds)
}

/// Landing raises exactly one `land` cue and one burst of seeded particles: the same seed gives the
/// same particles, another seed others; the particles are gone after their lifetime. Fails if bursts
/// draw from a stateful generator or a stream without the tick, or if particles never expire.
#[test]
fn landing_fires_one_sound_and_a_seeded_burst_that_expires() {
    let (mut app, first, sounds) = drop_and_land(7);
    assert_eq!(sounds, 1);
    assert_eq!(first.len(), 6);
    let (_, again, _) = drop_and_land(7);
    assert_eq!(first, again);
    let (_, other, _) = drop_and_land(8);
    assert_ne!(first, other);
    for _ in 0..40 {
        frame(&mut app, false);
    }
    assert!(
        particle_velocities(&mut app).is_empty(),
        "particles outlived their lifetime"
    );
    let more_sounds: usize = app
        .world()
        .resource::<SoundEvents>()
        .events
        .iter()
        .filter(|s| s.cue == "land")
        .count();
    assert_eq!(more_sounds, 0, "a resting hero must not land again");
}

/// Two emitters firing on the same tick draw different particles: keyed by their `SceneId`, or by
/// their entity when they have none. Fails if the key ignores the emitter (every burst alike).
#[test]
fn emitters_without_scene_ids_draw_their_own_bursts() {
    for with_ids in [false, true] {
        let mut app = app(3);
        let mut emitters = Vec::new();
        for k in 0..2u64 {
            let mut entity = app.world_mut().spawn((
                Transform::from_xyz(k as f32 * 5.0, 1.0, 0.0),
                BurstEmitter {
                    fire: true,
                    particles: 4,
                    lifetime: 10.0,
                    ..BurstEmitter::default()
                },
            ));
            if with_ids {
                entity.insert(SceneId(100 + k));
            }
            emitters.push(entity.id());
        }
        frame(&mut app, false);
        let world = app.world_mut();
        let mut by_origin: Vec<(i32, Vec3)> = world
            .query::<(&Transform, &BurstParticle)>()
            .iter(world)
            .map(|(t, p)| ((t.translation.x / 5.0).round() as i32, p.velocity))
            .collect();
        by_origin.sort_by_key(|a| a.0);
        assert_eq!(by_origin.len(), 8);
        let first: Vec<Vec3> = by_origin
            .iter()
            .filter(|(o, _)| *o == 0)
            .map(|(_, v)| *v)
            .collect();
        let second: Vec<Vec3> = by_origin
            .iter()
            .filter(|(o, _)| *o == 1)
            .map(|(_, v)| *v)
            .collect();
        assert_eq!(first.len(), 4);
        for v in &first {
            assert!(
                !second.contains(v),
                "with_ids {with_ids}: emitters share particles"
            );
        }
    }
}
