//! The SPIR-V precision check of Rusting's simulation shaders: proves a compiled shader cannot
//! fuse, relax or call a function whose result differs between devices.
//!
//! This crate owns [`check_spirv`] and its findings ([`PrecisionViolation`]), and
//! [`check_float_controls`], which proves a CrossPlatform variant declares the 32-bit float
//! controls. It is pure SPIR-V
//! parsing (rspirv), needs no GPU, no shader compiler and no engine, so the engine's tests and
//! `rusting validate` run it on any SPIR-V they have, and games, which embed SPIR-V that already
//! passed it, never compile it. It must never compile or run a shader, and never accept an
//! instruction it does not understand as "probably fine": every rule below is an allow-list or a
//! must-have.
//!
//! # The rules
//!
//! A simulation shader fails the check on:
//!
//! - an `OpFAdd`, `OpFSub`, `OpFMul`, `OpFDiv`, `OpVectorTimesScalar`, `OpMatrixTimesScalar` or
//!   `OpOuterProduct` without the `NoContraction` decoration. Without it a driver may fuse a
//!   multiply into a following add (one rounding instead of two). GLSL puts `NoContraction` on
//!   every operation that feeds a `precise` value.
//! - an `OpDot`, `OpMatrixTimesVector`, `OpVectorTimesMatrix` or `OpMatrixTimesMatrix`, with or
//!   without `NoContraction`: each sums products in an order the driver picks. Shaders call
//!   `sim_dot`, `sim_mat3_mul_vec3` and the other `sim_math.glsl` routines instead.
//! - an `OpFRem` or `OpFMod`: both are defined through a division the device may round
//!   differently (Vulkan allows 2.5 ULP). Shaders use `sim_div` and `floor`.
//! - any `RelaxedPrecision` decoration (`mediump`, `lowp`).
//! - any `GLSL.std.450` instruction other than `abs`, `sign`, `floor`, `ceil`, `trunc`,
//!   `roundEven`, `min`, `max` and `clamp` (all exact on every device). So `fma`, `sqrt`,
//!   `inversesqrt`, `length`, `normalize`, `round` (whose direction at `.5` is the device's) and
//!   every transcendental fail.
//! - any other extended instruction set, except the `NonSemantic.*` ones (debug information).
//!
//! `OpFNegate` and conversions are not checked: negation is exact and cannot be fused on its own
//! (the multiply it follows carries the decoration). Each violation names the shader, the
//! instruction and, when the SPIR-V has debug line information (`glslc -g`, or the compiler's
//! debug-info option), the source file, line and column of the nearest `OpLine` before it.

mod float_controls;

pub use float_controls::{FloatControlsError, check_float_controls};

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Decoration, GlslStd450Op, Op, Word};

/// Where in the GLSL source an instruction came from (from `OpLine`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceLocation {
    /// The source file, as the compiler named it (an `#include`d file keeps its own name).
    pub file: String,
    /// The 1-based line.
    pub line: u32,
    /// The column, 0 when the compiler does not record columns.
    pub column: u32,
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if self.column > 0 {
            write!(f, ":{}", self.column)?;
        }
        Ok(())
    }
}

/// What is wrong with one instruction.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Problem {
    /// A float operation the driver may fuse, without `NoContraction`.
    MissingNoContraction,
    /// A built-in product that sums in the driver's order (`OpDot`, matrix products).
    UnorderedProduct,
    /// A float remainder, which divides with the device's own precision.
    InexactRemainder,
    /// A `RelaxedPrecision` decoration.
    RelaxedPrecision,
    /// A `GLSL.std.450` function outside the exact set.
    ForbiddenFunction,
    /// An extended instruction set other than `GLSL.std.450` and `NonSemantic.*`.
    UnknownInstructionSet,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Problem::MissingNoContraction => {
                "has no NoContraction decoration, so the driver may fuse it: declare the value \
                 `precise` (and every local that feeds a comparison)"
            }
            Problem::UnorderedProduct => {
                "sums products in the driver's order: call sim_dot or the sim_mat* routines"
            }
            Problem::InexactRemainder => {
                "divides with the device's precision: use sim_div and floor"
            }
            Problem::RelaxedPrecision => "is RelaxedPrecision: drop mediump/lowp",
            Problem::ForbiddenFunction => {
                "differs between devices: only abs, sign, floor, ceil, trunc, roundEven, min, max \
                 and clamp are exact (use sim_math.glsl)"
            }
            Problem::UnknownInstructionSet => {
                "is from an extended instruction set the check does not know"
            }
        })
    }
}

/// One instruction of one shader that breaks a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrecisionViolation {
    /// The shader's name, as passed to [`check_spirv`].
    pub shader: String,
    /// The instruction, such as `OpFMul %42` or `OpExtInst GLSL.std.450 Fma %17`.
    pub instruction: String,
    /// The source line, when the SPIR-V has debug line information.
    pub location: Option<SourceLocation>,
    /// What is wrong with it.
    pub problem: Problem,
}

impl fmt::Display for PrecisionViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(location) => write!(f, "{}: {location}: ", self.shader)?,
            None => write!(f, "{}: (no line information): ", self.shader)?,
        }
        write!(f, "{} {}", self.instruction, self.problem)
    }
}

/// Why [`check_spirv`] rejected a shader.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrecisionError {
    /// The words are not a SPIR-V module rspirv can read.
    #[error("{shader}: not valid SPIR-V: {reason}")]
    InvalidSpirv {
        /// The shader's name.
        shader: String,
        /// What the parser reported.
        reason: String,
    },
    /// The module parsed, and some instructions break the rules (in module order).
    #[error("{shader}: {} precision violation(s):\n{}", .violations.len(), list(.violations))]
    Violations {
        /// The shader's name.
        shader: String,
        /// Every violation, in the order the instructions appear.
        violations: Vec<PrecisionViolation>,
    },
}

impl PrecisionError {
    /// The violations, or an empty slice when the SPIR-V did not parse.
    pub fn violations(&self) -> &[PrecisionViolation] {
        match self {
            PrecisionError::Violations { violations, .. } => violations,
            PrecisionError::InvalidSpirv { .. } => &[],
        }
    }
}

fn list(violations: &[PrecisionViolation]) -> String {
    violations
        .iter()
        .map(|v| format!("  {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `GLSL.std.450` functions every device computes exactly.
const EXACT_GLSL_FUNCTIONS: [GlslStd450Op; 20] = [
    GlslStd450Op::FAbs,
    GlslStd450Op::SAbs,
    GlslStd450Op::FSign,
    GlslStd450Op::SSign,
    GlslStd450Op::Floor,
    GlslStd450Op::Ceil,
    GlslStd450Op::Trunc,
    GlslStd450Op::RoundEven,
    GlslStd450Op::FMin,
    GlslStd450Op::UMin,
    GlslStd450Op::SMin,
    GlslStd450Op::NMin,
    GlslStd450Op::FMax,
    GlslStd450Op::UMax,
    GlslStd450Op::SMax,
    GlslStd450Op::NMax,
    GlslStd450Op::FClamp,
    GlslStd450Op::UClamp,
    GlslStd450Op::SClamp,
    GlslStd450Op::NClamp,
];

/// Checks one compiled shader against the rules in the module documentation.
///
/// `shader` names it in every violation. Reads the module only; the words may come from any
/// compiler.
///
/// # Errors
///
/// [`PrecisionError::InvalidSpirv`] when the words do not parse, [`PrecisionError::Violations`]
/// listing every offending instruction otherwise.
pub fn check_spirv(shader: &str, words: &[u32]) -> Result<(), PrecisionError> {
    let invalid = |reason: String| PrecisionError::InvalidSpirv {
        shader: shader.to_owned(),
        reason,
    };
    let words = without_source_text(words).map_err(invalid)?;
    let module = dr::load_words(&words).map_err(|err| invalid(err.to_string()))?;
    let violations = Scan::new(shader, &module).run(&module);
    if violations.is_empty() {
        Ok(())
    } else {
        Err(PrecisionError::Violations {
            shader: shader.to_owned(),
            violations,
        })
    }
}

/// SPIR-V opcodes of the instructions that carry the GLSL text (`OpSourceContinued`, `OpSource`).
const SOURCE_TEXT_OPCODES: [u32; 2] = [2, 3];
/// Words in a SPIR-V header.
const HEADER_WORDS: usize = 5;

/// `words` without the instructions that embed the shader's source text.
///
/// Compilers split long sources into chunks at arbitrary bytes, so a chunk may end inside a
/// multi-byte UTF-8 character, which rspirv refuses to decode. The text has no meaning for the
/// check (file names come from `OpString`), so it is dropped before parsing.
fn without_source_text(words: &[u32]) -> Result<Vec<u32>, String> {
    if words.len() < HEADER_WORDS {
        return Err(format!(
            "{} words is shorter than a SPIR-V header",
            words.len()
        ));
    }
    let mut kept = words[..HEADER_WORDS].to_vec();
    let mut at = HEADER_WORDS;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let opcode = words[at] & 0xffff;
        if count == 0 || at + count > words.len() {
            return Err(format!(
                "instruction at word {at} has a bad length ({count} words)"
            ));
        }
        if !SOURCE_TEXT_OPCODES.contains(&opcode) {
            kept.extend_from_slice(&words[at..at + count]);
        }
        at += count;
    }
    Ok(kept)
}

/// What the scan needs to know about the module before it walks the functions.
struct Scan<'m> {
    shader: &'m str,
    /// `OpString` ids to their text (source file names).
    strings: BTreeMap<Word, &'m str>,
    /// Extended instruction set ids to their names.
    sets: BTreeMap<Word, &'m str>,
    no_contraction: BTreeSet<Word>,
    relaxed: BTreeSet<Word>,
}

impl<'m> Scan<'m> {
    fn new(shader: &'m str, module: &'m dr::Module) -> Self {
        let mut strings = BTreeMap::new();
        for inst in &module.debug_string_source {
            if let (Op::String, Some(id), Some(Operand::LiteralString(text))) =
                (inst.class.opcode, inst.result_id, inst.operands.first())
            {
                strings.insert(id, text.as_str());
            }
        }
        let mut sets = BTreeMap::new();
        for inst in &module.ext_inst_imports {
            if let (Some(id), Some(Operand::LiteralString(name))) =
                (inst.result_id, inst.operands.first())
            {
                sets.insert(id, name.as_str());
            }
        }
        let mut no_contraction = BTreeSet::new();
        let mut relaxed = BTreeSet::new();
        for inst in &module.annotations {
            let (target, decoration) = match (inst.class.opcode, inst.operands.as_slice()) {
                (Op::Decorate, [Operand::IdRef(target), Operand::Decoration(d), ..]) => {
                    (*target, *d)
                }
                (Op::MemberDecorate, [Operand::IdRef(target), _, Operand::Decoration(d), ..]) => {
                    (*target, *d)
                }
                _ => continue,
            };
            match decoration {
                Decoration::NoContraction => {
                    no_contraction.insert(target);
                }
                Decoration::RelaxedPrecision => {
                    relaxed.insert(target);
                }
                _ => {}
            }
        }
        Self {
            shader,
            strings,
            sets,
            no_contraction,
            relaxed,
        }
    }

    fn run(&self, module: &dr::Module) -> Vec<PrecisionViolation> {
        let mut violations = Vec::new();
        let mut relaxed_seen = BTreeSet::new();
        for function in &module.functions {
            // The nearest preceding OpLine in the function, for reporting.
            let mut location: Option<SourceLocation> = None;
            let params = function.parameters.iter();
            let body = function.blocks.iter().flat_map(|b| b.instructions.iter());
            for inst in params.chain(body) {
                match inst.class.opcode {
                    Op::Line => {
                        location = self.line(inst);
                        continue;
                    }
                    Op::NoLine => {
                        location = None;
                        continue;
                    }
                    _ => {}
                }
                if let Some(problem) = self.problem(inst) {
                    violations.push(self.violation(inst, &location, problem));
                }
                if let Some(id) = inst.result_id
                    && self.relaxed.contains(&id)
                {
                    relaxed_seen.insert(id);
                    violations.push(self.violation(inst, &location, Problem::RelaxedPrecision));
                }
            }
        }
        // RelaxedPrecision on something outside the functions (a global variable, a struct member).
        for id in self.relaxed.difference(&relaxed_seen) {
            violations.push(PrecisionViolation {
                shader: self.shader.to_owned(),
                instruction: format!("OpDecorate %{id} RelaxedPrecision"),
                location: None,
                problem: Problem::RelaxedPrecision,
            });
        }
        violations
    }

    fn problem(&self, inst: &Instruction) -> Option<Problem> {
        match inst.class.opcode {
            Op::FAdd
            | Op::FSub
            | Op::FMul
            | Op::FDiv
            | Op::VectorTimesScalar
            | Op::MatrixTimesScalar
            | Op::OuterProduct => {
                let decorated = inst
                    .result_id
                    .is_some_and(|id| self.no_contraction.contains(&id));
                (!decorated).then_some(Problem::MissingNoContraction)
            }
            Op::Dot | Op::MatrixTimesVector | Op::VectorTimesMatrix | Op::MatrixTimesMatrix => {
                Some(Problem::UnorderedProduct)
            }
            Op::FRem | Op::FMod => Some(Problem::InexactRemainder),
            Op::ExtInst => match self.ext_inst(inst) {
                ExtInst::Glsl(Some(op)) if EXACT_GLSL_FUNCTIONS.contains(&op) => None,
                ExtInst::Glsl(_) => Some(Problem::ForbiddenFunction),
                ExtInst::NonSemantic => None,
                ExtInst::Unknown => Some(Problem::UnknownInstructionSet),
            },
            _ => None,
        }
    }

    fn ext_inst(&self, inst: &Instruction) -> ExtInst {
        let (Some(Operand::IdRef(set)), Some(Operand::LiteralExtInstInteger(number))) =
            (inst.operands.first(), inst.operands.get(1))
        else {
            return ExtInst::Unknown;
        };
        match self.sets.get(set) {
            Some(&"GLSL.std.450") => ExtInst::Glsl(GlslStd450Op::from_u32(*number)),
            Some(name) if name.starts_with("NonSemantic.") => ExtInst::NonSemantic,
            _ => ExtInst::Unknown,
        }
    }

    fn line(&self, inst: &Instruction) -> Option<SourceLocation> {
        match inst.operands.as_slice() {
            [
                Operand::IdRef(file),
                Operand::LiteralBit32(line),
                Operand::LiteralBit32(column),
            ] => Some(SourceLocation {
                file: self
                    .strings
                    .get(file)
                    .map_or_else(|| format!("%{file}"), |name| (*name).to_owned()),
                line: *line,
                column: *column,
            }),
            _ => None,
        }
    }

    fn violation(
        &self,
        inst: &Instruction,
        location: &Option<SourceLocation>,
        problem: Problem,
    ) -> PrecisionViolation {
        PrecisionViolation {
            shader: self.shader.to_owned(),
            instruction: self.describe(inst),
            location: location.clone(),
            problem,
        }
    }

    fn describe(&self, inst: &Instruction) -> String {
        let mut text = format!("Op{}", inst.class.opname);
        if inst.class.opcode == Op::ExtInst
            && let (Some(Operand::IdRef(set)), Some(Operand::LiteralExtInstInteger(number))) =
                (inst.operands.first(), inst.operands.get(1))
        {
            let set_name = self.sets.get(set).copied().unwrap_or("(unknown set)");
            match (set_name, GlslStd450Op::from_u32(*number)) {
                ("GLSL.std.450", Some(op)) => text.push_str(&format!(" {set_name} {op:?}")),
                _ => text.push_str(&format!(" {set_name} {number}")),
            }
        }
        if let Some(id) = inst.result_id {
            text.push_str(&format!(" %{id}"));
        }
        text
    }
}

enum ExtInst {
    Glsl(Option<GlslStd450Op>),
    NonSemantic,
    Unknown,
}

#[cfg(test)]
mod tests {
    //! The check on hand-built modules, so it is tested without a shader compiler.

    use rspirv::dr::Builder;
    use rspirv::spirv::{AddressingModel, ExecutionModel, FunctionControl, MemoryModel};

    use super::*;

    /// A compute shader whose `main` multiplies two constants, optionally decorated, then
    /// optionally calls one GLSL.std.450 function on the product; with an `OpLine` before each.
    fn module(decorate: Option<Decoration>, ext: Option<GlslStd450Op>) -> Vec<u32> {
        let mut b = Builder::new();
        b.set_version(1, 0);
        b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
        let glsl = b.ext_inst_import("GLSL.std.450");
        let file = b.string("bad.comp");
        let void = b.type_void();
        let float = b.type_float(32, None);
        let two = b.constant_bit32(float, 2.0f32.to_bits());
        let fn_type = b.type_function(void, vec![]);
        let main = b
            .begin_function(void, None, FunctionControl::NONE, fn_type)
            .expect("no function is open");
        b.begin_block(None).expect("a function is open");
        b.line(file, 7, 12);
        let product = b.f_mul(float, None, two, two).expect("a block is open");
        if let Some(op) = ext {
            b.line(file, 8, 3);
            b.ext_inst(float, None, glsl, op as u32, [Operand::IdRef(product)])
                .expect("a block is open");
        }
        b.ret().expect("a block is open");
        b.end_function().expect("the function is open");
        b.entry_point(ExecutionModel::GLCompute, main, "main", vec![]);
        if let Some(decoration) = decorate {
            b.decorate(product, decoration, []);
        }
        use rspirv::binary::Assemble;
        b.module().assemble()
    }

    #[test]
    fn a_decorated_multiply_passes() {
        let words = module(Some(Decoration::NoContraction), None);
        assert_eq!(check_spirv("good.comp", &words), Ok(()));
    }

    /// Fails if the check stops requiring `NoContraction` on a multiply, or stops reporting the
    /// line the multiply came from.
    #[test]
    fn an_undecorated_multiply_fails_with_its_line() {
        let words = module(None, None);
        let err = check_spirv("bad.comp", &words).unwrap_err();
        let [violation] = err.violations() else {
            panic!("expected one violation: {err}");
        };
        assert_eq!(violation.problem, Problem::MissingNoContraction);
        assert!(violation.instruction.starts_with("OpFMul %"));
        assert_eq!(
            violation.location,
            Some(SourceLocation {
                file: "bad.comp".into(),
                line: 7,
                column: 12
            })
        );
        assert!(
            err.to_string()
                .contains("bad.comp: bad.comp:7:12: OpFMul %")
        );
    }

    /// Fails if `RelaxedPrecision` is accepted.
    #[test]
    fn relaxed_precision_fails() {
        let words = module(Some(Decoration::RelaxedPrecision), None);
        let err = check_spirv("relaxed.comp", &words).unwrap_err();
        let problems: Vec<&Problem> = err.violations().iter().map(|v| &v.problem).collect();
        assert_eq!(
            problems,
            [&Problem::MissingNoContraction, &Problem::RelaxedPrecision]
        );
    }

    /// Fails if `fma` or a transcendental gets through, or an exact function is refused.
    #[test]
    fn only_exact_glsl_functions_pass() {
        for op in [
            GlslStd450Op::Fma,
            GlslStd450Op::Sin,
            GlslStd450Op::Sqrt,
            GlslStd450Op::Round,
        ] {
            let words = module(Some(Decoration::NoContraction), Some(op));
            let err = check_spirv("ext.comp", &words).unwrap_err();
            let [violation] = err.violations() else {
                panic!("expected one violation for {op:?}: {err}");
            };
            assert_eq!(violation.problem, Problem::ForbiddenFunction);
            assert!(
                violation
                    .instruction
                    .contains(&format!("GLSL.std.450 {op:?}"))
            );
            assert_eq!(violation.location.as_ref().map(|l| l.line), Some(8));
        }
        for op in EXACT_GLSL_FUNCTIONS {
            let words = module(Some(Decoration::NoContraction), Some(op));
            assert_eq!(check_spirv("ext.comp", &words), Ok(()), "{op:?}");
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let err = check_spirv("garbage.spv", &[1, 2, 3]).unwrap_err();
        assert!(matches!(err, PrecisionError::InvalidSpirv { .. }));
        assert!(err.to_string().starts_with("garbage.spv: not valid SPIR-V"));
        assert!(check_spirv("empty.spv", &[]).is_err());
    }
}
