//! A game's own state, declared once with `#[derive(SimState)]` and one registration, is hashed,
//! snapshotted and compared like the engine's; state nobody declared is named at the tick it
//! changes; and bevy's own fixed loop is refused.

use std::cell::Cell;

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::AppError;
use rusting_engine::determinism::compare_runs;
use rusting_engine::prelude::*;
use rusting_engine::state::SimId;
use rusting_engine::state::StateHashes;
use rusting_engine::state::sim_state::fields_of;

/// A game's own component.
#[derive(Component, Clone, Debug, PartialEq, SimState)]
struct Health {
    value: f32,
}

/// A game's own resource.
#[derive(Resource, Clone, Debug, PartialEq, SimState)]
struct Score(u32);

/// Nested state, an enum, an array and a skipped field, to check what the derive names.
#[derive(Component, Clone, Debug, PartialEq, SimState)]
#[sim_state(name = "Loadout")]
struct Inventory {
    slots: [u8; 2],
    weapon: Weapon,
    cooldown: Option<f32>,
    #[sim_state(skip = "a cache rebuilt from `slots` every tick")]
    cache: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, SimState)]
enum Weapon {
    Sword { reach: f32 },
    Bow(u32),
}

/// Drains health by a fixed amount every tick and scores a point every tenth tick.
fn drain(time: Res<FrameTime>, mut bodies: Query<&mut Health>, mut score: ResMut<Score>) {
    for mut health in &mut bodies {
        health.value -= 0.125;
    }
    if time.fixed_tick.is_multiple_of(10) {
        score.0 += 1;
    }
}

/// An app with one body holding `Health` and the `Score` resource; with `nudge`, tick 40 adds one
/// ULP to the health.
fn health_app(nudge: bool) -> App {
    let mut app = App::default();
    app.register_sim_component::<Health>()
        .register_sim_resource::<Score>();
    app.world_mut().insert_resource(Score(0));
    app.world_mut().spawn((
        Name::new("Hero"),
        Transform::default(),
        Health { value: 100.0 },
    ));
    app.add_systems(FixedUpdate, drain.after(SimSet::Tweens));
    if nudge {
        app.add_systems(
            FixedUpdate,
            (|time: Res<FrameTime>, mut bodies: Query<&mut Health>| {
                if time.fixed_tick == 39 {
                    for mut health in &mut bodies {
                        health.value = f32::from_bits(health.value.to_bits() + 1);
                    }
                }
            })
            .after(drain),
        );
    }
    app.setup().unwrap();
    app
}

fn run(app: &mut App, ticks: u64) -> Vec<(u64, u64)> {
    let step = app.fixed_step();
    for _ in 0..ticks {
        app.update(step);
    }
    app.world()
        .resource::<StateHashes>()
        .cpu
        .iter()
        .copied()
        .collect()
}

/// A game's `Health` component and `Score` resource, each registered with one call, are hashed,
/// compared to the field and snapshotted. Fails if registering a component stops feeding it into
/// the hash (the ULP on tick 40 goes unseen), if `compare_runs` cannot name a game component's
/// field, or if snapshots leave either type behind.
#[test]
fn game_components_and_resources_are_hashed_snapshotted_and_compared() {
    let reference = run(&mut health_app(false), 60);
    let nudged = run(&mut health_app(true), 60);
    for ((tick, a), (_, b)) in reference.iter().zip(&nudged) {
        if *tick < 40 {
            assert_eq!(a, b, "tick {tick} changed before the nudge");
        } else {
            assert_ne!(a, b, "tick {tick} did not see the nudge");
        }
    }

    let builds = Cell::new(0);
    let divergence = compare_runs(
        || {
            builds.set(builds.get() + 1);
            health_app(builds.get() == 2)
        },
        60,
    )
    .unwrap_err();
    assert_eq!(divergence.tick, 40);
    assert_eq!(divergence.name.as_deref(), Some("Hero"));
    assert_eq!(divergence.component, Some("Health"));
    let field = divergence.field.clone().unwrap();
    assert_eq!(field.path, "value");
    assert_eq!(field.first, "95.0");
    assert_eq!(field.second, "95.00001");
    assert!(
        divergence
            .to_string()
            .contains("Health.value: 95.0 vs 95.00001"),
        "{divergence}"
    );

    let mut app = health_app(false);
    run(&mut app, 20);
    let snapshot = app.snapshot().unwrap();
    let at_snapshot = (
        app.world().resource::<Score>().clone(),
        app.world_mut()
            .query::<&Health>()
            .single(app.world())
            .unwrap()
            .clone(),
    );
    run(&mut app, 15);
    app.restore(&snapshot).unwrap();
    assert_eq!(*app.world().resource::<Score>(), at_snapshot.0);
    let health = app
        .world_mut()
        .query::<&Health>()
        .single(app.world())
        .unwrap()
        .clone();
    assert_eq!(health, at_snapshot.1);
}

/// The derive names nested fields, enum variants and array elements, and leaves out a skipped
/// field. Fails if a field is visited out of declaration order or the skip is ignored.
#[test]
fn the_derive_names_every_field() {
    let inventory = Inventory {
        slots: [3, 4],
        weapon: Weapon::Sword { reach: 1.5 },
        cooldown: Some(0.25),
        cache: vec![9],
    };
    let fields: Vec<String> = fields_of(&inventory)
        .into_iter()
        .map(|(path, value)| format!("{path}={value}"))
        .collect();
    assert_eq!(
        fields,
        [
            "slots.0=3",
            "slots.1=4",
            "weapon=Sword",
            "weapon.reach=1.5",
            "cooldown=0.25"
        ]
    );
    assert_eq!(<Inventory as SimState>::NAME, "Loadout");
    assert_eq!(
        fields_of(&Weapon::Bow(7)),
        [("".into(), "Bow".into()), ("0".into(), "7".into())]
    );
}

/// Marks a decoration the game moves in a fixed system.
#[derive(Component)]
struct Drifter;

fn drift(mut drifters: Query<&mut Transform, With<Drifter>>) {
    for mut transform in &mut drifters {
        transform.translation.x += 0.01;
    }
}

fn drifter_app(nudge: bool, simulated: bool) -> App {
    let mut app = App::default();
    app.check_undeclared_state(false);
    let mut drifter = app.world_mut().spawn((Transform::default(), Drifter));
    if simulated {
        drifter.insert(Simulated);
    }
    app.add_systems(FixedUpdate, drift.after(SimSet::Tweens));
    if nudge {
        app.add_systems(
            FixedUpdate,
            (|time: Res<FrameTime>, mut drifters: Query<&mut Transform, With<Drifter>>| {
                if time.fixed_tick == 9 {
                    for mut transform in &mut drifters {
                        let x = transform.translation.x;
                        transform.translation.x = f32::from_bits(x.to_bits() + 1);
                    }
                }
            })
            .after(drift),
        );
    }
    app.setup().unwrap();
    app
}

/// An entity whose only state is a `Transform` a game system moves, marked `Simulated`, is
/// hashed: one ULP is seen from its tick on. Without the marker it is presentation and the same
/// ULP is not seen (the check that the marker is what makes the difference). Fails if `Simulated`
/// does not make an entity's `Transform` simulation state.
#[test]
fn a_game_entity_moved_in_fixed_update_is_hashed() {
    let reference = run(&mut drifter_app(false, true), 20);
    let nudged = run(&mut drifter_app(true, true), 20);
    assert_eq!(reference[..9], nudged[..9]);
    assert!(reference[9..].iter().zip(&nudged[9..]).all(|(a, b)| a != b));

    let unmarked = run(&mut drifter_app(false, false), 20);
    let unmarked_nudged = run(&mut drifter_app(true, false), 20);
    assert_eq!(unmarked, unmarked_nudged);
}

/// A component nobody declared.
#[derive(Component, Default)]
struct Secret(u32);

/// A component declared as presentation, moved by a fixed system.
#[derive(Component, Clone, Default)]
struct Sparkle(f32);

/// A component ignored in snapshots.
#[derive(Component, Default)]
struct Cache(u32);

fn touch_on_tick_7(
    time: Res<FrameTime>,
    mut secrets: Query<&mut Secret>,
    mut sparkles: Query<&mut Sparkle>,
    mut caches: Query<&mut Cache>,
) {
    for mut sparkle in &mut sparkles {
        sparkle.0 += 1.0;
    }
    for mut cache in &mut caches {
        cache.0 += 1;
    }
    if time.fixed_tick == 6 {
        for mut secret in &mut secrets {
            secret.0 += 1;
        }
    }
}

/// A component nobody declared, changed by a fixed system during tick 7, is named with that tick
/// and its entity; a presentation type and an ignored type changed every tick are not. Fails if
/// the check stops looking at change ticks, or if it reports declared presentation.
#[test]
fn unregistered_state_changed_in_a_tick_is_named_at_that_tick() {
    let mut app = App::default();
    app.check_undeclared_state(true);
    app.register_presentation_component::<Sparkle>("Sparkle")
        .ignore_in_snapshots::<Cache>();
    let body = app
        .world_mut()
        .spawn((
            Name::new("Vault"),
            Transform::default(),
            Collider::sphere(0.5),
            Secret(0),
            Cache(0),
        ))
        .id();
    app.world_mut().spawn((Transform::default(), Sparkle(0.0)));
    app.add_systems(FixedUpdate, touch_on_tick_7.after(SimSet::Tweens));
    app.setup().unwrap();
    let sim_id = *app.world().get::<SimId>(body).unwrap();
    run(&mut app, 6);
    assert_eq!(
        app.undeclared_state(),
        None,
        "nothing undeclared before tick 7"
    );
    run(&mut app, 4);
    let found = app
        .undeclared_state()
        .cloned()
        .expect("tick 7 changed `Secret`");
    assert_eq!(found.tick, 7);
    assert!(found.type_name.ends_with("Secret"), "{found}");
    assert_eq!(found.sim_id, Some(sim_id));
    let message = found.to_string();
    assert!(
        message.contains("tick 7") && message.contains("`Vault`"),
        "{message}"
    );
    assert!(message.contains("register_sim_component"), "{message}");
}

/// bevy's `TimePlugin` runs `FixedMain` from the wall clock on top of the engine's ticks; an app
/// that adds it is refused at setup. Fails if the startup check is dropped (the app then starts).
#[test]
fn a_second_fixed_loop_is_refused() {
    let mut app = App::default();
    app.add_plugins(bevy::time::TimePlugin);
    let error = app.setup().unwrap_err();
    assert!(matches!(error, AppError::SecondFixedLoop), "{error}");
    assert!(error.to_string().contains("TimePlugin"));
}

/// Two types under one registered name are refused at setup, naming it.
#[test]
fn two_types_under_one_name_are_refused() {
    #[derive(Component, Clone, SimState)]
    #[sim_state(name = "Health")]
    struct OtherHealth(u8);
    let mut app = App::default();
    app.register_sim_component::<Health>()
        .register_sim_component::<OtherHealth>();
    let error = app.setup().unwrap_err();
    assert!(error.to_string().contains("`Health`"), "{error}");
}

/// A NaN in a game component is reported with the component's registered name and the field's
/// path, found after the fact from the derive's field list. Fails if the hash stops noting which
/// component held a non-finite value, or the field is not located.
#[test]
fn a_nan_in_a_game_component_names_its_field() {
    let mut app = health_app(false);
    run(&mut app, 2);
    let world = app.world_mut();
    let mut health = world.query::<&mut Health>();
    health.single_mut(world).unwrap().value = f32::NAN;
    run(&mut app, 1);
    let report = app
        .world()
        .resource::<StateHashes>()
        .first_non_finite
        .clone()
        .expect("the NaN is reported");
    assert_eq!(report.tick, 3);
    assert_eq!(report.component, "Health");
    assert_eq!(report.field, "value");
}
