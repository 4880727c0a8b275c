//! `LINT_GLAM_TRANSCENDENTAL`: glam and bevy helpers that call platform `sin`/`cos`/`acos`
//! inside, in fixed code.
//!
//! A bare `.sin()` is easy to spot; `Quat::from_euler`, `Quat::slerp`, `Vec3::angle_between` or
//! `Transform::rotate_y` hide the same platform calls (glam uses the standard library's math
//! unless built with `libm`). `runtime::sim_math` has bit-exact replacements for the rotation
//! builders. Caught as associated-function paths on glam and bevy types, and as method calls of
//! the helpers' names.
//!
//! Approximation: a method call counts whatever its receiver, unless the crate defines a method of
//! that name itself.

use syn::Expr;

use crate::finding::LintCode;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, expr_path, owner_segment};

/// The rule.
pub(crate) struct GlamTranscendental;

/// Methods that rotate or measure angles with platform trigonometry.
const METHODS: [&str; 15] = [
    "slerp",
    "angle_between",
    "to_euler",
    "to_axis_angle",
    "to_scaled_axis",
    "rotate_x",
    "rotate_y",
    "rotate_z",
    "rotate_local_x",
    "rotate_local_y",
    "rotate_local_z",
    "rotate_axis",
    "rotate_local_axis",
    "rotate_around",
    "to_angle",
];

/// Associated functions that build rotations with platform trigonometry.
const CONSTRUCTORS: [&str; 10] = [
    "from_euler",
    "from_rotation_x",
    "from_rotation_y",
    "from_rotation_z",
    "from_axis_angle",
    "from_scaled_axis",
    "from_angle",
    "from_scale_angle_translation",
    "radians",
    "degrees",
];

/// The glam and bevy types those functions belong to.
const OWNERS: [&str; 18] = [
    "Quat",
    "DQuat",
    "Mat2",
    "DMat2",
    "Mat3",
    "Mat3A",
    "DMat3",
    "Mat4",
    "DMat4",
    "Affine2",
    "DAffine2",
    "Affine3A",
    "DAffine3",
    "Transform",
    "Vec2",
    "DVec2",
    "Rot2",
    "Isometry2d",
];

impl Rule for GlamTranscendental {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        if let Expr::MethodCall(call) = expr {
            let name = call.method.to_string();
            if METHODS.contains(&name.as_str()) && !cx.crate_defines_method(&name) {
                out.push(Hit::at(
                    LintCode::GlamTranscendental,
                    call.method.span(),
                    format!(
                        "`.{name}()` computes with the platform's trigonometry inside glam; {}",
                        replacement(&name)
                    ),
                ));
            }
        } else if let Some((path, span)) = expr_path(expr) {
            let segments = cx.segments(path);
            let (Some(owner), Some(name)) = (owner_segment(&segments), segments.last()) else {
                return;
            };
            if OWNERS.contains(&owner)
                && (CONSTRUCTORS.contains(&name.as_str()) || METHODS.contains(&name.as_str()))
            {
                out.push(Hit::at(
                    LintCode::GlamTranscendental,
                    span,
                    format!(
                        "`{owner}::{name}` computes with the platform's trigonometry inside glam; {}",
                        replacement(name)
                    ),
                ));
            }
        }
    }
}

/// What to use instead of the helper `name`.
fn replacement(name: &str) -> String {
    let sim_math = "rusting_engine::runtime::sim_math";
    match name {
        "from_euler" | "from_rotation_x" | "from_rotation_y" | "from_rotation_z" => {
            format!("build the rotation with `{sim_math}::rotation_from_euler`")
        }
        "to_euler" => format!("use `{sim_math}::euler_from_rotation`"),
        "from_angle" => format!(
            "for a `Vec2` direction use `{sim_math}::from_angle2` (and `rotate2` to turn one); \
             otherwise build it from `{sim_math}::sin_cos`"
        ),
        "to_angle" => format!("for a `Vec2` use `{sim_math}::angle2`"),
        "angle_between" => format!(
            "compute it from `{sim_math}`: `atan2(cross2(a, b), dot2(a, b))` for `Vec2`s, \
             `atan2(length(cross(a, b)), dot3(a, b))` for `Vec3`s"
        ),
        "from_axis_angle" | "from_scaled_axis" => {
            format!("use `{sim_math}::rotation_from_scaled_axis`")
        }
        name if name.starts_with("rotate") => format!(
            "build the rotation with `{sim_math}::rotation_from_euler` or \
             `rotation_from_scaled_axis` and apply it with `{sim_math}::quat_mul`"
        ),
        _ => format!(
            "compute it from `{sim_math}` (`sin_cos`, `atan2`, `acos`, `quat_normalize`) in a \
             fixed order"
        ),
    }
}
