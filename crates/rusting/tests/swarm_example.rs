//! The swarm example (examples/swarm, the game docs/jobs.md walks through): 500 agents on A*
//! paths computed as deadline jobs, a flow field built as a sliced task, and a crowd measure
//! summed in job order, through `rusting determinism` with repeats, as a user would check it.

mod support;

use support::{engine_checkout, rusting};

/// `rusting determinism` with `--repeat 3` passes on the swarm over 600 ticks, in every
/// configuration: debug three times, release, release on one CPU (no job workers: the
/// simulation thread runs every job when it is due) and uneven frames; and it prints each run's
/// deadline-job counts.
///
/// Fails if a path is applied when its worker finishes rather than at its due tick (the one-CPU
/// run then diverges from the others), if the crowd measure sums in thread order, or if the
/// counts stop reaching the output.
#[test]
fn the_swarm_example_is_deterministic_with_repeats() {
    let example = engine_checkout().join("examples/swarm");
    let target = engine_checkout().join("target");
    let output = rusting(&[
        "determinism",
        example.to_str().unwrap(),
        "--ticks",
        "600",
        "--repeat",
        "3",
        "--target-dir",
        target.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("agree on all 600 ticks"), "{stdout}");
    assert!(
        stdout.contains("release on one CPU: ") && stdout.contains("deadline jobs delivered"),
        "{stdout}"
    );
}
