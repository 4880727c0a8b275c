//! Building a game project with cargo, and starting its binary with the `RUSTING_*` variables.
//!
//! `build` runs `cargo build --message-format json-render-diagnostics` so that it learns the path of
//! the game's executable from cargo itself, and shows a spinner with the crates compiled so far
//! while it waits (on a terminal only: piped or captured output stays quiet). Subcommands then start
//! the binary directly, several at once where they can, instead of going through `cargo run`
//! again. This module must never write inside the project directory except through cargo's own
//! target directory.

use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use rusting_engine::game::project::Project;
use rusting_engine::game::result::RunResult;
use rusting_engine::runtime::InputScript;

use crate::exit::{Failure, Outcome};

/// Which cargo profile to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// `dev`: debug assertions on, little optimisation.
    Debug,
    /// `release`.
    Release,
}

impl Profile {
    /// `Debug` when `debug`, else `Release` (what `--debug` asks for).
    pub fn of(debug: bool) -> Profile {
        if debug {
            Profile::Debug
        } else {
            Profile::Release
        }
    }

    /// The profile's name as cargo prints it.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Debug => "debug",
            Profile::Release => "release",
        }
    }
}

/// Opens the project at `project`, as a command does before it builds anything: a broken project
/// is bad input (`PROJECT_INVALID`), not a failed build.
pub fn check_project(project: &Path) -> Result<(), Failure> {
    Project::open(project)
        .map(drop)
        .map_err(|e| Failure::bad_input("PROJECT_INVALID", e.to_string()))
}

/// Loads the input script at `script`, if one is given, before anything builds: a broken script
/// is bad input (`SCRIPT_INVALID`), not a failed run.
pub fn check_script(script: Option<&Path>) -> Result<(), Failure> {
    match script {
        Some(script) => InputScript::load(script)
            .map(drop)
            .map_err(|e| Failure::bad_input("SCRIPT_INVALID", e.to_string())),
        None => Ok(()),
    }
}

/// Where a project builds: the directory and the target directory its builds share.
pub struct Build<'a> {
    /// The project directory (holding `Cargo.toml` and `rusting.json`).
    pub project: &'a Path,
    /// The cargo target directory (default: `CARGO_TARGET_DIR` when set, as cargo does, else the
    /// project's `target`).
    pub target_dir: Option<&'a Path>,
    /// Build with the game's default features, which turn its window on. Headless builds leave
    /// them off (`--no-default-features`), so they never compile the renderer.
    pub window: bool,
    /// Build the engine with its `net` feature (multiplayer sessions).
    pub net: bool,
}

impl Build<'_> {
    fn target(&self) -> PathBuf {
        self.target_dir
            .map(Path::to_owned)
            .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from))
            .unwrap_or_else(|| self.project.join("target"))
    }

    /// `cargo clean -p <package>` for `profile` in the target directory.
    pub fn clean(&self, profile: Profile, package: &str) -> Result<(), Failure> {
        let mut command = Command::new("cargo");
        command
            .args(["clean", "--quiet", "-p", package])
            .arg("--manifest-path")
            .arg(self.project.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(self.target());
        if profile == Profile::Release {
            command.arg("--release");
        }
        let output = command.output().map_err(|e| {
            Failure::new(
                "BUILD_FAILED",
                Outcome::BuildOrRun,
                format!("cannot start cargo clean: {e}"),
            )
        })?;
        if output.status.success() {
            return Ok(());
        }
        Err(Failure::new(
            "BUILD_FAILED",
            Outcome::BuildOrRun,
            format!(
                "cargo clean -p {package} failed: {}",
                first_error(&String::from_utf8_lossy(&output.stderr))
            ),
        ))
    }

    /// Runs cargo once and returns the executable it names, with its package's id (tools check
    /// the executable is the project's own first, through the identity check).
    pub fn build_once(&self, profile: Profile) -> Result<(PathBuf, Option<String>), Failure> {
        let mut command = Command::new("cargo");
        command
            .args(["build", "--message-format", "json-render-diagnostics"])
            .arg("--manifest-path")
            .arg(self.project.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(self.target());
        if profile == Profile::Release {
            command.arg("--release");
        }
        if !self.window {
            command.arg("--no-default-features");
        }
        if self.net {
            command.args(["--features", "rusting_engine/net"]);
        }
        let failed = |message: String| {
            Failure::new(
                "BUILD_FAILED",
                Outcome::BuildOrRun,
                format!("the {} build failed: {message}", profile.name()),
            )
        };
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| failed(format!("cannot start cargo: {e}")))?;
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let stderr_text = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let progress = Progress::start(profile);
        let mut executable = None;
        let mut package = None;
        let stdout = child.stdout.take().expect("stdout is piped");
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if message["reason"] != "compiler-artifact" {
                continue;
            }
            let name = message["target"]["name"].as_str().unwrap_or("?");
            progress.compiled(name);
            let is_bin = message["target"]["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "bin"));
            if is_bin && let Some(path) = message["executable"].as_str() {
                executable = Some(PathBuf::from(path));
                package = message["package_id"].as_str().map(str::to_owned);
            }
        }
        let status = child
            .wait()
            .map_err(|e| failed(format!("cargo did not finish: {e}")))?;
        progress.finish();
        let stderr = stderr_text.join().unwrap_or_default();
        if !status.success() {
            return Err(failed(first_error(&stderr)));
        }
        executable
            .map(|executable| (executable, package))
            .ok_or_else(|| failed("the project has no binary target".to_owned()))
    }
}

/// The first `error` line cargo printed with the place it points at (`at src/game.rs:12:5`), else
/// its last non-empty line.
fn first_error(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let Some(at) = lines.iter().position(|l| l.starts_with("error")) else {
        return lines
            .last()
            .map(|l| l.trim().to_owned())
            .unwrap_or_else(|| "cargo printed nothing".to_owned());
    };
    let place = lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with("error") && !l.starts_with("warning"))
        .find_map(|l| l.trim_start().strip_prefix("--> "));
    match place {
        Some(place) => format!("{} (at {})", lines[at].trim(), place.trim()),
        None => lines[at].trim().to_owned(),
    }
}

/// A spinner on standard error while cargo builds, or nothing when that is not a terminal.
struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    fn start(profile: Profile) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} building {prefix}: {pos} crates [{elapsed}] {msg}",
            )
            .expect("the template is valid"),
        );
        bar.set_prefix(profile.name());
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress { bar: Some(bar) }
    }

    fn compiled(&self, name: &str) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(name.to_owned());
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A built game and the variables one run of it gets.
pub struct GameRun<'a> {
    /// The game's executable.
    pub executable: &'a Path,
    /// The project directory, passed as `RUSTING_PROJECT_DIR`.
    pub project: &'a Path,
    /// `(name, value)` of the `RUSTING_*` variables to set; every other `RUSTING_*` variable of
    /// this process is removed so that none leaks into the run.
    pub env: Vec<(&'static str, String)>,
    /// Run on one worker thread: `RUSTING_THREADS=1` (one bevy and one rayon thread, on every
    /// operating system), and on Linux also pinned to CPU 0 with `taskset` where it is installed.
    pub one_cpu: bool,
}

impl GameRun<'_> {
    /// The command that starts the run.
    pub fn command(&self) -> Command {
        let mut command = if self.one_cpu && cfg!(target_os = "linux") && taskset_available() {
            let mut c = Command::new("taskset");
            c.args(["--cpu-list", "0"]).arg(self.executable);
            c
        } else {
            Command::new(self.executable)
        };
        for (name, _) in std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
            .filter(|(k, _)| k.starts_with("RUSTING_"))
        {
            command.env_remove(name);
        }
        command.env("RUSTING_PROJECT_DIR", self.project);
        for (name, value) in &self.env {
            command.env(name, value);
        }
        if self.one_cpu {
            command.env(rusting_engine::engine::threads::THREADS_VARIABLE, "1");
        }
        command
    }

    /// Runs the game to the end and collects its output, passing its log lines on to this
    /// process's standard error as they come. What follows a panic's first line (`thread '...'
    /// panicked at`) is kept but not passed on: the failure report names the panic itself.
    pub fn output_relaying_logs(&self) -> std::io::Result<std::process::Output> {
        let mut child = self
            .command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().expect("standard error is piped");
        let relay = std::thread::spawn(move || relay_until_panic(stderr));
        let mut stdout = Vec::new();
        child
            .stdout
            .take()
            .expect("standard output is piped")
            .read_to_end(&mut stdout)?;
        let status = child.wait()?;
        let stderr = relay.join().unwrap_or_default();
        Ok(std::process::Output {
            status,
            stdout,
            stderr,
        })
    }
}

/// Copies `from` line by line to this process's standard error until a panic begins, and returns
/// everything read.
fn relay_until_panic(from: impl Read) -> Vec<u8> {
    use std::io::Write;
    let mut reader = BufReader::new(from);
    let mut kept = Vec::new();
    let mut relaying = true;
    let mut line = Vec::new();
    let mut bar = RunProgress::default();
    while let Ok(n) = reader.read_until(b'\n', &mut line) {
        if n == 0 {
            break;
        }
        if bar.took(&line) {
            line.clear();
            continue;
        }
        if relaying && line.starts_with(b"thread '") && contains(&line, b"panicked at") {
            relaying = false;
        }
        if relaying {
            let _ = std::io::stderr().write_all(&line);
        }
        kept.append(&mut line);
    }
    bar.finish();
    kept
}

/// A bar on standard error drawn from a game's `rusting-progress <done> <total>` lines (which it
/// writes only when told to, `RUSTING_PROGRESS=1`, and only when standard error is a terminal).
#[derive(Default)]
struct RunProgress {
    bar: Option<ProgressBar>,
}

impl RunProgress {
    /// Whether `line` was a progress line (taken, never relayed or kept).
    fn took(&mut self, line: &[u8]) -> bool {
        let Some((done, total)) = progress_line(line) else {
            return false;
        };
        let bar = self.bar.get_or_insert_with(|| tick_bar(total, ""));
        bar.set_position(done);
        true
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A bar of `total` ticks on standard error, after `label`.
pub fn tick_bar(total: u64, label: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{prefix}{bar:40} {pos}/{len} ticks [{elapsed}, {eta} left]")
            .expect("the template is valid"),
    );
    bar.set_prefix(label.to_owned());
    bar
}

/// `(done, total)` from a line `rusting-progress <done> <total>`.
fn progress_line(line: &[u8]) -> Option<(u64, u64)> {
    let text = std::str::from_utf8(line).ok()?;
    let rest = text
        .trim_end()
        .strip_prefix(rusting_engine::game::PROGRESS_PREFIX)?;
    let (done, total) = rest.split_once(' ')?;
    Some((done.parse().ok()?, total.parse().ok()?))
}

/// Whether `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Whether `taskset` can pin a run to one CPU here (asked once a process).
pub fn taskset_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Command::new("taskset")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The last non-empty line a run printed on standard error.
pub fn last_line(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_owned()
}

/// Why a game run stopped, from the result file it wrote (`RUSTING_RESULT_OUT`), never from its
/// standard error text: the stable code mapped to the CLI's code and exit outcome, and the whole
/// message. `run` names the configuration in the message (`the release run`); a run that wrote no
/// result (killed by a signal, say) is `RUN_FAILED` with its exit status and last error line.
pub fn run_failure(
    run: Option<&str>,
    result: Option<RunResult>,
    status: ExitStatus,
    stderr: &[u8],
) -> Failure {
    let prefix = run
        .map(|name| format!("the {name} run: "))
        .unwrap_or_default();
    let Some(result) = result else {
        let last = last_line(stderr);
        return Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!(
                "{prefix}the game exited with {status}{}",
                if last.is_empty() {
                    String::new()
                } else {
                    format!(": {last}")
                }
            ),
        );
    };
    let (code, outcome) = match result.code.as_str() {
        "REPLAY_DIVERGED" => ("REPLAY_DIVERGED", Outcome::Failed),
        "SYNCTEST_FAILED" => ("SYNCTEST_FAILED", Outcome::Failed),
        "UNDECLARED_STATE" => ("UNDECLARED_STATE", Outcome::Failed),
        "FLOAT_ENV_CHANGED" => ("FLOAT_ENV_CHANGED", Outcome::Failed),
        "NET_DESYNC" => ("NET_DESYNC", Outcome::Failed),
        "NET_FAILED" => ("NET_FAILED", Outcome::BuildOrRun),
        "SCRIPT_INVALID" => ("SCRIPT_INVALID", Outcome::BadInput),
        "REPLAY_INVALID" => ("REPLAY_INVALID", Outcome::BadInput),
        "SCENE_INVALID" => ("SCENE_INVALID", Outcome::BadInput),
        "PROJECT_INVALID" => ("PROJECT_INVALID", Outcome::BadInput),
        "JOB_PANICKED" => ("JOB_PANICKED", Outcome::BuildOrRun),
        _ => ("RUN_FAILED", Outcome::BuildOrRun),
    };
    Failure::new(code, outcome, format!("{prefix}{}", result.message))
}

/// Runs `executable` with `env` and a fresh result file (named by `tag`), passing its log lines
/// on: its summary when it ends well, else the failure its result names.
pub fn run_for_summary(
    executable: &Path,
    project: &Path,
    mut env: Vec<(&'static str, String)>,
    tag: &str,
) -> Result<String, Failure> {
    let result_file = result_path(tag);
    env.push(("RUSTING_RESULT_OUT", result_file.display().to_string()));
    let output = GameRun {
        executable,
        project,
        env,
        one_cpu: false,
    }
    .output_relaying_logs()
    .map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("cannot start the game: {e}"),
        )
    })?;
    let result = take_result(&result_file);
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned());
    }
    Err(run_failure(None, result, output.status, &output.stderr))
}

/// A fresh path for a run's result file in the system's temporary directory.
pub fn result_path(tag: &str) -> PathBuf {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "rusting-result-{}-{n}-{}.json",
        std::process::id(),
        tag.replace(' ', "-")
    ))
}

/// Reads and removes the result file at `path`.
pub fn take_result(path: &Path) -> Option<RunResult> {
    let result = RunResult::load(path);
    let _ = std::fs::remove_file(path);
    result
}

#[cfg(test)]
mod tests {
    use super::{first_error, progress_line};

    /// Progress lines are told from log lines. Fails if a log line that starts like one is taken.
    #[test]
    fn progress_lines_are_told_from_logs() {
        assert_eq!(
            progress_line(b"rusting-progress 600 216000\n"),
            Some((600, 216000))
        );
        assert_eq!(progress_line(b"rusting-progress soon\n"), None);
        assert_eq!(progress_line(b"[tick 5] INFO rusting-progress 1 2\n"), None);
    }

    /// Fails if the build error loses the place it points at, or picks a warning's place.
    #[test]
    fn a_build_error_names_its_place() {
        let stderr = "warning: unused import\n  --> src/a.rs:1:5\nerror[E0308]: mismatched types\n   --> src/game.rs:12:20\n    |\nerror: could not compile `game`\n";
        assert_eq!(
            first_error(stderr),
            "error[E0308]: mismatched types (at src/game.rs:12:20)"
        );
        assert_eq!(
            first_error("error: could not compile `game`\n"),
            "error: could not compile `game`"
        );
        assert_eq!(first_error(""), "cargo printed nothing");
    }
}
