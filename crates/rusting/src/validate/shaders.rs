//! The shader check of `rusting validate`: custom solver shaders (`shaders/**/*.comp` and
//! `shaders/**/*.glsl` in the project) declare the determinism they keep with one line,
//!
//! ```glsl
//! // rusting: determinism = CrossPlatform
//! ```
//!
//! (`Off`, `Local` or `CrossPlatform`; a shader without the line declares `Off`). A `// rusting:`
//! line that is not exactly that, or a second one, is `SHADER_PRAGMA_INVALID`; a shader that declares
//! less than the project's mode is `DETERMINISM_UNSUPPORTED` at its pragma (or its first line).
//! A declaration of `Local` or better is the author's claim: [`spirv_precision`] is where the
//! SPIR-V precision check of the engine's own shaders plugs in. This module reads shaders; it must
//! never compile or write them.

use std::path::{Path, PathBuf};

use rusting_engine::runtime::DeterminismMode;

use super::finding::{Finding, Place};

/// File extensions of solver shaders.
const EXTENSIONS: [&str; 2] = ["comp", "glsl"];

/// What starts a pragma line.
const PRAGMA: &str = "// rusting:";

/// A shader's declaration: its mode and the 1-based line it is on (none: no pragma, `Off`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Declaration {
    /// The declared mode.
    pub mode: DeterminismMode,
    /// The pragma's line.
    pub line: Option<usize>,
}

/// A pragma line that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PragmaError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column of the `//`.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Reads the determinism pragma of a shader's text.
pub fn read_pragma(text: &str) -> Result<Declaration, PragmaError> {
    let mut found: Option<Declaration> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let Some(rest) = trimmed.strip_prefix(PRAGMA) else {
            continue;
        };
        let line_number = index + 1;
        let error = |message: String| PragmaError {
            line: line_number,
            column: line[..line.len() - trimmed.len()].chars().count() + 1,
            message,
        };
        let mode = parse_declaration(rest).ok_or_else(|| {
            error(format!(
                "`{}` is not a determinism pragma; write `// rusting: determinism = <mode>` with \
                 Off, Local or CrossPlatform",
                trimmed.trim_end()
            ))
        })?;
        if let Some(first) = found {
            return Err(error(format!(
                "a second determinism pragma; the first is on line {}",
                first.line.unwrap_or(0)
            )));
        }
        found = Some(Declaration {
            mode,
            line: Some(line_number),
        });
    }
    Ok(found.unwrap_or(Declaration {
        mode: DeterminismMode::Off,
        line: None,
    }))
}

/// `determinism = <mode>` (spaces around `=` optional), the text after `// rusting:`.
fn parse_declaration(rest: &str) -> Option<DeterminismMode> {
    let (key, value) = rest.split_once('=')?;
    if key.trim() != "determinism" {
        return None;
    }
    match value.trim() {
        "Off" => Some(DeterminismMode::Off),
        "Local" => Some(DeterminismMode::Local),
        "CrossPlatform" => Some(DeterminismMode::CrossPlatform),
        _ => None,
    }
}

/// Every shader under `root/shaders`, relative to `root`, sorted.
fn shader_files(root: &Path, findings: &mut Vec<Finding>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![PathBuf::from("shaders")];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            if dir != Path::new("shaders") {
                findings.push(Finding::error(
                    "SHADER_UNREADABLE",
                    Place::File { file: name(&dir) },
                    "cannot list this shader directory",
                ));
            }
            continue;
        };
        for entry in entries.filter_map(|e| e.ok()) {
            let relative = dir.join(entry.file_name());
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push(relative);
            } else if relative
                .extension()
                .is_some_and(|ext| EXTENSIONS.iter().any(|e| ext == *e))
            {
                files.push(relative);
            }
        }
    }
    files.sort();
    files
}

fn name(relative: &Path) -> String {
    relative.to_string_lossy().replace('\\', "/")
}

/// Checks every shader of the project in `root` against `required`.
pub fn check(root: &Path, required: DeterminismMode, findings: &mut Vec<Finding>) {
    for relative in shader_files(root, findings) {
        let file = name(&relative);
        let text = match std::fs::read_to_string(root.join(&relative)) {
            Ok(text) => text,
            Err(error) => {
                findings.push(Finding::error(
                    "SHADER_UNREADABLE",
                    Place::File { file },
                    format!("cannot read the shader: {error}"),
                ));
                continue;
            }
        };
        let declaration = match read_pragma(&text) {
            Ok(declaration) => declaration,
            Err(error) => {
                findings.push(Finding::error(
                    "SHADER_PRAGMA_INVALID",
                    Place::Text {
                        file,
                        line: error.line,
                        column: error.column,
                    },
                    error.message,
                ));
                continue;
            }
        };
        let place = Place::Text {
            file: file.clone(),
            line: declaration.line.unwrap_or(1),
            column: 1,
        };
        if declaration.mode < required {
            let declared = match declaration.line {
                Some(_) => format!("declares only {}", declaration.mode),
                None => "declares no determinism (no `// rusting: determinism = <mode>` line), \
                         so Off"
                    .to_owned(),
            };
            findings.push(Finding::error(
                "DETERMINISM_UNSUPPORTED",
                place.clone(),
                format!(
                    "the project requires {required} determinism, but shader `{file}` {declared}"
                ),
            ));
        }
        if declaration.mode >= DeterminismMode::Local {
            findings.extend(spirv_precision(&file, declaration.mode, place));
        }
    }
}

/// Where the SPIR-V precision check plugs in for a shader that declares `Local` or better: compile
/// it to SPIR-V and run the engine's precision check over the words (every float add, subtract,
/// multiply, divide and vector or matrix product `NoContraction`, no `RelaxedPrecision`, only the
/// exact GLSL.std.450 functions). That check is not part of this build, so the declaration stays
/// the author's claim and is reported as unverified (`SHADER_PRECISION_UNCHECKED`, a warning).
fn spirv_precision(file: &str, declared: DeterminismMode, place: Place) -> Vec<Finding> {
    vec![Finding::warning(
        "SHADER_PRECISION_UNCHECKED",
        place,
        format!(
            "shader `{file}` declares {declared}; this build of rusting cannot check its SPIR-V \
             for contracted or relaxed float operations, so the declaration is unverified"
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pragmas_are_read_with_their_line_and_bad_ones_are_refused() {
        let shader = "#version 450\n  // rusting: determinism = CrossPlatform\nvoid main() {}\n";
        assert_eq!(
            read_pragma(shader),
            Ok(Declaration {
                mode: DeterminismMode::CrossPlatform,
                line: Some(2)
            })
        );
        assert_eq!(
            read_pragma("// rusting:determinism=Local").map(|d| d.mode),
            Ok(DeterminismMode::Local)
        );
        assert_eq!(
            read_pragma("void main() {}\n// determinism = Local\n"),
            Ok(Declaration {
                mode: DeterminismMode::Off,
                line: None
            })
        );
        let bad = read_pragma("\n\n   // rusting: determinism = Strict\n").unwrap_err();
        assert_eq!((bad.line, bad.column), (3, 4));
        assert!(bad.message.contains("Strict"), "{}", bad.message);
        assert!(read_pragma("// rusting: determinsm = Local").is_err());
        let twice = read_pragma("// rusting: determinism = Local\n// rusting: determinism = Off\n")
            .unwrap_err();
        assert_eq!(twice.line, 2);
    }
}
