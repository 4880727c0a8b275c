//! Log output for games: `info!`, `warn!` and the rest reach standard error, each line stamped
//! with the fixed tick the app stood at, filtered by `RUST_LOG` (default `info`).
//!
//! [`init_logging`] sets the process's tracing subscriber once (`rusting_game!` calls it); the
//! engine `App` publishes each tick it runs to [`LOG_TICK`] for the stamp. A re-simulated tick
//! (a rollback) is stamped `tick N (again)`. This module must never change simulation state: it
//! only reads two atomics the app writes.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bevy::log::tracing_subscriber::fmt::format::Writer;
use bevy::log::tracing_subscriber::fmt::time::FormatTime;

/// The tick log lines are stamped with: the last tick the engine ran (ticks completed after it).
pub static LOG_TICK: AtomicU64 = AtomicU64::new(0);

/// Whether that tick was a re-simulation.
pub static LOG_RESIMULATING: AtomicBool = AtomicBool::new(false);

/// The filter when `RUST_LOG` is not set: the game's and the engine's `info` and above, with the
/// graphics stack's chatter held back.
pub const DEFAULT_FILTER: &str = "info,wgpu=error,naga=warn";

/// Stamps a log line with the tick.
struct TickStamp;

impl FormatTime for TickStamp {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        let tick = LOG_TICK.load(Ordering::Relaxed);
        if LOG_RESIMULATING.load(Ordering::Relaxed) {
            write!(w, "tick {tick} (again)")
        } else {
            write!(w, "tick {tick}")
        }
    }
}

/// Sets up log output for this process: lines on standard error stamped with the tick, filtered
/// by `RUST_LOG` (a malformed `RUST_LOG` falls back to [`DEFAULT_FILTER`]). Does nothing if a
/// subscriber is already set.
pub fn init_logging() {
    use bevy::log::tracing_subscriber::prelude::*;
    use bevy::log::tracing_subscriber::{EnvFilter, fmt, registry};
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|value| EnvFilter::try_new(value).ok())
        .unwrap_or_else(|| EnvFilter::new(DEFAULT_FILTER));
    let layer = fmt::layer()
        .with_writer(std::io::stderr)
        // Colours only on a terminal: piped or captured lines stay plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_timer(TickStamp)
        .with_target(false);
    let _ = registry().with(filter).with(layer).try_init();
}
