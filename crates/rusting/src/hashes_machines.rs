//! `rusting hashes diff <DIR> <DIR> [<DIR>...]`: state-hash reports gathered from many machines,
//! one directory a machine, as a CI job finds its matrix's artifacts after downloading them all
//! (`reports/linux-x86-64/starter.json`, `reports/macos-arm64/starter.json`, ...).
//!
//! Every `*.json` file in any of the directories is a report; the files of one name are compared
//! across the directories, each with the reference directory's (the first, or `--reference`), and
//! every one that differs is named with its first divergent tick and its blame. A report one
//! machine lacks is named too, and so is a directory that does not exist (a machine whose job
//! uploaded nothing): a job that wrote nothing must not pass as agreement. Directories are told
//! apart by where they lead, not by their spelling. This module must never write a file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::exit::{Failure, Outcome};
use crate::hashes::{Compared, compare_with, load};

/// The names of the `*.json` files in `directory`.
fn report_names(directory: &Path) -> Result<BTreeSet<String>, Failure> {
    let entries = std::fs::read_dir(directory).map_err(|e| {
        Failure::bad_input(
            "REPORT_INVALID",
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

/// `path` as the file system resolves it, so that two spellings of one directory are one machine.
fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_owned())
}

/// Compares the reports of every name across `directories` (see the module docs). A directory
/// that does not exist is a machine that uploaded nothing: named as missing, never skipped.
pub fn diff_machines(
    directories: &[PathBuf],
    reference: Option<&Path>,
    json: bool,
) -> Result<String, Failure> {
    let bad = |message: String| Failure::bad_input("REPORT_INVALID", message);
    // One machine per directory, however often or however spelt it is given.
    let mut machines: Vec<(&PathBuf, PathBuf)> = Vec::new();
    for directory in directories {
        let resolved = canonical(directory);
        if machines.iter().all(|(_, seen)| *seen != resolved) {
            machines.push((directory, resolved));
        }
    }
    let wanted = match reference {
        Some(reference) => {
            let resolved = canonical(reference);
            machines
                .iter()
                .position(|(_, m)| *m == resolved)
                .ok_or_else(|| {
                    bad(format!(
                        "--reference {}: not one of the directories compared",
                        reference.display()
                    ))
                })?
        }
        None => 0,
    };
    let (existing, absent): (Vec<_>, Vec<_>) = machines
        .iter()
        .enumerate()
        .partition(|(_, (directory, _))| directory.is_dir());
    let mut listed = Vec::with_capacity(existing.len());
    for (index, (directory, _)) in &existing {
        listed.push((*index, *directory, report_names(directory)?));
    }
    let names: BTreeSet<&String> = listed.iter().flat_map(|(_, _, names)| names).collect();
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
    // The reference machine, or the first that wrote anything when it wrote nothing.
    let reference_directory = match listed.iter().find(|(index, _, _)| *index == wanted) {
        Some((_, directory, _)) => *directory,
        None => listed[0].1,
    };
    let mut lines = vec![format!("reference: {}", reference_directory.display())];
    if reference_directory != machines[wanted].0 {
        lines.push(format!(
            "({} holds no reports; the others are compared with {})",
            machines[wanted].0.display(),
            reference_directory.display()
        ));
    }
    let mut missing: Vec<(PathBuf, &str)> = absent
        .iter()
        .map(|(_, (directory, _))| ((*directory).clone(), "that machine uploaded no reports"))
        .collect();
    let mut scenes = Vec::new();
    let mut differing = 0;
    for name in names {
        let (present, lacking): (Vec<_>, Vec<_>) = listed
            .iter()
            .map(|(_, directory, names)| (directory.join(name), names.contains(name)))
            .partition(|(_, here)| *here);
        missing.extend(
            lacking
                .into_iter()
                .map(|(path, _)| (path, "that machine wrote no such report")),
        );
        let preferred = reference_directory.join(name);
        let base_index = present
            .iter()
            .position(|(path, _)| *path == preferred)
            .unwrap_or(0);
        let reference_path = present[base_index].0.clone();
        let others: Vec<&Path> = present
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != base_index)
            .map(|(_, (path, _))| path.as_path())
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
    for (path, why) in &missing {
        lines.push(format!("missing: {} ({why})", path.display()));
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
            "missing": missing.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>(),
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
        let elsewhere = root.join("c");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let wrong = diff_machines(&[a, b], Some(&elsewhere), false).unwrap_err();
        assert!(
            wrong.message.contains("not one of the directories"),
            "{}",
            wrong.message
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// One report, written to two directories (one of them given twice, spelt two ways) and
    /// missing from a third: one machine counted once, the machine without a report named, and
    /// a reference that wrote nothing replaced by the next.
    #[test]
    fn machines_are_counted_once_and_missing_ones_named() {
        let root = scratch("machines");
        let report = rusting_engine::record::StateHashReport {
            format_version: rusting_engine::record::report::REPORT_FORMAT_VERSION,
            ticks: Vec::new(),
            entities: Vec::new(),
            details: Vec::new(),
            jobs: None,
            layout: None,
        };
        let (a, b, gone) = (root.join("a"), root.join("b"), root.join("gone"));
        for dir in [&a, &b] {
            std::fs::create_dir_all(dir).unwrap();
            report.write(&dir.join("scene.json")).unwrap();
        }
        let b_again = root.join("a/../b");
        let same = diff_machines(&[a.clone(), b.clone(), b_again], None, false).unwrap();
        assert!(same.contains("scene.json: all 2 machines agree"), "{same}");
        let missing = diff_machines(&[gone.clone(), a, b], None, false).unwrap_err();
        assert_eq!(missing.code, "REPORT_MISSING");
        assert!(
            missing
                .message
                .contains("holds no reports; the others are compared with")
        );
        assert!(missing.message.contains("scene.json: all 2 machines agree"));
        assert!(
            missing.message.contains(&format!(
                "missing: {} (that machine uploaded no reports)",
                gone.display()
            )),
            "{}",
            missing.message
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
