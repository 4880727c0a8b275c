//! [`LayoutFingerprint`]: the layout of a game's simulation state (every registered type's name
//! and fields, with their declared types and sizes, the pointer width and the byte order), which
//! snapshots, replays and state-hash reports carry, so one made by a game built otherwise is
//! refused with the first type or field that differs, instead of a hash mismatch at tick 1.
//! (`SimRegistry::layout` builds one from what a game registers.)
//!
//! Hashes and replays are only comparable between builds that agree on what the state is: a field
//! added, renamed, retyped or dropped changes every hash from the first tick on, and "diverged at
//! tick 1" says nothing about why. The fingerprint is built from the `SimRegistry` once per
//! registry (every hashed type, in name order, with [`SimState::layout`]'s entries) and compared
//! before anything is restored or played.
//!
//! This module owns the fingerprint and its comparison. It must never read a value: layouts come
//! from types alone.
//!
//! [`SimState::layout`]: super::SimState::layout

use serde::{Deserialize, Serialize};

/// One field of a registered type: its path, its type as declared, its size in bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldLayout {
    /// `value`, `Walk.step`; empty for a type that is one entry.
    pub path: String,
    /// The type as declared (`f32`, `Vec<u32>`), or `variant N` for an enum's variant.
    pub ty: String,
    /// `size_of` the type on the target that built the game.
    pub size: u64,
}

/// One registered simulation type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypeLayout {
    /// Its registered name.
    pub name: String,
    /// Its fields, in declaration order.
    pub fields: Vec<FieldLayout>,
}

/// The layout of a game's simulation state (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutFingerprint {
    /// The target's pointer width in bits.
    pub pointer_width: u32,
    /// Whether the target is little-endian.
    pub little_endian: bool,
    /// Every hashed registered type, in name order.
    pub types: Vec<TypeLayout>,
}

impl LayoutFingerprint {
    /// The layout of `types` (every hashed registered type, in name order) on this target.
    pub fn of(types: Vec<TypeLayout>) -> Self {
        LayoutFingerprint {
            pointer_width: usize::BITS,
            little_endian: cfg!(target_endian = "little"),
            types,
        }
    }

    /// The first difference between this game's layout (`self`) and `theirs` (what made a file or
    /// snapshot, called `where_` in the message), in words; `None` when they agree.
    pub fn first_difference(&self, theirs: &LayoutFingerprint, where_: &str) -> Option<String> {
        if self.pointer_width != theirs.pointer_width {
            return Some(format!(
                "this game is built for a {}-bit target and {where_} for a {}-bit one",
                self.pointer_width, theirs.pointer_width
            ));
        }
        if self.little_endian != theirs.little_endian {
            return Some(format!(
                "this game is built for a {} target and {where_} for a {} one",
                endian(self.little_endian),
                endian(theirs.little_endian)
            ));
        }
        let mut ours = self.types.iter().peekable();
        let mut other = theirs.types.iter().peekable();
        loop {
            match (ours.peek(), other.peek()) {
                (None, None) => return None,
                (Some(mine), Some(yours)) if mine.name == yours.name => {
                    if let Some(difference) = field_difference(mine, yours, where_) {
                        return Some(difference);
                    }
                    ours.next();
                    other.next();
                }
                (Some(mine), yours) if yours.is_none_or(|yours| mine.name < yours.name) => {
                    return Some(format!(
                        "type `{}` is simulation state in this game and not in {where_}",
                        mine.name
                    ));
                }
                (_, Some(yours)) => {
                    return Some(format!(
                        "type `{}` is simulation state in {where_} and not in this game",
                        yours.name
                    ));
                }
                (Some(_), None) => unreachable!("covered by the arm above"),
            }
        }
    }
}

fn endian(little: bool) -> &'static str {
    if little {
        "little-endian"
    } else {
        "big-endian"
    }
}

/// The first field of one type that differs.
fn field_difference(mine: &TypeLayout, yours: &TypeLayout, where_: &str) -> Option<String> {
    let name = |field: &FieldLayout| {
        if field.path.is_empty() {
            format!("`{}`", mine.name)
        } else {
            format!("`{}.{}`", mine.name, field.path)
        }
    };
    for k in 0..mine.fields.len().max(yours.fields.len()) {
        match (mine.fields.get(k), yours.fields.get(k)) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), Some(b)) if a.path == b.path => {
                return Some(format!(
                    "{} is `{}` ({} bytes) in this game and `{}` ({} bytes) in {where_}",
                    name(a),
                    a.ty,
                    a.size,
                    b.ty,
                    b.size
                ));
            }
            (Some(a), Some(b)) => {
                return Some(format!(
                    "field {} of `{}` is {} in this game and {} in {where_}",
                    k + 1,
                    mine.name,
                    name(a),
                    name(b)
                ));
            }
            (Some(a), None) => {
                return Some(format!("{} is in this game and not in {where_}", name(a)));
            }
            (None, Some(b)) => {
                return Some(format!("{} is in {where_} and not in this game", name(b)));
            }
            (None, None) => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field as `(path, type, size)`.
    type Field<'a> = (&'a str, &'a str, u64);

    fn layout(types: &[(&str, &[Field<'_>])]) -> LayoutFingerprint {
        LayoutFingerprint {
            pointer_width: 64,
            little_endian: true,
            types: types
                .iter()
                .map(|(name, fields)| TypeLayout {
                    name: (*name).to_owned(),
                    fields: fields
                        .iter()
                        .map(|(path, ty, size)| FieldLayout {
                            path: (*path).to_owned(),
                            ty: (*ty).to_owned(),
                            size: *size,
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_first_difference_is_named() {
        let here = layout(&[
            ("Health", &[("value", "f32", 4)]),
            ("Score", &[("", "Score", 8)]),
        ]);
        assert_eq!(here.first_difference(&here.clone(), "the replay"), None);
        let retyped = layout(&[
            ("Health", &[("value", "f64", 8)]),
            ("Score", &[("", "Score", 8)]),
        ]);
        assert_eq!(
            here.first_difference(&retyped, "the replay").unwrap(),
            "`Health.value` is `f32` (4 bytes) in this game and `f64` (8 bytes) in the replay"
        );
        let renamed = layout(&[
            ("Health", &[("hp", "f32", 4)]),
            ("Score", &[("", "Score", 8)]),
        ]);
        assert_eq!(
            here.first_difference(&renamed, "the replay").unwrap(),
            "field 1 of `Health` is `Health.value` in this game and `Health.hp` in the replay"
        );
        let fewer = layout(&[("Score", &[("", "Score", 8)])]);
        assert_eq!(
            here.first_difference(&fewer, "the snapshot").unwrap(),
            "type `Health` is simulation state in this game and not in the snapshot"
        );
        assert_eq!(
            fewer.first_difference(&here, "the snapshot").unwrap(),
            "type `Health` is simulation state in the snapshot and not in this game"
        );
        let mut narrow = here.clone();
        narrow.pointer_width = 32;
        assert!(
            here.first_difference(&narrow, "the report")
                .unwrap()
                .contains("64-bit target and the report for a 32-bit one")
        );
    }
}
