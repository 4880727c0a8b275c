//! A project made by `rusting new --engine-git` builds on a fresh CI runner: its engine comes from
//! a git URL (here a local `file://` repository standing in for a public one), and the commands of
//! its workflow pass from a fresh clone of it. (The default, the crates.io release, is proved in
//! `packaging.rs`.)

mod support;

use std::path::Path;
use std::process::Command;

use support::{engine_checkout, rusting, shared_target};

/// Runs `program` with `args` in `dir`; panics with its output when it fails.
fn run(dir: &Path, program: &str, args: &[&str], env: &[(&str, &Path)]) -> String {
    let mut command = Command::new(program);
    command.current_dir(dir).args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} in {}: {}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Copies the engine's sources (everything but build output and git data) into `to`; links stay
/// links (the command embeds the starter through links in `crates/rusting/starter`).
fn copy_sources(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        if entry.file_type().unwrap().is_dir() {
            copy_sources(&source, &target);
        } else if entry.file_type().unwrap().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source).unwrap(), &target).unwrap();
        } else if entry.file_type().unwrap().is_file() {
            std::fs::copy(&source, &target).unwrap();
        }
    }
}

/// A git repository holding `dir`'s files in one commit.
fn commit_all(dir: &Path) {
    let git = |args: &[&str]| {
        let mut all = vec![
            "-c",
            "user.name=Rusting",
            "-c",
            "user.email=ci@rusting.invalid",
        ];
        all.extend_from_slice(args);
        run(dir, "git", &all, &[]);
    };
    git(&["init", "--quiet", "--initial-branch=main"]);
    git(&["add", "--all"]);
    git(&["commit", "--quiet", "--message", "import"]);
}

/// `rusting new --engine-git file://...` writes a project whose engine is that git repository and
/// whose workflow installs `rusting` from it; a fresh clone of the project then passes the
/// workflow's commands, read from its YAML and run with bash: `cargo install --locked --git <url>
/// rusting-cli`, `rusting determinism . --ticks 600 --script input/walkthrough.json` and the state-hash
/// report of the walkthrough with the installed command, and the final job's comparison of the
/// four machines' reports (release and debug builds of this machine standing in for them).
/// (Builds share this workspace's target directory through `CARGO_TARGET_DIR`.) Fails if the
/// project depends on the engine by a path on this machine, the workflow names another repository
/// or stops parsing, or any of its commands fails.
#[test]
fn a_new_project_builds_from_a_fresh_clone() {
    let root = std::env::temp_dir().join(format!("rusting-fresh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let engine = root.join("engine");
    copy_sources(&engine_checkout(), &engine);
    commit_all(&engine);
    let url = format!("file://{}", engine.display());

    let project = root.join("Fresh Game");
    let out = rusting(&["new", project.to_str().unwrap(), "--engine-git", &url]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"fresh_game\""), "{manifest}");
    assert!(
        manifest.contains(&format!(
            "rusting_engine = {{ package = \"rusting_game_engine\", git = \"{url}\" }}"
        )),
        "{manifest}"
    );
    assert!(!manifest.contains("path ="), "{manifest}");
    commit_all(&project);
    let clone = root.join("clone");
    run(
        &root,
        "git",
        &[
            "clone",
            "--quiet",
            project.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
        &[],
    );

    let file = clone.join(".github/workflows/determinism.yml");
    let workflow = support::workflow(&file);
    let text = std::fs::read_to_string(&file).unwrap();
    let (machine, compare) = (
        support::workflow_runs(&workflow, "machine"),
        support::workflow_runs(&workflow, "compare"),
    );
    assert_eq!(machine.len(), 3, "{text}");
    assert_eq!(compare.len(), 2, "{text}");
    assert_eq!(
        compare[0], machine[0],
        "both jobs install the same `rusting`"
    );
    let target = shared_target();
    // Cargo names a package's build output by name and version, not by where its source lies,
    // and judges a build fresh by the files it was last built from: an engine or a `rusting`
    // built by an earlier run from another copy of the engine would be taken as this one. Forget
    // them, so this run builds the copy it serves. Only release builds: the debug directory also
    // holds the test executables still to run, and its engine is always built from this checkout,
    // the same code as the copy.
    support::forget_builds(&target, &["release"], |name| {
        name.starts_with("rusting") || name.starts_with("librusting")
    });
    let bin = root.join("bin");
    let install: Vec<&str> = machine[0].split_whitespace().collect();
    assert_eq!(
        install,
        [
            "cargo",
            "install",
            "--locked",
            "--git",
            url.as_str(),
            "rusting-cli"
        ]
    );
    let mut args: Vec<&str> = install[1..].to_vec();
    args.extend(["--quiet", "--root", bin.to_str().unwrap()]);
    run(
        &clone,
        env!("CARGO"),
        &args,
        &[("CARGO_TARGET_DIR", &target)],
    );
    // The job's other commands as its bash runs them, the installed `rusting` first on `PATH`.
    let path = support::path_with_first(&bin.join("bin"));
    let bash = |dir: &Path, command: &str| {
        run(
            dir,
            "bash",
            &["-c", command],
            &[("CARGO_TARGET_DIR", &target), ("PATH", Path::new(&path))],
        )
    };
    assert!(machine[1].starts_with("rusting determinism "), "{text}");
    let summary = bash(&clone, &machine[1]);
    assert!(summary.contains("agree on all 600 ticks"), "{summary}");
    // Every machine's report as the final job downloads them: this machine's release build, and
    // its debug build standing in for other machines.
    let downloaded = root.join("compare");
    for (machine_name, extra) in [
        ("linux-x86-64", ""),
        ("linux-arm64", " --debug"),
        ("macos-arm64", ""),
        ("windows-x86-64", " --debug"),
    ] {
        bash(&clone, &format!("{}{extra}", machine[2]));
        let into = downloaded.join(format!("reports/reports-{machine_name}"));
        std::fs::create_dir_all(&into).unwrap();
        std::fs::rename(clone.join("reports/game.json"), into.join("game.json")).unwrap();
    }
    let compared = bash(&downloaded, &compare[1]);
    assert!(
        compared.contains("game.json: all 4 machines agree on all 600 ticks"),
        "{compared}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}
