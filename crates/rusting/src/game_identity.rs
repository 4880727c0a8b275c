//! Making sure a built binary is the project's own before anything runs it.
//!
//! Cargo names a package's binary `<target>/<profile>/<package>`, so two projects with the same
//! package name in one target directory share that path, and a build that finds its own
//! artifacts fresh does not always copy its binary back over the one the other project left. A
//! game made with `rusting_game!` knows the crate it was built from: with `RUSTING_IDENTIFY=1` it
//! writes only that to its result file and exits. [`check`] asks, and when the binary is another
//! project's, has the package cleaned and built once more (cargo hashes a path package by its
//! place in its own workspace, so both projects' artifacts share names, and the other one's can
//! look fresh to this project's build); a binary that still is not the project's is refused
//! (`BINARY_MISMATCH`), naming both projects. This module must never run a game beyond asking it
//! who it is.

use std::path::{Path, PathBuf};

use rusting_engine::game::result::IDENTIFY_VARIABLE;

use crate::exit::{Failure, Outcome};
use crate::game_build::{Build, GameRun, Profile, result_path, take_result};

/// Builds the game in `profile` and returns its executable, once the executable has said it was
/// built from the project (see the module docs).
pub fn build(build: &Build, profile: Profile) -> Result<PathBuf, Failure> {
    let (executable, package) = build.build_once(profile)?;
    check(executable, build.project, || {
        // The other project's artifacts stand where this one's go (cargo hashes a path package by
        // its place in its workspace, the same for both), and look fresh: clean the package, then
        // build it again.
        if let Some(package) = &package {
            build.clean(profile, package)?;
        }
        build.build_once(profile).map(|(executable, _)| executable)
    })
}

/// Which crate `executable` says it was built from (`None`: it did not say, as a game built with
/// an engine older than this check does not).
fn built_from(executable: &Path, project: &Path) -> Result<Option<PathBuf>, Failure> {
    let result = result_path("identify");
    let status = GameRun {
        executable,
        project,
        env: vec![
            (IDENTIFY_VARIABLE, "1".to_owned()),
            ("RUSTING_RESULT_OUT", result.display().to_string()),
        ],
        one_cpu: false,
    }
    .command()
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .status()
    .map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("{}: cannot start the game: {e}", executable.display()),
        )
    })?;
    let said = take_result(&result)
        .filter(|r| status.success() && r.code == "IDENTIFIED")
        .and_then(|r| r.built_from);
    Ok(said.map(PathBuf::from))
}

/// Whether `a` and `b` are the same directory.
fn same_directory(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Checks that `executable` was built from `project`; when it was built from another project,
/// calls `rebuild` (which cleans the package, builds again and returns the executable), then
/// checks once more. Returns the executable to run.
fn check(
    executable: PathBuf,
    project: &Path,
    rebuild: impl FnOnce() -> Result<PathBuf, Failure>,
) -> Result<PathBuf, Failure> {
    let other = match built_from(&executable, project)? {
        Some(from) if same_directory(&from, project) => return Ok(executable),
        Some(from) => from,
        None => return Err(unidentified(&executable)),
    };
    let executable = rebuild()?;
    match built_from(&executable, project)? {
        Some(from) if same_directory(&from, project) => Ok(executable),
        Some(from) => Err(mismatch(&executable, project, &from)),
        None if executable.exists() => Err(unidentified(&executable)),
        None => Err(mismatch(&executable, project, &other)),
    }
}

fn mismatch(executable: &Path, project: &Path, other: &Path) -> Failure {
    Failure::new(
        "BINARY_MISMATCH",
        Outcome::BuildOrRun,
        format!(
            "{}: this binary was built from {}, not from the project {}: two projects with the \
             same package name share this target directory; give one of them another package \
             name in its Cargo.toml, or build it with its own --target-dir",
            executable.display(),
            other.display(),
            project.display()
        ),
    )
}

fn unidentified(executable: &Path) -> Failure {
    Failure::new(
        "BINARY_MISMATCH",
        Outcome::BuildOrRun,
        format!(
            "{}: the binary did not say which project it was built from (RUSTING_IDENTIFY): it \
             is not a game made with `rusting_game!` by this engine version",
            executable.display()
        ),
    )
}
