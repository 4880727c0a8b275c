//! The CPU solver's bits depend on the scene alone: not on the thread count, and its broad phase
//! finds exactly the pairs a brute-force test finds, in body order, whatever axis it sweeps.

use bevy::math::{Quat, Vec3};
use rusting_engine::physics::cpu::broad_phase::{self, BroadPhase, Scope};
use rusting_engine::physics::cpu::{self, SolverBody, StepParams, StepScratch};
use rusting_engine::physics::{
    BodyKind, Collider, CollisionEvent, ContactReport, PhysicsSettings, PhysicsWorld,
};

#[path = "support/splitmix.rs"]
mod splitmix;
use splitmix::unit;

#[path = "support/solver_bodies.rs"]
mod solver_bodies;
use solver_bodies::{bits, body};

/// A ground and a heap of spheres, boxes and capsules falling onto it, sorted by `SimId`.
fn heap(count: u32) -> Vec<SolverBody> {
    let mut bodies = vec![body(
        0,
        BodyKind::Static,
        Vec3::ZERO,
        Collider::half_space(Vec3::Y),
    )];
    for i in 1..=count {
        let s = i as u64 * 7;
        let at = Vec3::new(
            unit(s) * 6.0 - 3.0,
            0.6 + (i / 16) as f32 * 1.1 + unit(s + 1) * 0.2,
            unit(s + 2) * 6.0 - 3.0,
        );
        let collider = match i % 3 {
            0 => Collider::sphere(0.3 + unit(s + 3) * 0.2),
            1 => Collider::cuboid(Vec3::new(0.3, 0.25, 0.4)),
            _ => Collider::capsule(0.2, 0.25),
        };
        let mut b = body(i, BodyKind::Dynamic, at, collider.with_restitution(0.2));
        b.rotation = Quat::from_xyzw(unit(s + 4), unit(s + 5), unit(s + 6), 1.0).normalize();
        b.angular_velocity = Vec3::new(unit(s + 7), 0.0, unit(s + 8));
        bodies.push(b);
    }
    bodies.sort_by_key(|b| b.sim_id);
    bodies
}

/// What a tick leaves besides the bodies: the solver's stored state, the events and the reports.
type TickRecord = (PhysicsWorld, Vec<CollisionEvent>, Vec<ContactReport>);

/// Steps a heap of `count` bodies for `ticks` ticks in a pool of `threads`: every tick's bits,
/// the most batches a colour solved on several threads, the last tick's scratch, and what every
/// tick left besides the bodies.
fn run_in_pool(
    threads: usize,
    count: u32,
    ticks: u64,
) -> (Vec<Vec<u32>>, usize, StepScratch, Vec<TickRecord>) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut bodies = heap(count);
        let mut world = PhysicsWorld::default();
        let mut scratch = StepScratch::default();
        let mut trace = Vec::new();
        let mut records = Vec::new();
        let mut parallel = 0;
        for tick in 0..ticks {
            let params = StepParams { tick, ..params() };
            cpu::step(&params, &mut bodies, &mut [], &mut world, &mut scratch);
            parallel = parallel.max(scratch.solve.batches.parallel_batches());
            trace.push(bits(&bodies));
            records.push((
                world.clone(),
                scratch.events.clone(),
                scratch.contacts.clone(),
            ));
        }
        (trace, parallel, scratch, records)
    })
}

/// 1000 mixed bodies falling into a heap give the same bits on every tick with one thread and with
/// four, with some colours of the contact solve large enough to be spread over threads. Fails if a
/// parallel stage's results are gathered in the order threads finish (for example pushing
/// manifolds into a shared `Mutex<Vec<_>>` from `par_iter().for_each`), or if the colouring lets
/// two manifolds of one colour share a moving body (with a colouring that forgot to mark the
/// second body's colour as taken, the batches raced on its velocity and tick 3 differed; now the
/// span check stops the debug build first: "two lanes of colour span 0 share a moving body").
#[test]
fn cpu_solver_bits_do_not_depend_on_thread_count() {
    let (one, ..) = run_in_pool(1, 1000, 90);
    let (four, parallel, scratch, _) = run_in_pool(4, 1000, 90);
    assert!(
        scratch.manifolds.len() > 300,
        "too few pairs to spread over threads"
    );
    assert!(
        parallel > 0,
        "no colour was large enough to solve on several threads"
    );
    for (tick, (a, b)) in one.iter().zip(&four).enumerate() {
        assert!(a == b, "tick {tick} differs between one and four threads");
    }
    assert_ne!(one[0], one[89], "nothing moved");
}

/// A heap of 4,500 bodies (enough that the broad phase sweeps its strips and sorts its pairs, the
/// substeps work out gravity, moves and rotations, the bodies' mass properties are worked out, the
/// batches filled across colour groups and the points' results listed, all on the pool's threads,
/// and the colouring, the warm starts' ranges, the sleep counters and the events' halves are built
/// side by side there) gives the same bits on every tick with one thread and with two, and leaves
/// the same stored state, events and reports. Fails if a body's substep or bounds were worked out
/// from another body's values (seen: with each body's substep given the next body's velocity, tick
/// 0 differs), if the threads' lists of pairs were joined in the order the threads finish without
/// the sort that follows, if the sleep counters taken out of the world while the events run beside
/// them are not put back (seen: tick 0's stored state differs), or if a part of the results is read
/// from another part's places in the lanes (seen: with the second half's manifolds looked up as if
/// they began the list, tick 1 differs), or if a part of the batches is filled from another part's
/// colour groups (seen: with the groups cut one span early, the span check stops the debug build:
/// "two lanes of colour span .. share a moving body").
#[test]
fn a_large_heap_has_the_same_bits_on_two_threads_as_on_one() {
    let (one, _, scratch, one_records) = run_in_pool(1, 4500, 20);
    let (two, _, _, two_records) = run_in_pool(2, 4500, 20);
    let pairs = scratch.broad.pairs.len();
    assert!(
        pairs > 2048,
        "{pairs} pairs: too few for the strips and the sort to matter"
    );
    let manifolds = scratch.manifolds.len();
    assert!(
        manifolds > 2048,
        "{manifolds} manifolds: too few for their results to be listed in parts"
    );
    for (tick, (a, b)) in one.iter().zip(&two).enumerate() {
        assert!(a == b, "tick {tick} differs between one and two threads");
    }
    let (last, _, reports) = one_records.last().unwrap();
    assert!(
        !last.sleep_counters.is_empty() && !last.touching.is_empty() && !reports.is_empty(),
        "the heap left no counters, touching pairs or reports to compare"
    );
    assert!(
        one_records.iter().any(|(_, events, _)| !events.is_empty()),
        "the heap raised no events to compare"
    );
    for (tick, (a, b)) in one_records.iter().zip(&two_records).enumerate() {
        assert!(
            a == b,
            "tick {tick}'s stored state, events or reports differ between one and two threads"
        );
    }
}

/// With 4,096 boxes or more and several threads, the broad phase sweeps groups of strips on the
/// pool's threads: it finds exactly the pairs, in the same order, with the same number of box
/// tests, as on one thread, on a tall heap (a few strips) and on a wide layer (many). Fails if a
/// group's entries are cut at the wrong place (seen: with the cut measured from the start of the
/// whole list instead of the group's own entries, `mid > len` on both scenes).
#[test]
fn the_broad_phase_finds_the_same_pairs_on_four_threads_as_on_one() {
    let params = params();
    let mut wide = heap(6400);
    for (k, b) in wide.iter_mut().enumerate().skip(1) {
        let s = k as u64 * 13;
        b.position = Vec3::new(
            (k % 80) as f32 * 0.9 + unit(s) * 0.2,
            0.5 + unit(s + 1) * 0.3,
            (k / 80) as f32 * 0.9 + unit(s + 2) * 0.2,
        );
    }
    for (name, bodies) in [("tall heap", heap(5000)), ("wide layer", wide)] {
        let find = |threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut broad = BroadPhase::default();
                broad_phase::find_pairs(&params, &bodies, &mut broad);
                (broad.pairs, broad.tests)
            })
        };
        let (one, four) = (find(1), find(4));
        assert!(one.0.len() > 2000, "{name}: {} pairs", one.0.len());
        assert_eq!(one, four, "{name}");
    }
}

/// Every pair the broad phase may report, by testing every pair.
fn brute_force(params: &StepParams, bodies: &[SolverBody]) -> Vec<(u32, u32)> {
    let margin = |b: &SolverBody| {
        params.settings.speculative_distance + b.linear_velocity.length() * params.dt
    };
    let mut pairs = Vec::new();
    for i in 0..bodies.len() {
        for j in i + 1..bodies.len() {
            let (a, b) = (&bodies[i], &bodies[j]);
            let plane = |p: &SolverBody| {
                matches!(
                    p.collider.shape,
                    rusting_engine::physics::Shape::HalfSpace { .. }
                )
            };
            let hit = match (plane(a), plane(b)) {
                (true, true) => false,
                (false, false) => broad_phase::shape_bounds(a, margin(a), &params.meshes)
                    .overlaps(&broad_phase::shape_bounds(b, margin(b), &params.meshes)),
                (true, false) | (false, true) => {
                    let (p, other) = if plane(a) { (a, b) } else { (b, a) };
                    let bounds = broad_phase::shape_bounds(other, margin(other), &params.meshes);
                    bounds.min.y <= p.position.y
                }
            };
            if hit && (a.kind == BodyKind::Dynamic || b.kind == BodyKind::Dynamic) {
                pairs.push((i as u32, j as u32));
            }
        }
    }
    pairs
}

fn params() -> StepParams {
    StepParams {
        dt: 1.0 / 60.0,
        tick: 0,
        settings: PhysicsSettings::default(),
        meshes: Default::default(),
    }
}

/// On random heaps of every shape, sweep and prune reports exactly the pairs that testing every
/// pair finds, in the same order. Fails if the sweep stops a box's scan before the box's end (seen
/// with the scan cut at its start plus half a metre), if pairs are left in sweep order instead
/// of body order, or if a pair whose overlap spans two strips is kept in both (seen with the
/// "strip holding the lower edge of the overlap" rule dropped: (18, 23) twice on seed 0).
#[test]
fn broad_phase_finds_the_same_pairs_as_testing_every_pair() {
    let params = params();
    for seed in 0..20u64 {
        let mut bodies = heap(120);
        for (k, b) in bodies.iter_mut().enumerate().skip(1) {
            let s = seed * 1000 + k as u64;
            b.position += Vec3::new(unit(s) - 0.5, unit(s + 1) * 2.0 - 1.0, unit(s + 2) - 0.5);
            b.linear_velocity = Vec3::new(unit(s + 3) * 20.0 - 10.0, 0.0, 0.0);
        }
        let mut broad = BroadPhase::default();
        broad_phase::find_pairs(&params, &bodies, &mut broad);
        let expected = brute_force(&params, &bodies);
        assert!(
            expected.len() > 100,
            "seed {seed}: too few overlaps to mean anything"
        );
        assert_eq!(broad.pairs, expected, "seed {seed}");
    }
}

/// On random heaps where most bodies sleep, a few are awake and some kinematic bodies move, the
/// broad phase over the bodies near anything that moves (`Scope::NearMovers`, what every tick
/// runs first) finds exactly the pairs with a moving body that the sweep of every body finds, and
/// only pairs the sweep of every body finds; with nothing moving it finds none. Fails if a body at
/// rest inside the movers' box is left out of the sweep (seen with the box test dropped: 33 of 39 pairs
/// missing on seed 0) or if the box is taken around the sleeping bodies instead of the movers.
#[test]
fn the_sweep_near_movers_finds_every_pair_with_a_moving_body() {
    let params = params();
    let moving = |b: &SolverBody| b.is_awake_dynamic() || b.is_moving_kinematic();
    for seed in 0..20u64 {
        let mut bodies = heap(160);
        for (k, b) in bodies.iter_mut().enumerate().skip(1) {
            let s = seed * 1000 + k as u64;
            b.position += Vec3::new(unit(s) * 8.0 - 4.0, unit(s + 1) * 2.0 - 1.0, unit(s + 2));
            match (s * 7 + seed) % 10 {
                0 => b.linear_velocity = Vec3::new(unit(s + 3) * 6.0 - 3.0, 0.0, 0.0),
                1 => {
                    b.kind = BodyKind::Kinematic;
                    b.linear_velocity = Vec3::new(0.0, 0.0, unit(s + 4) * 4.0 - 2.0);
                }
                2 => b.kind = BodyKind::Kinematic,
                _ => b.sleeping = b.kind == BodyKind::Dynamic,
            }
        }
        let mut all = BroadPhase::default();
        broad_phase::find_pairs_in(&params, &bodies, Scope::All, &mut all);
        let mut near = BroadPhase::default();
        broad_phase::find_pairs_in(&params, &bodies, Scope::NearMovers, &mut near);
        let with_mover: Vec<(u32, u32)> = all
            .pairs
            .iter()
            .copied()
            .filter(|&(a, b)| moving(&bodies[a as usize]) || moving(&bodies[b as usize]))
            .collect();
        assert!(
            with_mover.len() > 20,
            "seed {seed}: too few pairs with a mover"
        );
        let near_with_mover: Vec<(u32, u32)> = near
            .pairs
            .iter()
            .copied()
            .filter(|&(a, b)| moving(&bodies[a as usize]) || moving(&bodies[b as usize]))
            .collect();
        assert_eq!(near_with_mover, with_mover, "seed {seed}");
        assert!(
            near.pairs
                .iter()
                .all(|p| all.pairs.binary_search(p).is_ok()),
            "seed {seed}: a pair the sweep of every body does not find"
        );
        for b in bodies.iter_mut() {
            b.linear_velocity = Vec3::ZERO;
            b.angular_velocity = Vec3::ZERO;
            b.sleeping = b.kind == BodyKind::Dynamic;
        }
        broad_phase::find_pairs_in(&params, &bodies, Scope::NearMovers, &mut near);
        assert!(
            near.pairs.is_empty(),
            "seed {seed}: pairs with nothing moving"
        );
    }
}

/// A body at rest gets its exact bounds only when a box around it, wide enough for any turn of its
/// shape, reaches the movers' box. A box turned 45 degrees, asleep beside a moving ball, reaches
/// it with its corner only (its unturned half extent falls short), and a capsule lying along X
/// reaches another the same way: both pairs must be found, and a kinematic ground that may wake
/// the sleeping bodies pairs with them as a fixed one never does. Fails if the wide box takes the
/// largest half extent instead of their sum (seen: the box's pair with the ball missing), or if a
/// kinematic plane is tested against the movers only, as a fixed one is (seen: its pairs with
/// the sleeping bodies missing).
#[test]
fn a_body_at_rest_reaching_a_mover_only_by_a_turned_corner_is_paired() {
    let params = params();
    let mut ground = body(
        0,
        BodyKind::Kinematic,
        Vec3::ZERO,
        Collider::half_space(Vec3::Y),
    );
    ground.position.y = 0.1;
    let mut turned = body(
        1,
        BodyKind::Dynamic,
        Vec3::new(0.0, 2.0, 0.0),
        Collider::cuboid(Vec3::splat(0.5)),
    );
    turned.rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
    turned.sleeping = true;
    // The corner reaches 0.707 m from the centre; the ball's box starts 0.64 m from it.
    let mut ball = body(
        2,
        BodyKind::Dynamic,
        Vec3::new(0.64 + 0.1, 2.0, 0.0),
        Collider::sphere(0.1),
    );
    ball.linear_velocity = Vec3::new(-0.01, 0.0, 0.0);
    let mut lying = body(
        3,
        BodyKind::Dynamic,
        Vec3::new(10.0, 0.3, 0.0),
        Collider::capsule(1.0, 0.25),
    );
    lying.rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    lying.sleeping = true;
    let mut pusher = body(
        4,
        BodyKind::Dynamic,
        Vec3::new(11.35, 0.3, 0.0),
        Collider::sphere(0.1),
    );
    pusher.linear_velocity = Vec3::new(-0.01, 0.0, 0.0);
    let bodies = [ground, turned, ball, lying, pusher];
    let mut all = BroadPhase::default();
    broad_phase::find_pairs_in(&params, &bodies, Scope::All, &mut all);
    let mut near = BroadPhase::default();
    broad_phase::find_pairs_in(&params, &bodies, Scope::NearMovers, &mut near);
    assert_eq!(all.pairs, [(0, 3), (1, 2), (3, 4)]);
    assert_eq!(near.pairs, all.pairs);
}

/// A tick in which nothing moves (every dynamic body asleep, a kinematic body without velocity)
/// skips the broad and narrow phases and the solve, and must leave exactly what the full step
/// leaves: the same bits in every body (a kinematic body's `-0.0` coordinate becomes `+0.0` in
/// both, as the substeps add its zero velocity), the same stored contacts, sleep counters, events
/// and event ids, with a sleeping body removed. The full step is forced by one more body, awake
/// and far away. Fails if the tick at rest leaves the kinematic body where it was (seen: its
/// `x` kept the bits of `-0.0`) or keeps what was stored for the removed body (seen: no `Ended`
/// event).
#[test]
fn a_tick_at_rest_leaves_what_a_full_tick_leaves() {
    let mut bodies = vec![body(
        0,
        BodyKind::Static,
        Vec3::ZERO,
        Collider::half_space(Vec3::Y),
    )];
    for i in 1..=32u32 {
        let (x, z, layer) = ((i - 1) % 4, (i - 1) / 4 % 4, (i - 1) / 16);
        let at = Vec3::new(x as f32 * 1.1, 0.5 + layer as f32, z as f32 * 1.1);
        let cube = Collider::cuboid(Vec3::splat(0.5));
        bodies.push(body(i, BodyKind::Dynamic, at, cube));
    }
    let still = body(500, BodyKind::Kinematic, Vec3::new(0.0, 4.0, 30.0), {
        Collider::sphere(0.5)
    });
    bodies.push(still);
    let mut world = PhysicsWorld::default();
    let mut scratch = StepScratch::default();
    let params = |tick| StepParams { tick, ..params() };
    let mut tick = 0;
    while bodies
        .iter()
        .any(|b| b.kind == BodyKind::Dynamic && !b.sleeping)
    {
        cpu::step(
            &params(tick),
            &mut bodies,
            &mut [],
            &mut world,
            &mut scratch,
        );
        tick += 1;
        assert!(tick < 2000, "the heap never fell asleep");
    }
    assert!(!world.touching.is_empty() && !world.warm_starts.is_empty());
    // A sleeping body resting on others goes, and the kinematic one sits at `x = -0.0`.
    let gone = world.touching.last().unwrap().b;
    bodies.retain(|b| b.sim_id != gone);
    bodies.last_mut().unwrap().position.x = -0.0;
    let mut with_mover = bodies.clone();
    let mut far = body(900, BodyKind::Dynamic, Vec3::new(1000.0, 500.0, 0.0), {
        Collider::sphere(0.5)
    });
    far.linear_velocity = Vec3::new(0.0, -1.0, 0.0);
    with_mover.push(far);
    let (mut rest_world, mut full_world) = (world.clone(), world);
    let mut full_scratch = StepScratch::default();
    cpu::step(
        &params(tick),
        &mut bodies,
        &mut [],
        &mut rest_world,
        &mut scratch,
    );
    let rest_events = scratch.events.clone();
    cpu::step(
        &params(tick),
        &mut with_mover,
        &mut [],
        &mut full_world,
        &mut full_scratch,
    );
    assert_eq!(bits(&bodies), bits(&with_mover[..bodies.len()]));
    assert_eq!(
        bodies.last().unwrap().position.x.to_bits(),
        0.0f32.to_bits()
    );
    full_world.sleep_counters.retain(|(id, _)| id.0 != 900);
    assert_eq!(rest_world, full_world);
    assert!(
        !rest_events.is_empty(),
        "removing a resting body ended nothing"
    );
    assert_eq!(rest_events, full_scratch.events);
    assert!(
        rest_world
            .touching
            .iter()
            .all(|t| t.b != gone && t.a != gone)
    );
}

/// A tall column is swept along its length: the broad phase picks the Y axis, tests only about
/// one neighbour per box instead of every pair, and reports the same pairs in the same order as a
/// row of the same boxes lying along X. Fails if the axis choice ignores the spread (sweeping X
/// here tests every pair) or if pair order follows the sweep.
#[test]
fn broad_phase_prunes_a_tall_column_without_changing_pair_order() {
    let params = params();
    let n = 400u32;
    let make = |along: Vec3| -> Vec<SolverBody> {
        let mut bodies: Vec<SolverBody> = (0..n)
            .map(|i| {
                body(
                    i,
                    BodyKind::Dynamic,
                    along * (i as f32),
                    Collider::cuboid(Vec3::splat(0.5)),
                )
            })
            .collect();
        bodies.sort_by_key(|b| b.sim_id);
        bodies
    };
    let column = make(Vec3::Y);
    let row = make(Vec3::X);
    let mut broad = BroadPhase::default();
    broad_phase::find_pairs(&params, &column, &mut broad);
    assert_eq!(broad.axis, 1);
    assert!(
        broad.tests < 3 * n as usize,
        "{} overlap tests for {n} boxes",
        broad.tests
    );
    let column_pairs = broad.pairs.clone();
    assert_eq!(column_pairs, brute_force(&params, &column));
    assert_eq!(column_pairs.len(), n as usize - 1);
    let mut sorted = column_pairs.clone();
    sorted.sort();
    assert_eq!(column_pairs, sorted);

    broad_phase::find_pairs(&params, &row, &mut broad);
    assert_eq!(broad.axis, 0);
    assert_eq!(
        broad.pairs, column_pairs,
        "the sweep axis changed the pairs or their order"
    );
}
