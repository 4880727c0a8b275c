//! What a run leaves behind: replays and their files, the recorder that writes them, the state of
//! one tick down to the field, and state-hash reports.
//!
//! - `replay` holds [`Replay`] (a recorded session) and its checks; `replay_file` reads and
//!   writes its files; `replay_compact` the compact `.rply` form; `replay_journal` the append-only journal a
//!   recording writes as it runs, `journal_read` reads it a record at a time and `journal_finish`
//!   turns it into the compact replay in bounded memory; `replay_stream` reads a replay a window
//!   of ticks at a time for playback;
//! - `recorder` holds [`Recorder`] (into memory or a journal) and [`RecordingAppExt`], which
//!   records an engine `App`;
//! - `detail` holds [`StateDetail`] (one tick's state down to the field) and [`compare_details`];
//! - `report` holds [`StateHashReport`] on disk and [`compare_reports`].
//!
//! This layer stands on the engine (a recorder is a `FrameRecorder` of the engine's frame
//! stepper) and below the tools that drive apps with what it holds (`determinism`): it never
//! plays a replay or steps an app.

pub mod detail;
mod journal_finish;
mod journal_format;
mod journal_read;
pub mod recorder;
pub mod replay;
pub mod replay_compact;
mod replay_file;
pub mod replay_journal;
mod replay_stream;
pub mod report;

pub use detail::{
    ComponentDetail, DetailDifference, Differing, EntityDetail, FieldDifference, GpuDetail,
    MAX_LISTED_DIFFERENCES, StateDetail, compare_details,
};
pub use journal_finish::WrittenReplay;
pub use recorder::{Recorder, RecordingAppExt};
pub use replay::{Replay, ReplayBlame, ReplayError, ReplayFrame};
pub use replay_compact::ReplaySummary;
pub use replay_stream::{ReplayStream, ReplayWindows};
pub use report::{ReportDifference, ReportError, StateHashReport, compare_reports};
