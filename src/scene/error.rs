//! [`SceneError`]: everything that can be wrong with a scene file, with the file and the place.

use std::path::PathBuf;

/// Why a scene cannot be cooked or loaded. Every variant names the file; those about content name
/// the place as a JSON pointer (RFC 6901, e.g. `/entities/3/components/Collider/shape`).
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SceneError {
    /// The file could not be read.
    #[error("{file}: cannot read the scene: {message}", file = file.display())]
    Io {
        /// The scene file.
        file: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// The file is not valid JSON.
    #[error("{file}:{line}:{column}: not valid JSON: {message}", file = file.display())]
    Json {
        /// The scene file.
        file: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The scene's `format_version` is missing or not one this engine reads.
    #[error("{file}: format_version {found} is not supported (this engine reads {supported})", file = file.display())]
    UnsupportedVersion {
        /// The scene file.
        file: PathBuf,
        /// What the file says (`missing` when absent).
        found: String,
        /// The version this engine reads.
        supported: u32,
    },
    /// A component name the engine does not know.
    #[error("{file}: {pointer}: unknown component `{name}`", file = file.display())]
    UnknownComponent {
        /// The scene file.
        file: PathBuf,
        /// Where it is.
        pointer: String,
        /// The name found.
        name: String,
    },
    /// A value that is missing, of the wrong type, or out of range.
    #[error("{file}: {pointer}: {reason}", file = file.display())]
    BadValue {
        /// The scene file.
        file: PathBuf,
        /// Where it is.
        pointer: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Two entities share an id.
    #[error("{file}: {pointer}: id {id} is already used at {first}", file = file.display())]
    DuplicateId {
        /// The scene file.
        file: PathBuf,
        /// Where the second use is.
        pointer: String,
        /// The id.
        id: u64,
        /// Where the first use is.
        first: String,
    },
}
