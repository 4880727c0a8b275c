//! Allow comments: `// rusting: allow(LINT_CODE) reason: why this line is fine`.
//!
//! syn drops comments, so this module scans the raw text of a file line by line. A comment alone on
//! its line silences the named codes on the next line; a comment after code silences them on its
//! own line. The reason is required: an allow without one (or naming an unknown code) silences
//! nothing and is itself a `LINT_ALLOW_INVALID` finding, and a valid allow that silences nothing is
//! a `LINT_ALLOW_UNUSED` warning. This module owns the comment syntax; it must never decide what
//! the rules report.

use crate::finding::Hit;
use crate::finding::LintCode;

/// The marker that starts an allow comment, after the comment's slashes.
const MARKER: &str = "rusting:";

/// One allow comment found in a file.
#[derive(Clone, Debug)]
pub(crate) struct Allow {
    /// Line of the comment (1-based).
    pub line: usize,
    /// Column of the comment's `//` (1-based).
    pub column: usize,
    /// The line it silences.
    pub target: usize,
    /// The codes it silences.
    pub codes: Vec<LintCode>,
    /// Whether it silenced a finding.
    pub used: bool,
}

/// The allow comments of one file, and the problems with the malformed ones.
#[derive(Clone, Debug, Default)]
pub(crate) struct Allows {
    /// Valid allows, in line order.
    pub valid: Vec<Allow>,
    /// `LINT_ALLOW_INVALID` hits for malformed allows.
    pub invalid: Vec<Hit>,
}

impl Allows {
    /// Scans `source` for allow comments.
    pub fn scan(source: &str) -> Allows {
        let mut allows = Allows::default();
        for (index, text) in source.lines().enumerate() {
            let line = index + 1;
            let Some((column, comment)) = find_marker(text) else {
                continue;
            };
            let code_before = !text[..text.len() - comment.len()].trim().is_empty();
            let target = if code_before { line } else { line + 1 };
            match parse_allow(comment) {
                Ok(codes) => allows.valid.push(Allow {
                    line,
                    column,
                    target,
                    codes,
                    used: false,
                }),
                Err(problem) => allows.invalid.push(Hit {
                    code: LintCode::AllowInvalid,
                    line,
                    column,
                    message: format!("{problem}; it silences nothing"),
                }),
            }
        }
        allows
    }

    /// Whether a finding of `code` on `line` is silenced, marking the allow used if so.
    pub fn silences(&mut self, code: LintCode, line: usize) -> bool {
        if !code.can_be_allowed() {
            return false;
        }
        match self
            .valid
            .iter_mut()
            .find(|allow| allow.target == line && allow.codes.contains(&code))
        {
            Some(allow) => {
                allow.used = true;
                true
            }
            None => false,
        }
    }

    /// `LINT_ALLOW_UNUSED` hits for valid allows that silenced nothing, then the invalid ones.
    pub fn leftover_hits(&self) -> Vec<Hit> {
        let mut hits = self.invalid.clone();
        for allow in self.valid.iter().filter(|allow| !allow.used) {
            let codes: Vec<&str> = allow.codes.iter().map(|code| code.as_str()).collect();
            hits.push(Hit {
                code: LintCode::AllowUnused,
                line: allow.line,
                column: allow.column,
                message: format!(
                    "this allow of {} silences nothing: line {} has no such finding in code that \
                     runs in the fixed schedules",
                    codes.join(", "),
                    allow.target
                ),
            });
        }
        hits
    }
}

/// Finds `// rusting:` in a line: the 1-based column of the `//` and the comment from there on.
fn find_marker(text: &str) -> Option<(usize, &str)> {
    let mut from = 0;
    while let Some(found) = text[from..].find("//") {
        let start = from + found;
        let body = text[start..].trim_start_matches(['/', '!']).trim_start();
        if body.starts_with(MARKER) {
            let column = text[..start].chars().count() + 1;
            return Some((column, &text[start..]));
        }
        from = start + 2;
    }
    None
}

/// Parses `// rusting: allow(CODE, ...) reason: text` into its codes.
fn parse_allow(comment: &str) -> Result<Vec<LintCode>, String> {
    let body = comment.trim_start_matches(['/', '!']).trim_start();
    let rest = body[MARKER.len()..].trim_start();
    let Some(rest) = rest.strip_prefix("allow(") else {
        return Err(
            "a `rusting:` comment must read `rusting: allow(LINT_CODE) reason: ...`".to_owned(),
        );
    };
    let Some((list, after)) = rest.split_once(')') else {
        return Err("the allow's code list has no closing `)`".to_owned());
    };
    let mut codes = Vec::new();
    for name in list
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
    {
        match LintCode::parse(name) {
            Some(code) if code.can_be_allowed() => codes.push(code),
            Some(code) => return Err(format!("{code} cannot be allowed")),
            None => return Err(format!("`{name}` is not a lint code")),
        }
    }
    if codes.is_empty() {
        return Err("the allow names no lint code".to_owned());
    }
    let reason = after
        .trim_start()
        .strip_prefix("reason:")
        .map(str::trim)
        .unwrap_or("");
    if reason.is_empty() {
        return Err("the allow gives no reason (`reason: ...` after the codes)".to_owned());
    }
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_alone_covers_the_next_line_and_a_trailing_one_its_own() {
        let source = "// rusting: allow(LINT_MUL_ADD) reason: presentation only\nlet a = 1; // rusting: allow(LINT_TRANSCENDENTAL, LINT_MUL_ADD) reason: x\n";
        let allows = Allows::scan(source);
        assert!(allows.invalid.is_empty());
        assert_eq!(allows.valid[0].target, 2);
        assert_eq!(allows.valid[1].target, 2);
        assert_eq!(allows.valid[1].codes.len(), 2);
        assert_eq!(allows.valid[1].column, 12);
    }

    #[test]
    fn missing_reasons_and_unknown_codes_are_invalid() {
        for source in [
            "// rusting: allow(LINT_MUL_ADD)",
            "// rusting: allow(LINT_MUL_ADD) reason:   ",
            "// rusting: allow(LINT_NOPE) reason: x",
            "// rusting: allow() reason: x",
            "// rusting: allow(LINT_ALLOW_UNUSED) reason: x",
            "// rusting: permit(LINT_MUL_ADD) reason: x",
        ] {
            let allows = Allows::scan(source);
            assert!(allows.valid.is_empty(), "{source}");
            assert_eq!(allows.invalid.len(), 1, "{source}");
        }
    }
}
