//! Hazards of the data itself: platform widths and padding never reach a hash, a snapshot or a
//! comparison.

use std::mem::MaybeUninit;

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::determinism::play_replay;
use rusting_engine::prelude::*;
use rusting_engine::record::replay_compact::{from_compact, to_compact};
use rusting_engine::record::{StateHashReport, compare_reports};
use rusting_engine::state::{StateHasher, world_state_hash};

/// A counter declared with `usize` fields, as a game on a 64-bit machine writes it.
#[derive(Component, Clone, SimState)]
#[sim_state(name = "Tally")]
struct WideTally {
    count: usize,
    offset: isize,
    slots: Vec<usize>,
}

/// The same counter declared with fixed widths: what a 32-bit build's `usize` must hash like.
#[derive(Component, Clone, SimState)]
#[sim_state(name = "Tally")]
struct FixedTally {
    count: u64,
    offset: i64,
    slots: Vec<u64>,
}

fn hash_of(value: &impl SimState) -> u64 {
    let mut hasher = StateHasher::new();
    value.hash_state(&mut hasher);
    hasher.finish()
}

fn fields_of(value: &impl SimState) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    value.visit_fields("Tally", &mut |path, text| {
        fields.push((path.to_owned(), text))
    });
    fields
}

/// `usize` and `isize` fields hash, and compare to the field, exactly as `u64` and `i64` fields
/// of the same values (values a 32-bit target can hold too), so a declared type gives the same
/// bits on every width; the values past 2^32 that only a 64-bit target can hold hash as their
/// full 8 bytes. Fails if the building blocks feed `usize` at a platform's width (seen: the
/// hashes differ when `usize` fed 4 bytes, as a 32-bit target's native width would, against the
/// fixed 8 of `u64`).
#[test]
fn usize_fields_hash_alike_on_every_width() {
    for (count, offset) in [
        (0usize, 0isize),
        (7, -3),
        (u32::MAX as usize, i32::MIN as isize),
    ] {
        let wide = WideTally {
            count,
            offset,
            slots: vec![count, 1, 2],
        };
        let fixed = FixedTally {
            count: count as u64,
            offset: offset as i64,
            slots: vec![count as u64, 1, 2],
        };
        assert_eq!(hash_of(&wide), hash_of(&fixed), "{count} {offset}");
        assert_eq!(fields_of(&wide), fields_of(&fixed));
    }
    let mut beyond = StateHasher::new();
    beyond.u64(1 << 40);
    assert_eq!(hash_of(&(1usize << 40)), beyond.finish());
}

/// A `#[repr(C)]` component with padding after each small field.
#[derive(Component, Clone, Copy, SimState)]
#[repr(C)]
struct Padded {
    flag: u8,
    value: u32,
    short: u16,
    wide: f64,
}

/// A [`Padded`] whose padding bytes hold `garbage`: its memory filled first, then the fields
/// written one by one.
fn padded_with(garbage: u8) -> Padded {
    let mut slot = MaybeUninit::<Padded>::uninit();
    let place = slot.as_mut_ptr();
    // SAFETY: the whole value is written byte by byte, then every field is written, so it is
    // initialised when read; the padding keeps the garbage.
    unsafe {
        std::ptr::write_bytes(place.cast::<u8>(), garbage, size_of::<Padded>());
        std::ptr::addr_of_mut!((*place).flag).write(3);
        std::ptr::addr_of_mut!((*place).value).write(0x0102_0304);
        std::ptr::addr_of_mut!((*place).short).write(9);
        std::ptr::addr_of_mut!((*place).wide).write(2.5);
        slot.assume_init()
    }
}

/// The raw bytes of a value, padding included.
fn raw_bytes(value: &Padded) -> Vec<u8> {
    // SAFETY: reads the value's own bytes; padding bytes were written with garbage, so they are
    // initialised here.
    unsafe {
        std::slice::from_raw_parts(std::ptr::from_ref(value).cast::<u8>(), size_of::<Padded>())
            .to_vec()
    }
}

/// Two values of a padded `#[repr(C)]` type whose padding holds different garbage hash alike,
/// alone and in a world (and through a snapshot taken and restored), because the hash feeds
/// fields, never a value's memory. Fails if a type's hash reads its bytes (seen: the two values'
/// hashes differ when `Padded` hashed `raw_bytes` instead of its fields).
#[test]
fn padding_never_reaches_the_hash() {
    let (a, b) = (padded_with(0xaa), padded_with(0x55));
    assert_ne!(raw_bytes(&a), raw_bytes(&b), "the padding differs");
    assert_eq!(hash_of(&a), hash_of(&b));
    let world_hash = |value: Padded| {
        let mut app = App::new(RuntimeSettings::default());
        app.register_sim_component::<Padded>();
        app.world_mut().spawn((value, Transform::default()));
        app.setup().unwrap();
        let snapshot = app.snapshot().unwrap();
        let before = world_state_hash(app.world_mut());
        app.restore(&snapshot).unwrap();
        assert_eq!(world_state_hash(app.world_mut()), before);
        before
    };
    assert_eq!(world_hash(a), world_hash(b));
}

/// A unit's health, simulation state.
#[derive(Component, Clone, SimState)]
struct Health(u32);

/// How many times each fixed system saw a health change or a new health (simulation state).
#[derive(Resource, Clone, Default, SimState)]
struct Seen {
    changed_before: Vec<(u64, u64)>,
    changed_after: Vec<(u64, u64)>,
    added: Vec<(u64, u64)>,
}

/// Hurts one unit in three every other tick, and spawns a unit every fifth tick.
fn hurt(time: Res<FrameTime>, mut units: Query<(&SimId, &mut Health)>, mut commands: Commands) {
    let tick = time.fixed_tick + 1;
    if tick.is_multiple_of(2) {
        for (id, mut health) in &mut units {
            if (id.0 + tick).is_multiple_of(3) {
                health.0 = health.0.saturating_sub(1);
            }
        }
    }
    if tick.is_multiple_of(5) {
        commands.spawn((Health(10), Transform::default()));
    }
}

/// Counts the changed healths it sees: before [`hurt`] (the changes of the tick before) ...
fn count_before(time: Res<FrameTime>, changed: Query<(), Changed<Health>>, mut seen: ResMut<Seen>) {
    let n = changed.iter().count() as u64;
    seen.changed_before.push((time.fixed_tick + 1, n));
}

/// ... after it (this tick's), and the new ones.
fn count_after(
    time: Res<FrameTime>,
    changed: Query<(), Changed<Health>>,
    added: Query<(), Added<Health>>,
    mut seen: ResMut<Seen>,
) {
    let tick = time.fixed_tick + 1;
    seen.changed_after
        .push((tick, changed.iter().count() as u64));
    seen.added.push((tick, added.iter().count() as u64));
}

fn health_app() -> App {
    let mut app = App::new(RuntimeSettings {
        seed: 38,
        ..default()
    });
    app.register_sim_component::<Health>();
    app.world_mut().insert_resource(Seen::default());
    app.register_sim_resource::<Seen>();
    app.add_systems(
        FixedUpdate,
        (count_before, hurt, count_after)
            .chain()
            .after(SimSet::Tweens),
    );
    for _ in 0..6 {
        app.world_mut().spawn((Health(10), Transform::default()));
    }
    app
}

/// Fixed systems that count `Changed<Health>` and `Added<Health>` see the same entities in a
/// re-simulated tick as in the first run: a synctest (every tick rolled back 3 ticks and run
/// again) passes, and a run with a snapshot restored in the middle counts what a straight run
/// counts. Fails when a restore marks every component it writes as changed (seen: after a restore
/// to tick 12, `count_before` saw all eight units changed in tick 13, where the first run saw the
/// three that tick 12 hurt).
#[test]
fn change_detection_survives_a_rollback() {
    let mut straight = health_app();
    let hashes = tick_hashes(&mut straight, 30);
    let counted = straight.world().resource::<Seen>().clone();
    assert!(counted.changed_before.iter().any(|(_, n)| *n > 0));
    assert!(counted.changed_before.iter().any(|(_, n)| *n == 0));
    assert!(counted.added.iter().any(|(_, n)| *n > 0));

    let mut rolled = health_app();
    let mut first = tick_hashes(&mut rolled, 12);
    let snapshot = rolled.snapshot().unwrap();
    tick_hashes(&mut rolled, 7);
    rolled.restore(&snapshot).unwrap();
    first.extend(tick_hashes(&mut rolled, 18));
    assert_eq!(first, hashes, "the run with a rollback counted otherwise");

    let mut synctest = rusting_engine::determinism::SyncTest::new(health_app, 3);
    for tick in 0..30 {
        if let Err(error) = synctest.advance(RuntimeInput::default()) {
            panic!("tick {tick}: {error}");
        }
    }
}

fn tick_hashes(app: &mut App, ticks: u64) -> Vec<u64> {
    let step = app.fixed_step();
    (0..ticks)
        .map(|_| {
            app.update(step);
            app.world()
                .resource::<rusting_engine::state::StateHashes>()
                .cpu
                .back()
                .unwrap()
                .1
        })
        .collect()
}

/// A unit's armour as one build of a game declares it...
#[derive(Component, Clone, SimState)]
#[sim_state(name = "Armour")]
struct ArmourV1 {
    value: f32,
}

/// ... and as the next build does, the same name with a wider field.
#[derive(Component, Clone, SimState)]
#[sim_state(name = "Armour")]
struct ArmourV2 {
    value: f64,
}

fn armour_app<T: Component<Mutability = bevy::ecs::component::Mutable> + Clone + SimState>(
    armour: T,
) -> App {
    let mut app = App::new(RuntimeSettings {
        seed: 38,
        ..default()
    });
    app.register_sim_component::<T>();
    app.world_mut().spawn((armour, Transform::default()));
    app.setup().unwrap();
    app
}

/// A snapshot taken in a build whose `Armour.value` is an `f32` is refused by a build where it
/// is an `f64`, naming the field, both types and sizes, before anything is changed; a snapshot
/// of the same layout restores. A replay (JSON or compact) recorded by the first build is refused
/// by the second before its first tick, and their state-hash reports are told apart by layout. Fails when snapshots carry no layout (seen: the restore succeeded,
/// putting the old build's value on the entity without a word).
#[test]
fn a_snapshot_of_another_layout_is_refused_naming_the_field() {
    let mut old = armour_app(ArmourV1 { value: 1.0 });
    let snapshot = old.snapshot().unwrap();
    let mut new = armour_app(ArmourV2 { value: 1.0 });
    let before = world_state_hash(new.world_mut());
    let error = new.restore(&snapshot).unwrap_err().to_string();
    assert_eq!(
        error,
        "cannot restore the snapshot of tick 0 into this app: its state has another layout: \
         `Armour.value` is `f64` (8 bytes) in this game and `f32` (4 bytes) in the snapshot"
    );
    assert_eq!(world_state_hash(new.world_mut()), before, "nothing changed");
    let mut same = armour_app(ArmourV1 { value: 2.0 });
    same.restore(&snapshot).unwrap();
    assert_eq!(
        world_state_hash(same.world_mut()),
        world_state_hash(old.world_mut())
    );

    // A replay recorded by the old build: refused by the new one before its first tick (in both
    // of its forms), played by a build of the same layout.
    let mut recording = armour_app(ArmourV1 { value: 1.0 });
    recording.start_recording();
    tick_hashes(&mut recording, 5);
    let replay = recording.finish_recording().unwrap().unwrap();
    let compact = from_compact(&to_compact(&replay).unwrap(), "mem.rply".as_ref()).unwrap();
    assert_eq!(compact, replay.clone().with_short_hashes());
    let error = play_replay(&compact, &mut armour_app(ArmourV2 { value: 1.0 }))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "the replay was recorded by a game whose simulation state has another layout: \
         `Armour.value` is `f64` (8 bytes) in this game and `f32` (4 bytes) in the replay"
    );
    play_replay(&replay, &mut armour_app(ArmourV1 { value: 1.0 })).unwrap();

    // State-hash reports of the two builds: compared by layout, not tick by tick.
    let report = |app: &mut App| StateHashReport::capture(app.world_mut(), &[(1, 1)]);
    let difference = compare_reports(&report(&mut old), &report(&mut new)).unwrap();
    assert_eq!(difference.tick, None);
    assert_eq!(
        difference.layout.as_deref(),
        Some(
            "`Armour.value` is `f32` (4 bytes) in the first report and `f64` (8 bytes) in the \
             second report"
        )
    );
}
