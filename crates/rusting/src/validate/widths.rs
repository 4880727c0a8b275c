//! `SIM_STATE_PLATFORM_WIDTH`: a `usize` or `isize` field in a declared simulation type of a
//! `CrossPlatform` project.
//!
//! The engine encodes both as 8 bytes everywhere (hash, comparison, snapshot), so the same value
//! hashes alike on 32-bit and 64-bit targets; the arithmetic on it does not agree, since it wraps
//! or overflows at 2^32 on a 32-bit target. A `CrossPlatform` project promises the same bits on
//! every device, so each such field is an error naming the type and field (the lint's
//! `width_fields` finds them). This module reads files only; it must never write one.

use std::path::Path;

use rusting_engine::runtime::DeterminismMode;

use super::finding::{Finding, Place};

/// Reports the platform-width fields of the project's declared types in a `CrossPlatform`
/// project. A source the lint cannot read is already reported by the source lint.
pub fn check(mode: DeterminismMode, root: &Path, findings: &mut Vec<Finding>) {
    if mode < DeterminismMode::CrossPlatform {
        return;
    }
    let Ok(fields) = rusting_lint::width_fields(root) else {
        return;
    };
    for field in fields {
        let wide = if field.width == "usize" { "u64" } else { "i64" };
        findings.push(Finding::error(
            "SIM_STATE_PLATFORM_WIDTH",
            Place::Text {
                file: field.file,
                line: field.line,
                column: field.column,
            },
            format!(
                "`{}.{}` is `{}`, simulation state whose arithmetic wraps at 2^32 on a 32-bit \
                 target and at 2^64 on a 64-bit one, so a CrossPlatform project computes \
                 otherwise on each; use `u32` or `{wide}` (the engine already stores it as 8 \
                 bytes everywhere)",
                field.type_name, field.field, field.ty
            ),
        ));
    }
}
