//! Deadline jobs on the swarm example, the figures of docs/performance.md ("Deadline jobs"): late
//! jobs per 10,000 ticks at latencies of 1, 2 and 3 ticks on two threads (the simulation thread
//! and one worker), A* paths per second on one thread, the job pool's speedup on two threads
//! against one, a rollback of 8 ticks re-simulated with the result cache against a fresh app that
//! computes every path again, and the per-tick cost of the job system with nothing queued. Run
//! with `cargo bench --bench jobs`.

use std::time::{Duration, Instant};

use rusting_engine::App;
use rusting_engine::jobs::{JobKind, JobWorkers, Jobs};
use rusting_engine::runtime::RuntimeSettings;

#[path = "../examples/swarm/src/flow.rs"]
mod flow;
#[path = "../examples/swarm/src/map.rs"]
mod map;
#[path = "../examples/swarm/src/paths.rs"]
mod paths;
#[path = "../examples/swarm/src/swarm.rs"]
mod swarm;

use paths::{FindPath, PathQuery};

fn settings() -> RuntimeSettings {
    RuntimeSettings {
        seed: 35,
        ..Default::default()
    }
}

fn swarm_app(workers: usize, latency: u64) -> App {
    let mut app = App::new(settings());
    app.add_plugins(swarm::Swarm);
    app.world().resource::<JobWorkers>().set_workers(workers);
    app.world_mut()
        .resource_mut::<Jobs<FindPath>>()
        .set_latency(latency);
    app
}

fn run(app: &mut App, ticks: u64) -> Duration {
    let step = app.fixed_step();
    let start = Instant::now();
    for _ in 0..ticks {
        app.update(step);
    }
    start.elapsed()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Path queries between spread-out open cells of the swarm's map.
fn queries(count: usize) -> Vec<PathQuery> {
    let map = map::GridMap::generate(48, 48, 7);
    (0..count as u64)
        .map(|k| PathQuery {
            map: map.clone(),
            from: map.open_cell_near(k * 7919),
            to: map.open_cell_near(k * 104_729 + 1_000),
        })
        .collect()
}

/// Runs `ticks` ticks, starting one every `pace` (none: back to back), spinning in between.
fn run_paced(app: &mut App, ticks: u64, pace: Duration) -> Duration {
    let step = app.fixed_step();
    let start = Instant::now();
    for k in 0..ticks {
        while start.elapsed() < pace * k as u32 {
            std::hint::spin_loop();
        }
        app.update(step);
    }
    start.elapsed()
}

/// A job kind that is never asked for: `N` tells eight of them apart.
struct Idle<const N: usize>;

const IDLE_NAMES: [&str; 8] = [
    "Idle0", "Idle1", "Idle2", "Idle3", "Idle4", "Idle5", "Idle6", "Idle7",
];

impl<const N: usize> JobKind for Idle<N> {
    const NAME: &'static str = IDLE_NAMES[N];
    type Input = u32;
    type Output = u32;
    fn run(input: &u32) -> u32 {
        *input
    }
}

fn main() {
    println!("late jobs per 10,000 ticks of the swarm, two threads (simulation + one worker):");
    for (pace, what) in [
        (Duration::ZERO, "ticks back to back"),
        (
            Duration::from_millis(1),
            "a tick every 1 ms, 16.7x real time",
        ),
    ] {
        for latency in [1, 2, 3] {
            let mut app = swarm_app(1, latency);
            let took = run_paced(&mut app, 10_000, pace);
            let stats = app.world().resource::<JobWorkers>().stats();
            println!(
                "  {what}, K = {latency}: {} late of {} delivered ({:.1}%), {:.1} ms stalled in \
                 all; {:.3} ms a tick",
                stats.late,
                stats.delivered,
                100.0 * stats.late as f64 / stats.delivered.max(1) as f64,
                stats.stall_ns as f64 / 1e6,
                took.as_secs_f64() * 1e3 / 10_000.0
            );
        }
    }

    let batch = queries(2_000);
    let start = Instant::now();
    let mut cells = 0usize;
    for query in &batch {
        cells += FindPath::run(query).len();
    }
    let one = start.elapsed();
    println!(
        "A* paths per second on one thread: {:.0} (48 x 48 grid, {:.1} cells a path)",
        batch.len() as f64 / one.as_secs_f64(),
        cells as f64 / batch.len() as f64
    );

    // The same batch asked for in one tick with a latency of one tick: the next tick waits for
    // all of it, run by the simulation thread alone (no workers) or helped by one worker.
    let batch_time = |workers: usize| {
        let samples = (0..5)
            .map(|_| {
                let mut app = App::new(settings());
                app.add_job_kind::<FindPath>(1);
                app.world().resource::<JobWorkers>().set_workers(workers);
                run(&mut app, 1);
                {
                    let mut jobs = app.world_mut().resource_mut::<Jobs<FindPath>>();
                    for query in &batch {
                        jobs.request(query.clone());
                    }
                }
                run(&mut app, 1)
            })
            .collect();
        median(samples)
    };
    let alone = batch_time(0);
    let helped = batch_time(1);
    println!(
        "the job pool on two threads: {:.2}x one thread ({:.1} ms against {:.1} ms for {} paths)",
        alone.as_secs_f64() / helped.as_secs_f64(),
        helped.as_secs_f64() * 1e3,
        alone.as_secs_f64() * 1e3,
        batch.len()
    );

    // A rollback of 8 ticks: re-simulated in the app that ran them (its cache holds every path)
    // against a fresh app restored from the same snapshot (which computes them again).
    let mut app = swarm_app(1, swarm::PATH_LATENCY);
    run(&mut app, 120);
    let snapshot = app.snapshot().unwrap();
    run(&mut app, 8);
    let cached = median(
        (0..9)
            .map(|_| {
                app.restore(&snapshot).unwrap();
                run(&mut app, 8)
            })
            .collect(),
    );
    let fresh = median(
        (0..9)
            .map(|_| {
                let mut fresh = swarm_app(1, swarm::PATH_LATENCY);
                run(&mut fresh, 1);
                fresh.restore(&snapshot).unwrap();
                run(&mut fresh, 8)
            })
            .collect(),
    );
    println!(
        "re-simulating 8 ticks of the swarm after a rollback: {:.2} ms with the result cache, {:.2} ms \
         computing every path again ({:.2}x)",
        cached.as_secs_f64() * 1e3,
        fresh.as_secs_f64() * 1e3,
        fresh.as_secs_f64() / cached.as_secs_f64()
    );

    // Nothing queued: an app with eight job kinds against the same app without, per tick, in
    // alternating samples so both see the same machine.
    let idle = |with_kinds: bool| {
        let mut app = App::new(settings());
        if with_kinds {
            app.add_job_kind::<Idle<0>>(3)
                .add_job_kind::<Idle<1>>(3)
                .add_job_kind::<Idle<2>>(3)
                .add_job_kind::<Idle<3>>(3)
                .add_job_kind::<Idle<4>>(3)
                .add_job_kind::<Idle<5>>(3)
                .add_job_kind::<Idle<6>>(3)
                .add_job_kind::<Idle<7>>(3);
        }
        run(&mut app, 200);
        run(&mut app, 20_000) / 20_000
    };
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..9 {
        without.push(idle(false));
        with.push(idle(true));
    }
    let (with, without) = (median(with), median(without));
    println!(
        "a tick with eight job kinds and nothing queued: {:.2} us against {:.2} us with none \
         ({:+.3} us a kind)",
        with.as_secs_f64() * 1e6,
        without.as_secs_f64() * 1e6,
        (with.as_secs_f64() - without.as_secs_f64()) * 1e6 / 8.0
    );
}
