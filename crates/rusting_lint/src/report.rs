//! The step that turns a file's [`Hit`]s (findings before they have a file and before allow
//! comments are applied; see `finding`) into sorted [`Finding`]s.
//!
//! This module must never look at syntax; it only places, silences and orders what rules found.

use crate::allow::Allows;
use crate::finding::Finding;
pub(crate) use crate::finding::Hit;

/// Applies `file`'s allow comments to its hits and returns its findings, allow problems included,
/// sorted and without duplicates.
pub(crate) fn file_findings(file: &str, source: &str, hits: Vec<Hit>) -> Vec<Finding> {
    let mut allows = Allows::scan(source);
    let mut sorted = hits;
    sorted.sort_by(|a, b| {
        (a.line, a.column, a.code, &a.message).cmp(&(b.line, b.column, b.code, &b.message))
    });
    sorted.dedup_by(|a, b| a.line == b.line && a.column == b.column && a.code == b.code);
    let mut kept: Vec<Hit> = sorted
        .into_iter()
        .filter(|hit| !allows.silences(hit.code, hit.line))
        .collect();
    kept.extend(allows.leftover_hits());
    let mut findings: Vec<Finding> = kept
        .into_iter()
        .map(|hit| Finding {
            file: file.to_owned(),
            line: hit.line,
            column: hit.column,
            code: hit.code,
            severity: hit.code.severity(),
            message: hit.message,
        })
        .collect();
    findings.sort();
    findings
}
