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
//! A shader declaring `Local` or better is compiled with `glslc` into a temporary directory and
//! goes through the same SPIR-V precision check as the engine's own shaders
//! ([`spirv_precision`]). This module never writes into the project.

use std::path::{Path, PathBuf};

use rusting_engine::physics::gpu::SHADER_INCLUDES;
use rusting_engine::runtime::DeterminismMode;
use rusting_spirv::{PrecisionError, check_spirv};

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
        // Compute shaders are compiled and checked; `.glsl` files are includes, checked through
        // the shaders that include them (violations there name the included file's lines).
        if declaration.mode >= DeterminismMode::Local
            && relative.extension().is_some_and(|e| e == "comp")
        {
            findings.extend(spirv_precision(
                &root.join(&relative),
                &file,
                declaration.mode,
                place,
            ));
        }
    }
}

/// The SPIR-V precision check for a shader that declares `Local` or better: compiles it with
/// `glslc` (the engine's includes, such as `sim_math.glsl`, on its include path; line information
/// on) into a temporary directory, and runs the engine's `check_spirv` over the words: every float
/// add, subtract, multiply, divide and vector or matrix product needs `NoContraction`, nothing may
/// be `RelaxedPrecision`, and only the exact GLSL.std.450 functions are allowed. Each violation is a
/// `SHADER_NOT_PRECISE` error at its source line; a shader that does not compile is
/// `SHADER_COMPILE_FAILED`. Without `glslc` the declaration stays unverified
/// (`SHADER_PRECISION_UNCHECKED`, a warning).
fn spirv_precision(
    path: &Path,
    file: &str,
    declared: DeterminismMode,
    place: Place,
) -> Vec<Finding> {
    let scratch = std::env::temp_dir().join(format!(
        "rusting-validate-{}-{}",
        std::process::id(),
        file.replace(['/', '\\'], "_")
    ));
    let result = compile_with_glslc(path, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    let words = match result {
        Ok(words) => words,
        Err(GlslcError::Missing(reason)) => {
            return vec![Finding::warning(
                "SHADER_PRECISION_UNCHECKED",
                place,
                format!(
                    "shader `{file}` declares {declared}, but glslc is not available ({reason}), so \
                     its SPIR-V cannot be checked for contracted or relaxed float operations"
                ),
            )];
        }
        Err(GlslcError::Failed(message)) => {
            return vec![Finding::error(
                "SHADER_COMPILE_FAILED",
                place,
                format!("shader `{file}` does not compile: {message}"),
            )];
        }
    };
    match check_spirv(file, &words) {
        Ok(()) => Vec::new(),
        Err(PrecisionError::InvalidSpirv { reason, .. }) => vec![Finding::error(
            "SHADER_COMPILE_FAILED",
            place,
            format!("glslc wrote SPIR-V the check cannot read: {reason}"),
        )],
        Err(error) => error
            .violations()
            .iter()
            .map(|violation| {
                let at = match &violation.location {
                    Some(location)
                        if location.file.ends_with(file) || file.ends_with(&location.file) =>
                    {
                        Place::Text {
                            file: file.to_owned(),
                            line: location.line as usize,
                            column: location.column.max(1) as usize,
                        }
                    }
                    Some(location) => Place::Text {
                        file: location.file.clone(),
                        line: location.line as usize,
                        column: location.column.max(1) as usize,
                    },
                    None => place.clone(),
                };
                Finding::error(
                    "SHADER_NOT_PRECISE",
                    at,
                    format!(
                        "shader `{file}` declares {declared}, but `{}` {}",
                        violation.instruction, violation.problem
                    ),
                )
            })
            .collect(),
    }
}

/// Why `glslc` gave no SPIR-V.
enum GlslcError {
    /// It is not installed or did not start.
    Missing(String),
    /// It ran and refused the shader (its first error line).
    Failed(String),
}

/// Compiles the compute shader at `path` with `glslc`, with the engine's shader includes written
/// into `scratch` and on the include path.
fn compile_with_glslc(path: &Path, scratch: &Path) -> Result<Vec<u32>, GlslcError> {
    std::fs::create_dir_all(scratch).map_err(|e| GlslcError::Missing(e.to_string()))?;
    for include in SHADER_INCLUDES {
        std::fs::write(scratch.join(include.name), include.source)
            .map_err(|e| GlslcError::Missing(e.to_string()))?;
    }
    let out = scratch.join("shader.spv");
    let output = std::process::Command::new("glslc")
        .args([
            "--target-env=vulkan1.2",
            "-g",
            "-fshader-stage=compute",
            "-I",
        ])
        .arg(scratch)
        .arg(path)
        .arg("-o")
        .arg(&out)
        .output()
        .map_err(|e| GlslcError::Missing(e.to_string()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr
            .lines()
            .find(|l| l.contains("error"))
            .or(stderr.lines().next())
            .unwrap_or("glslc failed")
            .trim()
            .to_owned();
        return Err(GlslcError::Failed(first));
    }
    let bytes = std::fs::read(&out).map_err(|e| GlslcError::Failed(e.to_string()))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect())
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
