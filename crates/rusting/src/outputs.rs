//! Checks on the files a command will write, made before anything builds or runs: an output must
//! not be one of the command's inputs or another of its outputs, must not name anything but a
//! regular file (a symbolic link, directory or device would be replaced), and its directory must
//! exist. A refused output is `OUTPUT_INVALID` (exit code 3), naming the option and the path.
//!
//! This module must never create, write or remove a file.

use std::path::{Path, PathBuf};

use crate::exit::Failure;

/// `path` made absolute through its directory (which must exist), so two spellings of one file
/// compare equal; `None` when the directory does not exist.
fn resolved(path: &Path) -> Option<PathBuf> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let directory = directory.canonicalize().ok()?;
    let name = path.file_name()?;
    Some(directory.join(name))
}

/// Where `path` leads: the file itself when it exists (links followed), else its resolved path.
fn identity(path: &Path) -> Option<PathBuf> {
    path.canonicalize().ok().or_else(|| resolved(path))
}

/// Checks `outputs` (`(option, path)`) against each other and against `inputs` (`(option, path)`).
pub fn check(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Result<(), Failure> {
    let refuse = |option: &str, path: &Path, why: String| {
        Failure::bad_input(
            "OUTPUT_INVALID",
            format!("{option} {}: {why}", path.display()),
        )
    };
    let mut seen: Vec<(&str, PathBuf)> = Vec::new();
    for (option, path) in outputs {
        let Some(target) = resolved(path) else {
            return Err(refuse(
                option,
                path,
                "its directory does not exist".to_owned(),
            ));
        };
        if let Ok(meta) = std::fs::symlink_metadata(path)
            && !meta.file_type().is_file()
        {
            let kind = if meta.file_type().is_symlink() {
                "a symbolic link"
            } else if meta.is_dir() {
                "a directory"
            } else {
                "not a regular file"
            };
            return Err(refuse(
                option,
                path,
                format!("exists and is {kind}; writing would replace it"),
            ));
        }
        for (input_option, input) in inputs {
            if identity(input).is_some_and(|i| i == target) {
                return Err(refuse(
                    option,
                    path,
                    format!("is also the input {input_option}; writing would destroy it"),
                ));
            }
        }
        if let Some((other, _)) = seen.iter().find(|(_, t)| *t == target) {
            return Err(refuse(option, path, format!("is also the output {other}")));
        }
        seen.push((option, target));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;
    use std::path::Path;

    /// Fails if an output may equal an input (spelled differently), another output, a directory
    /// or a symbolic link, or may sit in a missing directory.
    #[test]
    fn outputs_are_refused_up_front() {
        let dir = std::env::temp_dir().join(format!("rusting-outputs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let script = dir.join("script.json");
        std::fs::write(&script, "{}").unwrap();
        let other_spelling = dir.join("sub/../script.json");
        let code = |r: Result<(), crate::exit::Failure>| r.err().map(|f| (f.code, f.message));
        let refused = code(check(
            &[("--script", &script)],
            &[("--hashes-out", &other_spelling)],
        ));
        assert!(
            refused
                .as_ref()
                .is_some_and(|(c, m)| *c == "OUTPUT_INVALID" && m.contains("the input --script")),
            "{refused:?}"
        );
        let out = dir.join("out.json");
        let twice = code(check(&[], &[("--record", &out), ("--hashes-out", &out)]));
        assert!(twice.is_some_and(|(_, m)| m.contains("the output --record")));
        let missing = code(check(
            &[],
            &[("--report", Path::new("/no/such/dir/r.html"))],
        ));
        assert!(missing.is_some_and(|(_, m)| m.contains("directory does not exist")));
        let directory = code(check(&[], &[("--report", &dir.join("sub"))]));
        assert!(directory.is_some_and(|(_, m)| m.contains("a directory")));
        #[cfg(unix)]
        {
            let link = dir.join("link.json");
            std::os::unix::fs::symlink(&script, &link).unwrap();
            let linked = code(check(&[], &[("--hashes-out", &link)]));
            assert!(linked.is_some_and(|(_, m)| m.contains("symbolic link")));
        }
        assert!(check(&[("--script", &script)], &[("--hashes-out", &out)]).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
