//! The order and clock rules: `LINT_HASH_ITERATION`, `LINT_WALL_CLOCK`,
//! `LINT_PROCESS_RANDOMNESS`, `LINT_FRAME_TIME` and `LINT_PARALLEL_FLOAT_REDUCTION`, each with
//! code that must be caught and code that must not.

mod common;

use common::{codes, codes_at, game, lint};

fn at(code: &str, line: usize) -> (String, usize) {
    (code.to_owned(), line)
}

/// Fails if iterating a hash collection declared as a parameter, a local, a field or a type alias
/// goes unreported.
#[test]
fn hash_iteration_is_caught() {
    let source = game(
        "type Lookup = bevy::platform::collections::HashSet<u32>;
#[derive(Resource)] struct Scores { table: HashMap<Entity, f32> }
fn fixed_step(scores: Res<Scores>, mut seen: Local<Lookup>) {
    let mut total = 0.0;
    for (_, s) in &scores.table { total += s; }
    let ids: HashMap<u32, Entity> = HashMap::new();
    let firsts: Vec<_> = ids.keys().collect();
    let order = HashSet::with_capacity(4);
    for id in order.iter() {}
    seen.drain();
}
fn frame_step() {}",
    );
    assert_eq!(
        codes_at(&source),
        [
            at("LINT_HASH_ITERATION", 13),
            at("LINT_HASH_ITERATION", 15),
            at("LINT_HASH_ITERATION", 17),
            at("LINT_HASH_ITERATION", 18),
        ]
    );
}

/// Fails if ordered collections, lookups, or order-free uses of a hash collection are reported.
#[test]
fn ordered_and_order_free_uses_are_not_caught() {
    let source = game(
        "fn fixed_step(tree: Res<Tree>, map: Local<HashMap<u32, f32>>) {
    let sorted: BTreeMap<u32, f32> = BTreeMap::new();
    for (k, v) in &sorted {}
    let _ = map.get(&3);
    let _ = map.iter().count();
    let _ = map.values().any(|v| *v > 1.0);
    let keys = map.keys().copied().collect::<BTreeSet<u32>>();
    let _ = tree.0.iter().sum::<f32>();
}
fn frame_step(map: Local<HashMap<u32, f32>>) { for v in map.values() {} }",
    );
    assert!(codes(&source).is_empty(), "{:?}", lint(&source));
}

/// Fails if wall clock reads go unreported, imported names included.
#[test]
fn wall_clock_reads_are_caught() {
    let source = game(
        "use std::time::{Instant, SystemTime, UNIX_EPOCH};
fn fixed_step(started: Res<Started>, since: Local<Option<Instant>>) {
    let now = Instant::now();
    let secs = SystemTime::now().duration_since(UNIX_EPOCH);
    let begun: Instant = started.0;
    let _ = begun.elapsed();
}
fn frame_step() {}",
    );
    assert_eq!(
        codes_at(&source),
        [
            at("LINT_WALL_CLOCK", 11),
            at("LINT_WALL_CLOCK", 12),
            at("LINT_WALL_CLOCK", 12),
            at("LINT_WALL_CLOCK", 14),
        ]
    );
}

/// An `Instant` kept in a `Local<Option<Instant>>` and read through `get_or_insert_with`, directly
/// or through a `let`, is a wall clock read like `Instant::now()` (which the `Instant::now` path
/// there is caught as too). Fails if `Option`'s accessors stop passing the kind through, or a
/// `let` binding stops inferring its kind from a method chain on a parameter.
#[test]
fn an_instant_kept_in_a_local_is_caught() {
    let source = game(
        "use std::time::Instant;
fn fixed_step(mut started: Local<Option<Instant>>) {
    if started.get_or_insert_with(Instant::now).elapsed().as_secs() > 2 {}
    let since = *started.get_or_insert_with(Instant::now);
    let _ = since.elapsed();
}
fn frame_step() {}",
    );
    assert_eq!(
        codes_at(&source),
        [
            at("LINT_WALL_CLOCK", 11),
            at("LINT_WALL_CLOCK", 11),
            at("LINT_WALL_CLOCK", 12),
            at("LINT_WALL_CLOCK", 13),
        ]
    );
}

/// The finding names the collection's type, not the field or function it came from: a field
/// `gusts: HashMap<..>` is "a `HashMap`", and so is a function returning one. Fails if the kind
/// carries the field's or the function's name again.
#[test]
fn hash_iteration_names_the_collection_type() {
    let source = game(
        "#[derive(Resource)] struct Weather { gusts: HashMap<u32, f32> }
fn spread() -> HashSet<u32> { HashSet::new() }
fn fixed_step(weather: Res<Weather>) {
    for (_, g) in &weather.gusts {}
    for s in spread() {}
}
fn frame_step() {}",
    );
    let messages: Vec<String> = lint(&source).iter().map(|f| f.message.clone()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].starts_with("this `for` loop visits a `HashMap` in hash order"),
        "{messages:?}"
    );
    assert!(
        messages[1].starts_with("this `for` loop visits a `HashSet` in hash order"),
        "{messages:?}"
    );
}

/// Fails if durations or clocks in presentation code are reported.
#[test]
fn durations_and_frame_clocks_are_not_caught() {
    let source = game(
        "fn fixed_step(time: Res<FrameTime>) { let _ = Duration::from_secs_f32(time.fixed_delta); }
fn frame_step() { let _ = std::time::Instant::now(); }",
    );
    assert!(codes(&source).is_empty());
}

/// Fails if process-seeded randomness goes unreported, imported names included.
#[test]
fn process_randomness_is_caught() {
    let source = game(
        "use rand::random;
fn fixed_step(mut commands: Commands) {
    let mut rng = rand::thread_rng();
    let x: f32 = random();
    let id = uuid::Uuid::new_v4();
    let y = rand::rng();
}
fn frame_step() {}",
    );
    assert_eq!(
        codes_at(&source),
        [
            at("LINT_PROCESS_RANDOMNESS", 11),
            at("LINT_PROCESS_RANDOMNESS", 12),
            at("LINT_PROCESS_RANDOMNESS", 13),
            at("LINT_PROCESS_RANDOMNESS", 14),
        ]
    );
    assert!(lint(&source)[0].message.contains("RandomSeed::value"));
}

/// Fails if the engine's counter-based randomness, or randomness in presentation, is reported.
#[test]
fn seeded_randomness_is_not_caught() {
    let source = game(
        "fn fixed_step(seed: Res<RandomSeed>, time: Res<FrameTime>) {
    let _ = seed.value(time.fixed_tick, RandomSeed::stream(7, 1));
}
fn frame_step() { let _ = rand::random::<f32>(); }",
    );
    assert!(codes(&source).is_empty());
}

/// Fails if the frame clock read in fixed code goes unreported: bevy's `Time` as an input or a
/// resource, `delta_secs`, and `FrameTime`'s presentation fields.
#[test]
fn frame_time_in_fixed_code_is_caught() {
    let source = game(
        "fn fixed_step(time: Res<Time>, real: Res<Time<Real>>, frame: Res<FrameTime>, world: &World) {
    let dt = time.delta_secs();
    let step = frame.delta + frame.elapsed as f32;
    let t = world.resource::<Time<Virtual>>();
    let late = world.resource::<FrameTime>().real_delta;
}
fn frame_step() {}",
    );
    let found = lint(&source);
    let at_columns: Vec<(String, usize, usize)> = found
        .iter()
        .map(|f| (f.code.to_string(), f.line, f.column))
        .collect();
    let expected = [
        (9, 21),
        (9, 38),
        (10, 19),
        (11, 22),
        (11, 36),
        (12, 19),
        (13, 46),
    ];
    assert_eq!(
        at_columns,
        expected
            .iter()
            .map(|&(line, column)| ("LINT_FRAME_TIME".to_owned(), line, column))
            .collect::<Vec<_>>()
    );
    assert!(found[0].message.contains("fixed_delta"), "{}", found[0]);
    assert!(found[4].message.contains("fixed_elapsed()"), "{}", found[4]);
}

/// Fails if the fixed step, or the frame clock in an `Update` system, is reported.
#[test]
fn the_fixed_step_is_not_caught() {
    let source = game(
        "fn fixed_step(time: Res<FrameTime>) { let _ = time.fixed_delta * time.fixed_tick as f32 + time.fixed_elapsed(); }
fn frame_step(time: Res<Time>, frame: Res<FrameTime>) { let _ = time.delta_secs() + frame.delta; }",
    );
    assert!(codes(&source).is_empty());
}

/// Fails if float reductions over rayon parallel iterators go unreported.
#[test]
fn parallel_float_reductions_are_caught() {
    let source = game(
        "fn fixed_step(bodies: Res<Bodies>) {
    let energy: f32 = bodies.0.par_iter().map(|b| b.mass * b.speed).sum();
    let most = bodies.0.par_iter().map(|b| b.mass).reduce(|| 0.0, f32::max);
    let folded = (0..8).into_par_iter().fold(|| 0.0f64, |a, i| a + i as f64);
}
fn frame_step() {}",
    );
    assert_eq!(
        codes_at(&source),
        [
            at("LINT_PARALLEL_FLOAT_REDUCTION", 10),
            at("LINT_PARALLEL_FLOAT_REDUCTION", 11),
            at("LINT_PARALLEL_FLOAT_REDUCTION", 12),
        ]
    );
}

/// Fails if provably integer reductions, ordered collects or sequential sums are reported.
#[test]
fn integer_and_ordered_reductions_are_not_caught() {
    let source = game(
        "fn fixed_step(bodies: Res<Bodies>) {
    let count: u64 = bodies.0.par_iter().map(|b| b.flags).sum();
    let bits = bodies.0.par_iter().map(|b| b.id).sum::<u32>();
    let moved = bodies.0.par_iter().map(|b| (b.speed > 0.0) as u32).reduce(|| 0, |a, b| a + b);
    let in_order: Vec<f32> = bodies.0.par_iter().map(|b| b.mass).collect();
    let total: f32 = in_order.iter().sum();
    let again = bodies.0.par_iter().map(|b| b.mass).collect::<Vec<_>>().into_iter().sum::<f32>();
}
fn frame_step(bodies: Res<Bodies>) { let _: f32 = bodies.0.par_iter().map(|b| b.mass).sum(); }",
    );
    assert!(codes(&source).is_empty(), "{:?}", lint(&source));
}

/// Fails if a crate's own type called `Time` is taken for bevy's frame clock.
#[test]
fn a_crates_own_time_type_is_not_caught() {
    let source = game(
        "#[derive(Resource)] struct Time { tick: u64 }
fn fixed_step(time: Res<Time>) { let _ = time.tick; }
fn frame_step() {}",
    );
    assert!(codes(&source).is_empty());
}

/// bevy's `TimePlugin`, alone or inside `MinimalPlugins`/`DefaultPlugins`, is caught wherever it
/// is added; a plugin group with `.disable::<TimePlugin>()` is not. Fails if the check only reads
/// fixed code (plugins are added in `build` and `main`) or ignores the disable.
#[test]
fn a_second_fixed_loop_is_caught() {
    let source = "use bevy::prelude::*;
use bevy::time::TimePlugin;
fn main() {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins);
    app.add_plugins(TimePlugin);
    app.add_plugins(DefaultPlugins.build().disable::<TimePlugin>());
    app.add_plugins(bevy::MinimalPlugins.build().disable::<bevy::time::TimePlugin>().add(TimePlugin));
}
";
    assert_eq!(
        codes_at(source),
        [
            at("LINT_SECOND_FIXED_LOOP", 5),
            at("LINT_SECOND_FIXED_LOOP", 6),
            at("LINT_SECOND_FIXED_LOOP", 8),
        ]
    );
}

/// Values taken from addresses are caught: pointer casts to integers, `.addr()` and `{:p}`; a
/// plain integer cast is not. Fails if the rule stops looking at casts of pointers or at format
/// strings.
#[test]
fn pointer_addresses_are_caught() {
    let source = game(
        "fn fixed_step(items: Res<Items>) {
    let boxed = Box::new(3u32);
    let a = &*boxed as *const u32 as usize;
    let b = items.list.as_ptr() as u64;
    let c = (&*boxed as *const u32).addr();
    let label = format!(\"{:p}\", &boxed);
    let fine = 3u8 as usize;
}
fn frame_step() {}",
    );
    assert_eq!(
        codes_at(&source),
        [
            at("LINT_POINTER_ADDRESS", 11),
            at("LINT_POINTER_ADDRESS", 12),
            at("LINT_POINTER_ADDRESS", 13),
            at("LINT_POINTER_ADDRESS", 14),
        ]
    );
}

/// Iterating a hash collection that a crate function returns is caught, whether the function is
/// free or a method. Fails if the lint only knows a map's type from a declaration in the body.
#[test]
fn hash_iteration_through_a_return_type_is_caught() {
    let source = game(
        "struct Board;
impl Board { fn tallies(&self) -> HashMap<u32, f32> { HashMap::new() } }
fn lookup() -> std::collections::HashSet<u32> { Default::default() }
fn fixed_step(board: Res<Board>) {
    for (k, v) in board.tallies() {}
    let found: Vec<u32> = lookup().into_iter().collect();
    let n = lookup().iter().count();
}
fn frame_step() {}",
    );
    assert_eq!(
        codes_at(&source),
        [at("LINT_HASH_ITERATION", 13), at("LINT_HASH_ITERATION", 14)]
    );
}

/// Writes to a thread's floating-point control register are caught anywhere in the crate (a
/// write in `main` changes the simulation thread as much as one in a fixed system): the SSE
/// intrinsic, the flush-to-zero macro, C's `fesetround` and `asm!` loading MXCSR or writing
/// FPCR; reading it is not. Fails if the check reads only fixed code or only calls.
#[test]
fn writes_to_the_float_control_register_are_caught() {
    let source = "use std::arch::x86_64::*;
fn main() {
    unsafe { _mm_setcsr(_mm_getcsr() | 0x8040) };
    unsafe { _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON) };
    unsafe { libc::fesetround(0xc00) };
    let csr: u32 = 0;
    unsafe { std::arch::asm!(\"ldmxcsr [{}]\", in(reg) &csr) };
    unsafe { core::arch::asm!(\"msr fpcr, {0}\", in(reg) 0u64) };
    unsafe { std::arch::asm!(\"stmxcsr [{}]\", in(reg) &csr) };
}
";
    assert_eq!(
        codes_at(source),
        [
            at("LINT_FLOAT_CONTROL", 3),
            at("LINT_FLOAT_CONTROL", 4),
            at("LINT_FLOAT_CONTROL", 5),
            at("LINT_FLOAT_CONTROL", 7),
            at("LINT_FLOAT_CONTROL", 8),
        ]
    );
}
