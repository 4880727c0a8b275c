//! `compare_runs` names the first divergent tick, entity, component and field; reports on disk
//! compare the same way, pairing entities by `SimId`, and name the field when they detail the tick.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use bevy::prelude::*;
use rusting_engine::determinism::compare_runs;
use rusting_engine::game::project::Project;
use rusting_engine::game::simulate_project_headless;
use rusting_engine::prelude::*;
use rusting_engine::record::{StateHashReport, compare_reports};
use rusting_engine::runtime::InputScript;
use rusting_engine::scene::SceneId;

#[path = "support/starter.rs"]
mod support;

#[derive(Component)]
struct Hero;

/// Builds a little scene; every second app built nudges `Hero` (or the seed) on one tick, the way a
/// nondeterministic game system would.
fn make_app(builds: &'static AtomicU32, nudge: fn(&mut World)) -> rusting_engine::App {
    let odd = builds.fetch_add(1, Ordering::SeqCst) % 2 == 1;
    let mut app = rusting_engine::App::default();
    let world = app.world_mut();
    world.spawn((
        Transform::default(),
        Collider::half_space(Vec3::Y),
        Name::new("Ground"),
    ));
    for level in 0..3u64 {
        world.spawn((
            Transform::from_xyz(3.0, 0.5 + level as f32, 0.0),
            RigidBody::dynamic(1.0),
            Collider::cuboid(Vec3::splat(0.5)),
            Name::new(format!("Crate {level}")),
            SceneId(10 + level),
        ));
    }
    world.spawn((
        Transform::from_xyz(0.0, 3.0, 0.0),
        RigidBody::dynamic(1.0),
        Collider::sphere(0.4),
        Name::new("Player"),
        SceneId(1),
        Hero,
    ));
    let system = move |world: &mut World| {
        if odd && world.resource::<FrameTime>().fixed_tick == 30 {
            nudge(world);
        }
    };
    app.add_systems(FixedUpdate, system.after(SimSet::Tweens));
    app.setup().unwrap();
    app
}

fn nudge_player(world: &mut World) {
    let hero = world
        .query_filtered::<Entity, With<Hero>>()
        .single(world)
        .unwrap();
    world.get_mut::<Transform>(hero).unwrap().translation.x += 1.0e-4;
}

fn nudge_seed(world: &mut World) {
    world.resource_mut::<RandomSeed>().0 ^= 1;
}

/// A 1e-4 nudge to the player's position during tick 30 of one run is reported as tick 31 (the
/// first hash taken after it: 30 ticks completed before, so the hash after the nudged tick is
/// tick 31's), entity `Player` with its `SceneId`, component `Transform`, field `translation.x`.
/// Fails if the comparison names an entity in query order instead of entity order, or stops at
/// the tick without looking for the entity.
#[test]
fn compare_runs_reports_the_first_divergent_tick_and_body() {
    static BUILDS: AtomicU32 = AtomicU32::new(0);
    let divergence = compare_runs(|| make_app(&BUILDS, nudge_player), 90).unwrap_err();
    assert_eq!(divergence.tick, 31);
    assert_eq!(divergence.name.as_deref(), Some("Player"));
    assert_eq!(divergence.scene_id, Some(1));
    assert_eq!(divergence.component, Some("Transform"));
    let text = divergence.to_string();
    assert!(text.starts_with("tick 31, entity "), "{text}");
    assert!(
        text.contains("`Player` (scene id 1), Transform.translation.x: "),
        "{text}"
    );

    static SAME: AtomicU32 = AtomicU32::new(0);
    assert_eq!(compare_runs(|| make_app(&SAME, |_| {}), 90), Ok(()));
}

/// The component report names the first differing field with both values, and a divergence in a
/// resource alone names no entity.
#[test]
fn compare_runs_names_the_field_and_both_values() {
    static BUILDS: AtomicU32 = AtomicU32::new(0);
    let divergence = compare_runs(|| make_app(&BUILDS, nudge_player), 90).unwrap_err();
    let field = divergence.field.expect("a field must be named");
    assert_eq!(field.path, "translation.x");
    let (first, second): (f32, f32) = (field.first.parse().unwrap(), field.second.parse().unwrap());
    assert!(
        (second - first - 1.0e-4).abs() < 1.0e-6,
        "{first} vs {second}"
    );

    static SEEDS: AtomicU32 = AtomicU32::new(0);
    let divergence = compare_runs(|| make_app(&SEEDS, nudge_seed), 90).unwrap_err();
    assert_eq!(divergence.tick, 31);
    assert_eq!(divergence.entity, None);
    assert_eq!(divergence.to_string(), "tick 31: only resources differ");
}

/// Reports written to disk and read back compare by `SceneId`: an entity added to one run is named
/// as the difference, not every entity after it. The report is written atomically and reads back
/// equal.
#[test]
fn saved_reports_compare_by_scene_id() {
    let starter = Path::new("crates/rusting/templates/starter");
    let project = Project::open(starter).unwrap();
    let script = InputScript::load(&starter.join("input/walkthrough.json")).unwrap();
    let (mut plain, plain_hashes) =
        simulate_project_headless(&project, 120, Some(&script), |app| {
            app.add_plugins(support::starter_game::StarterGame);
        })
        .unwrap();
    let (mut extra, extra_hashes) =
        simulate_project_headless(&project, 120, Some(&script), |app| {
            app.add_plugins(support::starter_game::StarterGame);
            // A simulated entity that takes no physics slot, so no other body's state changes.
            app.world_mut().spawn((
                Transform::from_xyz(100.0, 1.0, 100.0),
                Tween::new(
                    Vec3::new(100.0, 1.0, 100.0),
                    Vec3::new(100.0, 5.0, 100.0),
                    2.0,
                ),
                Name::new("Visitor"),
            ));
        })
        .unwrap();
    assert_eq!(plain_hashes.len(), 120);
    let dir = std::env::temp_dir().join(format!("rusting-reports-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a_path, b_path) = (dir.join("a.json"), dir.join("b.json"));
    StateHashReport::capture(plain.world_mut(), &plain_hashes)
        .write(&a_path)
        .unwrap();
    StateHashReport::capture(extra.world_mut(), &extra_hashes)
        .write(&b_path)
        .unwrap();
    let a = StateHashReport::load(&a_path).unwrap();
    let b = StateHashReport::load(&b_path).unwrap();
    assert_eq!(a.ticks.len(), 120);
    assert!(a.entities.iter().any(|e| e.scene_id == Some(10)));
    let difference = compare_reports(&a, &b).expect("the runs differ");
    assert_eq!(
        difference.tick,
        Some(1),
        "the visitor is hashed from the first tick"
    );
    let entity = difference.entity.expect("an entity must be named");
    assert_eq!(entity.name.as_deref(), Some("Visitor"));
    assert_eq!(compare_reports(&a, &a), None);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        2,
        "temporary files left behind: {leftovers:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs an app from `make_app` for 40 ticks and returns its report, with the state of ticks 29 to
/// 32 detailed down to the field (what `RUSTING_DETAIL_TICKS=29-32` asks of a game).
fn detailed_report(app: &mut rusting_engine::App) -> StateHashReport {
    use rusting_engine::record::StateDetail;
    use rusting_engine::state::StateHashes;
    let step = app.fixed_step();
    let mut details = Vec::new();
    for _ in 0..40 {
        app.update(step);
        let tick = app.ticks();
        if (29..=32).contains(&tick) {
            details.push(StateDetail::capture(app.world_mut(), tick));
        }
    }
    let ticks: Vec<(u64, u64)> = app
        .world()
        .resource::<StateHashes>()
        .cpu
        .iter()
        .copied()
        .collect();
    let mut report = StateHashReport::capture(app.world_mut(), &ticks);
    report.details = details;
    report
}

/// Two saved reports that detail the divergent tick name the entity, component and field with
/// both values at that tick, as reports from two machines would; without details they name only
/// the final state's entity and component. A nudged seed is named as a resource and its field
/// (never a bare "only resources differ"). Fails if `compare_reports` ignores the reports'
/// details.
#[test]
fn saved_reports_with_details_name_the_field() {
    static BUILDS: AtomicU32 = AtomicU32::new(0);
    let (mut plain, mut nudged) = (
        make_app(&BUILDS, nudge_player),
        make_app(&BUILDS, nudge_player),
    );
    let (a, b) = (detailed_report(&mut plain), detailed_report(&mut nudged));
    let (file_a, file_b) = (written(&a, "a"), written(&b, "b"));
    let a = StateHashReport::load(&file_a).unwrap();
    let b = StateHashReport::load(&file_b).unwrap();
    std::fs::remove_file(file_a).unwrap();
    std::fs::remove_file(file_b).unwrap();
    let difference = compare_reports(&a, &b).expect("the nudge shows");
    assert_eq!(difference.tick, Some(31));
    let at_tick = difference.at_tick.expect("both reports detail tick 31");
    let entity = at_tick.entity.expect("an entity differs");
    assert_eq!(entity.name.as_deref(), Some("Player"));
    assert_eq!(at_tick.component.as_deref(), Some("Transform"));
    let field = at_tick.field.expect("a field differs");
    assert_eq!(field.path, "translation.x");
    assert_ne!(field.first, field.second);

    static SEEDS: AtomicU32 = AtomicU32::new(0);
    let (mut plain, mut reseeded) = (make_app(&SEEDS, nudge_seed), make_app(&SEEDS, nudge_seed));
    let (a, b) = (detailed_report(&mut plain), detailed_report(&mut reseeded));
    let at_tick = compare_reports(&a, &b).unwrap().at_tick.unwrap();
    assert!(at_tick.entity.is_none());
    assert_eq!(at_tick.component.as_deref(), Some("RandomSeed"));
    assert_eq!(at_tick.field.unwrap().path, "0");
}

/// `report` written to a file of the system's temporary directory; returns the path.
fn written(report: &StateHashReport, tag: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "rusting-detailed-{tag}-{}.json",
        std::process::id()
    ));
    report.write(&path).unwrap();
    path
}
