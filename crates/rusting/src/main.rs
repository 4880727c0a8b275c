//! `rusting`: the command line of the Rusting engine.
//!
//! `main` only parses the arguments and turns the outcome into an exit code; each subcommand lives
//! in a file of its own. Exit codes are listed in `docs/cli.md`: 0 for success, 2 for a usage
//! error (clap reports those itself).

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    cli::Cli::parse().run()
}
