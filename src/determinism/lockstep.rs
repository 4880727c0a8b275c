//! Lockstep: a headless run that `rusting determinism` steps one tick at a time, so that blame for
//! a divergence comes from the very processes that diverged.
//!
//! With `RUSTING_LOCKSTEP=1`, a game's headless run announces every tick's world-state hash on
//! standard output as a line `rusting-tick <tick> <hash, 16 hex digits>`, then waits for one
//! command line on standard input:
//!
//! - `next`: run on to the next tick;
//! - `detail <file>`: write the [`StateDetail`] of this tick (every simulation entity and resource
//!   down to the field) to `<file>`, atomically, then exit with code 0;
//! - end of input: run on without waiting (the checker has gone).
//!
//! The checker reads every configuration's line for a tick, compares the hashes, and either lets
//! them all go on or asks the first two that differ for their detail of that tick: no rerun decides
//! the blame, so a race that differs from process to process is blamed as reliably as a build
//! difference. The protocol's lines are the only output on standard output that starts with
//! `rusting-tick `. This module must never change simulation state.

use std::io::{BufRead, Write};
use std::path::Path;

use bevy::prelude::World;

use super::detail::StateDetail;
use super::hash::StateHashes;

/// The environment variable that turns lockstep on.
pub const LOCKSTEP_VARIABLE: &str = "RUSTING_LOCKSTEP";

/// The prefix of the line announcing a tick.
pub const TICK_LINE: &str = "rusting-tick";

/// What the checker asked after a tick.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Run on.
    Next,
    /// Write this tick's detail to the file and stop.
    Detail(String),
    /// The checker has gone: run on without asking again.
    Gone,
}

impl Command {
    /// Parses a command line (without its newline); `None` for anything else.
    pub fn parse(line: &str) -> Option<Command> {
        let line = line.trim_end();
        match line.split_once(' ') {
            None if line == "next" => Some(Command::Next),
            Some(("detail", file)) if !file.is_empty() => Some(Command::Detail(file.to_owned())),
            _ => None,
        }
    }
}

/// The tick hook of a lockstep run (see the module docs).
#[derive(Default)]
pub struct Lockstep {
    gone: bool,
}

impl Lockstep {
    /// Announces tick `tick` and waits for the checker's command; returns it.
    pub fn after_tick(&mut self, world: &mut World, tick: u64) -> Command {
        if self.gone {
            return Command::Gone;
        }
        let hash = world
            .resource::<StateHashes>()
            .get(tick)
            .unwrap_or_default();
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, "{TICK_LINE} {tick} {hash:016x}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            self.gone = true;
            return Command::Gone;
        }
        drop(stdout);
        let mut line = String::new();
        let command = match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => Command::Gone,
            Ok(_) => Command::parse(&line).unwrap_or_else(|| {
                bevy::log::error!("lockstep: unknown command {line:?}; running on");
                Command::Gone
            }),
        };
        match &command {
            Command::Gone => self.gone = true,
            Command::Next => {}
            Command::Detail(file) => {
                let detail = StateDetail::capture(world, tick);
                if let Err(error) = detail.write(Path::new(file)) {
                    eprintln!("error: lockstep: {error}");
                    std::process::exit(1);
                }
                std::process::exit(0);
            }
        }
        command
    }
}

#[cfg(test)]
mod tests {
    use super::Command;

    #[test]
    fn commands_parse_and_nothing_else_does() {
        assert_eq!(Command::parse("next\n"), Some(Command::Next));
        assert_eq!(
            Command::parse("detail /tmp/a b.json\n"),
            Some(Command::Detail("/tmp/a b.json".into()))
        );
        assert_eq!(Command::parse("detail \n"), None);
        assert_eq!(Command::parse("nex"), None);
    }
}
