//! At the divergent tick every differing entity, component and field and every differing
//! resource is listed (bounded, with a count of the rest), not only the first entity in `SimId`
//! order: in `compare_details` (what `rusting determinism`, replays and reports use), in SyncTest's
//! error, and in the plotted entity's choice.

use std::sync::atomic::{AtomicU32, Ordering};

use bevy::prelude::*;
use rusting_engine::determinism::{SyncTest, SyncTestError};
use rusting_engine::prelude::*;
use rusting_engine::record::{MAX_LISTED_DIFFERENCES, StateDetail, compare_details};
use rusting_engine::runtime::RuntimeInput;

/// An enemy's health (game state).
#[derive(Component, Clone, Debug, PartialEq, SimState)]
struct Health {
    value: i32,
}

/// A HUD entity that mirrors the score: spawned first, so it has the lowest simulation id.
#[derive(Component, Clone, Debug, PartialEq, SimState)]
struct KillBoard {
    value: u32,
}

/// The game's score (a simulation resource).
#[derive(Resource, Clone, Debug, Default, PartialEq, SimState)]
struct Score {
    hits: u32,
}

/// State the planted bug reads that no hash or snapshot covers: which enemy a shot picks.
#[derive(Resource, Clone, Copy)]
struct Aim(u32);

/// Every shot taken in this process (outside every snapshot): SyncTest's planted bug.
static SHOTS: AtomicU32 = AtomicU32::new(0);

/// Shoots one enemy a tick and mirrors the score on the kill board. The enemy is picked by the
/// tick times `1 + Aim` (the "hash-map order" of the bug), or, with `Aim(u32::MAX)`, by a
/// process-wide count of shots that every re-simulation moves on.
fn shoot(
    aim: Res<Aim>,
    time: Res<FrameTime>,
    mut score: ResMut<Score>,
    mut enemies: Query<(&SimId, &mut Health)>,
    mut boards: Query<&mut KillBoard>,
) {
    let mut targets: Vec<(SimId, Mut<Health>)> =
        enemies.iter_mut().map(|(id, h)| (*id, h)).collect();
    targets.sort_by_key(|(id, _)| *id);
    let aim = match aim.0 {
        u32::MAX => SHOTS.fetch_add(1, Ordering::Relaxed),
        aim => aim,
    };
    let pick = (time.fixed_tick as u32 * (1 + aim)) as usize % targets.len().max(1);
    if let Some((_, health)) = targets.get_mut(pick) {
        health.value -= 1;
        // Points by the enemy's place: a different pick scores differently.
        score.hits += 1 + pick as u32;
    }
    for mut board in &mut boards {
        board.value = score.hits;
    }
}

fn arena(aim: u32, enemies: u32) -> rusting_engine::App {
    let mut app = rusting_engine::App::default();
    app.register_sim_component::<Health>()
        .register_sim_component::<KillBoard>()
        .register_sim_resource::<Score>();
    app.world_mut().insert_resource(Score::default());
    app.world_mut().insert_resource(Aim(aim));
    app.add_systems(FixedUpdate, shoot);
    app.setup().unwrap();
    app.world_mut()
        .spawn((Name::new("Kill board"), KillBoard { value: 0 }));
    for k in 0..enemies {
        app.world_mut()
            .spawn((Name::new(format!("Enemy {k}")), Health { value: 10 }));
    }
    app
}

fn detail_after(app: &mut rusting_engine::App, ticks: u64) -> StateDetail {
    let step = app.fixed_step();
    for _ in 0..ticks {
        app.update(step);
    }
    let tick = app.ticks();
    StateDetail::capture(app.world_mut(), tick)
}

/// Two runs whose shots pick enemies differently (one aimed a step further) differ at the tick in
/// the kill board (lowest id), in two enemies' `Health.value` and in the `Score.hits` resource:
/// the first difference is still the board, and the list holds all four with both values, in
/// `SimId` order then resources; the wording lists them under the first line. With 40 differing
/// enemies the list stops at `MAX_LISTED_DIFFERENCES` and counts the rest. The plotted entity is
/// the first listed one (no `Transform` differs here). Fails if `compare_details` stops at the first entity (the enemies and the
/// score are then never named, as a shooter's HUD mirror hid them).
#[test]
fn every_differing_entity_and_resource_is_listed() {
    let first = detail_after(&mut arena(0, 3), 2);
    let second = detail_after(&mut arena(1, 3), 2);
    let difference = compare_details(&first, &second).expect("the runs differ");
    assert_eq!(
        difference.entity.as_ref().and_then(|e| e.name.as_deref()),
        Some("Kill board"),
        "the first difference stays the lowest id"
    );
    let listed: Vec<String> = difference.listed.iter().map(ToString::to_string).collect();
    let board = listed.iter().position(|d| {
        d.contains("`Kill board`") && d.contains("component KillBoard, field value:")
    });
    let enemies: Vec<usize> = listed
        .iter()
        .enumerate()
        .filter(|(_, d)| d.contains("`Enemy ") && d.contains("component Health, field value:"))
        .map(|(k, _)| k)
        .collect();
    let score = listed
        .iter()
        .position(|d| d.starts_with("resource Score, field hits:"));
    assert!(
        board == Some(0) && enemies == [1, 2] && score.is_some(),
        "every difference should be listed, entities first:\n{}",
        listed.join("\n")
    );
    assert_eq!(difference.unlisted, 0);
    let text = difference.to_string();
    assert!(
        text.contains(&format!(
            "every difference at this tick ({} in all):",
            listed.len()
        )) && listed.iter().all(|d| text.contains(d.as_str())),
        "{text}"
    );
    // No `Transform` differs, so the plot follows the first listed entity.
    assert_eq!(
        difference.plotted_entity().map(|(_, label)| label),
        difference.listed[0].entity.clone()
    );

    // Forty enemies, each hit in one run and not the other over many ticks.
    let first = detail_after(&mut arena(0, 40), 40);
    let second = detail_after(&mut arena(1, 40), 40);
    let difference = compare_details(&first, &second).unwrap();
    assert_eq!(difference.listed.len(), MAX_LISTED_DIFFERENCES);
    assert!(difference.unlisted > 0, "{difference:?}");
    assert!(
        difference
            .to_string()
            .contains(&format!("... and {} more", difference.unlisted)),
        "{difference}"
    );
}

/// SyncTest's mismatch names every differing thing too: with shots aimed by a counter outside
/// the snapshot, the error lists the enemies' `Health` and the `Score` resource, not only the
/// kill board. Fails if SyncTest goes back to naming the first differing entity and component.
#[test]
fn synctest_lists_every_difference() {
    let make = || arena(u32::MAX, 3);
    let mut synctest = SyncTest::new(make, 2);
    let failure = (0..30)
        .find_map(|_| synctest.advance(RuntimeInput::default()).err())
        .expect("the counter outside the snapshot is caught");
    let where_ = match &failure {
        SyncTestError::Mismatch { where_, .. } | SyncTestError::Nondeterministic { where_, .. } => {
            where_.clone().unwrap_or_default()
        }
        other => panic!("expected a mismatch, got {other}"),
    };
    assert!(
        where_.contains("component Health, field value")
            && where_.contains("resource Score, field hits")
            && where_.contains("every difference at this tick"),
        "{where_}"
    );
}

/// A run's end summary shows the game's own resources and none of the engine's: after ten shots
/// `StateDetail::game_resources` holds `Score` alone, with its field as the run left it, while the
/// full detail also holds the engine's resources (`FrameTime`, `PlayerInputs`, ...). Fails if the
/// engine's types are not told from the game's (the summary then lists a dozen engine resources).
#[test]
fn a_runs_summary_shows_the_games_own_resources() {
    let mut app = arena(0, 3);
    for _ in 0..10 {
        app.set_input(RuntimeInput::default());
        let step = app.fixed_step();
        app.update(step);
    }
    let world = app.world_mut();
    let all = StateDetail::capture(world, 10);
    assert!(
        all.resources.iter().any(|r| r.name == "FrameTime") && all.resources.len() > 3,
        "{:?}",
        all.resources.iter().map(|r| &r.name).collect::<Vec<_>>()
    );
    let game = StateDetail::game_resources(world);
    assert_eq!(
        game.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["Score"]
    );
    let hits = world.resource::<Score>().hits;
    assert!(hits >= 10);
    assert_eq!(game[0].fields, [("hits".to_owned(), hits.to_string())]);
}

/// Moves `entity`'s translation along x in a captured detail, as a run that pushed it would have
/// it (its `Transform` and the entity's hashes changed).
fn moved(mut detail: StateDetail, entity: &str) -> StateDetail {
    let held = detail
        .entities
        .iter_mut()
        .find(|e| e.name.as_deref() == Some(entity))
        .unwrap();
    held.hash = "f".repeat(16);
    let transform = held
        .components
        .iter_mut()
        .find(|c| c.name == "Transform")
        .unwrap();
    transform.hash = "f".repeat(16);
    let x = transform
        .fields
        .iter_mut()
        .find(|(path, _)| path == "translation.x")
        .unwrap();
    x.1 = "0.5".to_owned();
    detail
}

/// Every entity that moved differently is plotted, in listing order and once each, up to the
/// limit, while one that only changed state (the kill board) is not: with enemies 1 and 3 moved
/// in the second run, `plotted_entities` names those two and no other. Fails if the plot follows
/// only the first entity whose `Transform` differs (the report then misses enemy 3's path).
#[test]
fn every_entity_that_moved_differently_is_plotted() {
    let mut app = arena(0, 4);
    for k in 0..4 {
        let name = format!("Enemy {k}");
        let mut enemies = app.world_mut().query::<(&Name, Entity)>();
        let enemy = enemies
            .iter(app.world())
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, e)| e)
            .unwrap();
        app.world_mut()
            .entity_mut(enemy)
            .insert(Transform::default());
    }
    let first = detail_after(&mut app, 1);
    let mut second = moved(moved(first.clone(), "Enemy 1"), "Enemy 3");
    second.entities[0].hash = "e".repeat(16);
    second.entities[0].components[0].hash = "e".repeat(16);
    let difference = compare_details(&first, &second).unwrap();
    let plotted: Vec<String> = difference
        .plotted_entities(4)
        .into_iter()
        .map(|(_, label)| label)
        .collect();
    assert_eq!(plotted.len(), 2, "{plotted:?}");
    assert!(
        plotted[0].contains("`Enemy 1`") && plotted[1].contains("`Enemy 3`"),
        "{plotted:?}"
    );
    assert_eq!(difference.plotted_entities(1).len(), 1);
}
