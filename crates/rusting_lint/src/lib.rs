//! The source lint of `rusting validate`: finds operations that break determinism in the code of a
//! game crate that runs in the fixed schedules (`FixedUpdate` and the other `Fixed*` schedules),
//! and reports each with a stable code, a severity, and its file, line and column.
//!
//! The lint parses every `src/**/*.rs` file with `syn` (no compiler, no build), finds the systems
//! that `add_systems` puts into a fixed schedule, follows the calls they make to the crate's own
//! functions, and runs every rule over that code:
//!
//! | Code | What it catches |
//! |------|-----------------|
//! | `LINT_TRANSCENDENTAL` | `sin`, `cos`, `atan2`, `exp`, `ln`, `powf`, `powi` and the like on floats |
//! | `LINT_GLAM_TRANSCENDENTAL` | glam/bevy helpers that call them inside (`Quat::from_euler`, `slerp`, `rotate_y`) |
//! | `LINT_MUL_ADD` | `mul_add` |
//! | `LINT_HASH_ITERATION` | iteration over a `HashMap` / `HashSet` |
//! | `LINT_WALL_CLOCK` | `Instant::now`, `SystemTime` |
//! | `LINT_PROCESS_RANDOMNESS` | `thread_rng`, `rand::random`, `Uuid::new_v4`, `OsRng`, ... |
//! | `LINT_FRAME_TIME` | `Res<Time>`, `delta_secs()`, `FrameTime::delta` and the other frame fields |
//! | `LINT_PARALLEL_FLOAT_REDUCTION` | `sum`/`reduce`/`fold` over a rayon parallel iterator |
//! | `LINT_POINTER_ADDRESS` | a pointer cast to an integer, `.addr()`, `.expose_provenance()`, `{:p}` |
//! | `LINT_SHARED_PUSH_IN_PARALLEL` | a rayon parallel closure that pushes into a locked collection (`.lock()` then `.push`) or sends into a channel |
//! | `LINT_THREAD_SPAWN` | `thread::spawn`, `thread::scope`, `thread::Builder::new()...spawn`, `rayon::spawn` |
//! | `LINT_CHANNEL_RECEIVE` | `try_recv`, `recv`, `recv_timeout`, `recv_deadline`, `try_iter` |
//! | `LINT_ATOMIC_FLOAT` | `AtomicF32`/`AtomicF64`, or `fetch_update`/`compare_exchange` over `from_bits`/`to_bits` |
//! | `LINT_TIME_BUDGET` | a loop bounded by a clock (`while start.elapsed() < budget`, `if ... elapsed() ... { break }`) |
//! | `LINT_SECOND_FIXED_LOOP` | `TimePlugin`, or `MinimalPlugins`/`DefaultPlugins` without `.disable::<TimePlugin>()`, anywhere in the crate |
//! | `LINT_FLOAT_CONTROL` | a write to a thread's floating-point control register (`_mm_setcsr`, `asm!` with `ldmxcsr`, `msr fpcr`), anywhere in the crate |
//! | `LINT_ALLOW_INVALID` | an allow comment without a reason or with an unknown code |
//! | `LINT_ALLOW_UNUSED` | (warning) an allow comment that silences nothing |
//!
//! A line is silenced with `// rusting: allow(LINT_CODE) reason: ...` on it or on the line above.
//! Each module's documentation states the approximations it makes without a type checker.
//!
//! [`width_fields`] also lists the `usize`/`isize` fields of declared simulation types, which
//! `rusting validate` reports in `CrossPlatform` projects.
//!
//! This crate must never depend on bevy or the engine: it reads source text only.

mod allow;
mod error;
mod finding;
mod float_control;
mod index;
mod infer;
mod reach;
mod report;
mod rules;
mod schedule;
mod second_loop;
mod source;
mod types;
mod walk;
mod widths;

use std::path::Path;

pub use error::LintError;
pub use finding::{Finding, LintCode, LintReport, Severity};
pub use widths::{WidthField, width_fields};

use source::SourceFile;

/// Lints the crate in `crate_dir`: every `.rs` file under `crate_dir/src`, read in path order.
/// Findings name files relative to `crate_dir` (`src/game.rs`).
pub fn lint_crate(crate_dir: &Path) -> Result<LintReport, LintError> {
    let mut files = Vec::new();
    for (name, path) in source::list_sources(crate_dir)? {
        let text = source::read_source(&path)?;
        files.push(SourceFile::parse(&name, text)?);
    }
    Ok(reach::lint_files(&files))
}

/// Lints sources given as `(file name, text)` pairs as one crate (in the order given).
pub fn lint_sources(sources: &[(&str, &str)]) -> Result<LintReport, LintError> {
    let files = sources
        .iter()
        .map(|(name, text)| SourceFile::parse(name, (*text).to_owned()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(reach::lint_files(&files))
}

/// Lints one file as a crate of its own and returns its findings.
pub fn lint_source(file_name: &str, source: &str) -> Result<Vec<Finding>, LintError> {
    lint_sources(&[(file_name, source)]).map(|report| report.findings)
}
