//! `rusting hashes diff <DIR> <DIR> [<DIR>...]`: state-hash reports gathered from many machines,
//! one directory a machine, as a CI job finds its matrix's artifacts after downloading them all
//! (`reports/linux-x86-64/starter.json`, `reports/macos-arm64/starter.json`, ...).
//!
//! Every `*.json` file in any of the directories is a report; the files of one name are compared
//! across the directories, each with the reference directory's (the first, or `--reference`), and
//! every one that differs is named with its first divergent tick and its blame. A report one
//! machine lacks is named too: a job that wrote nothing must not pass as agreement. This module
//! must never write a file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::exit::{Failure, Outcome};
use crate::hashes::{Compared, compare_with, load};

/// The names of the `*.json` files in `directory`.
fn report_names(directory: &Path) -> Result<BTreeSet<String>, Failure> {
    let entries = std::fs::read_dir(directory).map_err(|e| {
        Failure::new(
            "REPORT_INVALID",
            Outcome::BadInput,
            format!("{}: cannot list the reports: {e}", directory.display()),
        )
    })?;
    Ok(entries
        .flatten()
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name.ends_with(".json"))
        .collect())
}

/// Compares the reports of every name across `directories` (see the module docs).
pub fn diff_machines(
    directories: &[PathBuf],
    reference: Option<&Path>,
    json: bool,
) -> Result<String, Failure> {
    let reference_directory = reference.unwrap_or(&directories[0]);
    let bad = |message: String| Failure::new("REPORT_INVALID", Outcome::BadInput, message);
    if !reference_directory.is_dir() {
        return Err(bad(format!(
            "--reference {}: give one of the directories when comparing directories",
            reference_directory.display()
        )));
    }
    let mut listed = Vec::with_capacity(directories.len());
    for directory in directories {
        listed.push((directory, report_names(directory)?));
    }
    let names: BTreeSet<&String> = listed.iter().flat_map(|(_, names)| names).collect();
    if names.is_empty() {
        return Err(bad(format!(
            "no *.json reports in {}",
            directories
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut lines = vec![format!("reference: {}", reference_directory.display())];
    let mut scenes = Vec::new();
    let mut missing = Vec::new();
    let mut differing = 0;
    for name in names {
        let (present, absent): (Vec<_>, Vec<_>) = listed
            .iter()
            .map(|(directory, names)| (directory.join(name), names.contains(name)))
            .partition(|(_, here)| *here);
        missing.extend(absent.into_iter().map(|(path, _)| path));
        let preferred = reference_directory.join(name);
        let reference_path = if preferred.is_file() {
            preferred
        } else {
            present[0].0.clone()
        };
        let others: Vec<&Path> = present
            .iter()
            .map(|(path, _)| path.as_path())
            .filter(|path| *path != reference_path)
            .collect();
        let base = load(&reference_path)?;
        let Compared {
            lines: report_lines,
            entries,
            differing: here,
        } = compare_with(&base, &others)?;
        differing += here;
        if here == 0 {
            lines.push(format!(
                "{name}: all {} machines agree on all {} ticks and every entity",
                present.len(),
                base.ticks.len()
            ));
        } else {
            lines.push(format!(
                "{name}: {here} of {} machines differ from {}",
                others.len(),
                reference_path.display()
            ));
            lines.extend(report_lines.into_iter().map(|l| format!("  {l}")));
        }
        scenes.push(serde_json::json!({
            "report": name,
            "reference": reference_path.display().to_string(),
            "ticks": base.ticks.len(),
            "compared": entries,
        }));
    }
    for path in &missing {
        lines.push(format!(
            "missing: {} (that machine wrote no such report)",
            path.display()
        ));
    }
    let code = if differing > 0 {
        Some("HASHES_DIFFER")
    } else if !missing.is_empty() {
        Some("REPORT_MISSING")
    } else {
        None
    };
    let text = if json {
        serde_json::json!({
            "result": match code {
                None => "same",
                Some("HASHES_DIFFER") => "different",
                Some(_) => "missing",
            },
            "code": code,
            "reference": reference_directory.display().to_string(),
            "reports": scenes,
            "missing": missing.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        })
        .to_string()
    } else {
        lines.join("\n")
    };
    match code {
        None => Ok(text),
        Some(code) => Err(Failure::new(code, Outcome::Failed, text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary directory of this test's own.
    fn scratch(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("rusting-machines-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn directories_without_reports_are_refused() {
        let root = scratch("empty");
        let (a, b) = (root.join("a"), root.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("notes.txt"), "not a report").unwrap();
        let error = diff_machines(&[a.clone(), b.clone()], None, false).unwrap_err();
        assert_eq!(error.code, "REPORT_INVALID");
        assert!(
            error.message.starts_with("no *.json reports in "),
            "{}",
            error.message
        );
        let wrong = diff_machines(&[a, b], Some(&root.join("c")), false).unwrap_err();
        assert!(
            wrong.message.contains("give one of the directories"),
            "{}",
            wrong.message
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
