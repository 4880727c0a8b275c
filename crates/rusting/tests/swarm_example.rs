//! The swarm example (examples/swarm, the game docs/jobs.md walks through): 500 agents on A*
//! paths computed as deadline jobs, a flow field built as a sliced task, and a crowd measure
//! summed in job order, through `rusting determinism` with repeats, as a user would check it.

mod support;

use support::{engine_checkout, rusting};

/// `rusting determinism` with `--repeat 2` passes on the swarm over 600 ticks, in every
/// configuration: debug three times, release, release on one CPU (no job workers: the
/// simulation thread runs every job when it is due) and uneven frames twice each; and it prints
/// how many runs of each agreed and each first-round run's deadline-job counts, in its output
/// and in the HTML report.
///
/// Fails if a path is applied when its worker finishes rather than at its due tick (the one-CPU
/// run then diverges from the others), if the crowd measure sums in thread order, or if the
/// counts stop reaching the output or the report.
#[test]
fn the_swarm_example_is_deterministic_with_repeats() {
    let example = engine_checkout().join("examples/swarm");
    let target = engine_checkout().join("target");
    let report = std::env::temp_dir().join(format!("rusting-swarm-{}.html", std::process::id()));
    let output = rusting(&[
        "determinism",
        example.to_str().unwrap(),
        "--ticks",
        "600",
        "--repeat",
        "2",
        "--target-dir",
        target.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "9 runs agree on all 600 ticks: debug 3, release 2, release on one CPU 2, release in \
             uneven frames 2 (2 rounds in "
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("release on one CPU: ") && stdout.contains("deadline jobs delivered"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(&report).unwrap();
    let _ = std::fs::remove_file(&report);
    assert!(
        html.contains("deadline jobs, release on one CPU") && html.contains("late"),
        "the report lists no job counts"
    );
}

/// A path job that panics on one goal stops `rusting run` with `JOB_PANICKED`, naming the job
/// kind, its `JobId`, the tick that requested it and the panic's place and message.
///
/// Fails if the panic is swallowed (the run would end `OK` without the path), if the run hangs
/// waiting for the result, or if the CLI reports it as a plain `RUN_FAILED`.
#[test]
fn a_panicking_path_job_is_named_by_rusting_run() {
    let root = std::env::temp_dir().join(format!("rusting-swarm-panic-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let example = engine_checkout().join("examples/swarm");
    // Its own package name, so its binary never replaces the example's in the shared target.
    std::fs::create_dir_all(&root).unwrap();
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        "rusting.json",
        "rust-toolchain.toml",
    ] {
        let text = std::fs::read_to_string(example.join(file)).unwrap();
        let renamed = text.replace("name = \"swarm\"\n", "name = \"swarm_panic\"\n");
        std::fs::write(root.join(file), renamed).unwrap();
    }
    for dir in ["src", "scenes"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        for entry in std::fs::read_dir(example.join(dir)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), root.join(dir).join(entry.file_name())).unwrap();
        }
    }
    let engine = engine_checkout().canonicalize().unwrap();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .replace(
            "path = \"../..\"",
            &format!("path = {:?}", engine.display().to_string()),
        );
    std::fs::write(root.join("Cargo.toml"), manifest).unwrap();
    let paths = std::fs::read_to_string(root.join("src/paths.rs")).unwrap().replace(
        "        a_star(&query.map, query.from, query.to)\n",
        "        assert!(query.to != IVec2::new(3, 2), \"no route to {}\", query.to);\n        a_star(&query.map, query.from, query.to)\n",
    );
    std::fs::write(root.join("src/paths.rs"), paths).unwrap();
    let target = engine_checkout().join("target");
    let output = rusting(&[
        "run",
        root.to_str().unwrap(),
        "--headless",
        "--ticks",
        "2000",
        "--target-dir",
        target.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("JOB_PANICKED: job `FindPath` (JobId ")
            && stderr.contains(", requested at tick ")
            && stderr.contains("src/paths.rs:")
            && stderr.contains("no route to [3, 2]"),
        "{stderr}"
    );
}
