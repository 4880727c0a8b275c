//! `TOOLCHAIN_UNPINNED`: the project builds with one exact Rust toolchain.
//!
//! rustup takes the toolchain from the nearest `rust-toolchain.toml` or `rust-toolchain` file in
//! the project directory or a directory above it. The channel must name one release (`1.95.0`) or
//! one dated nightly or beta (`nightly-2025-01-31`): `stable` or `1.95` change under the project
//! whenever a new release comes out. This module reads files only; it must never write one.

use std::path::Path;

use super::finding::{Finding, Place};

/// The toolchain files rustup reads, in the order it prefers them within one directory.
const FILES: [&str; 2] = ["rust-toolchain.toml", "rust-toolchain"];

/// Whether `channel` names exactly one toolchain.
fn is_exact(channel: &str) -> bool {
    let numbers = |text: &str, count: usize| {
        let parts: Vec<&str> = text.split('.').collect();
        parts.len() == count
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    let dated = |text: &str| {
        let parts: Vec<&str> = text.split('-').collect();
        parts.len() == 3
            && [4, 2, 2]
                .iter()
                .zip(&parts)
                .all(|(len, p)| p.len() == *len && p.bytes().all(|b| b.is_ascii_digit()))
    };
    numbers(channel, 3)
        || ["nightly-", "beta-"]
            .iter()
            .any(|prefix| channel.strip_prefix(prefix).is_some_and(dated))
}

/// The channel a toolchain file names and its 1-based line: a `channel = "..."` line (TOML) or the
/// file's only line (the legacy plain form).
fn channel(text: &str) -> Option<(String, usize)> {
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("channel")
            && let Some(value) = rest.trim_start().strip_prefix('=')
        {
            let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
            return Some((value.to_owned(), index + 1));
        }
    }
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    match lines.as_slice() {
        [(index, line)] if !line.contains('=') && !line.starts_with('[') => {
            Some((line.trim().to_owned(), index + 1))
        }
        _ => None,
    }
}

/// Finds the toolchain file that applies to `root` and checks its channel.
pub fn check(root: &Path, findings: &mut Vec<Finding>) {
    let start = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_owned());
    let found = start.ancestors().find_map(|dir| {
        FILES
            .iter()
            .map(|name| dir.join(name))
            .find(|path| path.is_file())
    });
    let Some(path) = found else {
        findings.push(Finding::error(
            "TOOLCHAIN_UNPINNED",
            Place::File {
                file: "rust-toolchain.toml".into(),
            },
            "no rust-toolchain.toml in the project or above it: each machine builds with \
             whatever toolchain it has; add one with `[toolchain]` and `channel = \"<x.y.z>\"`",
        ));
        return;
    };
    let file = path
        .strip_prefix(&start)
        .unwrap_or(&path)
        .to_string_lossy()
        .replace('\\', "/");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => {
            findings.push(Finding::error(
                "TOOLCHAIN_UNPINNED",
                Place::File { file },
                format!("cannot read the toolchain file: {error}"),
            ));
            return;
        }
    };
    match channel(&text) {
        Some((channel, _)) if is_exact(&channel) => {}
        Some((channel, line)) => findings.push(Finding::error(
            "TOOLCHAIN_UNPINNED",
            Place::Text {
                file,
                line,
                column: 1,
            },
            format!(
                "channel `{channel}` is not one exact toolchain: name a release such as `1.95.0` \
                 (or a dated nightly such as `nightly-2025-01-31`)"
            ),
        )),
        None => findings.push(Finding::error(
            "TOOLCHAIN_UNPINNED",
            Place::File { file },
            "the toolchain file names no channel; add `channel = \"<x.y.z>\"` under `[toolchain]`",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_channels_pin() {
        for exact in ["1.95.0", "nightly-2025-01-31", "beta-2024-12-01"] {
            assert!(is_exact(exact), "{exact}");
        }
        for loose in [
            "stable",
            "1.95",
            "nightly",
            "1.95.0.1",
            "nightly-2025-1-31",
            "",
        ] {
            assert!(!is_exact(loose), "{loose}");
        }
        assert_eq!(
            channel("[toolchain]\nchannel = \"1.95.0\"\n"),
            Some(("1.95.0".into(), 2))
        );
        assert_eq!(channel("stable\n"), Some(("stable".into(), 1)));
        assert_eq!(channel("[toolchain]\ncomponents = [\"clippy\"]\n"), None);
    }
}
