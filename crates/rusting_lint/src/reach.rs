//! Which code runs in the fixed schedules: the fixed systems, then everything they call, found by
//! name; and the pass that walks each such body once and collects the crate's findings.
//!
//! Name resolution is deliberately simple (there is no type checker):
//! - a call or mention of a one-segment path `helper`, or of a module path `a::b::helper`,
//!   reaches every free function of the crate named `helper` (in any module);
//! - `Self::helper` reaches `helper` in the `impl` or `trait` around the caller, and
//!   `Type::helper` (a segment starting with a capital letter) reaches `helper` in impls and
//!   traits of a type named `Type`;
//! - a method call `x.helper()` reaches every method named `helper` (any type, trait default
//!   methods included) of the crate, whatever `x` is;
//! - calls to anything the crate does not define (the engine, bevy, std) reach nothing: the engine
//!   checks its own code.
//!
//! This over-approximates (a same-named function elsewhere is included) rather than misses code;
//! an allow comment with a reason silences a false finding. Function values stored in variables or
//! trait objects chosen at run time are not followed. This module must never apply a rule itself.

use std::collections::{BTreeSet, VecDeque};

use crate::finding::LintReport;
use crate::index::{Body, BodyId, CrateIndex};
use crate::report::{Hit, file_findings};
use crate::schedule::{RootTarget, closure_inputs, fixed_roots};
use crate::source::SourceFile;
use crate::walk::{Callee, walk_body};

/// The crate functions `callee` may be, seen from a body of `owner`.
pub(crate) fn resolve(index: &CrateIndex, callee: &Callee, owner: Option<&str>) -> Vec<BodyId> {
    match callee {
        Callee::Method(name) => index.methods(name).collect(),
        Callee::Path(segments) => {
            let Some(name) = segments.last() else {
                return Vec::new();
            };
            match segments.len().checked_sub(2).map(|i| segments[i].as_str()) {
                Some("Self") => {
                    owner.map_or_else(Vec::new, |owner| index.associated(owner, name).collect())
                }
                Some(ty) if ty.starts_with(|c: char| c.is_ascii_uppercase()) => {
                    index.associated(ty, name).collect()
                }
                _ => index.free_functions(name).collect(),
            }
        }
    }
}

/// Why a body is fixed code: the fixed system it is, or was reached from.
#[derive(Clone, Debug)]
struct Origin {
    schedule: String,
    system: String,
}

/// Lints a parsed crate.
pub(crate) fn lint_files(files: &[SourceFile]) -> LintReport {
    let mut index = CrateIndex::build(files);
    let mut queue: VecDeque<(BodyId, Origin)> = VecDeque::new();
    let mut fixed_systems = Vec::new();
    for root in fixed_roots(files) {
        let ids = match &root.target {
            RootTarget::Path(segments) => resolve(
                &index,
                &Callee::Path(segments.clone()),
                root.owner.as_deref(),
            ),
            RootTarget::Closure(closure, line) => {
                index.bodies.push(Body {
                    file: root.file,
                    name: "closure".to_owned(),
                    owner: root.owner.clone(),
                    has_receiver: false,
                    display: format!("the closure at {}:{line}", files[root.file].name),
                    inputs: closure_inputs(closure),
                    code: (*closure.body).clone(),
                });
                vec![index.bodies.len() - 1]
            }
        };
        for id in ids {
            let body = &index.bodies[id];
            let system = format!("{}: {}", files[body.file].name, body.display);
            if !fixed_systems.contains(&system) {
                fixed_systems.push(system);
            }
            queue.push_back((
                id,
                Origin {
                    schedule: root.schedule.clone(),
                    system: body.display.clone(),
                },
            ));
        }
    }

    // Plugins are added, and float control registers written, outside fixed code too: these
    // checks read every file whole.
    let mut hits: Vec<Vec<Hit>> = files
        .iter()
        .map(|file| {
            let mut hits = crate::second_loop::find(&file.ast);
            hits.extend(crate::float_control::find(&file.ast));
            hits
        })
        .collect();
    let mut seen = BTreeSet::new();
    while let Some((id, origin)) = queue.pop_front() {
        if !seen.insert(id) {
            continue;
        }
        let body = &index.bodies[id];
        let walked = walk_body(body, &files[body.file], &index);
        let place = if body.display == origin.system {
            format!("in the {} system `{}`", origin.schedule, origin.system)
        } else {
            format!(
                "in `{}`, called from the {} system `{}`",
                body.display, origin.schedule, origin.system
            )
        };
        for mut hit in walked.hits {
            hit.message = format!("{} ({place})", hit.message);
            hits[body.file].push(hit);
        }
        for callee in &walked.callees {
            for next in resolve(&index, callee, body.owner.as_deref()) {
                if !seen.contains(&next) {
                    queue.push_back((next, origin.clone()));
                }
            }
        }
    }

    let mut fixed_functions: Vec<String> = seen
        .iter()
        .map(|&id| {
            let body = &index.bodies[id];
            format!("{}: {}", files[body.file].name, body.display)
        })
        .collect();
    fixed_functions.sort();
    fixed_functions.dedup();
    let mut findings = Vec::new();
    for (file, file_hits) in files.iter().zip(hits) {
        findings.extend(file_findings(&file.name, &file.text, file_hits));
    }
    findings.sort();
    LintReport {
        files: files.iter().map(|file| file.name.clone()).collect(),
        fixed_systems,
        fixed_functions,
        findings,
    }
}
