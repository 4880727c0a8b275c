//! `rusting`: the command line of the Rusting engine.
//!
//! `main` only parses the arguments and turns the outcome into an exit code; each subcommand lives
//! in a file of its own. Exit codes and error codes are listed in `docs/cli.md`.

mod blame;
mod cli;
mod cook;
mod determinism;
mod exit;
mod game_build;
mod game_identity;
mod hashes;
#[cfg(test)]
mod hashes_fuzz;
mod hashes_machines;
mod html_report;
mod lockstep;
mod new;
mod outputs;
mod replay;
mod run;
mod run_net;
mod validate;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    cli::Cli::parse().run()
}
