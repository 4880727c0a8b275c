//! [`LintError`]: why a crate could not be linted at all.
//!
//! A finding is not an error: errors are only for sources the lint cannot read or parse. This
//! module must never panic on bad input; every failure names the file (and the place, for syntax).

use std::path::PathBuf;

/// Why the lint could not run.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum LintError {
    /// The crate has no `src` directory, or it could not be listed.
    #[error("cannot list the sources in {dir}: {source}")]
    ListSources {
        /// The directory.
        dir: PathBuf,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// A source file could not be read (or is not UTF-8).
    #[error("cannot read {file}: {source}")]
    Read {
        /// The file.
        file: PathBuf,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// A source file is not valid Rust.
    #[error("{file}:{line}:{column}: cannot parse: {message}")]
    Parse {
        /// The file, as findings name it.
        file: String,
        /// 1-based line of the first syntax error.
        line: usize,
        /// 1-based column of the first syntax error.
        column: usize,
        /// What the parser said.
        message: String,
    },
}
