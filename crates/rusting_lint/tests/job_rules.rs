//! The thread and job rules: `LINT_SHARED_PUSH_IN_PARALLEL`, `LINT_THREAD_SPAWN`,
//! `LINT_CHANNEL_RECEIVE`, `LINT_ATOMIC_FLOAT` and `LINT_TIME_BUDGET`. Each fixture holds the
//! hazards in a `FixedUpdate` system next to their fixed forms (per-job outputs, deadline jobs,
//! outside inputs, integer atomics, loops bounded by a count), and only the hazards may be found.

mod common;

use common::{codes_at, game, lint};

fn at(code: &str, line: usize) -> (String, usize) {
    (code.to_owned(), line)
}

/// Pushes into a locked collection, a guard, a lock-free queue and a channel from the closures
/// of parallel iterators are caught once per parallel call, at its method. Fails if the rule stops
/// looking through `.lock()`/`.write()`/`.borrow_mut()` chains, forgets guards bound by `let`,
/// (the `par_chunks` line reaches its `RefCell` through a name bound inside the closure), stops
/// treating a `*_with` method's first parameter as shared, or only looks at `for_each`.
#[test]
fn shared_pushes_in_parallel_closures_are_caught() {
    let source = game(
        "use std::sync::{Mutex, RwLock, mpsc};
fn fixed_step(bodies: Res<Bodies>) {
    let hits = Mutex::new(Vec::new());
    bodies.0.par_iter().for_each(|b| hits.lock().unwrap().push(b.id));
    let index = RwLock::new(BTreeMap::new());
    (0..8).into_par_iter().for_each(|i| { index.write().unwrap().insert(i, i * 2); });
    let cells = RefCell::new(VecDeque::new());
    let n = bodies.0.par_chunks(4).map(|c| { let shared = &cells; shared.borrow_mut().push_back(c.len()); c.len() }).count();
    let (tx, rx) = mpsc::channel();
    bodies.0.par_iter().for_each_with(tx, |tx, b| tx.send(b.id).unwrap());
    let guarded = Mutex::new(Vec::new());
    let m = bodies.0.par_iter().filter_map(|b| { let mut g = guarded.lock().unwrap(); g.extend([b.id]); Some(b) }).count();
    let queue = SegQueue::new();
    let k = bodies.0.par_iter().inspect(|b| queue.push(b.id)).count();
}
fn frame_step(bodies: Res<Bodies>, hits: Res<Hits>) {
    bodies.0.par_iter().for_each(|b| hits.0.lock().unwrap().push(b.id));
}",
    );
    let found = lint(&source);
    let at_columns: Vec<(String, usize, usize)> = found
        .iter()
        .map(|f| (f.code.to_string(), f.line, f.column))
        .collect();
    let expected = [(12, 25), (14, 28), (16, 36), (18, 25), (20, 33), (22, 33)];
    assert_eq!(
        at_columns,
        expected
            .iter()
            .map(|&(line, column)| ("LINT_SHARED_PUSH_IN_PARALLEL".to_owned(), line, column))
            .collect::<Vec<_>>()
    );
    assert!(
        found[0].message.contains(".collect::<Vec<_>>()")
            && found[0].message.contains("parallel_jobs"),
        "{}",
        found[0]
    );
}

/// Per-job outputs are not caught: an ordered collect, the engine's `parallel_jobs` and
/// `parallel_chunks`, a buffer bound inside the closure, each item's own lock, a sequential
/// `for_each` and a `for_each` after a `collect`. Fails if the rule reports pushes into names the
/// closure owns, locks of a closure parameter, or chains that are not (or no longer) parallel.
#[test]
fn per_job_outputs_are_not_caught() {
    let source = game(
        "use rusting_engine::jobs::{parallel_chunks, parallel_jobs};
fn fixed_step(bodies: Res<Bodies>, mut out: ResMut<Out>) {
    let ids: Vec<u32> = bodies.0.par_iter().map(|b| b.id).collect();
    let per_job = parallel_jobs(4, |k| { let mut local = Vec::new(); local.push(k); local });
    let chunks = parallel_chunks(&bodies.0, 4, |chunk| chunk.iter().map(|b| b.id).collect::<Vec<_>>());
    let mine = bodies.0.par_iter().map(|b| { let mut own = Vec::new(); own.push(b.id); own }).collect::<Vec<_>>();
    bodies.cells.par_iter().for_each(|cell| cell.lock().unwrap().push(1));
    let shared = Mutex::new(Vec::new());
    bodies.0.iter().for_each(|b| shared.lock().unwrap().push(b.id));
    bodies.0.par_iter().map(|b| b.id).collect::<Vec<_>>().into_iter().for_each(|id| shared.lock().unwrap().push(id));
    out.0.par_iter_mut().for_each(|v| v.push(1));
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    tx.send(ids.len() as u32).unwrap();
}
fn frame_step() {}",
    );
    assert_eq!(codes_at(&source), []);
}

/// Threads started from fixed code are caught, through imports too (`thread::spawn`, a bare
/// `spawn`), with `thread::Builder` and `thread::scope`; a deadline job request, `parallel_jobs`
/// and `available_parallelism` are not, nor is a thread started in `Update`. Fails if the rule
/// matches paths without expanding the file's imports, or misses the builder's `spawn`.
#[test]
fn thread_spawns_are_caught() {
    let source = game(
        "use std::thread;
use std::thread::spawn;
fn fixed_step(mut jobs: ResMut<Jobs<PathJob>>) {
    let a = std::thread::spawn(|| 1);
    let b = thread::spawn(move || 2);
    let c = spawn(|| 3);
    let d = thread::Builder::new().name(\"w\".into()).spawn(|| 4).unwrap();
    thread::scope(|s| { s.spawn(|| 5); });
    rayon::spawn(|| {});
    let id = jobs.request(PathRequest { from: 0, to: 9 });
    let parts = rusting_engine::jobs::parallel_jobs(4, |k| k * 2);
    let n = std::thread::available_parallelism();
}
fn frame_step() { std::thread::spawn(|| {}); }",
    );
    assert_eq!(
        codes_at(&source),
        [
            at("LINT_THREAD_SPAWN", 12),
            at("LINT_THREAD_SPAWN", 13),
            at("LINT_THREAD_SPAWN", 14),
            at("LINT_THREAD_SPAWN", 15),
            at("LINT_THREAD_SPAWN", 16),
            at("LINT_THREAD_SPAWN", 17),
        ]
    );
    let found = lint(&source);
    assert_eq!(found[3].column, 53, "{}", found[3]);
    assert!(found[0].message.contains("Jobs<K>"), "{}", found[0]);
}

/// Channel receives in fixed code are caught; reading the engine's outside inputs and deadline
/// job results is not, nor is a `recv` method the crate defines itself. Fails if the rule drops
/// a receiving method or stops asking whether the crate defines the method.
#[test]
fn channel_receives_are_caught() {
    let source = game(
        "fn fixed_step(inbox: Res<Inbox>, outside: Res<OutsideInputs>, jobs: Res<Jobs<PathJob>>) {
    while let Ok(msg) = inbox.rx.try_recv() {}
    let first = inbox.rx.recv();
    let late = inbox.rx.recv_timeout(Duration::from_millis(1));
    for msg in inbox.rx.try_iter() {}
    let due = inbox.rx.recv_deadline(inbox.deadline);
    for bytes in outside.on(\"scores\") {}
    for (id, path) in jobs.results() {}
}
fn frame_step(inbox: Res<Inbox>) { let _ = inbox.rx.try_recv(); }",
    );
    assert_eq!(
        codes_at(&source),
        [
            at("LINT_CHANNEL_RECEIVE", 10),
            at("LINT_CHANNEL_RECEIVE", 11),
            at("LINT_CHANNEL_RECEIVE", 12),
            at("LINT_CHANNEL_RECEIVE", 13),
            at("LINT_CHANNEL_RECEIVE", 14),
        ]
    );
    assert!(lint(&source)[0].message.contains("OutsideQueue"));

    let own = game(
        "struct Mailbox { next: Option<u32> }
impl Mailbox { fn recv(&self) -> Option<u32> { self.next } }
fn fixed_step(mailbox: Res<Mailbox>) { let _ = mailbox.recv(); }
fn frame_step() {}",
    );
    assert_eq!(codes_at(&own), []);
}

/// Float atomics are caught: the `AtomicF64` path, a `let` typed `AtomicF32`, `fetch_add` on a
/// field declared `AtomicF64`, and `fetch_update`/`compare_exchange` over `from_bits`/`to_bits`;
/// integer atomics with integers and `parallel_reduce` are not. Fails if the rule reports every
/// `fetch_add`/`fetch_update`/`compare_exchange`, or stops reading the crate's float-atomic
/// fields or the bits calls inside closures.
#[test]
fn atomic_float_accumulation_is_caught() {
    let source = game(
        "use atomic_float::AtomicF64;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[derive(Resource)] struct Totals { energy: AtomicF64, bits: AtomicU32, count: AtomicU64 }
fn fixed_step(totals: Res<Totals>, bodies: Res<Bodies>) {
    let sum = AtomicF64::new(0.0);
    let typed: atomic_float::AtomicF32 = Default::default();
    bodies.0.par_iter().for_each(|b| { totals.energy.fetch_add(b.mass, Ordering::Relaxed); });
    let _ = totals.bits.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| Some((f32::from_bits(old) + 1.5).to_bits()));
    let old = totals.bits.load(Ordering::Relaxed);
    let _ = totals.bits.compare_exchange(old, (f32::from_bits(old) + 0.5).to_bits(), Ordering::AcqRel, Ordering::Relaxed);
    bodies.0.par_iter().for_each(|b| { totals.count.fetch_add(1, Ordering::Relaxed); });
    let _ = totals.count.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n + 2));
    let _ = totals.count.compare_exchange(3, 4, Ordering::AcqRel, Ordering::Relaxed);
    let counter = AtomicU64::new(0);
    counter.fetch_add(1, Ordering::Relaxed);
    let energy = rusting_engine::jobs::parallel_reduce(4, |k| bodies.part(k), |a, b| a + b);
}
fn frame_step() { let _ = AtomicF64::new(1.0); }",
    );
    assert_eq!(
        codes_at(&source),
        [
            at("LINT_ATOMIC_FLOAT", 13),
            at("LINT_ATOMIC_FLOAT", 14),
            at("LINT_ATOMIC_FLOAT", 15),
            at("LINT_ATOMIC_FLOAT", 16),
            at("LINT_ATOMIC_FLOAT", 18),
        ]
    );
    let found = lint(&source);
    assert_eq!((found[0].column, found[1].column), (15, 30), "{found:#?}");
    assert!(found[0].message.contains("parallel_reduce"), "{}", found[0]);
}

/// Loops bounded by time are caught at their keyword (a `while` on `.elapsed()` or
/// `Instant::now()`, a `loop` or `for` leaving on an `elapsed` check, a `take_while` on the
/// clock), next to `LINT_WALL_CLOCK` for the clock read itself; loops bounded by a count, a
/// counter or a work condition are not. Fails if the rule looks only at `while` conditions, or
/// reports any `if` with a `break` whatever its condition.
#[test]
fn time_budget_loops_are_caught() {
    let source = game(
        "use std::time::{Duration, Instant};
fn fixed_step(mut work: ResMut<Work>) {
    let started = work.started;
    while started.elapsed() < Duration::from_millis(2) { work.step(); }
    while Instant::now() < work.deadline { work.step(); }
    loop { work.step(); if started.elapsed() > work.budget { break; } }
    for item in work.queue.drain(..) { if started.elapsed() >= work.budget { return; } work.run(item); }
    let done: Vec<u32> = work.items.iter().copied().take_while(|_| started.elapsed() < work.budget).collect();
    for _ in 0..work.units_per_tick { work.step(); }
    let mut left = 8;
    while left > 0 { work.step(); left -= 1; }
    loop { if work.step_done() { break; } }
    for item in work.items.iter().take(4) { if *item > 3 { break; } }
}
fn frame_step(mut work: ResMut<Work>) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(2) { work.step(); }
}",
    );
    let found = lint(&source);
    let at_columns: Vec<(String, usize, usize)> = found
        .iter()
        .map(|f| (f.code.to_string(), f.line, f.column))
        .collect();
    let budget = |line, column| ("LINT_TIME_BUDGET".to_owned(), line, column);
    assert_eq!(
        at_columns,
        [
            budget(12, 5),
            budget(13, 5),
            ("LINT_WALL_CLOCK".to_owned(), 13, 20),
            budget(14, 5),
            budget(15, 5),
            budget(16, 53),
        ]
    );
    assert!(found[0].message.contains("add_sliced_task"), "{}", found[0]);
}
