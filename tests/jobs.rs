//! Deterministic jobs: deadline jobs whose results never depend on worker speed, late jobs
//! counted, jobs in flight through a rollback, sliced tasks as simulation state, parallel work
//! merged in job order, outside results that replay without calling out, and a panicking job
//! named. The swarm example (examples/swarm) is the game most of them run.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::determinism::{SyncTest, play_replay};
use rusting_engine::jobs::{JobPanicked, JobWorkers, SliceStatus};
use rusting_engine::prelude::*;
use rusting_engine::record::replay_compact::{from_compact, to_compact};
use rusting_engine::record::{Replay, StateDetail, compare_details};
use rusting_engine::state::hash::world_state_hash;

#[path = "support/tick_hashes.rs"]
mod tick_hashes;
use tick_hashes::run;

#[path = "../examples/swarm/src/flow.rs"]
mod flow;
#[path = "../examples/swarm/src/map.rs"]
mod map;
#[path = "../examples/swarm/src/paths.rs"]
mod paths;
#[path = "../examples/swarm/src/swarm.rs"]
mod swarm;

use flow::FlowField;
use paths::FindPath;

/// Held by the tests that record or panic: a panic (even one caught) finishes the recording in
/// progress, so the two never run at once.
static RECORDING_OR_PANICKING: Mutex<()> = Mutex::new(());

fn settings() -> RuntimeSettings {
    RuntimeSettings {
        seed: 35,
        ..default()
    }
}

/// The swarm on `workers` job threads, paths `latency` ticks after they are asked for, each
/// worker waiting `delay` before every job.
fn swarm_app(workers: usize, latency: u64, delay: Duration) -> App {
    let mut app = App::new(settings());
    app.add_plugins(swarm::Swarm);
    let pool = app.world().resource::<JobWorkers>().clone();
    pool.set_workers(workers);
    pool.slow_down_for_tests(delay);
    app.world_mut()
        .resource_mut::<Jobs<FindPath>>()
        .set_latency(latency);
    app
}

fn stats(app: &App) -> rusting_engine::jobs::JobStats {
    app.world().resource::<JobWorkers>().stats()
}

/// The swarm gives the same hash on every tick with 0, 1 and 2 job workers and with a worker
/// slowed on purpose, at the example's latency of 3 ticks and at 1 (where the slowed worker
/// makes nearly every tick stall).
///
/// Fails if a result is applied when it arrives rather than at its due tick, or if the order of
/// delivery follows completion rather than request order (seen failing that way by delivering
/// `Done` slots as soon as they were found instead of waiting for the due ones).
#[test]
fn job_results_do_not_depend_on_worker_speed() {
    for latency in [swarm::PATH_LATENCY, 1] {
        let reference = run(&mut swarm_app(0, latency, Duration::ZERO), 90);
        for (workers, delay) in [
            (1, Duration::ZERO),
            (2, Duration::ZERO),
            (1, Duration::from_micros(300)),
        ] {
            let mut app = swarm_app(workers, latency, delay);
            let hashes = run(&mut app, 90);
            let first = reference.iter().zip(&hashes).position(|(a, b)| a != b);
            assert_eq!(
                first,
                None,
                "latency {latency}, {workers} workers, delay {delay:?}: tick {} differs",
                first.map_or(0, |k| k + 1)
            );
            let swarm = app.world().resource::<swarm::SwarmStats>();
            eprintln!(
                "latency {latency} workers {workers}: {:?} {:?}",
                stats(&app),
                swarm
            );
            assert!(
                swarm.paths > 500,
                "the swarm got only {} paths",
                swarm.paths
            );
        }
        let paths = run(&mut swarm_app(0, latency, Duration::ZERO), 0);
        assert!(paths.is_empty());
    }
}

/// A slow job: its result is its input, after 5 ms of work.
struct Echo;

impl JobKind for Echo {
    const NAME: &'static str = "Echo";
    type Input = u64;
    type Output = u64;
    fn run(input: &u64) -> u64 {
        std::thread::sleep(Duration::from_millis(5));
        *input
    }
}

/// The ticks results arrived on, as `(tick requested, tick delivered)`.
#[derive(Resource, Clone, Default, SimState)]
struct Arrivals(Vec<(u64, u64)>);

fn ask_echo(time: Res<FrameTime>, mut jobs: ResMut<Jobs<Echo>>) {
    if time.fixed_tick < 12 {
        jobs.request(time.fixed_tick + 1);
    }
}

fn take_echo(time: Res<FrameTime>, jobs: Res<Jobs<Echo>>, mut arrivals: ResMut<Arrivals>) {
    for (_, requested) in jobs.results() {
        arrivals.0.push((*requested, time.fixed_tick + 1));
    }
}

fn echo_app(latency: u64, delay: Duration) -> App {
    let mut app = App::new(settings());
    app.add_job_kind::<Echo>(latency);
    app.world_mut().insert_resource(Arrivals::default());
    app.register_sim_resource::<Arrivals>();
    app.add_systems(
        FixedUpdate,
        (take_echo, ask_echo).chain().after(SimSet::Tweens),
    );
    let pool = app.world().resource::<JobWorkers>().clone();
    pool.set_workers(1);
    pool.slow_down_for_tests(delay);
    app
}

/// With jobs that take 5 ms and a latency of 1 tick (ticks run back to back), each job is late:
/// the tick it is due waits for it (and counts it, with the time it waited), and it still
/// arrives exactly one tick after it was asked for. The counts are in the `JobWorkers` resource.
///
/// Fails if a late job is skipped or delivered a tick later instead of waited for (seen failing
/// by delivering only the slots already done), or if the wait is not counted.
#[test]
fn a_late_job_stalls_and_is_counted() {
    let mut app = echo_app(1, Duration::ZERO);
    run(&mut app, 16);
    let arrivals = &app.world().resource::<Arrivals>().0;
    assert_eq!(arrivals.len(), 12, "{arrivals:?}");
    for &(asked, got) in arrivals {
        assert_eq!(
            got,
            asked + 1,
            "a result due at tick {} came at {got}",
            asked + 1
        );
    }
    let counted = stats(&app);
    assert_eq!(counted.delivered, 12);
    assert!(counted.late >= 10, "{counted:?}");
    assert!(counted.stall() >= Duration::from_millis(20), "{counted:?}");

    // A worker that waits before every job: the simulation thread runs the due jobs itself.
    let mut helped = echo_app(1, Duration::from_millis(50));
    run(&mut helped, 16);
    assert_eq!(
        helped.world().resource::<Arrivals>().0,
        app.world().resource::<Arrivals>().0
    );
    assert!(
        stats(&helped).run_by_simulation >= 6,
        "{:?}",
        stats(&helped)
    );

    // With time to spare (latency 4, no delay), the same results arrive four ticks later.
    let mut relaxed = echo_app(4, Duration::ZERO);
    run(&mut relaxed, 20);
    let arrivals = &relaxed.world().resource::<Arrivals>().0;
    assert!(
        arrivals.iter().all(|&(asked, got)| got == asked + 4),
        "{arrivals:?}"
    );
}

/// A snapshot taken while paths are pending, restored, gives the same ticks again, in the same
/// app (whose results are cached, so re-simulating recomputes none) and in a fresh app (which
/// computes them again); a synctest that rolls the swarm back 4 ticks every tick passes.
///
/// The pending requests are in the hash and the field comparison too.
///
/// Fails if pending requests or the id counter are left out of the hash (seen failing by hashing
/// `Jobs` without its pending list: every rollback still matched, and only the hash check after a
/// new request failed) or the snapshot, or if a re-simulated request recomputes its job.
#[test]
fn jobs_in_flight_survive_rollback() {
    let mut app = swarm_app(1, swarm::PATH_LATENCY, Duration::ZERO);
    run(&mut app, 20);
    let pending = app.world().resource::<Jobs<FindPath>>().pending().len();
    assert!(pending > 0, "no paths pending at the snapshot");
    let snapshot = app.snapshot().unwrap();
    // The pending requests are in the hash and in the field comparison: the same number of
    // requests with different inputs hash differently, and the comparison names them.
    let hash = world_state_hash(app.world_mut());
    let query = app.world().resource::<Jobs<FindPath>>().pending()[0]
        .input
        .clone();
    let ask = |app: &mut App, to: IVec2| {
        app.restore(&snapshot).unwrap();
        let mut jobs = app.world_mut().resource_mut::<Jobs<FindPath>>();
        jobs.request(paths::PathQuery {
            to,
            ..query.clone()
        });
        (
            world_state_hash(app.world_mut()),
            StateDetail::capture(app.world_mut(), 20),
        )
    };
    let (one, one_detail) = ask(&mut app, query.from);
    let (other, other_detail) = ask(&mut app, query.to);
    assert_ne!(one, other, "a pending request's input is not hashed");
    let difference = compare_details(&one_detail, &other_detail).expect("no field differs");
    assert!(
        difference.to_string().contains("resource FindPath"),
        "{difference}"
    );
    app.restore(&snapshot).unwrap();
    assert_eq!(world_state_hash(app.world_mut()), hash);
    let first = run(&mut app, 30);
    let before = stats(&app);
    app.restore(&snapshot).unwrap();
    let again = run(&mut app, 30);
    assert_eq!(first, again, "re-simulating from the snapshot diverged");
    let after = stats(&app);
    let asked = after.requested - before.requested;
    assert!(asked > 0);
    assert_eq!(
        after.cache_hits - before.cache_hits,
        asked,
        "a re-simulated request ran its job again"
    );

    let mut fresh = swarm_app(2, swarm::PATH_LATENCY, Duration::ZERO);
    run(&mut fresh, 1);
    fresh.restore(&snapshot).unwrap();
    assert_eq!(
        run(&mut fresh, 30),
        first,
        "a fresh app restored from the snapshot diverged"
    );
    // It ran them on its own workers, and counted them itself.
    assert!(stats(&fresh).delivered > 0, "{:?}", stats(&fresh));

    let mut synctest = SyncTest::new(|| swarm_app(1, swarm::PATH_LATENCY, Duration::ZERO), 4);
    for _ in 0..40 {
        synctest.advance(RuntimeInput::default()).unwrap();
    }
}

/// The flow field's search is simulation state: changing its frontier changes the world hash,
/// a snapshot taken mid-search resumes exactly where it stood, and the field is finished after
/// as many ticks on every run.
///
/// Fails if `Sliced` leaves its task out of the hash (seen by hashing only its status and counts) or the
/// snapshot, or if the units done per tick depend on anything but the setting.
#[test]
fn sliced_task_state_is_simulation_state() {
    let mut app = swarm_app(0, swarm::PATH_LATENCY, Duration::ZERO);
    run(&mut app, 10);
    let field = app.world().resource::<Sliced<FlowField>>();
    assert_eq!(field.status(), SliceStatus::Running);
    assert_eq!(
        field.units_done(),
        9 * u64::from(swarm::FLOW_CELLS_PER_TICK)
    );
    let hash = world_state_hash(app.world_mut());
    let snapshot = app.snapshot().unwrap();
    // Two tasks that differ only in their search state hash differently.
    let restart = |app: &mut App, extra: Option<u32>| {
        app.restore(&snapshot).unwrap();
        let mut field = app.world_mut().resource_mut::<Sliced<FlowField>>();
        let mut task = field.task().unwrap().clone();
        task.frontier.extend(extra);
        field.start(task);
        world_state_hash(app.world_mut())
    };
    let plain = restart(&mut app, None);
    assert_ne!(
        plain,
        restart(&mut app, Some(0)),
        "the task's state is not hashed"
    );
    app.restore(&snapshot).unwrap();
    assert_eq!(world_state_hash(app.world_mut()), hash);
    let resumed = run(&mut app, 60);
    let mut straight = swarm_app(2, swarm::PATH_LATENCY, Duration::ZERO);
    let whole = run(&mut straight, 70);
    assert_eq!(resumed, whole[10..], "the resumed search diverged");
    let stats = straight.world().resource::<swarm::SwarmStats>();
    assert!(stats.fields >= 1, "no flow field finished in 70 ticks");
}

/// `parallel_jobs` returns every job's items in job order and `parallel_reduce` combines float
/// parts in job order, on 1, 2 and 4 threads, although the later jobs finish first.
///
/// Fails if the buffers are merged in the order jobs finish (seen by collecting them through a
/// `Mutex<Vec>`: on 2 threads the order came out reversed in places), or if the reduction
/// combines parts as they arrive.
#[test]
fn parallel_jobs_merge_in_job_order() {
    const JOBS: usize = 24;
    let expected: Vec<(usize, usize)> = (0..JOBS)
        .flat_map(|k| (0..k % 4).map(move |i| (k, i)))
        .collect();
    // Parts whose sum depends on the order they are added in.
    let part = |k: usize| if k.is_multiple_of(2) { 1.0e8_f32 } else { -1.0e8_f32 } + k as f32 * 0.37;
    let sequential = (1..JOBS).fold(part(0), |sum, k| sum + part(k));
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let items = pool.install(|| {
            parallel_jobs(JOBS, |k, out| {
                std::thread::sleep(Duration::from_micros(((JOBS - k) * 150) as u64));
                out.extend((0..k % 4).map(|i| (k, i)));
            })
        });
        assert_eq!(items, expected, "{threads} threads");
        let sum = pool.install(|| {
            parallel_reduce(
                JOBS,
                |k| {
                    std::thread::sleep(Duration::from_micros(((JOBS - k) * 100) as u64));
                    part(k)
                },
                |a, b| a + b,
            )
        });
        assert_eq!(
            sum.map(f32::to_bits),
            Some(sequential.to_bits()),
            "{threads} threads"
        );
        let chunks = pool.install(|| {
            parallel_chunks(&expected, 5, |k, slice, out: &mut Vec<usize>| {
                out.extend(slice.iter().map(|&(job, _)| job * 100 + k));
            })
        });
        assert_eq!(chunks.len(), expected.len());
        assert!(chunks.windows(2).all(|w| w[0] / 100 <= w[1] / 100));
    }
}

/// Scores the game keeps from outside replies.
#[derive(Resource, Clone, Default, SimState)]
struct Leaderboard {
    replies: Vec<(u64, String)>,
}

fn read_replies(inputs: Res<OutsideInputs>, mut board: ResMut<Leaderboard>) {
    for bytes in inputs.on("leaderboard") {
        let text = String::from_utf8_lossy(bytes).into_owned();
        board.replies.push((inputs.entered_at(), text));
    }
}

fn leaderboard_app() -> App {
    let mut app = App::new(settings());
    app.world_mut().insert_resource(Leaderboard::default());
    app.register_sim_resource::<Leaderboard>();
    app.add_systems(FixedUpdate, read_replies.after(SimSet::Tweens));
    app
}

/// Replies pushed from another thread while a game records enter at tick starts and are recorded
/// with their ticks; playing the replay back (JSON and compact) in an app where nothing answers,
/// and where an entry pushed before playback must never enter, matches every recorded hash; a
/// rollback in the live app re-feeds each re-simulated tick the entries it got the first time.
/// A replay whose outside entry breaks a limit is refused, naming the file and the place.
///
/// Fails if playback reads the live queue (seen diverging at tick 1, where the stray entry got in, when
/// `Replay::prepare` left the queue live), if the recorder leaves the entries out (seen: the
/// replay held none), or if a re-simulated tick takes new entries.
#[test]
fn outside_inputs_replay_without_calling_out() {
    let _alone = RECORDING_OR_PANICKING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = std::env::temp_dir().join(format!("rusting-outside-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut app = leaderboard_app();
    // Recorded through the journal, into the compact form.
    app.start_recording_to(&dir.join("live.rply")).unwrap();
    let queue = app.world().resource::<OutsideQueue>().clone();
    let done = Arc::new(Mutex::new(false));
    let server = {
        let done = done.clone();
        std::thread::spawn(move || {
            for k in 0..5 {
                std::thread::sleep(Duration::from_millis(3 + k * 2));
                queue
                    .push("leaderboard", format!("rank {k}").into_bytes())
                    .unwrap();
            }
            *done.lock().unwrap() = true;
        })
    };
    let step = app.fixed_step();
    while !*done.lock().unwrap() || app.ticks() < 40 {
        app.update(step);
        std::thread::sleep(Duration::from_millis(1));
    }
    server.join().unwrap();
    app.update(step);
    let board = app.world().resource::<Leaderboard>().replies.clone();
    assert_eq!(board.len(), 5, "{board:?}");
    let replay = app.finish_recording().unwrap().unwrap();
    assert!(!replay.outside.is_empty());
    assert_eq!(Replay::load(&dir.join("live.rply")).unwrap(), replay);
    replay.write(&dir.join("live.json")).unwrap();
    let json = Replay::load(&dir.join("live.json")).unwrap();
    assert_eq!(json, replay);
    let compact = from_compact(&to_compact(&replay).unwrap(), "mem.rply".as_ref()).unwrap();
    assert_eq!(compact, replay.clone().with_short_hashes());
    for played in [&json, &compact] {
        let mut offline = leaderboard_app();
        offline.setup().unwrap();
        let stray = offline.world().resource::<OutsideQueue>().clone();
        stray.push("leaderboard", b"never".to_vec()).unwrap();
        play_replay(played, &mut offline).unwrap();
        assert_eq!(offline.world().resource::<Leaderboard>().replies, board);
    }

    // A rollback in the live app: the re-simulated ticks get their first entries again.
    let mut live = leaderboard_app();
    let queue = live.world().resource::<OutsideQueue>().clone();
    run(&mut live, 5);
    let snapshot = live.snapshot().unwrap();
    queue.push("leaderboard", b"early".to_vec()).unwrap();
    let first = run(&mut live, 10);
    live.restore(&snapshot).unwrap();
    queue.push("leaderboard", b"late".to_vec()).unwrap();
    assert_eq!(run(&mut live, 10), first);
    run(&mut live, 1);
    let replies = &live.world().resource::<Leaderboard>().replies;
    assert_eq!(
        replies
            .iter()
            .map(|(t, r)| (*t, r.as_str()))
            .collect::<Vec<_>>(),
        [(6, "early"), (16, "late")]
    );

    // A broken entry is refused with the file and the place.
    let file = dir.join("bad.json");
    let mut bad = replay.clone();
    bad.outside[0].entries[0].channel.clear();
    std::fs::write(&file, serde_json::to_vec(&bad).unwrap()).unwrap();
    let error = Replay::load(&file).unwrap_err().to_string();
    assert!(
        error.contains("bad.json") && error.contains("outside[0].entries[0]"),
        "{error}"
    );
    assert!(
        queue
            .push("x", vec![0; rusting_engine::jobs::MAX_OUTSIDE_BYTES + 1])
            .is_err()
    );
    std::fs::remove_dir_all(&dir).ok();
}

struct Explode;

impl JobKind for Explode {
    const NAME: &'static str = "Explode";
    type Input = u64;
    type Output = u64;
    fn run(input: &u64) -> u64 {
        assert!(*input != 3, "input {input} is cursed");
        *input
    }
}

fn ask_explode(time: Res<FrameTime>, mut jobs: ResMut<Jobs<Explode>>) {
    jobs.request(time.fixed_tick);
}

/// A job whose function panics stops the run at its due tick with a `JobPanicked` naming the
/// kind, the `JobId` and the tick that asked for it, on a worker and on the simulation thread.
///
/// Fails if the panic is swallowed (the run would go on without the result, or hang waiting for
/// it) or if the payload loses the job's name.
#[test]
fn a_panicking_job_is_named() {
    let _alone = RECORDING_OR_PANICKING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for workers in [0, 1] {
        let mut app = App::new(settings());
        app.add_job_kind::<Explode>(2);
        app.add_systems(FixedUpdate, ask_explode.after(SimSet::Tweens));
        app.world().resource::<JobWorkers>().set_workers(workers);
        let step = app.fixed_step();
        let stopped = catch_unwind(AssertUnwindSafe(|| {
            for _ in 0..10 {
                app.update(step);
            }
        }));
        let payload = stopped.expect_err("the run went on past the panicking job");
        let panicked = payload
            .downcast_ref::<JobPanicked>()
            .unwrap_or_else(|| panic!("{workers} workers: the payload is not a JobPanicked"));
        assert_eq!(panicked.job.kind, "Explode");
        assert_eq!(panicked.job.id, JobId(3));
        assert_eq!(panicked.job.requested_at, 4);
        assert!(panicked.message.contains("input 3 is cursed"), "{panicked}");
        assert!(
            panicked
                .to_string()
                .contains("job `Explode` (JobId 3, requested at tick 4)"),
            "{panicked}"
        );
    }
}
