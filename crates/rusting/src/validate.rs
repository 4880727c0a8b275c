//! `rusting validate <project>`: every check that can run before a game ships, without building it.
//!
//! The checks, in the order they report:
//!
//! 1. scenes ([`scenes`]): every scene cooks (`SCENE_INVALID`), no bodies overlap at the start
//!    (`SCENE_BODIES_OVERLAP`), and every engine part the scenes use supports the project's
//!    determinism mode (`DETERMINISM_UNSUPPORTED`, the game's startup check and message);
//! 2. the device ([`device`]): a `CrossPlatform` project with GPU bodies needs a Vulkan device
//!    that preserves subnormals and rounds to nearest even (`DEVICE_NOT_CROSS_PLATFORM`);
//! 3. custom solver shaders ([`shaders`]): their `// rusting: determinism = <mode>` pragma, and the
//!    SPIR-V precision check for those claiming `Local` or better;
//! 4. the source lint (`rusting_lint`) of the game crate (`LINT_*`), and in a `CrossPlatform`
//!    project the `usize`/`isize` fields of declared simulation types ([`widths`],
//!    `SIM_STATE_PLATFORM_WIDTH`);
//! 5. the toolchain ([`toolchain`]) and dependencies ([`dependencies`]).
//!
//! Findings print one a line (`place: error CODE: message`) and a summary, or one JSON object
//! with `--json`. Any error fails validation (exit code 1). The codes are listed in
//! `docs/validate.md`. This command reads the project and runs `cargo metadata --locked` and `git`
//! in it; it must never build the game or write into the project.

mod controls;
mod dependencies;
mod device;
mod finding;
mod gpu_bodies;
mod scenes;
mod shaders;
mod toolchain;
mod widths;

use std::path::Path;

use rusting_engine::game::project::Project;
use serde_json::json;

use crate::exit::{Failure, Outcome};
use finding::{Finding, Place, Severity};

/// Runs every check on the project in `project_dir`.
pub fn validate(project_dir: &Path, json: bool) -> Result<String, Failure> {
    let project = Project::open(project_dir)
        .map_err(|e| Failure::bad_input("PROJECT_INVALID", e.to_string()))?;
    let findings = run_checks(&project);
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings.len() - errors;
    let mode = project.manifest.determinism;
    let counts = format!(
        "{errors} error{}, {warnings} warning{}",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    );
    let verdict = if errors == 0 { "valid" } else { "invalid" };
    // `rusting validate .` names the project, not `.`.
    let shown = match project_dir.file_name() {
        Some(_) => project_dir.display().to_string(),
        None => project.manifest.name.clone(),
    };
    let output = if json {
        json!({
            "result": verdict,
            "project": project_dir.display().to_string(),
            "name": project.manifest.name,
            "determinism": mode.to_string(),
            "errors": errors,
            "warnings": warnings,
            "findings": findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
        })
        .to_string()
    } else {
        for finding in &findings {
            println!("{}", finding.line());
        }
        format!("{shown}: {verdict}, {counts} ({mode} determinism)")
    };
    if errors == 0 {
        Ok(output)
    } else {
        Err(Failure::new("VALIDATION_FAILED", Outcome::Failed, output))
    }
}

/// Every check, in report order.
fn run_checks(project: &Project) -> Vec<Finding> {
    let mut findings = Vec::new();
    let scenes = scenes::load_scenes(project, &mut findings);
    scenes::overlaps(&scenes, &mut findings);
    scenes::unsupported_parts(project, &scenes, &mut findings);
    device::check(project.manifest.determinism, &scenes, &mut findings);
    gpu_bodies::check(&scenes, &mut findings);
    controls::check_bindings_fit(&project.manifest.input, &mut findings);
    controls::check(&project.manifest.input, &scenes, &mut findings);
    shaders::check(&project.root, project.manifest.determinism, &mut findings);
    source_lint(&project.root, &mut findings);
    widths::check(project.manifest.determinism, &project.root, &mut findings);
    toolchain::check(&project.root, &mut findings);
    dependencies::check(&project.root, &mut findings);
    findings
}

/// The source lint's findings, with their own codes and severities.
fn source_lint(root: &Path, findings: &mut Vec<Finding>) {
    match rusting_lint::lint_crate(root) {
        Ok(report) => findings.extend(report.findings.into_iter().map(|f| Finding {
            code: f.code.as_str(),
            severity: match f.severity {
                rusting_lint::Severity::Warning => Severity::Warning,
                _ => Severity::Error,
            },
            place: Place::Text {
                file: f.file,
                line: f.line,
                column: f.column,
            },
            other: None,
            message: f.message,
        })),
        Err(rusting_lint::LintError::Parse {
            file,
            line,
            column,
            message,
        }) => findings.push(Finding::error(
            "SOURCE_UNREADABLE",
            Place::Text { file, line, column },
            format!("not valid Rust, so the source lint cannot run: {message}"),
        )),
        Err(error) => findings.push(Finding::error(
            "SOURCE_UNREADABLE",
            Place::File { file: "src".into() },
            format!("the source lint cannot run: {error}"),
        )),
    }
}
