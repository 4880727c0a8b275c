//! What the lint reports: [`LintCode`], [`Severity`], [`Finding`] and [`LintReport`].
//!
//! Codes are stable strings (`LINT_TRANSCENDENTAL`, ...) that a project may name in an allow
//! comment and that `rusting validate --json` prints; a code never changes meaning once released.
//! This module owns the vocabulary only; it must never decide what is a finding.

use proc_macro2::Span;
use serde::{Deserialize, Serialize};

/// How bad a finding is: an error fails `rusting validate`, a warning does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Severity {
    /// Reported, but the project still validates.
    Warning,
    /// The project does not validate.
    Error,
}

/// The stable code of each rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum LintCode {
    /// A platform transcendental (`sin`, `atan2`, `exp`, `powf`, ...) on `f32`/`f64`.
    #[serde(rename = "LINT_TRANSCENDENTAL")]
    Transcendental,
    /// A glam or bevy rotation helper that calls platform `sin`/`cos`/`acos` inside
    /// (`Quat::from_euler`, `Quat::slerp`, `Transform::rotate_y`, ...).
    #[serde(rename = "LINT_GLAM_TRANSCENDENTAL")]
    GlamTranscendental,
    /// A fused multiply-add (`mul_add`).
    #[serde(rename = "LINT_MUL_ADD")]
    MulAdd,
    /// Iteration over a `HashMap` or `HashSet`, whose order is not defined.
    #[serde(rename = "LINT_HASH_ITERATION")]
    HashIteration,
    /// A wall clock read (`Instant::now`, `SystemTime`).
    #[serde(rename = "LINT_WALL_CLOCK")]
    WallClock,
    /// Randomness seeded by the process (`thread_rng`, `rand::random`, `Uuid::new_v4`, ...).
    #[serde(rename = "LINT_PROCESS_RANDOMNESS")]
    ProcessRandomness,
    /// The frame clock read in fixed code (`Res<Time>`, `delta_secs`, `FrameTime::delta`, ...).
    #[serde(rename = "LINT_FRAME_TIME")]
    FrameTime,
    /// A float reduction over a parallel iterator, whose order depends on the threads.
    #[serde(rename = "LINT_PARALLEL_FLOAT_REDUCTION")]
    ParallelFloatReduction,
    /// A value taken from a memory address (a pointer cast to an integer, `.addr()`, `{:p}`).
    #[serde(rename = "LINT_POINTER_ADDRESS")]
    PointerAddress,
    /// A parallel closure that pushes into shared state (a locked collection, a channel), so the
    /// items land in the order the threads get there.
    #[serde(rename = "LINT_SHARED_PUSH_IN_PARALLEL")]
    SharedPushInParallel,
    /// A thread started from fixed code (`thread::spawn`, `thread::scope`, `Builder::spawn`).
    #[serde(rename = "LINT_THREAD_SPAWN")]
    ThreadSpawn,
    /// A channel receive (`try_recv`, `recv`, `try_iter`, ...), whose result depends on another
    /// thread's speed.
    #[serde(rename = "LINT_CHANNEL_RECEIVE")]
    ChannelReceive,
    /// Floats accumulated through atomics (`AtomicF32`/`AtomicF64`, or float bits in an integer
    /// atomic), in the order the threads arrive.
    #[serde(rename = "LINT_ATOMIC_FLOAT")]
    AtomicFloat,
    /// A loop bounded by a clock, which does more work on a faster machine.
    #[serde(rename = "LINT_TIME_BUDGET")]
    TimeBudget,
    /// bevy's `TimePlugin` (alone, or in `MinimalPlugins` / `DefaultPlugins`), whose fixed loop
    /// runs the fixed schedules a second time from the wall clock.
    #[serde(rename = "LINT_SECOND_FIXED_LOOP")]
    SecondFixedLoop,
    /// A write to a thread's floating-point control register (`_mm_setcsr`, `asm!` with
    /// `ldmxcsr`, a write to FPCR), anywhere in the crate.
    #[serde(rename = "LINT_FLOAT_CONTROL")]
    FloatControl,
    /// An allow comment without a reason, or naming no known code.
    #[serde(rename = "LINT_ALLOW_INVALID")]
    AllowInvalid,
    /// An allow comment that silences nothing.
    #[serde(rename = "LINT_ALLOW_UNUSED")]
    AllowUnused,
}

impl LintCode {
    /// Every code, in the order the documentation lists them.
    pub const ALL: [LintCode; 18] = [
        LintCode::Transcendental,
        LintCode::GlamTranscendental,
        LintCode::MulAdd,
        LintCode::HashIteration,
        LintCode::WallClock,
        LintCode::ProcessRandomness,
        LintCode::FrameTime,
        LintCode::ParallelFloatReduction,
        LintCode::PointerAddress,
        LintCode::SharedPushInParallel,
        LintCode::ThreadSpawn,
        LintCode::ChannelReceive,
        LintCode::AtomicFloat,
        LintCode::TimeBudget,
        LintCode::SecondFixedLoop,
        LintCode::FloatControl,
        LintCode::AllowInvalid,
        LintCode::AllowUnused,
    ];

    /// The stable code, as written in reports and allow comments.
    pub fn as_str(self) -> &'static str {
        match self {
            LintCode::Transcendental => "LINT_TRANSCENDENTAL",
            LintCode::GlamTranscendental => "LINT_GLAM_TRANSCENDENTAL",
            LintCode::MulAdd => "LINT_MUL_ADD",
            LintCode::HashIteration => "LINT_HASH_ITERATION",
            LintCode::WallClock => "LINT_WALL_CLOCK",
            LintCode::ProcessRandomness => "LINT_PROCESS_RANDOMNESS",
            LintCode::FrameTime => "LINT_FRAME_TIME",
            LintCode::ParallelFloatReduction => "LINT_PARALLEL_FLOAT_REDUCTION",
            LintCode::PointerAddress => "LINT_POINTER_ADDRESS",
            LintCode::SharedPushInParallel => "LINT_SHARED_PUSH_IN_PARALLEL",
            LintCode::ThreadSpawn => "LINT_THREAD_SPAWN",
            LintCode::ChannelReceive => "LINT_CHANNEL_RECEIVE",
            LintCode::AtomicFloat => "LINT_ATOMIC_FLOAT",
            LintCode::TimeBudget => "LINT_TIME_BUDGET",
            LintCode::SecondFixedLoop => "LINT_SECOND_FIXED_LOOP",
            LintCode::FloatControl => "LINT_FLOAT_CONTROL",
            LintCode::AllowInvalid => "LINT_ALLOW_INVALID",
            LintCode::AllowUnused => "LINT_ALLOW_UNUSED",
        }
    }

    /// The code named by `text`, if it is one.
    pub fn parse(text: &str) -> Option<LintCode> {
        LintCode::ALL.into_iter().find(|code| code.as_str() == text)
    }

    /// How bad a finding with this code is.
    pub fn severity(self) -> Severity {
        match self {
            LintCode::AllowUnused => Severity::Warning,
            _ => Severity::Error,
        }
    }

    /// Whether an allow comment may silence this code (the allow codes themselves cannot be).
    pub fn can_be_allowed(self) -> bool {
        !matches!(self, LintCode::AllowInvalid | LintCode::AllowUnused)
    }
}

impl std::fmt::Display for LintCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem at one place in the source.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Finding {
    /// The file, relative to the crate directory with `/` separators (`src/game.rs`), or the name
    /// given to [`crate::lint_source`].
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
    /// The rule.
    pub code: LintCode,
    /// How bad it is.
    pub severity: Severity,
    /// What is wrong, where it runs from, and what to use instead.
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let level = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(
            f,
            "{}:{}:{}: {level} {}: {}",
            self.file, self.line, self.column, self.code, self.message
        )
    }
}

/// Everything the lint found in one crate.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LintReport {
    /// The files read, in the order they were linted.
    pub files: Vec<String>,
    /// The fixed systems found (`file: name`), in the order they were found.
    pub fixed_systems: Vec<String>,
    /// Every function the lint walked as fixed code (`file: name`, the systems included), sorted.
    pub fixed_functions: Vec<String>,
    /// Every finding, sorted by file, line, column and code.
    pub findings: Vec<Finding>,
}

impl LintReport {
    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

/// A rule's finding inside one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hit {
    /// The rule.
    pub code: LintCode,
    /// 1-based line.
    pub line: usize,
    /// 1-based column in characters.
    pub column: usize,
    /// What is wrong (the walker appends where the code runs from).
    pub message: String,
}

impl Hit {
    /// A hit at the start of `span`.
    pub fn at(code: LintCode, span: Span, message: String) -> Hit {
        let start = span.start();
        Hit {
            code,
            line: start.line,
            column: start.column + 1,
            message,
        }
    }
}
