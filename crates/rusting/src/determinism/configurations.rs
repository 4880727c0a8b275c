//! The ways `rusting determinism` builds and runs a game, what each one's difference means, and the
//! environment each run gets.
//!
//! This module must never start a process; it only says how one is started.

use std::path::{Path, PathBuf};

use crate::game_build::GameRun;

/// One way of building and running the game.
pub struct Configuration {
    pub name: &'static str,
    pub release: bool,
    pub one_cpu: bool,
    pub uneven: bool,
    /// The verdict when this configuration differs from the debug build (and each reproduces its
    /// own result), and its usual causes.
    pub verdict: &'static str,
    pub hint: &'static str,
}

/// The debug build, every other run is compared with.
pub const DEBUG: Configuration = Configuration {
    name: "debug",
    release: false,
    one_cpu: false,
    uneven: false,
    verdict: "",
    hint: "",
};

/// Another run of the debug build, the same way: told apart from build differences.
pub const DEBUG_AGAIN: Configuration = Configuration {
    name: "debug again",
    release: false,
    one_cpu: false,
    uneven: false,
    verdict: "",
    hint: "",
};

/// The verdict when runs of one build differ from each other.
pub const RACE_VERDICT: &str = "the same build gives different results from run to run";

/// Its usual causes.
pub const RACE_HINT: &str = "process-dependent state: hash-map order, addresses, clocks, thread \
                             timing or randomness seeded by the process";

/// The other configurations, each compared with the debug build.
pub const CONFIGURATIONS: [Configuration; 3] = [
    Configuration {
        name: "release",
        release: true,
        one_cpu: false,
        uneven: false,
        verdict: "debug and release differ",
        hint: "code generation or build settings: `cfg!(debug_assertions)`, integer overflow \
               checks, fused multiply-add or float math outside sim_math",
    },
    Configuration {
        name: "release on one CPU",
        release: true,
        one_cpu: true,
        uneven: false,
        verdict: "the one-CPU run differs",
        hint: "results that depend on the thread count: parallel float reductions, work split \
               by thread, task completion order",
    },
    Configuration {
        name: "release in uneven frames",
        release: true,
        one_cpu: false,
        uneven: true,
        verdict: "the run in uneven frames differs",
        hint: "frame pacing reaching the simulation: the frame clock, or input or state changed \
               in `Update` instead of a fixed system",
    },
];

impl Configuration {
    /// Whether `self` and `other` run the same binary the same way (the debug build's repeats).
    pub fn same_as(&self, other: &Configuration) -> bool {
        (self.release, self.one_cpu, self.uneven) == (other.release, other.one_cpu, other.uneven)
    }
}

/// The two builds every configuration runs one of.
pub struct Binaries {
    pub debug: PathBuf,
    pub release: PathBuf,
}

/// What every run of one check shares: the project, the builds, the ticks and the input script.
pub struct Runs<'a> {
    pub project: &'a Path,
    pub binaries: &'a Binaries,
    pub script: Option<&'a Path>,
}

impl Runs<'_> {
    /// The command that runs `configuration` for `ticks` ticks with the `RUSTING_*` variables in
    /// `env` added to what every run gets.
    pub fn command(
        &self,
        configuration: &Configuration,
        ticks: u64,
        mut env: Vec<(&'static str, String)>,
    ) -> std::process::Command {
        env.extend([
            ("RUSTING_HEADLESS_TICKS", ticks.to_string()),
            // Every configuration names state a tick changed that nobody declared, release too.
            ("RUSTING_CHECK_UNDECLARED", "1".to_owned()),
            // And a change of the floating-point environment fails the run, naming its system.
            ("RUSTING_FLOAT_ENV", "error".to_owned()),
            (
                "RUSTING_HEADLESS_PACING",
                if configuration.uneven {
                    "uneven"
                } else {
                    "steady"
                }
                .to_owned(),
            ),
        ]);
        if let Some(script) = self.script {
            env.push(("RUSTING_INPUT_SCRIPT", script.display().to_string()));
        }
        let executable = if configuration.release {
            &self.binaries.release
        } else {
            &self.binaries.debug
        };
        GameRun {
            executable,
            project: self.project,
            env,
            one_cpu: configuration.one_cpu,
        }
        .command()
    }
}

/// The name of run `k` of `configurations`: repeats of the same configuration are numbered.
pub fn run_name(configurations: &[&Configuration], k: usize) -> String {
    let name = configurations[k].name;
    let same = configurations.iter().filter(|c| c.name == name).count();
    if same < 2 {
        return name.to_owned();
    }
    let nth = configurations[..=k]
        .iter()
        .filter(|c| c.name == name)
        .count();
    format!("{name} {nth}")
}
