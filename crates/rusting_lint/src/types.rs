//! What the lint can tell about a type from its spelling: [`TypeKind`] and [`classify`].
//!
//! The lint has no type checker. A type counts as a hash collection, bevy's `Time`, the engine's
//! `FrameTime` or a wall clock reading (`Instant`, `SystemTime`) when its last path segment has
//! that name (or names a type alias of a hash collection declared in the crate), looking through
//! references and the usual wrappers (`Res`, `ResMut`, `Local`, `Option`, `Box`, `Arc`, ...).
//! This module must never report anything itself.

use std::collections::BTreeSet;

use syn::{GenericArgument, PathArguments, Type};

/// Collections whose iteration order is not defined by their contents' order.
pub(crate) const HASH_COLLECTIONS: [&str; 11] = [
    "HashMap",
    "HashSet",
    "EntityHashMap",
    "EntityHashSet",
    "FxHashMap",
    "FxHashSet",
    "AHashMap",
    "AHashSet",
    "DashMap",
    "DashSet",
    "HashTable",
];

/// Wrappers the lint looks through to the type they hold.
const WRAPPERS: [&str; 15] = [
    "Res",
    "ResMut",
    "Local",
    "Option",
    "Box",
    "Rc",
    "Arc",
    "Mut",
    "Ref",
    "NonSend",
    "NonSendMut",
    "RefCell",
    "Mutex",
    "RwLock",
    "Cell",
];

/// What a type is, as far as the rules care.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TypeKind {
    /// A hash collection (named as written).
    Hash(String),
    /// bevy's `Time`, with its clock's name if one is given (`Real`, `Virtual`, `Fixed`).
    BevyTime(Option<String>),
    /// The engine's `FrameTime`.
    FrameTime,
    /// A wall clock reading (`Instant`, `SystemTime`).
    WallClock,
    /// Anything else.
    Other,
}

/// Whether `name` names a hash collection, given the crate's aliases of one.
pub(crate) fn is_hash_name(name: &str, aliases: &BTreeSet<String>) -> bool {
    HASH_COLLECTIONS.contains(&name) || aliases.contains(name)
}

/// What `ty` is, looking through references and wrappers.
pub(crate) fn classify(ty: &Type, aliases: &BTreeSet<String>) -> TypeKind {
    match ty {
        Type::Reference(reference) => classify(&reference.elem, aliases),
        Type::Paren(paren) => classify(&paren.elem, aliases),
        Type::Group(group) => classify(&group.elem, aliases),
        Type::Path(path) => {
            let Some(last) = path.path.segments.last() else {
                return TypeKind::Other;
            };
            let name = last.ident.to_string();
            if WRAPPERS.contains(&name.as_str()) {
                return first_type_argument(&last.arguments)
                    .map_or(TypeKind::Other, |inner| classify(inner, aliases));
            }
            if is_hash_name(&name, aliases) {
                return TypeKind::Hash(name);
            }
            match name.as_str() {
                "Time" => {
                    TypeKind::BevyTime(first_type_argument(&last.arguments).and_then(|inner| {
                        match inner {
                            Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                            _ => None,
                        }
                    }))
                }
                "FrameTime" => TypeKind::FrameTime,
                "Instant" | "SystemTime" => TypeKind::WallClock,
                _ => TypeKind::Other,
            }
        }
        _ => TypeKind::Other,
    }
}

/// The float atomics of the `atomic_float` crate (and the like).
pub(crate) const ATOMIC_FLOATS: [&str; 2] = ["AtomicF32", "AtomicF64"];

/// Whether `ty` names a float atomic anywhere in it (`AtomicF64`, `Arc<AtomicF32>`,
/// `Vec<atomic_float::AtomicF64>`).
pub(crate) fn names_atomic_float(ty: &Type) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_path_segment(&mut self, segment: &'ast syn::PathSegment) {
            if ATOMIC_FLOATS.contains(&segment.ident.to_string().as_str()) {
                self.0 = true;
            }
            syn::visit::visit_path_segment(self, segment);
        }
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_type(&mut finder, ty);
    finder.0
}

/// The first type among a path segment's generic arguments (lifetimes skipped).
pub(crate) fn first_type_argument(arguments: &PathArguments) -> Option<&Type> {
    let PathArguments::AngleBracketed(angle) = arguments else {
        return None;
    };
    angle.args.iter().find_map(|arg| match arg {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    })
}

/// Whether `ty` is a primitive integer type.
pub(crate) fn is_integer_type(ty: &Type) -> bool {
    let Type::Path(path) = ty else {
        return false;
    };
    path.path
        .get_ident()
        .is_some_and(|ident| is_integer_name(&ident.to_string()))
}

/// Whether `name` is a primitive integer type's name.
pub(crate) fn is_integer_name(name: &str) -> bool {
    matches!(
        name,
        "i8" | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> TypeKind {
        let aliases = BTreeSet::from(["Lookup".to_owned()]);
        classify(&syn::parse_str(text).unwrap(), &aliases)
    }

    #[test]
    fn wrappers_and_references_are_looked_through() {
        assert_eq!(
            kind("Res<'w, Time<Real>>"),
            TypeKind::BevyTime(Some("Real".into()))
        );
        assert_eq!(kind("Option<Res<Time>>"), TypeKind::BevyTime(None));
        assert_eq!(
            kind("&mut HashMap<u32, f32>"),
            TypeKind::Hash("HashMap".into())
        );
        assert_eq!(kind("Local<Lookup>"), TypeKind::Hash("Lookup".into()));
        assert_eq!(kind("ResMut<FrameTime>"), TypeKind::FrameTime);
        assert_eq!(kind("BTreeMap<u32, f32>"), TypeKind::Other);
    }
}
