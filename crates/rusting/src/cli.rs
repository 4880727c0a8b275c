//! The command-line grammar (clap derive): the doc comments here are the `--help` text.

use std::process::ExitCode;

use clap::Parser;

/// Rusting: a deterministic game engine on Bevy.
///
/// The same scene, seed and input give the same bits on every run, build and thread count. This
/// tool proves it for a project, replays recorded sessions and checks a project before shipping.
#[derive(Parser, Debug)]
#[command(
    name = "rusting",
    version,
    about,
    long_about,
    arg_required_else_help = true
)]
pub struct Cli {}

impl Cli {
    /// Runs the chosen subcommand and returns the process exit code.
    pub fn run(self) -> ExitCode {
        ExitCode::SUCCESS
    }
}
