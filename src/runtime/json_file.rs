//! Reading and writing the engine's JSON files (projects, scripts, reports) in one way.
//!
//! Reading gives the I/O error or the parser's line and column; each file kind turns that into its
//! own typed error naming the file. Writing goes to a temporary file in the same directory and is
//! then renamed over the target, so a crash or a full disk never leaves a half-written file where a
//! good one was. This module must never write anywhere but the target's directory.

use std::path::Path;

use serde::de::DeserializeOwned;

/// Why a JSON file could not be read.
pub(crate) enum ReadError {
    /// The file could not be read.
    Io(String),
    /// The text is not the expected JSON: 1-based line and column, and the parser's message.
    Json(usize, usize, String),
}

impl ReadError {
    /// Turns the error into a file kind's own error: `io` gets the system's message, `json` the
    /// line, column and the parser's message.
    pub(crate) fn into<E>(
        self,
        io: impl FnOnce(String) -> E,
        json: impl FnOnce(usize, usize, String) -> E,
    ) -> E {
        match self {
            ReadError::Io(message) => io(message),
            ReadError::Json(line, column, message) => json(line, column, message),
        }
    }
}

/// Reads and parses the JSON file at `path`.
pub(crate) fn read<T: DeserializeOwned>(path: &Path) -> Result<T, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|e| ReadError::Io(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| ReadError::Json(e.line(), e.column(), e.to_string()))
}

/// Renames `temporary` over `target`, refusing a `target` that exists and is not a regular file.
pub fn replace_with(temporary: &Path, target: &Path) -> std::io::Result<()> {
    refuse_special(target)?;
    std::fs::rename(temporary, target)
}

/// An error when `path` exists and is not a regular file.
fn refuse_special(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_file() => Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "exists and is not a regular file (a link, directory or device); not replacing it",
        )),
        _ => Ok(()),
    }
}

/// Writes to `path` through a temporary file beside it and a rename, as [`write_atomically`] does,
/// with `write` streaming the contents into a buffered writer: for a file too large to build in
/// memory first. `io_error` turns an I/O error into the caller's error; the temporary file is
/// removed on every error, `write`'s own included.
pub fn write_atomically_with<E>(
    path: &Path,
    io_error: impl Fn(std::io::Error) -> E,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<(), E>,
) -> Result<(), E> {
    refuse_special(path).map_err(&io_error)?;
    let temporary = temporary_beside(path);
    let written = (|| {
        let file = std::fs::File::create(&temporary).map_err(&io_error)?;
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, file);
        write(&mut out)?;
        out.into_inner()
            .map_err(|e| io_error(e.into_error()))?
            .sync_all()
            .map_err(&io_error)?;
        std::fs::rename(&temporary, path).map_err(&io_error)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// The temporary file a write to `path` goes through: hidden, beside it, named for this process.
fn temporary_beside(path: &Path) -> std::path::PathBuf {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()))
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename, so a reader never
/// sees half a file. Refuses a `path` that exists and is not a regular file (a symbolic link,
/// directory or device would be replaced by the rename), and removes the temporary file on every
/// error.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    refuse_special(path)?;
    let temporary = temporary_beside(path);
    std::fs::write(&temporary, bytes)
        .and_then(|()| std::fs::rename(&temporary, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&temporary);
        })
}
